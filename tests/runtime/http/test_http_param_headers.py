"""Tool arguments mirrored into HTTP headers (a parameter's ``header:``, published as
``x-mcp-header``; SEP-2243), end to end: a generated package served with
``--transport http`` on each uvicorn parser, called by its own typed clients (sync and
async, both eras), the official Python SDK client, the TypeScript SDK v2 client and raw
POSTs. At 2026-07-28 the server refuses (HTTP 400, -32020, naming the argument) a
``Mcp-Param-*`` header that disagrees with the body or is missing; the handshake era
defines no such headers and serves the call whatever they say."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_npm_tools import npm_tools
from fixtures.http_server import HttpServer, http_server
from helpers import build_package, import_package

httpx2 = pytest.importorskip("httpx2", reason="the http extra is not installed")

MODERN = "2026-07-28"
SPEC = """\
    mcpgen: 1
    package: routed_mcp
    server: {name: routed, version: 1.0.0}
    tools:
      - name: route
        description: Echo the arguments the call was routed with.
        parameters:
          - name: region
            type: string
            header: Region
          - name: shard
            type: integer
            minimum: 0
            maximum: 1000
            header: Shard
          - name: fast
            type: boolean
            header: Fast
            required: false
          - name: query
            type: string
        callback: named
"""
IMPL = """\
import json
from routed_mcp import RoutedServer

class Impl(RoutedServer):
    def route(self, args):
        return json.dumps(args, sort_keys=True, ensure_ascii=False)
"""
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = build_package(SPEC, tmp_path_factory.mktemp("routed"), "routed_mcp")
    (gen / "routed_impl.py").write_text(IMPL, encoding="utf-8")
    return gen


@pytest.fixture(scope="module", params=["h11", "httptools"])
def server(
    request: pytest.FixtureRequest, package: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HttpServer]:
    if request.param == "httptools":
        pytest.importorskip("httptools")
    extra = ("--impl", "routed_impl:Impl", "--http-parser", request.param)
    logs = tmp_path_factory.mktemp("logs")
    with http_server("routed_mcp", *extra, pythonpath=[package], cwd=package, log_dir=logs) as s:
        yield s


def test_the_published_schema_carries_the_annotations(package: Path) -> None:
    with import_package(package, "routed_mcp") as module:
        (tool,) = module.contract.TOOLS
    properties = tool["inputSchema"]["properties"]
    assert {name: p.get("x-mcp-header") for name, p in properties.items()} == {
        "region": "Region",
        "shard": "Shard",
        "fast": "Fast",
        "query": None,
    }


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
def test_the_typed_clients_mirror_the_arguments(
    server: HttpServer, package: Path, protocol: str
) -> None:
    """At 2026-07-28 the server refuses a call without its headers, so each answer
    proves the client sent them (a Base64 one included)."""
    with import_package(package, "routed_mcp") as module:
        with module.RoutedClient.http(server.url, protocol=protocol) as client:
            assert client.session.era == protocol
            got = json.loads(client.route(region=" 日本 ", shard=7, fast=True, query="q"))
            assert got == {"region": " 日本 ", "shard": 7, "fast": True, "query": "q"}
            # an absent optional argument sends no header
            assert "fast" not in json.loads(client.route(region="eu", shard=0, query="q"))

        async def call() -> str:
            async with module.AsyncRoutedClient.http(server.url, protocol=protocol) as client:
                result: str = await client.route(region="=?base64?x?=", shard=1000, query="q")
                return result

        assert json.loads(asyncio.run(call()))["region"] == "=?base64?x?="


def _post(url: str, arguments: dict[str, Any], headers: list[tuple[str, str]], *,
          version: str = MODERN) -> Any:  # fmt: skip
    """One raw tools/call; a header value goes as its UTF-8 bytes, unencoded."""
    params: dict[str, Any] = {"name": "route", "arguments": arguments}
    routing = [("mcp-protocol-version", version)]
    if version == MODERN:
        params["_meta"] = ENVELOPE
        routing += [("mcp-method", "tools/call"), ("mcp-name", "route")]
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}
    return httpx2.post(
        url,
        content=json.dumps(body).encode(),
        headers=[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            *routing,
            *((name, value.encode()) for name, value in headers),
        ],
        timeout=20,
    )


ARGS = {"region": "eu-west", "shard": 3, "query": "q"}
AGREE = [("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Shard", "3")]


@pytest.mark.parametrize(
    ("arguments", "headers", "message"),
    [
        (ARGS, [("Mcp-Param-Region", "us-east"), ("Mcp-Param-Shard", "3")],
         "Mcp-Param-Region header does not match the request body's 'region' argument"),
        (ARGS, [("Mcp-Param-Shard", "3")],
         "Mcp-Param-Region header is missing but the request body's 'region' argument is present"),
        (ARGS, [*AGREE, ("Mcp-Param-Fast", "true")],
         "Mcp-Param-Fast header is present but the request body's 'fast' argument is absent"),
        (ARGS, [("Mcp-Param-Region", "=?base64?ZXUtd2VzdA?="), ("Mcp-Param-Shard", "3")],
         "Mcp-Param-Region header holds a malformed =?base64?…?= value"),
        (ARGS, [*AGREE, ("Mcp-Param-Region", "eu-west")],
         "Mcp-Param-Region header appears more than once"),
        ({**ARGS, "region": "日本"}, [("Mcp-Param-Region", "日本"), ("Mcp-Param-Shard", "3")],
         "Mcp-Param-Region header does not match the request body's 'region' argument"),
    ],
)  # fmt: skip
def test_a_header_that_disagrees_is_refused(
    server: HttpServer, arguments: dict[str, Any], headers: list[tuple[str, str]], message: str
) -> None:
    answer = _post(server.url, arguments, headers)
    assert answer.status_code == 400
    assert answer.json()["error"] == {"code": -32020, "message": message}


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        (ARGS, AGREE),
        (ARGS, [("mcp-param-region", "eu-west"), ("MCP-PARAM-SHARD", "3.0")]),
        ({**ARGS, "region": "日本"}, [("Mcp-Param-Region", "=?base64?5pel5pys?="),
                                      ("Mcp-Param-Shard", "3")]),
        ({**ARGS, "fast": None}, AGREE),  # null counts as absent
        ({**ARGS, "fast": False}, [*AGREE, ("Mcp-Param-Fast", "false")]),
    ],
)  # fmt: skip
def test_a_header_that_agrees_is_served(
    server: HttpServer, arguments: dict[str, Any], headers: list[tuple[str, str]]
) -> None:
    answer = _post(server.url, arguments, headers)
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["isError"] is (arguments.get("fast") is None and "fast" in arguments)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_the_handshake_era_defines_no_param_headers(server: HttpServer, version: str) -> None:
    for headers in ([], [("Mcp-Param-Region", "somewhere-else")]):
        answer = _post(server.url, ARGS, headers, version=version)
        assert answer.status_code == 200
        assert json.loads(answer.json()["result"]["content"][0]["text"]) == ARGS


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
def test_the_official_python_sdk_client(server: HttpServer, mode: str) -> None:
    from mcp import Client

    async def main() -> tuple[str, str]:
        async with Client(server.url, mode=mode, read_timeout_seconds=20) as client:
            await client.list_tools()  # the SDK mirrors what the listing annotates
            result = await client.call_tool(
                "route", {"region": " café ", "shard": 9, "fast": False, "query": "q"}
            )
            return client.protocol_version, result.content[0].text  # type: ignore[union-attr]

    version, text = asyncio.run(main())
    assert (version == MODERN) is (mode == MODERN)
    assert json.loads(text) == {"region": " café ", "shard": 9, "fast": False, "query": "q"}


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
def test_the_typescript_sdk_client(server: HttpServer, mode: str) -> None:
    tools = npm_tools("@modelcontextprotocol/client")
    script = Path(__file__).resolve().parents[2] / "fixtures" / "ts_http_client.mjs"
    arguments = {"region": "Zürich ", "shard": 12, "fast": True, "query": "q"}
    plan = {"url": server.url, "mode": mode, "calls": [["route", arguments]]}
    run = subprocess.run(
        [tools.node, str(script), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    (call,) = json.loads(run.stdout)["calls"]
    assert json.loads(call["result"]["content"][0]["text"]) == arguments, call
