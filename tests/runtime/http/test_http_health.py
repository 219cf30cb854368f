"""Liveness and readiness probes of `--transport http` (issue 31, item 2): `GET /healthz`
answers 200 while the process serves, `GET /readyz` 200 while the task store answers and
503 while it does not; GET or HEAD only, JSON, no Host/Origin check, nothing of the
store's URL (a password) in the answer; the paths are options."""

from __future__ import annotations

import http.client
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer, free_port, http_server

pytest.importorskip("uvicorn", reason="the http extra is not installed")

WEATHER = Path(__file__).resolve().parents[3] / "examples" / "weather"


def serve(tmp_path: Path, *extra: str) -> Any:
    return http_server("weather_mcp", *extra, pythonpath=[WEATHER], cwd=WEATHER, log_dir=tmp_path)


def ask(
    server: HttpServer, method: str, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    if not (WEATHER / "weather_mcp").is_dir():
        pytest.skip("examples/weather is not built (make test builds it)")
    with serve(tmp_path_factory.mktemp("health")) as running:
        yield running


def test_health_and_readiness_answer_in_json(server: HttpServer) -> None:
    status, headers, body = ask(server, "GET", "/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store"
    status, _, body = ask(server, "GET", "/readyz")
    assert (status, json.loads(body)) == (200, {"status": "ready", "taskStore": "memory"})
    status, _, body = ask(server, "HEAD", "/healthz")
    assert (status, body) == (200, b"")


def test_probes_take_get_only_and_any_host(server: HttpServer) -> None:
    status, headers, _ = ask(server, "POST", "/healthz")
    assert status == 405 and headers["allow"] == "GET, HEAD"
    # an orchestrator's probe names the pod's address; the MCP path still refuses it
    foreign = {"Host": "10.1.2.3:8000", "Origin": "http://evil.example"}
    assert ask(server, "GET", "/readyz", foreign)[0] == 200
    assert ask(server, "POST", "/mcp", foreign)[0] in (403, 421)
    assert ask(server, "GET", "/nothing")[0] == 404


def test_the_paths_are_options(tmp_path: Path) -> None:
    if not (WEATHER / "weather_mcp").is_dir():
        pytest.skip("examples/weather is not built (make test builds it)")
    with serve(tmp_path, "--health-path", "/live", "--ready-path", "/ready") as running:
        assert ask(running, "GET", "/live")[0] == 200
        assert ask(running, "GET", "/ready")[0] == 200
        assert ask(running, "GET", "/healthz")[0] == 404


def test_clashing_paths_are_a_usage_error() -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "weather_mcp", "--transport", "http", "--health-path", "/mcp"],
        cwd=WEATHER,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--path, --health-path and --ready-path must differ" in done.stderr


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_readiness_follows_the_task_store(tmp_path: Path) -> None:
    """A Redis store that does not answer: not ready (503), still alive (200), and the
    answer names no URL (the store's may carry a password)."""
    pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
    if not (WEATHER / "weather_mcp").is_dir():
        pytest.skip("examples/weather is not built (make test builds it)")
    from fixtures.redis_server import RedisServer

    down = f"redis://:s3cret@127.0.0.1:{free_port()}/0"  # nothing listens there
    with serve(tmp_path, "--task-store", down) as running:
        status, _, body = ask(running, "GET", "/readyz")
        assert status == 503
        assert json.loads(body) == {
            "status": "not ready",
            "reason": "the task store does not answer",
        }
        assert ask(running, "GET", "/healthz")[0] == 200
    redis = RedisServer(tmp_path)
    try:
        redis.wait_ready()
        with serve(tmp_path, "--task-store", redis.url) as running:
            status, _, body = ask(running, "GET", "/readyz")
            assert (status, json.loads(body)) == (200, {"status": "ready", "taskStore": "shared"})
    finally:
        redis.stop()
