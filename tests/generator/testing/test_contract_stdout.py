"""`stdout_noise` (issue 33, item 6): a stdio server that prints anything but JSON-RPC on
stdout (office-word printed four banner lines) gets one finding, naming how many lines and
the first; a clean server gets none, and `--skip-check stdout_noise` turns it off."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from test_contract_budget import SERVER, SPEC
from test_contract_testing import mcpgen_test

NOISY = 'print("Office Word MCP server starting...", flush=True)\nprint("[]", flush=True)\n'


def run(tmp_path: Path, server: str, *extra: str) -> tuple[int, dict[str, object]]:
    (tmp_path / "slow.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "server.py").write_text(server, encoding="utf-8")
    done = mcpgen_test(
        *("slow.yaml", "--format", "json", "--examples", "2", "--seed", "1", *extra),
        *("--", sys.executable, "server.py", str(tmp_path / "pid")),
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def noise(document: dict[str, object]) -> list[dict[str, object]]:
    findings = document["findings"]
    assert isinstance(findings, list)
    return [f for f in findings if f["check"] == "stdout_noise"]


def test_a_server_printing_on_stdout_gets_one_finding(tmp_path: Path) -> None:
    _, document = run(tmp_path, NOISY + SERVER)
    [finding] = noise(document)
    assert finding["tool"] == "(server)" and finding["arguments"] is None
    message = str(finding["message"])
    # printed once per server process; the restart after each call does not add findings
    assert "line(s) on stdout that are not JSON-RPC messages" in message
    assert "Office Word MCP server starting..." in message
    argv = shlex.split(str(finding["reproduce"]))
    assert argv[argv.index("--examples") + 1] == "0"


def test_a_clean_server_gets_none_and_the_check_can_be_skipped(tmp_path: Path) -> None:
    _, clean = run(tmp_path, SERVER)
    assert noise(clean) == []
    _, skipped = run(tmp_path, NOISY + SERVER, "--skip-check", "stdout_noise")
    assert noise(skipped) == []
