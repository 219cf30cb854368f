"""The client side of the protocol: era probe and fallback (docs/architecture.md),
tasks as handles in both eras, progress callbacks and cancellation.

Peers: a generated fixture server (tools with every task mode, progress through
``ctx``), the generated weather example, stub servers answering the probe in one
chosen way (tests/fixtures/client_proto_stub.py), the official SDK's server
(dual-era since SDK 2.3.0) and the published ``mcp-server-time``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import build_package, import_package

from mcpgen_runtime import AsyncSession, Session, convert_result
from mcpgen_runtime._errors import ContractMismatch, ProtocolError, Timeout, ToolError
from mcpgen_runtime.client.core import (
    ClientCore,
    Discover,
    Initialize,
    Outcome,
    SendLine,
)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
WEATHER_DIR = ROOT / "examples" / "weather"
PY = sys.executable
STUB = [PY, str(FIXTURES / "client_proto_stub.py")]
SDK_SERVER = [PY, str(FIXTURES / "client_sdk_server.py")]
TIME_SERVER = [PY, "-m", "mcp_server_time", "--local-timezone", "UTC"]
ENVELOPE_KEYS = {
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
}
TASKS_CAPS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}

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
]
SDK_ADD: dict[str, Any] = {
    "name": "add",
    "title": "Add numbers",
    "description": "Add two integers.",
    "inputSchema": STUB_CONTRACT[0]["inputSchema"],
    "outputSchema": STUB_CONTRACT[0]["outputSchema"],
}

SPEC = """
mcpgen: 1
package: cproto_mcp
server: {name: cproto, version: "2.0.0", instructions: Client protocol fixture.}
tools:
  - name: add
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    output_schema: {type: object, properties: {sum: {type: integer}}, required: [sum]}
  - name: sleep
    description: Sleeps, then answers.
    async: true
    task_support: optional
    parameters: [{name: seconds, type: number}]
  - name: batch_job
    description: Doubles n, slowly; runs only as a task.
    task_support: required
    parameters: [{name: n, type: integer}]
    returns: integer
  - name: work
    description: Reports progress once per step.
    parameters: [{name: steps, type: integer}, {name: pause, type: number, default: 0}]
    callback: positional
  - name: crunch
    description: Sums 1..steps, reporting progress; may run as a task.
    task_support: optional
    parameters: [{name: steps, type: integer}]
    output_schema: {type: object, properties: {total: {type: integer}}, required: [total]}
"""

IMPL = """
import asyncio, time
from cproto_mcp import Context, CprotoServer, ToolError
from cproto_mcp.models import AddArgs, AddOutput, CrunchArgs, CrunchOutput

class Impl(CprotoServer):
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

    def work(self, steps: int, pause: float, *, ctx: Context = Context.NONE) -> str:
        for step in range(steps):
            if ctx.cancelled:
                return "stopped"
            time.sleep(pause)
            ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return f"did {steps}"

    def crunch(self, args: CrunchArgs, *, ctx: Context = Context.NONE) -> CrunchOutput:
        total = 0
        for step in range(1, args["steps"] + 1):
            total += step
            ctx.report_progress(step, args["steps"], None)
        return CrunchOutput(total=total)
"""


# --------------------------------------------------------------------------- helpers


def record(session: Session | AsyncSession) -> list[dict[str, Any]]:
    """Every message the session writes from now on, decoded."""
    sent: list[dict[str, Any]] = []
    transport: Any = session.transport
    for name in ("send", "send_nowait"):
        original = getattr(transport, name, None)
        if original is None:
            continue

        def wrapped(line: bytes, original: Any = original) -> Any:
            sent.append(json.loads(line))
            return original(line)

        setattr(transport, name, wrapped)
    return sent


def methods(sent: list[dict[str, Any]]) -> list[str]:
    return [message["method"] for message in sent]


def calls(sent: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [
        m["params"] for m in sent if m.get("method") == "tools/call" and m["params"]["name"] == tool
    ]


def assert_enveloped(sent: list[dict[str, Any]]) -> None:
    """Every request carries the 2026 envelope; notifications carry none."""
    for message in sent:
        if "id" in message:
            assert ENVELOPE_KEYS <= set(message["params"]["_meta"]), message
            assert message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == (
                "2026-07-28"
            )


@pytest.fixture(scope="module")
def cproto(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ModuleType, list[str], dict[str, str]]]:
    """The fixture contract built and imported, plus the command and env serving it."""
    root = tmp_path_factory.mktemp("cproto")
    gen = build_package(SPEC, root, "cproto_mcp")
    (root / "impl").mkdir()
    (root / "impl" / "cproto_impl.py").write_text(textwrap.dedent(IMPL))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(root / "impl")])}
    command = [PY, "-m", "cproto_mcp", "--impl", "cproto_impl:Impl"]
    with import_package(gen, "cproto_mcp") as package:
        yield package, command, env


@pytest.fixture(scope="module")
def weather(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ModuleType, list[str], dict[str, str]]]:
    from mcpgen.build import build_spec

    gen = tmp_path_factory.mktemp("cproto_weather") / "gen"
    assert build_spec(WEATHER_DIR / "tools.yaml", output=gen / "weather_mcp").ok
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(WEATHER_DIR)])}
    with import_package(gen, "weather_mcp") as package:
        yield package, [PY, "-m", "weather_mcp"], env


# --------------------------------------------------------------------------- the probe, pure


def run_negotiation(core: ClientCore[str], choice: Any, answers: list[Outcome]) -> list[Any]:
    """Drive ``negotiate`` with canned outcomes; return the steps it asked for."""
    steps: list[Any] = []
    generator = core.negotiate(choice)
    outcome: Outcome | None = None
    pending = list(answers)
    while True:
        try:
            step = generator.send(outcome)
        except StopIteration:
            return steps
        steps.append(step)
        outcome = None if isinstance(step, SendLine) else pending.pop(0)


DISCOVERED = Outcome(
    result={
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    }
)
INITIALIZED = Outcome(
    result={
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
)


def unsupported(*versions: str) -> Outcome:
    return Outcome(
        error={
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": list(versions), "requested": "2026-07-28"},
        }
    )


def test_negotiation_rules() -> None:
    core: ClientCore[str] = ClientCore()
    assert run_negotiation(core, "auto", [DISCOVERED]) == [Discover("2026-07-28", probe=True)]
    assert core.era == "modern" and core.handshake is not None
    assert core.handshake.server_info == {"name": "s", "version": "1"}
    # any other error, and silence, fall back to initialize
    for answer in (
        Outcome(error={"code": -32601, "message": "Method not found"}),
        Outcome(error={"code": -32602, "message": "Invalid request parameters"}),
        Outcome(),
        Outcome(result={"supportedVersions": ["2025-11-25"]}),
        Outcome(result={"unexpected": True}),
        unsupported("2025-11-25"),
    ):
        core = ClientCore()
        steps = run_negotiation(core, "auto", [answer, INITIALIZED])
        assert [type(step) for step in steps] == [Discover, Initialize, SendLine], answer
        assert core.era == "legacy"
    # -32022 naming a mutual modern revision: one retry, then modern
    core = ClientCore()
    steps = run_negotiation(core, "auto", [unsupported("2026-07-28"), DISCOVERED])
    assert steps == [Discover("2026-07-28", True), Discover("2026-07-28", True)]
    assert core.era == "modern"
    # -32022 listing only revisions nobody here speaks: an error, no initialize
    with pytest.raises(ProtocolError) as caught:
        run_negotiation(ClientCore(), "auto", [unsupported("2099-01-01")])
    assert caught.value.code == -32022 and caught.value.reason == "unsupported_version"
    # the fallback initialize refused with -32022: probe once more
    core = ClientCore()
    steps = run_negotiation(core, "auto", [Outcome(), unsupported("2026-07-28"), DISCOVERED])
    assert [type(step) for step in steps] == [Discover, Initialize, Discover]
    assert core.era == "modern"
    # ... but only once
    with pytest.raises(ProtocolError):
        run_negotiation(
            ClientCore(),
            "auto",
            [Outcome(), unsupported("2026-07-28"), Outcome(), unsupported("2026-07-28")],
        )
    # legacy: initialize only; modern: discover only, its failure is an error
    assert [type(s) for s in run_negotiation(ClientCore(), "legacy", [INITIALIZED])] == [
        Initialize,
        SendLine,
    ]
    assert run_negotiation(ClientCore(), "modern", [DISCOVERED]) == [Discover("2026-07-28", False)]
    with pytest.raises(ProtocolError) as caught:
        run_negotiation(ClientCore(), "modern", [Outcome(error={"code": -32601, "message": "no"})])
    assert caught.value.code == -32601
    with pytest.raises(ProtocolError):
        run_negotiation(
            ClientCore(), "modern", [Outcome(result={"supportedVersions": ["2025-11-25"]})]
        )
    with pytest.raises(ValueError):
        run_negotiation(ClientCore(), "stateless", [])


def test_modern_requests_carry_the_envelope_and_results_are_checked() -> None:
    core: ClientCore[str] = ClientCore({"name": "c", "version": "9"})
    run_negotiation(core, "auto", [DISCOVERED])
    request_id, line = core.request(
        "tools/call", {"name": "t", "_meta": {"x": 1}}, "w", progress=print, tasks=False
    )
    assert core.progress_callbacks == {request_id: print}  # routed by its token
    params = json.loads(line)["params"]
    assert params["_meta"] == {
        "x": 1,
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "9"},
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": request_id,
    }
    _, line = core.request("tools/list", None, "w")
    assert json.loads(line)["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == (
        TASKS_CAPS
    )
    assert core.result_type({}, "x") == "complete"  # missing → complete
    assert core.result_type({"resultType": "task"}, "x", frozenset({"complete", "task"})) == "task"
    with pytest.raises(ProtocolError) as caught:
        core.result_type({"resultType": "input_required"}, "tools/call 't'")
    assert caught.value.reason == "unexpected_result_type"
    legacy: ClientCore[str] = ClientCore()
    run_negotiation(legacy, "legacy", [INITIALIZED])
    _, line = legacy.request("tools/list", None, "w")
    assert "params" not in json.loads(line)  # no envelope in the handshake era
    _, line = legacy.request("tools/call", {"name": "t"}, "w", progress=print)
    assert set(json.loads(line)["params"]["_meta"]) == {"progressToken"}


# --------------------------------------------------------------------------- the probe, live


@pytest.mark.parametrize("protocol", ["auto", "legacy", "modern"])
def test_generated_weather_server_in_each_era(
    weather: tuple[ModuleType, list[str], dict[str, str]], protocol: str
) -> None:
    package, command, env = weather
    client = package.WeatherClient.stdio(command, env=env, cwd=WEATHER_DIR, protocol=protocol)
    sent = record(client.session)
    with client:
        session = client.session
        expected = "2025-11-25" if protocol == "legacy" else "2026-07-28"
        assert (session.era, session.protocol_version) == (
            "legacy" if protocol == "legacy" else "modern",
            expected,
        )
        assert session.server_info["name"] == "weather"
        assert session.instructions and "get_forecast" in session.instructions
        assert session.contract_warnings == []
        forecast = client.get_forecast("Oslo", days=2)
        assert forecast.city == "Oslo" and len(forecast.days) == 2
        handle = client.start_get_forecast("Oslo", days=3, units="imperial")
        assert handle.task_id is not None
        assert handle.result(timeout=20).units == "imperial"
        assert isinstance(client.current_temperature("Oslo"), float)
    first = methods(sent)[0]
    assert first == ("initialize" if protocol == "legacy" else "server/discover")
    if protocol != "legacy":
        assert "initialize" not in methods(sent)
        assert_enveloped(sent)
        probe = sent[0]["params"]["_meta"]
        assert probe["io.modelcontextprotocol/clientCapabilities"] == TASKS_CAPS
        assert probe["io.modelcontextprotocol/clientInfo"]["name"] == "mcpgen-client"
        # the plain call left the extension undeclared, so the server answered directly
        plain, started = calls(sent, "get_forecast")
        assert plain["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {}
        assert started["_meta"]["io.modelcontextprotocol/clientCapabilities"] == TASKS_CAPS
    else:
        plain, started = calls(sent, "get_forecast")
        assert "task" not in plain and started["task"] == {"ttl": 600000}


def test_generated_weather_server_async_auto(
    weather: tuple[ModuleType, list[str], dict[str, str]],
) -> None:
    package, command, env = weather

    async def main() -> None:
        async with package.AsyncWeatherClient.stdio(command, env=env, cwd=WEATHER_DIR) as client:
            assert client.session.era == "modern"
            result = await client.report_observation("ENGM", 1.5, "2026-12-02T10:00:00Z")
            assert result == "obs-1"
            handle = await client.start_get_forecast("Oslo")
            assert (await handle.result()).city == "Oslo"

    asyncio.run(main())


def test_generated_clients_bound_a_line_from_the_server(
    weather: tuple[ModuleType, list[str], dict[str, str]],
) -> None:
    """``max_message_bytes`` reaches the transport: the weather tools/list answer
    (a few KiB) is over a 512-byte limit, so connecting fails clearly."""
    package, command, env = weather
    client = package.WeatherClient.stdio(command, env=env, cwd=WEATHER_DIR, max_message_bytes=512)
    with pytest.raises(package.ProtocolError, match="larger than 512 bytes") as caught:
        client.__enter__()
    assert caught.value.reason == "message_too_large"
    assert not client.session.transport.is_running

    async def main() -> None:
        client = package.AsyncWeatherClient.stdio(
            command, env=env, cwd=WEATHER_DIR, max_message_bytes=512
        )
        with pytest.raises(package.ProtocolError, match="larger than 512 bytes"):
            await client.__aenter__()
        assert not client.session.transport.is_running

    asyncio.run(main())


def test_in_memory_generated_client_modern_and_legacy(
    weather: tuple[ModuleType, list[str], dict[str, str]],
) -> None:
    package, _, _ = weather
    sys.path.insert(0, str(WEATHER_DIR))
    try:
        import weather_impl

        for protocol in ("auto", "legacy"):
            with package.WeatherClient.in_memory(weather_impl.Forecaster(), protocol=protocol) as c:
                assert c.session.era == ("legacy" if protocol == "legacy" else "modern")
                assert len(c.get_forecast("Oslo", days=1).days) == 1
    finally:
        sys.path.remove(str(WEATHER_DIR))
        sys.modules.pop("weather_impl", None)


def test_stub_answering_discover_with_method_not_found_falls_back() -> None:
    session = Session.stdio([*STUB, "legacy"], contract=STUB_CONTRACT)
    with session:
        assert (session.era, session.protocol_version) == ("legacy", "2025-11-25")
        seen = json.loads(convert_result(session.call_tool("seen", {}), "string"))
    # "*": the request carried the 2026 envelope (only the probe does)
    assert seen == [
        "server/discover*",
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ]


def test_stub_never_answering_discover_falls_back_after_the_probe_timeout() -> None:
    session = Session.stdio([*STUB, "silent-discover"], contract=STUB_CONTRACT, probe_timeout=0.5)
    started = time.monotonic()
    with session:
        elapsed = time.monotonic() - started
        assert session.era == "legacy"
        assert 0.5 <= elapsed < 5
        seen = json.loads(convert_result(session.call_tool("seen", {}), "string"))
    # the abandoned probe is not cancelled: a handshake-era server sees no stray notification
    assert seen[:3] == ["server/discover*", "initialize", "notifications/initialized"]

    async def main() -> None:
        started = time.monotonic()
        async with AsyncSession.stdio([*STUB, "silent-discover"], timeout=0.4) as session:
            assert session.era == "legacy"  # probe timeout = min(timeout, probe_timeout)
            assert time.monotonic() - started < 4

    asyncio.run(main())


@pytest.mark.parametrize(
    ("mode", "era"),
    [
        ("discover-32022-handshake", "legacy"),
        ("discover-no-modern", "legacy"),
        ("retry-modern", "modern"),
        ("slow-modern", "modern"),
        ("modern-bare", "modern"),
    ],
)
def test_stub_probe_answers(mode: str, era: str) -> None:
    # Only slow-modern is about a probe that times out (its answer comes 1 s late);
    # the others must not time out, however long the stub takes to start on a busy
    # machine (0.3 s for all once failed retry-modern under load).
    probe_timeout = 0.3 if mode == "slow-modern" else 30.0
    session = Session.stdio([*STUB, mode], contract=STUB_CONTRACT, probe_timeout=probe_timeout)
    with session:
        assert session.era == era
        assert session.server_info["name"] == "proto-stub"
        assert session.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"sum": 5}
        seen = json.loads(convert_result(session.call_tool("seen", {}), "string"))
    if mode == "slow-modern":
        # probe timed out, initialize was refused with -32022, the second probe won
        assert seen[:3] == ["server/discover*", "initialize", "server/discover*"]
    if mode == "retry-modern":
        assert seen[:2] == ["server/discover*", "server/discover*"]
    if era == "modern":  # every request after the verdict carried the envelope
        last_probe = len(seen) - 1 - seen[::-1].index("server/discover*")
        assert all("*" in method for method in seen[last_probe:])


def test_stub_probe_failures() -> None:
    with pytest.raises(ProtocolError) as caught:
        Session.stdio([*STUB, "discover-32022-disjoint"]).connect()
    assert caught.value.code == -32022 and "2099-01-01" in str(caught.value)
    with pytest.raises(ProtocolError) as caught:
        Session.stdio([*STUB, "legacy"], protocol="modern").connect()
    assert caught.value.code == -32601
    with Session.stdio([*STUB, "modern-input-required"], contract=STUB_CONTRACT) as session:
        with pytest.raises(ProtocolError) as caught:
            session.call_tool("add", {"a": 1, "b": 2})
        # retried with the echoed state, then given up on (client.asking.MAX_INPUT_ROUNDS)
        assert caught.value.reason == "too_many_input_rounds"
    with pytest.raises(ValueError, match="protocol"):
        Session.stdio([*STUB, "legacy"], protocol="stateless")  # type: ignore[arg-type]


def test_sdk_server_probe_picks_the_modern_era() -> None:
    session = Session.stdio(SDK_SERVER, contract=[SDK_ADD], server_id="sdk")
    sent = record(session)
    with session:
        assert (session.era, session.protocol_version) == ("modern", "2026-07-28")
        assert session.server_info == {"name": "client-sdk-fixture", "version": "1.0.0"}
        assert session.contract_warnings == []
        assert [tool.name for tool in session.list_tools()] == ["add", "fail", "echo", "sleep"]
        assert session.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"sum": 5}
        with pytest.raises(ToolError, match="failed: x"):
            session.call_tool("fail", {"why": "x"})
        with pytest.raises(ProtocolError) as caught:
            session.call_tool("nope", {})
        assert caught.value.code == -32602
        with pytest.raises(Timeout):
            session.call_tool("sleep", {"seconds": 0.6}, timeout=0.2)
        time.sleep(0.6)
        assert session.call_tool("echo", {"text": "é"})["content"][0]["text"] == "é"
        with pytest.raises(ProtocolError) as caught:
            session.request("ping")  # no ping in 2026-07-28
        assert caught.value.code == -32601
        # no task support on the server: start_tool degrades to a finished handle
        handle = session.start_tool(
            "add", {"a": 1, "b": 1}, lambda r: r["structuredContent"]["sum"]
        )
        assert handle.task_id is None and handle.status().status == "completed"
        assert handle.result() == 2 and handle.cancel().status == "completed"
    assert methods(sent)[0] == "server/discover" and "initialize" not in methods(sent)
    assert_enveloped(sent)
    (cancelled,) = [m for m in sent if m.get("method") == "notifications/cancelled"]
    sleep_id = next(m["id"] for m in sent if m.get("params", {}).get("name") == "sleep")
    assert cancelled["params"]["requestId"] == sleep_id


def test_sdk_server_async_in_both_eras() -> None:
    async def main() -> None:
        for protocol, expected in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
            async with AsyncSession.stdio(SDK_SERVER, contract=[SDK_ADD], protocol=protocol) as s:
                assert s.protocol_version == expected
                results = await asyncio.gather(
                    *(s.call_tool("add", {"a": i, "b": i}) for i in range(10))
                )
                assert [r["structuredContent"]["sum"] for r in results] == [
                    2 * i for i in range(10)
                ]
                handle = await s.start_tool("echo", {"text": "hi"})
                assert handle.task_id is None
                assert (await handle.result())["content"][0]["text"] == "hi"

    asyncio.run(main())


def test_mcp_server_time_probe() -> None:
    session = Session.stdio(TIME_SERVER, server_id="time")
    sent = record(session)
    with session:
        assert (session.era, session.protocol_version) == ("modern", "2026-07-28")
        assert session.server_info["name"] == "mcp-time"
        now = session.call_tool("get_current_time", {"timezone": "UTC"})
        assert now["structuredContent"]["timezone"] == "UTC"
        with pytest.raises(ToolError, match="Invalid timezone"):
            session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
    assert methods(sent)[0] == "server/discover"
    assert_enveloped(sent)
    with Session.stdio(TIME_SERVER, protocol="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25"
        assert {tool.name for tool in legacy.list_tools()} == {"get_current_time", "convert_time"}


# --------------------------------------------------------------------------- tasks


def errors(cproto: tuple[ModuleType, list[str], dict[str, str]]) -> Any:
    """The error classes the generated package raises: the installed runtime's."""
    return importlib.import_module("mcpgen_runtime._errors")


def cproto_client(
    cproto: tuple[ModuleType, list[str], dict[str, str]],
    protocol: str,
    *,
    asynchronous: bool = False,
) -> Any:
    package, command, env = cproto
    client = importlib.import_module(f"{package.__name__}.client")
    cls = client.AsyncCprotoClient if asynchronous else client.CprotoClient
    return cls.stdio(command, env=env, protocol=protocol)


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_tasks_sync(cproto: tuple[ModuleType, list[str], dict[str, str]], protocol: str) -> None:
    err = errors(cproto)
    client = cproto_client(cproto, protocol)
    sent = record(client.session)
    with client:
        assert client.session.era == protocol
        # start → status → result
        handle = client.start_sleep(0.5)
        assert isinstance(handle.task_id, str) and handle.last_status.status == "working"
        status = handle.status()
        assert isinstance(status, importlib.import_module("cproto_mcp.client").TaskStatus)
        assert (status.task_id, status.status, status.terminal) == (
            handle.task_id,
            "working",
            False,
        )
        assert status.created_at and status.ttl_ms == 600000 and status.poll_interval_ms == 500
        assert handle.result() == "slept"
        assert handle.result() == "slept"  # settled: no second wait
        assert handle.status().status == "completed"
        # start → cancel → cancelled
        long = client.start_sleep(30)
        cancelled = long.cancel()
        assert cancelled.status == "cancelled" and cancelled.terminal
        assert long.status().status == "cancelled"
        with pytest.raises(err.ProtocolError) as caught:
            long.result()
        assert caught.value.reason == "task_cancelled"
        assert long.cancel().status == "cancelled"  # cancelling again is harmless
        # a required-task tool through its plain method, and through its handle
        assert client.batch_job(21) == 42
        with pytest.raises(err.ToolError, match="negative"):
            client.batch_job(-1)
        job = client.start_batch_job(4)
        assert job.result(timeout=20) == 8
        failing = client.start_batch_job(-2)
        with pytest.raises(err.ToolError, match="negative"):
            failing.result()
        # an optional-task tool's plain method runs directly
        assert client.sleep(0) == "slept"
        # structured output and progress through a task
        events: list[tuple[float, float | None, str | None]] = []
        crunch = client.start_crunch(3, on_progress=lambda *event: events.append(event))
        assert crunch.result().total == 6
        assert events == [(1, 3, None), (2, 3, None), (3, 3, None)]
    sleeps = calls(sent, "sleep")
    if protocol == "legacy":
        assert [("task" in params) for params in sleeps] == [True, True, False]
        assert "tasks/result" in methods(sent)
    else:
        assert_enveloped(sent)
        assert [
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"] for params in sleeps
        ] == [TASKS_CAPS, TASKS_CAPS, {}]
        assert "tasks/result" not in methods(sent) and "tasks/get" in methods(sent)
    assert "notifications/cancelled" not in methods(sent)  # tasks are cancelled with tasks/cancel


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_tasks_async(cproto: tuple[ModuleType, list[str], dict[str, str]], protocol: str) -> None:
    err = errors(cproto)

    async def main() -> None:
        async with cproto_client(cproto, protocol, asynchronous=True) as client:
            assert client.session.era == protocol
            handle = await client.start_sleep(0.5)
            assert (await handle.status()).status == "working"
            assert await handle.result() == "slept"
            assert (await handle.status()).status == "completed"
            long = await client.start_sleep(30)
            assert (await long.cancel()).status == "cancelled"
            assert (await long.status()).status == "cancelled"
            with pytest.raises(err.ProtocolError):
                await long.result()
            results = await asyncio.gather(*(client.batch_job(n) for n in range(5)))
            assert results == [0, 2, 4, 6, 8]
            seen: list[float] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                await asyncio.sleep(0.01)
                seen.append(progress)

            crunch = await client.start_crunch(4, on_progress=on_progress)
            assert (await crunch.result()).total == 10
            assert seen == [1, 2, 3, 4]  # every callback finished before result() returned

    asyncio.run(main())


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_task_timeouts_cancel_the_task(
    cproto: tuple[ModuleType, list[str], dict[str, str]], protocol: str
) -> None:
    err = errors(cproto)
    client = cproto_client(cproto, protocol)
    sent = record(client.session)
    with client:
        session = client.session
        handle = client.start_sleep(30)
        started = time.monotonic()
        with pytest.raises(err.Timeout):
            handle.result(timeout=0.4)
        assert time.monotonic() - started < 3
        assert handle.status().status == "cancelled"
        # a plain call that became a task: the call's timeout bounds the whole wait
        with pytest.raises(err.Timeout, match="no result within"):
            session.call_tool("sleep", {"seconds": 30}, task=True, timeout=0.4)
        # cancel_on_timeout=False leaves the task running
        keep = client.start_sleep(1.0)
        with pytest.raises(err.Timeout):
            keep.result(timeout=0.1, cancel_on_timeout=False)
        assert keep.result(timeout=20) == "slept"
        assert client.add(1, 2).sum == 3
    cancels = [m["params"]["taskId"] for m in sent if m.get("method") == "tasks/cancel"]
    assert handle.task_id in cancels and len(cancels) == 2 and keep.task_id not in cancels
    assert "notifications/cancelled" not in methods(sent)


# --------------------------------------------------------------------------- progress, cancellation


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_progress_and_timeout_cancellation_sync(
    cproto: tuple[ModuleType, list[str], dict[str, str]], protocol: str
) -> None:
    err = errors(cproto)
    client = cproto_client(cproto, protocol)
    sent = record(client.session)
    with client:
        events: list[tuple[float, float | None, str | None]] = []
        assert client.work(3, on_progress=lambda *event: events.append(event)) == "did 3"
        assert events == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert client.work(2) == "did 2"  # no callback: no token, no progress asked for
        # a raising callback is logged, never fatal
        assert client.work(1, on_progress=lambda *event: 1 / 0) == "did 1"
        # timeout: notifications/cancelled, the server stops the handler, the session goes on
        with pytest.raises(err.Timeout):
            client.session.call_tool("work", {"steps": 200, "pause": 0.02}, timeout=0.3)
        assert client.add(2, 2).sum == 4
    with_token, without = calls(sent, "work")[0], calls(sent, "work")[1]
    assert "progressToken" in with_token["_meta"]
    assert "progressToken" not in (without.get("_meta") or {})
    (cancelled,) = [m for m in sent if m.get("method") == "notifications/cancelled"]
    slow_id = next(
        m["id"]
        for m in sent
        if m.get("method") == "tools/call" and m["params"]["arguments"].get("steps") == 200
    )
    assert cancelled["params"]["requestId"] == slow_id
    assert "timed out" in cancelled["params"]["reason"]
    assert "params" not in cancelled or "_meta" not in cancelled["params"]


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_progress_and_timeout_cancellation_async(
    cproto: tuple[ModuleType, list[str], dict[str, str]], protocol: str
) -> None:
    err = errors(cproto)

    async def main() -> list[dict[str, Any]]:
        client = cproto_client(cproto, protocol, asynchronous=True)
        sent = record(client.session)
        async with client:
            sync_events: list[Any] = []
            async_events: list[Any] = []

            async def slow_callback(
                progress: float, total: float | None, message: str | None
            ) -> None:
                await asyncio.sleep(0.02)
                async_events.append((progress, total, message))

            first, second = await asyncio.gather(
                client.work(3, on_progress=lambda *event: sync_events.append(event)),
                client.work(2, on_progress=slow_callback),
            )
            assert (first, second) == ("did 3", "did 2")
            assert sync_events == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            assert async_events == [(1, 2, "step 1"), (2, 2, "step 2")]
            with pytest.raises(err.Timeout):
                await client.session.call_tool("work", {"steps": 200, "pause": 0.02}, timeout=0.3)
            assert (await client.add(1, 1)).sum == 2
        return sent

    sent = asyncio.run(main())
    (cancelled,) = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert "timed out" in cancelled["params"]["reason"]


def test_modern_server_directed_task_for_an_undeclared_call(
    cproto: tuple[ModuleType, list[str], dict[str, str]],
) -> None:
    # A raw call of the required-task tool without task=True: the 2026 server answers
    # -32021 naming the tasks extension, and the client retries it declared.
    _, command, env = cproto
    session = Session.stdio(command, env=env, verify="off", protocol="modern")
    sent = record(session)
    with session:
        assert convert_result(session.call_tool("batch_job", {"n": 3}), "integer") == 6
        handle = session.start_tool("batch_job", {"n": 5})
        assert handle.result()["content"] == [{"type": "text", "text": "10"}]
    session.close()
    assert handle.result()["content"][0]["text"] == "10"  # settled: answered from memory
    undeclared, declared, started = calls(sent, "batch_job")
    assert undeclared["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {}
    assert declared["_meta"]["io.modelcontextprotocol/clientCapabilities"] == TASKS_CAPS
    assert started["_meta"]["io.modelcontextprotocol/clientCapabilities"] == TASKS_CAPS
    with Session.stdio(command, env=env, verify="off", protocol="legacy") as legacy:
        with pytest.raises(ProtocolError) as caught:  # 2025-11-25: the contract says task=True
            legacy.call_tool("batch_job", {"n": 3})
        assert caught.value.code == -32601
        assert convert_result(legacy.call_tool("batch_job", {"n": 3}, task=True), "integer") == 6


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_cancelled_async_waiter_cancels_its_task(
    cproto: tuple[ModuleType, list[str], dict[str, str]], protocol: str
) -> None:
    async def main() -> None:
        async with cproto_client(cproto, protocol, asynchronous=True) as client:
            handle = await client.start_sleep(30)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(handle.result(), 0.3)
            for _ in range(100):  # tasks/cancel went out without waiting for its ack
                if (await handle.status()).status == "cancelled":
                    break
                await asyncio.sleep(0.02)
            assert handle.last_status is not None and handle.last_status.status == "cancelled"
            keep = await client.start_sleep(0.3)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(keep.result(cancel_on_timeout=False), 0.05)
            assert await keep.result() == "slept"

    asyncio.run(main())


def test_sdk_server_drift_is_caught_in_the_modern_era() -> None:
    session = Session.stdio([*SDK_SERVER, "--drift"], contract=[SDK_ADD])
    with pytest.raises(ContractMismatch) as caught:
        session.connect()
    assert session.era == "modern"
    assert [change.rule for change in caught.value.changes] == ["PARAM_REQUIRED_ADDED"]


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_progress_restarts_a_calls_timeout_up_to_its_maximum(
    cproto: tuple[ModuleType, list[str], dict[str, str]], protocol: str
) -> None:
    """``max_total_timeout``: a call that reports progress every 0.15 s runs 1.2 s past a
    0.5 s timeout; without it, or past the maximum, it times out (sync and async)."""
    err = errors(cproto)
    long = {"steps": 8, "pause": 0.15}
    with cproto_client(cproto, protocol) as client:
        session = client.session
        done = session.call_tool("work", long, timeout=0.5, max_total_timeout=10)
        assert done["content"] == [{"type": "text", "text": "did 8"}]
        with pytest.raises(err.Timeout):
            session.call_tool("work", long, timeout=0.5)
        with pytest.raises(err.Timeout):
            session.call_tool("work", long, timeout=0.5, max_total_timeout=0.8)

    async def main() -> None:
        _, command, env = cproto
        async with AsyncSession.stdio(command, env=env, verify="off", protocol=protocol) as aio:
            done = await aio.call_tool("work", long, timeout=0.5, max_total_timeout=10)
            assert done["content"] == [{"type": "text", "text": "did 8"}]
            with pytest.raises(err.Timeout):
                await aio.call_tool("work", long, timeout=0.5, max_total_timeout=0.8)

    asyncio.run(main())
