"""HTTP client cost: the generated typed clients' ``.http()`` against the official SDK's
client (``mcp.Client`` over its streamable HTTP transport, httpx2), both calling the
same mcpgen-generated server (``python -m bench_mcp --transport http``, built from
benchmarks/specs/bench.yaml into a temporary directory).

    .venv/bin/python benchmarks/http_client.py [--calls N] [--rounds R] [--json FILE]

``add(a, b) -> {sum}`` one call at a time and 16 in flight from one process (asyncio
tasks on one event loop): calls per second, p50/p99 latency of single calls, and the
client process's CPU time per call (the server is another process). Both clients
speak the same era (``auto``: 2026-07-28 against this server). The clients take
turns by round, so load from other processes hits both alike; samples are pooled
over the rounds. The generated sync client is measured one call at a time too.
Prints a table with the ratios to the SDK client. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from http_calls import free_port, wait_ready  # the server launch both benchmarks share

from mcpgen.build import build_spec

WINDOW = 16
Call = Callable[[], Awaitable[Any]]


class Samples:
    """Pooled figures of one client at one window: latencies, wall and CPU time, calls."""

    def __init__(self) -> None:
        self.latencies_ns: list[int] = []
        self.wall = 0.0
        self.cpu = 0.0
        self.calls = 0

    def summary(self) -> dict[str, float]:
        lat = sorted(self.latencies_ns)
        return {
            "calls_per_s": self.calls / self.wall,
            "p50_ms": lat[len(lat) // 2] / 1e6,
            "p99_ms": lat[max(0, int(len(lat) * 0.99) - 1)] / 1e6,
            "cpu_us_per_call": self.cpu / self.calls * 1e6,
        }


async def measure(call: Call, calls: int, window: int, into: Samples) -> None:
    """``calls`` calls, ``window`` in flight, each timed on its own."""
    per_worker = calls // window

    async def worker() -> None:
        for _ in range(per_worker):
            started = time.perf_counter_ns()
            await call()
            into.latencies_ns.append(time.perf_counter_ns() - started)

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(window)))
    into.wall += time.perf_counter() - wall
    into.cpu += time.process_time() - cpu
    into.calls += per_worker * window


def measure_sync(call: Callable[[], Any], calls: int, into: Samples) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        started = time.perf_counter_ns()
        call()
        into.latencies_ns.append(time.perf_counter_ns() - started)
    into.wall += time.perf_counter() - wall
    into.cpu += time.process_time() - cpu
    into.calls += calls


async def run(url: str, calls: int, rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    from mcp import Client

    pkg = importlib.import_module("bench_mcp")
    samples: dict[str, dict[int, Samples]] = {
        name: {1: Samples(), WINDOW: Samples()} for name in ("mcpgen async", "sdk Client")
    }
    sync_samples = Samples()
    async with (
        pkg.AsyncBenchClient.http(url) as ours,
        Client(url, mode="auto", read_timeout_seconds=30) as sdk,
    ):
        assert ours.session.protocol_version == sdk.protocol_version, "not the same era"

        async def ours_call() -> Any:
            result = await ours.add(1, 2)
            assert result.sum == 3
            return result

        async def sdk_call() -> Any:
            result = await sdk.call_tool("add", {"a": 1, "b": 2})
            assert result.structured_content == {"sum": 3}
            return result

        clients: dict[str, Call] = {"mcpgen async": ours_call, "sdk Client": sdk_call}
        for call in clients.values():  # warm-up: connections, imports, caches
            await measure(call, 200, WINDOW, Samples())
        for round_ in range(rounds):
            order = list(clients) if round_ % 2 == 0 else list(reversed(clients))
            for name in order:
                for window in (1, WINDOW):
                    await measure(clients[name], calls, window, samples[name][window])
    with pkg.BenchClient.http(url) as sync_client:
        measure_sync(lambda: sync_client.add(1, 2), 200, Samples())
        for _ in range(rounds):
            measure_sync(lambda: sync_client.add(1, 2), calls, sync_samples)
    out = {name: {str(w): s.summary() for w, s in by.items()} for name, by in samples.items()}
    out["mcpgen sync"] = {"1": sync_samples.summary()}
    return out


def table(results: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    sdk = results["sdk Client"]
    lines = [
        (
            "| client | in flight | calls/s | p50 ms | p99 ms | CPU µs/call "
            "| calls/s × SDK | CPU × SDK |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, by_window in results.items():
        for window, row in by_window.items():
            base = sdk[window]
            lines.append(
                f"| {name} | {window} | {row['calls_per_s']:.0f} | {row['p50_ms']:.2f} "
                f"| {row['p99_ms']:.2f} | {row['cpu_us_per_call']:.0f} "
                f"| {row['calls_per_s'] / base['calls_per_s']:.2f} "
                f"| {row['cpu_us_per_call'] / base['cpu_us_per_call']:.2f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000, help="calls per client, window, round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "gen"
        result = build_spec(HERE / "specs" / "bench.yaml", output=gen / "bench_mcp")
        assert result.ok, result.diagnostics
        sys.path.insert(0, str(gen))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(HERE / "servers")])}
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench_mcp", "--transport", "http", "--port", str(port)],
            cwd=HERE / "servers",
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_ready(port, proc)
            results = asyncio.run(
                run(f"http://127.0.0.1:{port}/mcp", options.calls, options.rounds)
            )
        finally:
            proc.terminate()
            proc.wait()
    print(
        f"tools/call add over Streamable HTTP, same mcpgen server, {options.calls} calls "
        f"per client, window and round, {options.rounds} rounds"
    )
    print("\n".join(table(results)))
    if options.json is not None:
        options.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
