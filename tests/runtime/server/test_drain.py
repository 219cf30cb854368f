"""Graceful drain on SIGTERM (``--drain-timeout``), end to end on real processes.

Over HTTP: once SIGTERM is in, ``/readyz`` answers 503 ``draining`` (``/healthz`` still
200), a new MCP request gets 503 with ``Retry-After`` and -31002, a call in flight and
an SSE stream in flight finish and are answered, then the process exits with 0; with
``--workers 2`` (the signal sent to the supervisor only, as an orchestrator does) each
worker drains; a task running on a worker finishes before it exits and another worker
sharing the Redis store answers for it; a call past the drain timeout does not keep
the process alive. Over stdio: the call in flight is answered, a request sent after
the signal is never read, exit 0.

The calls in flight are held by the test (a marker file says they started, a release
file ends them: ``fixtures.service_package``), so nothing depends on how fast the
machine is; the only times are generous upper bounds on an exit.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer
from fixtures.service_package import PACKAGE, build_service, call_body, post, wait_for_file
from helpers import RawServer

pytest.importorskip("uvicorn", reason="the http extra is not installed")

SHUTTING_DOWN = -31002
EXIT_BOUND = 60.0  # seconds: generous, for a loaded machine


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_service(tmp_path_factory.mktemp("drain"))


def serve(service: tuple[Path, Path], log_dir: Path, *extra: str) -> HttpServer:
    gen, impl = service
    server = HttpServer(PACKAGE, *extra, pythonpath=[gen, impl], cwd=impl, log_dir=log_dir)
    server.wait_ready()
    return server


def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} within {timeout} s")
        time.sleep(0.02)


def status_of(server: HttpServer, path: str) -> int:
    return post(server.host, server.port, b"", path=path, method="GET", timeout=10)[0]


def exit_code(server: HttpServer) -> tuple[int, str]:
    """The server's exit status (waited for within ``EXIT_BOUND``) and its log."""
    try:
        code = server.proc.wait(timeout=EXIT_BOUND)
        return code, server.output
    finally:
        server.stop()
        server.log.close()


def assert_refused_while_draining(server: HttpServer) -> None:
    status, headers, body = post(server.host, server.port, call_body(7, "add", {"a": 1, "b": 2}))
    assert status == 503, body
    assert headers["retry-after"] == "1" and headers["connection"] == "close"
    answer = json.loads(body)
    assert answer["id"] is None and answer["error"]["code"] == SHUTTING_DOWN


def held_call(server: HttpServer, tmp_path: Path, name: str, **params: Any) -> Any:
    """A POST of a held call, sent in the background: its future, marker, release."""
    marker, release = tmp_path / f"{name}.started", tmp_path / f"{name}.release"
    arguments = {"marker": str(marker), "release": str(release)}
    body = call_body(1, name, arguments, **params)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(post, server.host, server.port, body)
    pool.shutdown(wait=False)
    wait_for_file(marker)
    return future, release


def test_a_call_in_flight_finishes_new_requests_get_503_then_exit_0(
    service: tuple[Path, Path], tmp_path: Path
) -> None:
    server = serve(service, tmp_path, "--drain-timeout", "120")
    call, release = held_call(server, tmp_path, "held")
    assert status_of(server, "/readyz") == 200
    os.kill(server.proc.pid, signal.SIGTERM)
    until(lambda: status_of(server, "/readyz") == 503, "draining")
    status, _, body = post(server.host, server.port, b"", path="/readyz", method="GET")
    assert (status, json.loads(body)) == (503, {"status": "draining"})
    assert status_of(server, "/healthz") == 200  # alive: no restart
    assert_refused_while_draining(server)
    assert server.proc.poll() is None  # the held call keeps it up
    release.touch()
    status, _, body = call.result(timeout=EXIT_BOUND)
    assert status == 200 and json.loads(body)["result"]["content"][0]["text"] == "released"
    code, log = exit_code(server)
    assert code == 0 and "drained in" in log, log


def test_an_sse_stream_in_flight_finishes(service: tuple[Path, Path], tmp_path: Path) -> None:
    server = serve(service, tmp_path)
    stream, release = held_call(server, tmp_path, "steps", _meta={"progressToken": "p"})
    os.kill(server.proc.pid, signal.SIGTERM)
    until(lambda: status_of(server, "/readyz") == 503, "draining")
    release.touch()
    status, headers, body = stream.result(timeout=EXIT_BOUND)
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = [
        json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")
    ]
    assert [e["params"]["progress"] for e in events if "method" in e] == [1, 2]
    assert events[-1]["result"]["content"][0]["text"] == "2 steps"
    assert exit_code(server)[0] == 0


def test_each_of_two_workers_drains(service: tuple[Path, Path], tmp_path: Path) -> None:
    server = serve(service, tmp_path, "--workers", "2")
    call, release = held_call(server, tmp_path, "held")
    os.kill(server.proc.pid, signal.SIGTERM)  # the supervisor only, as Kubernetes does
    # new connections land on either worker (SO_REUSEPORT): ten 503s in a row, then
    # both are draining (the idle one may have drained and closed its socket already:
    # a connection caught in its backlog then is reset, and counts as no answer)
    answers: list[int] = []

    def readiness() -> int:
        try:
            return status_of(server, "/readyz")
        except OSError:
            return 0

    until(lambda: answers.append(readiness()) or answers[-10:] == [503] * 10, "draining")
    assert_refused_while_draining(server)
    release.touch()
    assert call.result(timeout=EXIT_BOUND)[0] == 200
    code, log = exit_code(server)
    assert code == 0 and log.count("SIGTERM: draining") == 2, log


def test_a_call_past_the_drain_timeout_does_not_keep_the_process(
    service: tuple[Path, Path], tmp_path: Path
) -> None:
    server = serve(service, tmp_path, "--drain-timeout", "1")
    held_call(server, tmp_path, "held")  # never released
    os.kill(server.proc.pid, signal.SIGTERM)
    code, log = exit_code(server)
    assert code == 0 and "drain timeout (1 s): 1 still in flight" in log, log


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_a_task_finishes_and_another_worker_answers_for_it(
    service: tuple[Path, Path], tmp_path: Path
) -> None:
    pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
    from fixtures.redis_server import redis_server

    with redis_server(tmp_path) as redis:
        a, b = (serve(service, tmp_path, "--task-store", redis.url) for _ in range(2))
        try:
            created, release = held_call(a, tmp_path, "job", task={})
            body = created.result(timeout=EXIT_BOUND)[2]
            task_id = json.loads(body)["result"]["task"]["taskId"]
            os.kill(a.proc.pid, signal.SIGTERM)
            until(lambda: status_of(a, "/readyz") == 503, "draining")
            assert a.proc.poll() is None  # the running task keeps it up
            release.touch()
            assert exit_code(a)[0] == 0
            result = json.loads(post(b.host, b.port, task_request(task_id))[2])
            assert result["result"]["content"][0]["text"] == "job released", result
        finally:
            for server in (a, b):
                server.stop()
                server.log.close()


def task_request(task_id: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task_id}}
    return json.dumps(message).encode()


def test_stdio_answers_the_call_in_flight_then_exits_0(
    service: tuple[Path, Path], tmp_path: Path
) -> None:
    gen, impl = service
    marker, release = tmp_path / "stdio.started", tmp_path / "stdio.release"
    arguments = {"marker": str(marker), "release": str(release)}
    with RawServer(PACKAGE, None, pythonpath=[gen, impl], cwd=impl) as raw:
        raw.handshake()
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "held", "arguments": arguments},
            }
        )
        wait_for_file(marker)
        raw.proc.send_signal(signal.SIGTERM)
        raw.send({"jsonrpc": "2.0", "id": 6, "method": "ping"})  # after the signal: never read
        release.touch()
        answer = raw.recv(timeout=EXIT_BOUND)
        assert answer["id"] == 5 and answer["result"]["content"][0]["text"] == "released"
        assert raw.proc.wait(timeout=EXIT_BOUND) == 0
        raw.kill()
        assert [json.loads(line).get("id") for line in raw.raw_lines] == [0, 5]


def test_stdio_exits_0_at_the_drain_timeout(service: tuple[Path, Path], tmp_path: Path) -> None:
    gen, impl = service
    marker = tmp_path / "late.started"
    arguments = {"marker": str(marker), "release": str(tmp_path / "never")}
    args = ["--drain-timeout", "1"]
    with RawServer(PACKAGE, None, pythonpath=[gen, impl], cwd=impl, extra_args=args) as raw:
        raw.handshake()
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "held", "arguments": arguments},
            }
        )
        wait_for_file(marker)
        raw.proc.send_signal(signal.SIGTERM)
        assert raw.proc.wait(timeout=EXIT_BOUND) == 0
        raw.kill()
