"""The HTTP call path: one ``tools/call`` through the runtime (``run_call``), with
nothing slow on the event loop. Argument checks and result conversion run on
bounded daemon threads (``_ThreadSlots``, ``_Threads``), sync handlers on a daemon
thread each, async handlers on the loop; a handler's ``Context`` sends its progress
and log notifications through the SDK session in order (``_Notifier``). See
``http.server``'s docstring for the rules; this module imports no SDK at import time.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import ToolError
from ..protocol.constants import META_LOG_LEVEL
from ..protocol.revisions import MODERN_VERSIONS
from ..server.context import LOG_LEVELS, Context
from ..server.tools import CallOutcome, ToolRuntime

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.session import ServerSession

__all__ = ["run_call"]

_T = TypeVar("_T")


async def run_call(
    tool: ToolRuntime,
    arguments: Mapping[str, Any],
    threads: _Threads | None = None,
    context: Context | None = None,
) -> CallOutcome:
    """One ``tools/call`` through the runtime: validate, run (bounded by the tool's
    timeout), convert. Bad arguments and ``ToolError`` become ``isError`` results.
    ``context`` reaches handlers that declare ``ctx``; a timeout cancels it.

    Only the async handler itself runs on the event loop: checking the arguments,
    a sync handler and converting the result run on bounded daemon threads."""
    threads = threads or _Threads(checks=_ThreadSlots(1), handlers=_ThreadSlots(1))
    try:
        args = await threads.checks.run(lambda: tool.check_arguments(arguments))
    except ToolError as exc:
        return CallOutcome({"content": list(exc.content), "isError": True})
    try:
        return await asyncio.wait_for(_run_handler(tool, args, threads, context), tool.binding.timeout)
    except TimeoutError:
        if context is not None:
            context.cancel()
        return CallOutcome(tool.timed_out())


async def _run_handler(
    tool: ToolRuntime,
    args: tuple[Any, ...] | dict[str, Any],
    threads: _Threads,
    context: Context | None,
) -> CallOutcome:
    if not tool.binding.is_async:
        # on timeout or disconnect the thread cannot be stopped: it finishes on its
        # own (ctx.cancelled tells it to hurry), keeps its slot till then, and its
        # result is dropped
        return await threads.handlers.run(lambda: tool.call_sync(args, context))
    step = await tool.await_handler(args, context)
    if isinstance(step, CallOutcome):
        return step
    return await threads.checks.run(lambda: tool.finish(step.value))


async def _call_with_context(
    tool: ToolRuntime,
    arguments: Mapping[str, Any],
    threads: _Threads,
    request: ServerRequestContext[Any],
    logger: str,
) -> CallOutcome:
    """``run_call`` for a handler that declares ``ctx``: its notifications go out on
    this request's stream before the result, and an SDK cancellation reaches it."""
    notifier = _Notifier(request.session, request.request_id)
    version = request.protocol_version
    context = Context(
        request_id=request.request_id,
        progress_token=_progress_token(request.params),
        emit=notifier.emit,
        log_level=_log_level(version, request.meta),
        logger=logger,
        progress_messages=version != "2024-11-05",
    )
    try:
        outcome = await run_call(tool, arguments, threads, context)
        await notifier.flush()
    except BaseException:
        # The SDK cancelled the call (client gone, notifications/cancelled, shutdown):
        # a sync handler still running sees ctx.cancelled; nothing more is sent.
        context.cancel()
        notifier.abandon()
        raise
    return outcome


def _progress_token(params: Mapping[str, Any] | None) -> str | int | None:
    """``params._meta.progressToken`` as the SDK reads it (a string or an integer)."""
    meta = (params or {}).get("_meta")
    token = meta.get("progressToken") if isinstance(meta, Mapping) else None
    if isinstance(token, str | int) and not isinstance(token, bool):
        return token
    return None


def _log_level(version: str, meta: Mapping[str, Any] | None) -> str | None:
    """The least severe level this call's logs may have; ``None``: send no logs.

    The request's ``io.modelcontextprotocol/logLevel`` ``_meta`` key when it names
    a level. Without one: nothing at 2026-07-28 (log delivery is a per-request
    opt-in), every level at the handshake revisions (the SDK's rule there; a
    stateless server cannot remember a ``logging/setLevel``).
    """
    level = (meta or {}).get(META_LOG_LEVEL)
    if level in LOG_LEVELS:
        return str(level)
    return None if version in MODERN_VERSIONS else LOG_LEVELS[0]


class _Notifier:
    """A ``Context``'s ``emit`` for one call: hands its notifications to the SDK, in
    order, on the request's response stream.

    ``emit`` may be called from the event loop (async handlers) or from a handler's
    daemon thread; either way the notification is queued on the loop and one sender
    task passes the queue to the SDK. A sync handler's last ``emit`` is queued
    before its result reaches the loop (both travel by ``call_soon_threadsafe``), so
    ``flush`` after the call sends everything the handler emitted, before the SDK
    writes the result. Whatever is emitted after ``flush`` or ``abandon`` (a handler
    thread still running past its timeout) is dropped.
    """

    def __init__(self, session: ServerSession, request_id: Any) -> None:
        self._session = session
        self._request_id = request_id
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None
        self._open = True

    def emit(self, frame: bytes) -> None:
        """``Context``'s emit: one encoded JSON-RPC notification, from any thread."""
        if not self._open:
            return
        if threading.get_ident() == self._loop_thread:
            self._put(frame)
            return
        try:
            self._loop.call_soon_threadsafe(self._put, frame)
        except RuntimeError:
            pass  # the loop closed while the handler ran: nobody is listening

    def _put(self, frame: bytes) -> None:
        if not self._open:
            return
        self._queue.put_nowait(json.loads(frame))
        if self._sender is None:
            self._sender = self._loop.create_task(self._send_all())

    async def _send_all(self) -> None:
        while (message := await self._queue.get()) is not None:
            try:
                await self._forward(message)
            except Exception as exc:  # noqa: BLE001 - a lost notification never fails the call
                print(
                    f"mcpgen: dropped {message.get('method')} for request "
                    f"{self._request_id!r}: {exc}",
                    file=sys.stderr,
                    flush=True,
                )

    async def _forward(self, message: Mapping[str, Any]) -> None:
        from mcp_types import LoggingMessageNotification, LoggingMessageNotificationParams

        params: Mapping[str, Any] = message.get("params") or {}
        method = message.get("method")
        if method == "notifications/progress":
            # the SDK's request-scoped progress: this request's token, its stream
            await self._session.report_progress(
                params["progress"], params.get("total"), params.get("message")
            )
        elif method == "notifications/message":
            notification = LoggingMessageNotification(
                params=LoggingMessageNotificationParams(
                    level=params["level"], data=params.get("data"), logger=params.get("logger")
                )
            )
            # related_request_id: on this request's response stream, not a standalone one
            await self._session.send_notification(notification, related_request_id=self._request_id)

    async def flush(self) -> None:
        """Send everything emitted so far; later emits are dropped."""
        self._open = False
        if self._sender is not None:
            self._queue.put_nowait(None)
            await self._sender

    def abandon(self) -> None:
        """Drop whatever is still queued (the call was cancelled)."""
        self._open = False
        if self._sender is not None:
            self._sender.cancel()


class _ThreadSlots:
    """At most ``size`` daemon threads at once running blocking work for the event
    loop. A slot is taken before the thread starts and given back when the thread
    ends, not when its waiter stops waiting (a timeout, a client gone): the
    thread count stays bounded whatever the callers do. The semaphore is created
    lazily, for the event loop that first uses it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._semaphore: asyncio.Semaphore | None = None

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.size)
        return self._semaphore

    async def run(self, fn: Callable[[], _T]) -> _T:
        """``fn()`` on a daemon thread of its own, once a slot is free."""
        semaphore = self.semaphore
        await semaphore.acquire()
        try:
            future = _in_daemon_thread(fn, semaphore.release)
        except BaseException:
            semaphore.release()
            raise
        return await future


@dataclass(frozen=True)
class _Threads:
    """The two bounds of one server: argument checks and result conversions
    (short CPU work), and sync handlers (which may block for long)."""

    checks: _ThreadSlots
    handlers: _ThreadSlots


def _in_daemon_thread(fn: Callable[[], _T], on_exit: Callable[[], None]) -> asyncio.Future[_T]:
    """Run ``fn()`` on a new daemon thread; a future on the running loop.
    ``on_exit`` runs on the loop once the thread is done, whether or not anyone
    still waits for the future.

    Not ``asyncio.to_thread``/anyio: their pools are joined at interpreter exit,
    so one hung handler would keep a stopped server from exiting."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def settle(box: list[_T], error: BaseException | None) -> None:
        on_exit()
        if future.done():
            return  # the waiter gave up (timeout, cancellation)
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(box[0])

    def work() -> None:
        box: list[_T] = []
        error: BaseException | None = None
        try:
            box.append(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiter
            error = exc
        try:
            loop.call_soon_threadsafe(settle, box, error)
        except RuntimeError:
            pass  # the loop closed while the thread ran: nobody is waiting

    threading.Thread(target=work, name="mcpgen-http-worker", daemon=True).start()
    return future
