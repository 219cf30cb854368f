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

Layout, under ``mcpgen:<server name>:`` (so several servers can share a Redis):

- ``task:<id>``: a hash (tool, era, status, statusMessage, createdAt, updatedAt,
  ttlMs, result, error, owner), expiring ``ttlMs`` after creation: a result is
  kept for the task's TTL, then it is gone (``tasks/get`` says unknown task).
- ``index:<era>``: a sorted set of task ids by creation time, for ``tasks/list``
  (ids whose hash expired are pruned when listed).
- ``lease:<worker>``: exists while the worker lives; renewed three times per
  lease period. ``running:<worker>``: the ids of the tasks it runs.
- channel ``events``: ``cancel:<id>`` (the running worker stops it) and
  ``done:<id>`` (blocked ``tasks/result`` calls wake up).

Every state change is one Lua script, so it is atomic: a task is finished,
cancelled or failed exactly once. A task whose owner's lease has lapsed is
failed by whoever reads it first (``tasks/get``, ``tasks/result``,
``tasks/list``) and by every live worker's periodic sweep. Not for Redis
Cluster (scripts touch keys they compute); a single Redis or a replicated
primary is fine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import socket
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.jsonrpc import INTERNAL_ERROR
from .store import (
    DEFAULT_LEASE_SECONDS,
    WAIT_POLL_SECONDS,
    TaskStoreUnavailable,
    outcome_status,
)
from .table import DEFAULT_TTL_MS, MAX_TTL_MS, Task

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["INSTALL_HINT", "RedisTaskStore"]

INSTALL_HINT = "the Redis task store needs redis-py: pip install 'mcpgen-runtime[redis]' (or: pip install redis)"
# Seconds to connect to Redis and to wait for one reply (2 s): a Redis that is
# down fails the call that needs it quickly instead of hanging it.
SOCKET_TIMEOUT_SECONDS = 2.0
DEAD_WORKER_MESSAGE = "the worker running this task stopped before it finished (its lease lapsed)"

# KEYS: task. ARGV: prefix, now, error json, message, id, channel.
# Fails the task when it is working and its owner's lease has lapsed; returns the hash.
_READ = """
local t = redis.call('HGETALL', KEYS[1])
if #t == 0 then return t end
if redis.call('HGET', KEYS[1], 'status') == 'working' then
  local owner = redis.call('HGET', KEYS[1], 'owner')
  if redis.call('EXISTS', ARGV[1] .. 'lease:' .. owner) == 0 then
    redis.call('HSET', KEYS[1], 'status', 'failed', 'error', ARGV[3], 'updatedAt', ARGV[2],
               'statusMessage', ARGV[4])
    redis.call('SREM', ARGV[1] .. 'running:' .. owner, ARGV[5])
    redis.call('PUBLISH', ARGV[6], 'done:' .. ARGV[5])
    t = redis.call('HGETALL', KEYS[1])
  end
end
return t
"""

# KEYS: task, running set. ARGV: status, result, error, now, channel, id, message.
# 1: finished; 0: already terminal or gone.
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'result', ARGV[2], 'error', ARGV[3],
           'updatedAt', ARGV[4], 'statusMessage', ARGV[7])
redis.call('SREM', KEYS[2], ARGV[6])
redis.call('PUBLISH', ARGV[5], 'done:' .. ARGV[6])
return 1
"""

# KEYS: task. ARGV: now, channel, id, message. Returns the hash before the change
# and whether this call cancelled the task ({} when gone).
_CANCEL = """
local t = redis.call('HGETALL', KEYS[1])
if #t == 0 then return {t, 0} end
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return {t, 0} end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'updatedAt', ARGV[1], 'statusMessage', ARGV[4])
redis.call('PUBLISH', ARGV[2], 'cancel:' .. ARGV[3])
redis.call('PUBLISH', ARGV[2], 'done:' .. ARGV[3])
return {t, 1}
"""

# KEYS: workers set. ARGV: prefix, now, error json, message, channel.
# Fails the running tasks of every registered worker whose lease has lapsed.
_SWEEP = """
local failed = 0
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. 'lease:' .. worker) == 0 then
    local running = ARGV[1] .. 'running:' .. worker
    for _, id in ipairs(redis.call('SMEMBERS', running)) do
      local key = ARGV[1] .. 'task:' .. id
      if redis.call('HGET', key, 'status') == 'working' then
        redis.call('HSET', key, 'status', 'failed', 'error', ARGV[3], 'updatedAt', ARGV[2],
                   'statusMessage', ARGV[4])
        redis.call('PUBLISH', ARGV[5], 'done:' .. id)
        failed = failed + 1
      end
    end
    redis.call('DEL', running)
    redis.call('SREM', KEYS[1], worker)
  end
end
return failed
"""


def _require_redis() -> None:
    try:
        import redis.asyncio  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"{INSTALL_HINT} ({exc})") from None


class RedisTaskStore:
    """Tasks in Redis, shared by every worker configured with the same URL."""

    shared = True

    def __init__(
        self,
        url: str,
        *,
        namespace: str = "default",
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        _require_redis()
        self.url = url
        self.lease_seconds = lease_seconds
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._clock = clock
        self.set_namespace(namespace)
        self._redis: Redis | None = None
        self._running: dict[str, Callable[[], None]] = {}
        self._done: dict[str, asyncio.Event] = {}
        self._background: list[asyncio.Task[None]] = []
        self._registered = False

    def set_namespace(self, namespace: str) -> None:
        """Keys of one server (its name): several servers may share one Redis."""
        self.prefix = f"mcpgen:{namespace}:"
        self.channel = self.prefix + "events"

    # -- connection ------------------------------------------------------------

    @property
    def redis(self) -> Redis:
        if self._redis is None:
            from redis.asyncio import Redis

            self._redis = Redis.from_url(
                self.url, socket_connect_timeout=SOCKET_TIMEOUT_SECONDS,
                socket_timeout=SOCKET_TIMEOUT_SECONDS, decode_responses=True,
            )
        return self._redis

    async def _do(self, what: Callable[[], Any]) -> Any:
        """One Redis operation; a failure becomes ``TaskStoreUnavailable``."""
        from redis.exceptions import RedisError

        try:
            return await what()
        except (RedisError, OSError) as exc:
            raise TaskStoreUnavailable(
                f"the task store at {_safe(self.url)} cannot be reached: {exc}"
            ) from None

    async def _register(self) -> None:
        """Take this worker's lease and start renewing it (first task created here)."""
        if self._registered:
            return
        lease_ms = int(self.lease_seconds * 1000)

        def take() -> Any:
            pipe = self.redis.pipeline(transaction=True)
            pipe.set(self.prefix + "lease:" + self.worker, "1", px=lease_ms)
            pipe.sadd(self.prefix + "workers", self.worker)
            return pipe.execute()

        await self._do(take)
        self._registered = True
        self._start(self._renew_lease())

    def _start(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.append(task)

    async def _renew_lease(self) -> None:
        lease_ms = int(self.lease_seconds * 1000)
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                await self._do(lambda: self.redis.set(
                    self.prefix + "lease:" + self.worker, "1", px=lease_ms))
                await self._do(self._sweep)
            except TaskStoreUnavailable as exc:
                print(f"mcpgen: cannot renew the task lease: {exc}", file=sys.stderr, flush=True)

    async def _sweep(self) -> Any:
        return await self.redis.eval(
            _SWEEP, 1, self.prefix + "workers", self.prefix, self._now(), self._dead_error(),
            DEAD_WORKER_MESSAGE, self.channel,
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
                        await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _event(self, data: str) -> None:
        kind, _, task_id = data.partition(":")
        if kind == "done":
            event = self._done.pop(task_id, None)
            if event is not None:
                event.set()
        elif kind == "cancel":
            stop = self._running.get(task_id)
            if stop is not None:
                stop()

    def _ensure_listening(self) -> None:
        if not any(getattr(t, "mcpgen_listener", False) for t in self._background):
            task = asyncio.get_running_loop().create_task(self._listen())
            task.mcpgen_listener = True  # type: ignore[attr-defined]
            self._background.append(task)

    # -- the store -------------------------------------------------------------

    async def create(self, tool: str, era: str, ttl_ms: object) -> Task:
        ttl = ttl_ms if isinstance(ttl_ms, int) and not isinstance(ttl_ms, bool) else DEFAULT_TTL_MS
        ttl = max(0, min(ttl, MAX_TTL_MS))
        await self._register()
        self._ensure_listening()
        now = self._clock()
        task = Task(secrets.token_urlsafe(16), tool, era, now, now, ttl)
        key = self.prefix + "task:" + task.task_id

        def write() -> Any:
            pipe = self.redis.pipeline(transaction=True)
            pipe.hset(key, mapping={
                "tool": tool, "era": era, "status": "working", "createdAt": repr(now),
                "updatedAt": repr(now), "ttlMs": str(ttl), "owner": self.worker,
            })
            pipe.pexpire(key, max(ttl, 1))
            pipe.zadd(self.prefix + "index:" + era, {task.task_id: now})
            pipe.sadd(self.prefix + "running:" + self.worker, task.task_id)
            return pipe.execute()

        await self._do(write)
        return task

    async def get(self, task_id: object) -> Task | None:
        if not isinstance(task_id, str):
            return None
        fields = await self._do(lambda: self.redis.eval(
            _READ, 1, self.prefix + "task:" + task_id, self.prefix, self._now(),
            self._dead_error(), DEAD_WORKER_MESSAGE, task_id, self.channel,
        ))
        return _task(task_id, _pairs(fields))

    async def list(self, era: str) -> list[Task]:
        index = self.prefix + "index:" + era
        ids: list[str] = await self._do(lambda: self.redis.zrange(index, 0, -1))
        tasks: list[Task] = []
        gone: list[str] = []
        for task_id in ids:
            task = await self.get(task_id)
            if task is None:
                gone.append(task_id)
            else:
                tasks.append(task)
        if gone:
            await self._do(lambda: self.redis.zrem(index, *gone))
        return tasks

    async def finish(
        self, task_id: str, *, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> bool:
        key = self.prefix + "task:" + task_id
        era = await self._do(lambda: self.redis.hget(key, "era"))
        if era is None:
            return False
        status = outcome_status(era, result, error)
        done = await self._do(lambda: self.redis.eval(
            _FINISH, 2, key, self.prefix + "running:" + self.worker, status,
            "" if result is None else json.dumps(result), "" if error is None else json.dumps(error),
            self._now(), self.channel, task_id, "",
        ))
        return bool(done)

    async def cancel(self, task_id: str) -> tuple[Task | None, bool]:
        before, changed = await self._do(lambda: self.redis.eval(
            _CANCEL, 1, self.prefix + "task:" + task_id, self._now(), self.channel, task_id,
            "cancelled by the requestor",
        ))
        task = _task(task_id, _pairs(before))
        if changed and task_id in self._running:
            self._running[task_id]()  # running here: no need to wait for the message
        return task, bool(changed)

    async def wait(self, task_id: str) -> Task | None:
        self._ensure_listening()
        while True:
            event = self._done.setdefault(task_id, asyncio.Event())
            task = await self.get(task_id)  # after subscribing: no wake-up is missed
            if task is None or task.terminal:
                return task
            try:
                await asyncio.wait_for(event.wait(), WAIT_POLL_SECONDS)
            except TimeoutError:
                pass

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
    )


def _safe(url: str) -> str:
    """The URL without a password, for messages."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rpartition("@")[2]
    return scheme + sep + rest
