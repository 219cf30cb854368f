"""Client-side per-call cost: mcpgen's generated sync and async clients beside the
official SDK's ``ClientSession`` (over its ``stdio_client``), all three calling the
floor server (benchmarks/servers/floor.py), whose own time is close to nothing.

Each function opens one connection, warms up, then times ``n`` sequential calls
one by one and returns the per-call times in nanoseconds.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["mcpgen_async", "mcpgen_sync", "sdk_client_session"]

WARMUP = 200


def _package(name: str) -> Any:
    return importlib.import_module(name)


def mcpgen_sync(package: str, argv: Sequence[str], tool: str, n: int) -> list[int]:
    pkg = _package(package)
    clock = time.perf_counter_ns
    with pkg.BenchClient.stdio(list(argv)) as client:  # verify="strict": the contract is checked
        call = _bound_call(client, tool)
        for _ in range(WARMUP):
            call()
        times = []
        for _ in range(n):
            started = clock()
            call()
            times.append(clock() - started)
    return times


def mcpgen_async(package: str, argv: Sequence[str], tool: str, n: int) -> list[int]:
    pkg = _package(package)

    async def run() -> list[int]:
        clock = time.perf_counter_ns
        async with pkg.AsyncBenchClient.stdio(list(argv)) as client:
            call = _bound_call(client, tool)
            for _ in range(WARMUP):
                await call()
            times = []
            for _ in range(n):
                started = clock()
                await call()
                times.append(clock() - started)
        return times

    return asyncio.run(run())


def sdk_client_session(argv: Sequence[str], tool: str, n: int) -> list[int]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from _profile import ADD_ARGS, PROFILE_ARGS  # type: ignore[import-not-found]

    arguments = ADD_ARGS if tool == "add" else PROFILE_ARGS

    async def run() -> list[int]:
        clock = time.perf_counter_ns
        params = StdioServerParameters(command=argv[0], args=list(argv[1:]))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()  # the 2025-11-25 handshake
            for _ in range(WARMUP):
                await session.call_tool(tool, arguments)
            times = []
            for _ in range(n):
                started = clock()
                result = await session.call_tool(tool, arguments)
                times.append(clock() - started)
            assert result.structured_content is not None and not result.is_error
        return times

    return asyncio.run(run())


def _bound_call(client: Any, tool: str) -> Any:
    """A no-argument callable making one typed call, as a user would write it."""
    from _profile import PROFILE_ARGS  # type: ignore[import-not-found]

    if tool == "add":
        return lambda: client.add(2, 3)
    return lambda: client.profile(**PROFILE_ARGS)
