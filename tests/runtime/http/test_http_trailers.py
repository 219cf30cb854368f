"""Chunked request trailers on the HTTP server, on both parsers: they are bounded
like a request head (httptools would take any amount), and they are never request
headers, so the identity an authenticating proxy vouches for in the head
(``--identity-header``) cannot be forged in a trailer, also through a real proxy
(HAProxy, which strips the header from the head but forwards trailers).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_http_tasks
from fixtures.http_server import HttpServer, free_port, http_server
from test_http_tasks import rpc

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")

HEADER = "X-Mcp-User"  # the identity header the proxy in front sets (here: deletes)
ALICE = {HEADER: "alice"}
PARSERS = ["httptools", "h11"]
SLACK = 20.0

package = test_http_tasks.package  # the fixture: the generated package with task tools


@pytest.fixture(params=PARSERS)
def proxied(package: tuple[Path, Path], request: pytest.FixtureRequest) -> Iterator[HttpServer]:
    gen, impl = package
    with http_server(
        "httptask_mcp",
        "--identity-header",
        HEADER,
        "--body-timeout",
        "3",
        "--http-parser",
        request.param,
        pythonpath=[gen, impl],
        cwd=impl,
        log_dir=impl.parent,
    ) as server:
        yield server


def chunked(port: int, message: dict[str, Any], trailers: bytes = b"") -> bytes:
    """A POST of ``message`` as one chunk, then ``trailers`` (header lines)."""
    body = json.dumps(message).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json\r\n"
        "mcp-protocol-version: 2025-11-25\r\nConnection: close\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    return head + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n" + trailers + b"\r\n"


def exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=SLACK) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def json_body(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), answer[:300]
    result: dict[str, Any] = json.loads(body)
    return result


def unknown(reply: dict[str, Any], task_id: str) -> bool:
    return reply.get("error") == {
        "code": -32602,
        "message": f"Invalid params: unknown task {task_id!r}",
    }


def forged_get(port: int, task_id: str) -> dict[str, Any]:
    """``tasks/get`` of ``task_id`` with no identity in the head and Alice's in a trailer."""
    message = {"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": {"taskId": task_id}}
    return json_body(exchange(port, chunked(port, message, f"{HEADER}: alice\r\n".encode())))


def test_an_identity_in_a_trailer_is_no_identity(proxied: HttpServer) -> None:
    task_id = rpc(
        proxied.url,
        1,
        "tools/call",
        {"name": "hold", "arguments": {"seconds": 30}, "task": {}},
        headers=ALICE,
    )["result"]["task"]["taskId"]
    try:
        assert unknown(forged_get(proxied.port, task_id), task_id)
        got = rpc(proxied.url, 2, "tasks/get", {"taskId": task_id}, headers=ALICE)
        assert got["result"]["status"] == "working"  # Alice herself, in the head: hers
    finally:
        rpc(proxied.url, 3, "tasks/cancel", {"taskId": task_id}, headers=ALICE)


def test_trailers_are_bounded_like_a_head(proxied: HttpServer) -> None:
    """A small chunked body, then 4 MiB of trailer lines: the server stops reading
    once they pass the 16 KiB head limit (431, or 400 from h11) and keeps serving."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    start = chunked(proxied.port, message).removesuffix(b"\r\n")  # up to the trailers
    line = b"X-Pad: " + b"y" * 1017 + b"\r\n"  # 1 KiB
    cut = False
    with socket.create_connection(("127.0.0.1", proxied.port), timeout=SLACK) as sock:
        sock.sendall(start)
        try:
            for _ in range(64):  # 64 × 64 KiB
                sock.sendall(line * 64)
        except OSError:
            cut = True  # the server closed the connection under us
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    assert cut or answer.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")), answer[:200]
    assert rpc(proxied.url, 2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}


# -- through a real proxy --------------------------------------------------------------------

HAPROXY = shutil.which("haproxy") or next(
    (path for path in ("/usr/sbin/haproxy",) if os.access(path, os.X_OK)), None
)

HAPROXY_CONFIG = """
global
    maxconn 64
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend front
    bind 127.0.0.1:{front}
    # the authenticating proxy's part: no client chooses its identity
    http-request del-header {header}
    default_backend app
backend app
    server app 127.0.0.1:{port}
"""


@contextlib.contextmanager
def haproxy(tmp_path: Path, port: int) -> Iterator[int]:
    assert HAPROXY is not None
    front = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(HAPROXY_CONFIG.format(front=front, port=port, header=HEADER))
    log = (tmp_path / "haproxy.log").open("wb")
    proc = subprocess.Popen(
        [HAPROXY, "-db", "-f", str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + SLACK
        while True:
            assert proc.poll() is None, (tmp_path / "haproxy.log").read_text()
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", front), 1):
                break
            assert time.monotonic() < deadline, "haproxy never listened"
            time.sleep(0.05)
        yield front
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=SLACK)
        log.close()


@pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed (apt-get install haproxy)")
def test_an_identity_in_a_trailer_is_no_identity_through_haproxy(
    proxied: HttpServer, tmp_path: Path
) -> None:
    """HAProxy deletes the identity header from the head and forwards the trailers:
    the server must take no identity from them."""
    task_id = rpc(
        proxied.url,
        1,
        "tools/call",
        {"name": "hold", "arguments": {"seconds": 30}, "task": {}},
        headers=ALICE,
    )["result"]["task"]["taskId"]
    try:
        with haproxy(tmp_path, proxied.port) as front:
            message = {"jsonrpc": "2.0", "id": 4, "method": "tasks/get"}
            message["params"] = {"taskId": task_id}
            in_head = exchange(
                front,
                chunked(front, message).replace(
                    b"\r\n\r\n", b"\r\n" + f"{HEADER}: alice\r\n\r\n".encode(), 1
                ),
            )
            assert unknown(json_body(in_head), task_id)  # the proxy strips it from the head
            assert unknown(forged_get(front, task_id), task_id)
    finally:
        rpc(proxied.url, 3, "tasks/cancel", {"taskId": task_id}, headers=ALICE)
