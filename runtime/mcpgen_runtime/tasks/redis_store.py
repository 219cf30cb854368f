"""The Redis task store: tasks shared by every worker that names the same Redis.

Why redis-py and not Docket (which FastMCP uses): Docket is a job queue. It
decides which worker runs a function, keeps its own states and results, and
needs a Docket worker loop in every process. The protocol's task model is
different: the worker that accepted ``tools/call`` already holds the validated
arguments and runs the handler itself; what must be shared is the task's record
(status, timestamps, TTL, result or JSON-RPC error), a way to wake blocked
``tasks/result`` calls, a way to reach the running worker with a cancellation,
and a lease so a dead worker's tasks fail. Those are four Redis primitives
(a hash with an expiry, pub/sub, a key with an expiry, atomic scripts); mapping
MCP's states onto Docket's would cost more than it saves and pull in a second
framework. redis-py is the reference client, typed, and has an asyncio API.

Layout, under a key prefix (``--task-key-prefix``; by default
``mcpgen:<server name>:``, so several servers can share a Redis; two deployments
of one server that must not see each other's tasks give each its own prefix).
Every key expires: none outlives the tasks it is about.

- ``task:<id>``: a hash (tool, era, status, statusMessage, createdAt, updatedAt,
  ttlMs, result, error, worker, owner), expiring ``ttlMs`` after creation: a
  result is kept for the task's TTL, then it is gone (``tasks/get``: unknown task).
  ``worker`` runs the task; ``owner`` is the requestor's identity, if known.
- ``listed:<era>:<owner digest>``: a sorted set of task ids by creation time, one
  per era and owner, read a page at a time (one script per page) by ``tasks/list``.
- ``live``: a sorted set of ``<era>:<owner digest>:<id>`` by expiry time: how many
  tasks are live (the ``max_tasks`` cap, checked and counted in one script) and
  which ids to drop from ``listed:`` once expired.
- ``lease:<worker>``: exists while the worker lives; renewed three times per
  lease period. ``running:<worker>``: the ids of the tasks it runs; ``workers``:
  the workers that ran tasks.
- ``rate:<caller digest>``: a caller's rate-limit bucket (``take_token``, the
  ``RATE`` script), expiring when the bucket is full again.
- channel ``events``: ``cancel:<id>`` (the running worker stops it),
  ``done:<id>`` (blocked ``tasks/result`` calls wake up) and ``answer:<JSON>`` (a
  client's answer to a tool's question, POSTed to another worker than the one
  whose handler waits for it: ``relay``).

Every state change is one Lua script, so it is atomic: a task is finished,
cancelled or failed exactly once, and no cap is exceeded by a race. A task whose
worker's lease has lapsed is failed by whoever reads it first (``tasks/get``,
``tasks/result``, ``tasks/list``) and by every live worker's periodic sweep,
which also forgets expired ids. Not for Redis Cluster (scripts touch keys they
compute); a single Redis or a replicated primary is fine.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import heapq
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..protocol.jsonrpc import INTERNAL_ERROR
from ..ratelimit.bucket import RateLimit
from . import redis_scripts as scripts
from .store import (
    WAIT_POLL_SECONDS,
    TaskStoreUnavailable,
    Wakeups,
    mask_url,
    scrub,
)
from .table import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_TASKS,
    DEFAULT_MAX_TASKS_PER_WORKER,
    LIST_PAGE_SIZE,
    MAX_TTL_MS,
    Task,
    TaskLimitReached,
    decode_cursor,
    encode_cursor,
    outcome_status,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["INSTALL_HINT", "RedisTaskStore"]

# the server's logger tree (telemetry.logs configures it; this part may not import it)
_LOG = logging.getLogger("mcpgen.tasks")

INSTALL_HINT = "the Redis task store needs redis-py: pip install 'mcpgen-runtime[redis]' (or: pip install redis)"
# Seconds to connect to Redis and to wait for one reply (2 s): a Redis that is
# down fails the call that needs it quickly instead of hanging it.
SOCKET_TIMEOUT_SECONDS = 2.0
DEAD_WORKER_MESSAGE = "the worker running this task stopped before it finished (its lease lapsed)"


def _require_redis() -> None:
    try:
        import redis.asyncio  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"{INSTALL_HINT} ({exc})") from None


class RedisTaskStore:
    """Tasks in Redis, shared by every worker configured with the same URL and prefix."""

    shared = True

    def __init__(
        self,
        url: str,
        *,
        key_prefix: str = "mcpgen:default:",
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_tasks_per_worker: int = DEFAULT_MAX_TASKS_PER_WORKER,
        max_tasks: int = DEFAULT_MAX_TASKS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        _require_redis()
        self.url = url
        self.lease_seconds = lease_seconds
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.max_tasks = max_tasks
        self._clock = clock
        self.prefix = key_prefix
        self.channel = key_prefix + "events"
        self._redis: Redis | None = None
        self._running: dict[str, Callable[[], None]] = {}
        self.wakeups = Wakeups()
        # when each live task created here expires: the per-worker cap, kept here
        self._mine = LocalQuota(max_tasks_per_worker)
        self._background: list[asyncio.Task[None]] = []
        self._registered = False
        # relayed answers go here (http.exchange); set once subscribed to the channel
        self._deliver: Callable[[dict[str, Any]], object] | None = None
        self._subscribed = asyncio.Event()

    # -- connection ------------------------------------------------------------

    @property
    def redis(self) -> Redis:
        if self._redis is None:
            from redis.asyncio import Redis

            self._redis = Redis.from_url(
                self.url,
                socket_connect_timeout=SOCKET_TIMEOUT_SECONDS,
                socket_timeout=SOCKET_TIMEOUT_SECONDS,
                decode_responses=True,
            )
        return self._redis

    async def ready(self) -> bool:
        """A PING answered within the socket timeout."""
        try:
            return bool(await self._do(lambda: self.redis.ping()))
        except TaskStoreUnavailable:
            return False

    async def _do(self, what: Callable[[], Any]) -> Any:
        """One Redis operation; a failure becomes ``TaskStoreUnavailable``, whose
        text (for the server's log, never for a client) has the URL's secrets masked."""
        from redis.exceptions import RedisError

        try:
            return await what()
        except (RedisError, OSError) as exc:
            raise TaskStoreUnavailable(
                scrub(f"the task store at {mask_url(self.url)} cannot be reached: {exc}", self.url)
            ) from None

    async def _register(self) -> None:
        """Take this worker's lease and start renewing it (first task created here)."""
        if self._registered:
            return
        await self._do(self._take_lease)
        self._registered = True
        self._start(self._renew_lease())

    def _take_lease(self) -> Any:
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(self.prefix + "lease:" + self.worker, "1", px=int(self.lease_seconds * 1000))
        pipe.sadd(self.prefix + "workers", self.worker)
        pipe.pexpire(self.prefix + "workers", self._keep_ms())
        return pipe.execute()

    def _keep_ms(self) -> int:
        """How long a set of ids lives past its last change: no id in it outlives that."""
        return MAX_TTL_MS + int(3 * self.lease_seconds * 1000)

    def _start(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.append(task)

    async def _renew_lease(self) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                await self._do(self._take_lease)
                await self._do(self._sweep)
            except TaskStoreUnavailable as exc:
                _LOG.warning("cannot renew the task lease: %s", exc)

    def _common(self) -> list[Any]:
        """The ARGV every script starts with."""
        return [self.prefix, self._now(), self._dead_error(), DEAD_WORKER_MESSAGE, self.channel]

    async def _sweep(self) -> Any:
        return await self.redis.eval(
            scripts.SWEEP,
            2,
            self.prefix + "workers",
            self.prefix + "live",
            *self._common(),
            self._keep_ms(),
        )

    def _now(self) -> str:
        return repr(self._clock())

    def _dead_error(self) -> str:
        return json.dumps({"code": INTERNAL_ERROR, "message": DEAD_WORKER_MESSAGE})

    async def _listen(self) -> None:
        """Wake-ups and cancellations from other workers (reconnects after a loss)."""
        while True:
            pubsub: PubSub | None = None
            try:
                pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
                await pubsub.subscribe(self.channel)
                self._subscribed.set()
                async for message in pubsub.listen():
                    data = message.get("data")
                    if isinstance(data, str):
                        self._event(data)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis gone: waiters poll meanwhile
                await asyncio.sleep(WAIT_POLL_SECONDS)
            finally:
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()

    def _event(self, data: str) -> None:
        kind, _, task_id = data.partition(":")
        if kind == "answer":
            self._relayed(task_id)
        elif kind == "done":
            self.wakeups.wake(task_id)
        elif kind == "cancel":
            stop = self._running.get(task_id)
            if stop is not None:
                stop()

    def _relayed(self, text: str) -> None:
        deliver = self._deliver
        if deliver is None:
            return
        with contextlib.suppress(ValueError, RecursionError):
            message = json.loads(text)
            if isinstance(message, dict):
                deliver(message)

    async def relay(self, message: Mapping[str, Any]) -> None:
        data = "answer:" + json.dumps(dict(message), separators=(",", ":"))
        await self._do(lambda: self.redis.publish(self.channel, data))

    async def hear_relayed(self, deliver: Callable[[dict[str, Any]], object]) -> None:
        self._deliver = deliver
        self._ensure_listening()
        with contextlib.suppress(TimeoutError):  # Redis down: relayed answers are lost
            await asyncio.wait_for(self._subscribed.wait(), SOCKET_TIMEOUT_SECONDS)

    def _ensure_listening(self) -> None:
        if not any(getattr(t, "mcpgen_listener", False) for t in self._background):
            task = asyncio.get_running_loop().create_task(self._listen())
            task.mcpgen_listener = True  # type: ignore[attr-defined]
            self._background.append(task)

    # -- the store -------------------------------------------------------------

    async def create(self, tool: str, era: str, ttl_ms: object, owner: str | None = None) -> Task:
        now = self._clock()
        task = Task.new(tool, era, ttl_ms, now, owner)
        self._mine.take(now, task.expires_at)  # TaskLimitReached before any await
        try:
            await self._register()
            self._ensure_listening()
            created = await self._do(lambda: self._create(task))
        except BaseException:
            self._mine.give_back(task.expires_at)
            raise
        if not created:
            self._mine.give_back(task.expires_at)
            raise TaskLimitReached(self.max_tasks, "store")
        return task

    def _create(self, task: Task) -> Any:
        fields = {
            "tool": task.tool,
            "era": task.era,
            "status": "working",
            "createdAt": repr(task.created_at),
            "updatedAt": repr(task.created_at),
            "ttlMs": str(task.ttl_ms),
            "worker": self.worker,
        }
        if task.owner is not None:
            fields["owner"] = task.owner
        digest = _digest(task.owner)
        return self.redis.eval(
            scripts.CREATE,
            4,
            self.prefix + "task:" + task.task_id,
            self.prefix + f"listed:{task.era}:{digest}",
            self.prefix + "live",
            self.prefix + "running:" + self.worker,
            self.prefix,
            repr(task.created_at),
            self._dead_error(),
            DEAD_WORKER_MESSAGE,
            self.channel,
            task.task_id,
            f"{task.era}:{digest}:{task.task_id}",
            repr(task.expires_at),
            task.ttl_ms,
            self.max_tasks,
            self._keep_ms(),
            *(item for pair in fields.items() for item in pair),
        )

    async def get(self, task_id: object) -> Task | None:
        if not isinstance(task_id, str):
            return None
        fields = await self._do(
            lambda: self.redis.eval(
                scripts.READ, 1, self.prefix + "task:" + task_id, *self._common(), task_id
            )
        )
        return _task(task_id, _pairs(fields))

    async def page(
        self, era: str, owner: str | None, cursor: object
    ) -> tuple[list[Task], str | None]:
        score, after = ("", "") if cursor is None else decode_cursor(cursor)
        listed = self.prefix + f"listed:{era}:{_digest(owner)}"
        reply = await self._do(
            lambda: self.redis.eval(
                scripts.PAGE,
                1,
                listed,
                *self._common(),
                repr(score) if after else "",
                after,
                LIST_PAGE_SIZE,
            )
        )
        tasks = [
            task
            for task_id, flat in reply[1:]
            if (task := _task(task_id, _pairs(flat))) is not None
        ]
        following = (
            encode_cursor(tasks[-1].created_at, tasks[-1].task_id) if reply[0] and tasks else None
        )
        return tasks, following

    async def finish(
        self, task_id: str, *, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> bool:
        key = self.prefix + "task:" + task_id
        era = await self._do(lambda: self.redis.hget(key, "era"))
        status = outcome_status(era or "legacy", result, error)
        done = await self._do(
            lambda: self.redis.eval(
                scripts.FINISH,
                2,
                key,
                self.prefix + "running:" + self.worker,
                *self._common(),
                task_id,
                status,
                "" if result is None else json.dumps(result),
                "" if error is None else json.dumps(error),
            )
        )
        return bool(done)

    async def cancel(self, task_id: str) -> tuple[Task | None, bool]:
        before, changed = await self._do(
            lambda: self.redis.eval(
                scripts.CANCEL,
                1,
                self.prefix + "task:" + task_id,
                *self._common(),
                task_id,
                "cancelled by the requestor",
            )
        )
        task = _task(task_id, _pairs(before))
        if changed and task_id in self._running:
            self._running[task_id]()  # running here: no need to wait for the message
        return task, bool(changed)

    async def wait(self, task_id: str) -> Task | None:
        self._ensure_listening()
        while True:
            with self.wakeups.waiting(task_id) as event:
                task = await self.get(task_id)  # after registering: no wake-up is missed
                if task is None or task.terminal:
                    return task
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), WAIT_POLL_SECONDS)

    async def take_token(self, key: str, limit: RateLimit) -> float:
        """One request of caller ``key``, counted in one script: exact however many
        workers ask at once. The clock is this worker's, as for the tasks' times."""
        bucket = self.prefix + "rate:" + _digest(key)
        wait = await self._do(
            lambda: self.redis.eval(
                scripts.RATE, 1, bucket, self._now(), repr(limit.interval), limit.burst
            )
        )
        return float(wait)

    def track(self, task_id: str, stop: Callable[[], None]) -> None:
        self._running[task_id] = stop

    def untrack(self, task_id: str) -> None:
        self._running.pop(task_id, None)

    async def close(self) -> None:
        for task in self._background:
            task.cancel()
        self._background.clear()
        if self._redis is not None:
            with contextlib.suppress(Exception):  # a Redis that is gone
                await self._redis.aclose()


class LocalQuota:
    """How many live tasks this process created, against a cap: a heap of their
    expiry times (tasks are never removed early, so it is exact)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._expiries: list[float] = []

    def take(self, now: float, expires_at: float) -> None:
        while self._expiries and self._expiries[0] < now:
            heapq.heappop(self._expiries)
        if len(self._expiries) >= self.limit:
            raise TaskLimitReached(self.limit, "worker")
        heapq.heappush(self._expiries, expires_at)

    def give_back(self, expires_at: float) -> None:
        with contextlib.suppress(ValueError):
            self._expiries.remove(expires_at)
            heapq.heapify(self._expiries)


def _digest(owner: str | None) -> str:
    """The owner's part of a key: bounded, whatever the identity holds."""
    return "-" if owner is None else hashlib.sha256(owner.encode()).hexdigest()[:32]


def _pairs(flat: Any) -> dict[str, str]:
    items = list(flat or [])
    return {str(items[i]): str(items[i + 1]) for i in range(0, len(items) - 1, 2)}


def _task(task_id: str, fields: dict[str, str]) -> Task | None:
    if not fields or "status" not in fields:
        return None
    result = fields.get("result")
    error = fields.get("error")
    return Task(
        task_id=task_id,
        tool=fields.get("tool", ""),
        era=fields.get("era", "legacy"),
        created_at=float(fields.get("createdAt", "0")),
        updated_at=float(fields.get("updatedAt", "0")),
        ttl_ms=int(fields.get("ttlMs", "0")),
        status=fields["status"],
        status_message=fields.get("statusMessage") or None,
        result=json.loads(result) if result else None,
        error=json.loads(error) if error else None,
        owner=fields.get("owner"),
    )
