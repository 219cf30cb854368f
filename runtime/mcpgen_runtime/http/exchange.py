"""One JSON-RPC request over HTTP, through the server core: the answer as JSON or SSE.

``Exchange`` is built once per server and called once per POSTed request (the
ASGI app, ``app``, has checked the HTTP side and decoded the body). Each
request gets a fresh ``ServerConnection`` (a stateless server has no session) and
enters it by ``receive_stateless`` with what its headers said (``Routing``): the
core takes the state the request implies itself (era, revision, log level) and
answers with actions, each frame carrying its HTTP status. This module only maps
them to HTTP: a frame is sent as it is, an ``Invoke`` is run (below), and the
task-store actions (a task call, ``tasks/*``) go to the task layer (``tasks``).

How the answer goes out:
- a frame the core answers at once, and a call that runs inline: JSON;
- a background call (see ``calls``): JSON, while the client's connection is
  watched: a client that hangs up cancels the call (``ctx.cancelled``, an async
  handler cancelled) and leaves nothing behind;
- a call whose handler declares ``ctx`` and whose request asked for progress (a
  ``progressToken``) or logs, or which may ask its caller for input (a
  handshake-era client that declared elicitation: the ``elicitation/create``
  goes out on the stream), from a client that accepts ``text/event-stream``
  (and no ``--json-response``): an SSE stream carrying the notifications in the
  order the handler sent them, then the result. Otherwise a ``ctx``'s
  notifications have nowhere to go and are dropped. At most
  ``MAX_QUEUED_NOTIFICATIONS`` wait while the client is slow to read; later ones
  are dropped until it catches up (the result is never dropped), so a client
  that does not read costs a bounded amount of memory (and ``guard``'s write
  deadline ends its connection).

Log levels (decided by the core, ``server.stateless``): at 2026-07-28 the
request's ``io.modelcontextprotocol/logLevel`` ``_meta`` key (absent: no logs), as
over stdio. At the handshake revisions the same key when present, else every
level: a stateless server cannot remember a ``logging/setLevel`` (accepted; it
announces the ``logging`` capability).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..auth.tokens import AuthInfo
from ..protocol.jsonrpc import INTERNAL_ERROR, error_response
from ..server.actions import CreateTask, FetchTask, ListTasks
from ..server.asking import Outbound
from ..server.core import Invoke, Routing, SendFrame, ServerConnection
from ..server.tools import App, CallOutcome
from ..tasks.store import TaskStore, TaskStoreUnavailable
from ..tasks.table import TaskTable
from ..telemetry.server import Observation, ServerTelemetry
from .calls import Calls, run_invoke
from .identity import requestor_identity
from .oauth import OAuthGate
from .task_layer import TaskLayer

__all__ = [
    "JSON_HEADERS",
    "MAX_QUEUED_NOTIFICATIONS",
    "SSE_HEADERS",
    "Exchange",
    "send_json",
    "sse_event",
]

Message = dict[str, Any]
ASGISend = Callable[[Message], Awaitable[None]]
ASGIReceive = Callable[[], Awaitable[Message]]

# Notifications of one SSE call waiting for a client that reads slower than its
# handler sends: past this, progress and log notifications are dropped.
MAX_QUEUED_NOTIFICATIONS = 1024

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


async def send_json(
    send: ASGISend, frame: bytes, status: int = 200, session: str | None = None
) -> None:
    headers = [*JSON_HEADERS, (b"content-length", str(len(frame)).encode())]
    if session is not None:
        headers.append((b"mcp-session-id", session.encode("ascii")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": frame})


def sse_event(frame: bytes) -> bytes:
    """One SSE ``message`` event carrying one JSON-RPC frame (its newline dropped)."""
    return b"event: message\r\ndata: " + frame.rstrip(b"\n") + b"\r\n\r\n"


class Exchange:
    """Answers POSTed JSON-RPC requests of one server process."""

    def __init__(
        self,
        app: App,
        calls: Calls,
        tasks: TaskLayer | None,
        *,
        json_only: bool,
        gate: OAuthGate | None = None,
        telemetry: ServerTelemetry | None = None,
        identity_header: str | None = None,
        store: TaskStore | None = None,
    ) -> None:
        self.gate = gate  # with authorization: filtered listings (http.oauth)
        self.app = app
        self.calls = calls
        self.tasks = tasks
        self.json_only = json_only  # --json-response: never SSE
        self.telemetry = telemetry  # None: nothing to record (see telemetry.server)
        self.identity_header = identity_header  # who a request line names (http.identity)
        # Answer one request (``message`` has a valid id and a string method). Decided
        # here, once: an unobserved request takes no branch and no extra frame.
        self.answer = self._answer if telemetry is None else self._observed
        # the elicitation/create requests this process's calls sent, awaiting answers
        self.outbound = Outbound()
        # with a shared store, answers POSTed to another worker are relayed through it
        self.store = store
        self._hearing = False

    async def deliver(self, message: Mapping[str, Any]) -> None:
        """A client's response: the answer to a question one of our calls asked, or
        (with a shared store) relayed to the worker whose call asked it."""
        if self.outbound.resolve(message):
            return
        request_id = message.get("id")
        if self.store is not None and self.store.shared and Outbound.ours(request_id):
            with contextlib.suppress(TaskStoreUnavailable):  # then the ask times out
                await self.store.relay(message)

    async def _hear_relayed(self) -> None:
        """Once per process, before a call may ask: relayed answers reach ``outbound``."""
        if not self._hearing and self.store is not None and self.store.shared:
            self._hearing = True
            await self.store.hear_relayed(self.outbound.resolve)

    def connection(
        self, scope: Mapping[str, Any], auth: AuthInfo | None = None, app: App | None = None
    ) -> ServerConnection:
        """A fresh core connection for one request: with tasks served, its requestor
        (the token's, else ``http.identity``), its tasks in the store
        (``tasks_outside``); ``auth`` for the handlers' ``ctx.auth``; ``app``: the tool
        table answering it (a token's filtered listing), else the server's."""
        app = self.app if app is None else app
        if self.tasks is None:
            return ServerConnection(app, defer_checks=True, auth=auth, outbound=self.outbound)
        requestor = auth.requestor if auth is not None else self.tasks.requestor(scope)
        return ServerConnection(
            app,
            auth=auth,
            defer_checks=True,
            tasks=TaskTable(max_tasks=None),
            requestor=requestor,
            tasks_listed=requestor is not None,
            tasks_outside=True,
            outbound=self.outbound,
        )

    async def _answer(
        self,
        message: Mapping[str, Any],
        routing: Routing,
        sse_ok: bool,
        scope: Mapping[str, Any],
        receive: ASGIReceive,
        send: ASGISend,
        auth: AuthInfo | None = None,
    ) -> SendFrame | CallOutcome | None:
        """Answer the request; what ended it (for telemetry): the frame sent, the
        call's outcome, or None (the client left before the answer). ``auth``: the
        verified token it came with, if the server checks tokens."""
        app = None
        if auth is not None and self.gate is not None and message["method"] == "tools/list":
            app = self.gate.listing_app(auth)
        conn = self.connection(scope, auth, app)
        actions = conn.receive_stateless(message, routing)
        action = actions[0] if actions else None
        if type(action) is not Invoke:
            return await self._answer_without_call(conn, message["id"], action, send)
        # A call's answer is its result or -32603: 200 in either era.
        if action.runs_inline:
            outcome = _inline(action)
            await send_json(send, conn.respond(action, outcome))
            return outcome
        context = action.context
        if context is not None and context.notifies and sse_ok and not self.json_only:
            return await self._stream(conn, action, receive, send)
        return await self._background(conn, action, receive, send)

    async def _observed(
        self,
        message: Mapping[str, Any],
        routing: Routing,
        sse_ok: bool,
        scope: Mapping[str, Any],
        receive: ASGIReceive,
        send: ASGISend,
        auth: AuthInfo | None = None,
    ) -> None:
        """``_answer`` with its span current (a handler's spans are its children), its
        duration recorded and its line logged."""
        telemetry = self.telemetry
        assert telemetry is not None
        obs = telemetry.begin(
            message,
            time.perf_counter(),
            client_address=_client_address(scope),
            requestor=(
                auth.requestor
                if auth is not None
                else requestor_identity(scope, self.identity_header)
            ),
            transport_context=_header_context(scope) if telemetry.traces else None,
        )
        ended: SendFrame | CallOutcome | None = CallOutcome(internal_error="no answer")
        with telemetry.current(obs):
            try:
                ended = await self._answer(message, routing, sse_ok, scope, receive, send, auth)
            finally:
                _end(telemetry, obs, ended, routing.version)

    async def _answer_without_call(
        self, conn: ServerConnection, request_id: Any, action: Any, send: ASGISend
    ) -> SendFrame:
        """A frame the core answered with, or the task layer's answer to a task-store
        action, sent with its status."""
        if isinstance(action, CreateTask | FetchTask | ListTasks) and self.tasks is not None:
            action = await self.tasks.perform(conn, action)
        frame: SendFrame = (
            action
            if isinstance(action, SendFrame)
            else SendFrame(
                error_response(request_id, INTERNAL_ERROR, "Internal error: no answer"),
                INTERNAL_ERROR,
            )
        )
        await send_json(send, frame.data, frame.status, frame.session)
        return frame

    async def _background(
        self, conn: ServerConnection, invoke: Invoke, receive: ASGIReceive, send: ASGISend
    ) -> CallOutcome | None:
        """A background call answered with JSON; the client hanging up cancels it."""
        runner = asyncio.ensure_future(run_invoke(invoke, self.calls))
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((runner, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not runner.done():
                _cancel(invoke, runner)  # the client is gone (or the server stops)
        if runner.cancelled() or invoke.cancelled:
            return None
        outcome = _outcome(invoke, runner)
        frames = conn.complete(invoke, outcome)
        if frames:
            await send_json(send, frames[0])
        return outcome

    async def _stream(
        self, conn: ServerConnection, invoke: Invoke, receive: ASGIReceive, send: ASGISend
    ) -> CallOutcome | None:
        """A call with notifications: an SSE stream of them, then the result."""
        assert invoke.context is not None
        await self._hear_relayed()
        stream = _EventStream()
        invoke.context.send_to(stream.emit)
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        runner = asyncio.ensure_future(run_invoke(invoke, self.calls))
        runner.add_done_callback(lambda _: stream.wake())
        gone = asyncio.ensure_future(_disconnected(receive))
        gone.add_done_callback(lambda _: stream.wake())
        try:
            while True:
                await stream.ready.wait()
                stream.ready.clear()
                if gone.done():
                    return None  # finally: the call is cancelled
                finished = runner.done()  # checked before draining: nothing is emitted after
                for frame in stream.drain():
                    await send(
                        {"type": "http.response.body", "body": sse_event(frame), "more_body": True}
                    )
                if finished:
                    break
        finally:
            stream.close()
            gone.cancel()
            if not runner.done():
                _cancel(invoke, runner)
        outcome = _outcome(invoke, runner)
        frames = conn.complete(invoke, outcome)
        body = sse_event(frames[0]) if frames else b""
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return outcome


def _end(
    telemetry: ServerTelemetry,
    obs: Observation,
    ended: SendFrame | CallOutcome | None,
    version: str | None,
) -> None:
    if ended is None:  # the client hung up: its call was cancelled
        telemetry.end(obs, cancelled=True, version=version)
    elif isinstance(ended, SendFrame):
        telemetry.end(obs, code=ended.code, version=version, http_status=ended.status)
    else:
        telemetry.finished(obs, ended, version, http_status=200)


def _client_address(scope: Mapping[str, Any]) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


def _header_context(scope: Mapping[str, Any]) -> Any:
    """The trace context of the HTTP request's own ``traceparent`` headers (linked to
    the MCP span, never its parent: the two contexts are independent)."""
    from ..telemetry.otel import extract_meta

    carrier = {}
    for name, value in scope.get("headers", ()):
        if name in (b"traceparent", b"tracestate", b"baggage"):
            carrier[name.decode()] = value.decode("latin-1")
    return extract_meta(carrier)


def _inline(invoke: Invoke) -> CallOutcome:
    """An inline call (a plain sync handler), as the stdio server runs it."""
    try:
        return invoke.tool.call_sync(invoke.args)
    except SystemExit as exc:  # sys.exit() in a handler fails the call, not the server
        return CallOutcome(invoke.tool.handler_failed(exc))


def _cancel(invoke: Invoke, runner: asyncio.Future[CallOutcome]) -> None:
    """The client is gone: stop the call (a sync handler sees ``ctx.cancelled``); the
    runner is at hand here, so the ``Cancel`` action ``Invoke.cancel`` returns is not needed."""
    invoke.cancel()
    runner.cancel()


def _outcome(invoke: Invoke, runner: asyncio.Future[CallOutcome]) -> CallOutcome:
    if runner.cancelled():
        return CallOutcome(cancelled=True)
    error = runner.exception()
    if error is not None:
        return CallOutcome(invoke.tool.handler_failed(error))
    return runner.result()


async def _disconnected(receive: ASGIReceive) -> None:
    """Returns when the client has hung up (the request body is already read)."""
    while (await receive())["type"] != "http.disconnect":
        pass


class _EventStream:
    """A call's notifications on their way to its SSE response: ``emit`` (from the
    loop or a handler's thread) queues a frame and wakes the writer. A sync
    handler's last ``emit`` is queued before its result reaches the loop, so the
    writer, draining once the call has ended, sends everything before the result.
    Whatever is emitted after ``close`` (a handler past its timeout), or while
    ``MAX_QUEUED_NOTIFICATIONS`` wait, is dropped."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._frames: collections.deque[bytes] = collections.deque()
        self.ready = asyncio.Event()
        self._open = True

    def emit(self, frame: bytes) -> None:
        if not self._open or len(self._frames) >= MAX_QUEUED_NOTIFICATIONS:
            return  # closed, or the client is not reading: progress and logs are advisory
        self._frames.append(frame)
        try:
            self._loop.call_soon_threadsafe(self.ready.set)
        except RuntimeError:
            pass  # the loop closed while the handler ran: nobody is listening

    def wake(self) -> None:
        self.ready.set()

    def drain(self) -> list[bytes]:
        frames, queued = [], self._frames
        while queued:  # popleft, not copy-and-clear: a handler thread may append meanwhile
            frames.append(queued.popleft())
        return frames

    def close(self) -> None:
        self._open = False
        self._frames.clear()
