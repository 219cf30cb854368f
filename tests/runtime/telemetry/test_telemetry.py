"""OpenTelemetry per the MCP semantic conventions, end to end: a generated client and
server over stdio (in process over real pipes, and a real subprocess exporting with
the SDK set up from ``OTEL_*``) and over Streamable HTTP (uvicorn on a socket).

Spans and metrics are captured with the SDK's in-memory exporters installed as the
global providers (``fixtures.otel_capture``): the client span's context travels in
``params._meta`` and becomes the server span's parent; a task's execution has a span
of its own linked to its call; errors carry ``error.type``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import free_port, http_server
from fixtures.otel_capture import Captured, installed_otel
from helpers import build_package, import_package
from opentelemetry.trace import SpanKind, StatusCode

from mcpgen_runtime import ProtocolError, ToolError
from mcpgen_runtime.telemetry.otel import DURATION_BUCKETS, providers

SPEC = """
mcpgen: 1
package: traced_mcp
server: {name: traced, version: "1.0.0", implementation: "traced_impl:Impl"}
tools:
  - name: add
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    returns: integer
  - name: refuse
    parameters: [{name: secret, type: string}]
    returns: string
  - name: batch_job
    task_support: required
    parameters: [{name: n, type: integer}]
    returns: integer
  - name: slow_add
    async: true
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    returns: integer
  - name: timed_add
    timeout: 10
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    returns: integer
"""

IMPL = """
from opentelemetry import trace
from traced_mcp import ToolError, TracedServer

class Impl(TracedServer):
    def add(self, a: int, b: int) -> int:
        # a handler's own span: a child of the server span
        with trace.get_tracer("traced-impl").start_as_current_span("add-inside"):
            return a + b

    def refuse(self, secret: str) -> str:
        raise ToolError("refused")

    def batch_job(self, n: int) -> int:
        return n * 2

    async def slow_add(self, a: int, b: int) -> int:
        with trace.get_tracer("traced-impl").start_as_current_span("slow-add-inside"):
            return a + b

    def timed_add(self, a: int, b: int) -> int:  # runs on a worker thread (a timeout)
        with trace.get_tracer("traced-impl").start_as_current_span("timed-add-inside"):
            return a + b
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("telemetry")
    gen = build_package(SPEC, root, "traced_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "traced_impl.py").write_text(IMPL, encoding="utf-8")
    return gen, impl


@pytest.fixture
def otel() -> Iterator[Captured]:
    with installed_otel() as captured:
        yield captured


@pytest.fixture
def traced(package: tuple[Path, Path]) -> Iterator[Any]:
    gen, impl = package
    sys.path.insert(0, str(impl))
    try:
        with import_package(gen, "traced_mcp") as module:
            yield module
    finally:
        sys.path.remove(str(impl))
        sys.modules.pop("traced_impl", None)


def _one(captured: Captured, name: str, kind: SpanKind) -> Any:
    spans = [span for span in captured.named(name) if span.kind == kind]
    assert len(spans) == 1, [(s.name, s.kind) for s in captured.finished()]
    return spans[0]


def _assert_parent(child: Any, parent: Any) -> None:
    assert child.parent is not None, child.name
    assert child.context.trace_id == parent.context.trace_id
    assert child.parent.span_id == parent.context.span_id


def test_nothing_is_recorded_without_a_provider() -> None:
    """No SDK installed globally (the API's proxies): the shells find nothing to do."""
    assert providers() is None


def test_a_stdio_call_is_one_trace_from_client_to_handler(otel: Captured, traced: Any) -> None:
    import traced_impl

    with traced.TracedClient.in_memory(traced_impl.Impl()) as client:
        assert client.add(2, 3) == 5
        version = client.session.protocol_version
    call = _one(otel, "tools/call add", SpanKind.CLIENT)
    served = _one(otel, "tools/call add", SpanKind.SERVER)
    inside = _one(otel, "add-inside", SpanKind.INTERNAL)
    _assert_parent(served, call)
    _assert_parent(inside, served)
    attributes = dict(served.attributes)
    assert attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "add",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": attributes["jsonrpc.request.id"],
        "mcp.protocol.version": version,
        "network.transport": "pipe",
    }
    assert attributes["jsonrpc.request.id"] == call.attributes["jsonrpc.request.id"]
    assert call.attributes["network.transport"] == "pipe"
    assert call.attributes["gen_ai.tool.name"] == "add"
    assert served.status.status_code == StatusCode.UNSET
    # arguments and results stay out unless asked for
    assert "gen_ai.tool.call.arguments" not in attributes


def test_async_and_threaded_handlers_run_in_the_server_span(otel: Captured, traced: Any) -> None:
    import traced_impl

    with traced.TracedClient.in_memory(traced_impl.Impl()) as client:
        assert client.slow_add(1, 2) == 3
        assert client.timed_add(2, 2) == 4
    for tool, inside in (("slow_add", "slow-add-inside"), ("timed_add", "timed-add-inside")):
        served = _one(otel, f"tools/call {tool}", SpanKind.SERVER)
        _assert_parent(_one(otel, inside, SpanKind.INTERNAL), served)


def test_the_async_client_propagates_as_the_sync_one(otel: Captured, traced: Any) -> None:
    import asyncio

    import traced_impl

    async def call() -> int:
        async with traced.AsyncTracedClient.in_memory(traced_impl.Impl()) as client:
            # two calls at once: each request carries its own operation's span
            first, second = await asyncio.gather(client.add(1, 2), client.add(3, 4))
            return int(first + second)

    assert asyncio.run(call()) == 10
    calls = [s for s in otel.named("tools/call add") if s.kind == SpanKind.CLIENT]
    served = [s for s in otel.named("tools/call add") if s.kind == SpanKind.SERVER]
    assert len(calls) == len(served) == 2
    by_parent = {s.parent.span_id: s for s in served if s.parent is not None}
    for sent in calls:
        handled = by_parent[sent.context.span_id]
        assert handled.attributes["jsonrpc.request.id"] == sent.attributes["jsonrpc.request.id"]


def test_the_duration_histograms_use_the_conventions_buckets(otel: Captured, traced: Any) -> None:
    import traced_impl

    with traced.TracedClient.in_memory(traced_impl.Impl()) as client:
        client.add(1, 1)
        client.add(2, 2)
    for name in ("mcp.server.operation.duration", "mcp.client.operation.duration"):
        points = [
            p for p in otel.histogram_points(name) if p.attributes.get("gen_ai.tool.name") == "add"
        ]
        assert len(points) == 1 and points[0].count == 2, name
        assert tuple(points[0].explicit_bounds) == DURATION_BUCKETS
        assert points[0].attributes["mcp.method.name"] == "tools/call"
    (session,) = otel.histogram_points("mcp.client.session.duration")
    assert session.count == 1 and session.attributes["network.transport"] == "pipe"
    # the in-process server's session ended with the client's stdin
    deadline = time.monotonic() + 5
    while not otel.histogram_points("mcp.server.session.duration"):
        assert time.monotonic() < deadline, "no mcp.server.session.duration"
        time.sleep(0.02)
    (served,) = otel.histogram_points("mcp.server.session.duration")
    assert served.attributes["mcp.protocol.version"] == session.attributes["mcp.protocol.version"]


def test_a_tool_error_and_a_protocol_error_set_error_type(otel: Captured, traced: Any) -> None:
    import traced_impl

    with traced.TracedClient.in_memory(traced_impl.Impl()) as client:
        with pytest.raises(ToolError):
            client.refuse("hunter2")
        with pytest.raises(ProtocolError):
            client.session.request("tools/call", {"name": "missing", "arguments": {}})
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        refused = _one(otel, "tools/call refuse", kind)
        assert refused.attributes["error.type"] == "tool_error"
        assert refused.status.status_code == StatusCode.ERROR
        assert "rpc.response.status_code" not in refused.attributes
    served = _one(otel, "tools/call missing", SpanKind.SERVER)
    assert served.attributes["error.type"] == "-32602"
    assert served.attributes["rpc.response.status_code"] == "-32602"
    # the client's generic request is named by its method (the tool is no target it knows)
    sent = _one(otel, "tools/call", SpanKind.CLIENT)
    assert sent.attributes["error.type"] == "-32602"
    _assert_parent(served, sent)
    points = otel.histogram_points("mcp.server.operation.duration")
    assert {p.attributes.get("error.type") for p in points} >= {"tool_error", "-32602"}


def test_a_task_runs_in_a_span_linked_to_its_call(otel: Captured, traced: Any) -> None:
    import traced_impl

    with traced.TracedClient.in_memory(traced_impl.Impl()) as client:
        assert client.batch_job(21) == 42
    call = _one(otel, "tools/call batch_job", SpanKind.CLIENT)
    served = _one(otel, "tools/call batch_job", SpanKind.SERVER)
    _assert_parent(served, call)
    execution = _one(otel, "execute_tool batch_job", SpanKind.INTERNAL)
    assert execution.parent is None  # a trace of its own: the task outlives the call
    assert [link.context.span_id for link in execution.links] == [served.context.span_id]
    assert execution.attributes["mcp.task.id"]
    # the polls of the task belong to the call's trace
    polls = [s for s in otel.finished() if s.name in ("tasks/get", "tasks/result")]
    assert polls and all(s.context.trace_id == call.context.trace_id for s in polls)


def test_content_is_recorded_only_when_opted_in(
    otel: Captured, traced: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import traced_impl

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    with traced.TracedClient.in_memory(traced_impl.Impl()) as client:
        client.add(4, 5)
    served = _one(otel, "tools/call add", SpanKind.SERVER)
    assert json.loads(str(served.attributes["gen_ai.tool.call.arguments"])) == {"a": 4, "b": 5}
    result = json.loads(str(served.attributes["gen_ai.tool.call.result"]))
    assert result["content"] == [{"type": "text", "text": "9"}]


class _Uvicorn:
    """The generated server's ASGI app on uvicorn, in a thread of this process."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        return f"http://127.0.0.1:{self.port}/mcp"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def test_an_http_call_is_one_trace_and_links_the_request_context(
    otel: Captured, traced: Any
) -> None:
    pytest.importorskip("uvicorn")
    import traced_impl

    from mcpgen_runtime.http.server import build_asgi_app

    app = build_asgi_app(traced.server.build_app(traced_impl.Impl()))
    with _Uvicorn(app) as url:
        client = traced.TracedClient.http(url)
        with client:
            assert client.add(1, 2) == 3
            with pytest.raises(ToolError):
                client.refuse("x")
            assert client.batch_job(5) == 10
            assert client.slow_add(1, 1) == 2
            assert client.timed_add(1, 2) == 3
    for tool, inside in (("slow_add", "slow-add-inside"), ("timed_add", "timed-add-inside")):
        _assert_parent(
            _one(otel, inside, SpanKind.INTERNAL), _one(otel, f"tools/call {tool}", SpanKind.SERVER)
        )
    call = _one(otel, "tools/call add", SpanKind.CLIENT)
    served = _one(otel, "tools/call add", SpanKind.SERVER)
    _assert_parent(served, call)
    _assert_parent(_one(otel, "add-inside", SpanKind.INTERNAL), served)
    assert served.attributes["network.transport"] == "tcp"
    assert served.attributes["client.address"] == "127.0.0.1"
    assert served.attributes["mcp.protocol.version"] == client.session.protocol_version
    assert call.attributes["server.address"] == "127.0.0.1"
    assert _one(otel, "tools/call refuse", SpanKind.SERVER).attributes["error.type"] == "tool_error"
    execution = _one(otel, "execute_tool batch_job", SpanKind.INTERNAL)
    started = _one(otel, "tools/call batch_job", SpanKind.SERVER)
    assert [link.context.span_id for link in execution.links] == [started.context.span_id]


def test_http_trace_headers_are_linked_not_parented(otel: Captured, traced: Any) -> None:
    pytest.importorskip("uvicorn")
    import httpx2
    import traced_impl

    from mcpgen_runtime.http.server import build_asgi_app

    app = build_asgi_app(traced.server.build_app(traced_impl.Impl()))
    header = "00-11111111111111111111111111111111-2222222222222222-01"
    in_meta = "00-33333333333333333333333333333333-4444444444444444-01"
    body = {
        "jsonrpc": "2.0",
        "id": "r-1",
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 1}, "_meta": {"traceparent": in_meta}},
    }
    with _Uvicorn(app) as url:
        answer = httpx2.post(
            url,
            json=body,
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
                "traceparent": header,
            },
        )
    assert answer.status_code == 200, answer.text
    served = _one(otel, "tools/call add", SpanKind.SERVER)
    assert format(served.context.trace_id, "032x") == "3" * 32
    assert format(served.parent.span_id, "016x") == "4" * 16
    assert [format(link.context.span_id, "016x") for link in served.links] == ["2" * 16]
    assert served.attributes["jsonrpc.request.id"] == "r-1"


def test_a_subprocess_server_exports_its_spans_as_otel_env_says(
    otel: Captured, package: tuple[Path, Path], traced: Any, tmp_path: Path
) -> None:
    """The real entry point: the SDK set up from OTEL_* (console exporter, on stderr),
    the parent read from ``_meta`` the generated client wrote."""
    gen, impl = package
    stderr = tmp_path / "server.stderr"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(gen), str(impl)]),
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_SERVICE_NAME": "traced-test",
    }
    command = f"exec {sys.executable} -m traced_mcp 2>{stderr}"
    with traced.TracedClient.stdio(["/bin/sh", "-c", command], env=env) as client:
        assert client.add(20, 22) == 42
    call = _one(otel, "tools/call add", SpanKind.CLIENT)
    exported = _json_objects(stderr.read_text(encoding="utf-8"))
    served = [s for s in exported if s.get("name") == "tools/call add"]
    assert len(served) == 1, stderr.read_text(encoding="utf-8")[-3000:]
    (span,) = served
    assert span["kind"] == "SpanKind.SERVER"
    assert span["context"]["trace_id"] == "0x" + format(call.context.trace_id, "032x")
    assert span["parent_id"] == "0x" + format(call.context.span_id, "016x")
    assert span["attributes"]["network.transport"] == "pipe"
    assert span["resource"]["attributes"]["service.name"] == "traced-test"


def test_an_http_server_exports_its_spans_as_otel_env_says(
    otel: Captured, package: tuple[Path, Path], traced: Any, tmp_path: Path
) -> None:
    """The entry point over HTTP: the SDK set up from OTEL_* before uvicorn starts; the
    spans leave with the batch processor's flush when the server stops (SIGTERM)."""
    pytest.importorskip("uvicorn")
    gen, impl = package
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}
    with http_server(
        "traced_mcp", pythonpath=[gen, impl], cwd=impl, log_dir=tmp_path, env=env
    ) as server:
        with traced.TracedClient.http(server.url) as client:
            assert client.add(1, 2) == 3
        server.stop()
        output = server.output
    call = _one(otel, "tools/call add", SpanKind.CLIENT)
    exported = [s for s in _json_objects(output) if s.get("name") == "tools/call add"]
    assert len(exported) == 1, output[-3000:]
    assert exported[0]["kind"] == "SpanKind.SERVER"
    assert exported[0]["parent_id"] == "0x" + format(call.context.span_id, "016x")
    assert exported[0]["attributes"]["network.transport"] == "tcp"
    assert exported[0]["resource"]["attributes"]["service.name"] == "traced"


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects in ``text`` (the console exporter prints them over several lines)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while True:
        start = text.find("{", at)
        if start < 0:
            return found
        try:
            value, at = decoder.raw_decode(text, start)
        except ValueError:
            at = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)


def test_the_sdk_is_not_set_up_unless_otel_env_asks(tmp_path: Path) -> None:
    from mcpgen_runtime.telemetry.setup import exporter_names

    assert exporter_names({}) == (None, None)
    assert exporter_names({"OTEL_TRACES_EXPORTER": "console"}) == ("console", None)
    assert exporter_names({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}) == (
        "otlp",
        "otlp",
    )
    assert exporter_names(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"}
    ) == ("otlp", None)
    # a process where nothing asks: the entry point installs no provider
    probe = (
        "import sys; from mcpgen_runtime.telemetry.setup import configure_from_environment; "
        "from mcpgen_runtime.telemetry.otel import providers; "
        "print(configure_from_environment('x'), providers())"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "None"]
