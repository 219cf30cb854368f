"""Opening the task store ``--task-store`` names: the in-process store or Redis.

Apart from ``tasks.store`` (the interface) so the Redis store, which builds on the
interface, is loaded only here and only when a Redis URL is named.
"""

from __future__ import annotations

import importlib

from .store import MemoryTaskStore, TaskStore, mask_url
from .table import DEFAULT_LEASE_SECONDS, DEFAULT_MAX_TASKS, DEFAULT_MAX_TASKS_PER_WORKER

__all__ = ["open_task_store"]


def open_task_store(
    url: str,
    *,
    key_prefix: str = "mcpgen:default:",
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    max_tasks_per_worker: int = DEFAULT_MAX_TASKS_PER_WORKER,
    max_tasks: int = DEFAULT_MAX_TASKS,
) -> TaskStore:
    """The store ``--task-store`` names: ``memory`` or a ``redis://`` / ``rediss://``
    / ``unix://`` URL (its keys under ``key_prefix``). Nothing is connected yet (a
    Redis that is down fails the calls that need it, not the start-up).
    ``ValueError`` for anything else."""
    if url == "memory":
        return MemoryTaskStore(max_tasks_per_worker=max_tasks_per_worker, max_tasks=max_tasks)
    scheme = url.partition("://")[0].lower()
    if scheme in ("redis", "rediss", "unix"):
        # loaded by name: type checking code that uses the runtime must not need
        # redis-py (an optional extra)
        redis_store = importlib.import_module(".redis_store", __package__)
        store: TaskStore = redis_store.RedisTaskStore(
            url,
            key_prefix=key_prefix,
            lease_seconds=lease_seconds,
            max_tasks_per_worker=max_tasks_per_worker,
            max_tasks=max_tasks,
        )
        return store
    raise ValueError(
        f"--task-store must be 'memory' or a redis://host:port/db URL, got {mask_url(url)!r}"
    )
