"""The task table: tool calls that run in the background and are polled.

Sans-I/O: it holds task state and answers questions about it; the server core
turns that into frames and the shell runs the work. Time comes from an
injectable clock, so expiry is tested without sleeping. Expired tasks are
dropped lazily, whenever the table is consulted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TERMINAL", "Task", "TaskTable"]

TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_TTL_MS = 10 * 60 * 1000  # a requestor that names no ttl gets ten minutes
MAX_TTL_MS = 60 * 60 * 1000  # and none gets more than an hour of our memory
POLL_INTERVAL_MS = 500
# How long a worker's lease on its running tasks lasts without a renewal (seconds;
# --task-lease / MCPGEN_TASK_LEASE). A worker renews it three times per period;
# once it lapses (the worker died or lost Redis), its running tasks are failed.
DEFAULT_LEASE_SECONDS = 15.0


def _iso(timestamp: float) -> str:
    from datetime import UTC, datetime  # imported when the first task exists, not at start-up

    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Task:
    task_id: str
    tool: str
    era: str  # "legacy" (2025-11-25 core tasks) or "modern" (2026-07-28 extension)
    created_at: float
    updated_at: float
    ttl_ms: int
    status: str = "working"
    status_message: str | None = None
    result: dict[str, Any] | None = None  # the CallToolResult, once completed (or failed by isError)
    error: dict[str, Any] | None = None  # a JSON-RPC error object, once failed that way
    waiters: list[Any] = field(default_factory=list)  # ids of blocked tasks/result requests

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def wire(self) -> dict[str, Any]:
        """The ``Task`` object in this task's era (field names differ)."""
        task: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task["createdAt"] = _iso(self.created_at)
        task["lastUpdatedAt"] = _iso(self.updated_at)
        if self.era == "modern":
            task["ttlMs"] = self.ttl_ms
            task["pollIntervalMs"] = POLL_INTERVAL_MS
        else:
            task["ttl"] = self.ttl_ms
            task["pollInterval"] = POLL_INTERVAL_MS
        return task


class TaskTable:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._tasks: dict[str, Task] = {}

    def create(self, tool: str, era: str, ttl_ms: object = None) -> Task:
        ttl = ttl_ms if isinstance(ttl_ms, int) and not isinstance(ttl_ms, bool) else DEFAULT_TTL_MS
        ttl = max(0, min(ttl, MAX_TTL_MS))
        import secrets  # task ids are unguessable: a client cannot read another's task
        now = self._clock()
        task = Task(secrets.token_urlsafe(16), tool, era, now, now, ttl)
        self._tasks[task.task_id] = task
        return task

    def get(self, task_id: object) -> Task | None:
        self._expire()
        return self._tasks.get(task_id) if isinstance(task_id, str) else None

    def all(self) -> list[Task]:
        self._expire()
        return sorted(self._tasks.values(), key=lambda task: task.created_at)

    def finish(
        self, task: Task, *, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
    ) -> bool:
        """Record the outcome; False when the task was already terminal (cancelled)."""
        if task.terminal:
            return False
        task.result, task.error = result, error
        failed = error is not None or bool(result and result.get("isError"))
        # 2025-11-25: a tool result with isError is a failed task; the 2026 extension
        # keeps such results as "completed" and reserves "failed" for JSON-RPC errors.
        task.status = "failed" if (error is not None or (failed and task.era == "legacy")) else "completed"
        task.updated_at = self._clock()
        return True

    def cancel(self, task: Task) -> None:
        task.status = "cancelled"
        task.status_message = "cancelled by the requestor"
        task.updated_at = self._clock()

    def _expire(self) -> None:
        now = self._clock()
        expired = [
            task_id
            for task_id, task in self._tasks.items()
            if (now - task.created_at) * 1000 > task.ttl_ms and not task.waiters
        ]
        for task_id in expired:
            del self._tasks[task_id]
