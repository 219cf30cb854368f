"""The implementation of the generated ``bench_mcp`` package (built by run.py).

The argument types are TypedDicts used only in annotations, so they are imported
for the type checker alone and the server never loads pydantic; see
mcpgen_impl_models.py for the start-up of an implementation that imports its
models at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from _profile import profile
from bench_mcp import BenchServer

if TYPE_CHECKING:
    from bench_mcp.models import AddArgs, ProfileArgs


class BenchImpl(BenchServer):
    def add(self, args: AddArgs) -> dict[str, Any]:
        return {"sum": args["a"] + args["b"]}

    def profile(self, args: ProfileArgs) -> dict[str, Any]:
        return profile(dict(args))
