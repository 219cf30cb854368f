"""The request log (``--log-format off|text|json``) of a generated server, read back.

Servers run as real processes: over stdio (the generated client starts it) and over
HTTP. In JSON every line of stderr parses, one per request with the fixed fields, and
the runtime's diagnostics (a handler's traceback) come out as JSON lines too. No
secret reaches the log: a bearer token in a header, the password of a Redis task
store URL, an argument's value.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import http_server
from helpers import build_package, import_package

from mcpgen_runtime import ProtocolError, ToolError
from mcpgen_runtime.telemetry.logs import REQUEST_FIELDS

SPEC = """
mcpgen: 1
package: logged_mcp
server: {name: logged, version: "1.0.0", implementation: "logged_impl:Impl"}
tools:
  - name: echo
    parameters: [{name: text, type: string}]
    returns: string
  - name: refuse
    parameters: [{name: text, type: string}]
    returns: string
  - name: crash
    parameters: [{name: text, type: string}]
    returns: string
  - name: batch_job
    task_support: optional
    parameters: [{name: n, type: integer}]
    returns: integer
"""

IMPL = """
from logged_mcp import LoggedServer, ToolError

class Impl(LoggedServer):
    def echo(self, text: str) -> str:
        return text

    def refuse(self, text: str) -> str:
        raise ToolError("refused")

    def crash(self, text: str) -> str:
        raise RuntimeError("the handler broke")

    def batch_job(self, n: int) -> int:
        return n
"""

TOKEN = "tok-SECRET-7f3a9c"
PASSWORD = "pw-SECRET-1b2d"
ARGUMENT = "arg-SECRET-5e6f"
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("request_log")
    gen = build_package(SPEC, root, "logged_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "logged_impl.py").write_text(IMPL, encoding="utf-8")
    return gen, impl


def _stdio_session(package: tuple[Path, Path], stderr: Path, *args: str) -> Any:
    gen, impl = package
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "PYTHONPATH": os.pathsep.join([str(gen), str(impl)]),
    }
    command = " ".join([sys.executable, "-m", "logged_mcp", *args])
    with import_package(gen, "logged_mcp") as module:
        return module.LoggedClient.stdio(["/bin/sh", "-c", f"exec {command} 2>{stderr}"], env=env)


def _json_lines(text: str) -> list[dict[str, Any]]:
    lines = [line for line in text.splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]  # every line: one JSON object
    assert all(isinstance(entry, dict) for entry in parsed)
    return parsed


def _requests(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in entries if entry["logger"] == "mcpgen.request"]


def test_stdio_json_lines_one_per_request(package: tuple[Path, Path], tmp_path: Path) -> None:
    stderr = tmp_path / "stderr"
    with _stdio_session(package, stderr, "--log-format", "json") as client:
        assert client.echo(ARGUMENT) == ARGUMENT
        with pytest.raises(ToolError):
            client.refuse(ARGUMENT)
        with pytest.raises(ToolError):
            client.crash(ARGUMENT)
        with pytest.raises(ProtocolError):
            client.session.request(
                "tools/call",
                {"name": "missing", "arguments": {}, "_meta": {"traceparent": TRACEPARENT}},
            )
    entries = _json_lines(stderr.read_text(encoding="utf-8"))
    requests = _requests(entries)
    for entry in requests:
        assert set(REQUEST_FIELDS) <= set(entry) and entry["time"].endswith("Z")
        assert entry["requestor"] is None  # stdio: one client, no identity
    calls = {entry["tool"]: entry for entry in requests if entry["method"] == "tools/call"}
    assert calls["echo"]["status"] == "ok" and calls["echo"]["code"] is None
    assert calls["refuse"]["status"] == "tool_error"
    assert calls["crash"]["status"] == "tool_error"
    assert calls["missing"]["status"] == "error" and calls["missing"]["code"] == -32602
    # no SDK: the trace id comes from the caller's traceparent
    assert calls["missing"]["trace_id"] == "0af7651916cd43dd8448eb211c80319c"
    assert all(isinstance(entry["duration_ms"], float) for entry in requests)
    methods = {entry["method"] for entry in requests}  # the probe and the contract check too
    assert "tools/list" in methods and methods & {"server/discover", "initialize"}
    # the handler's traceback is a diagnostic through the same logger, as JSON
    (crash,) = [entry for entry in entries if entry["logger"] == "mcpgen.server"]
    assert crash["level"] == "error" and "RuntimeError: the handler broke" in crash["exception"]
    assert ARGUMENT not in stderr.read_text(encoding="utf-8")


def test_stdio_logs_no_requests_by_default(package: tuple[Path, Path], tmp_path: Path) -> None:
    stderr = tmp_path / "stderr"
    with _stdio_session(package, stderr) as client:
        assert client.echo("x") == "x"
        with pytest.raises(ToolError):
            client.crash("x")
    text = stderr.read_text(encoding="utf-8")
    assert "request method=" not in text and "tools/call" not in text
    # diagnostics still come out, as text
    assert "mcpgen: tool 'crash' raised:" in text and "RuntimeError: the handler broke" in text


def test_text_lines_quote_what_a_peer_chose(package: tuple[Path, Path], tmp_path: Path) -> None:
    stderr = tmp_path / "stderr"
    session = _stdio_session(package, stderr, "--log-format", "text")
    with session as client, pytest.raises(ProtocolError):
        client.session.request("forged\nmcpgen: request method=x", {})
    lines = stderr.read_text(encoding="utf-8").splitlines()
    (forged,) = [line for line in lines if "forged" in line]
    assert 'method="forged\\nmcpgen: request method=x"' in forged
    assert "status=error code=-32601" in forged


def test_http_json_log_keeps_every_secret_out(package: tuple[Path, Path], tmp_path: Path) -> None:
    """A token in the Authorization header, a Redis URL's password (the store is down,
    so its failure is logged), an argument's value: none of them in the log."""
    pytest.importorskip("uvicorn")
    import httpx2

    gen, impl = package
    store = f"redis://:{PASSWORD}@127.0.0.1:9/0"  # port 9: nothing listens there
    with http_server(
        "logged_mcp",
        "--log-format",
        "json",
        "--task-store",
        store,
        "--identity-header",
        "x-user",
        pythonpath=[gen, impl],
        cwd=impl,
        log_dir=tmp_path,
        env={"MCPGEN_TASK_LEASE": "5"},
    ) as server:
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
            "authorization": f"Bearer {TOKEN}",
            "x-user": "alice",
        }

        def call(request_id: int, name: str, arguments: dict[str, Any], **extra: Any) -> Any:
            params = {"name": name, "arguments": arguments, **extra}
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            return httpx2.post(server.url, json=body, headers=headers, timeout=30)

        assert call(1, "echo", {"text": ARGUMENT}).json()["result"]["isError"] is False
        assert call(2, "refuse", {"text": ARGUMENT}).json()["result"]["isError"] is True
        failed = call(3, "batch_job", {"n": 1}, task={"ttl": 60000})
        assert failed.json()["error"]["code"] == -32603  # the store cannot be reached
        # a request's line is written once its answer is sent: read the log only after
        # the server has stopped (it drains on SIGTERM), not while the last line may
        # still be on its way
        server.stop()
        output = server.output
    entries = _json_lines(output)  # uvicorn's lines too
    assert any(entry["logger"].startswith("uvicorn") for entry in entries)
    requests = _requests(entries)
    by_id = {entry["request_id"]: entry for entry in requests}
    assert by_id[1]["status"] == "ok" and by_id[1]["http_status"] == 200
    assert by_id[1]["requestor"] == "alice" and by_id[1]["tool"] == "echo"
    assert by_id[2]["status"] == "tool_error"
    assert by_id[3]["code"] == -32603
    store_failures = [e for e in entries if e["logger"] == "mcpgen.tasks"]
    assert store_failures, "the unreachable store was not logged"
    for secret in (TOKEN, PASSWORD, ARGUMENT):
        assert secret not in output
