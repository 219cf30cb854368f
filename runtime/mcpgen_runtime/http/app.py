"""mcpgen's own ASGI application: stateless Streamable HTTP over the server core.

``HttpApp`` serves one endpoint (``/mcp``) for any ASGI server (uvicorn when run by
``python -m <package> --transport http``). Per POST, in this order:

1. Host and Origin (DNS rebinding, ``guard.RebindingRules``, decided by the
   local address the request reached): 421 for a foreign ``Host``, 403 for a
   foreign ``Origin``.
   Then, before the body is read: with authorization on (``oauth``), the bearer
   token (401/403 with a ``WWW-Authenticate`` challenge); then the gate: while
   draining (SIGTERM, ``drain``) 503 with ``Retry-After``; a caller over
   ``--rate-limit`` 429 with ``Retry-After`` (``ratelimit``, keyed by the token's
   subject when there is one). Both answer with a JSON-RPC error, id null.
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
   ``Mcp-Method``, ``Mcp-Name`` and the ``Mcp-Param-*`` headers, as a
   ``server.stateless.Routing``): the core decides the era and checks the headers
   against the body (a 2026-07-28 request: each routing header at most once and
   agreeing with the ``_meta`` envelope, a ``tools/call``'s ``Mcp-Param-*`` headers
   agreeing with the arguments its tool mirrors, else 400 and -32020), and every answer comes back with its HTTP status (errors of
   the 2026-07-28 era: 400, 404 for an unknown method). A notification or a
   response gets 202 and no body (a notification naming a revision this server
   does not serve: 400, the core's -32022); a response answering a tool's
   ``elicitation/create`` goes to the waiting call (``Exchange.deliver``). The
   ``Mcp-Session-Id`` a client sends is handed to the core with the routing
   headers (``server.asking``: it carries a declared capability, nothing else).

``gc.freeze()`` runs once start-up is done (the lifespan's start): what the
tool table, the compiled validators and the imports allocated is never scanned
by a collection again; with a drain (``serve_http``), the SIGTERM handler is put
in place then. Shutdown fails this process's running tasks, then closes the task
store. The probes, and every path but the MCP one, are never gated nor counted.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..auth.tokens import AuthInfo
from ..protocol.constants import SHUTTING_DOWN
from ..protocol.jsonrpc import INVALID_REQUEST, PARSE_ERROR, error_response
from ..protocol.param_headers import decode_header_value
from ..server.stateless import Routing, notification_refusal
from ..tasks.store import TaskStore
from .config import (
    DEFAULT_HEALTH_PATH,
    DEFAULT_READY_PATH,
    MAX_REQUEST_ID_CHARS,
    RETRY_AFTER_DRAINING_SECONDS,
)
from .drain import Drain
from .exchange import JSON_HEADERS, SSE_HEADERS, Exchange, send_json, sse_event
from .guard import RebindingRules
from .oauth import OAuthGate
from .oauth import Refusal as AuthRefusal
from .ratelimit import RateGate, Refusal
from .task_layer import TaskLayer

__all__ = ["HttpApp"]

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_ROUTING = (b"mcp-protocol-version", b"mcp-method", b"mcp-name")
_decode = json.JSONDecoder().decode
_TEXT = [(b"content-type", b"text/plain; charset=utf-8")]
_ALLOW_GET = (b"allow", b"GET, HEAD")  # the probes and the metadata document


class _Head:
    """The request headers this app reads, taken from the ASGI scope in one pass."""

    __slots__ = ("accept", "authorization", "content_length", "content_type", "duplicated", "host",
                 "method_header", "name_header", "origin", "params", "session", "version")  # fmt: skip

    def __init__(self, headers: list[tuple[bytes, bytes]]) -> None:
        self.host = self.origin = self.content_type = self.accept = None
        self.authorization: list[bytes] = []  # every value: more than one is refused
        self.content_length: bytes | None = None
        self.version = self.method_header = self.name_header = None
        self.duplicated: str | None = None
        self.params: list[tuple[str, str]] = []
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
            elif name == b"authorization":
                self.authorization.append(value)
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
            elif name.startswith(b"mcp-param-"):
                self.params.append((name.decode("latin-1"), value.decode("latin-1")))

    def routing(self) -> Routing:
        """What the routing headers say (``Mcp-Name`` decoded), for the server core."""
        name = self.name_header
        return Routing(
            self.version,
            self.method_header,
            None if name is None else decode_header_value(name),
            self.duplicated,
            tuple(self.params),
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


class _DrainGate:
    """The gate while draining: every MCP request is refused with 503."""

    _REFUSAL = Refusal(
        503,
        RETRY_AFTER_DRAINING_SECONDS,
        error_response(
            None,
            SHUTTING_DOWN,
            "Service unavailable: this server is shutting down; retry (another instance "
            "will answer)",
        ),
        close=True,
    )

    async def refusal(self, scope: Mapping[str, Any], requestor: str | None = None) -> Refusal:
        return self._REFUSAL


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
        rate: RateGate | None = None,
        drain_timeout: float | None = None,
        oauth: OAuthGate | None = None,
    ) -> None:
        self.oauth = oauth  # None: no authorization (see http.oauth)
        self.exchange = exchange
        self.path = path
        self.probes = {health_path: False, ready_path: True}  # path → asks the store
        self.max_body_bytes = max_body_bytes
        self.rebinding = rebinding
        self.tasks = tasks
        self.store = store
        # None on the hot path: no rate limit and not draining
        self.gate: RateGate | _DrainGate | None = rate
        self.draining = False
        self.active = 0  # HTTP requests being answered
        self.drain = None if drain_timeout is None else Drain(self, drain_timeout)

    def begin_drain(self) -> None:
        """From now on: not ready, and every MCP request refused with 503."""
        self.draining = True
        self.gate = _DrainGate()

    def in_flight(self) -> int:
        """Requests being answered, and tasks running in this process."""
        return self.active + (0 if self.tasks is None else self.tasks.running)

    async def __call__(self, scope: Mapping[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            self.active += 1  # every request counts for a drain; probes are quick anyway
            try:
                await self._http(scope, receive, send)
            finally:
                self.active -= 1
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                gc.collect()
                gc.freeze()  # start-up's objects are never scanned again
                if self.drain is not None:
                    self.drain.install()  # after the server's own handler is in place
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.tasks is not None:
                    await self.tasks.shutdown()  # fails its running tasks, closes the store
                else:
                    await self.store.close()
                telemetry = self.exchange.telemetry
                if telemetry is not None:  # uvicorn ends on the signal itself: no atexit
                    await asyncio.to_thread(telemetry.flush)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Mapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["path"] != self.path:
            if scope["path"] in self.probes:
                await self._probe(scope, self.probes[scope["path"]], send)
            elif self.oauth is not None and scope["path"] in self.oauth.metadata_paths:
                await self._metadata(scope, self.oauth.metadata, send)
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
        auth = None
        if self.oauth is not None and not self.draining:
            tool = (
                decode_header_value(head.name_header)
                if head.method_header == "tools/call"
                else None
            )
            verdict = await self.oauth.authenticate(scope, head.authorization, tool)
            if isinstance(verdict, AuthRefusal):
                await _challenge(send, verdict)
                return
            auth = verdict
        if self.gate is not None:  # draining, or a rate limit: by the token's subject if any
            refusal = await self.gate.refusal(scope, None if auth is None else auth.requestor)
            if refusal is not None:
                await _refuse(send, refusal)
                return
        if scope["method"] != "POST":
            await _method_not_allowed(send)
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
        await self._post(head, body, sse_ok, scope, receive, send, auth)

    async def _metadata(self, scope: Mapping[str, Any], document: bytes, send: Send) -> None:
        """The RFC 9728 metadata document: GET or HEAD, no token, no Host/Origin check
        (public facts a browser-based client may read from any page)."""
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, "Method Not Allowed: GET or HEAD", _ALLOW_GET)
            return
        headers = [
            *JSON_HEADERS,
            (b"access-control-allow-origin", b"*"),
            (b"cache-control", b"max-age=300"),
            (b"content-length", str(len(document)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        body = b"" if scope["method"] == "HEAD" else document
        await send({"type": "http.response.body", "body": body})

    async def _probe(self, scope: Mapping[str, Any], readiness: bool, send: Send) -> None:
        """``/healthz`` (the process serves: 200) or ``/readyz`` (it can take traffic:
        200, or 503 when the task store does not answer). GET or HEAD, no Host/Origin
        check (an orchestrator's probe names the pod's address; the answer holds no
        data), nothing of the store's URL in the body (it may carry a password)."""
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, "Method Not Allowed: GET or HEAD", _ALLOW_GET)
            return
        status, body = 200, {"status": "ok"}
        if readiness and self.draining:
            status, body = 503, {"status": "draining"}
        elif readiness:
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
        auth: AuthInfo | None = None,
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
        if auth is not None and self.oauth is not None:
            forbidden = self.oauth.authorize(message, auth)
            if forbidden is not None:
                await _challenge(send, forbidden)
                return
        await self.exchange.answer(message, head.routing(), sse_ok, scope, receive, send, auth)


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


async def _method_not_allowed(send: Send) -> None:
    frame = error_response(
        None, INVALID_REQUEST, "Method Not Allowed: this stateless server takes POST only"
    )
    headers = [*JSON_HEADERS, (b"allow", b"POST"), (b"content-length", str(len(frame)).encode())]
    await send({"type": "http.response.start", "status": 405, "headers": headers})
    await send({"type": "http.response.body", "body": frame})


async def _refuse(send: Send, refusal: Refusal) -> None:
    frame = refusal.frame
    headers = [
        *JSON_HEADERS,
        (b"retry-after", str(refusal.retry_after).encode()),
        (b"content-length", str(len(frame)).encode()),
    ]
    if refusal.close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": frame})


async def _challenge(send: Send, refusal: AuthRefusal) -> None:
    """An authorization refusal: its status, challenge and text."""
    challenge = refusal.challenge
    header = None if challenge is None else (b"www-authenticate", challenge.encode())
    await _plain(send, refusal.status, refusal.text, header)


async def _plain(
    send: Send, status: int, text: str, header: tuple[bytes, bytes] | None = None
) -> None:
    """A text answer; ``header``: one more header (``Allow``, ``WWW-Authenticate``)."""
    body = text.encode()
    headers = [*_TEXT, (b"content-length", str(len(body)).encode())]
    if header is not None:
        headers.append(header)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
