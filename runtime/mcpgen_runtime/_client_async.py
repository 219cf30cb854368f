"""``AsyncSession``: the client on an asyncio event loop (a future per request); the
protocol flows come from ``_client_core`` and ``_client_flows``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import shlex
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, overload

from . import _client_flows as flows
from ._client_base import (
    DEFAULT_PROBE_TIMEOUT,
    AsyncProgressCallback,
    AsyncTaskHandle,
    NotificationHandler,
    T,
    Verify,
    _argv,
    _check_contract,
    _identity,
    _SessionState,
)
from ._client_core import (
    ClientCore,
    Discover,
    Outcome,
    ProtocolChoice,
    Reply,
    Response,
    SendLine,
    Step,
    error_from_response,
)
from ._client_listing import ListedTool
from ._client_results import _checked_tool_result
from ._client_tasks import (
    _NO_LIMIT,
    TaskStatus,
    _requires_tasks,
    _TaskState,
)
from ._errors import (
    McpError,
    ServerExited,
    Timeout,
)
from ._transport import (
    DEFAULT_MAX_MESSAGE_BYTES,
    AsyncInMemoryTransport,
    AsyncStdioTransport,
    AsyncTransport,
    ServeFunction,
)

logger = logging.getLogger("mcpgen.client")


class AsyncSession(_SessionState):
    """The asyncio twin of ``Session``, method for method."""

    def __init__(
        self,
        transport: AsyncTransport,
        *,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str,
        client_info: Mapping[str, Any] | None = None,
        on_notification: NotificationHandler | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    ) -> None:
        super().__init__(
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            on_notification=on_notification,
            protocol=protocol,
            probe_timeout=probe_timeout,
        )
        self.transport = transport
        self._core: ClientCore[asyncio.Future[Response[Any]]] = ClientCore(client_info)
        self._gone = False
        # async progress callbacks still running, by progress token
        self._progress_tasks: dict[Any, set[asyncio.Task[Any]]] = {}

    def _era_core(self) -> ClientCore[Any]:
        return self._core

    @classmethod
    def stdio(
        cls,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> AsyncSession:
        """See ``Session.stdio``."""
        argv = _argv(command)
        return cls(
            AsyncStdioTransport(argv, env=env, cwd=cwd, max_message_bytes=max_message_bytes),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id if server_id is not None else shlex.join(argv),
            protocol=protocol,
            probe_timeout=probe_timeout,
        )

    @classmethod
    def in_memory(
        cls,
        serve: ServeFunction,
        *,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str = "in-memory",
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    ) -> AsyncSession:
        """See ``Session.in_memory``."""
        return cls(
            AsyncInMemoryTransport(serve),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            protocol=protocol,
            probe_timeout=probe_timeout,
        )

    async def connect(self) -> None:
        """See ``Session.connect``."""
        if self._connected or self._closed:
            if self._closed:
                raise RuntimeError("a closed session cannot be reconnected")
            return
        await self.transport.start(self._on_line, self._on_close)
        self._connected = True
        try:
            await self._open()
            if self.verify != "off":
                self.contract_warnings = _check_contract(
                    self.contract, await self.list_tools(), self.protocol_version, self.verify
                )
        except BaseException:
            await self.close()
            raise

    async def _open(self) -> None:
        # See Session._open.
        steps: Generator[Step, Outcome | None, None] = self._core.negotiate(self.protocol)
        outcome: Outcome | None = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration:
                break
            outcome = await self._run_step(step)
        self._adopt_handshake(self._core)

    async def _run_step(self, step: Step) -> Outcome | None:
        if isinstance(step, SendLine):
            await self.transport.send(step.line)
            return None
        future = self._new_future()
        if isinstance(step, Discover):
            request_id, line = self._core.discover_request(future, step.version)
            try:
                return await self._exchange(
                    request_id,
                    line,
                    future,
                    "server/discover",
                    self._probe_limit(step),
                    cancellable=not step.probe,
                )
            except Timeout:
                if not step.probe:
                    raise
                logger.info("%s: no answer to server/discover; trying initialize", self.server_id)
                return Outcome()
        request_id, line = self._core.initialize_request(future)
        return await self._exchange(
            request_id, line, future, "initialize", self.timeout, cancellable=False
        )

    async def close(self) -> None:
        """See ``Session.close``."""
        if self._closed:
            return
        self._closed = True
        await self.transport.stop()

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
        return await self._request(method, params, timeout)

    async def _request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        timeout: float | None,
        allowed: frozenset[str] = frozenset({"complete"}),
    ) -> dict[str, Any]:
        self._check_usable()
        future = self._new_future()
        request_id, line = self._core.request(method, params, future)
        result = await self._wait(request_id, line, future, method, timeout)
        self._core.result_type(result, method, allowed)
        return result

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """See ``Session.notify``."""
        self._check_usable()
        await self.transport.send(self._core.notification(method, params))

    async def list_tools(self) -> list[ListedTool]:
        """See ``Session.list_tools``."""
        return await self._drive(flows.list_tools(self.server_id))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
        task: bool = False,
    ) -> dict[str, Any]:
        """See ``Session.call_tool``; ``on_progress`` may also be a coroutine function."""
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        started = await self._start_call(name, arguments, limit, on_progress, task)
        if isinstance(started, _TaskState):
            return await self._task_outcome(started, deadline, True, limit)
        return _checked_tool_result(started)

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
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        started = await self._start_call(name, arguments, limit, on_progress, True)
        if not isinstance(started, _TaskState):
            started = _TaskState(name, self._core.era or "legacy", final=started)
        return AsyncTaskHandle(self, started, convert or _identity)

    async def _start_call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        limit: float,
        on_progress: AsyncProgressCallback | None,
        as_task: bool,
    ) -> dict[str, Any] | _TaskState:
        """See ``Session._start_call``."""
        legacy_task = as_task and self._legacy_tasks()
        label = f"tools/call {name!r}"
        future = self._new_future()
        request_id, line = self._core.request(
            "tools/call",
            self._call_params(name, arguments, legacy_task),
            future,
            progress=on_progress is not None,
            tasks=as_task,
        )
        token = request_id if on_progress is not None else None
        if on_progress is not None:
            self._progress[request_id] = on_progress
        try:
            outcome = await self._exchange(request_id, line, future, label, limit)
            if outcome.error is not None:
                if not as_task and _requires_tasks(outcome.error):
                    self._progress_drop(request_id)
                    return await self._start_call(name, arguments, limit, on_progress, True)
                raise error_from_response(outcome.error, label)
            assert outcome.result is not None
            state = self._started(name, outcome.result, legacy_task, token)
        except BaseException:
            self._progress_drop(request_id)
            raise
        if state is None or state.settled:
            await self._progress_done(request_id)
        return outcome.result if state is None else state

    # -- progress -----------------------------------------------------------------------

    def _run_progress(
        self,
        token: Any,
        callback: Callable[[float, float | None, str | None], object],
        arguments: tuple[float, float | None, str | None],
    ) -> None:
        try:
            outcome = callback(*arguments)
        except Exception:
            logger.exception("the progress callback failed")
            return
        if inspect.isawaitable(outcome):
            task = asyncio.ensure_future(outcome)
            running = self._progress_tasks.setdefault(token, set())
            running.add(task)
            task.add_done_callback(_progress_task_done)
            task.add_done_callback(running.discard)

    async def _progress_done(self, token: Any) -> None:
        """Stop routing ``token``'s progress and let its running callbacks finish."""
        if token is None:
            return
        self._progress.pop(token, None)
        running = self._progress_tasks.pop(token, None)
        if running:
            await asyncio.gather(*running, return_exceptions=True)

    def _progress_drop(self, token: Any) -> None:
        """Stop routing ``token``'s progress and cancel its running callbacks (the
        call failed or was cancelled: nobody waits for them)."""
        if token is None:
            return
        self._progress.pop(token, None)
        for task in self._progress_tasks.pop(token, ()):
            task.cancel()

    # -- tasks ------------------------------------------------------------------------

    async def _task_status(self, state: _TaskState) -> TaskStatus:
        return await self._drive(flows.task_status(state))

    async def _task_outcome(
        self,
        state: _TaskState,
        deadline: float | None,
        cancel_on_timeout: bool,
        limit: float | None,
    ) -> dict[str, Any]:
        """See ``flows.task_outcome``; a waiter cancelled by its caller cancels
        the task too (unless told not to), without waiting for the ack."""
        try:
            return await self._drive(
                flows.task_outcome(state, deadline, cancel_on_timeout, limit, self.timeout)
            )
        except asyncio.CancelledError:
            if cancel_on_timeout and not state.settled:
                self._cancel_nowait(state)
            raise

    async def _task_cancel(self, state: _TaskState) -> TaskStatus:
        return await self._drive(flows.task_cancel(state))

    # -- the flows' driver ------------------------------------------------------------

    async def _drive(self, flow: flows.Flow[T]) -> T:
        """Run a protocol flow (``_client_flows``) on this session's event loop."""
        value: Any = None
        error: Exception | None = None
        while True:
            try:
                effect = flow.send(value) if error is None else flow.throw(error)
            except StopIteration as stop:
                result: T = stop.value
                return result
            value, error = None, None
            try:
                value = await self._effect(effect)
            except McpError as exc:  # handed to the flow, which may catch it
                error = exc

    async def _effect(self, effect: flows.Effect) -> Any:
        if isinstance(effect, flows.Request):
            return await self._request(
                effect.method, effect.params, effect.timeout, effect.allowed
            )
        if isinstance(effect, flows.Exchange):
            future = self._new_future()
            request_id, line = self._core.request(effect.method, effect.params, future)
            return await self._exchange(
                request_id, line, future, effect.label, effect.timeout, cancellable=False
            )
        if isinstance(effect, flows.Sleep):
            await asyncio.sleep(effect.seconds)
        elif isinstance(effect, flows.ProgressDone):
            await self._progress_done(effect.token)
        elif isinstance(effect, flows.Usable):
            self._check_usable()
        elif isinstance(effect, flows.Connected):
            return not (self._gone or self._closed)
        return None

    def _cancel_nowait(self, state: _TaskState) -> None:
        """Send ``tasks/cancel`` and forget it (from a cancelled coroutine)."""
        self._progress_drop(state.token)
        if state.task_id is None or self._gone or self._closed:
            return
        request_id, line = self._core.request(
            "tasks/cancel", {"taskId": state.task_id}, self._new_future()
        )
        self._core.forget(request_id)  # its ack, if any, is dropped as late
        try:
            self.transport.send_nowait(line)
        except ServerExited:
            pass

    # -- waiting ----------------------------------------------------------------------

    def _new_future(self) -> asyncio.Future[Response[Any]]:
        return asyncio.get_running_loop().create_future()

    async def _wait(
        self,
        request_id: int,
        line: bytes,
        future: asyncio.Future[Response[Any]],
        label: str,
        timeout: float | None,
        *,
        cancellable: bool = True,
    ) -> dict[str, Any]:
        limit = self.timeout if timeout is None else timeout
        outcome = await self._exchange(
            request_id, line, future, label, limit, cancellable=cancellable
        )
        if outcome.error is not None:
            raise error_from_response(outcome.error, label)
        assert outcome.result is not None
        return outcome.result

    async def _exchange(
        self,
        request_id: int,
        line: bytes,
        future: asyncio.Future[Response[Any]],
        label: str,
        limit: float,
        *,
        cancellable: bool = True,
    ) -> Outcome:
        """See ``Session._exchange``."""
        if self._gone:
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            await self.transport.send(line)
        except BaseException:
            self._core.forget(request_id)
            raise
        try:
            async with asyncio.timeout(None if limit == _NO_LIMIT else max(limit, 0.0)):
                response = await future
        except TimeoutError:
            self._abandon(request_id, f"timed out after {limit:g}s", cancellable)
            raise Timeout(f"{label}: no answer within {limit:g}s") from None
        except asyncio.CancelledError:
            self._abandon(request_id, "the caller was cancelled", cancellable)
            raise
        return Outcome(response.result, response.error)

    def _abandon(self, request_id: int, reason: str, cancellable: bool) -> None:
        line = self._core.cancel(request_id, reason)
        if cancellable and not self._gone:
            try:
                self.transport.send_nowait(line)
            except ServerExited:
                pass

    def _on_line(self, line: bytes) -> None:
        for event in self._core.receive(line):
            if isinstance(event, Response):
                future = event.waiter
                if not future.done():
                    future.set_result(event)
            elif isinstance(event, Reply):
                try:
                    self.transport.send_nowait(event.line)
                except ServerExited:
                    pass
            else:
                self._notify(event)

    def _on_close(self) -> None:
        self._gone = True
        for future in self._core.fail_all():
            if not future.done():
                future.set_exception(self.transport.exit_error())


def _progress_task_done(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("the progress callback failed", exc_info=task.exception())
