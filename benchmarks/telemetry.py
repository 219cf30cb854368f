"""The cost of observability on the generated server's call paths, stdio and HTTP.

    .venv/bin/python benchmarks/telemetry.py --baseline-runtime DIR [--calls N]

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

Every variant is a live server; they take turns in blocks of 100 calls (one call at a
time: raw pipes for stdio, one keep-alive httpx2 client for HTTP, 2025-11-25), so load
from other processes hits all alike. Prints median and p99 in microseconds and each
median's ratio to "before". Not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
sys.path[:0] = [str(HERE), str(HERE.parent)]

import http_calls
from driver import RawServer

from mcpgen.build import build_spec

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
        for _ in range(max(1, calls // 100)):
            for name, server in servers.items():
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
            for _ in range(max(1, calls // 100)):
                for name, url in urls.items():
                    samples[name].extend(_timed(http_calls.call, client, url, 100))
        return samples
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--baseline-runtime", type=Path, required=True)
    options = parser.parse_args()
    if not (options.baseline_runtime / "mcpgen_runtime").is_dir():
        raise SystemExit(f"{options.baseline_runtime} holds no mcpgen_runtime")
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "gen"
        result = build_spec(HERE / "specs" / "bench.yaml", output=gen / "bench_mcp")
        assert result.ok, result.diagnostics
        found = variants(options.baseline_runtime.resolve(), gen)
        report(
            f"stdio: tools/call add, one at a time, {options.calls} calls each",
            stdio(found, options.calls),
        )
        report(
            f"http: tools/call add, one at a time, {options.calls} calls each",
            http(found, options.calls),
        )


if __name__ == "__main__":
    main()
