"""The official SDKs' clients answering a generated server's asking tools: the Python
SDK (mcp 2.3.0) and, at the end, the TypeScript SDK v2 (npm @modelcontextprotocol/client,
over stdio and Streamable HTTP in both eras).

Over stdio, in the handshake era (``mode="legacy"``: the server sends
``elicitation/create`` and waits) and at 2026-07-28 (``mode="auto"`` lands there:
the SDK answers ``input_required`` with ``inputResponses`` and echoes the sealed
``requestState``), and over Streamable HTTP at 2026-07-28; with its
``elicitation_callback`` accepting, declining and cancelling; without one it
declares no elicitation and the tool takes its declined path.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fixtures.http_server import HttpServer
from test_asking import KEY, http, package  # noqa: F401  (fixtures)

mcp = pytest.importorskip("mcp")
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def params(built: tuple[Path, Path]) -> StdioServerParameters:
    gen, impl = built
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "asker_mcp", "--impl", "asker_impl:Impl"],
        env={"PYTHONPATH": f"{gen}:{impl}", "MCPGEN_REQUEST_STATE_KEY": KEY},
        cwd=impl,
    )


def answering(*answers: types.ElicitResult) -> tuple[Any, list[str]]:
    asked: list[str] = []
    queue = list(answers)

    async def callback(context: Any, request: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(request.message)
        return queue.pop(0)

    return callback, asked


ACCEPT_4 = types.ElicitResult(action="accept", content={"people": 4})
ACCEPT_OK = types.ElicitResult(action="accept", content={"ok": True})


async def call(target: Any, mode: str, tool: str, callback: Any) -> tuple[str, str]:
    async with Client(
        target, mode=mode, read_timeout_seconds=20, elicitation_callback=callback
    ) as client:
        result = await client.call_tool(tool, {"place": "Luigi's"})
        text = result.content[0].text  # type: ignore[union-attr]
        return str(client.protocol_version), str(text)


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
@pytest.mark.parametrize("tool", ["book", "book_async"])
def test_the_sdk_client_answers(
    package: tuple[Path, Path],  # noqa: F811
    mode: str,
    version: str,
    tool: str,
) -> None:
    callback, asked = answering(ACCEPT_4, ACCEPT_OK)
    seen = anyio.run(call, params(package), mode, tool, callback)
    assert seen == (version, "4 at Luigi's, confirmed=True")
    assert asked == ["How many people at Luigi's?", "Confirm?"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(("action", "expected"), [("decline", "declined"), ("cancel", "dismissed")])
def test_the_sdk_client_declines_and_cancels(
    package: tuple[Path, Path],  # noqa: F811
    mode: str,
    action: str,
    expected: str,
) -> None:
    callback, _ = answering(types.ElicitResult(action=action))  # type: ignore[arg-type]
    _, text = anyio.run(call, params(package), mode, "book", callback)
    assert text == expected


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_sdk_client_without_a_callback_is_not_asked(
    package: tuple[Path, Path],  # noqa: F811
    mode: str,
) -> None:
    _, text = anyio.run(call, params(package), mode, "book", None)
    assert text == "declined"


def test_the_sdk_client_over_http_modern(http: HttpServer) -> None:  # noqa: F811
    callback, asked = answering(ACCEPT_4, ACCEPT_OK)
    version, text = anyio.run(call, http.url, "auto", "book_async", callback)
    assert (version, text) == ("2026-07-28", "4 at Luigi's, confirmed=True")
    assert len(asked) == 2


# -- the TypeScript SDK v2 client (npm @modelcontextprotocol/client) ---------------------

TS_CLIENT = Path(__file__).resolve().parents[1] / "fixtures" / "ts_asking_client.mjs"


def run_ts_client(plan: dict[str, Any]) -> dict[str, Any]:
    import json
    import subprocess

    from fixtures.http_npm_tools import npm_tools

    tools = npm_tools("@modelcontextprotocol/client")
    done = subprocess.run(
        [tools.node, str(TS_CLIENT), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


@pytest.mark.parametrize(("negotiate", "version"), [(None, "2025-11-25"), ("auto", "2026-07-28")])
def test_the_typescript_client_answers_over_http(
    http: HttpServer,  # noqa: F811
    negotiate: str | None,
    version: str,
) -> None:
    """Handshake era: a session id, an SSE answer carrying elicitation/create, the
    answer POSTed back; 2026-07-28: the input_required rounds."""
    seen = run_ts_client(
        {
            "url": http.url,
            "tool": "book_async",
            "arguments": {"place": "Y"},
            "answers": [{"people": 3}, {"ok": False}],
            "negotiate": negotiate,
        }
    )
    assert seen["protocolVersion"] == version
    assert seen["asked"] == ["How many people at Y?", "Confirm?"]
    assert seen["result"]["content"][0]["text"] == "3 at Y, confirmed=False"


@pytest.mark.parametrize(("negotiate", "version"), [(None, "2025-11-25"), ("auto", "2026-07-28")])
@pytest.mark.parametrize("tool", ["book", "book_async"])
def test_the_typescript_client_answers(
    package: tuple[Path, Path],  # noqa: F811
    negotiate: str | None,
    version: str,
    tool: str,
) -> None:
    """Handshake era: it answers elicitation/create; with ``versionNegotiation: auto``
    it speaks 2026-07-28 and answers the input_required rounds."""
    import os

    gen, impl = package
    seen = run_ts_client(
        {
            "command": sys.executable,
            "args": ["-m", "asker_mcp", "--impl", "asker_impl:Impl"],
            "env": {**os.environ, "PYTHONPATH": f"{gen}:{impl}", "MCPGEN_REQUEST_STATE_KEY": KEY},
            "cwd": str(impl),
            "tool": tool,
            "arguments": {"place": "X"},
            "answers": [{"people": 2}, {"ok": True}],
            "negotiate": negotiate,
        }
    )
    assert seen["protocolVersion"] == version
    assert seen["asked"] == ["How many people at X?", "Confirm?"]
    assert seen["result"]["content"][0]["text"] == "2 at X, confirmed=True"
