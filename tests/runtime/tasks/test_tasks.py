"""The task table on its own: lifecycle, wire shapes per era, TTL expiry (a fake clock),
expiry and listing that walk no more than they must, pages per era and owner, the cap."""

from __future__ import annotations

import pytest

from mcpgen_runtime.tasks.table import DEFAULT_TTL_MS, MAX_TTL_MS, TaskLimitReached, TaskTable


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
    task.waiters.clear()  # answered
    clock.now += 2  # its grace has passed: gone at the next access
    assert table.get(task.task_id) is None


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


class NoScan(dict):  # type: ignore[type-arg]
    """A task dict that fails any walk over all its tasks."""

    def _walk(self, *args: object) -> None:
        raise AssertionError("the table walked every task")

    items = values = keys = __iter__ = _walk  # type: ignore[assignment]


def test_expiry_and_lookups_do_not_walk_every_task() -> None:
    clock = Clock()
    table = TaskTable(clock, max_tasks=None)
    tasks = [table.create("t", "legacy", 1000 + i) for i in range(2000)]
    table._tasks = NoScan(table._tasks)
    clock.now += 1.4995  # the first 500 have expired (ttl 1000..1499 ms)
    assert table.get(tasks[499].task_id) is None
    assert table.get(tasks[500].task_id) is tasks[500]
    page, _ = table.page("legacy", None)
    # created at one moment: listed in the order of their ids
    assert [t.task_id for t in page] == sorted(t.task_id for t in tasks[500:])[:100]


def test_pages_by_era_and_owner_with_cursors() -> None:
    clock = Clock()
    table = TaskTable(clock, max_tasks=None)
    mine = []
    for i in range(250):
        clock.now += 0.001 if i % 3 else 0  # some share a creation time
        mine.append(table.create("t", "legacy", owner="alice").task_id)
        table.create("t", "legacy", owner="bob")
        table.create("t", "modern", owner="alice")
    seen: list[str] = []
    cursor = None
    sizes = []
    while True:
        page, cursor = table.page("legacy", "alice", cursor)
        sizes.append(len(page))
        seen += [task.task_id for task in page]
        if cursor is None:
            break
    created = {task_id: table.get(task_id).created_at for task_id in mine}  # type: ignore[union-attr]
    # oldest first; tasks created at the same moment in a fixed order (their ids)
    assert sizes == [100, 100, 50] and seen == sorted(mine, key=lambda i: (created[i], i))
    assert table.page("legacy", "carol") == ([], None)
    for bad in ("x", "", 7, "bm90IGEgY3Vyc29y", "aW5mIHg="):  # junk, "not a cursor", "inf x"
        with pytest.raises(ValueError):
            table.page("legacy", "alice", bad)


def test_live_tasks_are_capped() -> None:
    clock = Clock()
    table = TaskTable(clock, max_tasks=2)
    table.create("t", "legacy", 1000)
    table.create("t", "legacy", 5000)
    with pytest.raises(TaskLimitReached) as refused:
        table.create("t", "legacy")
    assert (refused.value.limit, refused.value.scope) == (2, "worker")
    clock.now += 2  # one expires: room again
    table.create("t", "legacy")
