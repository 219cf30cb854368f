"""How long the fuzzers run: a few hundred examples each in CI, many more by hand.

    HYPOTHESIS_PROFILE=long .venv/bin/pytest tests/fuzz     # or: make fuzz
    MCPGEN_FUZZ_EXAMPLES=50000 .venv/bin/pytest tests/fuzz  # any count

The settings apply to the fuzz tests only (decorators, no global profile), so
other Hypothesis tests in the suite keep their own.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILES = {
    "ci": 300,  # the whole fuzz directory stays well under 30 s on a shared 2-core machine
    "long": 20_000,
}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
EXAMPLES = int(os.environ.get("MCPGEN_FUZZ_EXAMPLES", PROFILES.get(PROFILE, PROFILES["ci"])))


def fuzz_settings(weight: float = 1.0) -> settings:
    """Settings for one fuzz test; ``weight`` scales its share of the examples."""
    return settings(
        max_examples=max(10, int(EXAMPLES * weight)),
        deadline=None,  # the machine is shared; time is bounded by the example count
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
        print_blob=True,
    )
