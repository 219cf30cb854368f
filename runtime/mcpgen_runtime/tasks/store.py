"""Where the HTTP server keeps its tasks: the store interface and the in-process store.

A task (a ``tools/call`` that runs in the background and is polled) is created
by the worker that accepted the call, runs there, and is read, waited on, listed
and cancelled by whichever worker a later request reaches.
``TaskStore`` is what those workers share:

- ``MemoryTaskStore`` (``--task-store memory``, the default): the task table of
  this one process, exactly what a single server had before. Nothing is shared,
  so it serves tasks only when one process answers every request.
- ``RedisTaskStore`` (``--task-store redis://host:port/db``, in
  ``tasks.redis_store``): every worker on every machine pointing at the same
  Redis sees the same tasks.

The interface is asynchronous (the HTTP shell runs on an event loop; a Redis
round trip must not block it). The stdio server keeps the synchronous
``TaskTable`` inside its sans-I/O core: one stdio process serves one client,
so it has nothing to share.

A store also knows which tasks run *here*: ``track`` registers the callback that
stops a running task, so a ``tasks/cancel`` answered by any worker reaches the
one that runs it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

from .table import DEFAULT_LEASE_SECONDS, TERMINAL, Task, TaskTable

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "MemoryTaskStore",
    "TaskStore",
    "TaskStoreUnavailable",
    "outcome_status",
]

# How often a blocked tasks/result re-reads its task even without a wake-up
# (1 s): a safety net for a lost notification, and how a lapsed lease is seen.
WAIT_POLL_SECONDS = 1.0


class TaskStoreUnavailable(RuntimeError):
    """The store cannot be reached (Redis down, refused, timed out)."""


def outcome_status(era: str, result: dict[str, Any] | None, error: dict[str, Any] | None) -> str:
    """The terminal status of a task that ended with ``result`` or ``error``.

    2025-11-25: a tool result with ``isError`` fails the task; the 2026 extension
    keeps it ``completed`` (the result carries ``isError``) and reserves ``failed``
    for JSON-RPC errors. The same rule as ``TaskTable.finish``."""
    if error is not None:
        return "failed"
    if era == "legacy" and bool(result and result.get("isError")):
        return "failed"
    return "completed"


class TaskStore(Protocol):
    """The tasks every worker of one server shares."""

    url: str  # what --task-store said, for messages
    shared: bool  # True when other processes see the same tasks

    async def create(self, tool: str, era: str, ttl_ms: object) -> Task:
        """A new ``working`` task, durably readable before this returns."""
        ...

    async def get(self, task_id: object) -> Task | None:
        """The task, or None when unknown or expired."""
        ...

    async def list(self, era: str) -> list[Task]:
        """Every live task of ``era``, oldest first."""
        ...

    async def finish(
        self, task_id: str, *, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> bool:
        """Record the outcome; False when the task was already terminal or is gone."""
        ...

    async def cancel(self, task_id: str) -> tuple[Task | None, bool]:
        """Cancel unless terminal: (the task as it was before, whether this call
        cancelled it). The worker running it is told."""
        ...

    async def wait(self, task_id: str) -> Task | None:
        """Block until the task is terminal (or gone); the task then."""
        ...

    def track(self, task_id: str, stop: Callable[[], None]) -> None:
        """``task_id`` runs in this process; ``stop`` interrupts it."""
        ...

    def untrack(self, task_id: str) -> None:
        """The task's handler has ended here."""
        ...

    async def close(self) -> None: ...


class MemoryTaskStore:
    """The in-process store: a ``TaskTable`` plus wake-ups for blocked waiters."""

    shared = False

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.url = "memory"
        self.table = TaskTable(clock)
        self._clock = clock
        self._done: dict[str, asyncio.Event] = {}
        self._running: dict[str, Callable[[], None]] = {}

    async def create(self, tool: str, era: str, ttl_ms: object) -> Task:
        return self.table.create(tool, era, ttl_ms)

    async def get(self, task_id: object) -> Task | None:
        return self.table.get(task_id)

    async def list(self, era: str) -> list[Task]:
        return [task for task in self.table.all() if task.era == era]

    async def finish(
        self, task_id: str, *, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> bool:
        task = self.table.get(task_id)
        if task is None or not self.table.finish(task, result=result, error=error):
            return False
        self._wake(task_id)
        return True

    async def cancel(self, task_id: str) -> tuple[Task | None, bool]:
        task = self.table.get(task_id)
        if task is None:
            return None, False
        before = _copy(task)
        if task.terminal:
            return before, False
        self.table.cancel(task)
        self._wake(task_id)
        stop = self._running.get(task_id)
        if stop is not None:
            stop()
        return before, True

    async def wait(self, task_id: str) -> Task | None:
        while True:
            task = self.table.get(task_id)
            if task is None or task.terminal:
                return task
            event = self._done.setdefault(task_id, asyncio.Event())
            task.waiters.append(event)  # a task with a waiter does not expire meanwhile
            try:
                await event.wait()
            finally:
                task.waiters.remove(event)

    def _wake(self, task_id: str) -> None:
        event = self._done.pop(task_id, None)
        if event is not None:
            event.set()

    def track(self, task_id: str, stop: Callable[[], None]) -> None:
        self._running[task_id] = stop

    def untrack(self, task_id: str) -> None:
        self._running.pop(task_id, None)

    async def close(self) -> None:
        return None


def _copy(task: Task) -> Task:
    return Task(task.task_id, task.tool, task.era, task.created_at, task.updated_at, task.ttl_ms,
                task.status, task.status_message, task.result, task.error)


def is_terminal(status: str) -> bool:
    return status in TERMINAL
