"""Protocol completeness over real pipes: both eras, tasks, cancellation, progress, logs.

One generated fixture server (tools with every task mode, an async sleeper, and
a sync handler that uses the opt-in ``ctx``) is driven with raw JSON-RPC frames.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import RawServer, build_package, initialize_request

SPEC = """
mcpgen: 1
package: proto_mcp
server: {name: proto, version: "1.0.0", instructions: Protocol fixture.}
tools:
  - name: add
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    output_schema: {type: object, properties: {sum: {type: integer}}, required: [sum]}
    icons: [{src: "https://example.com/i.png", mime_type: image/png}]
  - name: sleep
    async: true
    task_support: optional
    parameters: [{name: seconds, type: number}]
  - name: batch_job
    task_support: required
    parameters: [{name: n, type: integer}]
    returns: integer
  - name: work
    parameters: [{name: steps, type: integer}, {name: pause, type: number, default: 0}]
    callback: positional
"""

IMPL = """
import asyncio, time
from proto_mcp import Context, ProtoServer, ToolError
from proto_mcp.models import AddArgs, AddOutput

class Impl(ProtoServer):
    def add(self, args: AddArgs) -> AddOutput:
        return AddOutput(sum=args["a"] + args["b"])

    async def sleep(self, seconds: float) -> str:  # positional: one required parameter
        await asyncio.sleep(seconds)
        return "slept"

    def batch_job(self, n: int) -> int:
        time.sleep(0.05)
        if n < 0:
            raise ToolError("n must not be negative")
        return n * 2

    def work(self, steps: int, pause: float, *, ctx: Context = Context.NONE) -> str:
        ctx.info({"msg": "starting", "steps": steps})
        for step in range(steps):
            if ctx.cancelled:
                return "stopped"
            time.sleep(pause)
            ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return f"did {steps}"
"""

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def modern(extra: dict[str, Any] | None = None, *, tasks: bool = False) -> dict[str, Any]:
    meta = dict(MODERN_META)
    if tasks:
        meta["io.modelcontextprotocol/clientCapabilities"] = TASKS
    return {"_meta": {**meta, **(extra or {})}}


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proto")
    gen = build_package(SPEC, root, "proto_mcp")
    (root / "impl").mkdir()
    (root / "impl" / "proto_impl.py").write_text(textwrap.dedent(IMPL))
    return gen


@pytest.fixture
def server(gen: Path) -> Iterator[RawServer]:
    with RawServer("proto_mcp", "proto_impl:Impl", pythonpath=[gen, gen.parent / "impl"]) as srv:
        yield srv


def frames_until(srv: RawServer, request_id: Any, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every frame up to and including the response to ``request_id``."""
    frames = []
    deadline = time.monotonic() + timeout
    while True:
        frame = srv.recv(max(0.1, deadline - time.monotonic()))
        frames.append(frame)
        if frame.get("id") == request_id and "method" not in frame:
            return frames


def send(
    srv: RawServer, request_id: Any, method: str, params: dict[str, Any] | None = None
) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    srv.send(message)


def ask(
    srv: RawServer, request_id: Any, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    send(srv, request_id, method, params)
    return frames_until(srv, request_id)[-1]


# -- 2026-07-28 ---------------------------------------------------------------


def test_discover_and_list_in_the_stateless_era(server: RawServer) -> None:
    discover = ask(server, 1, "server/discover", modern())["result"]
    assert discover == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {
            "tools": {"listChanged": False},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
        "ttlMs": 300000,
        "cacheScope": "public",
        "instructions": "Protocol fixture.",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "proto", "version": "1.0.0"}},
    }
    listed = ask(server, 2, "tools/list", modern())["result"]
    assert listed["resultType"] == "complete"
    assert (listed["ttlMs"], listed["cacheScope"]) == (300000, "public")
    assert listed["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "proto"
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert "execution" not in tools["sleep"]  # taskSupport is gone in 2026
    assert tools["add"]["icons"] == [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
    result = ask(
        server, 3, "tools/call", {"name": "add", "arguments": {"a": 2, "b": "3"}, **modern()}
    )
    assert result["result"] == {
        "resultType": "complete",
        "content": [{"type": "text", "text": '{"sum":5}'}],
        "structuredContent": {"sum": 5},
        "isError": False,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "proto", "version": "1.0.0"}},
    }


def test_envelope_errors(server: RawServer) -> None:
    ask(server, 1, "server/discover", modern())  # opens a modern connection
    no_caps = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    error = ask(server, 2, "tools/list", no_caps)["error"]
    assert error["code"] == -32602 and "clientCapabilities" in error["message"]
    error = ask(server, 3, "tools/list", {})["error"]
    assert error["code"] == -32602
    old = {"_meta": {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}}
    error = ask(server, 4, "tools/list", old)["error"]
    assert error == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"},
    }
    error = ask(server, 5, "initialize", initialize_request("2025-11-25")["params"])["error"]
    assert error["code"] == -32022 and error["data"]["supported"] == ["2026-07-28"]
    assert ask(server, 6, "ping", modern())["error"]["code"] == -32601
    bad_level = ask(server, 7, "tools/list", modern({"io.modelcontextprotocol/logLevel": "loud"}))
    assert bad_level["error"]["code"] == -32602


def test_envelope_refused_on_a_handshake_connection(server: RawServer) -> None:
    server.handshake("2025-11-25")
    error = ask(server, 2, "tools/list", modern())["error"]
    assert error["code"] == -32600
    assert ask(server, 3, "server/discover", {})["error"]["code"] == -32601


def test_modern_tasks_extension(server: RawServer) -> None:
    # a required-task tool called by a client that did not declare the extension
    error = ask(server, 1, "tools/call", {"name": "batch_job", "arguments": {"n": 2}, **modern()})
    assert error["error"]["code"] == -32021
    assert error["error"]["data"] == {
        "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
    # an optional-task tool runs plainly for that client
    plain = ask(server, 2, "tools/call", {"name": "sleep", "arguments": {"seconds": 0}, **modern()})
    assert plain["result"]["resultType"] == "complete"
    # a declaring client gets a task (server-directed)
    created = ask(
        server, 3, "tools/call", {"name": "batch_job", "arguments": {"n": 21}, **modern(tasks=True)}
    )["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
    task_id = created["taskId"]
    deadline = time.monotonic() + 20  # generous: CI machines are slow and shared
    attempt = 0
    while True:
        attempt += 1
        got = ask(server, f"get-{attempt}", "tasks/get", {"taskId": task_id, **modern(tasks=True)})[
            "result"
        ]
        if got["status"] != "working" or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert got["resultType"] == "complete" and got["status"] == "completed"
    assert got["result"]["content"] == [{"type": "text", "text": "42"}]
    update = ask(
        server, 200, "tasks/update", {"taskId": task_id, "inputResponses": {}, **modern(tasks=True)}
    )
    assert update["result"]["resultType"] == "complete"
    assert (
        ask(server, 201, "tasks/get", {"taskId": "nope", **modern(tasks=True)})["error"]["code"]
        == -32602
    )
    assert ask(server, 202, "tasks/get", {"taskId": task_id, **modern()})["error"]["code"] == -32021
    # cancelling a long task: an ack, then the task reads cancelled
    long = ask(
        server,
        203,
        "tools/call",
        {"name": "sleep", "arguments": {"seconds": 30}, **modern(tasks=True)},
    )["result"]
    ack = ask(server, 204, "tasks/cancel", {"taskId": long["taskId"], **modern(tasks=True)})
    assert ack["result"]["resultType"] == "complete"
    got = ask(server, 205, "tasks/get", {"taskId": long["taskId"], **modern(tasks=True)})["result"]
    assert got["status"] == "cancelled"
    assert ask(server, 206, "tasks/list", modern(tasks=True))["error"]["code"] == -32601


def test_modern_log_level_is_per_request(server: RawServer) -> None:
    send(server, 1, "tools/call", {"name": "work", "arguments": {"steps": 1}, **modern()})
    quiet = frames_until(server, 1)
    assert [f for f in quiet if f.get("method") == "notifications/message"] == []
    send(
        server,
        2,
        "tools/call",
        {
            "name": "work",
            "arguments": {"steps": 1},
            **modern({"io.modelcontextprotocol/logLevel": "info"}),
        },
    )
    loud = frames_until(server, 2)
    logs = [f for f in loud if f.get("method") == "notifications/message"]
    assert logs == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": {"msg": "starting", "steps": 1}, "logger": "proto"},
        }
    ]


# -- 2025-11-25 tasks -----------------------------------------------------------


def test_handshake_tasks(server: RawServer) -> None:
    init = server.handshake("2025-11-25")
    assert init["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    listed = ask(server, 2, "tools/list")["result"]["tools"]
    assert {t["name"]: t.get("execution") for t in listed} == {
        "add": None,
        "sleep": {"taskSupport": "optional"},
        "batch_job": {"taskSupport": "required"},
        "work": None,
    }
    assert (
        ask(server, 3, "tools/call", {"name": "batch_job", "arguments": {"n": 1}})["error"]["code"]
        == -32601
    )
    refused = ask(
        server, 4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}, "task": {}}
    )
    assert refused["error"]["code"] == -32601
    created = ask(
        server,
        5,
        "tools/call",
        {"name": "batch_job", "arguments": {"n": 5}, "task": {"ttl": 60000}},
    )["result"]
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 60000 and "pollInterval" in task
    send(server, 6, "tasks/result", {"taskId": task["taskId"]})  # blocks until the task ends
    frames = frames_until(server, 6)
    statuses = [f["params"] for f in frames if f.get("method") == "notifications/tasks/status"]
    assert statuses and statuses[-1]["status"] == "completed"
    result = frames[-1]["result"]
    assert result["content"] == [{"type": "text", "text": "10"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    got = ask(server, 7, "tasks/get", {"taskId": task["taskId"]})["result"]
    assert got["status"] == "completed" and got["taskId"] == task["taskId"]
    failing = ask(
        server, 8, "tools/call", {"name": "batch_job", "arguments": {"n": -1}, "task": {}}
    )
    failed_id = failing["result"]["task"]["taskId"]
    outcome = ask(server, 9, "tasks/result", {"taskId": failed_id})["result"]
    assert outcome["isError"] is True and "negative" in outcome["content"][0]["text"]
    assert ask(server, 10, "tasks/get", {"taskId": failed_id})["result"]["status"] == "failed"
    listed_tasks = ask(server, 11, "tasks/list")["result"]["tasks"]
    assert {t["taskId"] for t in listed_tasks} >= {task["taskId"], failed_id}
    slow = ask(
        server, 12, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}, "task": {}}
    )
    slow_id = slow["result"]["task"]["taskId"]
    cancelled = ask(server, 13, "tasks/cancel", {"taskId": slow_id})["result"]
    assert cancelled["status"] == "cancelled"
    again = ask(server, 14, "tasks/cancel", {"taskId": slow_id})
    assert again["error"]["code"] == -32602
    assert ask(server, 15, "tasks/get", {"taskId": "unknown"})["error"]["code"] == -32602


def test_no_tasks_before_2025_11_25(server: RawServer) -> None:
    init = server.handshake("2025-06-18")
    assert "tasks" not in init["capabilities"]
    assert ask(server, 2, "tasks/list")["error"]["code"] == -32601
    # the `task` member is ignored and required-task tools run plainly
    plain = ask(server, 3, "tools/call", {"name": "batch_job", "arguments": {"n": 2}, "task": {}})
    assert plain["result"]["content"] == [{"type": "text", "text": "4"}]


# -- cancellation, progress, logging ------------------------------------------------


def test_cancelled_async_call_gets_no_reply(server: RawServer) -> None:
    server.handshake("2025-11-25")
    send(server, 2, "tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "user abort"},
        }
    )
    assert ask(server, 3, "ping") == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert server.no_more_frames(0.3)


def test_cancelled_sync_call_sees_the_flag(server: RawServer) -> None:
    server.handshake("2025-11-25")
    send(server, 2, "tools/call", {"name": "work", "arguments": {"steps": 200, "pause": 0.02}})
    time.sleep(0.1)
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    assert ask(server, 3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})["result"][
        "structuredContent"
    ] == {"sum": 3}
    assert server.no_more_frames(0.6)  # "stopped" was suppressed


def test_progress_and_logs_in_the_handshake_era(server: RawServer) -> None:
    init = server.handshake("2025-11-25")
    assert init["capabilities"]["logging"] == {}
    assert ask(server, 2, "logging/setLevel", {"level": "info"})["result"] == {}
    assert ask(server, 3, "logging/setLevel", {"level": "loud"})["error"]["code"] == -32602
    send(
        server,
        4,
        "tools/call",
        {"name": "work", "arguments": {"steps": 3}, "_meta": {"progressToken": "tok"}},
    )
    frames = frames_until(server, 4)
    progress = [f["params"] for f in frames if f.get("method") == "notifications/progress"]
    assert progress == [
        {"progressToken": "tok", "progress": step, "total": 3, "message": f"step {step}"}
        for step in (1, 2, 3)
    ]
    assert any(f.get("method") == "notifications/message" for f in frames)
    assert frames[-1]["result"]["content"] == [{"type": "text", "text": "did 3"}]


def test_no_progress_without_a_token(server: RawServer) -> None:
    server.handshake("2024-11-05")
    send(server, 2, "tools/call", {"name": "work", "arguments": {"steps": 2}})
    frames = frames_until(server, 2)
    assert [f for f in frames if "method" in f] == []
