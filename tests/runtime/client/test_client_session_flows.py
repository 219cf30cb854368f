"""The session-level flows (connect, requests, tool calls) and ``lowered``, driven
without I/O: a script answers what a driver would, as ``Session._drive`` and
``AsyncSession._drive`` do with threads and an event loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpgen_runtime._errors import ProtocolError, Timeout
from mcpgen_runtime.client import flows
from mcpgen_runtime.client.base import SessionState
from mcpgen_runtime.client.core import Outcome
from mcpgen_runtime.client.task_state import TaskState, TaskStatus
from mcpgen_runtime.protocol.constants import TASKS_EXTENSION


def session(**options: Any) -> SessionState[None, None]:
    state: SessionState[None, None] = SessionState(None, server_id="script", **options)
    state.core.connected = True
    return state


def drive(
    state: SessionState[None, None],
    flow: flows.Flow[Any],
    answers: list[Any],
    seen: list[Any] | None = None,
) -> tuple[Any, list[Any]]:
    """Run ``lowered(flow)``: ``Prepare`` registers (waiter None), each ``Await``
    takes the next answer (an exception is thrown in), every other primitive
    answers None. Returns the flow's value (or raises) and the primitives seen
    (also appended to ``seen``, which outlives an exception)."""
    seen = [] if seen is None else seen

    def perform(effect: Any) -> Any:
        seen.append(effect)
        if isinstance(effect, flows.Start):
            state.core.connected = True  # what a driver records once the transport runs
        if isinstance(effect, flows.Now):
            return 0.0
        if isinstance(effect, flows.Prepare):
            request_id, line = state.core.request(
                effect.method, effect.params, None, progress=effect.progress, tasks=effect.tasks
            )
            return flows.Pending(request_id, line, None)
        if isinstance(effect, flows.Await):
            answer = answers.pop(0)
            if isinstance(answer, BaseException):
                raise answer
            return answer
        return None

    return flows.run(flows.lowered(state, flow), perform), seen


def kinds(seen: list[Any]) -> list[str]:
    return [type(effect).__name__ for effect in seen]


def test_connect_closes_the_session_when_the_handshake_fails() -> None:
    state = session(protocol="legacy")
    state.core.connected = False
    seen: list[Any] = []
    with pytest.raises(ProtocolError, match="initialize: no"):
        drive(state, flows.connect(state), [Outcome(error={"code": -32603, "message": "no"})], seen)
    assert kinds(seen) == ["Start", "Prepare", "Await", "Close"]


def test_connect_after_close_is_refused_before_any_io() -> None:
    state = session()
    state.core.closed = True
    with pytest.raises(RuntimeError, match="cannot be reconnected"):
        drive(state, flows.connect(state), [])


def test_an_unanswered_probe_falls_back_to_initialize_without_cancelling() -> None:
    state = session(probe_timeout=0.5)
    state.core.connected = False
    init = Outcome(result={"protocolVersion": "2025-06-18", "capabilities": {}})
    tools = Outcome(result={"tools": []})
    connection, seen = drive(state, flows.connect(state), [Timeout("probe"), init, tools])
    assert state.protocol_version == ""  # the flow changes no session state itself
    state._adopt(connection)
    awaits = [effect for effect in seen if isinstance(effect, flows.Await)]
    assert [(a.label, a.limit, a.cancellable) for a in awaits] == [
        ("server/discover", 0.5, False),
        ("initialize", 30.0, False),
        ("tools/list", 30.0, True),
    ]
    assert state.protocol_version == "2025-06-18" and state.era == "legacy"
    sent = [effect for effect in seen if isinstance(effect, flows.Write)]
    assert [json.loads(effect.line)["method"] for effect in sent] == ["notifications/initialized"]


def test_a_timed_out_call_stops_routing_its_progress() -> None:
    state = session()
    seen: list[Any] = []
    with pytest.raises(Timeout):
        drive(
            state,
            flows.call_tool(state, "slow", {}, 1.0, lambda *a: None, False),
            [Timeout("tools/call 'slow': no answer within 1s")],
            seen,
        )
    assert seen[0] == flows.Now()  # the deadline starts at the driver's clock
    token = (
        seen[1].progress and json.loads(seen[2].pending.line)["params"]["_meta"]["progressToken"]
    )
    assert seen[-1] == flows.ProgressDrop(token)
    assert seen[2] == flows.Await(seen[2].pending, "tools/call 'slow'", 1.0)


def test_a_call_the_server_wants_as_a_task_is_sent_again_as_one() -> None:
    state = session()
    needs_task = Outcome(
        error={
            "code": -32021,
            "message": "task required",
            "data": {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        }
    )
    done = Outcome(result={"content": [{"type": "text", "text": "ok"}]})
    result, seen = drive(
        state, flows.call_tool(state, "t", {"a": 1}, None, None, False), [needs_task, done]
    )
    assert result["content"][0]["text"] == "ok"
    prepares = [effect for effect in seen if isinstance(effect, flows.Prepare)]
    assert [(p.method, p.tasks) for p in prepares] == [("tools/call", False), ("tools/call", True)]


def test_a_cancelled_async_wait_cancels_the_task_without_waiting() -> None:
    state = session()
    task = TaskState("slow", "modern", created=TaskStatus("t1", "working"), token=None)
    seen: list[Any] = []
    with pytest.raises(asyncio.CancelledError):
        drive(
            state,
            flows.task_outcome(task, None, True, None, 30.0),
            [asyncio.CancelledError()],
            seen,
        )
    assert kinds(seen) == ["Prepare", "Await", "ProgressDrop", "Prepare", "WriteNowait"]
    assert json.loads(seen[-1].line)["method"] == "tasks/cancel"
    # told not to cancel on giving up: nothing is sent
    seen.clear()
    task = TaskState("slow", "modern", created=TaskStatus("t1", "working"), token=None)
    with pytest.raises(asyncio.CancelledError):
        drive(
            state,
            flows.task_outcome(task, None, False, None, 30.0),
            [asyncio.CancelledError()],
            seen,
        )
    assert kinds(seen) == ["Prepare", "Await"]


def test_cancel_nowait_is_lowered_to_a_forgotten_tasks_cancel() -> None:
    state = session()
    task = TaskState("slow", "modern", created=TaskStatus("t1", "working"), token=3)
    _, seen = drive(state, iter_once(flows.CancelNowait(task)), [])
    assert kinds(seen) == ["ProgressDrop", "Prepare", "WriteNowait"]
    line = json.loads(seen[2].line)
    assert line["method"] == "tasks/cancel" and line["params"]["taskId"] == "t1"
    assert state.core.pending_count == 0  # an ack is dropped as late
    state.core.gone = True
    _, seen = drive(state, iter_once(flows.CancelNowait(task)), [])
    assert kinds(seen) == ["ProgressDrop"]


def iter_once(effect: flows.Effect) -> flows.Flow[None]:
    yield effect
