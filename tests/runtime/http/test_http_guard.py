"""The HTTP server's connection guard (``http.guard``, ``http.guard_fast``) against
clients that hold connections or memory, each on a real generated server in a
subprocess on 127.0.0.1, on both parsers where the attack applies:

- a request answered before its body was read (421 here) whose body then arrives
  leaves the connection with a deadline (the next head is due), not with none;
- a client that never reads its answer is cut off after ``--write-timeout``, and
  an SSE call's notifications wait in a bounded queue meanwhile;
- a request id longer than ``MAX_REQUEST_ID_CHARS`` is refused (-32600), not echoed;
- a request framed by both ``Content-Length`` and ``Transfer-Encoding`` gets 400
  and the connection is closed (no smuggled second request).

Timings are hang guards: a deadline test asserts only that the server recovered
within many times the deadline.
"""

from __future__ import annotations

import json
import socket
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer, http_server
from helpers import build_package

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
import httpx2

VERSION = "2025-11-25"
SLACK = 20.0  # seconds: the bound on "soon" on a loaded machine (deadlines here are 1 s)
PARSERS = ["httptools", "h11"]

SPEC = """
mcpgen: 1
package: guard_mcp
server: {name: guard, version: 1.0.0, implementation: "guard_impl:Impl"}
tools:
  - name: echo
    parameters: [{name: text, type: string}]
  - name: chatty
    description: Sends n progress notifications of about 1 KiB each, then says so in a file.
    parameters: [{name: n, type: integer}]
    callback: positional
    returns: integer
"""

IMPL = """
import os
from pathlib import Path
from guard_mcp import GuardServer

SIGNALS = Path(os.environ["GUARD_SIGNALS"])


class Impl(GuardServer):
    def echo(self, text: str) -> str:
        return text

    def chatty(self, n: int, ctx) -> int:
        for step in range(n):
            ctx.report_progress(step + 1, n, "x" * 1000)
        (SIGNALS / "sent").write_text(str(n))
        return n
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("http_guard")
    gen = build_package(SPEC, root, "guard_mcp")
    impl_dir = root / "impl"
    impl_dir.mkdir()
    (impl_dir / "guard_impl.py").write_text(textwrap.dedent(IMPL))
    return gen, impl_dir


@pytest.fixture
def signals(tmp_path: Path) -> Path:
    path = tmp_path / "signals"
    path.mkdir()
    return path


def serve(package: tuple[Path, Path], signals: Path, *extra: str) -> Any:
    gen, impl_dir = package
    return http_server(
        "guard_mcp",
        *extra,
        pythonpath=[gen, impl_dir],
        cwd=impl_dir,
        log_dir=signals,
        env={"GUARD_SIGNALS": str(signals)},
    )


def request(server: HttpServer, message: dict[str, Any], **headers: str) -> bytes:
    """A POST of ``message`` as raw bytes (Content-Length framing)."""
    body = json.dumps(message).encode()
    lines = {
        "Host": f"127.0.0.1:{server.port}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "Content-Length": str(len(body)),
        **headers,
    }
    head = "POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in lines.items())
    return head.encode() + b"\r\n" + body


def ping(server: HttpServer, timeout: float = 5) -> int:
    """The status of a ping on a fresh connection (0: refused or reset)."""
    try:
        return httpx2.post(
            server.url,
            content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
            headers={"content-type": "application/json", "accept": "application/json"},
            timeout=timeout,
        ).status_code
    except httpx2.HTTPError:
        return 0


def served_again_within(server: HttpServer, seconds: float) -> bool:
    """Whether a fresh client gets 200 (not 503) before ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ping(server) == 200:
            return True
        time.sleep(0.2)
    return False


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset ends it too)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before {marker!r}: {data!r}"
        data += chunk
    return data


def connect(server: HttpServer, receive_buffer: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:  # before connecting, so the window stays small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(SLACK)
    sock.connect((server.host, server.port))
    return sock


# -- a request answered before its body ---------------------------------------------------


@pytest.mark.parametrize("parser", PARSERS)
def test_a_connection_answered_before_its_body_still_has_a_deadline(
    package: tuple[Path, Path], signals: Path, parser: str
) -> None:
    """421 for a foreign Host goes out before the body is read; the body then arrives
    and the client falls silent. Both connections are closed once the next head is
    overdue, so the cap (2) frees up for a fresh client."""
    extra = ["--max-connections", "2", "--header-timeout", "1", "--body-timeout", "1"]
    with serve(package, signals, *extra, "--http-parser", parser) as server:
        message = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        raw = request(server, message, Host="evil.example")
        head, body = raw.split(b"\r\n\r\n", 1)
        held = [connect(server) for _ in range(2)]
        try:
            for sock in held:
                sock.sendall(head + b"\r\n\r\n")
                assert read_until(sock, b"Invalid Host header").startswith(b"HTTP/1.1 421 ")
                sock.sendall(body)  # the announced body, after the answer; then silence
            assert served_again_within(server, SLACK), "the early-answered connections stayed"
            for sock in held:
                assert read_all(sock).startswith(b"HTTP/1.1 408 ")  # the next head never came
        finally:
            for sock in held:
                sock.close()


# -- a client that does not read -----------------------------------------------------------


@pytest.mark.parametrize("parser", PARSERS)
def test_a_client_that_never_reads_its_answer_is_cut_off(
    package: tuple[Path, Path], signals: Path, parser: str
) -> None:
    """Two clients ask for an 8 MB echo and never read: the answer cannot leave the
    server, which aborts both connections after --write-timeout (1 s), so the cap
    (2) frees up; each got less than its answer."""
    text = "y" * 8_000_000
    extra = ["--max-connections", "2", "--write-timeout", "1"]
    with serve(package, signals, *extra, "--http-parser", parser) as server:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}},
        }
        held = [connect(server, receive_buffer=4096) for _ in range(2)]
        try:
            for sock in held:
                sock.sendall(request(server, message))
            assert served_again_within(server, SLACK), "clients that never read kept the cap"
            for sock in held:
                assert len(read_all(sock)) < len(text)  # aborted, not delivered
        finally:
            for sock in held:
                sock.close()


def test_sse_notifications_for_a_slow_reader_are_bounded(
    package: tuple[Path, Path], signals: Path
) -> None:
    """20,000 progress notifications of 1 KiB (20 MB, more than any socket buffer)
    to a client that reads nothing until the handler is done: the server keeps a
    bounded queue and drops the rest; the result still arrives, last."""
    n = 20_000
    with serve(package, signals) as server, connect(server, receive_buffer=4096) as sock:
        message = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "chatty", "arguments": {"n": n}, "_meta": {"progressToken": "p"}},
        }
        sock.sendall(request(server, message, Connection="close"))
        deadline = time.monotonic() + 60
        while not (signals / "sent").exists():
            assert time.monotonic() < deadline, "the handler never finished"
            time.sleep(0.05)
        stream = read_all(sock)
    events = [line[5:].strip() for line in stream.split(b"\n") if line.startswith(b"data:")]
    progress = [e for e in events if b"notifications/progress" in e]
    assert json.loads(events[-1])["result"]["content"] == [{"type": "text", "text": str(n)}]
    assert 0 < len(progress) < n // 2, len(progress)


# -- request ids ---------------------------------------------------------------------------


def test_a_request_id_longer_than_the_limit_is_refused(
    package: tuple[Path, Path], signals: Path
) -> None:
    """An id of 4096 characters (``MAX_REQUEST_ID_CHARS``) is echoed; a longer one is not."""
    with serve(package, signals) as server:
        for request_id, status in (("i" * 4096, 200), ("i" * 1_000_000, 400)):
            response = httpx2.post(
                server.url,
                json={"jsonrpc": "2.0", "id": request_id, "method": "ping"},
                headers={"accept": "application/json", "mcp-protocol-version": VERSION},
                timeout=SLACK,
            )
            answer = response.json()
            assert response.status_code == status, answer
            if status == 200:
                assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {}}
            else:
                assert answer["id"] is None and answer["error"]["code"] == -32600
                assert len(response.content) < 1000  # the id is not echoed


# -- request smuggling ---------------------------------------------------------------------


@pytest.mark.parametrize("parser", PARSERS)
def test_a_request_framed_twice_is_refused_and_closed(
    package: tuple[Path, Path], signals: Path, parser: str
) -> None:
    """Content-Length counts a second request that the chunked framing leaves over: a
    front end framing by Content-Length sees one request, the server must not see two."""
    with serve(package, signals, "--http-parser", parser) as server, connect(server) as sock:
        smuggled = request(server, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        body = b"0\r\n\r\n" + smuggled
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json\r\n"
            f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode()
        sock.sendall(head + body)
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1 and b'"result"' not in answer, answer
