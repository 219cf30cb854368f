"""``--transport http`` against hostile clients: the attacks of the security
issue on the HTTP server of a generated package, each run against a real
subprocess on a loopback address.

- Argument checking runs off the event loop: while one request's check is slow
  (held by a test hook, or really slow on a 9 MB argument), pings and other
  calls from other connections are answered.
- Host/Origin checks (DNS rebinding) on every loopback address, not only on the
  three names the SDK knows: ``--host 127.0.0.2`` refuses a foreign ``Host``;
  decided by the address a request reached (``--host 127.1`` or ``0.0.0.0``
  reached on 127.0.0.1 are checked as loopback), and on any other address a
  foreign ``Origin`` is refused unless ``--allowed-origin`` lists it.
- Slow clients (slowloris): a request head or body that does not arrive in
  time gets 408 and the connection is closed; connections beyond the cap get
  503 at once; a normal client is served meanwhile.
"""

from __future__ import annotations

import json
import socket
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer, http_server
from helpers import build_package

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
import httpx2

VERSION = "2025-11-25"
SLACK = 20.0  # seconds a "quick" answer may take on a loaded machine (a hang guard, not a measure)

SPEC = """
mcpgen: 1
package: harden_mcp
server: {name: harden, version: 1.0.0, implementation: "harden_impl:Impl"}
tools:
  - name: echo
    parameters: [{name: text, type: string}]
  - name: gated
    description: Its argument check waits for the test's signal (see harden_impl).
    parameters: [{name: n, type: integer}]
    returns: integer
    async: true
  - name: rows
    description: A large argument whose check is real work (no regular expression).
    parameters:
      - name: rows
        type: array
        uniqueItems: true
        items:
          type: object
          properties:
            id: {type: integer, minimum: 0}
            name: {type: string, minLength: 1, maxLength: 50}
            tags: {type: array, items: {type: string}}
            score: {type: number}
            kind: {anyOf: [{const: a}, {const: b}, {const: c}, {type: string}]}
          required: [id, name]
          additionalProperties: false
    returns: integer
    async: true
"""

# The implementation wraps the runtime's argument check with a test hook: it
# writes where it runs (on the event loop or not) to $HARDEN_SIGNALS/checking-<tool>,
# and for `gated` waits (at most 20 s) for $HARDEN_SIGNALS/release.
IMPL = """
import asyncio, os, time
from pathlib import Path
from harden_mcp import HardenServer
from mcpgen_runtime.server import tools as _tools

SIGNALS = Path(os.environ["HARDEN_SIGNALS"])
_check = _tools.ToolRuntime.check_arguments


def _where() -> str:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return "off the event loop"
    return "on the event loop"


def hooked_check(self, arguments):
    if self.name in ("gated", "rows"):
        (SIGNALS / f"checking-{self.name}").write_text(_where())
    if self.name == "gated":
        deadline = time.monotonic() + 20
        while not (SIGNALS / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return _check(self, arguments)


_tools.ToolRuntime.check_arguments = hooked_check


class Impl(HardenServer):
    def echo(self, text: str) -> str:
        return text

    async def gated(self, n: int) -> int:
        return n

    async def rows(self, rows: list) -> int:
        return len(rows)
"""


@pytest.fixture(scope="module")
def harden(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("http_harden")
    gen = build_package(SPEC, root, "harden_mcp")
    impl_dir = root / "impl"
    impl_dir.mkdir()
    (impl_dir / "harden_impl.py").write_text(textwrap.dedent(IMPL))
    return gen, impl_dir


@pytest.fixture
def signals(tmp_path: Path) -> Path:
    path = tmp_path / "signals"
    path.mkdir()
    return path


def serve(harden: tuple[Path, Path], signals: Path, *extra: str, host: str = "127.0.0.1") -> Any:
    gen, impl_dir = harden
    return http_server(
        "harden_mcp",
        *extra,
        pythonpath=[gen, impl_dir],
        cwd=impl_dir,
        log_dir=signals,
        host=host,
        env={"HARDEN_SIGNALS": str(signals)},
    )


def rpc(
    server: HttpServer,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    request_id: int = 1,
    timeout: float = SLACK,
    **headers: str,
) -> tuple[int, Any]:
    """One raw JSON-RPC POST on a connection of its own; (status, body or text)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    response = httpx2.post(
        server.url,
        content=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": VERSION,
            **headers,
        },
        timeout=timeout,
    )
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
    try:
        return response.status_code, json.loads(text)
    except ValueError:
        return response.status_code, text


def wait_for(path: Path, what: str) -> str:
    deadline = time.monotonic() + SLACK
    while not path.exists():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.01)
    time.sleep(0.05)  # let the writer finish the few bytes
    return path.read_text()


# -- finding 4: nothing slow on the event loop ------------------------------------------


def test_a_slow_argument_check_never_delays_other_requests(
    harden: tuple[Path, Path], signals: Path
) -> None:
    """While one call's argument check is held, a ping and another call from other
    connections are answered; the held call answers once released."""
    with serve(harden, signals) as server, ThreadPoolExecutor(1) as pool:
        held: Future[tuple[int, Any]] = pool.submit(
            rpc, server, "tools/call", {"name": "gated", "arguments": {"n": 7}}
        )
        where = wait_for(signals / "checking-gated", "the argument check")
        assert where == "off the event loop"
        assert rpc(server, "ping", request_id=2) == (200, {"jsonrpc": "2.0", "id": 2, "result": {}})
        status, echoed = rpc(
            server, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, request_id=3
        )
        assert status == 200 and echoed["result"]["content"][0]["text"] == "hi"
        assert not held.done()  # still in its check: answered only after the others
        (signals / "release").touch()
        status, answer = held.result(timeout=SLACK)
    assert status == 200 and answer["result"]["content"][0]["text"] == "7"


def test_a_really_slow_argument_check_runs_beside_pings(
    harden: tuple[Path, Path], signals: Path
) -> None:
    """No hook holding it: 100,000 rows (9 MB) take the validator about two seconds;
    a ping sent once the check has begun is answered before the call is."""
    rows = [
        {"id": i, "name": f"n{i}", "tags": ["x", "y", "z"], "score": i * 0.5, "kind": "zz"}
        for i in range(100_000)
    ]
    with serve(harden, signals) as server, ThreadPoolExecutor(1) as pool:
        slow = pool.submit(
            rpc, server, "tools/call", {"name": "rows", "arguments": {"rows": rows}}, timeout=120
        )
        where = wait_for(signals / "checking-rows", "the argument check")
        assert rpc(server, "ping", request_id=2)[0] == 200
        pinged_first = not slow.done()
        status, answer = slow.result(timeout=120)
    assert status == 200 and answer["result"]["content"][0]["text"] == "100000"
    assert pinged_first, "the ping waited for the slow call"
    assert where == "off the event loop"


# -- finding 6: Host/Origin checks on every loopback address ---------------------------------


def test_dns_rebinding_checks_on_any_loopback_address(
    harden: tuple[Path, Path], signals: Path
) -> None:
    with serve(harden, signals, host="127.0.0.2") as server:
        port = server.port
        listed = rpc(server, "tools/list")
        assert listed[0] == 200 and len(listed[1]["result"]["tools"]) == 3
        assert rpc(server, "tools/list", host=f"localhost:{port}")[0] == 200
        # a name an attacker's DNS points at 127.0.0.2: refused like the SDK refuses it
        assert rpc(server, "tools/list", host=f"evil.example:{port}") == (
            421,
            "Invalid Host header",
        )
        assert rpc(server, "tools/list", host="evil.example")[0] == 421
        assert rpc(server, "tools/list", host=f"127.0.0.2:{port + 1}")[0] == 421
        assert rpc(server, "tools/list", origin="http://evil.example") == (
            403,
            "Invalid Origin header",
        )
        assert rpc(server, "tools/list", origin=f"http://127.0.0.2:{port}")[0] == 200


def lan_address() -> str | None:
    """A non-loopback IPv4 address of this machine (the one its default route uses)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if address.startswith("127.") else address


def status_at(url: str, **headers: str) -> int:
    """The status of a tools/list POSTed to ``url`` with ``headers`` (Host among them)."""
    response = httpx2.post(
        url,
        content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        headers={
            "content-type": "application/json",
            "accept": "application/json",
            "mcp-protocol-version": VERSION,
            **headers,
        },
        timeout=SLACK,
    )
    return response.status_code


@pytest.mark.parametrize("host", ["127.1", "0.0.0.0"])
def test_rebinding_checks_follow_the_address_reached_not_the_spelling(
    harden: tuple[Path, Path], signals: Path, host: str
) -> None:
    """``127.1`` and ``0.0.0.0`` both serve 127.0.0.1: a request that reaches it gets
    the loopback checks, however ``--host`` was written."""
    with serve(harden, signals, host=host) as server:
        url, port = f"http://127.0.0.1:{server.port}/mcp", server.port
        assert status_at(url) == 200
        assert status_at(url, host=f"evil.example:{port}") == 421
        assert status_at(url, origin=f"http://evil.example:{port}") == 403
        assert status_at(url, origin=f"http://localhost:{port}") == 200


def test_a_non_loopback_address_refuses_foreign_origins(
    harden: tuple[Path, Path], signals: Path
) -> None:
    """Reached on a LAN address with no allow-list: any Host (the operator's names are
    unknown), but a page's Origin only when it is that address itself; start-up says
    how to allow a page. An --allowed-origin is accepted on every address."""
    lan = lan_address()
    if lan is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with serve(harden, signals, host="0.0.0.0") as server:
        url, port = f"http://{lan}:{server.port}/mcp", server.port
        assert status_at(url) == 200
        assert status_at(url, host=f"mcp.example.com:{port}") == 200
        assert status_at(url, origin=f"http://evil.example:{port}") == 403
        assert status_at(url, origin="https://app.example.com") == 403
        assert status_at(url, origin=f"http://{lan}:{port}") == 200
        assert "--allowed-origin" in server.output
    allow = ("--allowed-origin", "https://app.example.com", "--allowed-host", "mcp.example.com:*")
    with serve(harden, signals, *allow, host="0.0.0.0") as server:
        port = server.port
        for url in (f"http://{lan}:{port}/mcp", f"http://127.0.0.1:{port}/mcp"):
            assert status_at(url, origin="https://app.example.com") == 200
            assert status_at(url, host=f"mcp.example.com:{port}") == 200
        assert status_at(f"http://{lan}:{port}/mcp", host=f"evil.example:{port}") == 421
        assert "--allowed-origin" not in server.output


def test_which_addresses_get_the_loopback_rules() -> None:
    # which hosts are loopback: tests/runtime/protocol/test_addresses.py
    from mcpgen_runtime.http.guard import RebindingRules

    rules = RebindingRules()
    settings = rules.at(("127.0.0.2", 8123))
    assert settings.hosts == ["127.0.0.2:8123", "127.0.0.1:*", "localhost:*", "[::1]:*"]
    assert "http://127.0.0.2:8123" in settings.origins
    mapped = rules.at(("::ffff:127.0.0.1", 8123))  # a dual-stack socket reached on 127.0.0.1
    assert mapped.hosts is not None and mapped.hosts[0] == "127.0.0.1:8123"
    ipv6 = rules.at(("::1", 80))
    assert ipv6.hosts is not None and ipv6.hosts[:2] == ["[::1]:80", "[::1]"]  # port 80 implied
    lan = rules.at(("10.0.0.5", 8000))  # anyone's name for this address; no foreign page
    assert lan.hosts is None and lan.origins == ["http://10.0.0.5:8000"]
    assert lan.allows_host(b"mcp.example.com") and lan.allows_origin(None)
    assert not lan.allows_origin(b"http://evil.example:8000")
    assert rules.at(("::ffff:10.0.0.5", 8000)).origins == ["http://10.0.0.5:8000"]
    assert rules.at(None).hosts is None and rules.at(None).origins == []  # no address known
    listed = RebindingRules(["mcp.example.com:*"], ["https://app.example.com"])
    assert listed.at(("10.0.0.5", 8000)).allows_origin(b"https://app.example.com")
    assert not listed.at(("10.0.0.5", 8000)).allows_host(b"evil.example:8000")
    assert listed.at(("127.0.0.1", 8000)).allows_origin(b"https://app.example.com")


# -- finding 6: slow clients ------------------------------------------------------------------


def _raw(server: HttpServer) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=SLACK)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


# both guarded protocols: httptools (C, the default when installed) and h11 (pure Python)
PARSERS = ["httptools", "h11"]


@pytest.fixture(params=PARSERS)
def slow_server(
    harden: tuple[Path, Path], signals: Path, request: pytest.FixtureRequest
) -> Iterator[HttpServer]:
    with serve(
        harden,
        signals,
        "--header-timeout",
        "1",
        "--body-timeout",
        "1",
        "--http-parser",
        request.param,
    ) as server:
        yield server


def test_a_partial_request_head_is_timed_out(slow_server: HttpServer) -> None:
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{slow_server.port}\r\n".encode()
    idle, partial = _raw(slow_server), _raw(slow_server)
    with idle, partial:
        partial.sendall(head)  # …and never the blank line
        assert rpc(slow_server, "ping")[0] == 200  # served meanwhile
        assert _read_all(partial).startswith(b"HTTP/1.1 408 ")
        assert _read_all(idle).startswith(b"HTTP/1.1 408 ")  # never sent a byte


def test_a_partial_request_body_is_timed_out(slow_server: HttpServer) -> None:
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{slow_server.port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        "Content-Length: 1000\r\n\r\n"
    ).encode()
    with _raw(slow_server) as partial:
        partial.sendall(head + b'{"jsonrpc": "2.0", ')
        assert rpc(slow_server, "ping")[0] == 200
        assert _read_all(partial).startswith(b"HTTP/1.1 408 ")


def test_a_trickled_request_head_is_timed_out_as_a_whole(slow_server: HttpServer) -> None:
    """A byte every 0.3 s resets no clock: the whole head is due within the timeout."""
    lines = [b"POST /mcp HTTP/1.1\r\n"] + [f"X-Pad-{i}: y\r\n".encode() for i in range(40)]
    with _raw(slow_server) as sock:
        for line in lines:
            try:
                sock.sendall(line)
            except OSError:
                break  # the server closed it
            time.sleep(0.3)
        else:
            pytest.fail("12 s of trickling and the connection is still open")
        assert _read_all(sock).startswith(b"HTTP/1.1 408 ")


def trickle(sock: socket.socket, data: bytes, seconds: float) -> bool:
    """Send ``data`` a byte every 0.2 s for at most ``seconds``; whether the server
    closed the connection meanwhile."""
    deadline = time.monotonic() + seconds
    for byte in data:
        if time.monotonic() > deadline:
            return False
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return True  # the server closed it
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_trickled_request_body_is_cut_off(slow_server: HttpServer, framing: str) -> None:
    """A body sent a byte at a time resets no clock: ten such clients are all cut
    off within the body timeout (1 s here), and a normal client is served meanwhile."""
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * 200 + b'"}}'
    )
    length = (
        f"Content-Length: {len(body)}"
        if framing == "content-length"
        else "Transfer-Encoding: chunked"
    )
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{slow_server.port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"mcp-protocol-version: {VERSION}\r\n{length}\r\n\r\n"
    ).encode()
    if framing == "chunked":
        body = b"".join(b"1\r\n" + bytes([byte]) + b"\r\n" for byte in body) + b"0\r\n\r\n"
    socks = [_raw(slow_server) for _ in range(10)]
    try:
        for sock in socks:
            sock.sendall(head)
        with ThreadPoolExecutor(10) as pool:
            cut: list[Future[bool]] = [pool.submit(trickle, sock, body, 12) for sock in socks]
            assert rpc(slow_server, "ping")[0] == 200
            assert [future.result() for future in cut] == [True] * 10
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.parametrize("parser", PARSERS)
def test_an_oversized_request_head_is_refused(
    harden: tuple[Path, Path], signals: Path, parser: str
) -> None:
    """A head over 16 KiB is refused (h11's own bound; the guard's for httptools)."""
    with serve(harden, signals, "--http-parser", parser) as server, _raw(server) as sock:
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n" + "".join(
            f"X-Pad-{i}: {'y' * 60}\r\n" for i in range(400)
        )
        # one write (28 KiB, one loopback segment): had the server refused while bytes were
        # still arriving, its close with unread input would be a reset that can overtake
        # the 431 in the client's receive queue
        try:
            sock.sendall(head.encode())
        except OSError:
            pass  # the server closed it mid-head
        answer = _read_all(sock)
        assert answer.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")), answer[:80]
        assert rpc(server, "ping")[0] == 200


@pytest.mark.parametrize("parser", PARSERS)
def test_connections_beyond_the_cap_get_503(
    harden: tuple[Path, Path], signals: Path, parser: str
) -> None:
    with serve(harden, signals, "--max-connections", "3", "--http-parser", parser) as server:
        held = [_raw(server) for _ in range(3)]
        try:
            for sock in held:
                sock.sendall(b"GET")  # a head begun: these count until they time out
            with _raw(server) as extra:
                assert _read_all(extra).startswith(b"HTTP/1.1 503 ")
        finally:
            for sock in held:
                sock.close()
        deadline = time.monotonic() + SLACK
        while True:  # the server notices the closed connections and serves again
            try:
                if rpc(server, "ping", timeout=5)[0] == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, "never served again after the cap"
            time.sleep(0.1)


def test_the_connection_limits_hold_in_every_worker(
    harden: tuple[Path, Path], signals: Path
) -> None:
    with serve(harden, signals, "--workers", "2", "--header-timeout", "1") as server:
        partial = [_raw(server) for _ in range(6)]  # the kernel spreads them over both
        try:
            for sock in partial:
                sock.sendall(b"POST /mcp HTTP/1.1\r\n")
            assert rpc(server, "ping")[0] == 200
            for sock in partial:
                assert _read_all(sock).startswith(b"HTTP/1.1 408 ")
        finally:
            for sock in partial:
                sock.close()
