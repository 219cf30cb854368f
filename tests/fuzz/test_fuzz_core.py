"""Fuzzing the sans-I/O server core: ``ServerConnection.receive`` fed arbitrary
bytes, arbitrary JSON and JSON-RPC-shaped messages (random methods, params, ids,
envelopes, batches), in sequences that reach every era and state.

Properties, for every line and every completed call:
- ``receive`` and ``complete`` never raise;
- every frame is one line of strict UTF-8 JSON: a JSON-RPC 2.0 response whose id
  is one the client sent (or null), or a notification the server may send;
- a notification or a response from the client is never answered;
- a request with a valid id is answered with that id, an invalid id with null.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

from fuzz_settings import fuzz_settings
from hypothesis import event, given
from hypothesis import strategies as st

from mcpgen_runtime.server.context import Context
from mcpgen_runtime.server.core import Cancel, Invoke, SendFrame, ServerConnection
from mcpgen_runtime.server.tools import App, Binding, CallOutcome

# --------------------------------------------------------------------------- the app


class Impl:
    def echo(self, text: str) -> str:
        return text

    def add(self, a: int, b: int) -> int:
        return a + b

    def search(self, args: dict[str, Any]) -> Any:
        return dict(args)

    def report(self, args: dict[str, Any]) -> Any:
        return {"n": args.get("n", 0), "label": "x"}

    async def later(self, x: Any) -> str:
        await asyncio.sleep(0)
        return "later"

    def crash(self, how: Any) -> str:
        if how == "tool":
            from mcpgen_runtime._errors import ToolError

            raise ToolError("tool said no")
        raise RuntimeError("boom")

    def chatty(self, n: int, ctx: Context) -> str:
        ctx.report_progress(1, 2, "half")
        ctx.info({"n": n})
        ctx.report_progress(2, 2, "done")
        return "chatted"

    def job(self, n: int) -> int:
        return n

    def wrong(self) -> Any:
        return {1, 2}  # not JSON: -32603


OBJ = {"type": "object"}
DESCRIPTORS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "inputSchema": {
            **OBJ,
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
    {
        "name": "add",
        "inputSchema": {
            **OBJ,
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search",
        "inputSchema": {
            **OBJ,
            "properties": {
                "q": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
            },
            "required": ["q"],
        },
    },
    {
        "name": "report",
        "inputSchema": {**OBJ, "properties": {"n": {"type": "number"}}},
        "outputSchema": {
            **OBJ,
            "properties": {"n": {"type": "number"}, "label": {"type": "string"}},
            "required": ["n", "label"],
        },
        "execution": {"taskSupport": "optional"},
    },
    {"name": "later", "inputSchema": {**OBJ, "properties": {"x": {}}}},
    {"name": "crash", "inputSchema": {**OBJ, "properties": {"how": {}}}},
    {
        "name": "chatty",
        "inputSchema": {**OBJ, "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    {
        "name": "job",
        "inputSchema": {**OBJ, "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "execution": {"taskSupport": "required"},
    },
    {"name": "wrong", "inputSchema": {**OBJ, "additionalProperties": False}},
]
BINDINGS = [
    Binding("echo", "echo", "positional", ("text",), (None,)),
    Binding("add", "add", "positional", ("a", "b"), (None, None), returns="integer"),
    Binding("search", "search", "named", returns="object"),
    Binding("report", "report", "structured", task_support="optional"),
    Binding("later", "later", "positional", ("x",), (None,), is_async=True, timeout=5),
    Binding("crash", "crash", "positional", ("how",), (None,)),
    Binding("chatty", "chatty", "positional", ("n",), (None,)),
    Binding(
        "job", "job", "positional", ("n",), (None,), returns="integer", task_support="required"
    ),
    Binding("wrong", "wrong", "named", returns="object"),
]
APP = App.build(
    Impl(),
    DESCRIPTORS,
    BINDINGS,
    server_info={"name": "fuzz", "version": "1"},
    instructions="fuzz me",
)
TOOL_NAMES = [d["name"] for d in DESCRIPTORS]

# --------------------------------------------------------------------------- strategies

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
TASKS = "io.modelcontextprotocol/tasks"
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01"]
METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "server/discover",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "resources/list",
    "",
    "tools/call/",
]
MISSING = object()

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
request_ids = st.one_of(
    st.integers(-(2**64), 2**64),
    st.text(max_size=6),
    st.sampled_from([0, 1, 2, 3, "1", "a"]),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
versions = st.sampled_from(VERSIONS) | st.text(max_size=10) | json_values
levels = st.sampled_from(["debug", "info", "error", "emergency", "loud"]) | json_values
metas = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            META_VERSION: versions,
            META_CAPS: st.just({}) | st.just({"extensions": {TASKS: {}}}) | json_values,
            "io.modelcontextprotocol/logLevel": levels,
            "progressToken": st.integers() | st.text(max_size=5) | json_values,
        },
    ),
)
tool_arguments = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "text": st.text(max_size=20) | json_values,
            "a": st.integers() | st.text(max_size=5),
            "b": st.integers() | st.sampled_from(["3", "x", "1.0", "1e3"]),
            "q": st.text(max_size=5),
            "limit": st.integers() | st.text(max_size=3),
            "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3) | json_values,
            "n": st.integers() | st.floats() | st.text(max_size=4),
            "x": json_values,
            "how": st.sampled_from(["tool", "crash"]),
            "extra": json_values,
        },
    ),
)
params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(TOOL_NAMES) | st.text(max_size=8) | json_values,
            "arguments": tool_arguments,
            "_meta": metas,
            "protocolVersion": versions,
            "capabilities": json_values,
            "clientInfo": json_values,
            "cursor": json_values,
            "task": st.just({}) | st.fixed_dictionaries({"ttl": json_values}) | json_values,
            "taskId": st.text(max_size=8) | json_values,
            "requestId": request_ids,
            "level": levels,
        },
    ),
)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    """A JSON-RPC-shaped value: mostly objects with the usual members, each of
    which may be missing or of the wrong type."""
    message: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        message["jsonrpc"] = "2.0"
    elif draw(st.booleans()):
        message["jsonrpc"] = draw(json_values)
    if draw(st.integers(0, 4)):
        message["id"] = draw(request_ids)
    shape = draw(st.integers(0, 9))
    if shape <= 6:
        message["method"] = draw(st.sampled_from(METHODS) | st.text(max_size=10))
        if draw(st.booleans()):
            message["params"] = draw(params)
    elif shape == 7:
        message["method"] = draw(json_values)
    elif shape == 8:
        message["result"] = draw(json_values)
    else:
        message["error"] = draw(
            st.fixed_dictionaries({"code": st.integers(), "message": st.text(max_size=5)})
            | json_values
        )
    if draw(st.integers(0, 9)) == 0:
        message[draw(st.text(max_size=5))] = draw(json_values)
    return message


good_meta = st.fixed_dictionaries(
    {
        META_VERSION: st.just("2026-07-28"),
        META_CAPS: st.sampled_from([{}, {"extensions": {TASKS: {}}}]),
    },
    optional={
        "progressToken": st.integers(0, 3) | st.text(max_size=3),
        "io.modelcontextprotocol/logLevel": st.sampled_from(["debug", "error"]),
    },
)
good_arguments = st.fixed_dictionaries(
    {},
    optional={
        "text": st.text(max_size=10),
        "a": st.integers(-5, 5) | st.just("7"),
        "b": st.integers(-5, 5),
        "q": st.text(min_size=1, max_size=3),
        "n": st.integers(0, 3),
        "limit": st.integers(0, 3),
        "how": st.sampled_from(["tool", "crash"]),
        "x": scalars,
    },
)
small = st.integers(-3, 3)
TOOL_ARGUMENTS = {
    "echo": st.fixed_dictionaries({"text": st.text(max_size=10)}),
    "add": st.fixed_dictionaries({"a": small | st.just("7"), "b": small}),
    "search": st.fixed_dictionaries(
        {"q": st.text(min_size=1, max_size=3)}, optional={"limit": small, "tags": st.just(["a"])}
    ),
    "report": st.fixed_dictionaries({}, optional={"n": small | st.floats(-1, 1)}),
    "later": st.fixed_dictionaries({}, optional={"x": scalars}),
    "crash": st.fixed_dictionaries({"how": st.sampled_from(["tool", "crash"])}),
    "chatty": st.fixed_dictionaries({"n": small}),
    "job": st.fixed_dictionaries({"n": small}),
    "wrong": st.just({}),
}
REQUEST_METHODS = ["tools/call"] * 6 + [
    "tools/list",
    "ping",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
    "logging/setLevel",
    "initialize",
    "server/discover",
]


@st.composite
def requests(draw: st.DrawFn) -> Any:
    """A plausible request (or a cancellation): valid members, valid-looking values,
    so that calls really run, tasks are created, polled and cancelled. ``"@task"``
    stands for the id of a task the server created (the driver substitutes it)."""
    # (st.integers draws its bounds often: the common path is not a bound here)
    if draw(st.sampled_from([False] * 7 + [True])):
        return {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": draw(st.integers(0, 12)), "reason": "fuzz"},
        }
    method = draw(st.sampled_from(REQUEST_METHODS))
    body: dict[str, Any] = {}
    if method == "tools/call":
        body["name"] = name = draw(st.sampled_from(TOOL_NAMES))
        fitting = draw(st.sampled_from([True, True, True, False]))
        body["arguments"] = draw(TOOL_ARGUMENTS[name] if fitting else good_arguments)
        if draw(st.booleans()):
            body["task"] = draw(
                st.just({}) | st.fixed_dictionaries({"ttl": st.integers(-5, 10**6)})
            )
    elif method.startswith("tasks/") and method != "tasks/list":
        body["taskId"] = draw(st.just("@task") | st.text(max_size=4))
    elif method == "logging/setLevel":
        body["level"] = draw(levels)
    elif method == "initialize":
        body.update(
            protocolVersion=draw(st.sampled_from(VERSIONS)),
            capabilities={},
            clientInfo={"name": "fuzz", "version": "0"},
        )
    choice = draw(st.sampled_from([2, 2, 2, 0, 1, 3]))
    if choice == 0:
        body["_meta"] = draw(good_meta)  # an envelope whatever the era
    elif choice == 1:
        body["_meta"] = {"progressToken": draw(st.integers(0, 3))}
    elif choice == 2:
        body["_meta"] = FIT_ERA  # the driver fits it to the connection's era
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.integers(0, 12)), "method": method}
    if body or draw(st.booleans()):
        message["params"] = body
    return message


FIT_ERA = "@fit-era"
MODERN_META = {
    META_VERSION: "2026-07-28",
    META_CAPS: {"extensions": {TASKS: {}}},
    "progressToken": 1,
    "io.modelcontextprotocol/logLevel": "debug",
}


def encode(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


def initialize(version: Any) -> bytes:
    return encode(
        {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "0"},
            },
        }
    )


openings = st.one_of(
    st.just([]),
    st.sampled_from(VERSIONS[:4]).map(lambda v: [initialize(v)]),
    st.sampled_from(VERSIONS[:4]).map(lambda v: [initialize(v)]),
    st.sampled_from(VERSIONS[:4]).map(
        lambda v: [initialize(v), b'{"jsonrpc":"2.0","method":"notifications/initialized"}']
    ),
    st.just(
        [
            encode(
                {
                    "jsonrpc": "2.0",
                    "id": "d",
                    "method": "server/discover",
                    "params": {
                        "_meta": {
                            META_VERSION: "2026-07-28",
                            META_CAPS: {"extensions": {TASKS: {}}},
                        }
                    },
                }
            )
        ]
    ),
)
LINE_KINDS: dict[str, tuple[int, st.SearchStrategy[bytes]]] = {  # weight, strategy
    "request": (12, requests().map(encode)),  # most lines are plausible: calls really run
    "batch": (1, st.lists(requests(), min_size=1, max_size=4).map(encode)),
    "wild batch": (1, st.lists(messages(), max_size=3).map(encode)),
    "wild message": (3, messages().map(encode)),
    "json": (1, json_values.map(encode)),
    "bytes": (1, st.binary(max_size=64)),
    "truncated": (1, requests().map(lambda m: encode(m)[: len(encode(m)) // 2])),
    "special": (
        1,
        st.sampled_from([b"", b"\n", b"  \r\n", b"[]", b"{}", b"null", b"\xef\xbb\xbf{}", b"NaN"]),
    ),
}
lines = st.sampled_from(
    [kind for kind, (weight, _) in LINE_KINDS.items() for _ in range(weight)]
).flatmap(lambda kind: LINE_KINDS[kind][1])

# --------------------------------------------------------------------------- checking

SERVER_NOTIFICATIONS = {
    "notifications/progress",
    "notifications/message",
    "notifications/tasks/status",
}
ERROR_CODES = {-32700, -32600, -32601, -32602, -32603, -32021, -32022}


def valid_id(value: Any) -> bool:
    return type(value) in (str, int)


class Checker:
    def __init__(self) -> None:
        self.ids: list[Any] = []  # every valid id the client used so far

    def frame(self, data: bytes) -> dict[str, Any]:
        assert isinstance(data, bytes) and data.endswith(b"\n") and data.count(b"\n") == 1, data
        message = json.loads(data.decode("utf-8"))  # strict UTF-8, valid JSON
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0", message
        if "method" in message:
            assert message["method"] in SERVER_NOTIFICATIONS and "id" not in message, message
            return message
        assert "id" in message and (("result" in message) != ("error" in message)), message
        assert message["id"] is None or any(
            message["id"] == i and type(message["id"]) is type(i) for i in self.ids
        ), message
        if "error" in message:
            error = message["error"]
            assert error["code"] in ERROR_CODES and isinstance(error["message"], str), message
        else:
            assert isinstance(message["result"], dict), message
        return message


def parsed(line: bytes) -> Any:
    """The message a line holds on the wire: UTF-8 JSON (a leading BOM and encoded
    lone surrogates tolerated). Not ``json.loads(bytes)``: it would also read
    UTF-16 and UTF-32, which MCP never sends."""
    try:
        return json.loads(line.decode("utf-8-sig", "surrogatepass"))
    except (ValueError, RecursionError):
        return MISSING


def run(lines_in: list[bytes], defer: list[bool]) -> None:
    checker = Checker()
    emitted: list[bytes] = []
    connection = ServerConnection(APP, emit=emitted.append)
    pending: list[Invoke] = []
    choices = iter(defer)

    def finish(invoke: Invoke) -> None:
        tool = invoke.tool
        event(f"ran {tool.name}{' as a task' if invoke.task else ''}")
        if tool.binding.is_async:
            outcome: CallOutcome = asyncio.run(tool.call_async(invoke.args, invoke.context))
        else:
            outcome = tool.call_sync(invoke.args, invoke.context)
        for data in connection.complete(invoke, outcome):
            reply = checker.frame(data)
            if "id" in reply and reply["id"] is not None and invoke.task is None:
                assert reply["id"] == invoke.request_id
        for data in emitted:
            checker.frame(data)
        emitted.clear()

    for line in lines_in:
        tasks = connection.tasks.all()
        if FIT_ERA.encode() in line:
            meta = MODERN_META if connection.era == "modern" else {"progressToken": 2}
            line = line.replace(json.dumps(FIT_ERA).encode(), json.dumps(meta).encode())
        if b'"@task"' in line and tasks:
            line = line.replace(
                b'"@task"', json.dumps(tasks[len(line) % len(tasks)].task_id).encode()
            )
        value = parsed(line)
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            if isinstance(entry, dict) and "id" in entry and valid_id(entry["id"]):
                checker.ids.append(entry["id"])
        actions = connection.receive(line)
        sends = [a for a in actions if isinstance(a, SendFrame)]
        replies = [checker.frame(a.data) for a in sends]
        for reply in replies:
            event(f"answer {reply['error']['code']}" if "error" in reply else "answer result")
        if isinstance(value, dict):
            is_notification = "id" not in value
            is_response = (
                "id" in value and "method" not in value and ("result" in value or "error" in value)
            )
            if is_notification or is_response:
                assert not replies, (value, replies)  # never answered
            elif replies and "id" in value:
                answers = [r for r in replies if "method" not in r]
                expected = value["id"] if valid_id(value["id"]) else None
                assert any(r["id"] == expected for r in answers) or not answers, (value, replies)
        elif isinstance(value, list):
            answers = [r for r in replies if "method" not in r]
            if connection.version != "2025-03-26":
                assert [(r["id"], r["error"]["code"]) for r in answers] == [(None, -32600)]
            else:
                askers = [
                    e["id"]
                    for e in value
                    if isinstance(e, dict)
                    and "id" in e
                    and not ("method" not in e and ("result" in e or "error" in e))
                ]
                silent = all(
                    isinstance(e, dict)
                    and ("id" not in e or ("method" not in e and ("result" in e or "error" in e)))
                    for e in value
                )
                if silent and value:  # only notifications and responses: no answer at all
                    assert not answers, (value, replies)
                for reply in answers:
                    assert reply["id"] is None or reply["id"] in askers, (value, reply)
        elif value is MISSING and line.strip():
            assert [r["error"]["code"] for r in replies] in ([-32700], [-32600]), (line, replies)
        elif not isinstance(value, list) and value is not MISSING:
            assert [r["error"]["code"] for r in replies] == [-32600], (value, replies)
            assert replies[0]["id"] is None
        for action in actions:
            assert isinstance(action, (SendFrame, Invoke, Cancel)), action
            if isinstance(action, Invoke):
                pending.append(action)
        # run some calls now, leave others in flight (cancellations and task
        # methods then meet running calls)
        keep = []
        for invoke in pending:
            if next(choices, True):
                finish(invoke)
            else:
                keep.append(invoke)
        pending = keep
    for invoke in pending:
        finish(invoke)


@fuzz_settings(weight=1.0)
@given(opening=openings, body=st.lists(lines, max_size=12), defer=st.lists(st.booleans()))
def test_receive_never_raises_and_answers_well(
    opening: list[bytes], body: list[bytes], defer: list[bool]
) -> None:
    with contextlib.redirect_stderr(io.StringIO()):  # tracebacks of the crash tool
        run(opening + body, defer)


@fuzz_settings(weight=0.5)
@given(data=st.binary(max_size=512))
def test_arbitrary_bytes(data: bytes) -> None:
    checker = Checker()
    connection = ServerConnection(APP)
    for line in data.split(b"\n"):
        for action in connection.receive(line):
            assert isinstance(action, SendFrame), action  # nothing parseable asks for a call
            reply = checker.frame(action.data)
            assert reply["id"] is None and reply["error"]["code"] in (-32700, -32600)


@fuzz_settings(weight=0.5)
@given(value=json_values, version=st.sampled_from(VERSIONS[:4]))
def test_arbitrary_json_after_the_handshake(value: Any, version: str) -> None:
    checker = Checker()
    connection = ServerConnection(APP)
    checker.ids.append("init")
    (answer,) = connection.receive(initialize(version))
    checker.frame(answer.data)
    for entry in value if isinstance(value, list) else [value]:
        if isinstance(entry, dict) and valid_id(entry.get("id")):
            checker.ids.append(entry["id"])
    for action in connection.receive(encode(value)):
        assert isinstance(action, SendFrame)
        checker.frame(action.data)
