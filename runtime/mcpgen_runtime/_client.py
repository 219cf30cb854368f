"""The sessions generated clients call: ``Session`` (threads) and ``AsyncSession``
(asyncio) pick the protocol era (a ``server/discover`` probe, falling back to the
``initialize`` handshake), check the server's tools against the contract and make
``tools/list``/``tools/call`` requests over any line transport. Tool calls that
run as tasks on the server are followed through ``TaskHandle``/``AsyncTaskHandle``.

Both are thin shells around ``ClientCore``; they differ only in how a caller
waits for its response (a lock vs. a future).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import shlex
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, TypeVar, overload

from . import _client_flows as flows
from ._client_core import (
    ClientCore,
    Discover,
    Era,
    Notification,
    Outcome,
    ProtocolChoice,
    Reply,
    Response,
    SendLine,
    Step,
    error_from_response,
)
from ._client_listing import ListedTool
from ._client_results import ResultConverter, _checked_tool_result, convert_result
from ._client_tasks import (
    _NO_LIMIT,
    TaskStatus,
    _requires_tasks,
    _TaskState,
)
from ._errors import (
    ContractMismatch,
    McpError,
    ServerExited,
    Timeout,
)
from ._transport import (
    DEFAULT_MAX_MESSAGE_BYTES,
    AsyncInMemoryTransport,
    AsyncStdioTransport,
    AsyncTransport,
    InMemoryTransport,
    ServeFunction,
    StdioTransport,
    Transport,
)
from ._versions import TOOL_FIELDS

if TYPE_CHECKING:
    from ._compat import Change

__all__ = [
    "AsyncProgressCallback",
    "AsyncSession",
    "AsyncTaskHandle",
    "ListedTool",
    "NotificationHandler",
    "ProgressCallback",
    "ProtocolChoice",
    "ResultConverter",
    "Session",
    "TaskHandle",
    "TaskStatus",
    "Verify",
    "convert_result",
]

logger = logging.getLogger("mcpgen.client")

Verify = Literal["strict", "warn", "off"]
NotificationHandler = Callable[[Notification], None]
#: Called with (progress, total, message) for each ``notifications/progress`` of a
#: request made with ``on_progress=``; it runs on the session's reader thread.
ProgressCallback = Callable[[float, float | None, str | None], None]
#: The async session also accepts a coroutine function; it runs as a task on the
#: loop and the call returns only once the callbacks of its progress have finished.
AsyncProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]

T = TypeVar("T")

_MAX_WAIT = threading.TIMEOUT_MAX
DEFAULT_PROBE_TIMEOUT = 5.0  # seconds a server/discover probe waits before falling back
DEFAULT_TASK_TTL_MS = 10 * 60 * 1000  # the ttl a 2025-11-25 task-augmented call asks for
_CALL_RESULT_TYPES = frozenset({"complete", "task"})


# --------------------------------------------------------------------------- listed tools


# --------------------------------------------------------------------------- results


# --------------------------------------------------------------------------- contract


def _project(descriptor: Mapping[str, Any], fields: frozenset[str] | None) -> dict[str, Any]:
    if fields is None:
        return dict(descriptor)
    return {key: value for key, value in descriptor.items() if key in fields}


def _check_contract(
    contract: Sequence[Mapping[str, Any]],
    tools: Sequence[ListedTool],
    protocol_version: str,
    verify: Verify,
) -> list[Change]:
    """Compare the server's tools with the contract; raise or log breaking changes
    and return the ones the caller should see as warnings."""
    # Imported here: only sessions that verify pay for the comparison rules.
    from ._compat import Severity, compare_tools

    # Both sides are cut to the fields the negotiated revision defines, so a
    # 2024-11-05 server is not blamed for omitting outputSchema it cannot send.
    fields = TOOL_FIELDS.get(protocol_version)
    expected = [_project(tool, fields) for tool in contract]
    actual = [_project(tool.raw, fields) for tool in tools]
    names = {tool.get("name") for tool in contract}
    # A tool only the server has is not ours to judge.
    changes = [change for change in compare_tools(expected, actual) if change.tool in names]
    # A reordered parameter list breaks code generated from the contract, not this
    # client: it sends arguments by name. So a reorder is a warning here, never fatal.
    reordered = [change for change in changes if change.rule == "PARAM_ORDER_CHANGED"]
    breaking = [
        change
        for change in changes
        if change.severity == Severity.BREAKING and change.rule != "PARAM_ORDER_CHANGED"
    ]
    if reordered:
        logger.warning(
            "the server's parameter order differs from the contract (calls by name are "
            "unaffected): %s",
            "; ".join(f"tool {change.tool!r}: {change.message}" for change in reordered),
        )
    if breaking:
        message = "the server's tools break the contract:\n" + "\n".join(
            f"  tool {change.tool!r}: {change.message} ({change.rule})" for change in breaking
        )
        if verify == "strict":
            raise ContractMismatch(message, changes=breaking)
        logger.warning("%s", message)
    # With verify="warn" the breaking changes stay in the list: they were logged
    # and the caller chose to go on, so they are warnings now.
    return changes


def _argv(command: str | Sequence[str]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [os.fspath(c) for c in command]


# --------------------------------------------------------------------------- tasks


def _progress_args(params: Mapping[str, Any]) -> tuple[float, float | None, str | None] | None:
    progress, total, message = params.get("progress"), params.get("total"), params.get("message")
    if not isinstance(progress, (int, float)) or isinstance(progress, bool):
        return None
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        total = None
    return progress, total, message if isinstance(message, str) else None


class TaskHandle(Generic[T]):
    """A tool call running as a task on the server (sync).

    ``status()`` asks the server for the task's state, ``result()`` waits until
    it ends and returns what the plain method would have returned (``ToolError``
    for an ``isError`` result, ``ProtocolError`` for a JSON-RPC error or a
    cancelled task), ``cancel()`` asks the server to stop it. When the server ran
    the call directly instead (no task support), ``task_id`` is None and the
    handle is already done.
    """

    __slots__ = ("_convert", "_session", "_state")

    def __init__(
        self, session: Session, state: _TaskState, convert: Callable[[dict[str, Any]], T]
    ) -> None:
        self._session = session
        self._state = state
        self._convert = convert

    @property
    def task_id(self) -> str | None:
        """The server's task id (None: the server answered the call directly)."""
        return self._state.task_id

    @property
    def tool(self) -> str:
        """The wire name of the tool this task runs."""
        return self._state.tool

    @property
    def last_status(self) -> TaskStatus | None:
        """What the server said of the task last, without asking again."""
        state = self._state
        return state.local_status() if state.task_id is None else state.last

    def status(self) -> TaskStatus:
        """The task's current state, fetched with ``tasks/get``."""
        return self._session._task_status(self._state)

    def result(self, timeout: float | None = None, *, cancel_on_timeout: bool = True) -> T:
        """Wait until the task ends and return its converted result; ``timeout``
        seconds (None: no limit) then ``Timeout``, after cancelling the task
        unless ``cancel_on_timeout=False``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        outcome = self._session._task_outcome(self._state, deadline, cancel_on_timeout, timeout)
        return self._convert(outcome)

    def cancel(self) -> TaskStatus:
        """Ask the server to cancel the task (``tasks/cancel``) and return its state
        after the request (a task that already ended keeps its final state)."""
        return self._session._task_cancel(self._state)

    def __repr__(self) -> str:
        last = self.last_status
        return (
            f"<TaskHandle {self.tool!r} task_id={self.task_id!r} status={last and last.status!r}>"
        )


class AsyncTaskHandle(Generic[T]):
    """The asyncio twin of ``TaskHandle``."""

    __slots__ = ("_convert", "_session", "_state")

    def __init__(
        self, session: AsyncSession, state: _TaskState, convert: Callable[[dict[str, Any]], T]
    ) -> None:
        self._session = session
        self._state = state
        self._convert = convert

    @property
    def task_id(self) -> str | None:
        """See ``TaskHandle.task_id``."""
        return self._state.task_id

    @property
    def tool(self) -> str:
        """See ``TaskHandle.tool``."""
        return self._state.tool

    @property
    def last_status(self) -> TaskStatus | None:
        """See ``TaskHandle.last_status``."""
        state = self._state
        return state.local_status() if state.task_id is None else state.last

    async def status(self) -> TaskStatus:
        """See ``TaskHandle.status``."""
        return await self._session._task_status(self._state)

    async def result(self, timeout: float | None = None, *, cancel_on_timeout: bool = True) -> T:
        """See ``TaskHandle.result``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        outcome = await self._session._task_outcome(
            self._state, deadline, cancel_on_timeout, timeout
        )
        return self._convert(outcome)

    async def cancel(self) -> TaskStatus:
        """See ``TaskHandle.cancel``."""
        return await self._session._task_cancel(self._state)

    def __repr__(self) -> str:
        last = self.last_status
        return (
            f"<AsyncTaskHandle {self.tool!r} task_id={self.task_id!r} "
            f"status={last and last.status!r}>"
        )


def _identity(result: dict[str, Any]) -> dict[str, Any]:
    return result


# --------------------------------------------------------------------------- sync session


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


class _SessionState:
    """Fields and read-only views both sessions share."""

    def __init__(
        self,
        *,
        contract: Sequence[Mapping[str, Any]],
        verify: Verify,
        timeout: float,
        server_id: str,
        on_notification: NotificationHandler | None,
        protocol: ProtocolChoice,
        probe_timeout: float,
    ) -> None:
        if verify not in ("strict", "warn", "off"):
            raise ValueError(f"verify must be 'strict', 'warn' or 'off', not {verify!r}")
        if protocol not in ("auto", "legacy", "modern"):
            raise ValueError(f"protocol must be 'auto', 'legacy' or 'modern', not {protocol!r}")
        self.contract = list(contract)
        self.verify: Verify = verify
        self.timeout = timeout
        self.server_id = server_id
        self.on_notification = on_notification
        self.protocol: ProtocolChoice = protocol
        self.probe_timeout = probe_timeout
        self.task_ttl_ms = DEFAULT_TASK_TTL_MS
        self.protocol_version = ""
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.contract_warnings: list[Change] = []
        self._progress: dict[Any, Callable[[float, float | None, str | None], object]] = {}
        self._connected = False
        self._closed = False

    @property
    def era(self) -> Era | None:
        """``"modern"`` (2026-07-28, stateless) or ``"legacy"`` (the initialize
        handshake) once connected; decided once per session, i.e. per server process."""
        return self._era_core().era

    def _era_core(self) -> ClientCore[Any]:
        raise NotImplementedError

    def _adopt_handshake(self, core: ClientCore[Any]) -> None:
        handshake = core.handshake
        assert handshake is not None
        self.protocol_version = handshake.protocol_version
        self.server_info = handshake.server_info
        self.server_capabilities = handshake.capabilities
        self.instructions = handshake.instructions

    def _probe_limit(self, step: Discover) -> float:
        return min(self.timeout, self.probe_timeout) if step.probe else self.timeout

    def _legacy_tasks(self) -> bool:
        """Whether this handshake-era server takes task-augmented ``tools/call``."""
        if self.protocol_version != "2025-11-25":
            return False
        tasks = self.server_capabilities.get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return isinstance(tools, dict) and "call" in tools

    def _call_params(
        self, name: str, arguments: Mapping[str, Any], legacy_task: bool
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "name": name,
            "arguments": arguments if type(arguments) is dict else dict(arguments),
        }
        if legacy_task:
            params["task"] = {"ttl": self.task_ttl_ms}
        return params

    def _started(
        self, name: str, result: dict[str, Any], legacy_task: bool, token: int | None
    ) -> _TaskState | None:
        """The task a ``tools/call`` result created, or None for a direct result."""
        core = self._era_core()
        kind = core.result_type(result, f"tools/call {name!r}", _CALL_RESULT_TYPES)
        if kind == "task":
            state = _TaskState(name, "modern", created=TaskStatus.from_wire(result), token=token)
        elif legacy_task and isinstance(result.get("task"), dict) and "content" not in result:
            state = _TaskState(
                name, "legacy", created=TaskStatus.from_wire(result["task"]), token=token
            )
        else:
            return None
        if state.last is not None and state.last.terminal and state.era == "modern":
            state.absorb(result)  # created already ended: a modern result carries it
        return state

    def _notify(self, event: Notification) -> None:
        if event.method == "notifications/progress":
            callback = self._progress.get(event.params.get("progressToken"))
            arguments = _progress_args(event.params)
            if callback is not None and arguments is not None:
                self._run_progress(event.params.get("progressToken"), callback, arguments)
        if self.on_notification is None:
            logger.debug("notification from %s: %s", self.server_id, event.method)
            return
        try:
            self.on_notification(event)
        except Exception:
            logger.exception("the notification handler failed on %s", event.method)

    def _run_progress(
        self,
        token: Any,
        callback: Callable[[float, float | None, str | None], object],
        arguments: tuple[float, float | None, str | None],
    ) -> None:
        try:
            callback(*arguments)
        except Exception:
            logger.exception("the progress callback failed")

    def _check_usable(self) -> None:
        # Using a session outside its lifetime is a bug in the caller, not an MCP error.
        if self._closed:
            raise RuntimeError("the session is closed")
        if not self._connected:
            raise RuntimeError("the session is not connected; call connect() or use `with`")


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


# --------------------------------------------------------------------------- async session


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
