"""The task table on its own: lifecycle, wire shapes per era, TTL expiry (a fake clock)."""

from __future__ import annotations

from mcpgen_runtime.tasks.table import DEFAULT_TTL_MS, MAX_TTL_MS, TaskTable


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_wire_shapes_differ_by_era() -> None:
    table = TaskTable(Clock())
    legacy = table.create("t", "legacy", 1000).wire()
    modern = table.create("t", "modern", None).wire()
    assert legacy["ttl"] == 1000 and "pollInterval" in legacy and "ttlMs" not in legacy
    assert modern["ttlMs"] == DEFAULT_TTL_MS and "pollIntervalMs" in modern
    assert legacy["createdAt"].endswith("Z") and legacy["status"] == "working"


def test_ttl_is_capped_and_expires() -> None:
    clock = Clock()
    table = TaskTable(clock)
    assert table.create("t", "legacy", 10 * MAX_TTL_MS).ttl_ms == MAX_TTL_MS
    short = table.create("t", "legacy", 1000)
    clock.now += 0.5
    assert table.get(short.task_id) is short
    clock.now += 1.0
    assert table.get(short.task_id) is None  # expired, gone


def test_a_task_with_a_blocked_waiter_does_not_expire() -> None:
    clock = Clock()
    table = TaskTable(clock)
    task = table.create("t", "legacy", 10)
    task.waiters.append(7)
    clock.now += 5
    assert table.get(task.task_id) is task


def test_outcomes() -> None:
    table = TaskTable(Clock())
    ok = table.create("t", "legacy")
    assert table.finish(ok, result={"content": [], "isError": False})
    assert ok.status == "completed" and not table.finish(ok, result={})
    tool_error = table.create("t", "legacy")
    table.finish(tool_error, result={"content": [], "isError": True})
    assert tool_error.status == "failed"  # 2025-11-25: isError fails the task
    modern_error = table.create("t", "modern")
    table.finish(modern_error, result={"content": [], "isError": True})
    assert modern_error.status == "completed"  # 2026: the result carries isError
    crashed = table.create("t", "modern")
    table.finish(crashed, error={"code": -32603, "message": "Internal error"})
    assert crashed.status == "failed"
    cancelled = table.create("t", "legacy")
    table.cancel(cancelled)
    assert cancelled.status == "cancelled" and not table.finish(cancelled, result={})
