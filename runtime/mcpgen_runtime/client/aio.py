"""``AsyncSession``: the client on an asyncio event loop (a future per request); the
protocol flows come from ``client.core`` and ``client.flows``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Self, overload

from .._errors import McpError, ServerExited, Timeout
from ..transport.aio import AsyncInMemoryTransport, AsyncStdioTransport
from ..transport.lines import AsyncTransport, ServeFunction
from . import flows
from .asking import decided, declined, question_of
from .base import (
    AsyncProgressCallback,
    Progress,
    SessionState,
    T,
    identity,
)
from .core import Asked, Outcome, ProgressFunction, Response
from .effects import Liveness, Window
from .listing import ListedTool
from .task_state import NO_LIMIT, TaskHandleBase, TaskState, TaskStatus

logger = logging.getLogger("mcpgen.client")


class AsyncSession(SessionState[AsyncTransport, "asyncio.Future[Response[Any]]"]):
    """The asyncio twin of ``Session``, method for method."""

    @classmethod
    def _stdio_transport(cls, argv: list[str], **options: Any) -> AsyncTransport:
        return AsyncStdioTransport(argv, **options)

    @classmethod
    def _in_memory_transport(cls, serve: ServeFunction) -> AsyncTransport:
        return AsyncInMemoryTransport(serve)

    @classmethod
    def _http_transport(cls, url: str, **options: Any) -> Any:
        # by name: a type checker never follows a client into httpx2 (the http extra)
        module = importlib.import_module("..transport.http.aio", __package__)
        return module.AsyncHttpTransport(url, **options)

    async def connect(self) -> None:
        """See ``Session.connect``."""
        self._start_telemetry()
        self._adopt(await self._drive(flows.connect(self)))

    async def close(self) -> None:
        """See ``Session.close``."""
        if self._core.closed:
            return
        self._core.closed = True
        await self.transport.stop()
        self._stop_telemetry()

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """See ``Session.request``."""
        return await self._traced(method, None, flows.request(self, method, params, timeout))

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """See ``Session.notify``."""
        self._core.check_usable()
        await self.transport.send(self._core.notification(method, params))

    async def list_tools(self) -> list[ListedTool]:
        """See ``Session.list_tools``."""
        listed = await self._traced("tools/list", None, flows.list_tools(self.server_id))
        self._mirror_headers(tool.raw for tool in listed)
        return listed

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
        task: bool = False,
        max_total_timeout: float | None = None,
    ) -> dict[str, Any]:
        """See ``Session.call_tool``; ``on_progress`` may also be a coroutine function."""
        return await self._traced(
            "tools/call",
            name,
            flows.call_tool(self, name, arguments, timeout, on_progress, task, max_total_timeout),
        )

    @overload
    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
    ) -> AsyncTaskHandle[dict[str, Any]]: ...

    @overload
    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], T],
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
    ) -> AsyncTaskHandle[T]: ...

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
    ) -> AsyncTaskHandle[Any]:
        """See ``Session.start_tool``."""
        state = await self._traced(
            "tools/call", name, flows.start_tool(self, name, arguments, timeout, on_progress)
        )
        return AsyncTaskHandle(self, state, convert or identity)

    # -- progress -----------------------------------------------------------------------

    def _run_progress(self, token: Any, callback: ProgressFunction, arguments: Progress) -> object:
        """A coroutine callback runs as a task, awaited when the call ends."""
        outcome = super()._run_progress(token, callback, arguments)
        if inspect.isawaitable(outcome):
            task = asyncio.ensure_future(outcome)
            running = self._progress_tasks.setdefault(token, set())
            running.add(task)
            task.add_done_callback(_progress_task_done)
            task.add_done_callback(running.discard)
        return outcome

    async def _progress_done(self, token: Any) -> None:
        """Stop routing ``token``'s progress and let its running callbacks finish."""
        if token is None:
            return
        super()._progress_drop(token)
        running = self._progress_tasks.pop(token, None)
        if running:
            await asyncio.gather(*running, return_exceptions=True)

    def _progress_drop(self, token: Any) -> None:
        """Stop routing ``token``'s progress and cancel its running callbacks (the
        call failed or was cancelled: nobody waits for them)."""
        if token is None:
            return
        super()._progress_drop(token)
        for task in self._progress_tasks.pop(token, ()):
            task.cancel()

    # -- tasks (what an AsyncTaskHandle asks) -------------------------------------------

    async def _task_status(self, state: TaskState) -> TaskStatus:
        return await self._drive(flows.task_status(state))

    async def _task_outcome(
        self,
        state: TaskState,
        deadline: float | None,
        cancel_on_timeout: bool,
        limit: float | None,
    ) -> dict[str, Any]:
        """See ``flows.task_outcome``."""
        return await self._drive(
            flows.task_outcome(state, deadline, cancel_on_timeout, limit, self.timeout)
        )

    async def _task_cancel(self, state: TaskState) -> TaskStatus:
        return await self._drive(flows.task_cancel(state))

    # -- the flows' driver: the only I/O ----------------------------------------------

    async def _traced(self, method: str, tool: str | None, flow: flows.Flow[T]) -> T:
        """See ``Session._traced``."""
        telemetry = self._telemetry
        if telemetry is None:
            return await self._drive(flow)
        with telemetry.operation(method, tool, self.protocol_version):
            return await self._drive(flow)

    async def _drive(self, flow: flows.Flow[T]) -> T:
        """Run a protocol flow (``client.flows``) on this session's event loop."""
        # flows.relay's loop with an await in place of ``yield from``: a generator
        # cannot await, so the asynchronous driver is the one place it is written again
        steps = flows.lowered(self, flow)
        value: Any = None
        error: BaseException | None = None
        while True:
            done, effect = flows.resume(steps, value, error)
            if done:
                result: T = effect
                return result
            value, error = None, None
            try:
                value = await self._effect(effect)
            except BaseException as exc:  # noqa: BLE001  (thrown into the flow, which may clean up)
                error = exc

    async def _effect(self, effect: flows.Primitive) -> Any:
        if isinstance(effect, flows.Prepare):
            future: asyncio.Future[Response[Any]] = asyncio.get_running_loop().create_future()
            telemetry = self._telemetry
            params = effect.params if telemetry is None else telemetry.prepared(effect.params)
            request_id, line = self._core.request(
                effect.method, params, future, progress=effect.progress, tasks=effect.tasks
            )
            if telemetry is not None:
                telemetry.identify(request_id)
            return flows.Pending(request_id, line, future)
        if isinstance(effect, flows.Await):
            return await self._exchange(effect)
        if isinstance(effect, flows.AskInput):
            return {k: await self._ask_async(self._question(r)) for k, r in effect.requests.items()}
        if isinstance(effect, flows.Write):
            await self.transport.send(effect.line)
        elif isinstance(effect, flows.WriteNowait):
            self._send_quietly(effect.line)
        elif isinstance(effect, flows.Sleep):
            await asyncio.sleep(effect.seconds)
        elif isinstance(effect, flows.ProgressDone):
            await self._progress_done(effect.token)
        elif isinstance(effect, flows.ProgressDrop):
            self._progress_drop(effect.token)
        elif isinstance(effect, flows.Now):
            return time.monotonic()
        elif isinstance(effect, flows.Start):
            await self.transport.start(self._on_line, self._on_close)
            self._core.connected = True
        elif isinstance(effect, flows.Close):
            await self.close()
        return None

    async def _ask_async(self, question: tuple[str, dict[str, Any]] | None) -> dict[str, Any]:
        """``on_input``'s answer (a coroutine function's too), checked."""
        if question is None or self.on_input is None:
            return declined()
        message, schema = question
        try:
            returned = self.on_input(message, schema)
            if inspect.isawaitable(returned):
                returned = await returned
        except Exception:
            logger.exception("on_input failed; declining")
            return declined()
        return decided(returned, schema)

    def _answer_asked(self, event: Asked) -> None:
        """As a task on the loop: ``on_input`` may wait for a person."""

        async def answer() -> None:
            result = await self._ask_async(question_of(event.params))
            self._send_quietly(self._core.answer_line(event.id, result))

        task = asyncio.get_running_loop().create_task(answer())
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _exchange(self, effect: flows.Await) -> Outcome:
        """See ``Session._exchange``."""
        request_id, future, limit = effect.pending.id, effect.pending.waiter, effect.limit
        if self._core.gone:
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            await self.transport.send(effect.pending.line)
        except BaseException:
            self._core.forget(request_id)
            raise
        try:
            response: Response[Any] = await _answer(future, limit, effect.liveness)
        except TimeoutError:
            self._abandon(request_id, f"timed out after {limit:g}s", effect.cancellable)
            raise Timeout(
                f"{effect.label}: no answer within {limit:g}s{self._timeout_hint}"
            ) from None
        except asyncio.CancelledError:
            self._abandon(request_id, "the caller was cancelled", effect.cancellable)
            raise
        return Outcome(response.result, response.error)

    def _abandon(self, request_id: int, reason: str, cancellable: bool) -> None:
        line = self._core.cancel(request_id, reason)
        if cancellable and not self._core.gone:
            self._send_quietly(line)

    def _send_quietly(self, line: bytes) -> None:
        try:
            self.transport.send_nowait(line)
        except ServerExited:
            pass

    def _deliver(self, response: Response[asyncio.Future[Response[Any]]]) -> None:
        future = response.waiter
        if not future.done():
            future.set_result(response)

    def _fail(self, waiter: asyncio.Future[Response[Any]], error: McpError | None) -> None:
        if not waiter.done():
            waiter.set_exception(error if error is not None else self.transport.exit_error())


async def _answer(future: Any, limit: float, liveness: Liveness | None) -> Any:
    """The response within ``limit`` seconds (none: ``NO_LIMIT``), or with ``liveness``
    until ``limit`` has passed without progress (at most ``liveness.longest``);
    ``TimeoutError`` past it."""
    if liveness is None:
        async with asyncio.timeout(None if limit == NO_LIMIT else max(limit, 0.0)):
            return await future
    window = Window(liveness, limit, time.monotonic())
    while True:
        left = window.left(time.monotonic())
        if left <= 0:
            raise TimeoutError
        try:
            return await asyncio.wait_for(asyncio.shield(future), left)
        except TimeoutError:
            continue  # progress may have moved the deadline: look again


def _progress_task_done(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("the progress callback failed", exc_info=task.exception())


class AsyncTaskHandle(TaskHandleBase["AsyncSession", T]):
    """The asyncio twin of ``TaskHandle``."""

    __slots__ = ()

    async def status(self) -> TaskStatus:
        """See ``TaskHandle.status``."""
        return await self._session._task_status(self._state)

    async def result(self, timeout: float | None = None, *, cancel_on_timeout: bool = True) -> T:
        """See ``TaskHandle.result``."""
        outcome = await self._session._task_outcome(
            self._state, self._deadline(timeout), cancel_on_timeout, timeout
        )
        return self._convert(outcome)

    async def cancel(self) -> TaskStatus:
        """See ``TaskHandle.cancel``."""
        return await self._session._task_cancel(self._state)
