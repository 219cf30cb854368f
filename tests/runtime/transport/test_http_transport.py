"""The client's Streamable HTTP transport against servers that misbehave: each error a
caller can act on, with its message (the URL and what to check), the bounds of an
answer, redirects, a trickling answer against the per-call timeout, and the headers
of both eras. The server is a small stdlib HTTP server on 127.0.0.1 whose answer to
``tools/call`` each path decides; ``initialize`` and ``tools/list`` answer normally.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("httpx2", reason="the http extra (httpx2) is not installed")

from mcpgen_runtime import (
    AsyncSession,
    AuthRequired,
    ConnectionFailed,
    EndpointNotFound,
    HttpStatusError,
    NotAnMcpEndpoint,
    ProtocolError,
    ServerExited,
    Session,
    Timeout,
)

SEEN: list[dict[str, Any]] = []  # the headers and body of every POST, for the header tests


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    method = request.get("method")
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0"},
        }
    elif method == "server/discover":
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
        result.update(resultType="complete", ttlMs=0, cacheScope="private")
    elif method == "tools/list":
        result = {"tools": []}
    else:
        result = {"content": [{"type": "text", "text": "ok"}]}
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_DELETE(self) -> None:
        SEEN.append(
            {"method": "DELETE", "headers": {k.lower(): v for k, v in self.headers.items()}}
        )
        self._send(200, "text/plain", b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        request = json.loads(body)
        SEEN.append(
            {
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": request,
            }
        )
        if "id" not in request:  # a notification
            self._send(202, "", b"")
            return
        if self.path == "/401":
            self._send(401, "text/plain", b"no", {"WWW-Authenticate": 'Bearer realm="mcp"'})
        elif self.path == "/404":
            self._send(404, "text/html", b"<h1>Not Found</h1>")
        elif self.path == "/html":
            self._send(200, "text/html", b"<!doctype html><title>Welcome to nginx</title>")
        elif self.path == "/plain400" and request["method"] == "server/discover":
            self._send(400, "text/plain", b"Bad Request: no session")
        elif self.path == "/moved":
            self._send(307, "text/plain", b"", {"Location": "/mcp"})
        elif self.path == "/elsewhere":
            self._send(307, "text/plain", b"", {"Location": "http://127.0.0.2:9/mcp"})
        elif request["method"] != "tools/call" or self.path in ("/mcp", "/session", "/plain400"):
            self._json(request)
        elif self.path == "/expired":
            error = {"code": -32000, "message": "Session not found"}
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
            self._send(404, "application/json", body)
        else:
            getattr(self, "_call_" + self.path.strip("/"))(request)

    def _json(self, request: dict[str, Any]) -> None:
        extra = {"Mcp-Session-Id": "s-123"} if self.path in ("/session", "/expired") else {}
        self._send(200, "application/json", json.dumps(_answer(request)).encode(), extra)

    def _send(
        self, status: int, content_type: str, body: bytes, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _call_cut(self, request: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b'data: {"jsonrpc": "2.0", "method": "notif')
        self.wfile.flush()
        self.close_connection = True

    def _call_deep(self, request: dict[str, Any]) -> None:
        depth = 100_000
        body = b'{"jsonrpc":"2.0","id":%d,"result":' % request["id"] + b"[" * depth
        self._send(200, "application/json", body + b"]" * depth + b"}")

    def _call_huge(self, request: dict[str, Any]) -> None:
        self._send(200, "application/json", b'{"x":"' + b"a" * 200_000 + b'"}')

    def _call_trickle(self, request: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            for _ in range(60):  # one byte every 0.2 s, never a whole event
                self.wfile.write(b":")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass
        self.close_connection = True

    def _call_sse(self, request: dict[str, Any]) -> None:
        progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
        progress["params"] = {"progressToken": request["id"], "progress": 1, "total": 2}
        answer = json.dumps(_answer(request)).encode()
        body = b"event: message\r\ndata: " + json.dumps(progress).encode() + b"\r\n\r\n"
        body += b": a comment\n\nid: 7\ndata: " + answer + b"\n\n"
        self._send(200, "text/event-stream; charset=utf-8", body)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up on a trickle or an over-long answer: expected


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _call(url: str, tool: str = "x", **options: Any) -> dict[str, Any]:
    options.setdefault("protocol", "legacy")
    on_progress = options.pop("on_progress", None)
    with Session.http(url, verify="off", **options) as session:
        return session.call_tool(tool, {}, on_progress=on_progress)


def test_connection_refused(base: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    with pytest.raises(ConnectionFailed) as caught:
        _call(url, protocol="auto")
    assert isinstance(caught.value, ServerExited)
    assert f"cannot reach the MCP server at {url}" in str(caught.value)
    assert "check that the server is running" in str(caught.value)


def test_401_carries_the_challenge(base: str) -> None:
    with pytest.raises(AuthRequired) as caught:
        _call(base + "/401")
    error = caught.value
    assert isinstance(error, ProtocolError) and error.status == 401
    assert error.www_authenticate == 'Bearer realm="mcp"'
    assert f"{base}/401 answered 401 Unauthorized" in str(error)
    assert "WWW-Authenticate: Bearer realm=" in str(error) and "Authorization" in str(error)


def test_404_names_the_url(base: str) -> None:
    with pytest.raises(EndpointNotFound) as caught:
        _call(base + "/404", protocol="auto")
    assert str(caught.value).startswith(f"{base}/404 answered 404 Not Found to server/discover")
    assert "check its path" in str(caught.value)


def test_an_html_page_is_not_an_mcp_endpoint(base: str) -> None:
    with pytest.raises(NotAnMcpEndpoint) as caught:
        _call(base + "/html")
    assert caught.value.content_type == "text/html"
    assert "not an MCP endpoint" in str(caught.value) and "Welcome to nginx" in str(caught.value)


def test_a_server_closing_mid_stream(base: str) -> None:
    with pytest.raises(ConnectionFailed) as caught:
        _call(base + "/cut")
    message = str(caught.value)
    assert f"the MCP server at {base}/cut closed the connection in the middle" in message
    assert "tools/call 'x'" in message and "check the server's log" in message


def test_a_deeply_nested_answer_is_a_clear_error(base: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        _call(base + "/deep")
    assert "nested too deeply" in str(caught.value) and caught.value.reason == "no_response"


def test_an_answer_over_the_size_bound(base: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        _call(base + "/huge", max_message_bytes=100_000)
    assert caught.value.reason == "message_too_large" and "100000 bytes" in str(caught.value)


def test_a_trickling_answer_cannot_outlast_the_timeout(base: str) -> None:
    started = time.monotonic()
    with pytest.raises(Timeout) as caught:
        _call(base + "/trickle", timeout=1.0)
    assert time.monotonic() - started < 2.5
    assert "no answer within 1s from " + base in str(caught.value)

    async def main() -> float:
        async with AsyncSession.http(
            base + "/trickle", verify="off", protocol="legacy", timeout=1.0
        ) as session:
            began = time.monotonic()
            with pytest.raises(Timeout):
                await session.call_tool("x", {})
            return time.monotonic() - began

    assert asyncio.run(main()) < 1.6


def test_a_probe_refused_in_plain_text_falls_back_to_initialize(base: str) -> None:
    with Session.http(base + "/plain400", verify="off") as session:
        assert session.era == "legacy" and session.protocol_version == "2025-11-25"
        assert session.call_tool("x", {})["content"][0]["text"] == "ok"


def test_redirects_same_origin_only(base: str) -> None:
    assert _call(base + "/moved")["content"][0]["text"] == "ok"
    with pytest.raises(HttpStatusError) as caught:
        _call(base + "/elsewhere")
    assert caught.value.status == 307 and caught.value.reason == "redirect"
    assert "http://127.0.0.2:9/mcp" in str(caught.value)


def test_an_event_stream_answer_with_progress_first(base: str) -> None:
    seen: list[Any] = []
    result = _call(base + "/sse", on_progress=lambda *p: seen.append(p))
    assert seen == [(1, 2, None)] and result["content"][0]["text"] == "ok"


def test_handshake_headers_and_the_session_id(base: str) -> None:
    SEEN.clear()
    with Session.http(
        base + "/session", verify="off", protocol="legacy", headers={"X-Token": "t"}
    ) as session:
        session.list_tools()
    initialize, initialized, listing, delete = SEEN
    assert initialize["body"]["method"] == "initialize"
    assert "mcp-protocol-version" not in initialize["headers"]
    assert initialize["headers"]["accept"] == "application/json, text/event-stream"
    for later in (initialized, listing, delete):
        assert later["headers"]["mcp-session-id"] == "s-123"
        assert later["headers"]["mcp-protocol-version"] == "2025-11-25"
        assert later["headers"]["x-token"] == "t"
    assert delete["method"] == "DELETE"


def test_stateless_era_headers(base: str) -> None:
    SEEN.clear()
    with Session.http(base + "/mcp", verify="off", protocol="modern") as session:
        session.call_tool("x", {})
    [call] = [seen for seen in SEEN if seen["body"].get("method") == "tools/call"]
    assert call["headers"]["mcp-method"] == "tools/call"
    assert call["headers"]["mcp-name"] == "x"
    assert call["headers"]["mcp-protocol-version"] == "2026-07-28"
    meta = call["body"]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_a_session_the_server_forgot(base: str) -> None:
    with pytest.raises(EndpointNotFound) as caught:
        _call(base + "/expired")
    assert "no longer knows the session s-123 (tools/call 'x')" in str(caught.value)
    assert "connect a new client" in str(caught.value)


def test_a_header_that_would_split_the_request() -> None:
    with pytest.raises(ValueError, match="not a header one line can carry"):
        Session.http("http://127.0.0.1:9/mcp", headers={"X-A": "b\r\nX-Injected: 1"})


def test_a_url_that_is_not_http() -> None:
    with pytest.raises(ValueError, match="not an http:// or https:// URL"):
        Session.http("ftp://example.com/mcp")


def test_a_client_over_stdio_never_loads_httpx2() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from mcpgen_runtime import AsyncSession, Session\n"
        "session = Session.stdio([sys.executable, '-c', 'pass'])\n"
        "assert 'httpx2' not in sys.modules, 'httpx2 loaded'\n"
        "Session.http('http://127.0.0.1:9/mcp')\n"
        "assert 'httpx2' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_closing_fails_the_calls_still_waiting(base: str) -> None:
    async def main() -> BaseException:
        session = AsyncSession.http(base + "/trickle", verify="off", protocol="legacy")
        await session.connect()
        call = asyncio.ensure_future(session.call_tool("x", {}))
        await asyncio.sleep(0.3)
        await session.close()
        return (await asyncio.gather(call, return_exceptions=True))[0]

    error = asyncio.run(asyncio.wait_for(main(), 10))
    assert isinstance(error, ConnectionFailed) and "is closed" in str(error)


def test_the_event_stream_parser_in_pieces_and_bounded() -> None:
    from mcpgen_runtime.transport.http.wire import EventStream

    stream = EventStream("http://x/mcp", 1000)
    chunks = [b"da", b'ta: {"a"', b":1}\r", b"\n", b"\r\n", b": c\n\nevent: other\ndata: x\n\n"]
    events = [data for chunk in [*chunks, b"data: y\ndata: z\n\n"] for data in stream.feed(chunk)]
    assert events == [b'{"a":1}', b"y\nz"]  # comments and other event types skipped
    small = EventStream("http://x/mcp", 100)
    with pytest.raises(ProtocolError) as caught:
        for _ in range(10):
            small.feed(b"x" * 20)  # one line that never ends
    assert caught.value.reason == "message_too_large"
    with pytest.raises(ProtocolError):
        small_events = EventStream("http://x/mcp", 100)
        small_events.feed(b"data: " + b"y" * 60 + b"\ndata: " + b"y" * 60 + b"\n")
