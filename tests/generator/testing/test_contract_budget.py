"""`mcpgen test` runs that end early (issue 33, items 8-10): `--budget` shares a time
limit among the tools and reports what it found; a signal ends the run with the partial
report and the server under test stopped (a server that ignores the end of its input
included); JUnit carries real times; reproduce lines replay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from test_contract_testing import FIXTURES, MCPGEN, mcpgen_test, report

SPEC = """\
mcpgen: 1
package: slow_mcp
server: {name: slow, version: 1.0.0}
tools:
  - name: slow
    description: Answers after a while.
    parameters:
      - {name: n, type: integer}
"""

# A stdio server that answers every call after 20 ms and, when its input ends, does not
# exit (as some real servers do): only a signal ends it. It writes its pid first.
SERVER = """\
import json, os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
TOOL = {"name": "slow", "description": "Answers after a while.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}},
                        "required": ["n"], "additionalProperties": False}}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, params = message["method"], message.get("params", {})
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "slow", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        time.sleep(0.02)
        result = {"content": [{"type": "text", "text": "ok"}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                          "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
while True:
    time.sleep(1)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_budget_is_shared_among_the_tools_and_the_report_says_incomplete(tmp_path: Path) -> None:
    junit = tmp_path / "report.xml"
    started = time.monotonic()
    code, document = report(
        "seeded.yaml",
        *("--impl", "seeded_impl:Correct", "--examples", "100000", "--seed", "3"),
        *("--budget", "10", "--junit", str(junit)),
    )
    elapsed = time.monotonic() - started
    assert code == 0 and document["findings"] == []
    assert document["incomplete"] == "--budget 10 s ran out"
    assert elapsed < 90  # 100,000 examples a phase would take many minutes
    tools = {t["name"]: t for t in document["tools"]}
    # every tool is called (at least once, whatever its share), the last ones too
    assert all(t["calls"] > 0 for name, t in tools.items() if name != "wipe"), tools
    assert any(t.get("reason", "").startswith("cut short") for t in tools.values()), tools
    cases = ET.parse(junit).getroot().findall("testcase")
    assert sum(float(case.get("time", "0")) for case in cases) > 1.0  # real times, not 0
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert properties["incomplete"] == "--budget 10 s ran out"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_run_with_a_report_and_no_orphan(
    tmp_path: Path, sig: signal.Signals
) -> None:
    (tmp_path / "slow.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    pid_file = tmp_path / "server.pid"
    proc = subprocess.Popen(
        [*MCPGEN, "test", "slow.yaml", "--format", "json", "--examples", "100000", "--seed", "1"]
        + ["--", sys.executable, "server.py", str(pid_file)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
        time.sleep(0.05)
    server = int(pid_file.read_text())
    time.sleep(2)  # calls under way
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    document = json.loads(out)
    assert document["incomplete"] == f"stopped by {sig.name}"
    assert document["tools"][0]["calls"] > 0
    assert f"incomplete: stopped by {sig.name}" in err
    deadline = time.monotonic() + 10
    while alive(server):
        assert time.monotonic() < deadline, "the server under test outlived mcpgen test"
        time.sleep(0.05)


def test_progress_goes_to_stderr_when_it_is_a_terminal(tmp_path: Path) -> None:
    """Before: only when stdout was a terminal too (not with --format json > file)."""
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [*MCPGEN, "test", "seeded.yaml", "--impl", "seeded_impl:Correct"]
            + ["--examples", "3", "--tool", "scale", "--format", "json"],
            cwd=FIXTURES,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
            check=False,
        )
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0 and json.loads(done.stdout)["findings"] == []
    assert b"tested scale: " in seen


# -- issue 33, item 4: "ok" when nothing succeeded ---------------------------------------------

ZONES = """\
mcpgen: 1
package: zones_mcp
server: {name: zones, version: 1.0.0}
tools:
  - name: now
    description: The time in a zone.
    parameters:
      - {name: zone, type: string, maxLength: 40%s}
"""
ZONES_IMPL = """\
from mcpgen_runtime import ToolError
from zones_mcp import ZonesServer


class Impl(ZonesServer):
    def now(self, zone: str) -> str:
        if zone != "Europe/Paris":
            raise ToolError(f"unknown zone {zone!r}")
        return "12:00"
"""


def test_a_run_where_no_valid_call_succeeded_says_so(tmp_path: Path) -> None:
    """Before: "now  17 calls  ok", as for a server that answered every call."""
    (tmp_path / "zones.yaml").write_text(ZONES % "", encoding="utf-8")
    (tmp_path / "zones_impl.py").write_text(ZONES_IMPL, encoding="utf-8")
    args = ["zones.yaml", "--impl", "zones_impl:Impl", "--examples", "10", "--seed", "1"]
    done = mcpgen_test(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [tool_line] = [line for line in done.stdout.splitlines() if line.startswith("  now")]
    assert "ok; valid: " in tool_line and " refused" in tool_line and "succeeded" not in tool_line
    assert "warning: now: no valid call succeeded" in done.stdout
    document = json.loads(mcpgen_test(*args, "--format", "json", cwd=tmp_path).stdout)
    assert document["no_valid_call_succeeded"] == ["now"]
    valid = document["tools"][0]["valid"]
    assert valid["succeeded"] == 0 and valid["refused"] > 0


def test_examples_in_the_spec_seed_the_arguments_and_are_no_drift(tmp_path: Path) -> None:
    from mcpgen.testing.drift import drift_findings

    (tmp_path / "zones.yaml").write_text(ZONES % ", examples: [Europe/Paris]", encoding="utf-8")
    (tmp_path / "zones_impl.py").write_text(ZONES_IMPL, encoding="utf-8")
    args = ["zones.yaml", "--impl", "zones_impl:Impl", "--examples", "10", "--seed", "1"]
    document = json.loads(mcpgen_test(*args, "--format", "json", cwd=tmp_path).stdout)
    assert document["no_valid_call_succeeded"] == []
    assert document["tools"][0]["valid"]["succeeded"] > 0
    # a server that lists the schema without the contract's examples has not drifted
    schema = {"type": "object", "properties": {"zone": {"type": "string"}}}
    with_examples = {
        "type": "object",
        "properties": {"zone": {"type": "string", "examples": ["Europe/Paris"]}},
    }
    contract = [{"name": "now", "inputSchema": with_examples}]
    assert drift_findings(contract, [{"name": "now", "inputSchema": schema}], "2025-11-25") == []
    other = {"type": "object", "properties": {"zone": {"type": "string", "title": "Zone"}}}
    assert drift_findings(contract, [{"name": "now", "inputSchema": other}], "2025-11-25")


# -- issue 33, items 2 and 3: tasks a server makes, progress as a sign of life -----------------

WEATHER = Path(__file__).resolve().parents[3] / "examples" / "weather"


def test_an_optional_task_tool_is_followed_in_process_and_over_stdio() -> None:
    """Before: every call of get_forecast (task_support: optional, which the weather
    server runs as a task on 2026-07-28) was "server_error: the server went away:
    unexpected resultType 'task'"."""
    args = ["tools.yaml", "--tool", "get_forecast", "--examples", "5", "--seed", "1"]
    for target in ([], ["--", sys.executable, "-m", "weather_mcp"]):
        done = mcpgen_test(*args, "--format", "json", *target, cwd=WEATHER)
        assert done.returncode == 0, (target, done.stdout, done.stderr)
        [tool] = json.loads(done.stdout)["tools"]
        assert tool["valid"]["succeeded"] > 0 and tool["valid"]["refused"] == 0


PROGRESS_SPEC = """\
mcpgen: 1
package: slowly_mcp
server: {name: slowly, version: 1.0.0}
tools:
  - name: crawl
    description: Works a while, reporting progress as it goes, then answers.
    parameters:
      - {name: pages, type: integer, minimum: 1, maximum: 1}
      - {name: quiet, type: boolean}
    callback: positional
"""
PROGRESS_IMPL = """\
import time

from slowly_mcp import Context, SlowlyServer


class Impl(SlowlyServer):
    def crawl(self, pages: int, quiet: bool, *, ctx: Context = Context.NONE) -> str:
        for step in range(8):  # 2.4 s in all, longer than --timeout 1
            time.sleep(0.3)
            if not quiet:
                ctx.report_progress(step + 1, 8)
        return "crawled"
"""


def test_progress_restarts_the_timeout_and_silence_does_not(tmp_path: Path) -> None:
    """Before: a call that reported progress throughout but ran past --timeout was a
    `timeout` finding (server-everything's long-running tool at --timeout 10)."""
    (tmp_path / "slowly.yaml").write_text(PROGRESS_SPEC, encoding="utf-8")
    (tmp_path / "slowly_impl.py").write_text(PROGRESS_IMPL, encoding="utf-8")
    done = mcpgen_test(
        *("slowly.yaml", "--impl", "slowly_impl:Impl", "--format", "json"),
        *("--tool", "crawl", "--replay", '{"pages": 1, "quiet": false}', "--timeout", "1"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    silent = mcpgen_test(
        *("slowly.yaml", "--impl", "slowly_impl:Impl", "--format", "json"),
        *("--tool", "crawl", "--replay", '{"pages": 1, "quiet": true}', "--timeout", "1"),
        cwd=tmp_path,
    )
    assert silent.returncode == 1
    [finding] = json.loads(silent.stdout)["findings"]
    assert finding["check"] == "timeout"
