"""The Redis task store after the second security review, on a real ``redis-server``.

Workers of one generated server (subprocesses, real HTTP over loopback) and the
store itself in-process, against a Redis of their own:

- isolation across workers: a requestor's task is unknown to another requestor
  on any worker, and ``tasks/list`` pages (100 a page) only the requestor's own
  tasks, one script per page, never a round trip per task;
- every key the store writes expires; a task's id leaves its worker's
  ``running:`` set even when the record expired first or the task was cancelled;
- live tasks are capped across all the workers (``--max-tasks``);
- a non-blocking ``tasks/result`` keeps nothing; a 2026-07-28 one is -32601 at once;
- the URL's password reaches no client (and the log only masked); a corrupt
  record is a generic -32603, not code 0 with the exception's text;
- ``--task-key-prefix`` keeps two deployments of one server apart.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_taskstore_redis
from fixtures.http_server import HttpServer, free_port
from fixtures.redis_server import RedisServer
from test_http_task_isolation import ALICE, BOB, HEADER, assert_isolated, start, unknown
from test_http_tasks import modern_rpc, rpc
from test_taskstore_redis import running

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
redis_py = pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
if shutil.which("redis-server") is None:
    pytest.skip(
        "redis-server is not installed (apt-get install redis-server)", allow_module_level=True
    )

PREFIX = "mcpgen:httptask:"  # the default: mcpgen:<server name>:

# the fixtures: the generated package (every task mode), a redis-server of this module's own
package = test_taskstore_redis.package
redis = test_taskstore_redis.redis


@pytest.fixture
def db(redis: RedisServer) -> Iterator[Any]:
    # never flushed: the module's workers hold leases in it
    client = redis_py.Redis.from_url(redis.url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture(scope="module")
def pair(package: tuple[Path, Path], redis: RedisServer) -> Iterator[list[HttpServer]]:
    with running(package, redis.url, 2, "--identity-header", HEADER) as workers:
        yield workers


def eval_calls(db: Any) -> int:
    """Scripts run so far (the commands a script runs are counted apart)."""
    stats = db.info("commandstats")
    return sum(
        int(stats.get(name, {}).get("calls", 0)) for name in ("cmdstat_eval", "cmdstat_evalsha")
    )


# -- finding 1 on Redis ----------------------------------------------------------------------


def test_requestors_are_isolated_across_workers(pair: list[HttpServer], db: Any) -> None:
    a, b = pair
    assert_isolated(a.url, ALICE, BOB)
    task_id = start(a.url, "hold", {"seconds": 30}, ALICE)  # on a, asked about on b
    assert unknown(rpc(b.url, 1, "tasks/cancel", {"taskId": task_id}, headers=BOB), task_id)
    assert (
        rpc(b.url, 2, "tasks/get", {"taskId": task_id}, headers=ALICE)["result"]["status"]
        == "working"
    )
    assert db.hget(PREFIX + "task:" + task_id, "owner") == "alice"
    rpc(b.url, 3, "tasks/cancel", {"taskId": task_id}, headers=ALICE)


def start_when_free(url: str, n: int, headers: dict[str, str]) -> str:
    """Start a ``batch_job`` task, waiting out "Server busy" (-31000).

    A worker runs at most 64 tasks at once (``--max-concurrent-calls``); a fast client
    starts them quicker than 50 ms jobs finish, so the 65th start may be refused.
    """
    deadline = time.monotonic() + 30
    while True:
        params = {"name": "batch_job", "arguments": {"n": n}, "task": {}}
        reply = rpc(url, 1, "tools/call", params, headers=headers)
        if "result" in reply:
            task_id: str = reply["result"]["task"]["taskId"]
            return task_id
        assert reply["error"]["code"] == -31000 and time.monotonic() < deadline, reply
        time.sleep(0.05)


def list_all(url: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = []
    cursor = None
    while True:
        params = {} if cursor is None else {"cursor": cursor}
        result = rpc(url, 1, "tasks/list", params, headers=headers)["result"]
        tasks += result["tasks"]
        cursor = result.get("nextCursor")
        if cursor is None:
            return tasks


def test_tasks_list_pages_without_a_round_trip_per_task(pair: list[HttpServer], db: Any) -> None:
    a, b = pair
    carol = {HEADER: "carol"}
    made = [start_when_free(a.url, n, carol) for n in range(230)]
    start(b.url, "batch_job", {"n": 0}, {HEADER: "dave"})  # someone else's: never listed
    deadline = time.monotonic() + 30  # every task finished: none ends during the count
    while any(t["status"] == "working" for t in list_all(b.url, carol)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    before = eval_calls(db)
    pages: list[list[str]] = []
    cursor = None
    while True:
        params = {} if cursor is None else {"cursor": cursor}
        result = rpc(b.url, 1, "tasks/list", params, headers=carol)["result"]
        pages.append([t["taskId"] for t in result["tasks"]])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert [len(page) for page in pages] == [100, 100, 30]
    assert [task_id for page in pages for task_id in page] == made  # oldest first, each once
    # a script per page, not one per task (230); the rest is the workers' own
    # background work meanwhile (lease sweeps, tasks finishing), a few on a loaded machine
    scripts = eval_calls(db) - before
    assert scripts < 40, scripts
    bad = rpc(b.url, 2, "tasks/list", {"cursor": "not-a-cursor"}, headers=carol)
    assert bad["error"]["code"] == -32602


# -- finding 5: keys expire, ids leave the running set, a cap across workers ---------------------


def test_every_key_expires_and_running_sets_empty(
    package: tuple[Path, Path], redis: RedisServer, db: Any
) -> None:
    with running(package, redis.url, 1, "--identity-header", HEADER) as (worker,):
        url = worker.url
        short = start(url, "hold", {"seconds": 2}, ALICE)  # outlives its 500 ms record
        rpc(
            url,
            1,
            "tools/call",
            {"name": "hold", "arguments": {"seconds": 2}, "task": {"ttl": 500}},
            headers=ALICE,
        )
        cancelled = start(url, "hold", {"seconds": 30}, ALICE)
        rpc(url, 2, "tasks/cancel", {"taskId": cancelled}, headers=ALICE)
        done = start(url, "batch_job", {"n": 1}, None)
        rpc(url, 3, "tasks/result", {"taskId": done})
        rpc(url, 4, "tasks/list", headers=ALICE)
        rpc(url, 5, "tasks/cancel", {"taskId": short}, headers=ALICE)
        time.sleep(3)  # the 2 s handlers end; the 500 ms record is long gone
        keys = db.keys("*")  # this worker's, and those of every other test of the module
        assert any(f":{worker.proc.pid}:" in key for key in keys)
        no_ttl = [key for key in keys if db.pttl(key) < 0]
        assert no_ttl == []
        mine = [key for key in db.keys(PREFIX + "running:*") if f":{worker.proc.pid}:" in key]
        assert [i for key in mine for i in db.smembers(key)] == []


def test_live_tasks_are_capped_across_workers(
    package: tuple[Path, Path], redis: RedisServer, db: Any
) -> None:
    with running(package, redis.url, 2, "--max-tasks", "3", "--task-key-prefix", "capped:") as (
        a,
        b,
    ):
        for url in (a.url, b.url, a.url):
            rpc(url, 1, "tasks/result", {"taskId": start(url, "batch_job", {"n": 1}, None)})
        for url in (a.url, b.url):
            refused = rpc(
                url, 2, "tools/call", {"name": "batch_job", "arguments": {"n": 1}, "task": {}}
            )
            assert refused["error"]["code"] == -31000 and refused["error"]["data"] == {"limit": 3}
            assert "in the task store" in refused["error"]["message"]


# -- finding 4: tasks/result --------------------------------------------------------------------


def test_a_non_blocking_tasks_result_keeps_nothing(redis: RedisServer) -> None:
    """400 tasks/result waits on unknown 64 KiB ids: nothing stays behind (was 25 MB)."""
    from mcpgen_runtime.tasks.redis_store import RedisTaskStore

    async def go() -> int:
        store = RedisTaskStore(redis.url, key_prefix="mcpgen:leak:")
        try:
            await store.wait("warm-up")
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(400):
                assert await store.wait(secrets.token_urlsafe(48 * 1024)) is None
            kept = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            return kept
        finally:
            await store.close()

    assert asyncio.run(go()) < 2 * 1024 * 1024


def test_a_modern_tasks_result_is_method_not_found_on_redis(pair: list[HttpServer]) -> None:
    a, b = pair
    task_id = modern_rpc(
        a.url, 1, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}}, tasks=True
    )["result"]["taskId"]
    started = time.monotonic()
    reply = modern_rpc(b.url, 2, "tasks/result", {"taskId": task_id}, tasks=True)
    assert reply["error"]["code"] == -32601
    assert time.monotonic() - started < 20  # a hang guard: the task runs 30 s
    modern_rpc(a.url, 3, "tasks/cancel", {"taskId": task_id}, tasks=True)


# -- finding 8 and the store's other errors ---------------------------------------------------


def test_the_store_password_reaches_no_client(package: tuple[Path, Path]) -> None:
    secret = "hunter2-" + secrets.token_hex(4)
    dead = f"redis://admin:{secret}@127.0.0.1:{free_port()}/0?password={secret}&db=0"
    with running(package, dead, 1) as (worker,):
        replies = [
            rpc(
                worker.url,
                1,
                "tools/call",
                {"name": "batch_job", "arguments": {"n": 1}, "task": {}},
            ),
            rpc(worker.url, 2, "tasks/get", {"taskId": "x"}),
        ]
        for reply in replies:
            assert reply["error"] == {
                "code": -32603,
                "message": "Internal error: the task store cannot be reached; retry later",
            }
        log = worker.output
    assert secret not in log
    assert "redis://admin:***@127.0.0.1" in log and "password=***" in log and "db=0" in log


def test_a_corrupt_record_is_a_generic_internal_error(pair: list[HttpServer], db: Any) -> None:
    db.hset(
        PREFIX + "task:corrupt",
        mapping={
            "status": "completed",
            "era": "legacy",
            "createdAt": "not a number",
            "result": "{",
        },
    )
    db.expire(PREFIX + "task:corrupt", 60)
    reply = rpc(pair[0].url, 1, "tasks/get", {"taskId": "corrupt"})
    assert reply["error"] == {
        "code": -32603,
        "message": "Internal error: the task store cannot be reached; retry later",
    }
    assert "could not convert" in pair[0].output  # the detail, on the server's side


# -- low: deployments sharing a Redis ------------------------------------------------------------


def test_a_key_prefix_keeps_deployments_apart(
    package: tuple[Path, Path], redis: RedisServer, db: Any
) -> None:
    with (
        running(package, redis.url, 1, "--task-key-prefix", "staging:") as (staging,),
        running(package, redis.url, 1, "--task-key-prefix", "prod:") as (prod,),
    ):
        task_id = start(staging.url, "batch_job", {"n": 2}, None)
        assert (
            rpc(staging.url, 1, "tasks/result", {"taskId": task_id})["result"]["content"][0]["text"]
            == "4"
        )
        assert unknown(rpc(prod.url, 2, "tasks/get", {"taskId": task_id}), task_id)
        assert db.exists("staging:task:" + task_id) and not db.keys("prod:task:*")


def test_a_full_redis_refuses_new_tasks_and_keeps_old_ones(pair: list[HttpServer], db: Any) -> None:
    """What SECURITY.md asks of the operator (``maxmemory`` with ``noeviction``):
    once Redis is full, a new task is a generic -32603 and finished results stay."""
    a, b = pair
    kept = start(a.url, "batch_job", {"n": 5}, ALICE)
    assert "result" in rpc(a.url, 1, "tasks/result", {"taskId": kept}, headers=ALICE)
    db.config_set("maxmemory-policy", "noeviction")
    db.config_set("maxmemory", "1")  # below what it holds: every write is refused
    try:
        refused = rpc(
            b.url,
            2,
            "tools/call",
            {"name": "batch_job", "arguments": {"n": 1}, "task": {}},
            headers=ALICE,
        )
        assert refused["error"] == {
            "code": -32603,
            "message": "Internal error: the task store cannot be reached; retry later",
        }
        got = rpc(b.url, 3, "tasks/result", {"taskId": kept}, headers=ALICE)["result"]
        assert got["content"] == [{"type": "text", "text": "10"}]
    finally:
        db.config_set("maxmemory", "0")
    assert "maxmemory" in b.output  # the reason, on the server's side
