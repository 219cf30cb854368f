"""The token bucket of ``--rate-limit N/s --rate-burst B``: pure arithmetic, the
clock passed in by the shell that owns it (the stdio server, a task store).

A bucket holds at most ``burst`` tokens and gains ``rate`` tokens a second; a request
takes one or is refused, and a refused request is told how long until a token is
there. The state of a bucket is kept as one number, its *theoretical arrival time*
(GCRA, the token bucket's exact dual): ``tat`` is when the bucket would be full
again. A request at ``now`` is admitted when ``max(tat, now) + interval - now`` does
not exceed ``burst * interval``, which is exactly "a token is left"; then ``tat``
moves on by one interval. One number per caller means a store can update it in one
atomic step (the Redis task store does it in a Lua script with the same formula) and
forget it once ``tat`` has passed: a full bucket and no bucket are the same thing.

``LocalBuckets`` keeps the buckets of one process (the in-process store), bounded:
buckets that are full again are forgotten first, and past ``max_callers`` the
least recently touched buckets go, down to 7/8 of the bound so that the sweep runs
once per ``max_callers / 8`` new callers, not on every one (an evicted caller starts
again from a full bucket).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_MAX_CALLERS",
    "LocalBuckets",
    "RateLimit",
    "over_limit",
    "retry_after_header",
    "take",
]

# Buckets one process keeps at once (callers seen within one refill time).
DEFAULT_MAX_CALLERS = 100_000

_PERIODS = {"s": 1.0, "m": 60.0}
_SPEC = re.compile(r"(\d+(?:\.\d+)?)\s*/\s*([sm])")


@dataclass(frozen=True)
class RateLimit:
    """``count`` requests per ``period`` seconds, ``burst`` of them at once."""

    count: float
    period: float
    burst: int
    # the text, made once (every refusal names the limit: ``over_limit``)
    _text: str = field(init=False, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str, burst: int | None = None) -> RateLimit:
        """``"N/s"`` or ``"N/m"`` (N may have decimals: ``0.5/s``); ``burst`` defaults
        to N rounded up (at least 1): a caller may spend one period's allowance at once.
        ``ValueError`` with the reason for anything else."""
        match = _SPEC.fullmatch(text.strip())
        if match is None:
            raise ValueError(f"a rate limit is N/s or N/m (such as 10/s or 600/m), not {text!r}")
        count = float(match.group(1))
        if not count > 0:
            raise ValueError(f"a rate limit needs a positive count, not {text!r}")
        if burst is None:
            burst = max(1, math.ceil(count))
        elif burst < 1:
            raise ValueError(f"a rate burst is a positive integer, not {burst}")
        return cls(count, _PERIODS[match.group(2)], burst)

    @property
    def interval(self) -> float:
        """Seconds between two tokens."""
        return self.period / self.count

    def __post_init__(self) -> None:
        unit = "s" if self.period == 1.0 else "m"
        object.__setattr__(self, "_text", f"{self.count:g}/{unit} (burst {self.burst})")

    def __str__(self) -> str:
        return self._text


def take(tat: float, now: float, limit: RateLimit) -> tuple[float, float]:
    """One request at ``now`` against a bucket whose theoretical arrival time is
    ``tat`` (0 for a new bucket): ``(new tat, 0.0)`` when admitted, ``(tat, seconds
    until a token is there)`` when refused. A clock that went backwards counts as no
    time passed."""
    interval = limit.interval
    after = max(tat, now) + interval
    wait = after - now - limit.burst * interval
    if wait > 0:
        return tat, wait
    return after, 0.0


def over_limit(limit: RateLimit, wait: float) -> tuple[str, dict[str, int]]:
    """The message and ``data`` of the ``RATE_LIMITED`` error refusing a request that
    must wait ``wait`` seconds (``retryAfterMs``: whole milliseconds, at least 1)."""
    retry_ms = max(1, math.ceil(wait * 1000))
    message = f"Too many requests: over the rate limit of {limit}; retry in {retry_ms} ms"
    return message, {"retryAfterMs": retry_ms}


def retry_after_header(seconds: float) -> int:
    """The ``Retry-After`` value for a wait: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(seconds))


class LocalBuckets:
    """The buckets of the callers of one process, keyed by caller (see the module
    docstring for the bound)."""

    def __init__(self, max_callers: int = DEFAULT_MAX_CALLERS) -> None:
        self.max_callers = max_callers
        self._tats: dict[str, float] = {}  # insertion order: least recently touched first

    def take(self, key: str, now: float, limit: RateLimit) -> float:
        """Seconds until ``key`` may send again: 0.0 when this request is admitted."""
        tats = self._tats
        tat, wait = take(tats.pop(key, 0.0), now, limit)
        if tat > now:  # a bucket that is full again needs no entry
            tats[key] = tat
            if len(tats) > self.max_callers:
                self._forget(now)
        return wait

    def _forget(self, now: float) -> None:
        """Drop the buckets that are full again; then, while still over 7/8 of the
        bound, the least recently touched ones."""
        tats = self._tats
        for key in [key for key, tat in tats.items() if tat <= now]:
            del tats[key]
        keep = self.max_callers - self.max_callers // 8
        while len(tats) > keep:
            del tats[next(iter(tats))]

    def __len__(self) -> int:
        return len(self._tats)
