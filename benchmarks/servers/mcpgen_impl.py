"""The implementation of the generated ``bench_mcp`` package (built by run.py)."""

from __future__ import annotations

from typing import Any

from _profile import profile
from bench_mcp import BenchServer
from bench_mcp.models import AddArgs, ProfileArgs


class BenchImpl(BenchServer):
    def add(self, args: AddArgs) -> dict[str, Any]:
        return {"sum": args["a"] + args["b"]}

    def profile(self, args: ProfileArgs) -> dict[str, Any]:
        return profile(dict(args))
