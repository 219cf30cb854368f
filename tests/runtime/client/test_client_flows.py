"""The client's protocol flows without any I/O: a script answers each effect, as the
sync and async sessions do with threads and an event loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen_runtime._errors import ProtocolError, Timeout
from mcpgen_runtime.client import flows
from mcpgen_runtime.client.core import ClientCore
from mcpgen_runtime.client.task_state import TaskState, TaskStatus


def run(
    flow: flows.Flow[Any], answers: list[Any], clock: list[float] | None = None
) -> tuple[Any, list[flows.Effect]]:
    """Drive ``flow``: each effect takes the next answer (an exception is thrown in);
    ``Now`` takes the next reading of ``clock``, the only clock the flow sees."""
    seen: list[flows.Effect] = []
    readings = list(clock or ())

    def perform(effect: flows.Effect) -> Any:
        seen.append(effect)
        if isinstance(effect, flows.Now):
            return readings.pop(0)
        if isinstance(effect, (flows.Request, flows.Exchange, flows.Connected)):
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return None

    return flows.run(flow, perform), seen


def modern_task() -> TaskState:
    return TaskState("slow", "modern", created=TaskStatus("t1", "working"), token=7)


def test_a_modern_task_is_polled_at_the_server_s_interval_until_it_completes() -> None:
    result = {"content": [{"type": "text", "text": "done"}]}
    outcome, seen = run(
        flows.task_outcome(modern_task(), None, True, None, 30.0),
        [
            {"taskId": "t1", "status": "working", "pollIntervalMs": 250},
            {"taskId": "t1", "status": "completed", "result": result},
        ],
    )
    assert outcome == result
    assert [type(e).__name__ for e in seen] == [
        "Usable",
        "Request",
        "Sleep",
        "Request",
        "ProgressDone",
    ]
    assert seen[1] == flows.Request("tasks/get", {"taskId": "t1"}, 30.0, flows.TASK_RESULT_TYPES)
    assert seen[2] == flows.Sleep(0.25)


def test_a_timed_out_task_is_cancelled_then_reported() -> None:
    with pytest.raises(Timeout, match="no result within 2s"):
        run(
            flows.task_outcome(modern_task(), None, True, 2.0, 30.0),
            [Timeout("tasks/get"), True, {}],
        )


def test_cancelling_an_ended_2025_task_reads_its_status() -> None:
    state = TaskState("slow", "legacy", created=TaskStatus("t1", "working"))
    status, seen = run(
        flows.task_cancel(state),
        [ProtocolError("gone", code=-32602), {"taskId": "t1", "status": "completed"}],
    )
    assert status.status == "completed"
    assert [e.method for e in seen if isinstance(e, flows.Request)] == ["tasks/cancel", "tasks/get"]


def test_list_tools_follows_cursors_and_refuses_a_repeated_one() -> None:
    page = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "c1"}
    with pytest.raises(ProtocolError, match="repeated cursor"):
        run(flows.list_tools("srv"), [page, page])
    tools, seen = run(flows.list_tools("srv"), [page, {"tools": []}])
    assert [t.name for t in tools] == ["a"]
    assert seen[1] == flows.Request("tools/list", {"cursor": "c1"})


def test_deadlines_are_read_from_the_driver_s_clock_only() -> None:
    """The flows ask for the time (``Now``) and read no clock: a fake clock decides
    the request's limit, the sleep between polls and the timeout."""
    working = {"taskId": "t1", "status": "working", "pollIntervalMs": 5000}
    with pytest.raises(Timeout, match="no result within 10s"):
        run(
            flows.task_outcome(modern_task(), 100.0, False, 10.0, 30.0),
            [working],
            clock=[96.0, 97.5, 100.0],
        )
    _, seen = run(
        flows.task_outcome(modern_task(), 100.0, False, 10.0, 30.0),
        [working, {"taskId": "t1", "status": "completed", "result": {"content": []}}],
        clock=[96.0, 97.5, 99.0],
    )
    requests = [e for e in seen if isinstance(e, flows.Request)]
    assert [r.timeout for r in requests] == [4.0, 1.0]  # deadline - now, below the 30 s
    assert [e for e in seen if isinstance(e, flows.Sleep)] == [flows.Sleep(2.5)]
    # call_tool's deadline is the clock's reading plus the timeout
    call = flows.call_tool(_SessionStub(), "slow", {}, 3.0, None, False)
    assert next(call) == flows.Now()


class _SessionStub:
    """Just enough of a session for call_tool's first step."""

    timeout = 30.0

    def __init__(self) -> None:
        self.core: ClientCore[None] = ClientCore()
        self.core.connected = True


def test_an_interrupted_waiter_cancels_its_task_without_waiting() -> None:
    """A waiter stopped from outside (asyncio cancellation, Ctrl-C: not an
    ``Exception``) cancels the task, fire-and-forget; an error does not."""
    for stop in (asyncio.CancelledError, KeyboardInterrupt):
        seen_cancel: list[Any] = []

        def perform(
            effect: flows.Effect, stop: type[BaseException] = stop, seen: list[Any] = seen_cancel
        ) -> Any:
            seen.append(effect)
            if isinstance(effect, flows.Request):
                raise stop()
            return None

        with pytest.raises(stop):
            flows.run(flows.task_outcome(modern_task(), None, True, None, 30.0), perform)
        assert [type(e).__name__ for e in seen_cancel] == ["Usable", "Request", "CancelNowait"]
    seen_error: list[Any] = []

    def fails(effect: flows.Effect) -> Any:
        seen_error.append(effect)
        if isinstance(effect, flows.Request):
            raise ProtocolError("boom")
        return None

    with pytest.raises(ProtocolError):
        flows.run(flows.task_outcome(modern_task(), None, True, None, 30.0), fails)
    assert not any(isinstance(e, flows.CancelNowait) for e in seen_error)
