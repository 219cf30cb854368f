"""mcpgen's own ASGI app (``_http_app``), driven in process without a socket, and
``--workers`` on real sockets: what the HTTP side answers (405 for GET and DELETE,
415, 406, 413, the 2026-07-28 header checks), when an answer is JSON and when an
SSE stream, that a plain call starts no thread, that start-up freezes the heap,
and that a client hanging up mid-call leaves no task and no pool slot behind.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.asgi_client import post, rpc
from helpers import build_package, import_package

SPEC = """\
mcpgen: 1
package: app_probe_mcp
server: {name: app-probe, version: 0.1.0}
tools:
  - name: echo
    parameters: [{name: text, type: string}]
  - name: steps
    parameters: [{name: n, type: integer}]
    callback: positional
    returns: string
  - name: wait
    parameters: [{name: seconds, type: number}]
    callback: positional
    returns: string
    async: true
  - name: pid
    returns: integer
"""

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SEEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    gen = build_package(SPEC, tmp_path_factory.mktemp("http_app"), "app_probe_mcp")
    with import_package(gen, "app_probe_mcp") as pkg:

        class Impl(pkg.AppProbeServer):  # type: ignore[misc, name-defined]
            def echo(self, text: str) -> str:
                SEEN["echo thread"] = threading.current_thread().name
                return text

            def steps(self, n: int, *, ctx: Any = None) -> str:
                for step in range(n):
                    ctx.report_progress(step + 1, n)
                ctx.info("done")
                return f"did {n}"

            async def wait(self, seconds: float) -> str:
                try:
                    await asyncio.sleep(seconds)
                except asyncio.CancelledError:
                    SEEN["wait cancelled"] = True
                    raise
                return "waited"

            def pid(self) -> int:
                return os.getpid()

        yield pkg.server.build_app(Impl())


def asgi(app: Any, **options: Any) -> Any:
    from mcpgen_runtime.http.config import HttpOptions
    from mcpgen_runtime.http.server import build_asgi_app

    return build_asgi_app(app, HttpOptions(**options))


def body(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


# -- the HTTP side -----------------------------------------------------------------------


def test_get_and_delete_are_405_in_stateless_mode(probe: Any) -> None:
    """A stateless server has no stream for a GET to open (one that was opened was
    never written to nor closed) and no session for a DELETE to end."""
    app = asgi(probe)
    for method in ("GET", "DELETE", "PUT"):
        status, headers, text = post(app, b"", {"accept": "text/event-stream"}, method=method)
        assert status == 405 and headers["allow"] == "POST", (method, status)
        assert b"POST only" in text and json.loads(text)["error"]["code"] == -32600


def test_media_types_and_body_limit(probe: Any) -> None:
    app = asgi(probe, max_body_bytes=200)
    ping = body("ping")
    assert post(app, ping, {"content-type": "text/plain"})[0] == 415
    assert post(app, ping, {"accept": "text/html"})[0] == 406
    big = body("tools/call", {"name": "echo", "arguments": {"text": "x" * 300}})
    assert post(app, big)[0] == 413
    assert post(app, big, {"content-length": str(len(big))})[0] == 413
    status, _, text = post(app, b"{not json")
    assert status == 400 and json.loads(text)["error"]["code"] == -32700
    status, _, text = post(app, b"[1, 2]")
    assert status == 400 and json.loads(text)["error"]["code"] == -32600
    notification = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert post(app, notification)[:3:2] == (202, b"")
    assert post(app, ping, {"accept": "application/json"})[0] == 200  # JSON alone is enough
    status, headers, text = post(app, ping, {"accept": "text/event-stream"})  # SSE alone too
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert text == b'event: message\r\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n'


def test_single_exchange_header_checks(probe: Any) -> None:
    """2026-07-28: the routing headers must agree with the body (-32020, HTTP 400)."""
    app = asgi(probe)
    call = {"name": "echo", "arguments": {"text": "hi"}, "_meta": META}
    good = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo"}
    status, _, text = post(app, body("tools/call", call), good)
    assert status == 200 and json.loads(text)["result"]["content"][0]["text"] == "hi"
    for wrong in (
        {"mcp-method": "tools/list"},
        {"mcp-name": "other"},
        {"mcp-protocol-version": "2099-01-01"},
    ):
        status, _, text = post(app, body("tools/call", call), {**good, **wrong})
        assert status == 400 and json.loads(text)["error"]["code"] == -32020, wrong
    status, _, text = post(
        app, body("tools/call", {**call, "name": "nope"}), {**good, "mcp-name": "nope"}
    )
    assert status == 400 and json.loads(text)["error"]["code"] == -32602  # unknown tool
    status, _, text = post(app, body("no/such", {"_meta": META}), {**good, "mcp-method": "no/such"})
    assert status == 404 and json.loads(text)["error"]["code"] == -32601


# -- JSON or SSE -------------------------------------------------------------------------


def test_json_unless_the_call_sends_notifications(probe: Any) -> None:
    app = asgi(probe)
    # 2026-07-28 with neither a progress token nor a log level: nothing asked for
    modern = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "steps"}
    plain = body("tools/call", {"name": "steps", "arguments": {"n": 2}, "_meta": META})
    _, headers, text = post(app, plain, modern)
    assert headers["content-type"] == "application/json"
    assert json.loads(text)["result"]["content"][0]["text"] == "did 2"
    # the same asking for logs: a stream
    logs = body(
        "tools/call",
        {
            "name": "steps",
            "arguments": {"n": 2},
            "_meta": {**META, "io.modelcontextprotocol/logLevel": "info"},
        },
    )
    assert post(app, logs, modern)[1]["content-type"] == "text/event-stream"
    # a handshake revision sends logs of every level unless the call names one: a stream
    asked = body(
        "tools/call", {"name": "steps", "arguments": {"n": 2}, "_meta": {"progressToken": "p"}}
    )
    _, headers, text = post(app, asked)
    assert headers["content-type"] == "text/event-stream"
    events = [
        json.loads(line[5:]) for line in text.decode().splitlines() if line.startswith("data:")
    ]
    assert [e.get("method") for e in events] == [
        "notifications/progress",
        "notifications/progress",
        "notifications/message",
        None,
    ]
    assert events[-1]["result"]["content"][0]["text"] == "did 2"
    # a client that takes JSON only, or --json-response: JSON, the notifications dropped
    for accept_json in (asgi(probe, json_response=True), app):
        _status, headers, text = post(accept_json, asked, {"accept": "application/json"})
        assert headers["content-type"] == "application/json"
        assert json.loads(text)["result"]["content"][0]["text"] == "did 2"


# -- the call path -----------------------------------------------------------------------


def test_a_plain_sync_call_runs_inline(probe: Any) -> None:
    """No thread per call: a plain sync handler (no timeout, ctx or task) runs on the
    event loop's thread, its argument check included, and starts no pool thread."""
    app = asgi(probe)
    before = {t.name for t in threading.enumerate()}
    for _ in range(20):
        assert rpc(app, "tools/call", {"name": "echo", "arguments": {"text": "a"}})["result"]
    assert SEEN["echo thread"] == threading.current_thread().name
    started = {t.name for t in threading.enumerate()} - before
    assert not {name for name in started if name.startswith("mcpgen-http")}, started
    assert app.exchange.calls.checks.threads == app.exchange.calls.handlers.threads == 0


def test_start_up_freezes_the_heap(probe: Any) -> None:
    app = asgi(probe)
    sent: list[dict[str, Any]] = []
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    gc.unfreeze()
    try:
        asyncio.run(app({"type": "lifespan"}, receive, send))
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_a_client_that_hangs_up_leaves_nothing_behind(probe: Any) -> None:
    """The client disconnects while an async call runs: the handler is cancelled, the
    app returns at once, and no asyncio task, pool slot or response is left over."""
    app = asgi(probe)
    request = body("tools/call", {"name": "wait", "arguments": {"seconds": 30}})
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [
            (b"content-type", b"application/json"),
            (b"accept", b"application/json"),
            (b"host", b"127.0.0.1:8000"),
        ],
    }
    sent: list[dict[str, Any]] = []

    async def go() -> set[asyncio.Task[Any]]:
        hang_up = asyncio.Event()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": request, "more_body": False}
            await hang_up.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        serving = asyncio.ensure_future(app(scope, receive, send))
        await asyncio.sleep(0.2)  # the handler is waiting now
        started = time.monotonic()
        hang_up.set()
        await asyncio.wait_for(serving, 5)
        assert time.monotonic() - started < 2
        await asyncio.sleep(0)  # let the cancelled handler's task finish
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    SEEN.pop("wait cancelled", None)
    left = asyncio.run(go())
    assert not left, left
    assert SEEN.get("wait cancelled") is True
    assert sent == []  # nothing was answered to a client that is gone
    assert app.exchange.calls.checks.semaphore._value == app.exchange.calls.checks.size


# -- --workers: balanced accepts ---------------------------------------------------------


def _listening_inodes(pid: int, port: int) -> set[str]:
    """Inodes of the TCP sockets in LISTEN state on ``port`` that ``pid`` holds."""
    listening = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                listening.add(fields[9])
    held = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            held.add(target[8:-1])
    return listening & held


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="SO_REUSEPORT balancing is Linux's"
)
def test_each_worker_listens_on_a_socket_of_its_own(tmp_path: Path) -> None:
    """--workers 2: one listening socket per worker in one SO_REUSEPORT group, so the
    kernel spreads connections over both; and both answer."""
    from fixtures.http_server import http_server
    from test_http import _worker_pids

    gen = build_package(
        SPEC.replace(
            "server: {name: app-probe, version: 0.1.0}",
            'server: {name: app-probe, version: 0.1.0, implementation: "probe_impl:Impl"}',
        ),
        tmp_path,
        "app_probe_mcp",
    )
    impl = tmp_path / "impl"
    impl.mkdir()
    (impl / "probe_impl.py").write_text(
        "import os\nfrom app_probe_mcp import AppProbeServer\n\n"
        "class Impl(AppProbeServer):\n"
        "    def echo(self, text): return text\n"
        "    def steps(self, n, *, ctx=None): return str(n)\n"
        "    async def wait(self, seconds): return 'waited'\n"
        "    def pid(self): return os.getpid()\n"
    )
    import httpx2

    with http_server(
        "app_probe_mcp", "--workers", "2", pythonpath=[gen, impl], cwd=impl, log_dir=tmp_path
    ) as server:
        deadline = time.monotonic() + 20
        while len(_worker_pids(server.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _worker_pids(server.proc.pid)
        assert len(workers) == 2, server.output
        inodes = [_listening_inodes(pid, server.port) for pid in workers]
        while not all(inodes) and time.monotonic() < deadline:
            time.sleep(0.05)
            inodes = [_listening_inodes(pid, server.port) for pid in workers]
        assert all(len(found) == 1 for found in inodes), inodes
        assert inodes[0] != inodes[1]  # not one shared socket
        answered = set()
        for _ in range(40):  # a fresh connection each: the kernel picks a worker per connection
            if len(answered) == 2:
                break
            with httpx2.Client(timeout=20) as client:
                reply = client.post(
                    server.url,
                    content=body("tools/call", {"name": "pid"}),
                    headers={
                        "content-type": "application/json",
                        "accept": "application/json",
                        "mcp-protocol-version": "2025-11-25",
                    },
                )
                answered.add(int(reply.json()["result"]["content"][0]["text"]))
        assert answered == set(workers)
