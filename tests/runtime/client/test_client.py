"""Tests of the client sessions against real peers: a server on the official SDK,
the published ``mcp-server-time``, misbehaving stub servers and in-process fakes."""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

import pytest

import mcpgen_runtime
from mcpgen_runtime import AsyncSession, ListedTool, Session, convert_result
from mcpgen_runtime._errors import ContractMismatch, ProtocolError, ServerExited, Timeout, ToolError
from mcpgen_runtime.client.core import Notification
from mcpgen_runtime.protocol.fingerprint import tool_fingerprint

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PY = sys.executable
SDK_SERVER = [PY, str(FIXTURES / "client_sdk_server.py")]
STUB = [PY, str(FIXTURES / "client_stub_server.py")]
TIME_SERVER = [PY, "-m", "mcp_server_time", "--local-timezone", "UTC"]

# The contract the stub server (mode "ok") fulfils, as a generated contract.py holds it.
STUB_CONTRACT: list[dict[str, Any]] = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        },
    },
    {
        "name": "echo",
        "description": "Returns its text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
]

SDK_ADD: dict[str, Any] = {
    "name": "add",
    "title": "Add numbers",
    "description": "Add two integers.",
    "inputSchema": STUB_CONTRACT[0]["inputSchema"],
    "outputSchema": STUB_CONTRACT[0]["outputSchema"],
}


# --------------------------------------------------------------------------- in-process fake


class FakeServer:
    """A minimal MCP server for the in-memory transports; records what it received."""

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        self.tools = copy.deepcopy(STUB_CONTRACT) if tools is None else tools
        self.received: list[dict[str, Any]] = []
        self.release = threading.Event()

    def __call__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        for raw in reader:
            message = json.loads(raw)
            self.received.append(message)
            if "id" not in message or "method" not in message:
                continue
            result = self.answer(message["method"], message.get("params") or {})
            if result is None:
                continue
            writer.write(
                json.dumps({"jsonrpc": "2.0", "id": message["id"], **result}).encode() + b"\n"
            )
            writer.flush()

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "initialize":
            return {
                "result": {
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"},
                }
            }
        if method == "tools/list":
            return {"result": {"tools": self.tools}}
        if method == "tools/call":
            args = params.get("arguments", {})
            if params["name"] == "add":
                total = args["a"] + args["b"]
                return {
                    "result": {
                        "content": [{"type": "text", "text": str(total)}],
                        "structuredContent": {"sum": total},
                    }
                }
            if params["name"] == "echo":
                return {"result": {"content": [{"type": "text", "text": args["text"]}]}}
            if params["name"] == "hang":
                return None  # never answered
            return {"error": {"code": -32602, "message": f"Unknown tool: {params['name']}"}}
        return {"error": {"code": -32601, "message": "Method not found"}}

    def methods(self) -> list[str]:
        return [m.get("method", "<response>") for m in self.received]


# --------------------------------------------------------------------------- the SDK server


@pytest.fixture(scope="module")
def sdk_session() -> Iterator[Session]:
    # One SDK server for the read-only cases below (starting one costs ~0.5 s). The
    # SDK server is dual-era; these cases pin the handshake era (the 2026-07-28 era
    # is covered in tests/runtime/client/test_client_protocol.py).
    session = Session.stdio(SDK_SERVER, contract=[SDK_ADD], server_id="sdk", protocol="legacy")
    with session:
        yield session


def test_sdk_server_handshake_at_the_default_revision(sdk_session: Session) -> None:
    assert sdk_session.protocol_version == "2025-11-25"
    assert sdk_session.server_info["name"] == "client-sdk-fixture"
    assert "tools" in sdk_session.server_capabilities
    assert sdk_session.contract_warnings == []  # extra tools on the server are fine


def test_sdk_server_tools_are_listed_as_the_client_holds_them(sdk_session: Session) -> None:
    tools = {tool.name: tool for tool in sdk_session.list_tools()}
    assert list(tools) == ["add", "fail", "echo", "sleep"]
    add = tools["add"]
    assert add.display_name == "Add numbers" and add.title == "Add numbers"
    assert add.output_schema == SDK_ADD["outputSchema"]
    assert add.input_schema == SDK_ADD["inputSchema"]
    assert add.server_id == "sdk"  # the caller's id, not serverInfo.name
    assert add.fingerprint == tool_fingerprint(add.raw)
    assert tools["fail"].display_name == "fail" and tools["fail"].output_schema is None


def test_sdk_server_structured_call(sdk_session: Session) -> None:
    result = sdk_session.call_tool("add", {"a": 2, "b": 40})
    assert result["structuredContent"] == {"sum": 42}
    assert convert_result(result, "integer") == 42
    assert convert_result(result, "string") == "42"


def test_sdk_server_is_error_result_raises_tool_error(sdk_session: Session) -> None:
    with pytest.raises(ToolError) as caught:
        sdk_session.call_tool("fail", {"why": "no quota"})
    assert caught.value.message == "failed: no quota"
    assert caught.value.content == [{"type": "text", "text": "failed: no quota"}]


def test_sdk_server_json_rpc_error_raises_protocol_error(sdk_session: Session) -> None:
    with pytest.raises(ProtocolError) as caught:
        sdk_session.call_tool("no_such_tool", {})
    assert caught.value.code == -32602
    assert "Unknown tool" in str(caught.value)
    with pytest.raises(ProtocolError) as method:
        sdk_session.request("no/such/method")
    assert method.value.code == -32601


def test_sdk_server_text_round_trips_byte_for_byte(sdk_session: Session) -> None:
    text = 'line 1\nline 2 \u2028 "quoted" \\ é 😀 {{ }} \x00'
    assert convert_result(sdk_session.call_tool("echo", {"text": text}), "string") == text


def test_sdk_server_timeout_cancels_and_the_session_goes_on(sdk_session: Session) -> None:
    started = time.monotonic()
    with pytest.raises(Timeout):
        sdk_session.call_tool("sleep", {"seconds": 0.6}, timeout=0.2)
    assert time.monotonic() - started < 0.5
    time.sleep(0.6)  # were it not cancelled, its late answer arrives now and is dropped
    assert sdk_session.call_tool("add", {"a": 1, "b": 1})["structuredContent"] == {"sum": 2}
    assert sdk_session.request("ping") == {}


def test_sdk_server_concurrent_calls_from_threads(sdk_session: Session) -> None:
    def worker(offset: int) -> list[int]:
        return [
            sdk_session.call_tool("add", {"a": offset, "b": i})["structuredContent"]["sum"]
            for i in range(25)
        ]

    with ThreadPoolExecutor(6) as pool:
        sums = list(pool.map(worker, [n * 1000 for n in range(6)]))
    assert sums == [[n * 1000 + i for i in range(25)] for n in range(6)]


def test_sdk_server_pagination_is_followed() -> None:
    with Session.stdio([*SDK_SERVER, "--paginate"], verify="off") as session:
        assert [tool.name for tool in session.list_tools()] == ["add", "fail", "echo", "sleep"]


def test_sdk_server_counter_offering_2024_11_05() -> None:
    # The contract holds title/outputSchema, which 2024-11-05 cannot carry: the
    # check compares only the fields that revision defines, so it passes.
    with Session.stdio(
        [*SDK_SERVER, "--only-2024"], contract=[SDK_ADD], protocol="legacy"
    ) as session:
        assert session.protocol_version == "2024-11-05"
        assert session.contract_warnings == []
        result = session.call_tool("add", {"a": 2, "b": 3})
        assert convert_result(result, "integer") == 5


def test_sdk_server_drift_is_a_contract_mismatch() -> None:
    session = Session.stdio([*SDK_SERVER, "--drift"], contract=[SDK_ADD])
    with pytest.raises(ContractMismatch) as caught:
        session.connect()
    message = str(caught.value)
    assert "tool 'add'" in message and "'c'" in message and "(PARAM_REQUIRED_ADDED)" in message
    assert [change.rule for change in caught.value.changes] == ["PARAM_REQUIRED_ADDED"]
    assert not session.transport.is_running  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- mcp-server-time


def test_mcp_server_time() -> None:
    with Session.stdio(TIME_SERVER, server_id="time") as session:
        tools = {tool.name: tool for tool in session.list_tools()}
        assert set(tools) == {"get_current_time", "convert_time"}
        assert tools["get_current_time"].annotations["readOnlyHint"] is True
        assert tools["get_current_time"].input_schema["required"] == ["timezone"]
        now = session.call_tool("get_current_time", {"timezone": "UTC"})
        assert now["structuredContent"]["timezone"] == "UTC"
        assert convert_result(now, "object")["timezone"] == "UTC"
        converted = session.call_tool(
            "convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert converted["structuredContent"]["target"]["datetime"][11:16] == "21:00"
        assert converted["structuredContent"]["time_difference"] == "+9.0h"
        with pytest.raises(ToolError, match="Invalid timezone"):
            session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        with pytest.raises(ProtocolError) as unknown:
            session.call_tool("get_weather", {})
        assert unknown.value.code == -32602


# --------------------------------------------------------------------------- bad peers


def test_server_exiting_at_start_reports_its_stderr() -> None:
    session = Session.stdio([*STUB, "exit-at-start"])
    started = time.monotonic()
    with pytest.raises(ServerExited) as caught:
        session.connect()
    assert time.monotonic() - started < 3
    assert caught.value.returncode == 3
    assert "missing API_KEY" in caught.value.stderr_tail and "missing API_KEY" in str(caught.value)


def test_server_that_never_answers_times_out_and_is_reaped() -> None:
    session = Session.stdio([*STUB, "silent"], timeout=0.5)
    started = time.monotonic()
    with pytest.raises(Timeout):
        session.connect()
    assert time.monotonic() - started < 2.5
    assert session.transport.returncode is not None  # type: ignore[attr-defined]


def test_server_flooding_stderr_does_not_deadlock() -> None:
    with Session.stdio([*STUB, "stderr-flood"], contract=STUB_CONTRACT) as session:
        for i in range(16):  # 16 MiB of stderr in all
            assert session.call_tool("add", {"a": i, "b": 1})["structuredContent"] == {"sum": i + 1}
        assert len(session.transport.stderr_tail()) < 1_000_000  # type: ignore[attr-defined]


def test_garbage_and_foreign_responses_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.DEBUG, logger="mcpgen.client"),
        Session.stdio([*STUB, "garbage"], verify="off") as session,
    ):
        for _ in range(3):
            assert convert_result(session.call_tool("echo", {"text": "ok"}), "string") == "ok"
    assert any("not JSON" in record.getMessage() for record in caplog.records)


def test_crash_mid_call_fails_the_call_fast() -> None:
    with Session.stdio([*STUB, "crash-mid-call"]) as session:
        started = time.monotonic()
        with pytest.raises(ServerExited) as caught:
            session.call_tool("add", {"a": 1, "b": 2})
        assert time.monotonic() - started < 2
        assert caught.value.returncode == 7 and "boom" in caught.value.stderr_tail
        with pytest.raises(ServerExited):  # and every later call too
            session.call_tool("add", {"a": 1, "b": 2})


def test_server_closing_stdout_fails_pending_calls() -> None:
    with Session.stdio([*STUB, "close-stdout"]) as session:
        started = time.monotonic()
        with pytest.raises(ServerExited, match="closed its output"):
            session.call_tool("add", {"a": 1, "b": 2}, timeout=10)
        assert time.monotonic() - started < 2


def test_server_requests_are_answered_and_notifications_surface() -> None:
    seen: list[Notification] = []
    session = Session.stdio([*STUB, "server-requests"], verify="off")
    session.on_notification = seen.append
    with session:
        assert session.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"sum": 3}
        replies = json.loads(convert_result(session.call_tool("replies", {}), "string"))
    assert {"jsonrpc": "2.0", "id": "srv-1", "result": {}} in replies
    assert any(reply.get("id") == 7 and reply["error"]["code"] == -32601 for reply in replies)
    assert [n.method for n in seen] == ["notifications/message"] * 2  # one per call


def test_unsupported_counter_offer_disconnects() -> None:
    session = Session.stdio([*STUB, "--offer", "1999-01-01"])
    with pytest.raises(ProtocolError) as caught:
        session.connect()
    assert caught.value.reason == "unsupported_version"
    assert not session.transport.is_running  # type: ignore[attr-defined]


def test_stub_server_matching_contract_and_str_command() -> None:
    command = " ".join(STUB)  # a str command is split with shlex
    with Session.stdio(command, contract=STUB_CONTRACT) as session:
        assert session.contract_warnings == []
        assert session.instructions == "be kind"
        assert session.server_id == command


def test_drift_strict_warn_off(caplog: pytest.LogCaptureFixture) -> None:
    drift = [*STUB, "drift"]
    with pytest.raises(ContractMismatch) as caught:
        Session.stdio(drift, contract=STUB_CONTRACT).connect()
    assert "tool 'add': new required parameter 'c' (PARAM_REQUIRED_ADDED)" in str(caught.value)
    assert "extra" not in str(caught.value)  # a tool the server adds is compatible

    with (
        caplog.at_level(logging.WARNING, logger="mcpgen.client"),
        Session.stdio(drift, contract=STUB_CONTRACT, verify="warn") as session,
    ):
        rules = {(c.tool, c.rule) for c in session.contract_warnings}
        assert session.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"sum": 3}
    assert ("add", "PARAM_REQUIRED_ADDED") in rules and ("echo", "DESCRIPTION_CHANGED") in rules
    assert all(tool != "extra" for tool, _ in rules)
    assert any("PARAM_REQUIRED_ADDED" in r.getMessage() for r in caplog.records)

    with Session.stdio(drift, contract=STUB_CONTRACT, verify="off") as session:
        assert session.contract_warnings == []


def test_contract_tool_missing_on_the_server_is_breaking() -> None:
    contract = [*STUB_CONTRACT, {"name": "gone", "inputSchema": {"type": "object"}}]
    with pytest.raises(ContractMismatch, match=r"tool 'gone'.*\(TOOL_REMOVED\)"):
        Session.stdio(STUB, contract=contract).connect()


# --------------------------------------------------------------------------- in-memory


def test_in_memory_session_with_a_fake_serve() -> None:
    fake = FakeServer()
    with Session.in_memory(fake, contract=STUB_CONTRACT) as session:
        assert session.protocol_version == "2025-11-25"
        assert [t.server_id for t in session.list_tools()] == ["in-memory", "in-memory"]
        assert convert_result(session.call_tool("add", {"a": 1, "b": 2}), "integer") == 3
        with pytest.raises(Timeout):
            session.call_tool("hang", {}, timeout=0.1)
    # the fake answers the server/discover probe with -32601: the client falls back
    assert fake.methods()[:4] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/list",
    ]
    (cancelled,) = [m for m in fake.received if m.get("method") == "notifications/cancelled"]
    hang_id = next(m["id"] for m in fake.received if m.get("params", {}).get("name") == "hang")
    assert cancelled["params"]["requestId"] == hang_id
    assert "timed out" in cancelled["params"]["reason"]


def test_in_memory_verify_off_never_lists() -> None:
    fake = FakeServer(tools=[])
    with Session.in_memory(fake, contract=STUB_CONTRACT, verify="off") as session:
        assert session.call_tool("echo", {"text": "hi"})["content"][0]["text"] == "hi"
    assert "tools/list" not in fake.methods()


def test_in_memory_serve_crash_fails_calls() -> None:
    def crashing(reader: BinaryIO, writer: BinaryIO) -> None:
        raise RuntimeError("implementation bug")

    session = Session.in_memory(crashing)
    with pytest.raises(ServerExited, match="implementation bug"):
        session.connect()


# --------------------------------------------------------------------------- mcpgen's own server

WEATHER_DIR = Path(__file__).resolve().parents[3] / "examples" / "weather"


@pytest.fixture(scope="module")
def weather(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ModuleType, Any]]:
    """The weather example built into a package, with its toy implementation."""
    from helpers import import_package

    from mcpgen.build import build_spec

    gen = tmp_path_factory.mktemp("client_weather") / "gen"
    assert build_spec(WEATHER_DIR / "tools.yaml", output=gen / "weather_mcp").ok
    with import_package(gen, "weather_mcp") as package:
        sys.path.insert(0, str(WEATHER_DIR))
        try:
            impl = importlib.import_module("weather_impl")
            yield gen, package, impl
        finally:
            sys.path.remove(str(WEATHER_DIR))
            sys.modules.pop("weather_impl", None)


def test_mcpgen_server_in_memory(weather: tuple[Path, ModuleType, Any]) -> None:
    _, package, impl = weather
    app = package.server.build_app(impl.Forecaster())

    def serve(reader: BinaryIO, writer: BinaryIO) -> None:
        mcpgen_runtime.serve_streams(app, reader, writer)

    with Session.in_memory(serve, contract=package.contract.TOOLS) as session:
        assert session.contract_warnings == []
        listed = {tool.name: tool for tool in session.list_tools()}
        assert {name: t.fingerprint for name, t in listed.items()} == package.contract.FINGERPRINTS
        forecast = session.call_tool("get_forecast", {"city": "Oslo", "days": 2})
        assert len(forecast["structuredContent"]["days"]) == 2
        assert convert_result(session.call_tool("current_temperature", {"city": "Oslo"}), "number")
        with pytest.raises(ToolError, match="city must not be blank"):
            session.call_tool("current_temperature", {"city": " "})


def test_mcpgen_server_over_stdio_sync_and_async(weather: tuple[Path, ModuleType, Any]) -> None:
    gen, package, _ = weather
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(WEATHER_DIR)])}
    command = [PY, "-m", "weather_mcp"]
    region = {"region": {"country": "NO"}, "max-results": 5}
    with Session.stdio(
        command, env=env, cwd=WEATHER_DIR, contract=package.contract.TOOLS
    ) as session:
        assert session.server_info["name"] == "weather"
        assert len(convert_result(session.call_tool("alerts.search", region), "array")) == 2

    async def main() -> None:
        async with AsyncSession.stdio(
            command, env=env, cwd=WEATHER_DIR, contract=package.contract.TOOLS
        ) as session:
            result = await session.call_tool(
                "report_observation",
                {"station": "ENGM", "temperature_c": 1.5, "at": "2026-12-02T10:00:00Z"},
            )
            assert convert_result(result, "string") == "obs-1"

    asyncio.run(main())


# --------------------------------------------------------------------------- pure helpers


def test_listed_tool_from_raw() -> None:
    raw = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"title": "Hinted", "readOnlyHint": True},
        "execution": {"taskSupport": "optional"},
        "_meta": {"team": "x"},
        "description": 5,  # wrong type: dropped, not fatal
    }
    tool = ListedTool.from_raw(raw, "srv")
    assert tool.raw is raw and tool.display_name == "Hinted" and tool.description is None
    assert len({tool, ListedTool.from_raw(copy.deepcopy(raw), "srv")}) == 1  # hashable
    assert tool.execution == {"taskSupport": "optional"} and tool.meta == {"team": "x"}
    assert ListedTool.from_raw({**raw, "title": "Titled"}, "srv").display_name == "Titled"
    assert ListedTool.from_raw({"name": "n", "inputSchema": {}}, "s").display_name == "n"
    for bad in (
        {"inputSchema": {}},
        {"name": 3, "inputSchema": {}},
        {"name": "n"},
        {"name": "n", "inputSchema": []},
    ):
        with pytest.raises(ProtocolError) as caught:
            ListedTool.from_raw(bad, "srv")
        assert caught.value.reason == "invalid_tool"


def test_convert_result() -> None:
    def text(value: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": value}]}

    assert convert_result(text("hi"), "string") == "hi"
    assert (
        convert_result(
            {
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image"},
                    {"type": "text", "text": "b"},
                ]
            },
            "string",
        )
        == "a\nb"
    )
    assert convert_result(text("3"), "integer") == 3
    assert convert_result(text("2.5"), "number") == 2.5
    assert convert_result(text("true"), "boolean") is True
    assert convert_result(text('{"a": [1]}'), "object") == {"a": [1]}
    assert convert_result(text("[1, 2]"), "array") == [1, 2]
    blocks = [{"type": "image", "data": "AA==", "mimeType": "image/png"}]
    assert convert_result({"content": blocks}, "content") == blocks
    assert convert_result({"content": [], "structuredContent": {"x": 1}}, "object") == {"x": 1}
    for value, returns in (("true", "integer"), ("x", "object"), ("1", "boolean"), ("{}", "array")):
        with pytest.raises(ProtocolError):
            convert_result(text(value), returns)
    with pytest.raises(ValueError):
        convert_result(text("1"), "decimal")


def test_session_must_be_connected_and_not_closed() -> None:
    session = Session.in_memory(FakeServer())
    with pytest.raises(RuntimeError, match="not connected"):
        session.call_tool("add", {"a": 1, "b": 2})
    with session:
        assert session.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"sum": 3}
    with pytest.raises(RuntimeError, match="closed"):
        session.call_tool("add", {"a": 1, "b": 2})
    session.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        session.connect()


# --------------------------------------------------------------------------- async


def test_async_sdk_server() -> None:
    async def main() -> None:
        async with AsyncSession.stdio(SDK_SERVER, contract=[SDK_ADD], protocol="legacy") as session:
            assert session.protocol_version == "2025-11-25"
            assert [t.name for t in await session.list_tools()] == ["add", "fail", "echo", "sleep"]
            results = await asyncio.gather(
                *(session.call_tool("add", {"a": i, "b": i}) for i in range(20))
            )
            assert [r["structuredContent"]["sum"] for r in results] == [2 * i for i in range(20)]
            with pytest.raises(ToolError, match="failed: x"):
                await session.call_tool("fail", {"why": "x"})
            with pytest.raises(ProtocolError):
                await session.call_tool("nope", {})
            with pytest.raises(Timeout):
                await session.call_tool("sleep", {"seconds": 0.5}, timeout=0.1)
            assert await session.request("ping") == {}

    asyncio.run(main())


def test_async_mcp_server_time() -> None:
    async def main() -> None:
        async with AsyncSession.stdio(TIME_SERVER) as session:
            assert {t.name for t in await session.list_tools()} == {
                "get_current_time",
                "convert_time",
            }
            now = await session.call_tool("get_current_time", {"timezone": "UTC"})
            assert now["structuredContent"]["timezone"] == "UTC"

    asyncio.run(main())


def test_async_bad_peers() -> None:
    async def main() -> None:
        with pytest.raises(ServerExited, match="missing API_KEY"):
            await AsyncSession.stdio([*STUB, "exit-at-start"]).connect()
        silent = AsyncSession.stdio([*STUB, "silent"], timeout=0.3)
        with pytest.raises(Timeout):
            await silent.connect()
        async with AsyncSession.stdio([*STUB, "crash-mid-call"]) as session:
            with pytest.raises(ServerExited) as caught:
                await session.call_tool("add", {"a": 1, "b": 2})
            assert caught.value.returncode == 7
        with pytest.raises(ContractMismatch, match="PARAM_REQUIRED_ADDED"):
            await AsyncSession.stdio([*STUB, "drift"], contract=STUB_CONTRACT).connect()
        async with AsyncSession.stdio([*STUB, "garbage"], verify="off") as session:
            assert (await session.call_tool("echo", {"text": "ok"}))["content"][0]["text"] == "ok"

    asyncio.run(main())


def test_async_in_memory_session() -> None:
    fake = FakeServer()

    async def main() -> None:
        async with AsyncSession.in_memory(fake, contract=STUB_CONTRACT) as session:
            assert convert_result(await session.call_tool("add", {"a": 2, "b": 2}), "integer") == 4
            with pytest.raises(Timeout):
                await session.call_tool("hang", {}, timeout=0.1)
            assert (await session.call_tool("echo", {"text": "é"}))["content"][0]["text"] == "é"

    asyncio.run(main())
    assert any(m.get("method") == "notifications/cancelled" for m in fake.received)
