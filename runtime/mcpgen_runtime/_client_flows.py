"""The client's protocol flows, written once for the sync and the async session.

Each flow is a generator that yields effects and is sent their results: ``Request``
(a request whose result the flow reads; a JSON-RPC error, a timeout or a closed
session is thrown into the flow), ``Exchange`` (a request that is never cancelled,
answering the raw ``Response`` with its result or error), ``Sleep``, ``ProgressDone``
(stop routing a progress token), ``Usable`` (raise if the session is closed) and
``Connected`` (whether requests can still be sent). ``Session._drive`` and
``AsyncSession._drive`` run them, with threads or with an event loop; neither holds
protocol logic of its own (the pattern of ``ClientCore.negotiate``).
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ._client_core import Response, error_from_response
from ._client_listing import ListedTool, _tools_page
from ._client_tasks import TaskStatus, _poll_seconds, _remaining, _TaskState
from ._errors import McpError, ProtocolError, Timeout
from ._protocol import INVALID_PARAMS

__all__ = [
    "Connected",
    "Effect",
    "Exchange",
    "Flow",
    "ProgressDone",
    "Request",
    "Sleep",
    "Usable",
    "cancel_quietly",
    "list_tools",
    "task_cancel",
    "task_outcome",
    "task_status",
]

T = TypeVar("T")

logger = logging.getLogger("mcpgen.client")

CANCEL_TIMEOUT = 5.0  # seconds a best-effort tasks/cancel waits for its ack
TASK_RESULT_TYPES = frozenset({"complete", "task"})  # what tasks/get and tasks/cancel may answer


@dataclass(frozen=True)
class Request:
    """Send a request; the flow receives its result (``resultType`` checked against
    ``allowed``) or has the error thrown in. ``timeout`` None: the session's."""

    method: str
    params: Mapping[str, Any] | None
    timeout: float | None = None
    allowed: frozenset[str] = frozenset({"complete"})


@dataclass(frozen=True)
class Exchange:
    """Send a request that is never cancelled; receive the ``Response`` (result or
    error); a timeout is thrown in."""

    method: str
    params: Mapping[str, Any]
    label: str
    timeout: float


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class ProgressDone:
    token: Any


@dataclass(frozen=True)
class Usable:
    """Raise unless the session can still send (closed → ``ProtocolError``)."""


@dataclass(frozen=True)
class Connected:
    """Receive whether the session is open and its server alive."""


Effect = Request | Exchange | Sleep | ProgressDone | Usable | Connected
Flow = Generator[Effect, Any, T]


def list_tools(server_id: str) -> Flow[list[ListedTool]]:
    """Every tool the server lists, following ``nextCursor`` pages."""
    seen: set[str] = set()
    tools, cursor = _tools_page((yield Request("tools/list", None)), server_id, seen)
    while cursor is not None:
        page, cursor = _tools_page(
            (yield Request("tools/list", {"cursor": cursor})), server_id, seen
        )
        tools.extend(page)
    return tools


def task_status(state: _TaskState) -> Flow[TaskStatus]:
    """``tasks/get``; a modern task that ended stops routing its progress."""
    if state.task_id is None:
        return state.local_status()
    body = yield Request("tasks/get", {"taskId": state.task_id}, None, TASK_RESULT_TYPES)
    status = state.absorb(body)
    if status.terminal and state.era == "modern":
        yield ProgressDone(state.token)
    return status


def task_outcome(
    state: _TaskState, deadline: float | None, cancel_on_timeout: bool, limit: float | None,
    request_timeout: float,
) -> Flow[dict[str, Any]]:
    """Wait for the task to end: the checked result, or its error raised; after
    ``limit`` seconds (the deadline), cancel it unless told not to and raise
    ``Timeout``. A settled task answers from memory, even on a closed session."""
    if not state.settled:
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
    yield ProgressDone(state.token)
    outcome: dict[str, Any] = state.outcome()
    return outcome


def _legacy_outcome(state: _TaskState, deadline: float | None) -> Flow[None]:
    # 2025-11-25: tasks/result blocks until the task ends. It is abandoned, not
    # cancelled, on timeout: tasks are stopped with tasks/cancel only.
    assert state.task_id is not None
    outcome: Response[Any] = yield Exchange(
        "tasks/result", {"taskId": state.task_id}, state.label, _remaining(deadline)
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


def _poll_outcome(state: _TaskState, deadline: float | None, request_timeout: float) -> Flow[None]:
    # 2026-07-28: no tasks/result; poll tasks/get at the server's pollIntervalMs.
    assert state.task_id is not None
    while True:
        remaining = _remaining(deadline)
        if remaining <= 0:
            raise Timeout(f"{state.label}: the task did not end in time")
        body = yield Request(
            "tasks/get", {"taskId": state.task_id}, min(request_timeout, remaining),
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
        yield Sleep(min(_poll_seconds(status), max(_remaining(deadline), 0.0)))


def task_cancel(state: _TaskState) -> Flow[TaskStatus]:
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


def cancel_quietly(state: _TaskState) -> Flow[None]:
    """A best-effort ``tasks/cancel`` (a task whose waiter gave up); failures are logged."""
    if state.task_id is None or not (yield Connected()):
        return
    try:
        yield Request(
            "tasks/cancel", {"taskId": state.task_id}, CANCEL_TIMEOUT, TASK_RESULT_TYPES
        )
    except McpError as exc:
        logger.info("%s: tasks/cancel failed: %s", state.label, exc)
    yield ProgressDone(state.token)
