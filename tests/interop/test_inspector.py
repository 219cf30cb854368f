"""The MCP Inspector CLI (npm ``@modelcontextprotocol/inspector`` 2.x, ``--cli``)
against the generated weather server: over stdio (mcpgen's runtime) and over
``--transport http``.

``--strict`` makes the Inspector lint every listed tool schema for portability
(type unions, remote ``$ref``s, schemas that constrain nothing) and exit 6 on an
error-severity finding; in ``--format json`` every finding, warnings included,
is put in the envelope's ``schemaFindings``. The published weather schemas
must produce none. A negative control shows the lint really runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_npm_tools import NpmTools, npm_tools
from fixtures.http_server import http_server
from helpers import build_package, import_package

from mcpgen.build import build_spec

REPO = Path(__file__).resolve().parents[2]
WEATHER_DIR = REPO / "examples" / "weather"
PACKAGE = "@modelcontextprotocol/inspector"
TOOL_ERROR_EXIT = 5  # the Inspector's EXIT_CODES.TOOL_ERROR


@pytest.fixture(scope="module")
def tools() -> NpmTools:
    return npm_tools(PACKAGE)


@pytest.fixture(scope="module")
def weather_gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = tmp_path_factory.mktemp("inspector_weather") / "gen"
    result = build_spec(WEATHER_DIR / "tools.yaml", output=gen / "weather_mcp")
    assert result.ok, result.diagnostics
    return gen


@pytest.fixture(scope="module")
def published(weather_gen: Path) -> list[dict[str, Any]]:
    with import_package(weather_gen, "weather_mcp") as pkg:
        return json.loads(json.dumps(pkg.contract.TOOLS))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Inspector keeps a catalog and client config under ~; keep them out of the real home."""
    return tmp_path_factory.mktemp("inspector_home")


def inspect(
    tools: NpmTools, home: Path, *args: str, target: list[str]
) -> tuple[int, dict[str, Any], str]:
    """Run ``inspector --cli --format json …``; (exit code, the JSON envelope, stderr)."""
    env = {
        **os.environ,
        "HOME": str(home),
        "MCP_CATALOG_PATH": str(home / "mcp.json"),
        "MCP_CLIENT_CONFIG_PATH": str(home / "client.json"),
        "NO_COLOR": "1",
    }
    proc = subprocess.run(
        [*tools.inspector, "--cli", "--format", "json", *args, *target],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    envelope = json.loads(lines[-1]) if lines else {}
    return proc.returncode, envelope, proc.stderr


def stdio_target(gen: Path, package: str = "weather_mcp", cwd: Path = WEATHER_DIR) -> list[str]:
    return [
        "--cwd",
        str(cwd),
        "-e",
        f"PYTHONPATH={gen}{os.pathsep}{cwd}",
        sys.executable,
        "-m",
        package,
    ]


def without_execution(published: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in t.items() if k != "execution"} for t in published]


# -- stdio -------------------------------------------------------------------------


def test_stdio_tools_list_strict_is_clean(
    tools: NpmTools, home: Path, weather_gen: Path, published: list[dict[str, Any]]
) -> None:
    code, envelope, stderr = inspect(
        tools, home, "--strict", "--method", "tools/list", target=stdio_target(weather_gen)
    )
    assert code == 0, stderr
    assert "schemaFindings" not in envelope, json.dumps(envelope.get("schemaFindings"), indent=2)
    assert "portability" not in stderr
    assert envelope["result"]["tools"] == published


def test_stdio_tools_list_auto_era_strict(
    tools: NpmTools, home: Path, weather_gen: Path, published: list[dict[str, Any]]
) -> None:
    """``--protocol-era auto``: probe server/discover, fall back to initialize when
    the server speaks only the handshake era (either way the list is clean)."""
    code, envelope, stderr = inspect(
        tools,
        home,
        "--strict",
        "--protocol-era",
        "auto",
        "--method",
        "tools/list",
        target=stdio_target(weather_gen),
    )
    assert code == 0, stderr
    assert "schemaFindings" not in envelope
    assert without_execution(envelope["result"]["tools"]) == without_execution(published)


def test_stdio_tools_call(tools: NpmTools, home: Path, weather_gen: Path) -> None:
    target = stdio_target(weather_gen)
    code, envelope, stderr = inspect(
        tools,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "get_forecast",
        "--tool-args-json",
        '{"city": "Oslo", "days": 2}',
        target=target,
    )
    assert code == 0, stderr
    result = envelope["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["city"] == "Oslo"
    assert len(result["structuredContent"]["days"]) == 2
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]

    # key=value arguments (the Inspector's own coercion) on a positional tool
    code, envelope, stderr = inspect(
        tools,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "current_temperature",
        "--tool-arg",
        "city=Oslo",
        target=target,
    )
    assert code == 0, stderr
    assert float(envelope["result"]["content"][0]["text"]) > 0

    # an async named tool with a dashed parameter name
    code, envelope, stderr = inspect(
        tools,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "alerts.search",
        "--tool-args-json",
        '{"region": {"country": "NO"}, "max-results": 1}',
        target=target,
    )
    assert code == 0, stderr
    assert json.loads(envelope["result"]["content"][0]["text"])[0]["id"] == "NO-1"


def test_stdio_invalid_arguments_are_a_tool_error(
    tools: NpmTools, home: Path, weather_gen: Path
) -> None:
    code, envelope, _ = inspect(
        tools,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "get_forecast",
        "--tool-args-json",
        '{"city": "Oslo", "days": 99}',
        target=stdio_target(weather_gen),
    )
    assert code == TOOL_ERROR_EXIT
    assert envelope["result"]["isError"] is True
    assert "days" in envelope["result"]["content"][0]["text"]


def test_strict_lint_negative_control(tools: NpmTools, home: Path, tmp_path: Path) -> None:
    """A contract with a type union: --strict reports it (so a clean run means something)."""
    gen = build_package(
        """\
        mcpgen: 1
        package: lint_probe_mcp
        server: {name: lint-probe, version: 0.0.1, implementation: lint_probe_impl:Impl}
        tools:
          - name: maybe
            description: takes a nullable string
            parameters: [{name: value, type: [string, "null"]}]
        """,
        tmp_path,
        "lint_probe_mcp",
    )
    (tmp_path / "lint_probe_impl.py").write_text(
        "from lint_probe_mcp import LintProbeServer\n\n"
        "class Impl(LintProbeServer):\n"
        "    def maybe(self, value):\n"
        "        return str(value)\n",
        encoding="utf-8",
    )
    code, envelope, stderr = inspect(
        tools,
        home,
        "--strict",
        "--method",
        "tools/list",
        target=stdio_target(gen, "lint_probe_mcp", tmp_path),
    )
    findings = envelope.get("schemaFindings")
    assert findings, (code, envelope, stderr)
    assert findings[0]["toolName"] == "maybe"
    assert {f["rule"] for f in findings[0]["findings"]} == {"type-union"}


# -- Streamable HTTP --------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_http_tools_list_strict_and_call(
    tools: NpmTools,
    home: Path,
    weather_gen: Path,
    published: list[dict[str, Any]],
    era: str,
    tmp_path: Path,
) -> None:
    pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")
    with http_server(
        "weather_mcp", pythonpath=[weather_gen, WEATHER_DIR], cwd=WEATHER_DIR, log_dir=tmp_path
    ) as server:
        code, listed, stderr = inspect(
            tools,
            home,
            "--strict",
            "--protocol-era",
            era,
            "--method",
            "tools/list",
            target=[server.url],
        )
        call_code, called, call_stderr = inspect(
            tools,
            home,
            "--protocol-era",
            era,
            "--method",
            "tools/call",
            "--tool-name",
            "report_observation",
            "--tool-args-json",
            '{"station": "ENGM", "temperature_c": 2.5, "at": "2026-01-01T00:00:00Z"}',
            target=[server.url],
        )
        log = server.output
    assert code == 0, stderr + log
    assert "schemaFindings" not in listed
    expected = published if era == "legacy" else without_execution(published)
    assert listed["result"]["tools"] == expected
    assert call_code == 0, call_stderr + log
    assert called["result"]["content"] == [{"type": "text", "text": "obs-1"}]
