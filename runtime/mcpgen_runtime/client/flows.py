"""The client's protocol flows, written once for the sync and the async session.

Each flow is a generator that yields effects (``client.effects``, re-exported here)
and is sent their results; the sessions (``client.sync``, ``client.aio``) only
perform the primitive effects, with threads or with an event loop, and hold no
protocol logic of their own (the pattern of ``ClientCore.negotiate``, which
``open_connection`` runs). ``lowered`` expands the session-level effects
(``Request``, ``Exchange``, ``Usable``, ``Connected``, ``CancelNowait``) into
primitives; whatever a primitive raises is thrown into the flow.

A flow sees a session through its public surface only: its settings (``timeout``,
``probe_timeout``, ``protocol``, ``verify``, ``contract``, ``server_id``,
``task_ttl_ms``, and ``protocol_version``/``server_capabilities`` once connected)
and ``session.core``, the sans-I/O ``ClientCore`` that owns the connection's state
(its life, pending requests, progress callbacks, handshake). A flow changes no
session field: it returns what it learnt (``connect``'s handshake) for the session
to record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import McpError, ProtocolError, Timeout
from ..contract.check import check_contract
from ..protocol.constants import INVALID_PARAMS
from .asking import MAX_INPUT_ROUNDS
from .core import (
    ClientCore,
    Discover,
    Handshake,
    Outcome,
    SendLine,
    Step,
    error_from_response,
)
from .effects import (
    COMPLETE,
    AskInput,
    Await,
    CancelNowait,
    Close,
    Connected,
    Effect,
    Exchange,
    Flow,
    Liveness,
    Now,
    Pending,
    Prepare,
    Primitive,
    ProgressDone,
    ProgressDrop,
    Request,
    Sleep,
    Start,
    Usable,
    Write,
    WriteNowait,
)
from .listing import ListedTool, tools_page
from .results import checked_tool_result
from .task_state import (
    NO_LIMIT,
    TaskState,
    TaskStatus,
    poll_seconds,
    requires_tasks,
)

if TYPE_CHECKING:
    from ..contract.compare import Change
    from .base import AnySession
    from .effects import Connection

__all__ = [
    "AskInput",
    "Await",
    "CancelNowait",
    "Close",
    "Connected",
    "Effect",
    "Exchange",
    "Flow",
    "Now",
    "Pending",
    "Prepare",
    "Primitive",
    "ProgressDone",
    "ProgressDrop",
    "Request",
    "Sleep",
    "Start",
    "Usable",
    "Write",
    "WriteNowait",
    "call_params",
    "call_tool",
    "cancel_quietly",
    "connect",
    "list_tools",
    "lowered",
    "open_connection",
    "request",
    "run",
    "start_call",
    "start_tool",
    "started_task",
    "task_cancel",
    "task_outcome",
    "task_status",
]

T = TypeVar("T")
E = TypeVar("E")
P = TypeVar("P")

logger = logging.getLogger("mcpgen.client")

CANCEL_TIMEOUT = 5.0  # seconds a best-effort tasks/cancel waits for its ack
TASK_RESULT_TYPES = frozenset({"complete", "task"})  # what tasks/get and tasks/cancel may answer


def lowered(session: AnySession, flow: Flow[T]) -> Generator[Primitive, Any, T]:
    """``flow`` with its session-level effects expanded into primitives: what a
    driver runs. An exception a primitive raises is thrown into ``flow``."""
    return relay(flow, lambda effect: _lower(session, effect))


def run(steps: Generator[E, Any, T], perform: Callable[[E], Any]) -> T:
    """Run ``steps`` to its value: each step it yields is given to ``perform``, whose
    return value is sent back in and whose exception is thrown in (the steps may
    catch it to clean up). The synchronous session's driver, and the tests'."""

    def at_once(step: E) -> Generator[Any, Any, Any]:
        return perform(step)
        yield  # a generator that yields nothing: relay runs it to its value at once

    done, result = resume(relay(steps, at_once), None, None)
    assert done, "at_once never yields"
    return result  # type: ignore[no-any-return]


def resume(
    steps: Generator[Any, Any, Any], value: Any, error: BaseException | None
) -> tuple[bool, Any]:
    """Send ``value`` into ``steps`` (or throw ``error``): ``(False, next step)``, or
    ``(True, its return value)`` once it has finished."""
    try:
        return False, (steps.send(value) if error is None else steps.throw(error))
    except StopIteration as stop:
        return True, stop.value


def relay(
    steps: Generator[E, Any, T], perform: Callable[[E], Generator[P, Any, Any]]
) -> Generator[P, Any, T]:
    """Run ``steps``, each step through ``perform``, a generator: what it yields passes
    out, its return value is sent back into ``steps``, its exception thrown in (the
    steps may catch it to clean up). Closing the relay closes ``steps``."""
    value: Any = None
    error: BaseException | None = None
    while True:
        done, step = resume(steps, value, error)
        if done:
            return step  # type: ignore[no-any-return]
        value, error = None, None
        try:
            value = yield from perform(step)
        except GeneratorExit:
            steps.close()
            raise
        except BaseException as exc:  # noqa: BLE001  (thrown into the steps, which may catch it)
            error = exc


def _lower(session: AnySession, effect: Effect) -> Generator[Primitive, Any, Any]:
    if isinstance(effect, Request):
        return (
            yield from request(
                session, effect.method, effect.params, effect.timeout, effect.allowed
            )
        )
    if isinstance(effect, Exchange):
        pending = yield Prepare(effect.method, effect.params)
        return (yield Await(pending, effect.label, effect.timeout, cancellable=False))
    if isinstance(effect, Usable):
        session.core.check_usable()
        return None
    if isinstance(effect, Connected):
        return session.core.alive
    if isinstance(effect, CancelNowait):
        yield ProgressDrop(effect.state.token)
        if effect.state.task_id is None or not session.core.alive:
            return None
        pending = yield Prepare("tasks/cancel", {"taskId": effect.state.task_id})
        session.core.forget(pending.id)  # its ack, if any, is dropped as late
        yield WriteNowait(pending.line)
        return None
    return (yield effect)


# -- requests and the connection -------------------------------------------------------


def request(
    session: AnySession,
    method: str,
    params: Mapping[str, Any] | None,
    timeout: float | None,
    allowed: frozenset[str] = COMPLETE,
) -> Generator[Primitive, Any, dict[str, Any]]:
    """A request's result object (JSON-RPC error → ``ProtocolError``)."""
    session.core.check_usable()
    pending: Pending = yield Prepare(method, params)
    limit = session.timeout if timeout is None else timeout
    outcome: Outcome = yield Await(pending, method, limit)
    if outcome.error is not None:
        raise error_from_response(outcome.error, method)
    assert outcome.result is not None
    session.core.result_type(outcome.result, method, allowed)
    return outcome.result


def connect(session: AnySession) -> Flow[Connection | None]:
    """Start the transport, agree on the era, check the contract; on any failure
    the session is closed before the error propagates. Returns the handshake and
    the contract warnings for the session to record (None: it was connected)."""
    core = session.core
    if core.closed:
        raise RuntimeError("a closed session cannot be reconnected")
    if core.connected:
        return None
    yield Start()
    warnings: list[Change] = []
    try:
        handshake = yield from open_connection(session)
        if session.verify != "off":
            tools = yield from list_tools(session.server_id)
            warnings = check_contract(
                session.contract,
                [tool.raw for tool in tools],
                handshake.protocol_version,
                session.verify,
            )
    except GeneratorExit:
        raise
    except BaseException:
        yield Close()
        raise
    return handshake, warnings


def open_connection(session: AnySession) -> Flow[Handshake]:
    """Run ``ClientCore.negotiate`` (which decides); return what it agreed."""
    steps: Generator[Step, Outcome | None, None] = session.core.negotiate(session.protocol)
    outcome: Outcome | None = None
    while True:
        try:
            step = steps.send(outcome)
        except StopIteration:
            break
        outcome = yield from _negotiation_step(session, step)
    handshake = session.core.handshake
    assert handshake is not None  # negotiation ends agreed or raises
    return handshake


def _negotiation_step(session: AnySession, step: Step) -> Flow[Outcome | None]:
    if isinstance(step, SendLine):
        yield Write(step.line)
        return None
    if isinstance(step, Discover):
        # Negotiation runs before an era is set, so ``request`` adds no envelope of
        # its own: this is the line ``ClientCore.discover_request`` builds.
        pending = yield Prepare("server/discover", {"_meta": session.core.envelope(step.version)})
        try:
            # A probe is never cancelled: a handshake-era server must see nothing
            # but the probe and the initialize that follows it.
            outcome: Outcome = yield Await(
                pending, "server/discover", _probe_limit(session, step), cancellable=not step.probe
            )
        except Timeout:
            if not step.probe:
                raise
            logger.info("%s: no answer to server/discover; trying initialize", session.server_id)
            return Outcome()
        return outcome
    pending = yield Prepare("initialize", session.core.initialize_params())
    answer: Outcome = yield Await(pending, "initialize", session.timeout, cancellable=False)
    return answer


def _probe_limit(session: AnySession, step: Discover) -> float:
    """How long a ``server/discover`` waits: a probe at most ``probe_timeout``."""
    return min(session.timeout, session.probe_timeout) if step.probe else session.timeout


# -- tool calls -------------------------------------------------------------------------


def call_params(name: str, arguments: Mapping[str, Any], task_ttl_ms: int | None) -> dict[str, Any]:
    """The params of a ``tools/call``; with ``task_ttl_ms``, a 2025-11-25
    task-augmented one asking for that ttl."""
    params: dict[str, Any] = {
        "name": name,
        "arguments": arguments if type(arguments) is dict else dict(arguments),
    }
    if task_ttl_ms is not None:
        params["task"] = {"ttl": task_ttl_ms}
    return params


def started_task(
    core: ClientCore[Any],
    name: str,
    result: dict[str, Any],
    legacy_task: bool,
    token: int | None,
) -> TaskState | None:
    """The task a ``tools/call`` result created, or None for a direct result."""
    kind = core.result_type(result, f"tools/call {name!r}", TASK_RESULT_TYPES)
    if kind == "task":
        state = TaskState(name, "modern", created=TaskStatus.from_wire(result), token=token)
    elif legacy_task and isinstance(result.get("task"), dict) and "content" not in result:
        state = TaskState(name, "legacy", created=TaskStatus.from_wire(result["task"]), token=token)
    else:
        return None
    if state.last is not None and state.last.terminal and state.era == "modern":
        state.absorb(result)  # created already ended: a modern result carries it
    return state


def call_tool(
    session: AnySession,
    name: str,
    arguments: Mapping[str, Any],
    timeout: float | None,
    on_progress: Any,
    task: bool,
    max_total_timeout: float | None = None,
) -> Flow[dict[str, Any]]:
    """``Session.call_tool``: the checked result, following a task to its end. With
    ``max_total_timeout``, progress starts the direct call's timeout anew (``Liveness``)."""
    session.core.check_usable()
    limit = session.timeout if timeout is None else timeout
    deadline = (yield Now()) + limit
    liveness = None
    if max_total_timeout is not None:
        liveness = Liveness(max(max_total_timeout, limit))
        on_progress = _touching(liveness, on_progress)
    started = yield from start_call(session, name, arguments, limit, on_progress, task, liveness)
    if isinstance(started, TaskState):
        return (yield from task_outcome(started, deadline, True, limit, session.timeout))
    return checked_tool_result(started)


def _touching(liveness: Liveness, on_progress: Any) -> Any:
    """``on_progress`` (if any), after noting the sign of life."""

    def touched(*arguments: Any) -> Any:
        liveness.touch()
        return None if on_progress is None else on_progress(*arguments)

    return touched


def start_tool(
    session: AnySession,
    name: str,
    arguments: Mapping[str, Any],
    timeout: float | None,
    on_progress: Any,
) -> Flow[TaskState]:
    """``Session.start_tool``: the state of the task the call made (a direct answer
    is a state that has already ended)."""
    session.core.check_usable()
    limit = session.timeout if timeout is None else timeout
    started = yield from start_call(session, name, arguments, limit, on_progress, True)
    if isinstance(started, TaskState):
        return started
    return TaskState(name, session.core.era or "legacy", final=started)


def start_call(
    session: AnySession,
    name: str,
    arguments: Mapping[str, Any],
    limit: float,
    on_progress: Any,
    as_task: bool,
    liveness: Liveness | None = None,
) -> Flow[dict[str, Any] | TaskState]:
    """Send ``tools/call``: the raw direct result, or the state of the task it made."""
    legacy_task = as_task and session.core.legacy_tasks()
    label = f"tools/call {name!r}"
    pending: Pending = yield Prepare(
        "tools/call",
        call_params(name, arguments, session.task_ttl_ms if legacy_task else None),
        progress=on_progress,
        tasks=as_task,
    )
    token = pending.id if on_progress is not None else None
    try:
        outcome: Outcome = yield Await(pending, label, limit, liveness=liveness)
        if outcome.result is not None and outcome.result.get("resultType") == "input_required":
            yield ProgressDrop(token)
            token = None
            outcome = yield from _input_rounds(
                session, name, arguments, outcome.result, limit, as_task, liveness
            )
        if outcome.error is not None:
            if not as_task and requires_tasks(outcome.error):
                # the server runs this tool only as a task: go along with it
                yield ProgressDrop(token)
                return (
                    yield from start_call(
                        session, name, arguments, limit, on_progress, True, liveness
                    )
                )
            raise error_from_response(outcome.error, label)
        assert outcome.result is not None
        state = started_task(session.core, name, outcome.result, legacy_task, token)
    except GeneratorExit:
        raise
    except BaseException:
        yield ProgressDrop(token)
        raise
    if state is None or state.settled:
        yield ProgressDone(token)
    return outcome.result if state is None else state


def _input_rounds(
    session: AnySession,
    name: str,
    arguments: Mapping[str, Any],
    asked: dict[str, Any],
    limit: float,
    as_task: bool,
    liveness: Liveness | None,
) -> Flow[Outcome]:
    """A 2026-07-28 call that asks for input: answer its ``inputRequests`` (the
    session's ``on_input``) and retry it with ``inputResponses`` and the echoed
    ``requestState``, until it is answered otherwise (at most ``MAX_INPUT_ROUNDS``)."""
    label = f"tools/call {name!r}"
    for round_ in range(MAX_INPUT_ROUNDS):
        if session.core.modern_version is None:
            return Outcome(asked)  # no input_required in the handshake era: refused later
        requests = asked.get("inputRequests", {})
        state = asked.get("requestState")
        if not isinstance(requests, dict) or not (requests or isinstance(state, str)):
            raise ProtocolError(
                f"{label}: an input_required result needs inputRequests or requestState",
                reason="invalid_input_required",
            )
        params = call_params(name, arguments, None)
        if requests:
            params["inputResponses"] = yield AskInput(requests)
        else:  # nothing to answer: the server is not done yet; back off (50 ms up to 250)
            yield Sleep(min(0.05 * 2**round_, 0.25))
        if isinstance(state, str):
            params["requestState"] = state
        pending: Pending = yield Prepare("tools/call", params, tasks=as_task)
        outcome: Outcome = yield Await(pending, label, limit, liveness=liveness)
        if outcome.result is None or outcome.result.get("resultType") != "input_required":
            return outcome
        asked = outcome.result
    raise ProtocolError(
        f"{label}: the server still asks for input after {MAX_INPUT_ROUNDS} rounds",
        reason="too_many_input_rounds",
    )


# -- tools and tasks --------------------------------------------------------------------


def list_tools(server_id: str) -> Flow[list[ListedTool]]:
    """Every tool the server lists, following ``nextCursor`` pages."""
    seen: set[str] = set()
    tools, cursor = tools_page((yield Request("tools/list", None)), server_id, seen)
    while cursor is not None:
        page, cursor = tools_page(
            (yield Request("tools/list", {"cursor": cursor})), server_id, seen
        )
        tools.extend(page)
    return tools


def task_status(state: TaskState) -> Flow[TaskStatus]:
    """``tasks/get``; a modern task that ended stops routing its progress."""
    if state.task_id is None:
        return state.local_status()
    body = yield Request("tasks/get", {"taskId": state.task_id}, None, TASK_RESULT_TYPES)
    status = state.absorb(body)
    if status.terminal and state.era == "modern":
        yield ProgressDone(state.token)
    return status


def task_outcome(
    state: TaskState,
    deadline: float | None,
    cancel_on_timeout: bool,
    limit: float | None,
    request_timeout: float,
) -> Flow[dict[str, Any]]:
    """Wait for the task to end: the checked result, or its error raised; after
    ``limit`` seconds (the deadline), cancel it unless told not to and raise
    ``Timeout``. A settled task answers from memory, even on a closed session. An
    async waiter cancelled by its caller cancels the task too (unless told not to),
    without waiting for the ack."""
    try:
        if not state.settled:
            yield from _wait_outcome(state, deadline, cancel_on_timeout, limit, request_timeout)
        yield ProgressDone(state.token)
    except GeneratorExit:
        raise
    except BaseException as exc:
        # The waiter itself was stopped (an async caller's cancellation, Ctrl-C),
        # not the task: cancel the task too, without waiting for the ack.
        if not isinstance(exc, Exception) and cancel_on_timeout and not state.settled:
            yield CancelNowait(state)
        raise
    outcome: dict[str, Any] = state.outcome()
    return outcome


def _wait_outcome(
    state: TaskState,
    deadline: float | None,
    cancel_on_timeout: bool,
    limit: float | None,
    request_timeout: float,
) -> Flow[None]:
    yield Usable()
    try:
        if state.era == "legacy":
            yield from _legacy_outcome(state, deadline)
        else:
            yield from _poll_outcome(state, deadline, request_timeout)
    except Timeout:
        if cancel_on_timeout:
            yield from cancel_quietly(state)
        if limit is None:
            raise  # a tasks/* request went unanswered
        raise Timeout(f"{state.label}: no result within {limit:g}s") from None


def _legacy_outcome(state: TaskState, deadline: float | None) -> Flow[None]:
    # 2025-11-25: tasks/result blocks until the task ends. It is abandoned, not
    # cancelled, on timeout: tasks are stopped with tasks/cancel only.
    assert state.task_id is not None
    outcome: Outcome = yield Exchange(
        "tasks/result", {"taskId": state.task_id}, state.label, (yield from _time_left(deadline))
    )
    if outcome.result is not None:
        state.final = outcome.result
        return
    assert outcome.error is not None
    try:
        yield from task_status(state)  # a cancelled task reads as cancelled, in both eras
    except McpError:
        pass
    if state.failure is None:
        state.failure = error_from_response(outcome.error, state.label)


def _poll_outcome(state: TaskState, deadline: float | None, request_timeout: float) -> Flow[None]:
    # 2026-07-28: no tasks/result; poll tasks/get at the server's pollIntervalMs.
    assert state.task_id is not None
    while True:
        remaining = yield from _time_left(deadline)
        if remaining <= 0:
            raise Timeout(f"{state.label}: the task did not end in time")
        body = yield Request(
            "tasks/get",
            {"taskId": state.task_id},
            min(request_timeout, remaining),
            TASK_RESULT_TYPES,
        )
        status = state.absorb(body)
        if status.terminal:
            return
        if status.status == "input_required":
            state.failure = ProtocolError(
                f"{state.label}: the task asks for input, which this client cannot give",
                reason="input_required",
                data=status.raw,
            )
            return
        left = yield from _time_left(deadline)
        yield Sleep(min(poll_seconds(status), max(left, 0.0)))


def task_cancel(state: TaskState) -> Flow[TaskStatus]:
    """``tasks/cancel``, and the task's status after it."""
    if state.task_id is None:
        return state.local_status()
    try:
        body = yield Request("tasks/cancel", {"taskId": state.task_id}, None, TASK_RESULT_TYPES)
    except ProtocolError as exc:
        if exc.code != INVALID_PARAMS:
            raise
        return (yield from task_status(state))  # 2025-11-25: the task already ended
    if "taskId" in body and "status" in body:
        status = state.absorb(body)  # 2025-11-25 answers with the task
    else:
        status = yield from task_status(state)  # 2026 answers with an ack
    if status.terminal:
        yield ProgressDone(state.token)
    return status


def cancel_quietly(state: TaskState) -> Flow[None]:
    """A best-effort ``tasks/cancel`` (a task whose waiter gave up); failures are logged."""
    if state.task_id is None or not (yield Connected()):
        return
    try:
        yield Request("tasks/cancel", {"taskId": state.task_id}, CANCEL_TIMEOUT, TASK_RESULT_TYPES)
    except McpError as exc:
        logger.info("%s: tasks/cancel failed: %s", state.label, exc)
    yield ProgressDone(state.token)


def _time_left(deadline: float | None) -> Flow[float]:
    """Seconds until ``deadline`` by the driver's clock (no deadline: no limit)."""
    if deadline is None:
        return NO_LIMIT
    now: float = yield Now()
    return deadline - now
