"""mcpgen's own ASGI application: stateless Streamable HTTP over the server core.

``HttpApp`` serves one endpoint (``/mcp``) for any ASGI server (uvicorn when run by
``python -m <package> --transport http``). Per POST, in this order:

1. Host and Origin (DNS rebinding, ``guard.RebindingRules``, decided by the
   local address the request reached): 421 for a foreign ``Host``, 403 for a
   foreign ``Origin``.
2. The method: POST only. GET (a stateless server has no stream to offer: an
   open GET stream would never be written to nor closed) and DELETE (no
   session to end) get 405 with ``Allow: POST``.
3. ``Content-Type: application/json`` (else 415) and an ``Accept`` that admits
   JSON or SSE (else 406).
4. The body, at most ``max_body_bytes`` (else 413; a ``Content-Length`` over the
   limit is refused before a byte is read). The time a body may take as a whole
   is bounded by the connection guard (``guard``), not here.
5. JSON (else 400 and a JSON-RPC parse error). A request whose string id is
   longer than ``MAX_REQUEST_ID_CHARS`` gets 400 and -32600 (the id is echoed in
   every answer). A single request is answered by ``exchange``, which hands it to
   the server core with its routing headers (``MCP-Protocol-Version``,
   ``Mcp-Method``, ``Mcp-Name``, as a ``server.stateless.Routing``): the core
   decides the era and checks the headers against the body (a 2026-07-28 request:
   each routing header at most once and agreeing with the ``_meta`` envelope, else
   400 and -32020), and every answer comes back with its HTTP status (errors of
   the 2026-07-28 era: 400, 404 for an unknown method). A notification or a
   response gets 202 and no body (a notification naming a revision this server
   does not serve: 400, the core's -32022); a response answering a tool's
   ``elicitation/create`` goes to the waiting call (``Exchange.deliver``). The
   ``Mcp-Session-Id`` a client sends is handed to the core with the routing
   headers (``server.asking``: it carries a declared capability, nothing else).

``gc.freeze()`` runs once start-up is done (the lifespan's start): what the
tool table, the compiled validators and the imports allocated is never scanned
by a collection again. Shutdown fails this process's running tasks, then closes
the task store.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..protocol.jsonrpc import INVALID_REQUEST, PARSE_ERROR, error_response
from ..server.stateless import Routing, notification_refusal
from ..tasks.store import TaskStore
from .config import DEFAULT_HEALTH_PATH, DEFAULT_READY_PATH, MAX_REQUEST_ID_CHARS
from .exchange import JSON_HEADERS, SSE_HEADERS, Exchange, send_json, sse_event
from .guard import RebindingRules
from .tasks import TaskLayer

__all__ = ["HttpApp"]

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_ROUTING = (b"mcp-protocol-version", b"mcp-method", b"mcp-name")
_decode = json.JSONDecoder().decode
_TEXT = [(b"content-type", b"text/plain; charset=utf-8")]


class _Head:
    """The request headers this app reads, taken from the ASGI scope in one pass."""

    __slots__ = ("accept", "content_length", "content_type", "duplicated", "host", "method_header",
                 "name_header", "origin", "session", "version")  # fmt: skip

    def __init__(self, headers: list[tuple[bytes, bytes]]) -> None:
        self.host = self.origin = self.content_type = self.accept = None
        self.content_length: bytes | None = None
        self.version = self.method_header = self.name_header = None
        self.duplicated: str | None = None
        self.session: str | None = None
        seen: list[bytes] = []
        for name, value in headers:
            if name == b"content-type":
                self.content_type = value
            elif name == b"accept":
                self.accept = value if self.accept is None else self.accept + b"," + value
            elif name == b"host":
                self.host = value
            elif name == b"origin":
                self.origin = value
            elif name == b"content-length":
                self.content_length = value
            elif name == b"mcp-session-id":
                self.session = value.decode("latin-1")
            elif name in _ROUTING:
                if name in seen:
                    self.duplicated = name.decode()
                seen.append(name)
                text = value.decode("latin-1")
                if name == b"mcp-protocol-version":
                    self.version = text
                elif name == b"mcp-method":
                    self.method_header = text
                else:
                    self.name_header = text

    def routing(self) -> Routing:
        """What the routing headers say (``Mcp-Name`` decoded), for the server core."""
        name = self.name_header
        return Routing(
            self.version,
            self.method_header,
            None if name is None else _header_value(name),
            self.duplicated,
            self.session,
        )

    def accepts(self) -> tuple[bool, bool]:
        """(JSON, SSE): what the ``Accept`` header admits (wildcards count; absent: both)."""
        if self.accept is None:
            return True, True
        known = _ACCEPTS.get(self.accept)
        if known is None:
            types = {part.split(b";")[0].strip().lower() for part in self.accept.split(b",")}
            anything = b"*/*" in types
            known = (
                anything or b"application/json" in types or b"application/*" in types,
                anything or b"text/event-stream" in types or b"text/*" in types,
            )
            if len(_ACCEPTS) < _CACHED:  # clients send a handful of distinct values
                _ACCEPTS[self.accept] = known
        return known


# Parsed Accept values by the header's bytes (at most _CACHED: enough for every real
# client, bounded against made-up ones).
_CACHED = 256
_ACCEPTS: dict[bytes, tuple[bool, bool]] = {}


class HttpApp:
    """The ASGI application (see the module docstring)."""

    def __init__(
        self,
        exchange: Exchange,
        *,
        path: str,
        max_body_bytes: int,
        rebinding: RebindingRules,
        tasks: TaskLayer | None,
        store: TaskStore,
        health_path: str = DEFAULT_HEALTH_PATH,
        ready_path: str = DEFAULT_READY_PATH,
    ) -> None:
        self.exchange = exchange
        self.path = path
        self.probes = {health_path: False, ready_path: True}  # path → asks the store
        self.max_body_bytes = max_body_bytes
        self.rebinding = rebinding
        self.tasks = tasks
        self.store = store

    async def __call__(self, scope: Mapping[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                gc.collect()
                gc.freeze()  # start-up's objects are never scanned again
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.tasks is not None:
                    await self.tasks.shutdown()  # fails its running tasks, closes the store
                else:
                    await self.store.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Mapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["path"] != self.path:
            if scope["path"] in self.probes:
                await self._probe(scope, self.probes[scope["path"]], send)
            else:
                await _plain(send, 404, "Not Found")
            return
        head = _Head(scope["headers"])
        rules = self.rebinding.at(scope.get("server"))
        if not rules.allows_host(head.host):
            await _plain(send, 421, "Invalid Host header")
            return
        if not rules.allows_origin(head.origin):
            await _plain(send, 403, "Invalid Origin header")
            return
        if scope["method"] != "POST":
            frame = error_response(
                None, INVALID_REQUEST, "Method Not Allowed: this stateless server takes POST only"
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 405,
                    "headers": [
                        *JSON_HEADERS,
                        (b"allow", b"POST"),
                        (b"content-length", str(len(frame)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": frame})
            return
        content_type = (head.content_type or b"").split(b";")[0].strip().lower()
        if content_type != b"application/json":
            await _plain(send, 415, "Unsupported Media Type: Content-Type must be application/json")
            return
        json_ok, sse_ok = head.accepts()
        if not (json_ok or sse_ok):
            await _plain(send, 406, "Not Acceptable: accept application/json or text/event-stream")
            return
        body = await self._body(head, receive, send)
        if body is None:
            return
        if not json_ok:  # a client that takes event streams only: JSON answers become one event
            send = _as_event_stream(send)
        await self._post(head, body, sse_ok, scope, receive, send)

    async def _probe(self, scope: Mapping[str, Any], readiness: bool, send: Send) -> None:
        """``/healthz`` (the process serves: 200) or ``/readyz`` (it can take traffic:
        200, or 503 when the task store does not answer). GET or HEAD, no Host/Origin
        check (an orchestrator's probe names the pod's address; the answer holds no
        data), nothing of the store's URL in the body (it may carry a password)."""
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, "Method Not Allowed: GET or HEAD", allow=b"GET, HEAD")
            return
        status, body = 200, {"status": "ok"}
        if readiness:
            if await self.store.ready():
                body = {"status": "ready", "taskStore": "shared" if self.store.shared else "memory"}
            else:
                status = 503
                body = {"status": "not ready", "reason": "the task store does not answer"}
        frame = json.dumps(body).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    *JSON_HEADERS,
                    (b"cache-control", b"no-store"),
                    (b"content-length", str(len(frame)).encode()),
                ],
            }
        )
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else frame}
        )

    async def _body(self, head: _Head, receive: Receive, send: Send) -> bytes | None:
        """The whole request body, or ``None`` once answered (413) or the client left."""
        limit = self.max_body_bytes
        if head.content_length is not None:
            try:
                declared = int(head.content_length)
            except ValueError:
                declared = 0  # the HTTP server has refused a malformed length already
            if declared > limit:
                await _plain(send, 413, "Request body too large")
                return None
        message = await receive()
        if message["type"] != "http.request":
            return None
        body: bytes = message.get("body", b"")
        if not message.get("more_body", False):  # the common case: one piece
            if len(body) > limit:
                await _plain(send, 413, "Request body too large")
                return None
            return body
        parts, size = [body], len(body)
        while message.get("more_body", False):
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client hung up: nothing is kept
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _plain(send, 413, "Request body too large")
                return None
            parts.append(chunk)
        return b"".join(parts)

    async def _post(
        self,
        head: _Head,
        body: bytes,
        sse_ok: bool,
        scope: Mapping[str, Any],
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            # UTF-8 (a BOM and lone surrogates tolerated, as over stdio), not json.loads'
            # sniffing for UTF-16/32
            message = _decode(body.decode("utf-8-sig", "surrogatepass"))
        except (ValueError, RecursionError):  # also bad UTF-8 and huge integer literals
            await send_json(
                send, error_response(None, PARSE_ERROR, "Parse error: invalid JSON"), 400
            )
            return
        kind = _kind(message)
        if kind is None:
            await send_json(
                send,
                error_response(
                    None,
                    INVALID_REQUEST,
                    "Invalid Request: the body must be one JSON-RPC request, "
                    "notification or response object",
                ),
                400,
            )
            return
        if kind != "request":
            refused = notification_refusal(head.version) if kind == "notification" else None
            if refused is not None:
                await send_json(send, refused, 400)
                return
            if kind == "response":  # the answer to a tool's question (server.asking)
                await self.exchange.deliver(message)
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        request_id = message["id"]
        if type(request_id) is str and len(request_id) > MAX_REQUEST_ID_CHARS:
            refusal = f"Invalid Request: the id is longer than {MAX_REQUEST_ID_CHARS} characters"
            await send_json(send, error_response(None, INVALID_REQUEST, refusal), 400)
            return
        await self.exchange.answer(message, head.routing(), sse_ok, scope, receive, send)


def _as_event_stream(send: Send) -> Send:
    """``send`` with a 200 JSON answer turned into an SSE stream of one event."""
    converting = False

    async def send_events(message: Message) -> None:
        nonlocal converting
        if message["type"] == "http.response.start":
            if message["status"] == 200 and JSON_HEADERS[0] in message.get("headers", []):
                converting = True
                message = {**message, "headers": SSE_HEADERS}
        elif converting and message.get("body"):
            message = {**message, "body": sse_event(message["body"])}
        await send(message)

    return send_events


def _kind(message: Any) -> str | None:
    """``request``, ``notification`` or ``response`` for a well-formed JSON-RPC 2.0
    object, else ``None`` (a batch, another value, a malformed envelope)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    method = message.get("method")
    request_id = message.get("id")
    has_id = "id" in message
    if isinstance(method, str):
        if "params" in message and not isinstance(message["params"], dict | list):
            return None
        if not has_id:
            return "notification"
        return "request" if type(request_id) in (str, int) else None
    if has_id and ("result" in message) != ("error" in message):
        return "response" if request_id is None or type(request_id) in (str, int) else None
    return None


def _header_value(value: str | None) -> str | None:
    """A header value as sent: plain, or ``=?base64?…?=`` for what a header cannot
    carry (non-ASCII, edge whitespace); ``None`` for a malformed encoding."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    import base64
    import binascii

    payload = value[len("=?base64?") : -2]
    try:
        decoded = base64.b64decode(payload, validate=True)
        if base64.b64encode(decoded).decode("ascii") != payload:
            return None
        return decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


async def _plain(send: Send, status: int, text: str, *, allow: bytes | None = None) -> None:
    body = text.encode()
    headers = [*_TEXT, (b"content-length", str(len(body)).encode())]
    if allow is not None:
        headers.append((b"allow", allow))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
