"""``Session``: the client over threads. A reader thread parses what the server writes
and wakes the waiting caller (a lock per request), so several threads may call tools on
one session at once; the protocol flows come from ``client.core`` and ``client.flows``.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Self, overload

from .._errors import McpError, ServerExited, Timeout
from ..transport.lines import ServeFunction, Transport
from ..transport.sync import InMemoryTransport, StdioTransport
from . import flows
from .asking import question_of
from .base import (
    MAX_WAIT,
    ProgressCallback,
    SessionState,
    T,
    identity,
)
from .core import Asked, Outcome, Response
from .effects import Liveness, Window
from .listing import ListedTool
from .task_state import TaskHandleBase, TaskState, TaskStatus

logger = logging.getLogger("mcpgen.client")


class _Waiter:
    """A one-shot future: the caller blocks on ``lock`` until the reader fills a
    field and releases it (a bare lock is the cheapest cross-thread wake-up)."""

    __slots__ = ("error", "failure", "lock", "result")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.failure: BaseException | None = None


class Session(SessionState[Transport, _Waiter]):
    """A synchronous MCP client session.

    A reader thread parses what the server writes and wakes the waiting caller,
    so several threads may call tools on one session at once.

    ``protocol="auto"`` (default) probes with ``server/discover`` and speaks the
    2026-07-28 stateless revision to a server that answers it, else falls back to
    the ``initialize`` handshake on any other answer or none (see ``ClientCore.negotiate``);
    a probe waits at most
    ``min(timeout, probe_timeout)`` seconds. ``"legacy"`` and ``"modern"`` skip
    the probe and speak that era only.
    """

    @classmethod
    def _stdio_transport(cls, argv: list[str], **options: Any) -> Transport:
        return StdioTransport(argv, **options)

    @classmethod
    def _in_memory_transport(cls, serve: ServeFunction) -> Transport:
        return InMemoryTransport(serve)

    @classmethod
    def _http_transport(cls, url: str, **options: Any) -> Any:
        # by name: a type checker never follows a client into httpx2 (the http extra)
        module = importlib.import_module("..transport.http.sync", __package__)
        return module.HttpTransport(url, **options)

    # -- lifecycle --------------------------------------------------------------------

    def connect(self) -> None:
        """Start the transport, agree on the protocol era, then check the contract;
        on any failure the server is stopped before the error propagates."""
        self._start_telemetry()
        self._adopt(self._drive(flows.connect(self)))

    def close(self) -> None:
        """Stop the server (close stdin, wait, terminate, kill); idempotent."""
        if self._core.closed:
            return
        self._core.closed = True
        self.transport.stop()
        self._stop_telemetry()

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- requests ----------------------------------------------------------------------

    def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send any request and return its result object (JSON-RPC error → ``ProtocolError``).
        On a 2026-07-28 connection the ``_meta`` envelope is added and the result
        must be ``resultType: "complete"``."""
        return self._traced(method, None, flows.request(self, method, params, timeout))

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification."""
        self._core.check_usable()
        self.transport.send(self._core.notification(method, params))

    def list_tools(self) -> list[ListedTool]:
        """Every tool the server lists, following ``nextCursor`` pages."""
        listed = self._traced("tools/list", None, flows.list_tools(self.server_id))
        self._mirror_headers(tool.raw for tool in listed)
        return listed

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        task: bool = False,
        max_total_timeout: float | None = None,
    ) -> dict[str, Any]:
        """Call a tool and return its ``CallToolResult``; ``isError`` → ``ToolError``,
        JSON-RPC error → ``ProtocolError``, no answer in time → cancel + ``Timeout``.

        ``on_progress`` receives the call's ``notifications/progress``. ``task=True``
        (for a tool whose contract requires tasks) runs it as a task where the
        server supports tasks and waits for its result. A server-made task is
        followed the same way; ``timeout`` bounds the whole wait and a task still
        running then is cancelled with ``tasks/cancel``. With ``max_total_timeout``,
        each progress notification starts ``timeout`` anew (a long call that keeps
        reporting is alive), up to ``max_total_timeout`` seconds in all.
        """
        return self._traced(
            "tools/call",
            name,
            flows.call_tool(self, name, arguments, timeout, on_progress, task, max_total_timeout),
        )

    @overload
    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[dict[str, Any]]: ...

    @overload
    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], T],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[T]: ...

    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[Any]:
        """Start a tool call as a task and return its handle at once; its
        ``result()`` passes the checked ``CallToolResult`` through ``convert``.

        2025-11-25: the call carries ``task: {ttl}`` when the server declares
        task-augmented ``tools/call``. 2026-07-28: the request declares the tasks
        extension and the server decides. A server that answers directly (no task)
        gives a handle that is already done (``task_id`` None); ``timeout`` bounds
        only the call that creates the task.
        """
        state = self._traced(
            "tools/call", name, flows.start_tool(self, name, arguments, timeout, on_progress)
        )
        return TaskHandle(self, state, convert or identity)

    # -- tasks (what a TaskHandle asks) ---------------------------------------------------

    def _task_status(self, state: TaskState) -> TaskStatus:
        return self._drive(flows.task_status(state))

    def _task_outcome(
        self,
        state: TaskState,
        deadline: float | None,
        cancel_on_timeout: bool,
        limit: float | None,
    ) -> dict[str, Any]:
        """See ``flows.task_outcome``."""
        return self._drive(
            flows.task_outcome(state, deadline, cancel_on_timeout, limit, self.timeout)
        )

    def _task_cancel(self, state: TaskState) -> TaskStatus:
        return self._drive(flows.task_cancel(state))

    # -- the flows' driver: the only I/O ----------------------------------------------

    def _traced(self, method: str, tool: str | None, flow: flows.Flow[T]) -> T:
        """``_drive`` as one operation of the telemetry (a span, a duration)."""
        telemetry = self._telemetry
        if telemetry is None:
            return self._drive(flow)
        with telemetry.operation(method, tool, self.protocol_version):
            return self._drive(flow)

    def _drive(self, flow: flows.Flow[T]) -> T:
        """Run a protocol flow (``client.flows``) with this session's threads."""
        return flows.run(flows.lowered(self, flow), self._effect)

    def _effect(self, effect: flows.Primitive) -> Any:
        if isinstance(effect, flows.Prepare):
            waiter = _Waiter()
            telemetry = self._telemetry
            params = effect.params if telemetry is None else telemetry.prepared(effect.params)
            request_id, line = self._core.request(
                effect.method, params, waiter, progress=effect.progress, tasks=effect.tasks
            )
            if telemetry is not None:
                telemetry.identify(request_id)
            return flows.Pending(request_id, line, waiter)
        if isinstance(effect, flows.Await):
            return self._exchange(effect)
        if isinstance(effect, flows.AskInput):
            return {key: self._ask(self._question(r)) for key, r in effect.requests.items()}
        if isinstance(effect, flows.Write):
            self.transport.send(effect.line)
        elif isinstance(effect, flows.WriteNowait):
            self._send_quietly(effect.line)
        elif isinstance(effect, flows.Sleep):
            time.sleep(effect.seconds)
        elif isinstance(effect, (flows.ProgressDone, flows.ProgressDrop)):
            self._progress_drop(effect.token)
        elif isinstance(effect, flows.Now):
            return time.monotonic()
        elif isinstance(effect, flows.Start):
            self.transport.start(self._on_line, self._on_close)
            self._core.connected = True
        elif isinstance(effect, flows.Close):
            self.close()
        return None

    def _exchange(self, effect: flows.Await) -> Outcome:
        """Send a registered request and wait ``limit`` seconds for its response."""
        request_id, waiter, limit = effect.pending.id, effect.pending.waiter, effect.limit
        if self._core.gone:
            # The reader already failed everything pending; this one came after.
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            self.transport.send(effect.pending.line)
        except BaseException:
            self._core.forget(request_id)
            raise
        try:
            answered = self._wait(waiter, limit, effect.liveness)
        except BaseException:  # KeyboardInterrupt while blocked: do not leave it pending
            self._abandon(request_id, "the caller was interrupted", effect.cancellable)
            raise
        if not answered:
            if self._core.forget(request_id) is None:
                waiter.lock.acquire()  # the response won the race; it is being delivered
            else:
                self._abandon(request_id, f"timed out after {limit:g}s", effect.cancellable)
                raise Timeout(f"{effect.label}: no answer within {limit:g}s{self._timeout_hint}")
        if waiter.failure is not None:
            raise waiter.failure
        return Outcome(waiter.result, waiter.error)

    @staticmethod
    def _wait(waiter: Any, limit: float, liveness: Liveness | None) -> bool:
        """Wait for the response ``limit`` seconds, or with ``liveness`` until ``limit``
        has passed without progress (at most ``liveness.longest``)."""
        if liveness is None:
            return bool(waiter.lock.acquire(True, min(max(limit, 0.0), MAX_WAIT)))
        window = Window(liveness, limit, time.monotonic())
        while True:
            left = window.left(time.monotonic())
            if left <= 0:
                return bool(waiter.lock.acquire(False))
            if waiter.lock.acquire(True, min(left, MAX_WAIT)):
                return True

    def _abandon(self, request_id: int, reason: str, cancellable: bool) -> None:
        line = self._core.cancel(request_id, reason)
        if cancellable:  # initialize MUST NOT be cancelled
            self._send_quietly(line)

    def _send_quietly(self, line: bytes) -> None:
        try:
            self.transport.send(line)
        except ServerExited:
            pass

    def _answer_asked(self, event: Asked) -> None:
        """On a thread of its own: ``on_input`` may wait for a person."""

        def answer() -> None:
            result = self._ask(question_of(event.params))
            self._send_quietly(self._core.answer_line(event.id, result))

        threading.Thread(target=answer, name="mcpgen-on-input", daemon=True).start()

    # -- what the reader thread wakes callers with -----------------------------------------

    def _deliver(self, response: Response[_Waiter]) -> None:
        waiter = response.waiter
        waiter.result = response.result
        waiter.error = response.error
        waiter.lock.release()

    def _fail(self, waiter: _Waiter, error: McpError | None) -> None:
        waiter.failure = error if error is not None else self.transport.exit_error()
        waiter.lock.release()


class TaskHandle(TaskHandleBase["Session", T]):
    """A tool call running as a task on the server (sync).

    ``status()`` asks the server for the task's state, ``result()`` waits until
    it ends and returns what the plain method would have returned (``ToolError``
    for an ``isError`` result, ``ProtocolError`` for a JSON-RPC error or a
    cancelled task), ``cancel()`` asks the server to stop it. When the server ran
    the call directly instead (no task support), ``task_id`` is None and the
    handle is already done.
    """

    __slots__ = ()

    def status(self) -> TaskStatus:
        """The task's current state, fetched with ``tasks/get``."""
        return self._session._task_status(self._state)

    def result(self, timeout: float | None = None, *, cancel_on_timeout: bool = True) -> T:
        """Wait until the task ends and return its converted result; ``timeout``
        seconds (None: no limit) then ``Timeout``, after cancelling the task
        unless ``cancel_on_timeout=False``."""
        outcome = self._session._task_outcome(
            self._state, self._deadline(timeout), cancel_on_timeout, timeout
        )
        return self._convert(outcome)

    def cancel(self) -> TaskStatus:
        """Ask the server to cancel the task (``tasks/cancel``) and return its state
        after the request (a task that already ended keeps its final state)."""
        return self._session._task_cancel(self._state)
