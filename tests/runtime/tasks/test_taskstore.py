"""The in-process task store on its own: waiters woken, cancellation reaching the
running task, terminal tasks left alone, expiry (a fake clock), and the status rule
shared with the Redis store."""

from __future__ import annotations

import asyncio

import pytest

from mcpgen_runtime.tasks.factory import open_task_store
from mcpgen_runtime.tasks.store import MemoryTaskStore, mask_url, outcome_status, scrub


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
        assert [t.task_id for t in (await store.page("legacy", None, None))[0]] == [task.task_id]
        assert await store.page("modern", None, None) == ([], None)
        clock.now += 2
        assert await store.get(task.task_id) is None
        assert await store.page("legacy", None, None) == ([], None)

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


def test_store_urls_are_masked_for_logs() -> None:
    url = "rediss://admin:s3cret%21@redis.internal:6380/2?password=p4ss&db=2&token=t0k&ssl_cert_reqs=none"
    masked = mask_url(url)
    assert masked == (
        "rediss://admin:***@redis.internal:6380/2?password=***&db=2&token=***&ssl_cert_reqs=none"
    )
    assert mask_url("redis://:only-a-password@h:1/0") == "redis://:***@h:1/0"
    assert mask_url("redis://h:1/0") == "redis://h:1/0"
    said = scrub("AUTH failed for s3cret! with p4ss and t0k", url)
    assert said == "AUTH failed for *** with *** and ***"
    with pytest.raises(ValueError) as refused:
        open_task_store("mongo://u:hunter2@h/0?password=hunter2")
    assert "hunter2" not in str(refused.value)


def test_a_gone_waiter_leaves_no_event() -> None:
    async def go() -> int:
        store = MemoryTaskStore()
        task = await store.create("t", "legacy", None)
        waiter = asyncio.create_task(store.wait(task.task_id))
        await asyncio.sleep(0.01)
        waiter.cancel()  # its client went away
        await asyncio.gather(waiter, return_exceptions=True)
        for _ in range(100):
            assert await store.wait("unknown-" + "x" * 1000) is None
        return len(store.wakeups)

    assert asyncio.run(go()) == 0
