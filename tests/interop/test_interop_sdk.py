"""Interop: the official ``mcp`` SDK (2.3.0) client against the generated weather
server over a real stdio pipe.

- ``mode="legacy"`` (initialize handshake at 2025-11-25, the SDK's only
  handshake version);
- 2024-11-05: the SDK has no option to request an older handshake revision
  (``ClientSession.initialize`` always sends ``LATEST_HANDSHAKE_VERSION``), so
  it is driven with ``RawServer``, and additionally with the SDK after
  monkeypatching ``mcp.client.session.LATEST_HANDSHAKE_VERSION``;
- ``mode="auto"`` (the default): the SDK probes ``server/discover`` first; a
  handshake-only server answers -32601 and the SDK falls back to
  ``initialize``; a dual-era server answers it and the SDK stays on
  2026-07-28. A logging proxy records the exact frames.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers import RawServer, import_package

from mcpgen.build import build_spec

mcp = pytest.importorskip("mcp")
from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
WEATHER_DIR = REPO / "examples" / "weather"

# Tool fields each handshake revision defines (docs/architecture.md).
FIELDS = {
    "2024-11-05": {"name", "description", "inputSchema"},
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
    "2026-07-28": {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
        "icons",
    },
}

PROXY = textwrap.dedent(
    """\
    import subprocess, sys, threading
    log = open(sys.argv[1], "ab", buffering=0)
    lock = threading.Lock()
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def record(prefix, line):
        with lock:
            log.write(prefix + line)

    def pump_in():
        for line in sys.stdin.buffer:
            record(b">> ", line)
            child.stdin.write(line)
            child.stdin.flush()
        record(b"-- ", b"stdin EOF\\n")
        child.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    for line in child.stdout:
        record(b"<< ", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    code = child.wait()
    record(b"-- ", b"server exited rc=%d\\n" % code)
    sys.exit(code)
    """
)


@pytest.fixture(scope="module")
def weather_gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = tmp_path_factory.mktemp("interop_weather") / "gen"
    result = build_spec(WEATHER_DIR / "tools.yaml", output=gen / "weather_mcp")
    assert result.ok, result.diagnostics
    return gen


@pytest.fixture(scope="module")
def published(weather_gen: Path) -> list[dict[str, Any]]:
    with import_package(weather_gen, "weather_mcp") as pkg:
        return json.loads(json.dumps(pkg.contract.TOOLS))


def expected_tools(published: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    return [{k: v for k, v in tool.items() if k in FIELDS[version]} for tool in published]


def server_params(weather_gen: Path, proxy_log: Path | None = None) -> StdioServerParameters:
    args = ["-m", "weather_mcp", "--impl", "weather_impl:Forecaster"]
    if proxy_log is not None:
        proxy = proxy_log.with_suffix(".py")
        proxy.write_text(PROXY, encoding="utf-8")
        args = [str(proxy), str(proxy_log), sys.executable, *args]
    return StdioServerParameters(
        command=sys.executable,
        args=args,
        env={"PYTHONPATH": f"{weather_gen}:{WEATHER_DIR}"},
        cwd=WEATHER_DIR,
    )


async def session_roundtrip(params: StdioServerParameters, mode: str) -> dict[str, Any]:
    """Connect, list, call get_forecast and current_temperature; return what the SDK saw."""
    async with Client(params, mode=mode, read_timeout_seconds=20) as client:
        listed = await client.list_tools()
        forecast = await client.call_tool("get_forecast", {"city": "Oslo", "days": 2})
        temp = await client.call_tool("current_temperature", {"city": "Oslo"})
        bad = await client.call_tool("get_forecast", {"city": "Oslo", "days": 99})
        return {
            "version": client.protocol_version,
            "server_info": client.server_info,
            "instructions": client.instructions,
            "tools": [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools],
            "next_cursor": listed.next_cursor,
            "forecast": forecast,
            "temp": temp,
            "bad": bad,
        }


def check_forecast(seen: dict[str, Any], *, structured: bool) -> None:
    forecast = seen["forecast"]
    assert forecast.is_error is False
    text = json.loads(forecast.content[0].text)
    assert text["city"] == "Oslo" and len(text["days"]) == 2
    if structured:
        assert forecast.structured_content == text
        assert forecast.structured_content["units"] == "metric"
        assert [d["date"] for d in forecast.structured_content["days"]] == [
            "2026-12-02",
            "2026-12-03",
        ]
    else:
        assert forecast.structured_content is None
    assert seen["temp"].is_error is False
    assert float(seen["temp"].content[0].text) == text["days"][0]["high_c"] + 0.5
    assert seen["bad"].is_error is True
    assert "days" in seen["bad"].content[0].text


def test_sdk_legacy_2025_11_25(weather_gen: Path, published: list[dict[str, Any]]) -> None:
    seen = anyio.run(session_roundtrip, server_params(weather_gen), "legacy")
    assert seen["version"] == "2025-11-25"
    assert seen["server_info"].name == "weather"
    assert seen["server_info"].title == "Weather"
    assert seen["server_info"].version == "1.4.0"
    assert seen["instructions"].startswith("Use get_forecast")
    assert seen["next_cursor"] is None
    assert seen["tools"] == expected_tools(published, "2025-11-25")
    check_forecast(seen, structured=True)


def test_sdk_auto_mode(weather_gen: Path, published: list[dict[str, Any]], tmp_path: Path) -> None:
    """``mode="auto"``: the SDK probes ``server/discover`` at 2026-07-28 first. A
    handshake-only server answers -32601 and the SDK must fall back to initialize;
    a dual-era server answers the probe and the SDK stays on 2026-07-28 with the
    per-request envelope. Either way the SDK sees the published descriptors."""
    log = tmp_path / "wire.log"
    seen = anyio.run(session_roundtrip, server_params(weather_gen, log), "auto")
    lines = log.read_bytes().splitlines()
    frames = [(line[:2], json.loads(line[3:])) for line in lines if line[:2] in (b">>", b"<<")]
    assert lines[-1] == b"-- server exited rc=0"
    # 1. the probe: server/discover with the 2026 envelope
    direction, probe = frames[0]
    assert direction == b">>" and probe["method"] == "server/discover"
    assert probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    direction, answer = frames[1]
    assert direction == b"<<" and answer["id"] == probe["id"]
    check_forecast(seen, structured=True)
    if "error" in answer:
        # 2a. handshake-only server: -32601, then the SDK falls back to initialize …
        assert answer["error"]["code"] in (-32601, -32600)
        direction, init = frames[2]
        assert direction == b">>" and init["method"] == "initialize"
        assert init["params"]["protocolVersion"] == "2025-11-25"
        assert frames[3][1]["result"]["protocolVersion"] == "2025-11-25"
        assert frames[4][1]["method"] == "notifications/initialized"
        # … and no later request carries the 2026 envelope
        for direction, frame in frames[2:]:
            if direction == b">>":
                assert "io.modelcontextprotocol/protocolVersion" not in (
                    frame.get("params", {}).get("_meta") or {}
                )
        assert seen["version"] == "2025-11-25"
        assert seen["tools"] == expected_tools(published, "2025-11-25")
    else:
        # 2b. dual-era server: a DiscoverResult; the SDK stays modern, no initialize
        result = answer["result"]
        assert "2026-07-28" in result["supportedVersions"]
        assert result["resultType"] == "complete"
        assert seen["version"] == "2026-07-28"
        assert not any(f.get("method") == "initialize" for d, f in frames if d == b">>")
        for direction, frame in frames:
            if direction == b">>" and "id" in frame:
                meta = frame["params"]["_meta"]
                assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            if direction == b"<<":
                assert frame.get("result", {}).get("resultType", "complete") == "complete"
        assert seen["tools"] == expected_tools(published, "2026-07-28")


def test_sdk_2024_11_05_by_patching_the_sdk(
    weather_gen: Path, published: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK always offers LATEST_HANDSHAKE_VERSION; there is no public option for an
    # older one, so this test patches the module constant that initialize() reads.
    import mcp.client.session

    monkeypatch.setattr(mcp.client.session, "LATEST_HANDSHAKE_VERSION", "2024-11-05")
    seen = anyio.run(session_roundtrip, server_params(weather_gen), "legacy")
    assert seen["version"] == "2024-11-05"
    assert seen["server_info"].title is None  # serverInfo.title is 2025-06-18+
    assert seen["tools"] == expected_tools(published, "2024-11-05")
    check_forecast(seen, structured=False)


def test_raw_2024_11_05(weather_gen: Path, published: list[dict[str, Any]]) -> None:
    with RawServer(
        "weather_mcp",
        "weather_impl:Forecaster",
        pythonpath=[weather_gen, WEATHER_DIR],
        cwd=WEATHER_DIR,
    ) as server:
        result = server.handshake("2024-11-05")
        assert result["protocolVersion"] == "2024-11-05"
        assert result["serverInfo"] == {"name": "weather", "version": "1.4.0"}
        tools = server.request("tools/list", {})["result"]["tools"]
        assert tools == expected_tools(published, "2024-11-05")
        forecast = server.call("get_forecast", {"city": "Oslo", "days": 1})["result"]
        assert "structuredContent" not in forecast
        assert json.loads(forecast["content"][0]["text"])["city"] == "Oslo"
        server.close()


def test_sdk_validates_structured_content_against_output_schema(weather_gen: Path) -> None:
    """The SDK client checks structuredContent against the listed outputSchema; our
    result must pass (a failure would surface as an exception or isError)."""

    async def run() -> Any:
        async with Client(server_params(weather_gen), mode="legacy") as client:
            await client.list_tools()  # the SDK caches output schemas from the listing
            return await client.call_tool("get_forecast", {"city": "Bergen", "units": "imperial"})

    result = anyio.run(run)
    assert result.is_error is False
    assert result.structured_content["units"] == "imperial"
    assert len(result.structured_content["days"]) == 3


def test_sdk_unicode_round_trip_and_unknown_tool(weather_gen: Path) -> None:
    city = 'Ca\u2028ro\u2029x\u0085y"\\\n🌞 Zürich'

    async def run() -> tuple[Any, Any]:
        async with Client(server_params(weather_gen), mode="legacy") as client:
            result = await client.call_tool("get_forecast", {"city": city, "days": 1})
            try:
                await client.call_tool("no_such_tool", {})
            except mcp.MCPError as exc:
                return result, exc
            return result, None

    result, error = anyio.run(run)
    assert result.is_error is False
    assert result.structured_content["city"] == city
    assert json.loads(result.content[0].text)["city"] == city
    assert error is not None and error.error.code == -32602
    assert "no_such_tool" in error.error.message
