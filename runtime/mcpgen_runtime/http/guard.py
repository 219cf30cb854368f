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
- Too many connections: beyond ``MAX_CONNECTIONS`` open at once (per process)
  a new one gets ``503 Service Unavailable`` at once and is closed, before a
  byte of it is read. (uvicorn's ``limit_concurrency`` answers 503 only once a
  complete head has arrived, which a slow client never sends.)
- Streams that never end: a stateless server has no session to push messages
  on; the application (``http.app``) answers ``GET`` and ``DELETE`` with 405
  (``Allow: POST``) instead of opening a stream nobody would close.
- DNS rebinding: ``rebinding_protection`` gives the application its Host/Origin
  checks (``RebindingRules``) for *any* loopback address (all of 127.0.0.0/8,
  ``::1``, ``localhost``).

Imported only when HTTP is served (it needs uvicorn and h11). The limits apply
to the server ``python -m <package> --transport http`` runs; an application
served by another ASGI server gets that server's own limits.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass, field
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

# The defaults live with the options, in the stdlib-only module.
from .config import BODY_TIMEOUT_SECONDS, HEADER_TIMEOUT_SECONDS, MAX_CONNECTIONS

__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "HEADER_TIMEOUT_SECONDS",
    "MAX_CONNECTIONS",
    "ConnectionLimits",
    "GuardedH11Protocol",
    "RebindingRules",
    "is_loopback",
    "rebinding_protection",
]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # loopback names allowed with any port


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = HEADER_TIMEOUT_SECONDS
    body_timeout: float = BODY_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS


class _Deadlines:
    """The deadline and cap logic both guarded protocols share (a mixin over a
    uvicorn HTTP protocol: ``loop``, ``transport``, ``connections``, ``cycle``,
    ``logger``)."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    connections: set[Any]
    cycle: Any
    logger: Any

    _deadline: asyncio.TimerHandle | None = None
    _awaiting: str | None = None  # "head" or "body": what the deadline is for

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
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            self.transport.close()  # an answer is under way: no room for a 408
            return
        self._refuse(408, "Request Timeout", f"the request {part} took longer than {seconds:g} s")

    def _refuse(self, status: int, reason: str, detail: str) -> None:
        """Answer with ``status`` and close, whatever the parser's state (nothing else will be read)."""
        body = detail.encode() + b"\n"
        head = (
            f"HTTP/1.1 {status} {reason}\r\n"
            "content-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\n"
            "connection: close\r\n\r\n"
        )
        self.transport.write(head.encode() + body)
        self.transport.close()


class GuardedH11Protocol(_Deadlines, H11Protocol):
    """uvicorn's h11 protocol (pure Python) with request deadlines and a connection cap.
    h11 bounds a request head to 16 KiB itself.

    ``limits`` is per process: ``serve_http`` (or each ``--workers`` process)
    sets it before the server accepts connections.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self._over_the_cap():
            self._await("head")  # a connection that never sends a byte is a slow head too

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE:
            self._clear()  # between requests uvicorn's keep-alive timeout applies
        else:
            self._follow()  # a pipelined request is under way

    def connection_lost(self, exc: Exception | None) -> None:
        self._clear()
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


def is_loopback(host: str) -> bool:
    """``localhost`` or an address literal in 127.0.0.0/8 or ``::1`` (also IPv4-mapped)."""
    name = host.strip().strip("[]").lower()
    if name in ("localhost", "localhost."):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


@dataclass(frozen=True)
class RebindingRules:
    """Which ``Host`` and ``Origin`` values a server on a loopback address accepts.
    An entry ``name:*`` allows ``name`` with any port; a request without ``Origin``
    (not from a browser page) passes; one without ``Host`` does not."""

    allowed_hosts: list[str]
    allowed_origins: list[str]
    enable_dns_rebinding_protection: bool = True
    _hosts: dict[bytes, bool] = field(default_factory=dict, compare=False, repr=False)

    def allows_host(self, host: bytes | None) -> bool:
        if host is None:
            return False
        known = self._hosts.get(host)
        if known is None:
            known = _allowed(host.decode("latin-1"), self.allowed_hosts)
            if len(self._hosts) < 256:  # a handful of real values; bounded against made-up ones
                self._hosts[host] = known
        return known

    def allows_origin(self, origin: bytes | None) -> bool:
        return origin is None or _allowed(origin.decode("latin-1"), self.allowed_origins)


def _allowed(value: str, allowed: list[str]) -> bool:
    if value in allowed:
        return True
    return any(
        entry.endswith(":*") and value.startswith(entry[:-1]) and value[len(entry) - 1 :].isdigit()
        for entry in allowed
    )


def rebinding_protection(host: str, port: int) -> RebindingRules | None:
    """The Host/Origin checks for a server bound to ``host``:``port``, or
    ``None`` (no checks) when ``host`` is not a loopback address.

    Allowed: exactly the address and port the server listens on (any port when
    the OS picks it: ``port`` 0), plus the loopback names with any port
    (``127.0.0.1``, ``localhost``, ``[::1]``). A page whose attacker-chosen
    name resolves to the loopback address sends its own name as ``Host`` (421)
    and its own ``Origin`` (403).
    """
    if not is_loopback(host):
        return None
    name = host.strip().strip("[]")
    literal = f"[{name}]" if ":" in name else name
    own = [f"{literal}:{port}"] if port else [f"{literal}:*"]
    if port == 80:
        own.append(literal)  # a client may leave the default port out
    hosts = [*own, *(f"{loopback}:*" for loopback in _LOOPBACK_NAMES)]
    return RebindingRules(
        allowed_hosts=list(dict.fromkeys(hosts)),
        allowed_origins=list(dict.fromkeys(f"http://{allowed}" for allowed in hosts)),
    )
