"""The generated stdio server over real pipes: the weather example plus a small
extra contract whose handlers print to stdout and sleep asynchronously."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import RawServer, build_package, import_package

from mcpgen.build import build_spec

REPO = Path(__file__).resolve().parents[3]
WEATHER_DIR = REPO / "examples" / "weather"
WEATHER_IMPL = "weather_impl:Forecaster"

EXTRA_PACKAGE = "stdio_extra_mcp"
EXTRA_SPEC = """\
mcpgen: 1
package: stdio_extra_mcp
server: {name: extra, version: 2.0.0}
tools:
  - name: noisy
    description: prints to stdout in every way it can, then answers
    parameters:
      - {name: text, type: string}
  - name: nap
    description: sleeps asynchronously
    parameters:
      - {name: seconds, type: number}
      - {name: tag, type: string, required: false}
    callback: named
    async: true
  - name: quick
    description: answers at once
    parameters:
      - {name: tag, type: string}
    async: true
  - name: echo
    description: echoes its argument (sync)
    parameters:
      - {name: n, type: integer}
    returns: integer
"""

EXTRA_IMPL = """\
import asyncio
import os
import sys

from stdio_extra_mcp import ExtraServer


class Impl(ExtraServer):
    def noisy(self, text):
        print("PRINTED", text)
        print("PRINTED without newline", end="")
        sys.stdout.write("WRITTEN to sys.stdout\\n")
        sys.stdout.flush()
        os.write(1, b"RAW fd-1 write\\n")
        return "quiet " + text

    async def nap(self, args):
        await asyncio.sleep(args["seconds"])
        return "woke " + args.get("tag", "")

    async def quick(self, tag):
        return "quick " + tag

    def echo(self, n):
        return n
"""


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def weather_gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = tmp_path_factory.mktemp("stdio_weather") / "gen"
    result = build_spec(WEATHER_DIR / "tools.yaml", output=gen / "weather_mcp")
    assert result.ok, result.diagnostics
    return gen


@pytest.fixture(scope="module")
def weather_tools(weather_gen: Path) -> list[dict[str, Any]]:
    with import_package(weather_gen, "weather_mcp") as pkg:
        return json.loads(json.dumps(pkg.contract.TOOLS))


@pytest.fixture
def weather(weather_gen: Path) -> Iterator[RawServer]:
    with RawServer(
        "weather_mcp", WEATHER_IMPL, pythonpath=[weather_gen, WEATHER_DIR], cwd=WEATHER_DIR
    ) as server:
        yield server


@pytest.fixture(scope="module")
def extra_paths(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("stdio_extra")
    gen = build_package(EXTRA_SPEC, tmp, EXTRA_PACKAGE)
    impl_dir = tmp / "impl"
    impl_dir.mkdir()
    (impl_dir / "stdio_extra_impl.py").write_text(EXTRA_IMPL, encoding="utf-8")
    return [gen, impl_dir]


@pytest.fixture
def extra(extra_paths: list[Path]) -> Iterator[RawServer]:
    with RawServer(EXTRA_PACKAGE, "stdio_extra_impl:Impl", pythonpath=extra_paths) as server:
        yield server


def assert_all_frames(server: RawServer) -> None:
    """Every line the server wrote to stdout is one JSON-RPC 2.0 message."""
    for line in server.raw_lines:
        assert line.endswith(b"\n")
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", line
        assert ("result" in message) != ("error" in message), line
        assert "id" in message, line


# --------------------------------------------------------------------------- weather


def test_handshake(weather: RawServer) -> None:
    result = weather.handshake("2025-11-25")
    assert result["protocolVersion"] == "2025-11-25"
    # other capabilities (tasks, logging) may join; tools is fixed
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["serverInfo"] == {"name": "weather", "version": "1.4.0", "title": "Weather"}
    assert result["instructions"] == (
        "Use get_forecast for multi-day forecasts and current_conditions for now."
    )
    assert weather.request("ping")["result"] == {}
    weather.close()
    assert_all_frames(weather)


def test_list(weather: RawServer, weather_tools: list[dict[str, Any]]) -> None:
    weather.handshake()
    reply = weather.request("tools/list", {})
    assert reply["result"] == {"tools": weather_tools}
    weather.close()


def test_list_2024_11_05(weather: RawServer, weather_tools: list[dict[str, Any]]) -> None:
    assert weather.handshake("2024-11-05")["protocolVersion"] == "2024-11-05"
    tools = weather.request("tools/list")["result"]["tools"]
    assert tools == [
        {k: t[k] for k in ("name", "description", "inputSchema") if k in t} for t in weather_tools
    ]
    weather.close()


def test_call_each_tool(weather: RawServer) -> None:
    weather.handshake()
    forecast = weather.call("get_forecast", {"city": "Oslo", "days": "2"})["result"]
    assert forecast["isError"] is False
    structured = forecast["structuredContent"]
    assert structured["city"] == "Oslo" and structured["units"] == "metric"
    assert [d["date"] for d in structured["days"]] == ["2026-12-02", "2026-12-03"]
    assert json.loads(forecast["content"][0]["text"]) == structured

    temp = weather.call("current_temperature", {"city": "Oslo"})["result"]
    assert temp["isError"] is False
    assert float(temp["content"][0]["text"]) == structured["days"][0]["high_c"] + 0.5

    blank = weather.call("current_temperature", {"city": " "})["result"]
    assert blank == {
        "content": [{"type": "text", "text": "city must not be blank"}],
        "isError": True,
    }

    alerts = weather.call(
        "alerts.search", {"region": {"country": "NO"}, "severity": ["minor"], "max-results": "5"}
    )
    assert json.loads(alerts["result"]["content"][0]["text"]) == [
        {"id": "NO-2", "severity": "minor", "headline": "Frost overnight"}
    ]
    bad_region = weather.call("alerts.search", {"region": {"country": "Norway"}})["result"]
    assert bad_region["isError"] is True and "country" in bad_region["content"][0]["text"]

    args = {"station": "ENGM", "temperature_c": -3.5, "at": "2026-12-02T10:00:00Z"}
    first = weather.call("report_observation", args)["result"]
    second = weather.call("report_observation", args)["result"]
    assert first["content"][0]["text"] == "obs-1"
    assert second["content"][0]["text"] == "obs-2"
    bad_station = weather.call("report_observation", {**args, "station": "x"})["result"]
    assert bad_station["isError"] is True and "station" in bad_station["content"][0]["text"]

    unknown = weather.call("nope", {})
    assert unknown["error"]["code"] == -32602
    weather.close()
    assert_all_frames(weather)


def test_alerts_search_default_max_results(weather: RawServer) -> None:
    weather.handshake()
    alerts = weather.call("alerts.search", {"region": {"country": "NO"}})["result"]
    weather.close()
    assert alerts["isError"] is False, alerts
    assert len(json.loads(alerts["content"][0]["text"])) == 2


def test_clean_exit_on_eof_without_any_request(weather: RawServer) -> None:
    assert weather.close() == 0
    assert weather.raw_lines == []


def test_pipelined_requests_answered_with_matching_ids(weather: RawServer) -> None:
    weather.handshake()
    sent: dict[Any, str] = {}
    batch = b""
    for i in range(60):
        request_id: Any = i if i % 2 else f"s-{i}"
        kind = ("ping", "list", "temp", "alerts", "forecast")[i % 5]
        if kind == "ping":
            message = {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
        elif kind == "list":
            message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
        else:
            name, arguments = {
                "temp": ("current_temperature", {"city": f"c{i}"}),
                "alerts": ("alerts.search", {"region": {"country": "SE"}, "max-results": 1}),
                "forecast": ("get_forecast", {"city": f"c{i}", "days": 1}),
            }[kind]
            message = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        sent[request_id] = kind
        batch += json.dumps(message).encode() + b"\n"
    weather.send(batch)  # all 60 in one write
    replies = [weather.recv() for _ in sent]
    assert sorted(map(str, (r["id"] for r in replies))) == sorted(map(str, sent))
    for reply in replies:
        kind = sent[reply["id"]]
        assert "result" in reply, reply
        if kind == "list":
            assert len(reply["result"]["tools"]) == 4
        elif kind != "ping":
            assert reply["result"]["isError"] is False
    weather.close()
    assert weather.no_more_frames()
    assert_all_frames(weather)


def test_garbage_lines_do_not_stop_the_server(weather: RawServer) -> None:
    weather.handshake()
    weather.send(b"\n")  # blank: ignored
    weather.send(b"{broken\n")
    assert weather.recv()["error"]["code"] == -32700
    weather.send(b'"just a string"\n')
    assert weather.recv()["error"]["code"] == -32600
    assert weather.request("ping")["result"] == {}
    weather.close()


def test_oversized_frame_is_refused_and_skipped(weather_gen: Path) -> None:
    with RawServer(
        "weather_mcp",
        WEATHER_IMPL,
        pythonpath=[weather_gen, WEATHER_DIR],
        cwd=WEATHER_DIR,
        extra_args=["--max-message-bytes", "4096"],
    ) as server:
        server.handshake()
        huge = (
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "current_temperature", "arguments": {"city": "x" * 100_000}},
                }
            ).encode()
            + b"\n"
        )
        server.send(huge)
        refused = server.recv()
        assert refused["id"] is None and refused["error"]["code"] == -32600
        assert server.call("current_temperature", {"city": "Oslo"})["result"]["isError"] is False
        server.close()


def test_invalid_utf8_and_crlf(weather: RawServer) -> None:
    weather.handshake()
    weather.send(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}\n')
    assert weather.recv()["error"]["code"] == -32700
    weather.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n')  # CRLF: JSON whitespace
    assert weather.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    weather.close()


# --------------------------------------------------------------------------- extra contract


def test_printing_handler_does_not_corrupt_stdout(extra: RawServer) -> None:
    extra.handshake()
    for i in range(3):
        reply = extra.call("noisy", {"text": f"t{i}"})
        assert reply["result"] == {
            "content": [{"type": "text", "text": f"quiet t{i}"}],
            "isError": False,
        }
    assert extra.request("ping")["result"] == {}
    extra.close()
    assert_all_frames(extra)
    stdout = b"".join(extra.raw_lines)
    assert b"PRINTED" not in stdout and b"RAW" not in stdout and b"WRITTEN" not in stdout
    err = extra.stderr
    assert "PRINTED t0" in err and "WRITTEN to sys.stdout" in err and "RAW fd-1 write" in err


def test_async_call_answers_while_slow_call_in_flight(extra: RawServer) -> None:
    extra.handshake()
    started = time.perf_counter()
    extra.send(
        {
            "jsonrpc": "2.0",
            "id": "slow",
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 1.5, "tag": "late"}},
        }
    )
    extra.send(
        {
            "jsonrpc": "2.0",
            "id": "fast",
            "method": "tools/call",
            "params": {"name": "quick", "arguments": {"tag": "now"}},
        }
    )
    extra.send(
        {
            "jsonrpc": "2.0",
            "id": "sync",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"n": "7"}},
        }
    )
    extra.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
    first_three = [extra.recv() for _ in range(3)]
    early = time.perf_counter() - started
    assert {r["id"] for r in first_three} == {"fast", "sync", "ping"}
    assert early < 1.0, early
    by_id = {r["id"]: r for r in first_three}
    assert by_id["fast"]["result"]["content"][0]["text"] == "quick now"
    assert by_id["sync"]["result"]["content"][0]["text"] == "7"
    slow = extra.recv(timeout=5)
    assert slow["id"] == "slow"
    assert slow["result"]["content"][0]["text"] == "woke late"
    assert time.perf_counter() - started >= 1.4
    extra.close()


def test_many_concurrent_async_calls(extra: RawServer) -> None:
    extra.handshake()
    started = time.perf_counter()
    for i in range(20):
        extra.send(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "nap", "arguments": {"seconds": 0.5, "tag": str(i)}},
            }
        )
    replies = {r["id"]: r for r in (extra.recv() for _ in range(20))}
    assert time.perf_counter() - started < 3.0  # not 20 × 0.5 s
    assert all(replies[i]["result"]["content"][0]["text"] == f"woke {i}" for i in range(20))
    extra.close()


def test_in_flight_async_call_finishes_after_eof(extra: RawServer) -> None:
    extra.handshake()
    extra.send(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 0.3}},
        }
    )
    assert extra.close() == 0
    assert [json.loads(line)["id"] for line in extra.raw_lines] == [0, 9]


STARTUP_PROBE = r"""
import json, sys
from weather_mcp.server import BINDINGS, WeatherServer, build_app

def handler(self, *args, **kwargs):
    return None

Impl = type("Impl", (WeatherServer,), {b.method: handler for b in BINDINGS})
app = build_app(Impl())
seen = {"bound": sorted(app.tools), "rust_regex_at_start": "pydantic_core" in sys.modules,
        "compiled_at_start": sorted(n for n, t in app.tools.items()
                                    if t.validate_input._compiled is not None)}
app.tools["current_temperature"].check_arguments({"city": "Oslo"})
seen["compiled_after_one_call"] = sorted(
    n for n, t in app.tools.items() if t.validate_input._compiled is not None)
seen["rust_regex_after_one_call"] = "pydantic_core" in sys.modules
try:
    app.tools["report_observation"].check_arguments({"station": "oslo", "temperature_c": 1, "at": "2026-12-03T08:00:00Z"})
except Exception as exc:
    seen["refused"] = type(exc).__name__
seen["rust_regex_after_a_pattern"] = "pydantic_core" in sys.modules
print(json.dumps(seen))
"""


def test_start_up_compiles_no_validator_and_loads_no_regex_engine() -> None:
    """Start-up binds the tools and compiles nothing: each tool's validators are
    compiled by its first call, and the Rust regex engine (pydantic-core, ~45 ms to
    import) is loaded by the first pattern compiled. Before, ``build_app`` compiled
    every schema and importing the runtime imported pydantic-core."""
    env = {**os.environ, "PYTHONPATH": str(WEATHER_DIR)}
    done = subprocess.run(
        [sys.executable, "-c", STARTUP_PROBE],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    seen = json.loads(done.stdout)
    assert seen["bound"] == [
        "alerts.search",
        "current_temperature",
        "get_forecast",
        "report_observation",
    ]
    assert seen["compiled_at_start"] == [] and not seen["rust_regex_at_start"]
    assert seen["compiled_after_one_call"] == ["current_temperature"]
    assert not seen["rust_regex_after_one_call"]
    assert seen["refused"] == "ToolError" and seen["rust_regex_after_a_pattern"]
