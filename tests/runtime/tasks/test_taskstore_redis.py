"""Tasks across HTTP workers on a real Redis (``--task-store redis://…``).

A real ``redis-server`` on a free loopback port (no persistence) and several
worker processes of one generated server, each on its own port, all naming that
Redis: a task accepted by one worker is read, waited on, listed, fetched and
cancelled through the others; a killed worker's task fails once its lease lapses
(a 1 s lease for that worker, ``--task-lease``); a restarted worker still serves results; a
result expires with its TTL; a Redis that is down fails only what needs it.
And a bounded load test: 4 workers, 500 task calls, 50 in flight.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import os
import shutil
import signal
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer, free_port
from fixtures.redis_server import RedisServer, redis_server
from helpers import build_package
from test_http_tasks import IMPL, SPEC, modern_rpc, poll, rpc

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
if shutil.which("redis-server") is None:
    pytest.skip(
        "redis-server is not installed (apt-get install redis-server)", allow_module_level=True
    )

# Seconds a worker's lease lasts (--task-lease). The worker that is killed has a
# short one: its tasks fail within about that long. The others keep a longer one,
# so that a loaded machine (a shared CI box) delaying a renewal cannot fail
# their tasks.
SHORT_LEASE = 1.0
LEASE = 5.0

MARKER_SPEC = (
    SPEC
    + """
  - name: until_cancelled
    task_support: optional
    parameters: [{name: marker, type: string}]
    callback: positional
    returns: string
"""
)

MARKER_IMPL = IMPL.replace(
    "class Impl(HttptaskServer):",
    """from pathlib import Path

class Impl(HttptaskServer):
    def until_cancelled(self, marker: str, *, ctx: Context = Context.NONE) -> str:
        deadline = time.monotonic() + 30
        while not ctx.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        Path(marker).write_text("cancelled" if ctx.cancelled else "not cancelled")
        return "stopped"
""",
)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("redis_tasks")
    gen = build_package(MARKER_SPEC, root, "httptask_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "httptask_impl.py").write_text(MARKER_IMPL, encoding="utf-8")
    return gen, impl


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


def start(
    package: tuple[Path, Path], store: str, count: int, *extra: str, lease: float = LEASE
) -> list[HttpServer]:
    """``count`` worker processes naming ``store``, started together, each on its own port."""
    gen, impl = package
    workers = [
        HttpServer(
            "httptask_mcp",
            "--task-store",
            store,
            "--task-lease",
            str(lease),
            *extra,
            pythonpath=[gen, impl],
            cwd=impl,
            log_dir=impl.parent,
        )
        for _ in range(count)
    ]
    try:
        for worker in workers:
            worker.wait_ready()
    except BaseException:
        stop(workers)
        raise
    return workers


def stop(workers: Sequence[HttpServer]) -> None:
    for worker in workers:
        worker.stop()
        worker.log.close()


@contextlib.contextmanager
def running(
    package: tuple[Path, Path], store: str, count: int, *extra: str, lease: float = LEASE
) -> Iterator[list[HttpServer]]:
    workers = start(package, store, count, *extra, lease=lease)
    try:
        yield workers
    finally:
        stop(workers)


IDENTITY_HEADER = "X-Mcp-User"  # what an authenticating proxy in front would set
ALICE = {IDENTITY_HEADER: "alice"}


@pytest.fixture(scope="module")
def pair(package: tuple[Path, Path], redis: RedisServer) -> Iterator[list[HttpServer]]:
    with running(package, redis.url, 2, "--identity-header", IDENTITY_HEADER) as workers:
        yield workers


def create(
    url: str,
    name: str,
    arguments: dict[str, Any],
    task: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> str:
    reply = rpc(
        url,
        "create",
        "tools/call",
        {"name": name, "arguments": arguments, "task": task or {}},
        headers=headers,
    )
    assert "result" in reply, reply
    task_id: str = reply["result"]["task"]["taskId"]
    return task_id


def wait_for(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.02)
    return "(no marker)"


# -- across workers --------------------------------------------------------------------


def test_a_task_started_on_one_worker_is_finished_from_another(pair: list[HttpServer]) -> None:
    a, b = pair
    task_id = create(a.url, "batch_job", {"n": 7}, headers=ALICE)
    result = rpc(b.url, 1, "tasks/result", {"taskId": task_id}, headers=ALICE)[
        "result"
    ]  # waits on b
    assert result["content"] == [{"type": "text", "text": "14"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    got = rpc(b.url, 2, "tasks/get", {"taskId": task_id}, headers=ALICE)["result"]
    assert got["status"] == "completed" and got["ttl"] == 600000
    listed = rpc(a.url, 3, "tasks/list", headers=ALICE)["result"]["tasks"]
    assert task_id in {t["taskId"] for t in listed}
    assert task_id in {
        t["taskId"] for t in rpc(b.url, 4, "tasks/list", headers=ALICE)["result"]["tasks"]
    }
    # an isError result fails the task at 2025-11-25, on every worker alike
    failed = create(b.url, "batch_job", {"n": -1})
    outcome = rpc(a.url, 5, "tasks/result", {"taskId": failed})["result"]
    assert outcome["isError"] is True
    assert rpc(a.url, 6, "tasks/get", {"taskId": failed})["result"]["status"] == "failed"


def test_modern_tasks_across_workers(pair: list[HttpServer]) -> None:
    a, b = pair
    created = modern_rpc(
        b.url, 1, "tools/call", {"name": "batch_job", "arguments": {"n": 21}}, tasks=True
    )["result"]
    assert created["resultType"] == "task"
    got = poll(a.url, created["taskId"], "modern")
    assert got["status"] == "completed" and got["result"]["content"] == [
        {"type": "text", "text": "42"}
    ]
    # a task of the other era is unknown here, as over stdio
    assert rpc(a.url, 2, "tasks/get", {"taskId": created["taskId"]})["error"]["code"] == -32602


def test_cancel_reaches_the_worker_running_the_task(pair: list[HttpServer], tmp_path: Path) -> None:
    a, b = pair
    for era in ("legacy", "modern"):
        marker = tmp_path / f"cancel-{era}"
        if era == "legacy":
            task_id = create(a.url, "until_cancelled", {"marker": str(marker)})
            cancelled = rpc(b.url, 1, "tasks/cancel", {"taskId": task_id})["result"]
            assert cancelled["status"] == "cancelled"
            assert rpc(b.url, 2, "tasks/cancel", {"taskId": task_id})["error"]["code"] == -32602
        else:
            task_id = modern_rpc(
                a.url,
                3,
                "tools/call",
                {"name": "until_cancelled", "arguments": {"marker": str(marker)}},
                tasks=True,
            )["result"]["taskId"]
            assert modern_rpc(b.url, 4, "tasks/cancel", {"taskId": task_id}, tasks=True)[
                "result"
            ] == {
                "resultType": "complete",
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {
                        "name": "httptask",
                        "title": "HTTP Tasks",
                        "version": "1.0.0",
                    }
                },
            }
        assert wait_for(marker) == "cancelled", a.output[-2000:]  # the handler on `a` saw it
        if era == "legacy":
            assert (
                rpc(a.url, 5, "tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"
            )


def test_a_killed_worker_fails_its_tasks(
    package: tuple[Path, Path], redis: RedisServer, pair: list[HttpServer]
) -> None:
    a, _ = pair
    (doomed,) = start(package, redis.url, 1, lease=SHORT_LEASE)
    try:
        legacy = create(doomed.url, "hold", {"seconds": 60})
        modern = modern_rpc(
            doomed.url, 1, "tools/call", {"name": "hold", "arguments": {"seconds": 60}}, tasks=True
        )["result"]["taskId"]
        assert rpc(a.url, 2, "tasks/get", {"taskId": legacy})["result"]["status"] == "working"
        os.killpg(doomed.proc.pid, signal.SIGKILL)
        doomed.proc.wait()
        killed = time.monotonic()
        # a waiter blocked on another worker is answered once the lease lapses
        reply = rpc(a.url, 3, "tasks/result", {"taskId": legacy})
        assert time.monotonic() - killed < 10
        assert reply["error"]["code"] == -32603 and "lease" in reply["error"]["message"]
        got = rpc(a.url, 4, "tasks/get", {"taskId": legacy})["result"]
        assert got["status"] == "failed" and "stopped" in got["statusMessage"]
        got = modern_rpc(a.url, 5, "tasks/get", {"taskId": modern}, tasks=True)["result"]
        assert got["status"] == "failed" and got["error"]["code"] == -32603
    finally:
        stop([doomed])


def test_a_restarted_worker_still_serves_results(
    package: tuple[Path, Path], redis: RedisServer
) -> None:
    (first,) = start(package, redis.url, 1)
    try:
        task_id = create(first.url, "batch_job", {"n": 4})
        assert poll(first.url, task_id)["status"] == "completed"
    finally:
        stop([first])
    (second,) = start(package, redis.url, 1)
    try:
        result = rpc(second.url, 1, "tasks/result", {"taskId": task_id})["result"]
        assert result["content"] == [{"type": "text", "text": "8"}]
    finally:
        stop([second])


def test_a_result_expires_after_its_ttl(pair: list[HttpServer]) -> None:
    a, b = pair
    task_id = create(a.url, "batch_job", {"n": 1}, {"ttl": 1500}, headers=ALICE)
    assert (
        rpc(b.url, 1, "tasks/result", {"taskId": task_id}, headers=ALICE)["result"]["content"][0][
            "text"
        ]
        == "2"
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reply = rpc(b.url, 2, "tasks/get", {"taskId": task_id}, headers=ALICE)
        if "error" in reply:
            break
        time.sleep(0.1)
    assert reply["error"]["code"] == -32602  # unknown task: expired, on every worker
    listed = rpc(a.url, 3, "tasks/list", headers=ALICE)["result"]["tasks"]
    assert task_id not in {t["taskId"] for t in listed}


def test_redis_down_fails_only_what_needs_the_store(package: tuple[Path, Path]) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with running(package, dead, 1) as (worker,):
        plain = rpc(worker.url, 1, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert plain["result"]["structuredContent"] == {"sum": 5}
        refused = rpc(
            worker.url, 2, "tools/call", {"name": "batch_job", "arguments": {"n": 1}, "task": {}}
        )
        assert refused["error"]["code"] == -32603
        assert (
            "task store" in refused["error"]["message"]
            and "cannot be reached" in refused["error"]["message"]
        )
        got = rpc(worker.url, 3, "tasks/get", {"taskId": "x"})
        assert got["error"]["code"] == -32603 and "task store" in got["error"]["message"]
        # the refused task did not keep a slot: plain calls and refusals go on alike
        assert rpc(worker.url, 4, "ping") == {"jsonrpc": "2.0", "id": 4, "result": {}}


# -- load ------------------------------------------------------------------------------


def test_load_500_tasks_50_in_flight_across_4_workers(
    package: tuple[Path, Path], redis: RedisServer
) -> None:
    """Every task is created on one worker and its result fetched exactly once from
    another; none is lost."""
    total, in_flight = 500, 50
    with running(package, redis.url, 4, lease=15) as workers:
        urls = [w.url for w in workers]
        counter = itertools.count()

        def one(index: int) -> tuple[int, str, int, int, str]:
            accepted = index % len(urls)
            fetched = (accepted + 1 + index % (len(urls) - 1)) % len(urls)
            task_id = create(urls[accepted], "batch_job", {"n": index})
            reply = rpc(urls[fetched], next(counter), "tasks/result", {"taskId": task_id})
            text = reply["result"]["content"][0]["text"] if "result" in reply else repr(reply)
            return index, task_id, accepted, fetched, text

        with concurrent.futures.ThreadPoolExecutor(in_flight) as pool:
            outcomes = list(pool.map(one, range(total)))
    assert len(outcomes) == total
    assert len({task_id for _, task_id, _, _, _ in outcomes}) == total  # none lost or merged
    wrong = [(index, text) for index, _, _, _, text in outcomes if text != str(2 * index)]
    assert wrong == []
    assert all(accepted != fetched for _, _, accepted, fetched, _ in outcomes)
    per_worker = [sum(1 for o in outcomes if o[2] == w) for w in range(4)]
    assert per_worker == [125] * 4
    print(
        f"load: {total} tasks, {in_flight} in flight, accepted per worker {per_worker}, "
        f"{len(outcomes)} results fetched once each from another worker"
    )


def test_a_worker_shutting_down_fails_its_tasks_at_once(
    package: tuple[Path, Path], redis: RedisServer, pair: list[HttpServer]
) -> None:
    """SIGTERM (a restart, a deploy): the worker drains (1 s here), and the tasks still
    running then cannot finish any more; it says so before it exits instead of leaving
    them to its lease (15 s here). tests/runtime/server/test_drain.py: a task that ends in the drain."""
    a, _ = pair
    (leaving,) = start(package, redis.url, 1, "--drain-timeout", "1", lease=15)
    try:
        task_id = create(leaving.url, "sleep", {"seconds": 60})
        assert rpc(a.url, 1, "tasks/get", {"taskId": task_id})["result"]["status"] == "working"
    finally:
        stop([leaving])
    got = rpc(a.url, 2, "tasks/get", {"taskId": task_id})["result"]
    assert got["status"] == "failed", got
    reply = rpc(a.url, 3, "tasks/result", {"taskId": task_id})
    assert reply["error"] == {
        "code": -32603,
        "message": "the worker running this task shut down before it finished",
    }
