"""The client's protocol flows without any I/O: a script answers each effect, as the
sync and async sessions do with threads and an event loop."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen_runtime._errors import ProtocolError, Timeout
from mcpgen_runtime.client import flows
from mcpgen_runtime.client.tasks import TaskStatus, _TaskState


def run(flow: flows.Flow[Any], answers: list[Any]) -> tuple[Any, list[flows.Effect]]:
    """Drive ``flow``: each effect takes the next answer (an exception is thrown in)."""
    seen: list[flows.Effect] = []

    def perform(effect: flows.Effect) -> Any:
        seen.append(effect)
        if isinstance(effect, (flows.Request, flows.Exchange, flows.Connected)):
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return None

    return flows.run(flow, perform), seen


def modern_task() -> _TaskState:
    return _TaskState("slow", "modern", created=TaskStatus("t1", "working"), token=7)


def test_a_modern_task_is_polled_at_the_server_s_interval_until_it_completes() -> None:
    result = {"content": [{"type": "text", "text": "done"}]}
    outcome, seen = run(
        flows.task_outcome(modern_task(), None, True, None, 30.0),
        [{"taskId": "t1", "status": "working", "pollIntervalMs": 250},
         {"taskId": "t1", "status": "completed", "result": result}],
    )
    assert outcome == result
    assert [type(e).__name__ for e in seen] == [
        "Usable", "Request", "Sleep", "Request", "ProgressDone"]
    assert seen[1] == flows.Request("tasks/get", {"taskId": "t1"}, 30.0, flows.TASK_RESULT_TYPES)
    assert seen[2] == flows.Sleep(0.25)


def test_a_timed_out_task_is_cancelled_then_reported() -> None:
    with pytest.raises(Timeout, match="no result within 2s"):
        run(flows.task_outcome(modern_task(), None, True, 2.0, 30.0),
            [Timeout("tasks/get"), True, {}])


def test_cancelling_an_ended_2025_task_reads_its_status() -> None:
    state = _TaskState("slow", "legacy", created=TaskStatus("t1", "working"))
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
