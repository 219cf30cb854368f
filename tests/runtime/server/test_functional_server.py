"""Functional tests of a generated server, driven through its sans-I/O core.

One small inline spec covers every callback shape, every ``returns`` type and
every error path of the runtime's error mapping (``_tools``); the package is built once per module, imported,
bound to a test implementation and driven with ``ServerConnection``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import (
    ALL_VERSIONS,
    RawServer,
    build_package,
    import_package,
    initialize_request,
)

PACKAGE = "fn_functional_mcp"
IMPL_MODULE = "fn_functional_impl"

SPEC = """\
mcpgen: 1
package: fn_functional_mcp
server:
  name: functional
  version: 0.3.0
  title: Functional
  instructions: A server for the functional tests.
tools:
  - name: pos
    description: positional shape
    parameters:
      - {name: a, type: integer}
      - {name: b, type: number}
      - {name: c, type: integer, default: 5}
      - {name: d, type: string, required: false}
      - {name: e, type: boolean, required: false}
    callback: positional
    returns: array

  - name: named
    description: named shape
    parameters:
      - {name: q, type: string}
      - {name: limit, type: integer, default: 10}
      - {name: flag, type: boolean, required: false}
      - {name: ratio, type: number, required: false}
    callback: named
    returns: object

  - name: struct
    title: Structured
    description: structured shape
    parameters:
      - {name: x, type: integer}
      - {name: mode, enum: [model, dict, bad_schema, not_a_dict], default: model}
    output_schema:
      type: object
      properties:
        x: {type: integer}
        label: {type: string}
      required: [x, label]
    hints: {read_only: true, open_world: false}
    task_support: optional
    icons:
      - {src: "https://example.com/i.png", mime_type: image/png, sizes: ["16x16"]}
    meta: {team: tests}

  - {name: ret_string, description: r, returns: string}
  - {name: ret_integer, description: r, returns: integer}
  - {name: ret_number, description: r, returns: number}
  - {name: ret_boolean, description: r, returns: boolean}
  - {name: ret_object, description: r, returns: object}
  - {name: ret_array, description: r, returns: array}
  - {name: ret_content, description: r, returns: content}
  - {name: ret_result, description: r, returns: result}

  - name: fail
    description: raises
    parameters:
      - {name: how, enum: [tool_error, crash]}

  - name: async_add
    description: async positional
    parameters:
      - {name: a, type: integer}
      - {name: b, type: integer}
    returns: integer
    async: true

  - name: async_struct
    description: async structured
    parameters:
      - {name: x, type: integer}
    output_schema:
      type: object
      properties: {double: {type: integer}}
      required: [double]
    async: true

  - name: slow
    description: sleeps longer than its timeout
    parameters:
      - {name: seconds, type: number}
    timeout: 0.2

  - name: async_slow
    description: awaits longer than its timeout
    parameters:
      - {name: seconds, type: number}
    timeout: 0.2
    async: true

  - name: async_fail
    description: async handler that raises
    parameters:
      - {name: how, enum: [tool_error, crash, bad_output]}
    output_schema:
      type: object
      properties: {ok: {type: boolean}}
      required: [ok]
    async: true
"""

IMPL = """\
from __future__ import annotations

import asyncio
import time

from fn_functional_mcp import FunctionalServer, ToolError
from fn_functional_mcp.models import StructOutput


class Impl(FunctionalServer):
    def __init__(self):
        self.calls = []
        self.values = {}

    def pos(self, a, b, c, d, e):
        self.calls.append(("pos", (a, b, c, d, e)))
        return [a, b, c, d, e]

    def named(self, args):
        self.calls.append(("named", dict(args)))
        return dict(args)

    def struct(self, args):
        self.calls.append(("struct", dict(args)))
        mode = args.get("mode", "model")
        if mode == "model":
            return StructOutput(x=args["x"], label="m")
        if mode == "dict":
            return {"x": args["x"], "label": "d"}
        if mode == "bad_schema":
            return {"x": "SECRET-not-an-int", "label": "d"}
        return ["SECRET-a-list"]

    def ret_string(self):
        return self.values["ret_string"]

    def ret_integer(self):
        return self.values["ret_integer"]

    def ret_number(self):
        return self.values["ret_number"]

    def ret_boolean(self):
        return self.values["ret_boolean"]

    def ret_object(self):
        return self.values["ret_object"]

    def ret_array(self):
        return self.values["ret_array"]

    def ret_content(self):
        return self.values["ret_content"]

    def ret_result(self):
        return self.values["ret_result"]

    def fail(self, how):
        if how == "tool_error":
            raise ToolError("x")
        raise RuntimeError("SECRET internal detail")

    async def async_add(self, a, b):
        await asyncio.sleep(0)
        return a + b

    async def async_struct(self, args):
        await asyncio.sleep(0)
        return {"double": args["x"] * 2}

    def slow(self, seconds):
        time.sleep(seconds)
        return "finished"

    async def async_slow(self, seconds):
        await asyncio.sleep(seconds)
        return "finished"

    async def async_fail(self, args):
        await asyncio.sleep(0)
        if args["how"] == "tool_error":
            raise ToolError("async x")
        if args["how"] == "crash":
            raise ValueError("SECRET async detail")
        return {"ok": "SECRET-not-a-boolean"}


class Incomplete(FunctionalServer):
    def pos(self, a, b, c, d, e):
        return []
"""


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("functional")
    gen = build_package(SPEC, tmp, PACKAGE)
    impl_dir = tmp / "impl"
    impl_dir.mkdir()
    (impl_dir / f"{IMPL_MODULE}.py").write_text(IMPL, encoding="utf-8")
    return gen, impl_dir


@pytest.fixture(scope="module")
def pkg(built: tuple[Path, Path]) -> Iterator[ModuleType]:
    gen, impl_dir = built
    sys.path.insert(0, str(impl_dir))
    try:
        with import_package(gen, PACKAGE) as module:
            yield module
    finally:
        sys.path.remove(str(impl_dir))
        sys.modules.pop(IMPL_MODULE, None)


@pytest.fixture(scope="module")
def impl_module(pkg: ModuleType) -> ModuleType:
    import importlib

    return importlib.import_module(IMPL_MODULE)


class Driver:
    """A ServerConnection plus the shell's job: run Invoke actions, parse frames."""

    def __init__(self, pkg: ModuleType, impl: Any) -> None:
        import importlib

        core = importlib.import_module("mcpgen_runtime.server.core")
        server = importlib.import_module(f"{pkg.__name__}.server")
        self.core = core
        self.impl = impl
        self.conn = core.ServerConnection(server.build_app(impl))
        self._id = 0

    def feed(self, line: bytes | str | dict[str, Any]) -> list[dict[str, Any]]:
        if isinstance(line, dict):
            line = json.dumps(line)
        replies = []
        for action in self.conn.receive(line):
            if isinstance(action, self.core.SendFrame):
                data = action.data
            else:
                tool = action.tool
                if tool.binding.is_async:
                    outcome = asyncio.run(tool.call_async(action.args))
                else:
                    outcome = tool.call_sync(action.args)
                data = self.conn.respond(action, outcome)
            assert data.endswith(b"\n") and data.count(b"\n") == 1
            replies.append(json.loads(data))
        return replies

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            message["params"] = params
        (reply,) = self.feed(message)
        assert reply["id"] == self._id
        return reply

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        (reply,) = self.feed(initialize_request(version, request_id="init"))
        assert self.feed({"jsonrpc": "2.0", "method": "notifications/initialized"}) == []
        return reply["result"]

    def call(self, name: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, **extra}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("tools/call", params)

    def result(self, name: str, arguments: Any = None) -> dict[str, Any]:
        reply = self.call(name, arguments)
        assert "result" in reply, reply
        return reply["result"]


@pytest.fixture
def drv(pkg: ModuleType, impl_module: ModuleType) -> Driver:
    driver = Driver(pkg, impl_module.Impl())
    driver.initialize()
    return driver


def text_of(result: dict[str, Any]) -> str:
    (block,) = result["content"]
    assert block["type"] == "text"
    return block["text"]


# --------------------------------------------------------------------------- callback shapes


def test_positional_gets_declaration_order_and_defaults(drv: Driver) -> None:
    result = drv.result("pos", {"e": True, "b": 1.5, "a": 2})  # order on the wire is irrelevant
    assert result["isError"] is False
    assert json.loads(text_of(result)) == [2, 1.5, 5, None, True]
    assert drv.impl.calls[-1] == ("pos", (2, 1.5, 5, None, True))
    drv.result("pos", {"a": 1, "b": 2, "c": 7, "d": "z"})
    assert drv.impl.calls[-1] == ("pos", (1, 2, 7, "z", None))


def test_named_gets_exactly_the_supplied_keys(drv: Driver) -> None:
    result = drv.result("named", {"q": "hi"})
    assert result["isError"] is False
    assert drv.impl.calls[-1] == ("named", {"q": "hi"})  # absent optionals stay absent
    assert json.loads(text_of(result)) == {"q": "hi"}
    drv.result("named", {"q": "a", "flag": False, "limit": 3})
    assert drv.impl.calls[-1] == ("named", {"q": "a", "flag": False, "limit": 3})


@pytest.mark.parametrize("mode", ["model", "dict"])
def test_structured_returns_model_or_dict(drv: Driver, mode: str) -> None:
    result = drv.result("struct", {"x": 4, "mode": mode})
    label = "m" if mode == "model" else "d"
    assert result["isError"] is False
    assert result["structuredContent"] == {"x": 4, "label": label}
    assert json.loads(text_of(result)) == {"x": 4, "label": label}
    assert drv.impl.calls[-1] == ("struct", {"x": 4, "mode": mode})


def test_structured_handler_gets_only_supplied_keys(drv: Driver) -> None:
    drv.result("struct", {"x": 1})
    assert drv.impl.calls[-1] == ("struct", {"x": 1})


# --------------------------------------------------------------------------- coercion


def test_strings_are_coerced_where_the_schema_says(drv: Driver) -> None:
    drv.result("pos", {"a": "3", "b": "2.5", "e": "true"})
    assert drv.impl.calls[-1] == ("pos", (3, 2.5, 5, None, True))
    args = drv.impl.calls[-1][1]
    assert type(args[0]) is int and type(args[1]) is float and args[4] is True
    drv.result("named", {"q": "s", "limit": "12", "flag": "false", "ratio": "0.25"})
    assert drv.impl.calls[-1] == ("named", {"q": "s", "limit": 12, "flag": False, "ratio": 0.25})


def test_string_parameter_is_not_coerced_from_a_number(drv: Driver) -> None:
    # coercion goes from strings only; a number where a string is due is an error
    result = drv.result("named", {"q": 5})
    assert result["isError"] is True
    assert "q" in text_of(result)


# --------------------------------------------------------------------------- returns


@pytest.mark.parametrize(
    ("tool", "value", "text"),
    [
        ("ret_string", "plain ✓ text", "plain ✓ text"),
        ("ret_integer", 42, "42"),
        ("ret_number", 2.5, "2.5"),
        ("ret_number", 3, "3"),
        ("ret_boolean", True, "true"),
        ("ret_boolean", False, "false"),
        ("ret_object", {"k": [1, "é"]}, None),
        ("ret_array", [1, {"a": None}], None),
    ],
)
def test_returns_conversion(drv: Driver, tool: str, value: Any, text: str | None) -> None:
    drv.impl.values[tool] = value
    result = drv.result(tool)
    assert result["isError"] is False
    assert "structuredContent" not in result
    got = text_of(result)
    if text is not None:
        assert got == text
    assert (got if tool == "ret_string" else json.loads(got)) == value


def test_returns_content_is_sent_as_is(drv: Driver) -> None:
    blocks = [
        {"type": "text", "text": "one"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    ]
    drv.impl.values["ret_content"] = blocks
    result = drv.result("ret_content")
    assert result == {"content": blocks, "isError": False}


def test_returns_result_is_sent_as_is(drv: Driver) -> None:
    """`returns: result` (what import writes for a tool without output schema): every
    block, structuredContent with no output schema to check it, and _meta, passed on."""
    value = {
        "content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        ],
        "structuredContent": {"n": 1},
        "_meta": {"k": "v"},
    }
    drv.impl.values["ret_result"] = value
    assert drv.result("ret_result") == {**value, "isError": False}


@pytest.mark.parametrize(
    ("tool", "value"),
    [
        ("ret_result", "text"),
        ("ret_result", {"content": "text"}),
        ("ret_result", {"content": [], "structuredContent": [1]}),
        ("ret_result", {"content": [], "isError": True}),
        ("ret_result", {"content": [], "other": 1}),
        ("ret_string", 5),
        ("ret_integer", "5"),
        ("ret_integer", True),
        ("ret_integer", 1.5),
        ("ret_number", "1.5"),
        ("ret_boolean", 1),
        ("ret_object", [1]),
        ("ret_array", {"a": 1}),
        ("ret_content", "text"),
        ("ret_content", [{"no": "type"}]),
    ],
)
def test_wrong_return_type_is_internal_error(
    drv: Driver, tool: str, value: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    drv.impl.values[tool] = value
    reply = drv.call(tool)
    assert "result" not in reply
    assert reply["error"]["code"] == -32603
    assert tool in reply["error"]["message"]
    assert tool in capsys.readouterr().err


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("bad_schema", "it does not match the tool's output schema"),
        ("not_a_dict", "it is not an object"),
    ],
)
def test_structured_output_failing_schema_is_a_tool_error(
    drv: Driver, mode: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ``isError`` result naming the tool, not JSON-RPC -32603 (which made
    the official SDK client raise instead of returning the tool's failure)."""
    reply = drv.call("struct", {"x": 1, "mode": mode})
    assert "error" not in reply
    assert reply["result"] == {
        "content": [
            {"type": "text", "text": f"Tool 'struct' produced an invalid result: {reason}."}
        ],
        "isError": True,
    }
    assert "SECRET" not in json.dumps(reply) and "label" not in json.dumps(reply)
    err = capsys.readouterr().err
    assert "mcpgen: tool 'struct':" in err  # the detail goes to stderr
    assert ("SECRET" in err) is (mode == "bad_schema")


# --------------------------------------------------------------------------- tool errors


def test_missing_required_argument(drv: Driver) -> None:
    result = drv.result("pos", {"a": 1})
    assert result["isError"] is True
    message = text_of(result)
    assert "'b'" in message and "missing" in message and "pos" in message, message
    assert drv.impl.calls == []


def test_invalid_argument(drv: Driver) -> None:
    result = drv.result("pos", {"a": "not-a-number", "b": 1})
    assert result["isError"] is True
    message = text_of(result)
    assert "a:" in message and "integer" in message, message
    assert "not-a-number" in message  # what came
    assert drv.impl.calls == []


def test_invalid_enum_argument(drv: Driver) -> None:
    result = drv.result("struct", {"x": 1, "mode": "nope"})
    assert result["isError"] is True
    assert "mode" in text_of(result)


def test_unknown_argument(drv: Driver) -> None:
    result = drv.result("named", {"q": "x", "bogus_arg": 1})
    assert result["isError"] is True
    assert "bogus_arg" in text_of(result)
    assert drv.impl.calls == []


def test_tool_error_sends_its_own_message(drv: Driver) -> None:
    result = drv.result("fail", {"how": "tool_error"})
    assert result == {"content": [{"type": "text", "text": "x"}], "isError": True}


def test_other_exception_names_tool_not_text(
    drv: Driver, capsys: pytest.CaptureFixture[str]
) -> None:
    result = drv.result("fail", {"how": "crash"})
    assert result["isError"] is True
    message = text_of(result)
    assert "fail" in message
    assert "SECRET" not in message and "RuntimeError" not in message
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: SECRET internal detail" in err


# --------------------------------------------------------------------------- protocol errors


def test_unknown_tool(drv: Driver) -> None:
    reply = drv.call("no_such_tool", {})
    assert reply["error"]["code"] == -32602
    assert "no_such_tool" in reply["error"]["message"]


@pytest.mark.parametrize(
    "params",
    [
        {"arguments": {}},
        {"name": 5, "arguments": {}},
        {"name": "pos", "arguments": [1, 2]},
        {"name": "pos", "arguments": "a=1"},
    ],
)
def test_malformed_tools_call(drv: Driver, params: dict[str, Any]) -> None:
    reply = drv.request("tools/call", params)
    assert reply["error"]["code"] == -32602


def test_arguments_may_be_omitted(drv: Driver) -> None:
    drv.impl.values["ret_integer"] = 1
    assert drv.result("ret_integer")["isError"] is False
    reply = drv.call("ret_integer", None)
    assert reply["result"]["content"][0]["text"] == "1"


def test_unknown_method(drv: Driver) -> None:
    reply = drv.request("no/such/method", {})
    assert reply["error"]["code"] == -32601


@pytest.mark.parametrize(
    "line", [b'{"jsonrpc":"2.0","id":5,"method":"tools/list"\n', b"not json\n"]
)
def test_parse_error(drv: Driver, line: bytes) -> None:
    (reply,) = drv.feed(line)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700


def test_ping(pkg: ModuleType, impl_module: ModuleType) -> None:
    driver = Driver(pkg, impl_module.Impl())
    # ping is answered before and after initialize
    assert driver.request("ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    driver.initialize()
    assert driver.request("ping", {})["result"] == {}


def test_notifications_get_no_reply(drv: Driver) -> None:
    assert drv.feed({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}}) == []


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_version_is_echoed(pkg: ModuleType, impl_module: ModuleType, version: str) -> None:
    driver = Driver(pkg, impl_module.Impl())
    result = driver.initialize(version)
    assert result["protocolVersion"] == version
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["serverInfo"]["name"] == "functional"
    assert result["serverInfo"]["version"] == "0.3.0"
    assert result["instructions"] == "A server for the functional tests."


@pytest.mark.parametrize("version", ["1900-01-01", "2026-07-28", "", None, 20251125])
def test_unknown_version_gets_counter_offer(
    pkg: ModuleType, impl_module: ModuleType, version: Any
) -> None:
    driver = Driver(pkg, impl_module.Impl())
    assert driver.initialize(version)["protocolVersion"] == "2025-11-25"


# Fields each revision defines for a Tool (docs/architecture.md), written out independently.
_FIELDS = {
    "2024-11-05": {"name", "description", "inputSchema"},
    "2025-03-26": {"name", "description", "inputSchema", "annotations"},
    "2025-06-18": {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
    },
    "2025-11-25": {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
        "icons",
        "execution",
    },
}


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_tools_list_is_filtered_per_revision(
    pkg: ModuleType, impl_module: ModuleType, version: str
) -> None:
    driver = Driver(pkg, impl_module.Impl())
    driver.initialize(version)
    reply = driver.request("tools/list", {})
    tools = reply["result"]["tools"]
    assert "nextCursor" not in reply["result"]
    expected = [{k: v for k, v in d.items() if k in _FIELDS[version]} for d in pkg.contract.TOOLS]
    assert tools == expected
    struct = next(t for t in tools if t["name"] == "struct")
    assert ("execution" in struct) == (version == "2025-11-25")
    assert ("icons" in struct) == (version == "2025-11-25")
    assert ("title" in struct) == (version in ("2025-06-18", "2025-11-25"))
    assert ("outputSchema" in struct) == (version in ("2025-06-18", "2025-11-25"))
    assert ("annotations" in struct) == (version != "2024-11-05")
    if version == "2025-11-25":
        assert struct["execution"] == {"taskSupport": "optional"}
        assert struct["icons"] == [
            {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["16x16"]}
        ]
        assert struct["_meta"] == {"team": "tests"}
        assert struct["annotations"] == {
            "title": "Structured",
            "readOnlyHint": True,
            "openWorldHint": False,
        }


def test_tools_list_published_schemas(pkg: ModuleType) -> None:
    pos = next(d for d in pkg.contract.TOOLS if d["name"] == "pos")
    assert list(pos["inputSchema"]["properties"]) == ["a", "b", "c", "d", "e"]
    assert pos["inputSchema"]["required"] == ["a", "b"]
    assert pos["inputSchema"]["additionalProperties"] is False
    ret = next(d for d in pkg.contract.TOOLS if d["name"] == "ret_string")
    assert "required" not in ret["inputSchema"]


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_structured_content_per_revision(
    pkg: ModuleType, impl_module: ModuleType, version: str
) -> None:
    driver = Driver(pkg, impl_module.Impl())
    driver.initialize(version)
    result = driver.result("struct", {"x": 2, "mode": "dict"})
    assert json.loads(text_of(result)) == {"x": 2, "label": "d"}
    if version in ("2025-06-18", "2025-11-25"):
        assert result["structuredContent"] == {"x": 2, "label": "d"}
    else:
        assert "structuredContent" not in result


def test_tools_before_initialize_refused(pkg: ModuleType, impl_module: ModuleType) -> None:
    driver = Driver(pkg, impl_module.Impl())
    reply = driver.request("tools/list", {})
    assert "error" in reply
    reply = driver.call("pos", {"a": 1, "b": 2})
    assert "error" in reply


# --------------------------------------------------------------------------- start-up


def test_incomplete_implementation_refused(pkg: ModuleType) -> None:
    class Partial:
        def pos(self, a: Any, b: Any, c: Any, d: Any, e: Any) -> list[Any]:
            return []

    with pytest.raises(TypeError) as info:
        pkg.server.build_app(Partial())
    message = str(info.value)
    for method in ("named", "struct", "fail", "async_add", "slow", "ret_content"):
        assert method in message
    assert "pos" not in message.replace("positional", "")


def test_incomplete_implementation_refused_by_main(built: tuple[Path, Path]) -> None:
    gen, impl_dir = built
    server = RawServer(PACKAGE, f"{IMPL_MODULE}:Incomplete", pythonpath=[gen, impl_dir])
    code = server.close(expect_code=None)
    assert code != 0
    err = server.stderr
    assert "named" in err and "struct" in err and "slow" in err
    assert server.raw_lines == []


# --------------------------------------------------------------------------- async


def test_async_handlers(drv: Driver) -> None:
    result = drv.result("async_add", {"a": "2", "b": 3})
    assert text_of(result) == "5"
    result = drv.result("async_struct", {"x": 21})
    assert result["structuredContent"] == {"double": 42}
    assert json.loads(text_of(result)) == {"double": 42}


def test_async_tool_through_call_async_directly(pkg: ModuleType, impl_module: ModuleType) -> None:
    app = pkg.server.build_app(impl_module.Impl())
    tool = app.tools["async_add"]
    args = tool.check_arguments({"a": 1, "b": "1"})
    assert args == (1, 1)
    outcome = asyncio.run(tool.call_async(args))
    assert outcome.result == {"content": [{"type": "text", "text": "2"}], "isError": False}


# --------------------------------------------------------------------------- timeout (stdio)


def test_sync_timeout_through_stdio(built: tuple[Path, Path]) -> None:
    gen, impl_dir = built
    with RawServer(PACKAGE, f"{IMPL_MODULE}:Impl", pythonpath=[gen, impl_dir]) as server:
        server.handshake()
        started = time.perf_counter()
        reply = server.call("slow", {"seconds": 2})
        elapsed = time.perf_counter() - started
        assert elapsed < 1.5, elapsed
        result = reply["result"]
        assert result["isError"] is True
        message = result["content"][0]["text"]
        assert "slow" in message and "timed out" in message
        # the server keeps serving while the abandoned worker sleeps on
        assert server.request("ping")["result"] == {}
        fast = server.call("slow", {"seconds": 0})
        assert fast["result"] == {
            "content": [{"type": "text", "text": "finished"}],
            "isError": False,
        }
        # stdin EOF: the server exits without waiting for the abandoned handler
        started = time.perf_counter()
        server.close()
        assert time.perf_counter() - started < 1.5


def test_timed_call_in_flight_at_eof_is_answered_then_exit(built: tuple[Path, Path]) -> None:
    gen, impl_dir = built
    with RawServer(PACKAGE, f"{IMPL_MODULE}:Impl", pythonpath=[gen, impl_dir]) as server:
        server.handshake()
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 30}},
            }
        )
        started = time.perf_counter()
        server.close()  # EOF right away; the handler would sleep 30 s
        assert time.perf_counter() - started < 3
        (line,) = server.raw_lines[1:]
        reply = json.loads(line)
        assert reply["id"] == 7 and "timed out" in reply["result"]["content"][0]["text"]


def test_async_timeout_through_stdio(built: tuple[Path, Path]) -> None:
    gen, impl_dir = built
    with RawServer(PACKAGE, f"{IMPL_MODULE}:Impl", pythonpath=[gen, impl_dir]) as server:
        server.handshake()
        started = time.perf_counter()
        reply = server.call("async_slow", {"seconds": 5})
        assert time.perf_counter() - started < 1.5
        assert reply["result"]["isError"] is True
        assert "async_slow" in reply["result"]["content"][0]["text"]
        assert "timed out" in reply["result"]["content"][0]["text"]
        assert server.call("async_slow", {"seconds": 0})["result"]["isError"] is False
        server.close()  # the abandoned coroutine was cancelled: no 5 s wait


def test_impl_source_is_valid() -> None:
    compile(textwrap.dedent(IMPL), IMPL_MODULE, "exec")


# --------------------------------------------------------------------------- more edges


def test_async_error_paths(drv: Driver, capsys: pytest.CaptureFixture[str]) -> None:
    assert drv.result("async_fail", {"how": "tool_error"}) == {
        "content": [{"type": "text", "text": "async x"}],
        "isError": True,
    }
    crashed = drv.result("async_fail", {"how": "crash"})
    assert crashed["isError"] is True
    assert "async_fail" in text_of(crashed) and "SECRET" not in text_of(crashed)
    bad = drv.result("async_fail", {"how": "bad_output"})
    assert bad["isError"] is True and "SECRET" not in json.dumps(bad)
    assert text_of(bad) == (
        "Tool 'async_fail' produced an invalid result: it does not match the tool's output schema."
    )
    err = capsys.readouterr().err
    assert "ValueError: SECRET async detail" in err


@pytest.mark.parametrize(
    ("tool", "value"),
    [
        ("ret_number", float("nan")),
        ("ret_number", float("inf")),
        ("ret_object", {"k": {1, 2}}),
        ("ret_array", [object()]),
        ("ret_content", [{"type": "text", "text": object()}]),
    ],
)
def test_unserialisable_result_is_internal_error(
    drv: Driver, tool: str, value: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    drv.impl.values[tool] = value
    reply = drv.call(tool)
    assert reply["error"]["code"] == -32603
    assert "JSON" in capsys.readouterr().err


def test_unicode_round_trips_in_one_frame(drv: Driver) -> None:
    odd = 'a\u2028b\u2029c\x00d"\\\n🌞'
    drv.impl.values["ret_string"] = odd
    (frame,) = [
        a
        for a in drv.conn.receive(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "ret_string"},
                }
            )
        )
    ]
    outcome = frame.tool.call_sync(frame.args)
    data = drv.conn.respond(frame, outcome)
    assert data.count(b"\n") == 1 and data.endswith(b"\n")
    assert json.loads(data)["result"]["content"][0]["text"] == odd


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        b'"a string"',
        b"42",
        b"[" * 100_000 + b"]" * 100_000,
    ],
)
def test_invalid_requests_get_32600_with_null_id(drv: Driver, line: bytes) -> None:
    (reply,) = drv.feed(line)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"1.0","id":7,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":7}',
        b'{"id":7,"method":"ping"}',
    ],
)
def test_invalid_requests_with_id_get_32600(drv: Driver, line: bytes) -> None:
    (reply,) = drv.feed(line)
    assert reply["id"] == 7 and reply["error"]["code"] == -32600


def test_invalid_utf8_is_a_parse_error(drv: Driver) -> None:
    (reply,) = drv.feed(b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}\n')
    assert reply == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": reply["error"]["message"]},
    }


def test_responses_and_blank_lines_get_no_reply(drv: Driver) -> None:
    assert drv.feed(b'{"jsonrpc":"2.0","id":3,"result":{}}') == []
    assert drv.feed(b'{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}') == []
    assert drv.feed(b"   \n") == []


def test_params_must_be_an_object(drv: Driver) -> None:
    (reply,) = drv.feed(b'{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}')
    assert reply["error"]["code"] == -32602


def test_tools_list_cursor_and_null_params(drv: Driver) -> None:
    assert drv.request("tools/list", {"cursor": "abc"})["error"]["code"] == -32602
    assert len(drv.request("tools/list", None)["result"]["tools"]) == len(drv.conn.app.tools)


def test_batch_accepted_only_at_2025_03_26(pkg: ModuleType, impl_module: ModuleType) -> None:
    driver = Driver(pkg, impl_module.Impl())
    driver.initialize("2025-03-26")
    replies = driver.feed(
        json.dumps(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "async_add", "arguments": {"a": 1, "b": 2}},
                },
                {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}},
                {"jsonrpc": "2.0", "id": 4, "method": "no/such"},
            ]
        )
    )
    by_id = {r["id"]: r for r in replies}
    assert set(by_id) == {1, 2, 3, 4}
    assert by_id[1]["result"] == {}
    assert by_id[2]["result"]["content"][0]["text"] == "3"
    assert by_id[3]["error"]["code"] == -32600
    assert by_id[4]["error"]["code"] == -32601
    (empty,) = driver.feed(b"[]")
    assert empty["error"]["code"] == -32600
    for version in ("2024-11-05", "2025-06-18", "2025-11-25"):
        other = Driver(pkg, impl_module.Impl())
        other.initialize(version)
        (reply,) = other.feed(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
        assert reply["id"] is None and reply["error"]["code"] == -32600


def test_server_info_title_only_from_2025_06_18(pkg: ModuleType, impl_module: ModuleType) -> None:
    for version in ALL_VERSIONS:
        info = Driver(pkg, impl_module.Impl()).initialize(version)["serverInfo"]
        assert ("title" in info) == (version in ("2025-06-18", "2025-11-25")), version


def test_integral_float_reaches_integer_parameter_as_int(drv: Driver) -> None:
    drv.result("pos", {"a": 1.0, "b": 1})
    assert type(drv.impl.calls[-1][1][0]) is int
