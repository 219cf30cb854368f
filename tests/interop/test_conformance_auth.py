"""The official MCP conformance suite's client authorization scenarios (npm
``@modelcontextprotocol/conformance``, ``auth/*``) against mcpgen's HTTP client.

The suite starts its own MCP server and authorization server per scenario and runs
tests/fixtures/conformance/auth_client.py, which connects with ``auth=`` and calls
every tool: discovery variants, scope selection, the 403 step-up and its retry limit,
the token endpoint's client authentication methods, pre-registration, dynamic
registration, a resource mismatch the client must refuse, client credentials.
Scenarios the client does not implement are in auth_client_baseline.json with their
reason; any other failing scenario fails this test, and so does a baseline entry
that passes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_npm_tools import npm_tools

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
PACKAGE = "@modelcontextprotocol/conformance"
RESULT_DIR = re.compile(r"^(?P<name>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")

pytest.importorskip("authlib", reason="the auth extra (Authlib) is not installed")


def _auth_scenarios(tools: Any) -> list[str]:
    listed = subprocess.run(
        [*tools.conformance, "list", "--client"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return re.findall(r"^\s+- (auth/[\w./-]+)", listed.stdout, flags=re.MULTILINE)


def _results(out: Path) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {}
    for checks in sorted((out / "auth").glob("*/checks.json")):
        match = RESULT_DIR.match(checks.parent.name)
        assert match, f"unexpected result directory {checks.parent.name}"
        scenario = "auth/" + match.group("name")
        results.setdefault(scenario, []).extend(json.loads(checks.read_text(encoding="utf-8")))
    return results


def _problems(checks: list[dict[str, Any]]) -> list[str]:
    """The suite's rule: a FAILURE or a WARNING check fails the scenario."""
    return [
        f"{c['id']}: {c['status']} {c.get('errorMessage') or c.get('details', '')}"
        for c in checks
        if c["status"] in ("FAILURE", "WARNING")
    ]


def test_the_client_passes_the_auth_scenarios(tmp_path: Path) -> None:
    tools = npm_tools(PACKAGE)
    scenarios = _auth_scenarios(tools)
    assert "auth/scope-step-up" in scenarios, scenarios
    baseline = json.loads((FIXTURE / "auth_client_baseline.json").read_text(encoding="utf-8"))
    expected = baseline["not_supported"]
    command = f"{sys.executable} {FIXTURE / 'auth_client.py'}"
    out = tmp_path / "results"
    logs = [_run(tools, command, ["--suite", "auth"], out)]  # the current revision's, in parallel
    for name in sorted(set(scenarios) - set(_results(out))):  # drafts, extensions, older
        logs.append(_run(tools, command, ["--scenario", name], out))
    results = _results(out)
    assert set(scenarios) <= set(results), f"did not run: {set(scenarios) - set(results)}"
    failing = {name: _problems(checks) for name, checks in results.items()}
    failing = {name: problems for name, problems in failing.items() if problems}
    unexpected = {name: failing[name] for name in sorted(set(failing) - set(expected))}
    assert not unexpected, json.dumps(unexpected, indent=2) + "\n" + "\n".join(logs)[-6000:]
    stale = sorted(set(expected) - set(failing))
    assert not stale, f"baseline entries that pass now (remove them): {stale}"
    passed = sorted(set(results) - set(failing))
    print(f"conformance auth: {len(results)} scenarios, {len(passed)} passed: {passed}")
    for must in ("auth/scope-step-up", "auth/scope-retry-limit", "auth/resource-mismatch"):
        assert must in passed


def _run(tools: Any, command: str, which: list[str], out: Path) -> str:
    done = subprocess.run(
        [*tools.conformance, "client", "--command", command, *which, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=out.parent,
    )
    return done.stdout[-3000:] + done.stderr[-2000:]
