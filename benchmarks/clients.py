"""Client-side per-call cost: mcpgen's generated sync and async clients beside the
official SDK's ``ClientSession`` (over its ``stdio_client``), all three calling the
floor server (benchmarks/servers/floor.py), whose own time is close to nothing.

The three connections are open at once and measured in alternating blocks of
calls, so a burst of load from other processes hits all of them alike. Every
call is timed on its own; the result is per-call times in nanoseconds.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

from _profile import ADD_ARGS, PROFILE_ARGS  # type: ignore[import-not-found]

__all__ = ["KINDS", "run"]

KINDS = ("mcpgen_sync", "mcpgen_async", "sdk_client_session")
TOOLS = ("add", "profile")

Call = Callable[[], Awaitable[Any]]


def run(
    package: str, argv: Sequence[str], *, calls: int, block: int, warmup: int
) -> dict[str, dict[str, list[int]]]:
    """``calls`` timed calls per client and tool, in blocks of ``block``."""
    return asyncio.run(_run(package, list(argv), calls, block, warmup))


async def _run(
    package: str, argv: list[str], calls: int, block: int, warmup: int
) -> dict[str, dict[str, list[int]]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    pkg = importlib.import_module(package)
    async with AsyncExitStack() as stack:
        # verify="strict" (the default): each generated client checks the contract on connect
        sync_client = stack.enter_context(pkg.BenchClient.stdio(argv))
        async_client = await stack.enter_async_context(pkg.AsyncBenchClient.stdio(argv))
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()  # the 2025-11-25 handshake

        async def sdk_call(tool: str) -> Any:
            result = await session.call_tool(tool, ADD_ARGS if tool == "add" else PROFILE_ARGS)
            if result.is_error or result.structured_content is None:
                raise RuntimeError(f"SDK ClientSession: unexpected result {result}")
            return result

        # The sync client blocks the event loop while it waits, which is fine:
        # nothing else runs, and its reader is a thread of its own.
        calls_by_kind: dict[str, dict[str, Call | Callable[[], Any]]] = {
            "mcpgen_sync": {
                "add": lambda: sync_client.add(2, 3),
                "profile": lambda: sync_client.profile(**PROFILE_ARGS),
            },
            "mcpgen_async": {
                "add": lambda: async_client.add(2, 3),
                "profile": lambda: async_client.profile(**PROFILE_ARGS),
            },
            "sdk_client_session": {
                "add": lambda: sdk_call("add"),
                "profile": lambda: sdk_call("profile"),
            },
        }
        _check(sync_client.add(2, 3), await async_client.add(2, 3))
        for kind in KINDS:
            for tool in TOOLS:
                await _timed(kind, calls_by_kind[kind][tool], warmup)
        samples: dict[str, dict[str, list[int]]] = {
            kind: {tool: [] for tool in TOOLS} for kind in KINDS
        }
        for round_no in range(max(1, calls // block)):
            shift = round_no % len(KINDS)
            for kind in KINDS[shift:] + KINDS[:shift]:
                for tool in TOOLS:
                    samples[kind][tool].extend(await _timed(kind, calls_by_kind[kind][tool], block))
    return samples


def _check(sync_result: Any, async_result: Any) -> None:
    if sync_result.sum != 5 or async_result.sum != 5:
        raise RuntimeError("the generated clients returned a wrong sum")


async def _timed(kind: str, call: Any, n: int) -> list[int]:
    clock = time.perf_counter_ns
    times = []
    if kind == "mcpgen_sync":
        for _ in range(n):
            started = clock()
            call()
            times.append(clock() - started)
        return times
    for _ in range(n):
        started = clock()
        await call()
        times.append(clock() - started)
    return times
