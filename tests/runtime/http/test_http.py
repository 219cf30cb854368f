"""``--transport http``: the generated weather server over stateless Streamable HTTP
(mcpgen's own ASGI app on uvicorn, mcpgen's tool table and call path).

Differential: the same package is started once over stdio (mcpgen's own
runtime, driven raw) and once over HTTP (a subprocess on a free loopback port,
driven by the SDK's streamable HTTP client and by plain HTTP POSTs); the same
calls must give the same tools and the same ``CallToolResult``s. Further
tests: ``--workers 2``, the 2026-07-28 era over HTTP, a missing uvicorn, argument
checks, and the call path (timeouts, sync/async, internal errors) in process.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fixtures.asgi_client import rpc as asgi_rpc
from fixtures.http_server import HttpServer, free_port, http_server
from helpers import RawServer, build_package, import_package

from mcpgen.build import build_spec

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
import httpx2
from mcp import Client
from mcp.shared.exceptions import MCPError

REPO = Path(__file__).resolve().parents[3]
WEATHER_DIR = REPO / "examples" / "weather"
MODERN = "2026-07-28"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

# (tool, arguments): every tool, coercion, defaults, a ToolError, invalid arguments
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_forecast", {"city": "Oslo", "days": 2}),
    ("get_forecast", {"city": "Lima", "days": "4", "units": "imperial"}),
    ("get_forecast", {"city": "Oslo", "days": 99}),  # out of range → isError
    ("get_forecast", {"days": 2}),  # missing required → isError
    ("get_forecast", {"city": "Oslo", "colour": "red"}),  # unknown argument → isError
    ("current_temperature", {"city": "Oslo"}),
    ("current_temperature", {"city": "   "}),  # ToolError from the handler
    ("current_temperature", {"city": 7}),  # wrong type → isError
    ("alerts.search", {"region": {"country": "NO"}}),  # async handler
    ("alerts.search", {"region": {"country": "NO"}, "severity": ["minor"], "max-results": "1"}),
    ("alerts.search", {"region": {"country": "norway"}}),  # $ref'd schema fails → isError
    (
        "report_observation",
        {"station": "ENGM", "temperature_c": "-3.5", "at": "2026-01-02T03:04:05Z"},
    ),
    ("report_observation", {"station": "engm", "temperature_c": 1, "at": "2026-01-02T03:04:05Z"}),
]
UNKNOWN_TOOL = ("no_such_tool", {"x": 1})


# -- fixtures and helpers ------------------------------------------------------------


@pytest.fixture(scope="module")
def weather_gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = tmp_path_factory.mktemp("http_weather") / "gen"
    result = build_spec(WEATHER_DIR / "tools.yaml", output=gen / "weather_mcp")
    assert result.ok, result.diagnostics
    return gen


@pytest.fixture(scope="module")
def published(weather_gen: Path) -> list[dict[str, Any]]:
    with import_package(weather_gen, "weather_mcp") as pkg:
        return json.loads(json.dumps(pkg.contract.TOOLS))


@contextlib.contextmanager
def weather_http(gen: Path, *extra: str) -> Iterator[HttpServer]:
    with http_server(
        "weather_mcp", *extra, pythonpath=[gen, WEATHER_DIR], cwd=WEATHER_DIR, log_dir=gen.parent
    ) as server:
        yield server


def stdio_session(gen: Path) -> dict[str, Any]:
    """Everything the differential needs, from mcpgen's stdio server."""
    with RawServer(
        "weather_mcp", "weather_impl:Forecaster", pythonpath=[gen, WEATHER_DIR], cwd=WEATHER_DIR
    ) as raw:
        init = raw.handshake("2025-11-25")
        tools = raw.request("tools/list")["result"]["tools"]
        calls = [raw.call(name, args)["result"] for name, args in CALLS]
        unknown = raw.call(*UNKNOWN_TOOL)["error"]
        raw.close()
    return {"init": init, "tools": tools, "calls": calls, "unknown": unknown}


async def sdk_session(url: str, mode: str) -> dict[str, Any]:
    """The same session through the official SDK's streamable HTTP client."""
    async with Client(url, mode=mode, read_timeout_seconds=20) as client:
        listed = await client.list_tools()
        calls = [
            (await client.call_tool(name, args)).model_dump(
                by_alias=True, exclude_none=True, mode="json"
            )
            for name, args in CALLS
        ]
        with pytest.raises(MCPError) as unknown:
            await client.call_tool(*UNKNOWN_TOOL)
        return {
            "version": client.protocol_version,
            "server_info": client.server_info,
            "instructions": client.instructions,
            "tools": [
                t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools
            ],
            "next_cursor": listed.next_cursor,
            "calls": calls,
            "unknown": {"code": unknown.value.code, "message": unknown.value.message},
        }


def normalise(result: dict[str, Any]) -> dict[str, Any]:
    """A CallToolResult without what only the 2026 era adds (resultType, the serverInfo stamp)."""
    out = {k: v for k, v in result.items() if k != "resultType"}
    meta = {k: v for k, v in (out.pop("_meta", None) or {}).items() if k != SERVER_INFO_KEY}
    if meta:
        out["_meta"] = meta
    out.setdefault("isError", False)
    return out


def post(
    url: str, body: dict[str, Any], version: str, **headers: str
) -> tuple[int, dict[str, Any]]:
    """One raw JSON-RPC POST (JSON or SSE answer), no SDK client involved."""
    response = httpx2.post(
        url,
        json=body,
        headers={
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": version,
            **headers,
        },
        timeout=20,
    )
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = data[-1]
    return response.status_code, json.loads(text)


# -- the differential ----------------------------------------------------------------


def test_http_matches_stdio_legacy(weather_gen: Path, published: list[dict[str, Any]]) -> None:
    stdio = stdio_session(weather_gen)
    with weather_http(weather_gen) as server:
        http = anyio.run(sdk_session, server.url, "legacy")
        # the SDK client parses into models; the raw wire must hold our exact descriptors
        status, raw_list = post(
            server.url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "2025-11-25"
        )
    assert status == 200
    # the listed tools: the published descriptors, on both transports, untouched
    assert stdio["tools"] == published
    assert raw_list["result"]["tools"] == published
    for wire, ours in zip(raw_list["result"]["tools"], published, strict=True):
        # properties order is the positional order: it must survive the SDK
        assert list(wire["inputSchema"]["properties"]) == list(ours["inputSchema"]["properties"])
    assert http["tools"] == published
    assert http["next_cursor"] is None
    # the handshake
    assert http["version"] == stdio["init"]["protocolVersion"] == "2025-11-25"
    assert (
        http["server_info"].model_dump(by_alias=True, exclude_none=True)
        == stdio["init"]["serverInfo"]
    )
    assert http["instructions"] == stdio["init"]["instructions"]
    # every call: the same CallToolResult
    for (name, args), ours, theirs in zip(CALLS, stdio["calls"], http["calls"], strict=True):
        assert normalise(theirs) == normalise(ours), (name, args)
    assert [c.get("isError", False) for c in stdio["calls"]] == [
        False,
        False,
        True,
        True,
        True,
        False,
        True,
        True,
        False,
        False,
        True,
        False,
        True,
    ]
    # unknown tool: JSON-RPC -32602 with the same message
    assert http["unknown"] == {"code": -32602, "message": stdio["unknown"]["message"]}
    assert stdio["unknown"]["code"] == -32602


def test_http_modern_era_matches_stdio(weather_gen: Path, published: list[dict[str, Any]]) -> None:
    """The SDK's default ``auto`` mode finds 2026-07-28 on the HTTP server (the SDK
    serves the stateless era); results equal the stdio ones but for the era's envelope."""
    stdio = stdio_session(weather_gen)
    with weather_http(weather_gen) as server:
        http = anyio.run(sdk_session, server.url, "auto")
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        status, raw_list = post(
            server.url,
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
            MODERN,
            **{"mcp-method": "tools/list"},
        )
        status_call, raw_call = post(
            server.url,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "current_temperature",
                    "arguments": {"city": "Oslo"},
                    "_meta": meta,
                },
            },
            MODERN,
            **{"mcp-method": "tools/call", "mcp-name": "current_temperature"},
        )
    assert http["version"] == MODERN
    no_execution = [{k: v for k, v in t.items() if k != "execution"} for t in published]
    assert http["tools"] == no_execution
    assert status == 200 and raw_list["result"]["tools"] == no_execution
    assert raw_list["result"]["resultType"] == "complete"
    assert {"ttlMs", "cacheScope"} <= set(raw_list["result"])
    assert status_call == 200 and raw_call["result"]["resultType"] == "complete"
    assert raw_call["result"]["_meta"][SERVER_INFO_KEY]["name"] == "weather"
    for (name, args), ours, theirs in zip(CALLS, stdio["calls"], http["calls"], strict=True):
        assert normalise(theirs) == normalise(ours), (name, args)
    assert http["unknown"]["code"] == -32602


def test_http_json_response(weather_gen: Path, published: list[dict[str, Any]]) -> None:
    """``--json-response``: each POST is answered with application/json, not SSE."""
    with weather_http(weather_gen, "--json-response") as server:
        response = httpx2.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
            },
            timeout=20,
        )
        http = anyio.run(sdk_session, server.url, "legacy")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["tools"] == published
    assert http["tools"] == published
    assert http["calls"][0]["structuredContent"]["city"] == "Oslo"


def _worker_pids(parent: int) -> list[int]:
    """Children of ``parent`` that are uvicorn worker processes (multiprocessing spawn)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        if ppid == parent and b"spawn_main" in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_http_two_workers_serve_one_contract(
    weather_gen: Path, published: list[dict[str, Any]]
) -> None:
    stdio = stdio_session(weather_gen)

    async def many_clients(url: str) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []

        async def one() -> None:
            results.append(await sdk_session(url, "legacy"))

        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(one)
        return results

    with weather_http(weather_gen, "--workers", "2") as server:
        deadline = time.monotonic() + 20
        while len(_worker_pids(server.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_worker_pids(server.proc.pid)) == 2, server.output
        sessions = anyio.run(many_clients, server.url)
        code = server.stop()
    assert code == 0, server.output
    assert len(sessions) == 4
    # several processes on the in-process task store serve no tasks, so no tool
    # promises them (`execution`); the rest of each descriptor is the contract's
    no_execution = [{k: v for k, v in t.items() if k != "execution"} for t in published]
    for http in sessions:
        assert http["tools"] == no_execution
        for (name, args), ours, theirs in zip(CALLS, stdio["calls"], http["calls"], strict=True):
            if name == "report_observation" and not ours.get("isError"):
                # ids count per process: which worker took the call decides the number
                assert theirs["content"][0]["text"].startswith("obs-")
                continue
            assert normalise(theirs) == normalise(ours), (name, args)


# -- the command line ------------------------------------------------------------------


def test_http_flags_need_http_transport(weather_gen: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "weather_mcp", "--port", "9"],
        cwd=WEATHER_DIR,
        env={**os.environ, "PYTHONPATH": f"{weather_gen}{os.pathsep}{WEATHER_DIR}"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    assert "--port need --transport http" in proc.stderr


def test_missing_uvicorn_is_a_clear_error(weather_gen: Path, tmp_path: Path) -> None:
    # a stand-in `uvicorn` package that cannot be imported, first on the path
    fake = tmp_path / "no_uvicorn" / "uvicorn"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named uvicorn (simulated)')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "weather_mcp", "--transport", "http", "--port", str(free_port())],
        cwd=WEATHER_DIR,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(fake.parent), str(weather_gen), str(WEATHER_DIR)]),
        },
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'mcpgen-runtime[http]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_http_does_not_import_the_sdk(weather_gen: Path) -> None:
    """Serving HTTP needs uvicorn only: building the app imports no MCP SDK nor Starlette
    (anyio may come with uvicorn itself)."""
    code = (
        "import sys, weather_mcp, weather_impl, mcpgen_runtime.http.server as h;"
        "h.build_asgi_app(weather_mcp.server.build_app(weather_impl.Forecaster()));"
        "import uvicorn.protocols.http.h11_impl;"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'mcp_types', 'starlette', 'sse_starlette')}))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=WEATHER_DIR,
        env={**os.environ, "PYTHONPATH": f"{weather_gen}{os.pathsep}{WEATHER_DIR}"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert proc.stdout.strip() == "[]", proc.stdout


def test_stdio_does_not_import_the_sdk(weather_gen: Path) -> None:
    """The runtime imports the SDK only on the HTTP path (stdlib + pydantic otherwise)."""
    code = (
        "import sys, weather_mcp, weather_mcp.__main__, mcpgen_runtime.http.server;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'mcp_types', 'uvicorn', 'starlette', 'anyio')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=WEATHER_DIR,
        env={**os.environ, "PYTHONPATH": f"{weather_gen}{os.pathsep}{WEATHER_DIR}"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert proc.stdout.strip() == "[]"


# -- the call path in process (the ASGI app driven without a socket) -----------------

EXTRA_SPEC = """\
mcpgen: 1
package: http_extra_mcp
server: {name: http-extra, version: 0.1.0}
tools:
  - name: slow_sync
    parameters: [{name: seconds, type: number}]
    returns: string
    timeout: 0.3
  - name: slow_async
    parameters: [{name: seconds, type: number}]
    returns: string
    async: true
    timeout: 0.3
  - name: boom
    description: raises an unexpected exception
    returns: string
  - name: bad_output
    output_schema: {type: object, properties: {n: {type: integer}}, required: [n]}
  - name: blocks
    returns: content
  - name: echo
    parameters: [{name: value, type: integer, required: false}]
    returns: integer
"""


@pytest.fixture(scope="module")
def extra_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    gen = build_package(EXTRA_SPEC, tmp_path_factory.mktemp("http_extra"), "http_extra_mcp")
    with import_package(gen, "http_extra_mcp") as pkg:
        import asyncio

        class Impl(pkg.HttpExtraServer):  # type: ignore[misc, name-defined]
            def slow_sync(self, seconds: float) -> str:
                time.sleep(seconds)
                return "sync done"

            async def slow_async(self, seconds: float) -> str:
                await asyncio.sleep(seconds)
                return "async done"

            def boom(self) -> str:
                raise RuntimeError("secret detail")

            def bad_output(self, args: Any) -> Any:
                return {"n": "not an int"}

            def blocks(self) -> list[dict[str, Any]]:
                return [
                    {"type": "text", "text": "hi", "annotations": {"priority": 0.5}},
                    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                ]

            def echo(self, args: Any) -> int:
                return int(args.get("value", -1))

        yield pkg.server.build_app(Impl())


def _call(app: Any, name: str, args: dict[str, Any] | None = None) -> Any:
    """One tools/call through the ASGI app; its result, or its JSON-RPC error."""
    from mcpgen_runtime.http.server import build_asgi_app

    params: dict[str, Any] = {"name": name}
    if args is not None:
        params["arguments"] = args
    answer = asgi_rpc(build_asgi_app(app), "tools/call", params)
    return answer["result"] if "result" in answer else answer["error"]


def test_sync_handler_timeout(extra_app: Any) -> None:
    assert _call(extra_app, "slow_sync", {"seconds": 0.01})["content"][0]["text"] == "sync done"
    started = time.monotonic()
    late = _call(extra_app, "slow_sync", {"seconds": 1.0})
    assert time.monotonic() - started < 0.9
    assert late["isError"] is True and "timed out" in late["content"][0]["text"]
    time.sleep(0.8)  # let the abandoned daemon thread finish before the leak check


def test_async_handler_timeout(extra_app: Any) -> None:
    assert _call(extra_app, "slow_async", {"seconds": 0.01})["content"][0]["text"] == "async done"
    late = _call(extra_app, "slow_async", {"seconds": 2})
    assert late["isError"] is True and "timed out" in late["content"][0]["text"]


def test_handler_exception_hides_its_text(
    extra_app: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    result = _call(extra_app, "boom")
    assert result["isError"] is True
    assert "boom" in result["content"][0]["text"]
    assert "secret detail" not in json.dumps(result)
    assert "secret detail" in capfd.readouterr().err


def test_bad_structured_output_is_a_tool_error(extra_app: Any) -> None:
    result = _call(extra_app, "bad_output", {})
    assert result == {
        "content": [
            {
                "type": "text",
                "text": "Tool 'bad_output' produced an invalid result: it "
                "does not match the tool's output schema.",
            }
        ],
        "isError": True,
    }


def test_content_blocks_and_coercion(extra_app: Any) -> None:
    blocks = _call(extra_app, "blocks")
    assert blocks["content"] == [
        {"type": "text", "text": "hi", "annotations": {"priority": 0.5}},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ]
    assert _call(extra_app, "echo", {"value": "41"})["content"][0]["text"] == "41"
    assert _call(extra_app, "echo")["content"][0]["text"] == "-1"  # arguments omitted


def test_unknown_cursor_is_invalid_params(extra_app: Any) -> None:
    from mcpgen_runtime.http.server import build_asgi_app

    answer = asgi_rpc(build_asgi_app(extra_app), "tools/list", {"cursor": "abc"})
    assert answer["error"]["code"] == -32602


# -- ctx over HTTP: progress, logs and cancellation reach the client ---------------------

CTX_SPEC = """\
mcpgen: 1
package: http_ctx_mcp
server: {name: http-ctx, version: 0.1.0, implementation: "http_ctx_impl:Impl"}
tools:
  - name: steps_sync
    parameters: [{name: steps, type: integer}, {name: pause, type: number, default: 0}]
    callback: positional
    returns: string
  - name: steps_async
    parameters: [{name: steps, type: integer}, {name: pause, type: number, default: 0}]
    callback: positional
    returns: string
    async: true
  - name: until_cancelled
    parameters: [{name: marker, type: string}]
    callback: positional
    returns: string
  - name: until_timeout
    parameters: [{name: marker, type: string}]
    callback: positional
    returns: string
    timeout: 0.3
"""

CTX_IMPL = """
import asyncio, time
from pathlib import Path
from http_ctx_mcp import Context, HttpCtxServer


def _wait_for_cancel(ctx: Context, marker: str) -> str:
    ctx.report_progress(1, message="waiting")
    deadline = time.monotonic() + 20
    while not ctx.cancelled and time.monotonic() < deadline:
        time.sleep(0.01)
    Path(marker).write_text("cancelled" if ctx.cancelled else "not cancelled")
    return "stopped"


class Impl(HttpCtxServer):
    def steps_sync(self, steps: int, pause: float, *, ctx: Context = Context.NONE) -> str:
        ctx.info({"msg": "starting", "steps": steps})
        for step in range(steps):
            time.sleep(pause)
            ctx.report_progress(step + 1, steps, f"step {step + 1}")
        ctx.debug("done")
        return f"did {steps}"

    async def steps_async(self, steps: int, pause: float, *, ctx: Context = Context.NONE) -> str:
        ctx.info({"msg": "starting", "steps": steps})
        for step in range(steps):
            await asyncio.sleep(pause)
            ctx.report_progress(step + 1, steps, f"step {step + 1}")
        ctx.debug("done")
        return f"did {steps}"

    def until_cancelled(self, marker: str, *, ctx: Context = Context.NONE) -> str:
        return _wait_for_cancel(ctx, marker)

    def until_timeout(self, marker: str, *, ctx: Context = Context.NONE) -> str:
        return _wait_for_cancel(ctx, marker)
"""


@pytest.fixture(scope="module")
def ctx_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("http_ctx")
    gen = build_package(CTX_SPEC, root, "http_ctx_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "http_ctx_impl.py").write_text(CTX_IMPL, encoding="utf-8")
    with http_server("http_ctx_mcp", pythonpath=[gen, impl], cwd=root, log_dir=root) as server:
        yield server


def _modern_meta(**extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        **extra,
    }


def sse_messages(
    url: str, body: dict[str, Any], version: str, **headers: str
) -> list[dict[str, Any]]:
    """Every JSON-RPC message of one POST's answer, in wire order (SSE or JSON)."""
    response = httpx2.post(
        url,
        json=body,
        headers={
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": version,
            **headers,
        },
        timeout=20,
    )
    assert response.status_code == 200, response.text
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        return [response.json()]
    return [
        json.loads(line[5:])
        for line in response.text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


def _progress_and_logs(
    url: str,
    mode: str,
    tool: str,
    *,
    log_level: str | None = None,
    set_level: str | None = None,
    meta: dict[str, Any] | None = None,
) -> tuple[str, list[tuple[float, float | None, str | None]], list[dict[str, Any]], str]:
    """One call through the SDK's streamable HTTP client: (era, progress, logs, result text)."""
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[dict[str, Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def on_log(params: Any) -> None:
        logs.append(params.model_dump(exclude_none=True, mode="json"))

    async def go() -> tuple[str, str]:
        async with Client(
            url, mode=mode, read_timeout_seconds=20, logging_callback=on_log, log_level=log_level
        ) as client:  # type: ignore[arg-type]
            if set_level is not None:
                await client.set_logging_level(set_level)  # type: ignore[arg-type]
            result = await client.call_tool(
                tool, {"steps": 3}, progress_callback=on_progress, meta=meta
            )  # type: ignore[arg-type]
            await anyio.sleep(0.1)  # callbacks run as tasks: let the last ones finish
            return str(client.protocol_version), result.content[0].text  # type: ignore[union-attr]

    version, text = anyio.run(go)
    return version, progress, logs, text


STEPS = [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
STARTING = {"level": "info", "logger": "http-ctx", "data": {"msg": "starting", "steps": 3}}
DONE = {"level": "debug", "logger": "http-ctx", "data": "done"}


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("tool", ["steps_sync", "steps_async"])
def test_ctx_progress_and_logs_legacy(ctx_server: HttpServer, tool: str) -> None:
    """Handshake era: progress for the request's token; logging/setLevel is accepted
    but a stateless server cannot keep it, so every level is sent (the SDK's rule)."""
    version, progress, logs, text = _progress_and_logs(
        ctx_server.url, "legacy", tool, set_level="info"
    )
    assert version == "2025-11-25"
    assert text == "did 3"
    assert progress == STEPS
    assert logs == [STARTING, DONE]
    # the call's own _meta log-level key filters
    _, _, logs, _ = _progress_and_logs(
        ctx_server.url, "legacy", tool, meta={"io.modelcontextprotocol/logLevel": "info"}
    )
    assert logs == [STARTING]
    _, _, logs, _ = _progress_and_logs(
        ctx_server.url, "legacy", tool, meta={"io.modelcontextprotocol/logLevel": "warning"}
    )
    assert logs == []


@pytest.mark.parametrize("tool", ["steps_sync", "steps_async"])
def test_ctx_progress_and_logs_modern(ctx_server: HttpServer, tool: str) -> None:
    """2026-07-28: logs only when the request opts in (io.modelcontextprotocol/logLevel)."""
    version, progress, logs, text = _progress_and_logs(ctx_server.url, "auto", tool)
    assert version == MODERN
    assert text == "did 3"
    assert progress == STEPS
    assert logs == []
    _, progress, logs, _ = _progress_and_logs(ctx_server.url, "auto", tool, log_level="info")
    assert progress == STEPS
    assert logs == [STARTING]
    _, _, logs, _ = _progress_and_logs(ctx_server.url, "auto", tool, log_level="debug")
    assert logs == [STARTING, DONE]


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("tool", ["steps_sync", "steps_async"])
def test_ctx_notifications_in_order_before_the_result(
    ctx_server: HttpServer, tool: str, era: str
) -> None:
    """On the wire: every notification on the call's own SSE stream, in the order the
    handler sent them (a sync handler's from its thread), and the result last."""
    steps = 40
    level = {"io.modelcontextprotocol/logLevel": "debug"}
    meta = {"progressToken": "tok-7", **level}
    headers: dict[str, str] = {}
    version = "2025-11-25"
    if era == "modern":
        meta = _modern_meta(**meta)
        version = MODERN
        headers = {"mcp-method": "tools/call", "mcp-name": tool}
    body = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"steps": steps}, "_meta": meta},
    }
    messages = sse_messages(ctx_server.url, body, version, **headers)
    *notes, last = messages
    assert last["id"] == 5 and last["result"]["content"][0]["text"] == f"did {steps}"
    assert [n["method"] for n in notes] == (
        ["notifications/message"] + ["notifications/progress"] * steps + ["notifications/message"]
    )
    assert [n["params"]["progress"] for n in notes[1:-1]] == list(range(1, steps + 1))
    assert {n["params"]["progressToken"] for n in notes[1:-1]} == {"tok-7"}
    assert notes[1]["params"] == {
        "progressToken": "tok-7",
        "progress": 1,
        "total": steps,
        "message": "step 1",
    }
    assert notes[-1]["params"] == DONE


def test_ctx_without_progress_token_or_level_sends_nothing(ctx_server: HttpServer) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "steps_sync", "arguments": {"steps": 3}, "_meta": _modern_meta()},
    }
    messages = sse_messages(
        ctx_server.url, body, MODERN, **{"mcp-method": "tools/call", "mcp-name": "steps_sync"}
    )
    assert len(messages) == 1 and messages[0]["result"]["content"][0]["text"] == "did 3"


def test_logging_set_level(ctx_server: HttpServer) -> None:
    """Handshake era: the logging capability and logging/setLevel (as over stdio);
    2026-07-28 has no logging/setLevel."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    status, reply = post(ctx_server.url, init, "2025-11-25")
    assert status == 200 and reply["result"]["capabilities"]["logging"] == {}
    set_level = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "logging/setLevel",
        "params": {"level": "info"},
    }
    assert post(ctx_server.url, set_level, "2025-11-25") == (
        200,
        {"jsonrpc": "2.0", "id": 2, "result": {}},
    )
    bad = {**set_level, "params": {"level": "loud"}}
    assert post(ctx_server.url, bad, "2025-11-25")[1]["error"]["code"] == -32602
    modern = {**set_level, "params": {"level": "info", "_meta": _modern_meta()}}
    _, reply = post(ctx_server.url, modern, MODERN, **{"mcp-method": "logging/setLevel"})
    assert reply["error"]["code"] == -32601


def _wait_for(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    return "(no marker)"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_ctx_cancelled_when_the_client_goes_away(
    ctx_server: HttpServer, tmp_path: Path, era: str
) -> None:
    """Closing the response stream cancels the call: a sync handler sees ctx.cancelled."""
    marker = tmp_path / f"cancel-{era}"
    meta: dict[str, Any] = {"progressToken": 1}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    if era == "modern":
        meta = _modern_meta(**meta)
        headers.update(
            {
                "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call",
                "mcp-name": "until_cancelled",
            }
        )
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "until_cancelled", "arguments": {"marker": str(marker)}, "_meta": meta},
    }
    with httpx2.stream("POST", ctx_server.url, json=body, headers=headers, timeout=20) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data:") and "notifications/progress" in line:
                break  # the handler runs: now hang up
    assert _wait_for(marker) == "cancelled", ctx_server.output[-2000:]


def test_ctx_cancelled_on_timeout(ctx_server: HttpServer, tmp_path: Path) -> None:
    marker = tmp_path / "timeout"
    status, reply = post(
        ctx_server.url,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "until_timeout", "arguments": {"marker": str(marker)}},
        },
        "2025-11-25",
    )
    assert status == 200 and reply["result"]["isError"] is True
    assert "timed out" in reply["result"]["content"][0]["text"]
    assert _wait_for(marker) == "cancelled"
