"""Per-caller rate limits: the token bucket's arithmetic, free of I/O (the clock is passed in)."""
