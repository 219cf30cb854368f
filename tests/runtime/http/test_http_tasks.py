"""HTTP at parity with stdio: tasks (both eras), ``required`` tools, per-revision
``initialize``, and capabilities/``execution`` published only when tasks are served.

The same generated package (tools in every task mode) is driven with raw
JSON-RPC over stdio and over stateless Streamable HTTP (plain POSTs, one per
request); the answers must agree. Tasks here live in the in-process store;
tests/runtime/tasks/test_taskstore_redis.py runs them across workers on Redis.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer, free_port, http_server
from helpers import ALL_VERSIONS, RawServer, build_package

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
import httpx2

MODERN = "2026-07-28"

SPEC = """
mcpgen: 1
package: httptask_mcp
server: {name: httptask, title: HTTP Tasks, version: "1.0.0", instructions: Tasks fixture.,
         implementation: "httptask_impl:Impl"}
tools:
  - name: add
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    output_schema: {type: object, properties: {sum: {type: integer}}, required: [sum]}
  - name: sleep
    async: true
    task_support: optional
    parameters: [{name: seconds, type: number}]
  - name: batch_job
    task_support: required
    parameters: [{name: n, type: integer}]
    returns: integer
  - name: hold
    task_support: optional
    parameters: [{name: seconds, type: number}]
    callback: positional
    returns: string
"""

IMPL = """
import asyncio, time
from httptask_mcp import Context, HttptaskServer, ToolError
from httptask_mcp.models import AddArgs, AddOutput

class Impl(HttptaskServer):
    def add(self, args: AddArgs) -> AddOutput:
        return AddOutput(sum=args["a"] + args["b"])

    async def sleep(self, seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "slept"

    def batch_job(self, n: int) -> int:
        time.sleep(0.05)
        if n < 0:
            raise ToolError("n must not be negative")
        return n * 2

    def hold(self, seconds: float, *, ctx: Context = Context.NONE) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not ctx.cancelled:
            time.sleep(0.01)
        return "cancelled" if ctx.cancelled else f"held {seconds}"
"""

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def modern_meta(*, tasks: bool = False) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": TASKS if tasks else {},
    }


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("http_tasks")
    gen = build_package(SPEC, root, "httptask_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "httptask_impl.py").write_text(IMPL, encoding="utf-8")
    return gen, impl


@pytest.fixture(scope="module")
def server(package: tuple[Path, Path]) -> Iterator[HttpServer]:
    gen, impl = package
    with http_server("httptask_mcp", pythonpath=[gen, impl], cwd=impl, log_dir=impl.parent) as srv:
        yield srv


_clients = threading.local()


def _client() -> httpx2.Client:
    """One HTTP client per thread: a fresh one per request would cost more than the request."""
    client = getattr(_clients, "client", None)
    if client is None:
        client = _clients.client = httpx2.Client(timeout=30)
        atexit.register(client.close)
    return client


def rpc(
    url: str,
    request_id: Any,
    method: str,
    params: dict[str, Any] | None = None,
    version: str = "2025-11-25",
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One JSON-RPC request as one POST (with ``headers`` added); its JSON-RPC answer (SSE or JSON)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": version,
        **(headers or {}),
    }
    if version == MODERN:
        headers["mcp-method"] = method
        if method == "tools/call" and params:
            headers["mcp-name"] = params["name"]
    response = _client().post(url, json=body, headers=headers)
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    answer: dict[str, Any] = json.loads(text)
    return answer


def modern_rpc(
    url: str,
    request_id: Any,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    tasks: bool = False,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    return rpc(
        url,
        request_id,
        method,
        {**(params or {}), "_meta": modern_meta(tasks=tasks)},
        MODERN,
        headers,
    )


def poll(url: str, task_id: str, era: str = "legacy", timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        if era == "modern":
            got = modern_rpc(url, "poll", "tasks/get", {"taskId": task_id}, tasks=True)["result"]
        else:
            got = rpc(url, "poll", "tasks/get", {"taskId": task_id})["result"]
        if got["status"] != "working" or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


# -- initialize: the same answer as stdio at every revision -----------------------------


def test_initialize_matches_stdio_at_every_revision(
    package: tuple[Path, Path], server: HttpServer
) -> None:
    gen, impl = package
    for version in ALL_VERSIONS:
        with RawServer("httptask_mcp", None, pythonpath=[gen, impl], cwd=impl) as raw:
            stdio = raw.handshake(version)
            raw.close()
        init = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        }
        http = rpc(server.url, 1, "initialize", init, version)["result"]
        if version == "2025-11-25":
            # stdio has one client per process; an anonymous HTTP requestor cannot
            # be told from others, so it is offered no tasks/list (test_http_task_isolation)
            del stdio["capabilities"]["tasks"]["list"]
        assert http == stdio, version
        if version in ("2024-11-05", "2025-03-26"):
            assert "title" not in http["serverInfo"]
        else:
            assert http["serverInfo"]["title"] == "HTTP Tasks"
        assert ("tasks" in http["capabilities"]) == (version == "2025-11-25")


def test_discover_publishes_the_tasks_extension(server: HttpServer) -> None:
    found = modern_rpc(server.url, 1, "server/discover")["result"]
    assert found["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    assert found["resultType"] == "complete"
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "httptask"


# -- 2025-11-25 core tasks over HTTP ---------------------------------------------------


def test_handshake_tasks_over_http(server: HttpServer) -> None:
    url = server.url
    listed = rpc(url, 2, "tools/list")["result"]["tools"]
    assert {t["name"]: t.get("execution") for t in listed} == {
        "add": None,
        "sleep": {"taskSupport": "optional"},
        "batch_job": {"taskSupport": "required"},
        "hold": {"taskSupport": "optional"},
    }
    # a required-task tool is not run as a plain call; task on a forbidden tool is refused
    assert (
        rpc(url, 3, "tools/call", {"name": "batch_job", "arguments": {"n": 1}})["error"]["code"]
        == -32601
    )
    refused = rpc(url, 4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}, "task": {}})
    assert refused["error"]["code"] == -32601
    created = rpc(
        url, 5, "tools/call", {"name": "batch_job", "arguments": {"n": 5}, "task": {"ttl": 60000}}
    )["result"]
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 60000 and "pollInterval" in task
    result = rpc(url, 6, "tasks/result", {"taskId": task["taskId"]})["result"]  # blocks till done
    assert result["content"] == [{"type": "text", "text": "10"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    got = rpc(url, 7, "tasks/get", {"taskId": task["taskId"]})["result"]
    assert got["status"] == "completed" and got["taskId"] == task["taskId"]
    failing = rpc(url, 8, "tools/call", {"name": "batch_job", "arguments": {"n": -1}, "task": {}})
    failed_id = failing["result"]["task"]["taskId"]
    outcome = rpc(url, 9, "tasks/result", {"taskId": failed_id})["result"]
    assert outcome["isError"] is True and "negative" in outcome["content"][0]["text"]
    assert rpc(url, 10, "tasks/get", {"taskId": failed_id})["result"]["status"] == "failed"
    assert rpc(url, 11, "tasks/list")["error"]["code"] == -32601  # anonymous: not offered
    slow = rpc(url, 12, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}, "task": {}})
    slow_id = slow["result"]["task"]["taskId"]
    cancelled = rpc(url, 13, "tasks/cancel", {"taskId": slow_id})["result"]
    assert cancelled["status"] == "cancelled"
    assert rpc(url, 14, "tasks/cancel", {"taskId": slow_id})["error"]["code"] == -32602
    assert rpc(url, 15, "tasks/get", {"taskId": "unknown"})["error"]["code"] == -32602
    # invalid arguments: an isError result at once, no task (as over stdio)
    bad = rpc(url, 16, "tools/call", {"name": "batch_job", "arguments": {"n": "x"}, "task": {}})
    assert bad["result"]["isError"] is True and "task" not in bad["result"]


def test_a_cancelled_task_stops_its_handler(server: HttpServer) -> None:
    created = rpc(
        server.url, 1, "tools/call", {"name": "hold", "arguments": {"seconds": 30}, "task": {}}
    )["result"]["task"]
    assert (
        rpc(server.url, 2, "tasks/cancel", {"taskId": created["taskId"]})["result"]["status"]
        == "cancelled"
    )
    reply = rpc(server.url, 3, "tasks/result", {"taskId": created["taskId"]})
    assert reply["error"]["code"] == -32602 and "cancelled" in reply["error"]["message"]


def test_no_tasks_before_2025_11_25_over_http(server: HttpServer) -> None:
    assert rpc(server.url, 2, "tasks/list", version="2025-06-18")["error"]["code"] == -32601
    plain = rpc(
        server.url,
        3,
        "tools/call",
        {"name": "batch_job", "arguments": {"n": 2}, "task": {}},
        "2025-06-18",
    )
    assert plain["result"]["content"] == [{"type": "text", "text": "4"}]


# -- 2026-07-28 extension over HTTP -----------------------------------------------------


def test_modern_tasks_extension_over_http(server: HttpServer) -> None:
    url = server.url
    error = modern_rpc(url, 1, "tools/call", {"name": "batch_job", "arguments": {"n": 2}})
    assert error["error"]["code"] == -32021
    assert error["error"]["data"] == {
        "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
    plain = modern_rpc(url, 2, "tools/call", {"name": "sleep", "arguments": {"seconds": 0}})
    assert plain["result"]["resultType"] == "complete"
    created = modern_rpc(
        url, 3, "tools/call", {"name": "batch_job", "arguments": {"n": 21}}, tasks=True
    )["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
    got = poll(url, created["taskId"], "modern")
    assert got["resultType"] == "complete" and got["status"] == "completed"
    assert got["result"]["content"] == [{"type": "text", "text": "42"}]
    update = modern_rpc(
        url, 4, "tasks/update", {"taskId": created["taskId"], "inputResponses": {}}, tasks=True
    )
    assert update["result"]["resultType"] == "complete"
    assert (
        modern_rpc(url, 5, "tasks/get", {"taskId": "nope"}, tasks=True)["error"]["code"] == -32602
    )
    assert modern_rpc(url, 6, "tasks/get", {"taskId": created["taskId"]})["error"]["code"] == -32021
    long = modern_rpc(
        url, 7, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}}, tasks=True
    )["result"]
    ack = modern_rpc(url, 8, "tasks/cancel", {"taskId": long["taskId"]}, tasks=True)
    assert ack["result"]["resultType"] == "complete"
    got = modern_rpc(url, 9, "tasks/get", {"taskId": long["taskId"]}, tasks=True)["result"]
    assert got["status"] == "cancelled"
    assert modern_rpc(url, 10, "tasks/list", tasks=True)["error"]["code"] == -32601


# -- limits and what is published ----------------------------------------------------------


def test_tasks_beyond_the_limit_are_refused(package: tuple[Path, Path]) -> None:
    gen, impl = package
    with http_server(
        "httptask_mcp",
        "--max-concurrent-calls",
        "2",
        pythonpath=[gen, impl],
        cwd=impl,
        log_dir=impl.parent,
    ) as srv:
        # async handlers: they hold task slots but no handler thread
        held = [
            rpc(
                srv.url,
                i,
                "tools/call",
                {"name": "sleep", "arguments": {"seconds": 30}, "task": {}},
            )["result"]["task"]
            for i in range(2)
        ]
        busy = rpc(
            srv.url, 3, "tools/call", {"name": "hold", "arguments": {"seconds": 30}, "task": {}}
        )
        assert busy["error"]["code"] == -31000 and busy["error"]["data"] == {"limit": 2}
        assert "busy" in busy["error"]["message"]
        # plain calls are not tasks: they still run
        assert rpc(srv.url, 4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})[
            "result"
        ]["structuredContent"] == {"sum": 3}
        for task in held:
            rpc(srv.url, 5, "tasks/cancel", {"taskId": task["taskId"]})
        again = rpc(
            srv.url, 6, "tools/call", {"name": "batch_job", "arguments": {"n": 1}, "task": {}}
        )
        assert again["result"]["task"]["status"] == "working"


def test_several_workers_on_the_memory_store_publish_no_tasks(package: tuple[Path, Path]) -> None:
    """A task created in one process could not be found in another: with --workers
    and the in-process store, no tasks capability, extension or execution is published."""
    gen, impl = package
    with http_server(
        "httptask_mcp", "--workers", "2", pythonpath=[gen, impl], cwd=impl, log_dir=impl.parent
    ) as srv:
        init = rpc(
            srv.url,
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        assert "tasks" not in init["result"]["capabilities"]
        tools = rpc(srv.url, 2, "tools/list")["result"]["tools"]
        assert all("execution" not in tool for tool in tools)
        found = modern_rpc(srv.url, 3, "server/discover")["result"]
        assert "extensions" not in found["capabilities"]
        assert rpc(srv.url, 4, "tasks/list")["error"]["code"] == -32601


# -- the command line ------------------------------------------------------------------------


def _run(
    package: tuple[Path, Path], *args: str, extra_path: Sequence[Path] = ()
) -> subprocess.CompletedProcess[str]:
    gen, impl = package
    return subprocess.run(
        [sys.executable, "-m", "httptask_mcp", *args],
        cwd=impl,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in (*extra_path, gen, impl))},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_task_store_flags(package: tuple[Path, Path], tmp_path: Path) -> None:
    stdio = _run(package, "--task-store", "memory")
    assert stdio.returncode == 2 and "--task-store need --transport http" in stdio.stderr
    bad = _run(
        package, "--transport", "http", "--port", str(free_port()), "--task-store", "mongo://x"
    )
    assert bad.returncode == 2 and "--task-store must be 'memory' or a redis://" in bad.stderr
    # without redis-py: a clear message, no traceback (the runtime itself never needs it)
    fake = tmp_path / "no_redis" / "redis"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named redis (simulated)')\n")
    missing = _run(
        package,
        "--transport",
        "http",
        "--port",
        str(free_port()),
        "--task-store",
        "redis://127.0.0.1:1/0",
        extra_path=[fake.parent],
    )
    assert missing.returncode == 2, missing.stderr
    assert (
        "pip install 'mcpgen-runtime[redis]'" in missing.stderr
        and "Traceback" not in missing.stderr
    )


def test_a_malformed_call_is_left_to_the_sdk(server: HttpServer) -> None:
    """The task layer looks at every tools/call first: a name that is not a string
    (unhashable) must reach the core's own validation (-32602), not crash the layer."""
    for name in (["batch_job"], {"x": 1}, None):
        reply = rpc(server.url, 1, "tools/call", {"name": name, "arguments": {}, "task": {}})
        assert reply["error"]["code"] == -32602, reply


def test_notifications_pass_the_task_layer(server: HttpServer) -> None:
    """An id-less ``initialize`` or ``tasks/get`` is a notification, accepted (202)
    and ignored, never an error in the server's log (found by tests/fuzz/test_fuzz_http.py)."""
    for method in ("initialize", "tasks/get", "tools/call"):
        response = httpx2.post(
            server.url,
            json={"jsonrpc": "2.0", "method": method, "params": {}},
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
            },
            timeout=30,
        )
        assert response.status_code == 202
    assert rpc(server.url, 1, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert "raised" not in server.output and "Traceback" not in server.output, server.output[-3000:]
