"""HTTP under load: requests/s, p50/p99 and RSS of MCP servers on uvicorn, with h2load.

    .venv/bin/python benchmarks/http_load.py [--requests N] [--rounds R] [--baseline-runtime DIR]
        [--http h11|httptools] [--loop asyncio|uvloop] [--workers N] [--json PATH]

Every server answers ``tools/call add`` (2025-11-25, JSON) on one uvicorn worker
with the same uvicorn settings (``--http``, ``--loop``):

- floor: a bare ASGI app that parses the request and answers the same bytes
  (servers/floor_http.py);
- sdk lowlevel: the official SDK's low-level ``Server`` on its own stateless
  Streamable HTTP, JSON answers (servers/sdk_lowlevel_http.py);
- fastmcp: FastMCP, stateless, JSON answers (servers/fastmcp_http.py);
- mcpgen old: the generated server on the runtime in ``--baseline-runtime`` (for
  instance a checkout's ``runtime/mcpgen_runtime`` from before the ASGI app: the
  SDK-based HTTP path), with ``--json-response`` (that path serves h11 only);
- mcpgen: the generated server on this checkout's runtime (its own ASGI app).

Load: ``h2load --h1`` (Debian package nghttp2-client) with 1 and 16 connections, one
request in flight each; ``--requests`` per run, ``--rounds`` runs per server and
concurrency, servers taking turns so that load from other processes hits all alike;
the median run is reported. p50/p99 come from h2load's per-request log. RSS is the
server process's resident memory after a warm-up and after 20,000 further calls.
Without h2load the script says so and exits (benchmarks/http_calls.py, one client
in Python, is the fallback). The load average of the machine is printed with the
table: it is shared, so a run at a quiet moment is the one to keep. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from http_calls import free_port, wait_ready

from mcpgen.build import build_spec

BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
}
HEADERS = [
    "content-type: application/json",
    "accept: application/json, text/event-stream",
    "mcp-protocol-version: 2025-11-25",
]
RSS_CALLS = 20_000


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def h2load(url: str, body: Path, requests: int, clients: int, log: Path) -> dict[str, float]:
    """One h2load run; requests/s and per-request p50/p99 (ms) from its log."""
    log.unlink(missing_ok=True)  # h2load appends to it
    args = [
        "h2load",
        "--h1",
        "-n",
        str(requests),
        "-c",
        str(clients),
        "-m",
        "1",
        "-d",
        str(body),
        "--log-file",
        str(log),
    ]
    for header in HEADERS:
        args += ["-H", header]
    out = subprocess.run([*args, url], capture_output=True, text=True, check=True).stdout
    failed = next(line for line in out.splitlines() if line.startswith("requests:"))
    if " 0 failed" not in failed or " 0 errored" not in failed:
        raise SystemExit(f"h2load saw failures against {url}:\n{out}")
    rate = next(line for line in out.splitlines() if line.startswith("finished in"))
    per_second = float(rate.split(",")[1].split()[0])
    times = sorted(int(line.split("\t")[2]) / 1000 for line in log.read_text().splitlines())
    return {
        "rps": per_second,
        "p50": statistics.median(times),
        "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
    }


def start_servers(
    tmp: Path, options: argparse.Namespace
) -> dict[str, tuple[subprocess.Popen[bytes], str]]:
    gen = tmp / "gen"
    built = build_spec(HERE / "specs" / "bench.yaml", output=gen / "bench_mcp")
    assert built.ok, built.diagnostics
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(SERVERS)])}
    uvicorn_args = [options.http, options.loop]
    servers: dict[str, tuple[list[str], dict[str, str]]] = {
        "floor": ([str(SERVERS / "floor_http.py"), "{port}", *uvicorn_args], env),
        "sdk lowlevel": ([str(SERVERS / "sdk_lowlevel_http.py"), "{port}", *uvicorn_args], env),
        "fastmcp": ([str(SERVERS / "fastmcp_http.py"), "{port}", *uvicorn_args], env),
    }
    mcpgen = [
        "-m",
        "bench_mcp",
        "--transport",
        "http",
        "--port",
        "{port}",
        "--workers",
        str(options.workers),
    ]
    if options.baseline_runtime:
        old = tmp / "old"
        shutil.copytree(options.baseline_runtime, old / "mcpgen_runtime")
        old_env = {**env, "PYTHONPATH": os.pathsep.join([str(old), str(gen), str(SERVERS)])}
        servers["mcpgen old"] = ([*mcpgen, "--json-response"], old_env)  # h11 only
    servers["mcpgen"] = ([*mcpgen, "--http-parser", options.http], env)
    running: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for name, (args, server_env) in servers.items():
            if name == "fastmcp" and not _importable("fastmcp"):
                print(
                    "fastmcp is not installed (pip install -e '.[bench]'): left out",
                    file=sys.stderr,
                )
                continue
            port = free_port()
            proc = subprocess.Popen(
                [sys.executable, *(a.replace("{port}", str(port)) for a in args)],
                cwd=SERVERS,
                env=server_env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            running[name] = (proc, f"http://127.0.0.1:{port}/mcp")
            wait_ready(port, proc)
    except BaseException:  # one server failed to start: stop the others
        stop(running)
        raise
    return running


def stop(running: dict[str, tuple[subprocess.Popen[bytes], str]]) -> None:
    for proc, _ in running.values():
        proc.terminate()
        proc.wait()


def _importable(module: str) -> bool:
    return (
        subprocess.run(
            [sys.executable, "-c", f"import {module}"], capture_output=True, check=False
        ).returncode
        == 0
    )


def measure(
    running: dict[str, tuple[subprocess.Popen[bytes], str]], tmp: Path, options: argparse.Namespace
) -> dict[str, dict[str, Any]]:
    body = tmp / "body.json"
    body.write_text(json.dumps(BODY))
    log = tmp / "h2load.log"
    results: dict[str, dict[str, Any]] = {name: {"runs": {1: [], 16: []}} for name in running}
    for name, (proc, url) in running.items():  # warm-up, then the RSS baseline
        h2load(url, body, 2000, 4, log)
        results[name]["rss_before_kib"] = rss_kib(proc.pid)
    for _ in range(options.rounds):
        for clients in (1, 16):
            for name, (_, url) in running.items():
                results[name]["runs"][clients].append(
                    h2load(url, body, options.requests, clients, log)
                )
    for name, (proc, url) in running.items():
        h2load(url, body, RSS_CALLS, 16, log)
        results[name]["rss_after_kib"] = rss_kib(proc.pid)
    for result in results.values():
        for clients, runs in result["runs"].items():
            median_run = sorted(runs, key=lambda run: run["rps"])[len(runs) // 2]
            result[f"c{clients}"] = median_run
    return results


def report(
    results: dict[str, dict[str, Any]],
    load: tuple[float, float, float],
    options: argparse.Namespace,
) -> None:
    floor = results.get("floor")
    sdk = results.get("sdk lowlevel")
    print(
        f"tools/call add over HTTP/1.1, JSON answers, uvicorn http={options.http} "
        f"loop={options.loop}, h2load --h1, {options.requests} requests per run, median of "
        f"{options.rounds} runs; load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(
        f"{'server':14} | {'1 in flight: req/s':>18} {'p50 ms':>7} {'p99 ms':>7} {'×floor time':>11} "
        f"| {'16 in flight: req/s':>19} {'p50 ms':>7} {'p99 ms':>7} {'×SDK':>5} {'×floor':>6} "
        f"| RSS KiB before → after {RSS_CALLS} calls"
    )
    for name, result in results.items():
        one, many = result["c1"], result["c16"]
        per_call = f"{floor['c1']['rps'] / one['rps']:.2f}" if floor else "-"
        vs_sdk = f"{many['rps'] / sdk['c16']['rps']:.2f}" if sdk else "-"
        vs_floor = f"{many['rps'] / floor['c16']['rps']:.2f}" if floor else "-"
        print(
            f"{name:14} | {one['rps']:18,.0f} {one['p50']:7.3f} {one['p99']:7.3f} {per_call:>11} "
            f"| {many['rps']:19,.0f} {many['p50']:7.3f} {many['p99']:7.3f} {vs_sdk:>5} {vs_floor:>6} "
            f"| {result['rss_before_kib']:,} → {result['rss_after_kib']:,}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-runtime", type=Path, default=None)
    # what `python -m <package> --transport http` uses by default: httptools and uvloop
    # when installed, else h11 and asyncio; every server gets the same (--loop: the peers;
    # mcpgen takes uvicorn's auto, so leave it at auto for a like-for-like table)
    parser.add_argument("--http", default=None, choices=["h11", "httptools"])
    parser.add_argument("--loop", default="auto", choices=["auto", "asyncio", "uvloop"])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    options = parser.parse_args()
    if options.http is None:
        options.http = "httptools" if _importable("httptools") else "h11"
    if options.loop == "auto" and options.workers == 1:
        options.loop = "uvloop" if _importable("uvloop") else "asyncio"
    if shutil.which("h2load") is None:
        raise SystemExit(
            "h2load is not installed (apt-get install nghttp2-client); "
            "benchmarks/http_calls.py measures one client at a time without it"
        )
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        running = start_servers(Path(tmp), options)
        try:
            results = measure(running, Path(tmp), options)
        finally:
            stop(running)
    report(results, load, options)
    if options.json:
        options.json.write_text(
            json.dumps(
                {
                    "load": load,
                    "options": vars(options)
                    | {
                        "baseline_runtime": str(options.baseline_runtime),
                        "json": str(options.json),
                    },
                    "results": results,
                },
                indent=1,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
