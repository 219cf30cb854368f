"""Peers accept what mcpgen publishes, and a bad result is a tool error.

The tracker contract (tests/fixtures/tracker) has the schemas that used to break
peers: output schemas that are a root ``$ref`` (to a recursive ``types`` entry,
to a file), a hand-written input schema as pydantic emits it (root ``$ref``,
local ``$defs``, a spec type beside them), an object parameter with JSON
Schema's own ``required`` list, and a tool whose handler returns a result that
fails its output schema. Every tool is listed and called by

- the official Python SDK client over stdio at 2025-11-25 (before, it refused
  the whole ``tools/list``: ``outputSchema.type Field required``);
- the same client over ``--transport http`` (before, the server refused to start);
- the TypeScript SDK client over stdio (its ``callTool`` checks
  ``structuredContent`` against the listed ``outputSchema`` with Ajv);
- a raw stdio driver, for the exact frames of the failing result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fixtures.http_npm_tools import npm_tools
from fixtures.http_server import http_server
from helpers import RawServer, import_package

from mcpgen.build import build_spec

pytest.importorskip("mcp")
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TRACKER = Path(__file__).resolve().parents[1] / "fixtures" / "tracker"
TS_CLIENT = Path(__file__).resolve().parents[1] / "fixtures" / "ts_sdk_client.mjs"

PARENT = {"number": 1, "title": "Epic", "labels": ["feature"], "parent": None}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_issue", {"number": 7}),
    ("summary", {}),
    ("create_issue", {"title": "Crash", "labels": ["bug"], "parent": PARENT}),
    ("move_card", {"card": 3, "to": {"column": "done", "position": 2}}),
    ("broken", {}),
    ("create_issue", {"title": "Crash", "labels": ["nope"]}),  # local $defs enum → isError
    ("move_card", {"card": 3, "to": {"column": "done"}}),  # the object's own `required`
]
BROKEN_TEXT = (
    "Tool 'broken' produced an invalid result: it does not match the tool's output schema."
)


@pytest.fixture(scope="module")
def tracker_gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = tmp_path_factory.mktemp("peer_tracker") / "gen"
    result = build_spec(TRACKER / "tools.yaml", output=gen / "tracker_mcp")
    assert result.ok, [str(d) for d in result.diagnostics]
    return gen


@pytest.fixture(scope="module")
def published(tracker_gen: Path) -> list[dict[str, Any]]:
    with import_package(tracker_gen, "tracker_mcp") as pkg:
        tools = json.loads(json.dumps(pkg.contract.TOOLS))
    assert all(tool["inputSchema"]["type"] == "object" for tool in tools)
    assert all(tool["outputSchema"]["type"] == "object" for tool in tools if "outputSchema" in tool)
    return tools


def check_results(results: list[dict[str, Any]]) -> None:
    """The CallToolResults of CALLS (JSON, by alias), whoever the client was."""
    issue, summary, created, moved, broken, bad_label, bad_move = results
    assert issue["structuredContent"] == {
        "number": 7,
        "title": "Issue 7",
        "labels": ["bug"],
        "parent": PARENT,
    }
    assert issue.get("isError", False) is False
    assert summary["structuredContent"] == {"open": 3, "closed": 4, "busiest": ["ann", "bo"]}
    assert created["structuredContent"] == {
        "number": 42,
        "title": "Crash",
        "labels": ["bug"],
        "parent": PARENT,
    }
    assert moved["content"] == [{"type": "text", "text": "card 3 -> done#2"}]
    # a result failing its output schema: a tool error naming the tool, no value leaked
    assert broken["isError"] is True
    assert broken["content"] == [{"type": "text", "text": BROKEN_TEXT}]
    assert "structuredContent" not in broken or broken["structuredContent"] is None
    assert bad_label["isError"] is True and "labels[0]" in bad_label["content"][0]["text"]
    assert bad_move["isError"] is True and "position" in bad_move["content"][0]["text"]


async def sdk_session(target: Any) -> dict[str, Any]:
    async with Client(target, mode="legacy", read_timeout_seconds=20) as client:
        listed = await client.list_tools()
        results = [
            (await client.call_tool(name, args)).model_dump(
                by_alias=True, exclude_none=True, mode="json"
            )
            for name, args in CALLS
        ]
        return {
            "version": client.protocol_version,
            "tools": [
                t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools
            ],
            "results": results,
        }


def test_python_sdk_over_stdio(tracker_gen: Path, published: list[dict[str, Any]]) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tracker_mcp"],
        env={"PYTHONPATH": os.pathsep.join([str(tracker_gen), str(TRACKER)])},
        cwd=TRACKER,
    )
    seen = anyio.run(sdk_session, params)
    assert seen["version"] == "2025-11-25"
    assert seen["tools"] == published
    check_results(seen["results"])


def test_python_sdk_over_http(tracker_gen: Path, published: list[dict[str, Any]]) -> None:
    with http_server(
        "tracker_mcp", pythonpath=[tracker_gen, TRACKER], cwd=TRACKER, log_dir=tracker_gen.parent
    ) as server:
        seen = anyio.run(sdk_session, server.url)
        output = server.output
    assert seen["version"] == "2025-11-25"
    assert seen["tools"] == published
    check_results(seen["results"])
    # the detail of the bad result goes to the server's log, and only there
    assert "tool 'broken'" in output and "SECRET-not-a-number" in output
    assert all("SECRET" not in json.dumps(result) for result in seen["results"])


def test_typescript_sdk_over_stdio(tracker_gen: Path, published: list[dict[str, Any]]) -> None:
    tools = npm_tools("@modelcontextprotocol/sdk")
    plan = {
        "command": sys.executable,
        "args": ["-m", "tracker_mcp"],
        "env": {**os.environ, "PYTHONPATH": os.pathsep.join([str(tracker_gen), str(TRACKER)])},
        "cwd": str(TRACKER),
        "calls": CALLS,
    }
    done = subprocess.run(
        [tools.node, str(TS_CLIENT), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["server"] == {"name": "tracker", "version": "1.0.0"}
    assert seen["tools"] == published
    errors = [call["error"] for call in seen["calls"] if "error" in call]
    assert errors == []  # Ajv accepted every structuredContent against the listed schema
    check_results([call["result"] for call in seen["calls"]])


def test_bad_structured_result_over_raw_stdio(tracker_gen: Path) -> None:
    """The exact frame: a result with ``isError: true`` (not JSON-RPC -32603); the
    validation detail and the bad value only on stderr."""
    with RawServer("tracker_mcp", None, pythonpath=[tracker_gen, TRACKER], cwd=TRACKER) as raw:
        raw.handshake("2025-11-25")
        reply = raw.call("broken", {})
        assert reply["result"] == {
            "content": [{"type": "text", "text": BROKEN_TEXT}],
            "isError": True,
        }
        assert "error" not in reply
        assert raw.call("get_issue", {"number": 2})["result"]["isError"] is False  # still serving
        raw.close()
    assert "SECRET" not in b"".join(raw.raw_lines).decode()
    assert "mcpgen: tool 'broken':" in raw.stderr
    assert "number" in raw.stderr and "SECRET-not-a-number" in raw.stderr
