"""The suite's per-test timeout (pyproject: 120 s) fits the ``ci`` example counts;
a longer run (``make fuzz``, ``MCPGEN_FUZZ_EXAMPLES``) scales it with the count."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_settings import EXAMPLES, PROFILES


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    scale = EXAMPLES / PROFILES["ci"]
    if scale <= 1:
        return
    base = float(config.getini("timeout") or 120)
    here = Path(__file__).parent
    for item in items:
        if item.path.parent == here and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(base * scale))
