"""``Session``: the client over threads. A reader thread parses what the server writes
and wakes the waiting caller (a lock per request), so several threads may call tools on
one session at once; the protocol flows come from ``_client_core`` and ``_client_flows``.
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, overload

from . import _client_flows as flows
from ._client_base import (
    _MAX_WAIT,
    DEFAULT_PROBE_TIMEOUT,
    NotificationHandler,
    ProgressCallback,
    T,
    TaskHandle,
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
    InMemoryTransport,
    ServeFunction,
    StdioTransport,
    Transport,
)

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


class Session(_SessionState):
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

    def __init__(
        self,
        transport: Transport,
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
        self._core: ClientCore[_Waiter] = ClientCore(client_info)
        self._gone = False  # set once the server side ended; no new request may wait

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
    ) -> Session:
        """A session with a server run as a child process (a ``str`` command is
        split with ``shlex``); ``server_id`` defaults to the command line.

        ``env=None`` inherits this process's environment; a mapping *replaces* it,
        as with ``subprocess`` (merge ``os.environ`` yourself to extend it). When
        that mapping has no ``PATH``, the program is still looked up on ours.

        ``max_message_bytes`` bounds one line from the server (16 MiB by default,
        the server's own default): a longer one is never buffered whole; it fails
        every pending and later call with ``ProtocolError`` (``reason``
        ``"message_too_large"``) and the server is stopped.
        """
        argv = _argv(command)
        return cls(
            StdioTransport(argv, env=env, cwd=cwd, max_message_bytes=max_message_bytes),
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
    ) -> Session:
        """A session with a server running in this process (see ``InMemoryTransport``)."""
        return cls(
            InMemoryTransport(serve),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            protocol=protocol,
            probe_timeout=probe_timeout,
        )

    # -- lifecycle --------------------------------------------------------------------

    def connect(self) -> None:
        """Start the transport, agree on the protocol era, then check the contract;
        on any failure the server is stopped before the error propagates."""
        if self._connected or self._closed:
            if self._closed:
                raise RuntimeError("a closed session cannot be reconnected")
            return
        self.transport.start(self._on_line, self._on_close)
        self._connected = True
        try:
            self._open()
            if self.verify != "off":
                self.contract_warnings = _check_contract(
                    self.contract, self.list_tools(), self.protocol_version, self.verify
                )
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        # ClientCore.negotiate decides; this loop only runs the steps it yields.
        steps: Generator[Step, Outcome | None, None] = self._core.negotiate(self.protocol)
        outcome: Outcome | None = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration:
                break
            outcome = self._run_step(step)
        self._adopt_handshake(self._core)

    def _run_step(self, step: Step) -> Outcome | None:
        if isinstance(step, SendLine):
            self.transport.send(step.line)
            return None
        waiter = _Waiter()
        if isinstance(step, Discover):
            request_id, line = self._core.discover_request(waiter, step.version)
            try:
                # A probe is never cancelled: a handshake-era server must see nothing
                # but the probe and the initialize that follows it.
                return self._exchange(
                    request_id,
                    line,
                    waiter,
                    "server/discover",
                    self._probe_limit(step),
                    cancellable=not step.probe,
                )
            except Timeout:
                if not step.probe:
                    raise
                logger.info("%s: no answer to server/discover; trying initialize", self.server_id)
                return Outcome()
        request_id, line = self._core.initialize_request(waiter)
        return self._exchange(
            request_id, line, waiter, "initialize", self.timeout, cancellable=False
        )

    def close(self) -> None:
        """Stop the server (close stdin, wait, terminate, kill); idempotent."""
        if self._closed:
            return
        self._closed = True
        self.transport.stop()

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
        return self._request(method, params, timeout)

    def _request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        timeout: float | None,
        allowed: frozenset[str] = frozenset({"complete"}),
    ) -> dict[str, Any]:
        self._check_usable()
        waiter = _Waiter()
        request_id, line = self._core.request(method, params, waiter)
        result = self._wait(request_id, line, waiter, method, timeout)
        self._core.result_type(result, method, allowed)
        return result

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification."""
        self._check_usable()
        self.transport.send(self._core.notification(method, params))

    def list_tools(self) -> list[ListedTool]:
        """Every tool the server lists, following ``nextCursor`` pages."""
        return self._drive(flows.list_tools(self.server_id))

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        task: bool = False,
    ) -> dict[str, Any]:
        """Call a tool and return its ``CallToolResult``; ``isError`` → ``ToolError``,
        JSON-RPC error → ``ProtocolError``, no answer in time → cancel + ``Timeout``.

        ``on_progress`` receives the call's ``notifications/progress``. ``task=True``
        (for a tool whose contract requires tasks) runs it as a task where the
        server supports tasks and waits for its result. A server-made task is
        followed the same way; ``timeout`` bounds the whole wait and a task still
        running then is cancelled with ``tasks/cancel``.
        """
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        started = self._start_call(name, arguments, limit, on_progress, task)
        if isinstance(started, _TaskState):
            return self._task_outcome(started, deadline, True, limit)
        return _checked_tool_result(started)

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
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        started = self._start_call(name, arguments, limit, on_progress, True)
        if not isinstance(started, _TaskState):
            started = _TaskState(name, self._core.era or "legacy", final=started)
        return TaskHandle(self, started, convert or _identity)

    def _start_call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        limit: float,
        on_progress: ProgressCallback | None,
        as_task: bool,
    ) -> dict[str, Any] | _TaskState:
        """Send ``tools/call``: the raw direct result, or the state of the task it made."""
        legacy_task = as_task and self._legacy_tasks()
        label = f"tools/call {name!r}"
        waiter = _Waiter()
        request_id, line = self._core.request(
            "tools/call",
            self._call_params(name, arguments, legacy_task),
            waiter,
            progress=on_progress is not None,
            tasks=as_task,
        )
        token = request_id if on_progress is not None else None
        if on_progress is not None:
            self._progress[request_id] = on_progress
        state: _TaskState | None = None
        try:
            outcome = self._exchange(request_id, line, waiter, label, limit)
            if outcome.error is not None:
                if not as_task and _requires_tasks(outcome.error):
                    # the server runs this tool only as a task: go along with it
                    return self._start_call(name, arguments, limit, on_progress, True)
                raise error_from_response(outcome.error, label)
            assert outcome.result is not None
            state = self._started(name, outcome.result, legacy_task, token)
            return outcome.result if state is None else state
        finally:
            if state is None or state.settled:
                self._progress.pop(request_id, None)

    # -- tasks ------------------------------------------------------------------------

    def _task_status(self, state: _TaskState) -> TaskStatus:
        return self._drive(flows.task_status(state))

    def _task_outcome(
        self,
        state: _TaskState,
        deadline: float | None,
        cancel_on_timeout: bool,
        limit: float | None,
    ) -> dict[str, Any]:
        """See ``flows.task_outcome``."""
        return self._drive(
            flows.task_outcome(state, deadline, cancel_on_timeout, limit, self.timeout)
        )

    def _task_cancel(self, state: _TaskState) -> TaskStatus:
        return self._drive(flows.task_cancel(state))

    # -- the flows' driver ------------------------------------------------------------

    def _drive(self, flow: flows.Flow[T]) -> T:
        """Run a protocol flow (``_client_flows``) with this session's threads."""
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
                value = self._effect(effect)
            except McpError as exc:  # handed to the flow, which may catch it
                error = exc

    def _effect(self, effect: flows.Effect) -> Any:
        if isinstance(effect, flows.Request):
            return self._request(effect.method, effect.params, effect.timeout, effect.allowed)
        if isinstance(effect, flows.Exchange):
            waiter = _Waiter()
            request_id, line = self._core.request(effect.method, effect.params, waiter)
            return self._exchange(
                request_id, line, waiter, effect.label, effect.timeout, cancellable=False
            )
        if isinstance(effect, flows.Sleep):
            time.sleep(effect.seconds)
        elif isinstance(effect, flows.ProgressDone):
            self._progress.pop(effect.token, None)
        elif isinstance(effect, flows.Usable):
            self._check_usable()
        elif isinstance(effect, flows.Connected):
            return not (self._gone or self._closed)
        return None

    # -- waiting ----------------------------------------------------------------------

    def _wait(
        self,
        request_id: int,
        line: bytes,
        waiter: _Waiter,
        label: str,
        timeout: float | None,
        *,
        cancellable: bool = True,
    ) -> dict[str, Any]:
        limit = self.timeout if timeout is None else timeout
        outcome = self._exchange(request_id, line, waiter, label, limit, cancellable=cancellable)
        if outcome.error is not None:
            raise error_from_response(outcome.error, label)
        assert outcome.result is not None
        return outcome.result

    def _exchange(
        self,
        request_id: int,
        line: bytes,
        waiter: _Waiter,
        label: str,
        limit: float,
        *,
        cancellable: bool = True,
    ) -> Outcome:
        """Send a registered request and wait ``limit`` seconds for its response."""
        if self._gone:
            # The reader already failed everything pending; this one came after.
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            self.transport.send(line)
        except BaseException:
            self._core.forget(request_id)
            raise
        try:
            answered = waiter.lock.acquire(True, min(max(limit, 0.0), _MAX_WAIT))
        except BaseException:  # KeyboardInterrupt while blocked: do not leave it pending
            self._abandon(request_id, "the caller was interrupted", cancellable)
            raise
        if not answered:
            if self._core.forget(request_id) is None:
                waiter.lock.acquire()  # the response won the race; it is being delivered
            else:
                self._abandon(request_id, f"timed out after {limit:g}s", cancellable)
                raise Timeout(f"{label}: no answer within {limit:g}s")
        if waiter.failure is not None:
            raise waiter.failure
        return Outcome(waiter.result, waiter.error)

    def _abandon(self, request_id: int, reason: str, cancellable: bool) -> None:
        line = self._core.cancel(request_id, reason)
        if cancellable:  # initialize MUST NOT be cancelled
            try:
                self.transport.send(line)
            except ServerExited:
                pass

    # -- reader-thread callbacks ----------------------------------------------------------

    def _on_line(self, line: bytes) -> None:
        for event in self._core.receive(line):
            if isinstance(event, Response):
                waiter = event.waiter
                waiter.result = event.result
                waiter.error = event.error
                waiter.lock.release()
            elif isinstance(event, Reply):
                try:
                    self.transport.send(event.line)
                except ServerExited:
                    pass
            else:
                self._notify(event)

    def _on_close(self) -> None:
        self._gone = True
        for waiter in self._core.fail_all():
            waiter.failure = self.transport.exit_error()
            waiter.lock.release()
