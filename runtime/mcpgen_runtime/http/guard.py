"""What the HTTP server refuses before a request reaches the application.

- Slow clients (slowloris): uvicorn bounds only the idle time *between*
  requests (``timeout_keep_alive``, 5 s) and the size of a request head (h11:
  16 KiB); a client that opens a connection and then sends a head or a body a
  byte at a time held it forever. ``GuardedH11Protocol`` gives every request a
  deadline for its complete head (``HEADER_TIMEOUT_SECONDS``, counted from the
  connection's opening or from the first byte after a keep-alive pause) and then
  for its complete body (``BODY_TIMEOUT_SECONDS``). These are whole deadlines,
  not idle timeouts: trickling one byte at a time extends nothing. A late
  request gets ``408 Request Timeout`` and the connection is closed.
- Clients that do not read (``WRITE_TIMEOUT_SECONDS``): uvicorn waits for a full
  send buffer to drain with no time limit, and a closed connection still holds
  its unsent bytes until they are sent. The guard arms one timer when the
  transport pauses writing (its buffer is over the high-water mark) and cancels
  it when writing resumes, and one when a connection closes with bytes unsent;
  at the deadline the transport is aborted. No timer is armed while answers go
  out at once, so the fast path pays nothing.
- Too many connections: beyond ``MAX_CONNECTIONS`` open at once (per process)
  a new one gets ``503 Service Unavailable`` at once and is closed, before a
  byte of it is read. (uvicorn's ``limit_concurrency`` answers 503 only once a
  complete head has arrived, which a slow client never sends.)
- Request smuggling (h11): a request with both ``Content-Length`` and
  ``Transfer-Encoding`` gets 400 and the connection is closed, as llhttp
  (httptools) does; otherwise the part Content-Length counts would be read as a
  request of its own behind a front end that frames by Content-Length.
- Streams that never end: a stateless server has no session to push messages
  on; the application (``http.app``) answers ``GET`` and ``DELETE`` with 405
  (``Allow: POST``) instead of opening a stream nobody would close.
- DNS rebinding: ``RebindingRules`` decides, per request, from the address the
  request reached (the socket's local address, ``scope["server"]``), never from
  how ``--host`` was spelled. A loopback address (all of 127.0.0.0/8, ``::1``)
  accepts as ``Host`` that address and port and the loopback names with any
  port, and as ``Origin`` the same names; any other address accepts any
  ``Host`` (unless ``--allowed-host`` lists them) and, as ``Origin``, only its
  own address or what ``--allowed-origin`` lists. Entries given with
  ``--allowed-host`` / ``--allowed-origin`` are accepted on every address.

uvicorn's protocol internals are read only here and in ``guard_fast`` (and its
SIGTERM handling is relied on by ``drain``), and every one of them is named in
``UVICORN_INTERNALS``: a test checks that the guards use no
other and that the installed uvicorn has them all, and ``UVICORN_VERIFIED`` lists
the minor versions the guard tests were run against. Imported only when HTTP is
served (it needs uvicorn and h11). The limits apply to the server ``python -m <package> --transport http`` runs; an
application served by another ASGI server gets that server's own limits (the
Host/Origin rules belong to the application and apply under any server).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..protocol.addresses import is_loopback, url_host

# The defaults live with the options, in the stdlib-only module.
from .config import (
    BODY_TIMEOUT_SECONDS,
    HEADER_TIMEOUT_SECONDS,
    MAX_CONNECTIONS,
    WRITE_TIMEOUT_SECONDS,
)

__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "HEADER_TIMEOUT_SECONDS",
    "MAX_CONNECTIONS",
    "WRITE_TIMEOUT_SECONDS",
    "AddressRules",
    "ConnectionLimits",
    "Deadlines",
    "GuardedH11Protocol",
    "RebindingRules",
    "origin_note",
    "set_limits",
]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # loopback names allowed with any port

# What the guards rely on of uvicorn (not its public API), by class: the attributes
# and methods the guarded protocols read, or extend through ``super()``, and those of
# a request's ``RequestResponseCycle`` (``self.cycle``).
UVICORN_INTERNALS: dict[str, tuple[str, ...]] = {
    "H11Protocol": (
        "conn", "connections", "cycle", "logger", "loop", "transport",
        "connection_lost", "connection_made", "data_received", "on_response_complete",
        "pause_writing", "resume_writing", "timeout_keep_alive_handler",
    ),
    "HttpToolsProtocol": (
        "connections", "cycle", "headers", "logger", "loop", "transport",
        "connection_lost", "connection_made", "data_received", "on_headers_complete",
        "on_message_begin", "on_message_complete", "on_response_complete",
        "pause_writing", "resume_writing", "timeout_keep_alive_handler",
    ),
    "RequestResponseCycle": ("body", "response_complete", "response_started"),
    # http.drain and http.server: uvicorn's Server puts its bound handle_exit on SIGTERM
    # (capture_signals, around the lifespan's start) and, once shut down, raises the
    # signal again into the handler it found
    "Server": ("capture_signals", "handle_exit"),
}  # fmt: skip
# The uvicorn minor versions (of the supported >=0.30,<1) that the guard tests
# (tests/runtime/http/test_http_guard.py, test_http_hardening.py, test_http_trailers.py) and
# tests/runtime/http/test_uvicorn_internals.py passed against, run by hand: each release
# installed (pip install --no-deps) into a copy of the development environment,
# the servers those tests start included. A new minor is added once they pass on it.
UVICORN_VERIFIED: tuple[str, ...] = ("0.30", "0.35", "0.36", "0.40", "0.45", "0.50", "0.51", "0.55")


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = HEADER_TIMEOUT_SECONDS
    body_timeout: float = BODY_TIMEOUT_SECONDS
    write_timeout: float = WRITE_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS


class Deadlines:
    """The deadline and cap logic both guarded protocols share (a mixin over a
    uvicorn HTTP protocol: ``loop``, ``transport``, ``connections``, ``cycle``,
    ``logger``, and the methods it extends)."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    connections: set[Any]
    cycle: Any
    logger: Any

    _deadline: asyncio.TimerHandle | None = None
    _awaiting: str | None = None  # "head" or "body": what the deadline is for
    _write_deadline: asyncio.TimerHandle | None = None  # the client owes us a read

    def _over_the_cap(self) -> bool:
        """A new connection beyond the cap is refused at once (503)."""
        if len(self.connections) > self.limits.max_connections:
            self._refuse(503, "Service Unavailable", "too many connections; retry later")
            return True
        return False

    def _await(self, part: str) -> None:
        if self._awaiting == part or self.transport.is_closing():
            return  # a running deadline is never extended
        self._clear()
        limits = self.limits
        seconds = limits.header_timeout if part == "head" else limits.body_timeout
        self._awaiting = part
        self._deadline = self.loop.call_later(seconds, self._expired, part, seconds)

    def _clear(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._awaiting = None

    def _expired(self, part: str, seconds: float) -> None:
        self._deadline = None
        self._awaiting = None
        if self.transport.is_closing():
            return
        self.logger.debug("closing a connection: the request %s took over %g s", part, seconds)
        self._refuse(408, "Request Timeout", f"the request {part} took longer than {seconds:g} s")

    def _refuse(self, status: int, reason: str, detail: str) -> None:
        """Answer with ``status`` and close, whatever the parser's state (nothing else
        will be read); only close when an answer is already under way."""
        cycle = self.cycle
        if cycle is None or not cycle.response_started or cycle.response_complete:
            body = detail.encode() + b"\n"
            head = (
                f"HTTP/1.1 {status} {reason}\r\n"
                "content-type: text/plain; charset=utf-8\r\n"
                f"content-length: {len(body)}\r\n"
                "connection: close\r\n\r\n"
            )
            self.transport.write(head.encode() + body)
        self.transport.close()
        self._closed_with_unsent()

    # -- writing: a client that does not read ------------------------------------------

    def pause_writing(self) -> None:
        super().pause_writing()  # type: ignore[misc]
        self._watch_writes()

    def resume_writing(self) -> None:
        super().resume_writing()  # type: ignore[misc]
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None

    def timeout_keep_alive_handler(self) -> None:
        super().timeout_keep_alive_handler()  # type: ignore[misc]
        self._closed_with_unsent()

    def _closed_with_unsent(self) -> None:
        """A closing transport holds its connection until its buffer is sent: bound that."""
        if self.transport.is_closing() and self.transport.get_write_buffer_size():
            self._watch_writes()

    def _watch_writes(self) -> None:
        if self._write_deadline is None:
            seconds = self.limits.write_timeout
            self._write_deadline = self.loop.call_later(seconds, self._write_stalled, seconds)

    def _write_stalled(self, seconds: float) -> None:
        self._write_deadline = None
        if self.transport.get_write_buffer_size():
            self.logger.debug("aborting a connection: its client took nothing for %g s", seconds)
            self.transport.abort()

    def _stop_watching(self) -> None:
        """The connection is gone: no timer of it may fire."""
        self._clear()
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None


def set_limits(limits: ConnectionLimits) -> None:
    """This process's connection limits, for both guarded protocols (``serve_http``,
    or each ``--workers`` process, sets them before the server accepts connections)."""
    Deadlines.limits = limits


class _StrictConnection(h11.Connection):
    """h11's server connection refusing a request framed twice (``Content-Length`` and
    ``Transfer-Encoding``): uvicorn answers the ``RemoteProtocolError`` with 400 and
    closes the connection."""

    def next_event(self) -> Any:
        event = super().next_event()
        if type(event) is h11.Request:
            names = {name for name, _ in event.headers}
            if b"content-length" in names and b"transfer-encoding" in names:
                raise h11.RemoteProtocolError("both Content-Length and Transfer-Encoding")
        return event


class GuardedH11Protocol(Deadlines, H11Protocol):
    """uvicorn's h11 protocol (pure Python) with request deadlines and a connection cap.
    h11 bounds a request head to 16 KiB itself and never passes trailers on.

    ``limits`` is per process: ``serve_http`` (or each ``--workers`` process)
    sets it before the server accepts connections.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.conn.__class__ = _StrictConnection  # the same connection, framing checked
        super().connection_made(transport)
        if not self._over_the_cap():
            self._await("head")  # a connection that never sends a byte is a slow head too

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._closed_with_unsent()
        if self.conn.their_state is h11.IDLE:
            self._clear()  # between requests uvicorn's keep-alive timeout applies
        else:
            self._follow()  # a pipelined request is under way

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_watching()
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Arm the deadline for what the client still owes, if anything."""
        state = self.conn.their_state
        if state is h11.IDLE:
            self._await("head")
        elif state is h11.SEND_BODY:
            self._await("body")
        else:
            self._clear()  # the request is complete (or the connection is over)


class AddressRules:
    """The ``Host`` and ``Origin`` values one local address accepts. ``hosts`` None:
    any ``Host``. An entry ``name:*`` allows ``name`` with any port; a request
    without ``Origin`` (not from a browser page) passes; one without ``Host``
    passes only where any ``Host`` does."""

    __slots__ = ("_hosts", "hosts", "origins")

    def __init__(self, hosts: list[str] | None, origins: list[str]) -> None:
        self.hosts = hosts
        self.origins = origins
        self._hosts: dict[bytes, bool] = {}

    def allows_host(self, host: bytes | None) -> bool:
        if self.hosts is None:
            return True
        if host is None:
            return False
        known = self._hosts.get(host)
        if known is None:
            known = _allowed(host.decode("latin-1"), self.hosts)
            if len(self._hosts) < 256:  # a handful of real values; bounded against made-up ones
                self._hosts[host] = known
        return known

    def allows_origin(self, origin: bytes | None) -> bool:
        return origin is None or _allowed(origin.decode("latin-1"), self.origins)


class RebindingRules:
    """DNS-rebinding checks decided per request from the local address it reached
    (``scope["server"]``) and the operator's ``allowed_hosts`` / ``allowed_origins``
    (see the module docstring)."""

    def __init__(self, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()):
        self.allowed_hosts = list(allowed_hosts)
        self.allowed_origins = list(allowed_origins)
        self._by_address: dict[Any, AddressRules] = {}

    def at(self, server: Any) -> AddressRules:
        """The rules for a request that reached ``server`` (``(host, port)``, or None)."""
        rules = self._by_address.get(server)
        if rules is None:
            rules = self._build(server)
            if len(self._by_address) < 64:  # the machine's own addresses: a handful
                self._by_address[server] = rules
        return rules

    def _build(self, server: Any) -> AddressRules:
        configured_hosts, configured_origins = self.allowed_hosts, self.allowed_origins
        address, port = server if isinstance(server, tuple) and len(server) == 2 else ("", None)
        if not isinstance(address, str) or not isinstance(port, int):
            return AddressRules(configured_hosts or None, configured_origins)
        literal, loopback = url_host(address)
        own = [f"{literal}:{port}"] + ([literal] if port == 80 else [])
        if not loopback:  # reachable from other machines: names are the operator's
            hosts = [*own, *configured_hosts] if configured_hosts else None
            origins = [f"http://{name}" for name in own]
        else:
            hosts = [*own, *(f"{name}:*" for name in _LOOPBACK_NAMES), *configured_hosts]
            origins = [f"http://{name}" for name in hosts if name not in configured_hosts]
        return AddressRules(
            None if hosts is None else list(dict.fromkeys(hosts)),
            list(dict.fromkeys([*origins, *configured_origins])),
        )


def _allowed(value: str, allowed: list[str]) -> bool:
    if value in allowed:
        return True
    return any(
        entry.endswith(":*") and value.startswith(entry[:-1]) and value[len(entry) - 1 :].isdigit()
        for entry in allowed
    )


def origin_note(host: str, port: int, allowed_origins: Iterable[str]) -> str | None:
    """What to say at start-up when ``host`` may be reached from other machines and
    no ``--allowed-origin`` is given: browser pages are refused, and how to allow one."""
    if list(allowed_origins) or _only_loopback(host):
        return None
    return (
        f"{host} may be reached from other machines: a request carrying an Origin header "
        f"other than the address it reached (http://ADDRESS:{port}) gets 403; allow a "
        "browser page with --allowed-origin https://app.example.com (and, to check the "
        "Host header too, --allowed-host mcp.example.com:443)"
    )


def _only_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (resolved, not spelled)."""
    if is_loopback(host):
        return True
    try:
        infos = socket.getaddrinfo(host.strip("[]"), None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(url_host(str(a))[1] for a in addresses)
