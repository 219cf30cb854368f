"""One variant of benchmarks/telemetry.py, in process: the server's own time per
``tools/call add``, with no pipe, socket or client in the way.

    python telemetry_cost.py LOG_FORMAT SDK CALLS     (SDK: "sdk" or "none")

Run with ``bench_mcp`` and a runtime on PYTHONPATH (this one or a baseline's). Prints
one JSON object: microseconds per call over stdio (``serve_streams`` reading a buffer
of CALLS request lines, writing to a buffer) and over HTTP (the ASGI app of
``build_asgi_app`` called CALLS times on one event loop), the best of 5 rounds each,
in CPU time (this process's, its threads' included): on a loaded machine wall time
mostly measures the other processes.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import time
from typing import Any

ADD = {"a": 2, "b": 3}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def call(request_id: int) -> dict[str, Any]:
    params = {"name": "add", "arguments": ADD}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def stdio_round(app: Any, calls: int) -> float:
    from mcpgen_runtime.server.stdio import serve_streams

    lines = [line(INIT), b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n']
    lines += [line(call(i)) for i in range(1, calls + 1)]
    instream, out = io.BytesIO(b"".join(lines)), io.BytesIO()
    started = time.process_time()
    serve_streams(app, instream, out)
    elapsed = time.process_time() - started
    assert out.getvalue().count(b'"sum":5') == calls
    return elapsed / calls * 1e6


async def http_round(asgi: Any, calls: int) -> float:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2025-11-25"),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "headers": headers,
    }
    body = json.dumps(call(1)).encode()
    answers: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            answers.append(message["body"])

    started = time.process_time()
    for _ in range(calls):
        await asgi(scope, receive, send)
    elapsed = time.process_time() - started
    assert sum(b'"sum":5' in answer for answer in answers) == calls
    return elapsed / calls * 1e6


def install_sdk() -> None:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from otel_noop import DropSpans

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DropSpans()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


def main() -> None:
    log_format, sdk, calls = sys.argv[1], sys.argv[2] == "sdk", int(sys.argv[3])
    from bench_mcp.server import build_app
    from mcpgen_impl import BenchImpl

    from mcpgen_runtime.http.config import HttpOptions
    from mcpgen_runtime.http.server import build_asgi_app

    if sdk:
        install_sdk()
    try:  # a runtime with a request log (a baseline has none)
        from mcpgen_runtime.telemetry.logs import configure_logging
    except ImportError:
        pass
    else:
        configure_logging(log_format)
    app = build_app(BenchImpl())
    asgi = build_asgi_app(app, HttpOptions())
    stdio = min(stdio_round(app, calls) for _ in range(5))
    http = min(asyncio.run(http_round(asgi, calls)) for _ in range(5))
    print(json.dumps({"stdio": stdio, "http": http}))


if __name__ == "__main__":
    main()
