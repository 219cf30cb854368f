"""Per-caller rate limits (``--rate-limit N/s|N/m``, ``--rate-burst B``), end to end.

Over HTTP: exact counts under concurrency on one worker (in-process buckets) and
across two workers sharing a real Redis (one Lua script per request); the 429's
headers and JSON-RPC body; a bucket per caller (the requestor's identity, else the
client address); the probes and other paths never counted. Over stdio: the
JSON-RPC error -31001, notifications never refused. The limits are chosen so that no
token comes back while a test runs (1/m: one a minute), so the counts are exact
whatever the machine's load; nothing here measures time.
"""

from __future__ import annotations

import concurrent.futures
import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer, free_port
from fixtures.service_package import PACKAGE, build_service, call_body, post
from helpers import RawServer

pytest.importorskip("uvicorn", reason="the http extra is not installed")

RATE_LIMITED = -31001
IDENTITY = "X-Mcp-User"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_service(tmp_path_factory.mktemp("rate"))


def serve(service: tuple[Path, Path], log_dir: Path, *extra: str) -> HttpServer:
    gen, impl = service
    server = HttpServer(PACKAGE, *extra, pythonpath=[gen, impl], cwd=impl, log_dir=log_dir)
    server.wait_ready()
    return server


@pytest.fixture
def limited(service: tuple[Path, Path], tmp_path: Path) -> Iterator[HttpServer]:
    server = serve(service, tmp_path, "--rate-limit", "1/m", "--rate-burst", "5")
    try:
        yield server
    finally:
        server.stop()
        server.log.close()


def add(server: HttpServer, request_id: int, headers: dict[str, str] | None = None) -> int:
    return post(server.host, server.port, call_body(request_id, "add", {"a": 1, "b": 2}), headers)[
        0
    ]


def burst(
    servers: list[HttpServer], count: int, headers: dict[str, str] | None = None
) -> Counter[int]:
    """``count`` calls at once (16 threads), spread over ``servers``: their statuses."""
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        statuses = pool.map(lambda i: add(servers[i % len(servers)], i, headers), range(count))
        return Counter(statuses)


def test_exactly_the_burst_is_admitted_under_concurrency(limited: HttpServer) -> None:
    assert burst([limited], 40) == Counter({200: 5, 429: 35})


def test_a_refusal_says_when_to_retry(limited: HttpServer) -> None:
    for i in range(5):
        assert add(limited, i) == 200
    status, headers, body = post(limited.host, limited.port, call_body(9, "add", {"a": 1, "b": 2}))
    assert status == 429
    assert headers["content-type"] == "application/json"
    # whole seconds, rounded up: a token comes back within the minute
    assert headers["retry-after"].isdigit() and 1 <= int(headers["retry-after"]) <= 60
    answer = json.loads(body)
    assert answer["id"] is None and answer["error"]["code"] == RATE_LIMITED
    retry_ms = answer["error"]["data"]["retryAfterMs"]
    assert 0 < retry_ms <= 60_000 and int(headers["retry-after"]) == -(-retry_ms // 1000)
    assert "rate limit of 1/m (burst 5)" in answer["error"]["message"]


def test_probes_and_other_paths_are_never_limited(limited: HttpServer) -> None:
    assert burst([limited], 6)[429] == 1
    for path in ("/healthz", "/readyz"):
        for _ in range(10):
            assert post(limited.host, limited.port, b"", path=path, method="GET")[0] == 200
    assert post(limited.host, limited.port, b"{}", path="/elsewhere")[0] == 404


def test_each_requestor_has_a_bucket_of_its_own(service: tuple[Path, Path], tmp_path: Path) -> None:
    server = serve(
        service, tmp_path, "--rate-limit", "1/m", "--rate-burst", "3", "--identity-header", IDENTITY
    )
    try:
        alice, bob = {IDENTITY: "alice"}, {IDENTITY: "bob"}
        assert burst([server], 8, alice) == Counter({200: 3, 429: 5})
        assert burst([server], 8, bob) == Counter({200: 3, 429: 5})
        # no identity: the client's address is the caller, a third bucket
        assert burst([server], 8) == Counter({200: 3, 429: 5})
    finally:
        server.stop()
        server.log.close()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_two_workers_sharing_redis_count_together(
    service: tuple[Path, Path], tmp_path: Path
) -> None:
    pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
    from fixtures.redis_server import redis_server

    with redis_server(tmp_path) as redis:
        args = ("--task-store", redis.url, "--rate-limit", "1/m", "--rate-burst", "10")
        workers = [serve(service, tmp_path, *args) for _ in range(2)]
        try:
            assert burst(workers, 60) == Counter({200: 10, 429: 50})
            # both workers see the caller's empty bucket
            assert add(workers[0], 1) == 429 and add(workers[1], 2) == 429
        finally:
            for worker in workers:
                worker.stop()
                worker.log.close()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_workers_2_on_redis_count_together(service: tuple[Path, Path], tmp_path: Path) -> None:
    """``--workers 2`` (one port, the kernel spreads connections over both processes)."""
    pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
    from fixtures.redis_server import redis_server

    with redis_server(tmp_path) as redis:
        args = ("--workers", "2", "--task-store", redis.url, "--rate-limit", "1/m")
        server = serve(service, tmp_path, *args, "--rate-burst", "7")
        try:
            assert burst([server], 30) == Counter({200: 7, 429: 23})
        finally:
            server.stop()
            server.log.close()


def test_stdio_refuses_requests_over_the_limit(service: tuple[Path, Path]) -> None:
    gen, impl = service
    args = ["--rate-limit", "1/m", "--rate-burst", "3"]
    with RawServer(PACKAGE, None, pythonpath=[gen, impl], cwd=impl, extra_args=args) as raw:
        raw.handshake()  # initialize: one token (its notification takes none)
        assert raw.call("add", {"a": 1, "b": 2})["result"]["content"][0]["text"] == "3"
        assert "result" in raw.request("tools/list")
        refused = raw.call("add", {"a": 1, "b": 2})
        assert refused["error"]["code"] == RATE_LIMITED
        assert 0 < refused["error"]["data"]["retryAfterMs"] <= 60_000
        raw.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        assert raw.request("ping")["error"]["code"] == RATE_LIMITED
        raw.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate-limit", "10"], "a rate limit is N/s or N/m"),
        (["--rate-limit", "10/h"], "a rate limit is N/s or N/m"),
        (["--rate-limit", "0/s"], "positive count"),
        (["--rate-burst", "5"], "--rate-burst needs --rate-limit"),
        (["--rate-limit", "5/s", "--rate-burst", "0"], "expected a positive integer"),
    ],
)
def test_bad_limits_are_usage_errors(
    service: tuple[Path, Path], args: list[str], message: str
) -> None:
    gen, impl = service
    done = subprocess.run(
        [sys.executable, "-m", PACKAGE, *args],
        cwd=impl,
        env={"PYTHONPATH": f"{gen}:{impl}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_store_that_does_not_answer_lets_requests_through(
    service: tuple[Path, Path], tmp_path: Path
) -> None:
    """The limit must not take the service down with Redis: calls go on, one line says why."""
    pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
    from fixtures.http_server import free_port

    down = f"redis://:s3cret@127.0.0.1:{free_port()}/0"  # nothing listens there
    server = serve(
        service, tmp_path, "--task-store", down, "--rate-limit", "1/m", "--rate-burst", "1"
    )
    try:
        assert burst([server], 5) == Counter({200: 5})
        log = server.output
    finally:
        server.stop()
        server.log.close()
    assert log.count("rate limit not applied") == 1 and "s3cret" not in log, log


def test_with_authorization_the_bucket_is_the_tokens_subject(
    service: tuple[Path, Path], tmp_path: Path, authorization_server: Any
) -> None:
    """Authorization on: the caller is the verified token's subject, not the address
    (every request here comes from 127.0.0.1) nor a header the client chose."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    gen, impl = service
    server = HttpServer(
        PACKAGE,
        "--rate-limit",
        "1/m",
        "--rate-burst",
        "2",
        "--auth-issuer",
        authorization_server.issuer,
        "--resource-url",
        resource,
        pythonpath=[gen, impl],
        cwd=impl,
        log_dir=tmp_path,
        port=port,
    )
    server.wait_ready()
    try:

        def bearer(subject: str) -> dict[str, str]:
            token = authorization_server.mint(subject=subject, audience=resource)
            return {"Authorization": f"Bearer {token}", IDENTITY: "shared"}

        alice, bob = bearer("alice"), bearer("bob")
        assert [add(server, i, alice) for i in range(3)] == [200, 200, 429]
        assert [add(server, i, bob) for i in range(3)] == [200, 200, 429]
        assert add(server, 9) == 401  # no token: refused before any bucket is asked
    finally:
        server.stop()
        server.log.close()
