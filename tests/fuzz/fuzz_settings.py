"""How long the fuzzers run: a few hundred examples each in CI, many more by hand.

    HYPOTHESIS_PROFILE=long .venv/bin/pytest tests/fuzz     # or: make fuzz
    MCPGEN_FUZZ_EXAMPLES=50000 .venv/bin/pytest tests/fuzz  # any count

The settings apply to the fuzz tests only (decorators); the other Hypothesis tests
of the suite take tests/conftest.py's profile (derandomized too, unless
``HYPOTHESIS_PROFILE`` names another).

The ``ci`` profile is derandomized: every run draws the same examples, so a red CI
means a change broke something, never that the dice found an old bug that day (a
random run once stopped a landing that way, and then spent five minutes shrinking).
Finding new bugs is the job of the ``long`` profile (random, many examples) and of
``MCPGEN_FUZZ_SEED=<n>``, which draws another fixed sample in the ``ci`` size.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, seed, settings

T = TypeVar("T", bound=Callable[..., Any])

PROFILES = {
    "ci": 300,  # the whole fuzz directory stays well under 30 s on a shared 2-core machine
    "long": 20_000,
}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
EXAMPLES = int(os.environ.get("MCPGEN_FUZZ_EXAMPLES", PROFILES.get(PROFILE, PROFILES["ci"])))
SEED = os.environ.get("MCPGEN_FUZZ_SEED")
DERANDOMIZE = PROFILE == "ci" and SEED is None


def fuzz_settings(weight: float = 1.0) -> Callable[[T], T]:
    """Settings for one fuzz test; ``weight`` scales its share of the examples."""
    fixed: dict[str, Any] = {"derandomize": True, "database": None} if DERANDOMIZE else {}
    chosen = settings(
        max_examples=max(10, int(EXAMPLES * weight)),
        **fixed,
        deadline=None,  # the machine is shared; time is bounded by the example count
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
        print_blob=True,
    )
    if SEED is None:
        return chosen

    def apply(test: T) -> T:
        return chosen(seed(int(SEED))(test))

    return apply
