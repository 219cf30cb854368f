"""The task table: tool calls that run in the background and are polled.

Sans-I/O: it holds task state and answers questions about it; the server core
turns that into frames and the shell runs the work. Time comes from an
injectable clock, so expiry is tested without sleeping.

Expiry does not scan: a heap orders the tasks by the moment they expire, and
every access pops only what has expired since the last one. Listing does not
scan either: each (era, owner) keeps its tasks sorted by creation, and a page
starts at its cursor by bisection.

A task has an *owner*: the identity of the requestor that created it, or None
when the requestor could not be told apart from others (stdio, where one process
serves one client; HTTP without an identity). A task with an owner is answered
only to that owner (see ``server.task_methods``).
"""

from __future__ import annotations

import base64
import bisect
import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_MAX_TASKS",
    "DEFAULT_MAX_TASKS_PER_WORKER",
    "LIST_PAGE_SIZE",
    "TERMINAL",
    "Task",
    "TaskLimitReached",
    "TaskTable",
    "decode_cursor",
    "encode_cursor",
    "outcome_status",
]

TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_TTL_MS = 10 * 60 * 1000  # a requestor that names no ttl gets ten minutes
MAX_TTL_MS = 60 * 60 * 1000  # and none gets more than an hour of our memory
POLL_INTERVAL_MS = 500
# Live tasks (running, or finished and kept for their TTL) one process holds at
# once (1,000; --max-tasks-per-worker), and that all the workers sharing a store
# hold together (10,000; --max-tasks). One more task is refused with -31000.
DEFAULT_MAX_TASKS_PER_WORKER = 1_000
DEFAULT_MAX_TASKS = 10_000
LIST_PAGE_SIZE = 100  # tasks per tasks/list page
# How long a worker's lease on its running tasks lasts without a renewal (seconds;
# --task-lease / MCPGEN_TASK_LEASE). A worker renews it three times per period;
# once it lapses (the worker died or lost Redis), its running tasks are failed.
DEFAULT_LEASE_SECONDS = 15.0
# A task whose TTL has passed while a tasks/result waits on it is kept this much
# longer, again and again, until the waiter has had its answer.
WAITER_GRACE_SECONDS = 1.0


class TaskLimitReached(Exception):
    """A new task would exceed a cap on live tasks: ``limit`` of ``scope``
    (``"worker"``: this process; ``"store"``: every worker sharing the store)."""

    def __init__(self, limit: int, scope: str) -> None:
        super().__init__(f"{limit} live tasks ({scope} limit)")
        self.limit = limit
        self.scope = scope


def _iso(timestamp: float) -> str:
    from datetime import UTC, datetime  # imported when the first task exists, not at start-up

    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode_cursor(created_at: float, task_id: str) -> str:
    """An opaque ``tasks/list`` cursor: the position after the task given."""
    return base64.urlsafe_b64encode(f"{created_at!r} {task_id}".encode()).decode()


def decode_cursor(cursor: object) -> tuple[float, str]:
    """The position a cursor of ``encode_cursor`` names; ``ValueError`` for
    anything else (the caller answers -32602, unknown cursor)."""
    if not isinstance(cursor, str) or len(cursor) > 200:
        raise ValueError("not a cursor")
    try:
        created, _, task_id = (
            base64.urlsafe_b64decode(cursor.encode("ascii")).decode().partition(" ")
        )
        position = float(created)
    except (UnicodeError, ValueError) as exc:  # binascii.Error is a ValueError
        raise ValueError("not a cursor") from exc
    if not task_id or not math.isfinite(position):
        raise ValueError("not a cursor")
    return position, task_id


def outcome_status(era: str, result: dict[str, Any] | None, error: dict[str, Any] | None) -> str:
    """The terminal status of a task that ended with ``result`` or ``error``.

    2025-11-25: a tool result with ``isError`` fails the task; the 2026 extension
    keeps it ``completed`` (the result carries ``isError``) and reserves ``failed``
    for JSON-RPC errors."""
    if error is not None:
        return "failed"
    if era == "legacy" and bool(result and result.get("isError")):
        return "failed"
    return "completed"


def clamp_ttl(ttl_ms: object) -> int:
    """The TTL a task gets for the ``ttl`` its requestor asked (ms)."""
    ttl = ttl_ms if isinstance(ttl_ms, int) and not isinstance(ttl_ms, bool) else DEFAULT_TTL_MS
    return max(0, min(ttl, MAX_TTL_MS))


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
    result: dict[str, Any] | None = (
        None  # the CallToolResult, once completed (or failed by isError)
    )
    error: dict[str, Any] | None = None  # a JSON-RPC error object, once failed that way
    owner: str | None = None  # the requestor's identity; None: whoever holds the id
    waiters: list[Any] = field(default_factory=list)  # ids of blocked tasks/result requests

    @classmethod
    def new(cls, tool: str, era: str, ttl_ms: object, now: float, owner: str | None = None) -> Task:
        """A fresh ``working`` task with an unguessable id (a client cannot read
        another's task) and the TTL ``clamp_ttl`` grants for ``ttl_ms``."""
        import secrets

        return cls(secrets.token_urlsafe(16), tool, era, now, now, clamp_ttl(ttl_ms), owner=owner)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires_at(self) -> float:
        return self.created_at + self.ttl_ms / 1000

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
    """The live tasks of one process. ``max_tasks``: how many may be live at once
    (None: no bound); one more raises ``TaskLimitReached``."""

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        max_tasks: int | None = DEFAULT_MAX_TASKS_PER_WORKER,
    ) -> None:
        self._clock = clock
        self.max_tasks = max_tasks
        self._tasks: dict[str, Task] = {}
        self._expiry: list[tuple[float, str]] = []  # a heap of (expires at, id)
        self._listed: dict[tuple[str, str | None], list[tuple[float, str]]] = {}

    def __len__(self) -> int:
        self._expire()
        return len(self._tasks)

    def create(
        self, tool: str, era: str, ttl_ms: object = None, *, owner: str | None = None
    ) -> Task:
        self._expire()
        if self.max_tasks is not None and len(self._tasks) >= self.max_tasks:
            raise TaskLimitReached(self.max_tasks, "worker")
        task = Task.new(tool, era, ttl_ms, self._clock(), owner)
        self.add(task)
        return task

    def add(self, task: Task) -> None:
        """Hold ``task`` (created here or read from a store)."""
        self._tasks[task.task_id] = task
        heapq.heappush(self._expiry, (task.expires_at, task.task_id))
        bisect.insort(
            self._listed.setdefault((task.era, task.owner), []), (task.created_at, task.task_id)
        )

    def get(self, task_id: object) -> Task | None:
        self._expire()
        return self._tasks.get(task_id) if isinstance(task_id, str) else None

    def all(self) -> list[Task]:
        """Every live task, oldest first (for tests and fuzzers: it scans)."""
        self._expire()
        return sorted(self._tasks.values(), key=lambda task: task.created_at)

    def page(
        self, era: str, owner: str | None, cursor: object = None, limit: int = LIST_PAGE_SIZE
    ) -> tuple[list[Task], str | None]:
        """The live tasks of ``era`` owned by ``owner`` after ``cursor``, oldest
        first, at most ``limit``; and the cursor of the next page (None: no more).
        ``ValueError`` for a cursor this table did not issue."""
        self._expire()
        entries = self._listed.get((era, owner), [])
        start = 0 if cursor is None else bisect.bisect_right(entries, decode_cursor(cursor))
        chosen = entries[start : start + limit]
        following = None
        if chosen and start + limit < len(entries):
            following = encode_cursor(*chosen[-1])
        return [self._tasks[task_id] for _, task_id in chosen], following

    def finish(
        self,
        task: Task,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> bool:
        """Record the outcome; False when the task was already terminal (cancelled)."""
        if task.terminal:
            return False
        task.result, task.error = result, error
        task.status = outcome_status(task.era, result, error)
        task.updated_at = self._clock()
        return True

    def cancel(self, task: Task) -> None:
        task.status = "cancelled"
        task.status_message = "cancelled by the requestor"
        task.updated_at = self._clock()

    def _expire(self) -> None:
        """Drop the tasks whose TTL has passed since the last access (none waited on)."""
        now = self._clock()
        while self._expiry and self._expiry[0][0] < now:
            _, task_id = heapq.heappop(self._expiry)
            task = self._tasks.get(task_id)
            if task is None:
                continue
            if task.waiters:  # a blocked tasks/result is answered first
                heapq.heappush(self._expiry, (now + WAITER_GRACE_SECONDS, task_id))
                continue
            del self._tasks[task_id]
            key = (task.era, task.owner)
            entries = self._listed[key]
            del entries[bisect.bisect_left(entries, (task.created_at, task_id))]
            if not entries:
                del self._listed[key]
