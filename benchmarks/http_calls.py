"""HTTP per-call cost: the mcpgen-generated server against the SDK's own HTTP server.

    .venv/bin/python benchmarks/http_calls.py [--calls N] [--redis-url URL] [--baseline-runtime DIR]
        [--rate-limit N/s]

Both serve ``add(a, b) -> {sum}`` over stateless Streamable HTTP on uvicorn:
(a) ``python -m bench_mcp --transport http`` (built from benchmarks/specs/bench.yaml
into a temporary directory; the SDK's transport with mcpgen's core and task layer
in front), (b) the SDK's low-level ``Server`` (servers/sdk_lowlevel_http.py), (b') FastMCP
(servers/fastmcp_http.py).
With ``--redis-url``, (c) the generated server again on a Redis task store, whose
plain calls must cost the same (they never touch the store), and the round trip
of a task call (create, then ``tasks/result``) there. With ``--baseline-runtime``
(another checkout's ``runtime/mcpgen_runtime``), (d) the same package with that runtime
put first on its path instead, e.g. the one before a change. With ``--rate-limit``,
(e) the generated server with that per-caller limit (pick one it never reaches, to
see what counting costs).

One keep-alive client, one call at a time, 2025-11-25, JSON answers and SSE
answers as each server gives them. Servers take turns in blocks of 100 calls, in a
rotated order, so that load from other processes hits all alike. Prints median and p99 in ms. Not
a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
sys.path.insert(0, str(HERE.parent))

from mcpgen.build import build_spec

HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server never listened")


def answer(response: httpx2.Response) -> dict[str, Any]:
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    result: dict[str, Any] = json.loads(text)
    return result


def call(client: httpx2.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
    return answer(client.post(url, json=body, headers=HEADERS))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--baseline-runtime", type=Path, default=None)
    parser.add_argument("--rate-limit", default=None)
    options = parser.parse_args()
    procs: list[subprocess.Popen[bytes]] = []
    urls: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "gen"
        # `add` may also run as a task (the task round trip); plain calls stay plain
        spec = Path(tmp) / "bench.yaml"
        text = (HERE / "specs" / "bench.yaml").read_text(encoding="utf-8")
        spec.write_text(
            text.replace("  - name: add\n", "  - name: add\n    task_support: optional\n", 1),
            encoding="utf-8",
        )
        result = build_spec(spec, output=gen / "bench_mcp")
        assert result.ok, result.diagnostics
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(SERVERS)])}
        envs: dict[str, dict[str, str]] = {}
        if options.baseline_runtime:
            import shutil

            # the whole tree (the runtime has subpackages), first on the path
            base = Path(tmp) / "base"
            shutil.copytree(options.baseline_runtime, base / "mcpgen_runtime")
            envs["mcpgen, baseline runtime"] = {
                **env,
                "PYTHONPATH": os.pathsep.join([str(base), str(gen), str(SERVERS)]),
            }
        servers = {
            "mcpgen": ["-m", "bench_mcp", "--transport", "http"],
            "sdk lowlevel": [str(SERVERS / "sdk_lowlevel_http.py")],
            "fastmcp": [str(SERVERS / "fastmcp_http.py")],
        }
        if importlib.util.find_spec("fastmcp") is None:
            print("fastmcp is not installed (pip install -e '.[bench]'): left out", file=sys.stderr)
            del servers["fastmcp"]
        if options.redis_url:
            servers["mcpgen, redis store"] = [*servers["mcpgen"], "--task-store", options.redis_url]
        if options.baseline_runtime:
            servers["mcpgen, baseline runtime"] = servers["mcpgen"]
        if options.rate_limit:
            servers["mcpgen, rate limit"] = [*servers["mcpgen"], "--rate-limit", options.rate_limit]
        try:
            for name, args in servers.items():
                port = free_port()
                extra = (
                    [str(port)] if name in ("sdk lowlevel", "fastmcp") else ["--port", str(port)]
                )
                proc = subprocess.Popen(
                    [sys.executable, *args, *extra],
                    cwd=SERVERS,
                    env=envs.get(name, env),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                procs.append(proc)
                wait_ready(port, proc)
                urls[name] = f"http://127.0.0.1:{port}/mcp"
            samples = measure(urls, options.calls)
            print(f"tools/call add, one at a time, {options.calls} calls per server (ms)")
            for name, values in samples.items():
                values.sort()
                p99 = values[int(len(values) * 0.99) - 1]
                print(f"  {name:28} median {statistics.median(values):6.2f}   p99 {p99:6.2f}")
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait()


def measure(urls: dict[str, str], calls: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in urls}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
    }
    task_url = next((u for n, u in urls.items() if "redis" in n), None)
    if task_url:
        samples["mcpgen, redis: task round trip"] = []
    with httpx2.Client(timeout=30) as client:
        for url in urls.values():  # warm-up
            for _ in range(50):
                assert call(client, url, body)["result"]["structuredContent"] == {"sum": 5}
        done, turn = 0, 0
        while done < calls:
            block = min(100, calls - done)
            # a rotated order: no server always goes first after the others' turns
            order = list(urls.items())
            turn = (turn + 1) % len(order)
            for name, url in order[turn:] + order[:turn]:
                for _ in range(block):
                    started = time.perf_counter()
                    call(client, url, body)
                    samples[name].append((time.perf_counter() - started) * 1000)
                if task_url and name.endswith("redis store"):
                    for _ in range(block // 10):
                        started = time.perf_counter()
                        created = call(
                            client, task_url, {**body, "params": {**body["params"], "task": {}}}
                        )
                        task_id = created["result"]["task"]["taskId"]
                        call(
                            client,
                            task_url,
                            {
                                "jsonrpc": "2.0",
                                "id": 2,
                                "method": "tasks/result",
                                "params": {"taskId": task_id},
                            },
                        )
                        samples["mcpgen, redis: task round trip"].append(
                            (time.perf_counter() - started) * 1000
                        )
            done += block
    return samples


if __name__ == "__main__":
    main()
