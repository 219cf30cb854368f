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

A store also keeps the callers' rate-limit buckets (``take_token``, the arithmetic
of ``ratelimit.bucket``): in this process for ``MemoryTaskStore``, in Redis for
``RedisTaskStore``, so every worker sharing it counts one caller's requests together.

A store also knows which tasks run *here*: ``track`` registers the callback that
stops a running task, so a ``tasks/cancel`` answered by any worker reaches the
one that runs it.

Bounds: a store holds at most ``max_tasks_per_worker`` live tasks created by
this process and ``max_tasks`` created by all the workers sharing it (one more
raises ``TaskLimitReached``); a blocked ``tasks/result`` holds one event while
it waits and none after (``Wakeups``). Which requestor may see a task is the
core's business (``server.task_methods``); stores record the owner and list by it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from ..ratelimit.bucket import LocalBuckets, RateLimit
from .table import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_TASKS,
    DEFAULT_MAX_TASKS_PER_WORKER,
    Task,
    TaskTable,
    outcome_status,
)

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "MemoryTaskStore",
    "TaskStore",
    "TaskStoreUnavailable",
    "Wakeups",
    "mask_url",
    "outcome_status",
    "scrub",
]

# How often a blocked tasks/result re-reads its task even without a wake-up
# (1 s): a safety net for a lost notification, and how a lapsed lease is seen.
WAIT_POLL_SECONDS = 1.0


class TaskStoreUnavailable(RuntimeError):
    """The store cannot be reached (Redis down, refused, timed out)."""


class TaskStore(Protocol):
    """The tasks every worker of one server shares."""

    url: str  # what --task-store said, for messages
    shared: bool  # True when other processes see the same tasks

    async def create(self, tool: str, era: str, ttl_ms: object, owner: str | None = None) -> Task:
        """A new ``working`` task owned by ``owner``, durably readable before this
        returns; ``TaskLimitReached`` past a cap on live tasks."""
        ...

    async def get(self, task_id: object) -> Task | None:
        """The task, or None when unknown or expired."""
        ...

    async def page(
        self, era: str, owner: str | None, cursor: object
    ) -> tuple[list[Task], str | None]:
        """A page of the live tasks of ``era`` owned by ``owner``, oldest first,
        from ``cursor`` on, and the next page's cursor (``TaskTable.page``)."""
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

    async def ready(self) -> bool:
        """Whether the store answers now (a readiness probe; never raises)."""
        ...

    async def take_token(self, key: str, limit: RateLimit) -> float:
        """One request of the caller ``key`` against ``limit``: 0.0 when admitted,
        else the seconds until it may send again (``ratelimit.bucket.take``).
        ``TaskStoreUnavailable`` when the store cannot be reached."""
        ...

    async def relay(self, message: Mapping[str, Any]) -> None:
        """Hand a client's response to every other worker (the one whose handler
        asked the question takes it): an answer POSTed to the wrong worker."""
        ...

    async def hear_relayed(self, deliver: Callable[[dict[str, Any]], object]) -> None:
        """From now on, pass the responses other workers relay to ``deliver``
        (returns once they reach this worker)."""
        ...

    async def close(self) -> None: ...


class Wakeups:
    """Events that wake blocked ``tasks/result`` calls when a task ends. Each
    waiter holds its own event only while it waits: nothing is kept for an id
    that is unknown, already terminal, or whose waiter went away."""

    def __init__(self) -> None:
        self._events: dict[str, set[asyncio.Event]] = {}

    @contextlib.contextmanager
    def waiting(self, task_id: str) -> Iterator[asyncio.Event]:
        event = asyncio.Event()
        self._events.setdefault(task_id, set()).add(event)
        try:
            yield event
        finally:
            events = self._events.get(task_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._events[task_id]

    def wake(self, task_id: str) -> None:
        for event in self._events.get(task_id, ()):
            event.set()

    def __len__(self) -> int:
        return len(self._events)


class MemoryTaskStore:
    """The in-process store: a ``TaskTable`` plus wake-ups for blocked waiters."""

    shared = False

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        max_tasks_per_worker: int = DEFAULT_MAX_TASKS_PER_WORKER,
        max_tasks: int = DEFAULT_MAX_TASKS,
    ) -> None:
        self.url = "memory"
        # one process: its own cap and the store's are the same table
        self.table = TaskTable(clock, max_tasks=min(max_tasks_per_worker, max_tasks))
        self._clock = clock
        self.wakeups = Wakeups()
        self._running: dict[str, Callable[[], None]] = {}
        self.buckets = LocalBuckets()

    async def create(self, tool: str, era: str, ttl_ms: object, owner: str | None = None) -> Task:
        return self.table.create(tool, era, ttl_ms, owner=owner)

    async def take_token(self, key: str, limit: RateLimit) -> float:
        # the monotonic clock: one process, and a wall clock that jumps must not
        # hand out (or hold back) a burst
        return self.buckets.take(key, time.monotonic(), limit)

    async def get(self, task_id: object) -> Task | None:
        return self.table.get(task_id)

    async def page(
        self, era: str, owner: str | None, cursor: object
    ) -> tuple[list[Task], str | None]:
        return self.table.page(era, owner, cursor)

    async def finish(
        self, task_id: str, *, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> bool:
        task = self.table.get(task_id)
        if task is None or not self.table.finish(task, result=result, error=error):
            return False
        self.wakeups.wake(task_id)
        return True

    async def cancel(self, task_id: str) -> tuple[Task | None, bool]:
        task = self.table.get(task_id)
        if task is None:
            return None, False
        before = dataclasses.replace(task, waiters=[])
        if task.terminal:
            return before, False
        self.table.cancel(task)
        self.wakeups.wake(task_id)
        stop = self._running.get(task_id)
        if stop is not None:
            stop()
        return before, True

    async def wait(self, task_id: str) -> Task | None:
        while True:
            task = self.table.get(task_id)
            if task is None or task.terminal:
                return task
            with self.wakeups.waiting(task_id) as event:
                task.waiters.append(event)  # a task with a waiter does not expire meanwhile
                try:
                    await event.wait()
                finally:
                    task.waiters.remove(event)

    def track(self, task_id: str, stop: Callable[[], None]) -> None:
        self._running[task_id] = stop

    def untrack(self, task_id: str) -> None:
        self._running.pop(task_id, None)

    async def ready(self) -> bool:
        return True  # in this process: as ready as the process

    async def relay(self, message: Mapping[str, Any]) -> None:
        return None  # one process: no other worker to hand it to

    async def hear_relayed(self, deliver: Callable[[dict[str, Any]], object]) -> None:
        return None

    async def close(self) -> None:
        return None


# Query parameters of a Redis URL whose values are shown in messages; any other
# value (password=…, or a parameter this list does not know) is masked.
_HARMLESS_QUERY = frozenset(
    {
        "db",
        "protocol",
        "socket_timeout",
        "socket_connect_timeout",
        "socket_keepalive",
        "retry_on_timeout",
        "health_check_interval",
        "max_connections",
        "ssl_cert_reqs",
        "decode_responses",
        "encoding",
        "client_name",
        "timeout",
    }
)


def mask_url(url: str) -> str:
    """``url`` fit for a log: the password of its userinfo and the value of every
    query parameter not known to be harmless replaced by ``***``."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            user, colon, _ = userinfo.partition(":")
            netloc = f"{user}:***@{host}" if colon else f"***@{host}"
        query = urlencode(
            [
                (k, v if k.lower() in _HARMLESS_QUERY else "***")
                for k, v in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="*",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "(a task store URL that cannot be parsed)"


def url_secrets(url: str) -> list[str]:
    """The secret values of ``url`` (its password, its masked query values), to
    scrub them from other text, such as a driver's error message."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [unquote(parts.password)] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query) if k.lower() not in _HARMLESS_QUERY and v]
    return found


def scrub(text: str, url: str) -> str:
    """``text`` with every secret of ``url`` replaced by ``***``."""
    for secret in sorted(url_secrets(url), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
