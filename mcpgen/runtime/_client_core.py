"""The sans-I/O client side of MCP: encodes requests, matches responses to pending ids
and runs the ``initialize`` handshake, without threads, pipes or event loops.

The sync and async sessions (``_client``) are thin shells that move the bytes this
core produces and feed it the lines the server writes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import count
from typing import Any, Generic, TypeVar

from ._errors import ProtocolError
from ._versions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE

__all__ = [
    "DEFAULT_CLIENT_INFO",
    "ClientCore",
    "Event",
    "Handshake",
    "Notification",
    "Reply",
    "Response",
    "error_from_response",
]

logger = logging.getLogger("mcpgen.client")

# A waiter is whatever the shell parks a caller on (a lock, a future); the core
# only stores it next to its request id and hands it back with the response.
W = TypeVar("W")

DEFAULT_CLIENT_INFO: Mapping[str, str] = {"name": "mcpgen-client", "version": "0.1.0"}

METHOD_NOT_FOUND = -32601

# Compact separators and raw UTF-8: one dumps call per message, and json.dumps
# escapes control characters, so the encoded line never holds a newline.
_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_decode = json.JSONDecoder().decode


@dataclass(frozen=True, slots=True)
class Response(Generic[W]):
    """The answer to one of our pending requests: exactly one of ``result``/``error``."""

    id: int
    waiter: W
    result: dict[str, Any] | None
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Notification:
    """A notification from the server (progress, logging, list changes, …)."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """A line the shell must write back: the core's answer to a server request."""

    line: bytes


Event = Response[W] | Notification | Reply


@dataclass(frozen=True, slots=True)
class Handshake:
    """What the server told us while opening the connection."""

    protocol_version: str
    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str | None


class ClientCore(Generic[W]):
    """Client-side JSON-RPC state: integer ids, the pending table, the handshake.

    Thread-safety: ids come from ``itertools.count`` and the pending table is a
    plain dict; each operation on it is a single GIL-atomic call, so a caller
    thread may register requests while a reader thread resolves them.
    """

    def __init__(self, client_info: Mapping[str, Any] | None = None) -> None:
        self.client_info: dict[str, Any] = dict(client_info or DEFAULT_CLIENT_INFO)
        self._ids = count(1)
        self._pending: dict[int, W] = {}
        self.handshake: Handshake | None = None

    # -- outgoing ---------------------------------------------------------------

    def request(
        self, method: str, params: Mapping[str, Any] | None, waiter: W
    ) -> tuple[int, bytes]:
        """Register ``waiter`` under a fresh id and return (id, line to send)."""
        # Seam for the 2026-07-28 era: a stateless connection stamps every request's
        # params._meta with the protocol-version/client envelope here.
        request_id = next(self._ids)
        self._pending[request_id] = waiter
        if params is not None and type(params) is not dict:
            params = dict(params)  # json encodes dicts, not arbitrary mappings
        if params is None:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        else:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return request_id, (_encode(message) + "\n").encode()

    def notification(self, method: str, params: Mapping[str, Any] | None = None) -> bytes:
        """The line for a notification (no id, never answered)."""
        if params is not None and type(params) is not dict:
            params = dict(params)
        if params is None:
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        else:
            message = {"jsonrpc": "2.0", "method": method, "params": params}
        return (_encode(message) + "\n").encode()

    def cancel(self, request_id: int, reason: str) -> bytes:
        """Forget a pending request and return its ``notifications/cancelled`` line;
        a response that still arrives for it is then dropped as late."""
        self._pending.pop(request_id, None)
        return self.notification(
            "notifications/cancelled", {"requestId": request_id, "reason": reason}
        )

    def forget(self, request_id: int) -> W | None:
        """Drop a pending request without telling the server (its waiter, if any)."""
        return self._pending.pop(request_id, None)

    def fail_all(self) -> list[W]:
        """Take every pending waiter out of the table (the connection is gone)."""
        waiters: list[W] = []
        # popitem is atomic; a concurrent register either lands before (and is
        # returned) or after (and the caller sees the closed transport itself).
        while self._pending:
            try:
                waiters.append(self._pending.popitem()[1])
            except KeyError:
                break
        return waiters

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    # -- incoming ---------------------------------------------------------------

    def receive(self, line: bytes) -> list[Event[W]]:
        """Parse one line from the server into events; bad input is logged, never raised."""
        try:
            message = _decode(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            if line.strip():
                logger.warning("ignoring a line from the server that is not JSON: %.200r", line)
            return []
        if isinstance(message, dict):
            event = self._receive_message(message)
            return [] if event is None else [event]
        if isinstance(message, list):
            # A 2025-03-26 peer may batch; later revisions never do. Accept it anyway.
            events: list[Event[W]] = []
            for item in message:
                if not isinstance(item, dict):
                    logger.warning("ignoring a batch entry that is not an object: %.200r", item)
                    continue
                event = self._receive_message(item)
                if event is not None:
                    events.append(event)
            return events
        logger.warning("ignoring a JSON line from the server that is not an object: %.200r", line)
        return []

    def _receive_message(self, message: dict[str, Any]) -> Event[W] | None:
        method = message.get("method")
        if method is None:
            return self._receive_response(message)
        if not isinstance(method, str):
            logger.warning("ignoring a message with a non-string method: %.200r", message)
            return None
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if "id" in message:
            return self._answer_server_request(message["id"], method)
        return Notification(method, params)

    def _receive_response(self, message: dict[str, Any]) -> Response[W] | None:
        request_id = message.get("id")
        # bool is an int subclass; true/false are never our ids.
        if type(request_id) is not int:
            logger.warning("ignoring a response with a foreign id: %.200r", message)
            return None
        waiter = self._pending.pop(request_id, None)
        if waiter is None:
            # Late (timed out, cancelled) or never ours; never answer a response.
            logger.debug("ignoring a response to no pending request: id=%r", request_id)
            return None
        result = message.get("result")
        if isinstance(result, dict):
            return Response(request_id, waiter, result, None)
        error = message.get("error")
        if isinstance(error, dict):
            return Response(request_id, waiter, None, error)
        return Response(
            request_id,
            waiter,
            None,
            {"code": 0, "message": "response has neither a result object nor an error object"},
        )

    def _answer_server_request(self, request_id: Any, method: str) -> Reply | None:
        if (
            request_id is None
            or isinstance(request_id, bool)
            or not isinstance(request_id, (int, str))
        ):
            logger.warning("ignoring a server request with an invalid id: %r", request_id)
            return None
        if method == "ping":
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": {}}
        else:
            # A tools client declares no client capabilities (sampling, roots,
            # elicitation), so every other server request is unknown to it.
            body = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": METHOD_NOT_FOUND, "message": "Method not found", "data": method},
            }
        return Reply((_encode(body) + "\n").encode())

    # -- handshake ------------------------------------------------------------------
    #
    # Era seam: today the client always opens with ``initialize`` (handshake era).
    # The 2026-07-28 ``server/discover`` probe (PROTOCOL.md §4.5) slots in before it:
    # a ``discover_request``/``accept_discover`` pair that either fills ``handshake``
    # with the modern revision (and switches ``request`` to stamping envelopes) or
    # falls back to ``initialize_request`` below. The sessions' ``_open`` is the
    # one place that picks between them.

    def initialize_request(self, waiter: W) -> tuple[int, bytes]:
        """The ``initialize`` request offering our latest handshake revision."""
        params = {
            "protocolVersion": LATEST_HANDSHAKE,
            "capabilities": {},
            "clientInfo": self.client_info,
        }
        return self.request("initialize", params, waiter)

    def accept_initialize(self, result: Mapping[str, Any]) -> bytes:
        """Check the server's ``initialize`` result and return the
        ``notifications/initialized`` line; a revision we cannot speak is an error
        (the caller must then disconnect, PROTOCOL.md §3.3)."""
        version = result.get("protocolVersion")
        # Membership, never ordering: revisions are an enumerated set.
        if not isinstance(version, str) or version not in HANDSHAKE_VERSIONS:
            raise ProtocolError(
                f"server offered protocol version {version!r}; this client speaks "
                + ", ".join(HANDSHAKE_VERSIONS),
                reason="unsupported_version",
                data={"supported": list(HANDSHAKE_VERSIONS), "offered": version},
            )
        server_info = result.get("serverInfo")
        capabilities = result.get("capabilities")
        instructions = result.get("instructions")
        self.handshake = Handshake(
            protocol_version=version,
            server_info=dict(server_info) if isinstance(server_info, dict) else {},
            capabilities=dict(capabilities) if isinstance(capabilities, dict) else {},
            instructions=instructions if isinstance(instructions, str) else None,
        )
        return self.notification("notifications/initialized")


def error_from_response(error: Mapping[str, Any], method: str) -> ProtocolError:
    """The ``ProtocolError`` for a JSON-RPC error object."""
    code = error.get("code")
    message = error.get("message")
    return ProtocolError(
        f"{method}: {message if isinstance(message, str) else 'error'}",
        code=code if type(code) is int else 0,
        data=error.get("data"),
    )
