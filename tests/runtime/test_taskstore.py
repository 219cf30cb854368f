"""The in-process task store on its own: waiters woken, cancellation reaching the
running task, terminal tasks left alone, expiry (a fake clock), and the status rule
shared with the Redis store."""

from __future__ import annotations

import asyncio

import pytest

from mcpgen_runtime.tasks.factory import open_task_store
from mcpgen_runtime.tasks.store import MemoryTaskStore, outcome_status


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_waiter_wakes_when_the_task_ends() -> None:
    async def go() -> tuple[str, str]:
        store = MemoryTaskStore()
        task = await store.create("t", "legacy", None)
        waiter = asyncio.create_task(store.wait(task.task_id))
        await asyncio.sleep(0.01)
        assert not waiter.done()
        assert await store.finish(task.task_id, result={"content": [], "isError": True}, error=None)
        done = await asyncio.wait_for(waiter, 5)
        assert done is not None
        assert not await store.finish(task.task_id, result={"content": []}, error=None)
        return done.status, (await store.get(task.task_id)).status  # type: ignore[union-attr]

    assert asyncio.run(go()) == ("failed", "failed")  # 2025-11-25: isError fails the task


def test_cancel_stops_the_running_task_once() -> None:
    async def go() -> list[str]:
        store = MemoryTaskStore()
        task = await store.create("t", "modern", 1000)
        stopped: list[str] = []
        store.track(task.task_id, lambda: stopped.append(task.task_id))
        before, changed = await store.cancel(task.task_id)
        assert changed and before is not None and before.status == "working"
        again, changed_again = await store.cancel(task.task_id)
        assert not changed_again and again is not None and again.status == "cancelled"
        assert await store.cancel("unknown") == (None, False)
        return stopped

    assert len(asyncio.run(go())) == 1


def test_tasks_expire_with_their_ttl() -> None:
    clock = Clock()

    async def go() -> None:
        store = MemoryTaskStore(clock)
        task = await store.create("t", "legacy", 1000)
        assert [t.task_id for t in await store.list("legacy")] == [task.task_id]
        assert await store.list("modern") == []
        clock.now += 2
        assert await store.get(task.task_id) is None
        assert await store.list("legacy") == []

    asyncio.run(go())


def test_outcome_status_per_era() -> None:
    assert outcome_status("legacy", {"isError": True}, None) == "failed"
    assert outcome_status("modern", {"isError": True}, None) == "completed"
    assert outcome_status("modern", None, {"code": -32603}) == "failed"
    assert outcome_status("legacy", {"content": []}, None) == "completed"


def test_unknown_store_urls_are_refused() -> None:
    assert open_task_store("memory").shared is False
    with pytest.raises(ValueError, match="must be 'memory' or a redis://"):
        open_task_store("postgres://x")
