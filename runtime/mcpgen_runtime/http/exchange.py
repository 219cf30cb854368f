"""One JSON-RPC request over HTTP, through the server core: the answer as JSON or SSE.

``Exchange`` is built once per server and called once per POSTed request (the
ASGI app, ``app``, has checked the HTTP side and decoded the body). Each
request gets a fresh ``ServerConnection`` in the state the request implies (a
stateless server has no session): at the handshake revisions the version of the
``MCP-Protocol-Version`` header (``2025-03-26`` when absent, as the transport
says), at 2026-07-28 the request's own envelope. The core answers as over stdio;
task calls and ``tasks/*`` go to the task layer (``tasks``).

How the answer goes out:
- a frame the core answers at once, and a call that runs inline: JSON;
- a background call (see ``calls``): JSON, while the client's connection is
  watched: a client that hangs up cancels the call (``ctx.cancelled``, an async
  handler cancelled) and leaves nothing behind;
- a call whose handler declares ``ctx`` and whose request asked for progress (a
  ``progressToken``) or logs, from a client that accepts ``text/event-stream``
  (and no ``--json-response``): an SSE stream carrying the notifications in the
  order the handler sent them, then the result. Otherwise a ``ctx``'s
  notifications have nowhere to go and are dropped. At most
  ``MAX_QUEUED_NOTIFICATIONS`` wait while the client is slow to read; later ones
  are dropped until it catches up (the result is never dropped), so a client
  that does not read costs a bounded amount of memory (and ``guard``'s write
  deadline ends its connection).

Log levels: at 2026-07-28 the request's ``io.modelcontextprotocol/logLevel``
``_meta`` key (absent: no logs), as over stdio. At the handshake revisions the
same key when present, else every level: a stateless server cannot remember a
``logging/setLevel`` (accepted; it announces the ``logging`` capability).
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..protocol.constants import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    META_LOG_LEVEL,
    META_VERSION,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
)
from ..protocol.jsonrpc import INTERNAL_ERROR, error_response
from ..protocol.revisions import MODERN_VERSIONS
from ..server.context import LOG_LEVELS
from ..server.core import Invoke, SendFrame, ServerConnection
from ..server.tools import App, CallOutcome
from ..tasks.table import TaskTable
from .calls import Calls, run_invoke
from .tasks import TASK_METHODS, TaskLayer, TaskRequest

__all__ = [
    "DEFAULT_HANDSHAKE_HEADER",
    "JSON_HEADERS",
    "MAX_QUEUED_NOTIFICATIONS",
    "SSE_HEADERS",
    "Exchange",
    "modern_status",
    "send_json",
    "sse_event",
]

Message = dict[str, Any]
ASGISend = Callable[[Message], Awaitable[None]]
ASGIReceive = Callable[[], Awaitable[Message]]

# Notifications of one SSE call waiting for a client that reads slower than its
# handler sends: past this, progress and log notifications are dropped.
MAX_QUEUED_NOTIFICATIONS = 1024

# The revision a handshake-era request without MCP-Protocol-Version is taken for.
DEFAULT_HANDSHAKE_HEADER = "2025-03-26"

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
# The HTTP status of a 2026-07-28 JSON-RPC error, by code (others: 200).
_MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


def modern_status(frame: bytes) -> int:
    """The status of a 2026-07-28 answer: an error's by its code, else 200."""
    if b'"error":{"code":' not in frame:
        return 200
    try:
        message = json.loads(frame)
        return _MODERN_STATUS.get(message["error"]["code"], 200) if "error" in message else 200
    except (ValueError, KeyError, TypeError):
        return 200


async def send_json(send: ASGISend, frame: bytes, status: int = 200) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*JSON_HEADERS, (b"content-length", str(len(frame)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": frame})


def sse_event(frame: bytes) -> bytes:
    """One SSE ``message`` event carrying one JSON-RPC frame (its newline dropped)."""
    return b"event: message\r\ndata: " + frame.rstrip(b"\n") + b"\r\n\r\n"


class Exchange:
    """Answers POSTed JSON-RPC requests of one server process."""

    def __init__(self, app: App, calls: Calls, tasks: TaskLayer | None, *, json_only: bool) -> None:
        self.app = app
        self.calls = calls
        self.tasks = tasks
        self.json_only = json_only  # --json-response: never SSE

    def connection(
        self,
        message: Mapping[str, Any],
        modern: bool,
        version: str | None,
        scope: Mapping[str, Any],
    ) -> ServerConnection:
        """A core connection in the state this stateless request implies: with tasks
        served, its requestor (``http.identity``) and a table that creates no task."""
        if self.tasks is None:
            conn = ServerConnection(self.app, defer_checks=True)
        else:
            requestor = self.tasks.requestor(scope)
            conn = ServerConnection(
                self.app,
                defer_checks=True,
                tasks=TaskTable(max_tasks=None),
                requestor=requestor,
                tasks_listed=requestor is not None,
            )
        if not modern and message.get("method") != "initialize":
            conn.era = "legacy"
            conn.version = version or DEFAULT_HANDSHAKE_HEADER
            conn.log_level = _handshake_log_level(message.get("params"))
        return conn

    async def answer(
        self,
        message: Mapping[str, Any],
        header_version: str | None,
        sse_ok: bool,
        scope: Mapping[str, Any],
        receive: ASGIReceive,
        send: ASGISend,
    ) -> None:
        """Answer one request (``message`` has a valid id and a string method)."""
        modern = header_version in MODERN_VERSIONS
        conn = self.connection(message, modern, header_version, scope)
        method = message["method"]
        if self.tasks is not None and (method == "tools/call" or method in TASK_METHODS):
            frame = await self._task_answer(conn, message, scope)
            if frame is not None:
                await send_json(send, frame, modern_status(frame) if modern else 200)
                return
        actions = conn.receive_message(message)
        invoke = next((a for a in actions if isinstance(a, Invoke)), None)
        if invoke is None:
            frame = next((a.data for a in actions if isinstance(a, SendFrame)), None)
            if frame is None:
                frame = error_response(message["id"], INTERNAL_ERROR, "Internal error: no answer")
            await send_json(send, frame, modern_status(frame) if conn.era == "modern" else 200)
            return
        if invoke.runs_inline:
            frame = conn.respond(invoke, _inline(invoke))
            await send_json(send, frame)
            return
        context = invoke.context
        if context is not None and context.notifies and sse_ok and not self.json_only:
            await self._stream(conn, invoke, receive, send)
        else:
            await self._background(conn, invoke, receive, send)

    async def _task_answer(
        self, conn: ServerConnection, message: Mapping[str, Any], scope: Mapping[str, Any]
    ) -> bytes | None:
        """The task layer's answer, or ``None`` when the core answers (plain calls,
        and requests the core refuses before any task is looked at)."""
        assert self.tasks is not None
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return None  # the core's -32602
        meta = params.get("_meta")
        if conn.era == "legacy":
            if isinstance(meta, dict) and META_VERSION in meta:
                return None  # the core refuses the 2026-07-28 envelope on this era
        else:
            refused = conn.envelope_refusal(message["id"], meta)
            if refused is not None:
                return refused.data
            conn.era = "modern"
        conn._request_meta = meta if isinstance(meta, dict) else {}
        request = TaskRequest(message["id"], message["method"], params, scope)
        if request.method in TASK_METHODS:
            return await self.tasks.task_method(conn, request)
        tool, refusal = self.tasks.task_call(conn, request)
        if refusal is not None:
            return refusal
        if tool is None:
            return None
        return await self.tasks.start(conn, request, tool)

    async def _background(
        self, conn: ServerConnection, invoke: Invoke, receive: ASGIReceive, send: ASGISend
    ) -> None:
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
            return
        frames = conn.complete(invoke, _outcome(invoke, runner))
        if frames:
            await send_json(send, frames[0], modern_status(frames[0]) if invoke.modern else 200)

    async def _stream(
        self, conn: ServerConnection, invoke: Invoke, receive: ASGIReceive, send: ASGISend
    ) -> None:
        """A call with notifications: an SSE stream of them, then the result."""
        assert invoke.context is not None
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
                    return  # finally: the call is cancelled
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
        frames = conn.complete(invoke, _outcome(invoke, runner))
        body = sse_event(frames[0]) if frames else b""
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _handshake_log_level(params: Any) -> str:
    """The least severe level a handshake-era call's logs may have: the call's own
    ``_meta`` log-level key, else every level (see the module docstring)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    level = meta.get(META_LOG_LEVEL) if isinstance(meta, dict) else None
    return level if level in LOG_LEVELS else LOG_LEVELS[0]


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
