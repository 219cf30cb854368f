"""Tasks over stateless HTTP belong to their requestor, and the task layer's bounds hold.

Each finding of the second security review that lives in the HTTP task layer,
against a generated server in a subprocess, driven by real HTTP clients over
loopback sockets (in-process task store; tests/runtime/tasks/test_taskstore_redis_security.py
does the same on Redis):

- a client cannot list, read, wait on or cancel another client's task: without
  an identity no ``tasks/list`` is offered; with one (``--identity-header`` set
  by an authenticating proxy, or ``scope["user"]`` set by the user's ASGI
  middleware) each requestor lists and reaches only its own tasks, and another's
  task id answers exactly as an unknown one;
- ``GET /mcp`` is refused at once (405) instead of holding an SSE stream open;
- a 2026-07-28 ``tasks/result`` is -32601 at once, not after the task ends;
- concurrent task calls never exceed ``--max-concurrent-calls``;
- live tasks are capped per worker (``--max-tasks-per-worker``).
"""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_http_tasks
from fixtures.http_server import HttpServer, free_port, http_server
from test_http_tasks import modern_rpc, rpc

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
import httpx2

HEADER = "X-Mcp-User"  # the header an authenticating proxy in front sets
ALICE, BOB = {HEADER: "alice"}, {HEADER: "bob"}

package = test_http_tasks.package  # the fixture: the generated package with every task mode


def serve(package: tuple[Path, Path], *extra: str) -> Any:
    gen, impl = package
    return http_server(
        "httptask_mcp", *extra, pythonpath=[gen, impl], cwd=impl, log_dir=impl.parent
    )


@pytest.fixture(scope="module")
def anonymous(package: tuple[Path, Path]) -> Iterator[HttpServer]:
    with serve(package) as server:
        yield server


@pytest.fixture(scope="module")
def proxied(package: tuple[Path, Path]) -> Iterator[HttpServer]:
    with serve(package, "--identity-header", HEADER) as server:
        yield server


def initialize(url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    result: dict[str, Any] = rpc(url, 0, "initialize", params, headers=headers)["result"]
    return result


def start(url: str, name: str, arguments: dict[str, Any], headers: dict[str, str] | None) -> str:
    reply = rpc(
        url, 1, "tools/call", {"name": name, "arguments": arguments, "task": {}}, headers=headers
    )
    task_id: str = reply["result"]["task"]["taskId"]
    return task_id


def unknown(reply: dict[str, Any], task_id: str) -> bool:
    """``reply`` is exactly the answer for a task id nobody ever had."""
    return reply.get("error") == {
        "code": -32602,
        "message": f"Invalid params: unknown task {task_id!r}",
    }


def assert_isolated(url: str, alice: dict[str, str], bob: dict[str, str]) -> None:
    """Alice's tasks are hers: Bob can neither list nor reach them, Alice can."""
    running = start(url, "hold", {"seconds": 30}, alice)
    finished = start(url, "batch_job", {"n": 21}, alice)
    assert rpc(url, 2, "tasks/result", {"taskId": finished}, headers=alice)["result"][
        "content"
    ] == [{"type": "text", "text": "42"}]
    assert "list" in initialize(url, bob)["capabilities"]["tasks"]  # an identified requestor lists
    assert rpc(url, 3, "tasks/list", headers=bob)["result"]["tasks"] == []
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        for task_id in (running, finished):
            assert unknown(rpc(url, 4, method, {"taskId": task_id}, headers=bob), task_id), method
            # nor without any identity
            assert unknown(rpc(url, 5, method, {"taskId": task_id}), task_id), method
    assert (
        rpc(url, 6, "tasks/get", {"taskId": running}, headers=alice)["result"]["status"]
        == "working"
    )
    listed = rpc(url, 7, "tasks/list", headers=alice)["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [running, finished]
    # the 2026-07-28 extension: the same rule
    modern = modern_rpc(
        url,
        8,
        "tools/call",
        {"name": "hold", "arguments": {"seconds": 30}},
        tasks=True,
        headers=alice,
    )["result"]["taskId"]
    for method in ("tasks/get", "tasks/cancel", "tasks/update"):
        reply = modern_rpc(
            url, 9, method, {"taskId": modern, "inputResponses": {}}, tasks=True, headers=bob
        )
        assert unknown(reply, modern), method
    got = modern_rpc(url, 10, "tasks/get", {"taskId": modern}, tasks=True, headers=alice)["result"]
    assert got["status"] == "working"
    for task_id in (running, modern):
        rpc(url, 11, "tasks/cancel", {"taskId": task_id}, headers=alice)
        modern_rpc(url, 12, "tasks/cancel", {"taskId": task_id}, tasks=True, headers=alice)


# -- finding 1: isolation -----------------------------------------------------------------


def test_an_anonymous_requestor_is_offered_no_task_list(anonymous: HttpServer) -> None:
    """Requestors that cannot be told apart get no tasks/list (MCP 2025-11-25, tasks,
    security: such receivers should not declare it), even when they send the header
    a proxied server would read."""
    url = anonymous.url
    start(url, "batch_job", {"n": 1}, None)
    for headers in (None, ALICE):
        capabilities = initialize(url, headers)["capabilities"]
        assert capabilities["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
        reply = rpc(url, 2, "tasks/list", headers=headers)
        assert reply["error"]["code"] == -32601, reply


def test_identified_requestors_reach_only_their_own_tasks(proxied: HttpServer) -> None:
    assert_isolated(proxied.url, ALICE, BOB)


def test_an_ambiguous_identity_header_identifies_no_one(proxied: HttpServer) -> None:
    """A header sent twice (a proxy that appends rather than sets it) is no identity."""
    task_id = start(proxied.url, "hold", {"seconds": 30}, ALICE)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": task_id}}
    response = httpx2.post(
        proxied.url,
        json=body,
        timeout=30,
        headers=[
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
            (HEADER, "alice"),
            (HEADER, "mallory"),
        ],
    )
    assert f"unknown task {task_id!r}" in response.text
    rpc(proxied.url, 2, "tasks/cancel", {"taskId": task_id}, headers=ALICE)


# The user's own ASGI middleware authenticates and sets scope["user"] (Starlette's
# AuthenticationMiddleware convention): a bearer token names the user here.
SCOPE_USER_SERVER = """
import sys
import uvicorn
from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser
from starlette.middleware.authentication import AuthenticationMiddleware
from httptask_impl import Impl
from httptask_mcp.server import build_app
from mcpgen_runtime.http.server import build_asgi_app
from mcpgen_runtime.http.config import HttpOptions


class Bearer(AuthenticationBackend):
    async def authenticate(self, conn):
        scheme, _, token = conn.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        return AuthCredentials(["mcp"]), SimpleUser(token)


port = int(sys.argv[1])
app = build_asgi_app(build_app(Impl()), HttpOptions(port=port))
uvicorn.run(AuthenticationMiddleware(app, backend=Bearer()), host="127.0.0.1", port=port,
            log_level="warning")
"""


def test_scope_user_set_by_user_middleware_binds_tasks(
    package: tuple[Path, Path], tmp_path: Path
) -> None:
    gen, impl = package
    script = tmp_path / "serve_with_auth.py"
    script.write_text(textwrap.dedent(SCOPE_USER_SERVER))
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(port)],
        cwd=impl,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(impl)])},
    )
    try:
        server = HttpServer.__new__(HttpServer)  # only its readiness check: the process is ours
        server.host, server.port, server.proc, server.log = "127.0.0.1", port, proc, log
        server.wait_ready()
        url = f"http://127.0.0.1:{port}/mcp"
        assert_isolated(url, {"authorization": "Bearer alice"}, {"authorization": "Bearer bob"})
        # the proxy header means nothing here: it was not configured
        assert "list" not in initialize(url, ALICE)["capabilities"]["tasks"]
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()


# -- finding 3: GET streams ---------------------------------------------------------------


def test_a_get_stream_is_refused_at_once(anonymous: HttpServer) -> None:
    response = httpx2.get(
        anonymous.url,
        timeout=10,
        headers={"accept": "text/event-stream", "mcp-protocol-version": "2025-11-25"},
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"]["code"] == -32600
    # as DELETE is
    deleted = httpx2.delete(
        anonymous.url, timeout=10, headers={"mcp-protocol-version": "2025-11-25"}
    )
    assert deleted.status_code == 405


# -- finding 4: tasks/result does not exist at 2026-07-28 ------------------------------------


def test_a_modern_tasks_result_is_method_not_found_at_once(anonymous: HttpServer) -> None:
    url = anonymous.url
    task_id = modern_rpc(
        url, 1, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}}, tasks=True
    )["result"]["taskId"]
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tasks/result",
        "params": {
            "taskId": task_id,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {
                    "extensions": {"io.modelcontextprotocol/tasks": {}}
                },
            },
        },
    }
    response = httpx2.post(
        url,
        json=body,
        timeout=10,
        headers={
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tasks/result",
        },
    )  # a hang guard: the task itself runs 30 s
    assert '"code":-32601' in response.text.replace(" ", ""), response.text
    modern_rpc(url, 3, "tasks/cancel", {"taskId": task_id}, tasks=True)


# -- low: the running-task limit under concurrency ----------------------------------------------


def test_concurrent_task_calls_never_exceed_the_limit(package: tuple[Path, Path]) -> None:
    """The slot is taken with the check, before the argument check's await: 24
    simultaneous task calls on a limit of 4 start exactly 4 tasks."""
    with serve(package, "--max-concurrent-calls", "4") as server:
        barrier = threading.Barrier(24)

        def call(index: int) -> dict[str, Any]:
            barrier.wait()
            return rpc(
                server.url,
                index,
                "tools/call",
                {"name": "sleep", "arguments": {"seconds": 30}, "task": {}},
            )

        with concurrent.futures.ThreadPoolExecutor(24) as pool:
            replies = list(pool.map(call, range(24)))
        started = [r["result"]["task"]["taskId"] for r in replies if "result" in r]
        busy = [r for r in replies if r.get("error", {}).get("code") == -31000]
        assert (len(started), len(busy)) == (4, 20), replies
        for task_id in started:
            rpc(server.url, 99, "tasks/cancel", {"taskId": task_id})


# -- finding 5: live tasks are capped ----------------------------------------------------------


def test_live_tasks_are_capped_per_worker(package: tuple[Path, Path]) -> None:
    with serve(package, "--max-tasks-per-worker", "3") as server:
        for n in range(3):  # finished at once, but live (kept) for their TTL
            task_id = start(server.url, "batch_job", {"n": n}, None)
            assert "result" in rpc(server.url, 2, "tasks/result", {"taskId": task_id})
        refused = rpc(
            server.url, 3, "tools/call", {"name": "batch_job", "arguments": {"n": 1}, "task": {}}
        )
        assert refused["error"]["code"] == -31000 and refused["error"]["data"] == {"limit": 3}
        assert "3 tasks are already live on this worker" in refused["error"]["message"]
        # plain calls go on
        plain = rpc(server.url, 4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert plain["result"]["structuredContent"] == {"sum": 3}
