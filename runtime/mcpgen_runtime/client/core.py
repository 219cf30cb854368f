"""The sans-I/O client side of MCP: encodes requests, matches responses to pending ids
and decides the protocol era, without threads, pipes or event loops.

Era negotiation (probe with ``server/discover``, fall back to ``initialize``) is the
generator ``ClientCore.negotiate`` (written in ``client.negotiate``): it yields steps
(send ``server/discover`` at a version, send ``initialize``, send a line) and is fed
each step's ``Outcome``; ``client.flows.open_connection`` runs the steps. Once the era is modern, ``request`` stamps every request with
the 2026-07-28 ``_meta`` envelope and ``result_type`` checks what comes back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from itertools import count
from typing import Any, Generic, Literal, TypeVar

from .._errors import ProtocolError, error_from_response
from ..protocol.constants import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_SERVER_INFO,
    META_VERSION,
    METHOD_NOT_FOUND,
    TASKS_EXTENSION,
)
from ..protocol.revisions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, MODERN_VERSIONS
from .negotiate import (
    LATEST_MODERN,
    Discover,
    Initialize,
    Outcome,
    ProtocolChoice,
    SendLine,
    Step,
    negotiate,
)

__all__ = [
    "DEFAULT_CLIENT_INFO",
    "LATEST_MODERN",
    "TASKS_EXTENSION",
    "Asked",
    "ClientCore",
    "Discover",
    "Era",
    "Event",
    "Handshake",
    "Initialize",
    "Notification",
    "Outcome",
    "ProgressFunction",
    "ProtocolChoice",
    "Reply",
    "Response",
    "SendLine",
    "Step",
    "error_from_response",
]

logger = logging.getLogger("mcpgen.client")

# A waiter is whatever the shell parks a caller on (a lock, a future); the core
# only stores it next to its request id and hands it back with the response.
W = TypeVar("W")

DEFAULT_CLIENT_INFO: Mapping[str, str] = {"name": "mcpgen-client", "version": "0.1.0"}

#: The era a connection speaks once negotiated.
Era = Literal["legacy", "modern"]

#: What a request that asked for progress is told of it: (progress, total, message).
ProgressFunction = Callable[[float, float | None, str | None], object]

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


@dataclass(frozen=True, slots=True)
class Asked:
    """The server asks for input (``elicitation/create``): the shell runs the
    ``on_input`` callback and writes ``ClientCore.answer_line`` back."""

    id: int | str
    params: dict[str, Any]


Event = Response[W] | Notification | Reply | Asked


@dataclass(frozen=True, slots=True)
class Handshake:
    """What the server told us while opening the connection (``initialize`` result,
    or ``server/discover`` result in the 2026-07-28 era)."""

    protocol_version: str
    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str | None
    era: Era = "legacy"


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
        # The modern revision in use once the era is decided as modern; ``request``
        # stamps the envelope whenever it is set.
        self.modern_version: str | None = None
        # Lines the server wrote that are no JSON-RPC message (the stdio transport
        # forbids any): how many, and the first (cut to 200 bytes). Logged and skipped.
        self.stray_lines = 0
        self.first_stray_line = b""
        # True: the caller answers tools that ask (on_input): elicitation is declared
        self.asks = False
        # The connection's life, recorded by the shell that owns the transport:
        # ``connected`` once the transport runs, ``gone`` once the server side ended
        # (nothing new may wait), ``closed`` once its owner closed it.
        self.connected = False
        self.gone = False
        self.closed = False
        # The progress callback of each request that asked for progress, by its
        # token (the request's id); the shell runs it for each notification.
        self.progress_callbacks: dict[Any, ProgressFunction] = {}

    @property
    def era(self) -> Era | None:
        """``"legacy"`` or ``"modern"`` once negotiated, else ``None``."""
        return None if self.handshake is None else self.handshake.era

    # -- the connection's life ----------------------------------------------------

    def check_usable(self) -> None:
        """Raise ``RuntimeError`` unless the connection is open: using a session
        outside its lifetime is a bug in the caller, not an MCP error."""
        if self.closed:
            raise RuntimeError("the session is closed")
        if not self.connected:
            raise RuntimeError("the session is not connected; call connect() or use `with`")

    @property
    def alive(self) -> bool:
        """Whether requests can still be sent: not closed, and the server still there."""
        return not (self.gone or self.closed)

    def lost(self) -> list[W]:
        """The server side ended: record it, and take every pending waiter out of
        the table for the shell to fail."""
        self.gone = True
        return self.fail_all()

    def legacy_tasks(self) -> bool:
        """Whether this handshake-era server takes task-augmented ``tools/call``
        (2025-11-25, its ``tasks`` capability naming ``call`` among its ``requests``'
        ``tools``)."""
        handshake = self.handshake
        if handshake is None or handshake.protocol_version != "2025-11-25":
            return False
        tasks = handshake.capabilities.get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return isinstance(tools, dict) and "call" in tools

    # -- outgoing ---------------------------------------------------------------

    def envelope(self, version: str, *, tasks: bool = True) -> dict[str, Any]:
        """The 2026-07-28 per-request ``_meta`` keys: protocol version and client
        capabilities (both required by servers), client info. The client
        supports the tasks extension; ``tasks=False`` leaves it undeclared so that
        the server answers a ``tools/call`` directly instead of with a task."""
        capabilities: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}} if tasks else {}
        if self.asks:
            capabilities["elicitation"] = {"form": {}}
        return {
            META_VERSION: version,
            META_CLIENT_INFO: self.client_info,
            META_CAPABILITIES: capabilities,
        }

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        waiter: W,
        *,
        progress: ProgressFunction | None = None,
        tasks: bool = True,
    ) -> tuple[int, bytes]:
        """Register ``waiter`` under a fresh id and return (id, line to send).

        ``progress`` asks for ``notifications/progress`` and is kept in
        ``progress_callbacks``: the request's id doubles as its
        ``_meta.progressToken`` (unique among our active requests). On a
        modern connection the envelope is stamped into ``params._meta`` (``tasks``:
        see ``envelope``).
        """
        request_id = next(self._ids)
        self._pending[request_id] = waiter
        if progress is not None:
            self.progress_callbacks[request_id] = progress
        if params is not None and type(params) is not dict:
            params = dict(params)  # json encodes dicts, not arbitrary mappings
        if progress is not None or self.modern_version is not None:
            given = params.get("_meta") if params is not None else None
            meta: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
            if self.modern_version is not None:
                meta.update(self.envelope(self.modern_version, tasks=tasks))
            if progress is not None:
                meta["progressToken"] = request_id
            params = {**(params or {}), "_meta": meta}
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
        except RecursionError:
            logger.warning("ignoring a message from the server nested too deeply to read")
            return []
        except (UnicodeDecodeError, ValueError):
            if line.strip():
                self._stray(line)
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
        self._stray(line)
        logger.warning("ignoring a JSON line from the server that is not an object: %.200r", line)
        return []

    def _stray(self, line: bytes) -> None:
        self.stray_lines += 1
        if not self.first_stray_line:
            self.first_stray_line = line[:200]

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
            if method == "elicitation/create" and self.asks and _valid_id(message["id"]):
                return Asked(message["id"], params)
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
            # A tools client declares no client capabilities but elicitation (with
            # on_input: see Asked), so every other server request is unknown to it.
            body = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": METHOD_NOT_FOUND, "message": "Method not found", "data": method},
            }
        return Reply((_encode(body) + "\n").encode())

    def answer_line(self, request_id: int | str, result: Mapping[str, Any]) -> bytes:
        """The response to a server request we answered (an ``Asked``)."""
        return (
            _encode({"jsonrpc": "2.0", "id": request_id, "result": dict(result)}) + "\n"
        ).encode()

    # -- era negotiation --------------------------------------------

    def negotiate(self, choice: ProtocolChoice) -> Generator[Step, Outcome | None, None]:
        """Open the connection in the era ``choice`` allows: see
        ``client.negotiate.negotiate``."""
        return negotiate(self, choice)

    def discover_request(self, waiter: W, version: str = LATEST_MODERN) -> tuple[int, bytes]:
        """The ``server/discover`` request, enveloped at ``version`` whatever the era."""
        params = {"_meta": self.envelope(version)}
        request_id = next(self._ids)
        self._pending[request_id] = waiter
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "server/discover",
            "params": params,
        }
        return request_id, (_encode(message) + "\n").encode()

    def accept_discover(self, result: Mapping[str, Any], version: str = LATEST_MODERN) -> bool:
        """Adopt a ``DiscoverResult`` (True: the connection is now modern), or
        return False when it lists no modern revision we speak (a legacy
        advertisement: fall back to ``initialize``)."""
        supported = result.get("supportedVersions")
        if not isinstance(supported, list):
            return False
        mutual = [v for v in MODERN_VERSIONS if v in supported]
        if not mutual:
            return False
        chosen = version if version in mutual else mutual[-1]
        meta = result.get("_meta")
        server_info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        self.handshake = _handshake(result, chosen, server_info, "modern")
        self.modern_version = chosen
        return True

    def result_type(
        self,
        result: Mapping[str, Any],
        label: str,
        allowed: frozenset[str] = frozenset({"complete"}),
    ) -> str:
        """The ``resultType`` of a result on this connection (absent → ``"complete"``;
        always ``"complete"`` in the handshake era, which has none), after checking
        it is one the request allows. On a modern connection a result's
        ``_meta`` serverInfo fills in one the discover result did not carry."""
        if self.modern_version is None:
            return "complete"
        kind = result.get("resultType", "complete")
        if kind not in allowed:
            raise ProtocolError(
                f"{label}: unexpected resultType {kind!r}",
                reason="unexpected_result_type",
                data=kind,
            )
        handshake = self.handshake
        if handshake is not None and not handshake.server_info:
            meta = result.get("_meta")
            info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
            if isinstance(info, dict):
                handshake.server_info.update(info)
        return str(kind)

    # -- the handshake era ---------------------------------------------------------

    def initialize_params(self) -> dict[str, Any]:
        """The ``initialize`` params, offering our latest handshake revision."""
        return {
            "protocolVersion": LATEST_HANDSHAKE,
            "capabilities": {"elicitation": {"form": {}}} if self.asks else {},
            "clientInfo": self.client_info,
        }

    def initialize_request(self, waiter: W) -> tuple[int, bytes]:
        """The ``initialize`` request offering our latest handshake revision."""
        return self.request("initialize", self.initialize_params(), waiter)

    def accept_initialize(self, result: Mapping[str, Any]) -> bytes:
        """Check the server's ``initialize`` result and return the
        ``notifications/initialized`` line; a revision we cannot speak is an error
        (a handshake-era counter-offer is not an error, but a client that cannot use
        it must disconnect)."""
        version = result.get("protocolVersion")
        # Membership, never ordering: revisions are an enumerated set.
        if not isinstance(version, str) or version not in HANDSHAKE_VERSIONS:
            raise ProtocolError(
                f"server offered protocol version {version!r}; this client speaks "
                + ", ".join(HANDSHAKE_VERSIONS),
                reason="unsupported_version",
                data={"supported": list(HANDSHAKE_VERSIONS), "offered": version},
            )
        self.handshake = _handshake(result, version, result.get("serverInfo"), "legacy")
        return self.notification("notifications/initialized")


def _valid_id(request_id: object) -> bool:
    return isinstance(request_id, int | str) and not isinstance(request_id, bool)


def _handshake(result: Mapping[str, Any], version: str, server_info: Any, era: Era) -> Handshake:
    """What an ``initialize`` or ``server/discover`` result told us (bad fields: empty)."""
    capabilities = result.get("capabilities")
    instructions = result.get("instructions")
    return Handshake(
        protocol_version=version,
        server_info=dict(server_info) if isinstance(server_info, dict) else {},
        capabilities=dict(capabilities) if isinstance(capabilities, dict) else {},
        instructions=instructions if isinstance(instructions, str) else None,
        era=era,
    )
