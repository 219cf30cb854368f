"""The server core's entry for a request that arrives on its own (HTTP):
``ServerConnection.receive_stateless`` decides the era and takes the state the
request implies, checks the envelope and routing once, and every frame carries its
HTTP status; a connection whose tasks live in the shell's store hands out
``CreateTask``, ``FetchTask`` and ``ListTasks`` and shapes every answer itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcpgen_runtime
from mcpgen_runtime.protocol.jsonrpc import result_response
from mcpgen_runtime.server.actions import CreateTask, FetchTask, Invoke, ListTasks, SendFrame
from mcpgen_runtime.server.core import Routing, ServerConnection
from mcpgen_runtime.server.stateless import (
    DEFAULT_STATELESS_VERSION,
    MODERN_HTTP_STATUS,
    notification_refusal,
    stateless_era,
)
from mcpgen_runtime.server.tools import App, Binding
from mcpgen_runtime.tasks.table import TaskTable

MODERN = "2026-07-28"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


class Impl:
    def add(self, a: int, b: int) -> int:
        return a + b

    def job(self, n: int) -> int:
        return n


def _schema(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in names},
        "required": list(names),
    }


APP = App.build(
    Impl(),
    [
        {"name": "add", "inputSchema": _schema("a", "b")},
        {"name": "job", "inputSchema": _schema("n"), "execution": {"taskSupport": "optional"}},
    ],
    [
        Binding("add", "add", "positional", ("a", "b"), (None, None), returns="integer"),
        Binding("job", "job", "positional", ("n",), (None,), returns="integer",
                task_support="optional"),
    ],
    server_info={"name": "stateless", "version": "1"},
)  # fmt: skip


def meta(*, tasks: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": TASKS if tasks else {},
        **extra,
    }


def request(method: str, params: dict[str, Any] | None = None, id_: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def routed(method: str, params: dict[str, Any], name: str | None = None) -> Routing:
    return Routing(MODERN, method, name)


def frame(actions: list[Any]) -> tuple[dict[str, Any], int]:
    assert isinstance(actions[0], SendFrame), actions
    return json.loads(actions[0].data), actions[0].status


def test_the_core_decides_the_era_of_a_stateless_request() -> None:
    assert stateless_era(None) == "legacy"
    assert stateless_era("2024-11-05") == "legacy"
    assert stateless_era(MODERN) == "modern"
    assert stateless_era("2099-01-01") == "modern"  # down the 2026-07-28 checks, refused there
    # no revision named: the transport's default, answered as at that revision
    conn = ServerConnection(APP)
    answer, status = frame(conn.receive_stateless(request("tools/list")))
    assert (conn.era, conn.version, status) == ("legacy", DEFAULT_STATELESS_VERSION, 200)
    assert "title" not in json.dumps(answer)  # 2025-03-26 tool fields
    # a handshake revision named: that revision, every log level
    conn = ServerConnection(APP)
    conn.receive_stateless(request("tools/list"), Routing("2025-06-18"))
    assert (conn.era, conn.version, conn.log_level) == ("legacy", "2025-06-18", "debug")
    # 2026-07-28: the envelope's era
    conn = ServerConnection(APP)
    params = {"_meta": meta()}
    answer, status = frame(
        conn.receive_stateless(request("tools/list", params), routed("tools/list", params))
    )
    assert (conn.era, status) == ("modern", 200)
    assert conn.version is None
    # initialize opens a handshake connection, whatever the routing says
    conn = ServerConnection(APP)
    params = {"protocolVersion": "2025-11-25", "_meta": meta()}
    answer, status = frame(
        conn.receive_stateless(request("initialize", params), routed("initialize", params))
    )
    assert (conn.era, answer["result"]["protocolVersion"], status) == ("legacy", "2025-11-25", 200)


@pytest.mark.parametrize(
    ("message", "routing", "code", "status", "text"),
    [
        # the handshake era: errors are answered with 200
        (request("tools/list", {"_meta": meta()}), Routing(), -32600, 200, "handshake protocol era"),
        (request("nope"), Routing(), -32601, 200, "Method not found"),
        # 2026-07-28: by code
        (request("nope", {"_meta": meta()}), Routing(MODERN, "nope"), -32601, 404, "Method not found"),
        (request("tools/list", {}), Routing(MODERN, "tools/list"), -32602, 400, "params._meta must be an object carrying"),
        (request("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}), Routing(MODERN, "tools/list"), -32602, 400, "params._meta must be an object carrying"),
        (request("tools/list", {"_meta": meta()}), Routing(MODERN, "tools/call"), -32020, 400, "mcp-method header"),
        (request("tools/list", {"_meta": meta()}), Routing(MODERN, "tools/list", duplicated="mcp-method"), -32020, 400, "more than once"),
        (request("tools/call", {"name": "add", "_meta": meta()}), Routing(MODERN, "tools/call", "sub"), -32020, 400, "mcp-name header"),
        (request("tools/list", {"_meta": meta()}), Routing("2025-11-26", "tools/list"), -32020, 400, "mcp-protocol-version header"),
        (request("tools/list", {"_meta": meta(**{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})}), Routing("2099-01-01", "tools/list"), -32022, 400, "Unsupported protocol version"),
        (request("tools/list", {"_meta": meta(**{"io.modelcontextprotocol/clientCapabilities": []})}), Routing(MODERN, "tools/list"), -32602, 400, "must be an object"),
        (request("tools/call", {"name": "nope", "_meta": meta()}), Routing(MODERN, "tools/call", "nope"), -32602, 400, "Unknown tool"),
        (request("tasks/get", {"taskId": "t", "_meta": meta()}), Routing(MODERN, "tasks/get"), -32021, 400, "needs the"),
    ],
)  # fmt: skip
def test_each_frame_carries_its_status(
    message: dict[str, Any], routing: Routing, code: int, status: int, text: str
) -> None:
    actions = ServerConnection(APP, tasks_outside=True).receive_stateless(message, routing)
    answer, got = frame(actions)
    assert (answer["error"]["code"], got, actions[0].code) == (code, status, code)
    assert text in answer["error"]["message"]
    assert status == (MODERN_HTTP_STATUS.get(code, 200) if routing.version else 200)


def test_a_notification_naming_an_unknown_revision_is_refused() -> None:
    assert notification_refusal(None) is None
    assert notification_refusal("2025-06-18") is None
    assert notification_refusal(MODERN) is None
    refused = notification_refusal("2099-01-01")
    assert refused is not None and json.loads(refused)["error"]["code"] == -32022


def test_the_envelope_is_checked_in_one_place() -> None:
    """Its refusal's text is written once in the runtime (``server.stateless``)."""
    runtime = Path(mcpgen_runtime.__file__).parent
    holders = [
        p.name for p in runtime.rglob("*.py") if "must be an object carrying" in p.read_text()
    ]
    assert holders == ["stateless.py"]
    shell = runtime / "http"
    for path in shell.glob("*.py"):
        text = path.read_text()
        assert "HANDSHAKE_VERSIONS" not in text and "MODERN_VERSIONS" not in text, path.name


def _task_call(conn: ServerConnection, modern: bool) -> list[Any]:
    if modern:
        params = {"name": "job", "arguments": {"n": 3}, "_meta": meta(tasks=True)}
        return conn.receive_stateless(
            request("tools/call", params), routed("tools/call", params, "job")
        )
    params = {"name": "job", "arguments": {"n": 3}, "task": {"ttl": 60_000}}
    return conn.receive_stateless(request("tools/call", params), Routing("2025-11-25"))


@pytest.mark.parametrize("modern", [False, True])
def test_one_task_start_path(modern: bool) -> None:
    """A connection holding its tasks and one whose shell holds them start a task the
    same way: the handle answer and the ``Invoke`` come from ``task_created``."""
    inside = ServerConnection(APP, requestor="alice")
    handle, invoke = _task_call(inside, modern)
    assert isinstance(handle, SendFrame) and isinstance(invoke, Invoke)
    outside = ServerConnection(APP, defer_checks=True, requestor="alice", tasks_outside=True)
    [create] = _task_call(outside, modern)
    assert isinstance(create, CreateTask)
    assert (create.era, create.owner, create.checked, create.args) == (
        "modern" if modern else "legacy", "alice", False, {"n": 3},
    )  # fmt: skip
    assert create.ttl == (None if modern else 60_000)
    task = TaskTable().create("job", create.era, create.ttl, owner=create.owner)
    handle2, invoke2 = outside.task_created(create, task, (3,))
    assert isinstance(handle2, SendFrame) and isinstance(invoke2, Invoke)
    assert (invoke2.args, invoke2.task, invoke.args) == ((3,), task, (3,))
    shape = json.loads(handle.data)["result"]
    shape2 = json.loads(handle2.data)["result"]
    assert sorted(shape) == sorted(shape2)
    if not modern:
        assert handle2.data == result_response(1, {"task": task.wire()})


def test_tasks_in_the_shells_store_are_fetched_and_listed() -> None:
    conn = ServerConnection(APP, requestor="alice", tasks_listed=True, tasks_outside=True)
    task = TaskTable().create("job", "legacy", None, owner="alice")
    params = {"taskId": task.task_id}
    [fetch] = conn.receive_stateless(request("tasks/get", params), Routing("2025-11-25"))
    assert isinstance(fetch, FetchTask)
    assert (fetch.method, fetch.task_id) == ("tasks/get", task.task_id)
    answer, status = frame(conn.task_fetched(fetch, task))
    assert answer["result"]["taskId"] == task.task_id and status == 200
    # another requestor's task answers as an unknown one
    other = ServerConnection(APP, requestor="bob", tasks_outside=True)
    [fetch] = other.receive_stateless(request("tasks/get", params), Routing("2025-11-25"))
    answer, _ = frame(other.task_fetched(fetch, task))
    assert answer["error"]["code"] == -32602
    # tasks/list: a well-formed cursor goes to the store, any other is refused here
    conn = ServerConnection(APP, requestor="alice", tasks_listed=True, tasks_outside=True)
    [listing] = conn.receive_stateless(request("tasks/list", {}), Routing("2025-11-25"))
    assert isinstance(listing, ListTasks)
    assert (listing.era, listing.owner, listing.cursor) == ("legacy", "alice", None)
    conn = ServerConnection(APP, requestor="alice", tasks_listed=True, tasks_outside=True)
    answer, _ = frame(
        conn.receive_stateless(request("tasks/list", {"cursor": "junk"}), Routing("2025-11-25"))
    )
    assert answer["error"]["message"] == "Invalid params: unknown cursor"
