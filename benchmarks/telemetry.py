"""The cost of observability on the generated server's call paths, stdio and HTTP.

    .venv/bin/python benchmarks/telemetry.py --baseline-runtime DIR [--calls N] [--rounds R]
    .venv/bin/python benchmarks/telemetry.py --baseline-runtime DIR --wire [--transport T]

``DIR`` holds another runtime's ``mcpgen_runtime`` (e.g. ``<checkout>/runtime`` of the
commit before telemetry): the same generated package (benchmarks/specs/bench.yaml,
``add``) runs on it as "before". Then on this runtime:

- "no provider": no OpenTelemetry provider installed (the SDK may be importable: the
  runtime only looks for installed providers), request lines off. The runtime's
  promise: within 3 % of "before";
- HTTP with request lines as text (the default there) and as JSON, no provider;
- "sdk, no-op export": the SDK installed and recording (servers/otel_noop.py: spans
  through a ``BatchSpanProcessor`` to an exporter that drops them, metrics to an
  in-memory reader), request lines off.

By default each variant runs in a process of its own (servers/telemetry_cost.py): the
server's own CPU time per call, in process (stdio: ``serve_streams`` over buffers; HTTP:
the ASGI app called directly), the best of 5 rounds of N calls; the variants take
turns, R rounds of them, and the best of all counts. On a shared machine this is the
figure to trust: a round trip through pipes or sockets varies by tens of percent
between two identical servers. ``--wire`` measures that round trip instead: every
variant a live server, taking turns in blocks of 100 calls (raw pipes for stdio, one
keep-alive httpx2 client for HTTP), with a second "before" server to show the noise.
Prints each variant's figure and its ratio to "before". Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
sys.path[:0] = [str(HERE), str(HERE.parent)]

import http_calls
from driver import RawServer

from mcpgen.build import build_spec

T = TypeVar("T")
ADD = {"a": 2, "b": 3}
BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": ADD},
}


def variants(baseline: Path, gen: Path) -> dict[str, tuple[list[str], list[str], str]]:
    """name → (argv before the transport options, extra options, PYTHONPATH)."""
    ours = os.pathsep.join([str(gen), str(SERVERS)])
    before = os.pathsep.join([str(baseline), str(gen), str(SERVERS)])
    module = ["-m", "bench_mcp"]
    noop = [str(SERVERS / "otel_noop.py"), "bench_mcp"]
    return {
        "before (baseline runtime)": (module, ["--log-format", "off"], before),
        # the same again: how far two identical servers drift apart (the noise)
        "before, a second server": (module, ["--log-format", "off"], before),
        "no provider, log off": (module, ["--log-format", "off"], ours),
        "no provider, log text": (module, ["--log-format", "text"], ours),
        "no provider, log json": (module, ["--log-format", "json"], ours),
        "sdk, no-op export, log off": (noop, ["--log-format", "off"], ours),
    }


def stdio(found: dict[str, tuple[list[str], list[str], str]], calls: int) -> dict[str, list[float]]:
    servers: dict[str, RawServer] = {}
    try:
        for name, (argv, extra, path) in found.items():
            if "log text" in name or "log json" in name:
                continue  # stdio's default is off; lines to stderr cost what they cost
            if name.startswith("before"):
                extra = []  # that runtime knows no --log-format
            env = {**_clean_env(), "PYTHONPATH": path}
            server = RawServer([sys.executable, *argv, *extra], env=env, cwd=str(SERVERS))
            server.initialize()
            server.sequential("add", ADD, 200, 1)  # warm-up
            servers[name] = server
        samples: dict[str, list[float]] = {name: [] for name in servers}
        next_id = 1000
        for block in range(max(1, calls // 100)):
            for name, server in _rotated(servers, block):
                times = server.sequential("add", ADD, 100, next_id)
                samples[name].extend(t / 1000 for t in times)
                next_id += 100
        return samples
    finally:
        for server in servers.values():
            server.close()


def http(found: dict[str, tuple[list[str], list[str], str]], calls: int) -> dict[str, list[float]]:
    import httpx2

    procs: list[subprocess.Popen[bytes]] = []
    urls: dict[str, str] = {}
    try:
        for name, (argv, extra, path) in found.items():
            if name.startswith("before"):
                extra = []
            port = http_calls.free_port()
            proc = subprocess.Popen(
                [sys.executable, *argv, "--transport", "http", "--port", str(port), *extra],
                cwd=SERVERS,
                env={**_clean_env(), "PYTHONPATH": path},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            procs.append(proc)
            http_calls.wait_ready(port, proc)
            urls[name] = f"http://127.0.0.1:{port}/mcp"
        samples: dict[str, list[float]] = {name: [] for name in urls}
        with httpx2.Client(timeout=30) as client:
            for url in urls.values():
                for _ in range(100):  # warm-up, and a check of the answer
                    assert http_calls.call(client, url, BODY)["result"]["structuredContent"] == {
                        "sum": 5
                    }
            for block in range(max(1, calls // 100)):
                for name, url in _rotated(urls, block):
                    samples[name].extend(_timed(http_calls.call, client, url, 100))
        return samples
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()


def _rotated(items: dict[str, T], block: int) -> list[tuple[str, T]]:
    """The servers in a different order each block: none always goes first."""
    pairs = list(items.items())
    shift = block % len(pairs)
    return pairs[shift:] + pairs[:shift]


def _timed(fn: Callable[..., object], client: object, url: str, n: int) -> list[float]:
    import time

    out = []
    for _ in range(n):
        started = time.perf_counter_ns()
        fn(client, url, BODY)
        out.append((time.perf_counter_ns() - started) / 1000)
    return out


def _clean_env() -> dict[str, str]:
    """This environment without OTEL_* (no exporter set up from it)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}


def report(title: str, samples: dict[str, list[float]]) -> None:
    print(title)
    base = statistics.median(next(iter(samples.values())))
    for name, values in samples.items():
        values.sort()
        median = statistics.median(values)
        p99 = values[int(len(values) * 0.99) - 1]
        print(
            f"  {name:30} median {median:8.1f} µs   p99 {p99:8.1f} µs   "
            f"{(median / base - 1) * 100:+6.1f} % vs before"
        )


def in_process(found: dict[str, tuple[list[str], list[str], str]], calls: int, rounds: int) -> None:
    """Each variant's own time per call (servers/telemetry_cost.py), best of all rounds."""
    best: dict[str, dict[str, float]] = {}
    for round_ in range(rounds):
        for name, (argv, extra, path) in _rotated(found, round_):
            log_format = extra[-1] if extra else "off"
            sdk = "sdk" if argv[0].endswith("otel_noop.py") else "none"
            done = subprocess.run(
                [sys.executable, str(SERVERS / "telemetry_cost.py"), log_format, sdk, str(calls)],
                cwd=SERVERS,
                env={**_clean_env(), "PYTHONPATH": path},
                capture_output=True,
                text=True,
                check=True,
            )
            figures = json.loads(done.stdout)
            mine = best.setdefault(name, figures)
            for key, value in figures.items():
                mine[key] = min(mine[key], value)
    print(f"the server's CPU time per tools/call add (in process, best of {rounds} x 5 x {calls})")
    for transport in ("stdio", "http"):
        base = best["before (baseline runtime)"][transport]
        for name, figures in best.items():
            if transport == "stdio" and ("log text" in name or "log json" in name):
                continue  # stdio's default is off
            value = figures[transport]
            print(f"  {transport:5} {name:30} {value:7.2f} µs   {(value / base - 1) * 100:+6.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-runtime", type=Path, required=True)
    parser.add_argument("--wire", action="store_true", help="round trips through live servers")
    parser.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    options = parser.parse_args()
    if not (options.baseline_runtime / "mcpgen_runtime").is_dir():
        raise SystemExit(f"{options.baseline_runtime} holds no mcpgen_runtime")
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "gen"
        result = build_spec(HERE / "specs" / "bench.yaml", output=gen / "bench_mcp")
        assert result.ok, result.diagnostics
        found = variants(options.baseline_runtime.resolve(), gen)
        if not options.wire:
            in_process(found, options.calls, options.rounds)
            return
        title = "{}: tools/call add, one at a time, {} calls each"
        if options.transport in ("stdio", "both"):
            report(title.format("stdio", options.calls), stdio(found, options.calls))
        if options.transport in ("http", "both"):
            report(title.format("http", options.calls), http(found, options.calls))


if __name__ == "__main__":
    main()
