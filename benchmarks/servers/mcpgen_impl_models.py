"""``BenchImpl`` from an implementation module that imports the generated models
(pydantic) at run time, as most real implementations do; start-up only."""

from __future__ import annotations

from bench_mcp.models import AddOutput, ProfileOutput  # noqa: F401 - the import is the point
from mcpgen_impl import BenchImpl

__all__ = ["BenchImpl"]
