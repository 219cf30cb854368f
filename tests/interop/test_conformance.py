"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``,
server scenarios, active and pending) against a generated fixture server
served with ``--transport http``.

The fixture contract (tests/fixtures/conformance/tools.yaml) implements the
tools the scenarios call. Scenarios that cannot apply to a tools-only,
stateless server are listed with their reason in
tests/fixtures/conformance/baseline.json; any other failing scenario fails
this test, and so does a baseline entry that passes.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_npm_tools import npm_tools
from fixtures.http_server import http_server

from mcpgen.build import build_spec

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
PACKAGE = "@modelcontextprotocol/conformance"
# "server-<scenario>-<ISO timestamp with - for :>" (the suite's result directory names)
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def scenario_results(out: Path) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {}
    for directory in sorted(out.iterdir()):
        match = RESULT_DIR.match(directory.name)
        assert match, f"unexpected result directory {directory.name}"
        checks = json.loads((directory / "checks.json").read_text(encoding="utf-8"))
        results.setdefault(match.group("scenario"), []).extend(checks)
    return results


def failing(checks: list[dict[str, Any]]) -> list[str]:
    """The suite's rule: a FAILURE or a WARNING check fails the scenario."""
    return [
        f"{c['id']}: {c['status']} {c.get('errorMessage') or c.get('details', '')}"
        for c in checks
        if c["status"] in ("FAILURE", "WARNING")
    ]


def test_conformance_suite(tmp_path: Path) -> None:
    tools = npm_tools(PACKAGE)
    gen = tmp_path / "gen"
    built = build_spec(FIXTURE / "tools.yaml", output=gen / "conformance_mcp")
    assert built.ok, built.diagnostics
    listed = subprocess.run(
        [*tools.conformance, "list", "--server"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    baseline = json.loads((FIXTURE / "baseline.json").read_text(encoding="utf-8"))
    expected = {**baseline["not_applicable"], **baseline["known_gaps"]}

    out = tmp_path / "results"
    with http_server(
        "conformance_mcp", pythonpath=[gen, FIXTURE], cwd=FIXTURE, log_dir=tmp_path
    ) as server:
        run = subprocess.run(
            [*tools.conformance, "server", "--url", server.url, "--suite", "all", "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
        )
        server_log = server.output
    assert out.is_dir(), f"the suite wrote no results:\n{run.stdout}\n{run.stderr}"
    results = scenario_results(out)
    failures = {name: failing(checks) for name, checks in results.items()}
    failed = {name for name, problems in failures.items() if problems}
    passed = sorted(set(results) - failed)

    summary = (
        f"conformance: {len(results)} scenarios, {len(passed)} passed, "
        f"{len(failed & set(expected))} baselined, {len(failed - set(expected))} unexpected\n"
        f"passed: {', '.join(passed)}"
    )
    print(summary)
    unexpected = {name: failures[name] for name in sorted(failed - set(expected))}
    stale = sorted(set(expected) - failed)
    assert not unexpected, (
        f"scenarios failing outside the baseline:\n{json.dumps(unexpected, indent=2)}\n"
        f"{summary}\n--- suite output ---\n{run.stdout[-4000:]}\n--- server log ---\n"
        f"{server_log[-4000:]}"
    )
    assert not stale, (
        f"baseline entries that no longer fail (remove them from baseline.json): {stale}"
    )
    # every scenario the suite knows ran (none silently skipped), and the ones a
    # tools server must pass are among the passes
    assert listed.returncode == 0, listed.stderr
    known = set(re.findall(r"^\s+- ([\w./-]+)", listed.stdout, flags=re.MULTILINE))
    assert known, listed.stdout
    assert known <= set(results), f"scenarios that did not run: {sorted(known - set(results))}"
    for must in (
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-error",
        "json-schema-2020-12",
        "dns-rebinding-protection",
    ):
        assert must in passed, summary
