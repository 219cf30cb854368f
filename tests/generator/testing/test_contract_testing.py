"""`mcpgen test` end to end: the seeded contract in process (no false positives; each
seeded bug found under its check with minimal arguments; same seed, same report; every
reproduce line replays), a TypeScript SDK server over stdio, the generated server over
HTTP, JUnit and GitHub output, usage errors. Small --examples keep it quick."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from fixtures.http_server import HttpServer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "contract_test"
NPM_SDK = Path(__file__).resolve().parents[3] / "node_modules" / "@modelcontextprotocol" / "sdk"
MCPGEN = [sys.executable, "-c", "from mcpgen.cli import main; main()"]


def mcpgen_test(
    *args: str, cwd: Path = FIXTURES, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        check=False,
        args=[*MCPGEN, "test", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def report(*args: str) -> tuple[int, dict[str, Any]]:
    done = mcpgen_test("--format", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def by_check(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["tool"], f["check"]): f for f in document["findings"]}


def test_a_correct_implementation_has_no_finding() -> None:
    code, document = report(
        "seeded.yaml", "--impl", "seeded_impl:Correct", "--examples", "40", "--seed", "7"
    )
    assert document["findings"] == [] and code == 0
    results = {t["name"]: t["result"] for t in document["tools"]}
    assert results.pop("wipe") == "skipped"
    assert set(results.values()) == {"passed"}
    assert all(t["calls"] > 0 for t in document["tools"] if t["name"] != "wipe")


@pytest.fixture(scope="module")
def buggy() -> dict[str, Any]:
    code, document = report(
        "seeded.yaml", "--impl", "seeded_impl:Buggy", "--examples", "40", "--seed", "7"
    )
    assert code == 1
    return document


def test_each_seeded_bug_is_found_with_minimal_arguments(buggy: dict[str, Any]) -> None:
    found = by_check(buggy)
    assert found[("scale", "handler_crash")]["arguments"] == {"n": 301}
    assert found[("initial", "handler_crash")]["arguments"] == {"name": ""}
    assert found[("profile", "output_schema")]["arguments"] == {"age": 0}
    words = found[("count_words", "output_schema")]["arguments"]["text"]
    assert len(words.split()) == 2  # the bug starts at two words
    assert found[("status", "server_error")]["arguments"] == {"code": 500}
    assert ("set_label", "not_idempotent") in found
    assert ("lookup", "not_idempotent") not in found  # read-only: the hint says nothing
    assert found[("wait", "timeout")]["arguments"] == {"long": True}
    assert found[("report", "handler_crash")]["arguments"] == {"pages": 50}  # run as a task
    assert found[("query", "error_as_success")]["arguments"] == {"sql": ""}
    assert ("book", "output_schema") not in found
    assert len(found) == 9


def test_the_same_seed_gives_the_same_report(buggy: dict[str, Any]) -> None:
    _, again = report(
        "seeded.yaml", "--impl", "seeded_impl:Buggy", "--examples", "40", "--seed", "7"
    )
    assert again == buggy


def replays(finding: dict[str, Any]) -> None:
    """The finding's reproduce line exits 1 with the same check and arguments."""
    argv = shlex.split(finding["reproduce"])
    assert argv[:2] == ["mcpgen", "test"]
    done = subprocess.run(
        check=False,
        args=[*MCPGEN, "test", "--format", "json", *argv[2:]],
        cwd=FIXTURES,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, (finding, done.stdout, done.stderr)
    [replayed] = json.loads(done.stdout)["findings"]
    assert (replayed["check"], replayed["arguments"]) == (
        finding["check"],
        finding["arguments"],
    )


def test_every_reproduce_line_replays_while_the_bug_is_there(buggy: dict[str, Any]) -> None:
    for finding in buggy["findings"]:
        replays(finding)
    # fixed, the same line passes
    argv = shlex.split(buggy["findings"][0]["reproduce"])
    fixed = [a.replace("seeded_impl:Buggy", "seeded_impl:Correct") for a in argv[1:]]
    assert (
        subprocess.run(
            check=False, args=[*MCPGEN, *fixed], cwd=FIXTURES, capture_output=True, timeout=60
        ).returncode
        == 0
    )


def test_text_report_lists_tools_then_findings() -> None:
    done = mcpgen_test(
        "seeded.yaml",
        "--impl",
        "seeded_impl:Buggy",
        "--examples",
        "10",
        "--seed",
        "1",
        "--tool",
        "scale",
        "--tool",
        "initial",
    )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == "mcpgen test seeded.yaml (seed 1)"
    assert lines[1].split()[0] == "scale" and lines[2].split()[0] == "initial"
    assert (
        "reproduce: mcpgen test seeded.yaml --impl seeded_impl:Buggy --tool initial --replay"
        in done.stdout
    )
    assert done.stderr == ""  # piped: no progress lines
    assert not (FIXTURES / ".hypothesis").exists()  # nothing written beside the spec


@pytest.mark.skipif(
    shutil.which("node") is None or not (NPM_SDK / "package.json").is_file(),
    reason="node or the npm package @modelcontextprotocol/sdk is missing",
)
def test_a_typescript_sdk_server_over_stdio() -> None:
    code, document = report(
        "ts_faulty.yaml", "--examples", "15", "--seed", "2", "--", "node", "ts_faulty_server.mjs"
    )
    assert code == 1
    drift = {
        f["message"].split()[0] + ":" + f["tool"]
        for f in document["findings"]
        if f["check"] == "drift"
    }
    assert drift == {
        "TOOL_ADDED:debug",
        "TOOL_REMOVED:forgotten",
        "PARAM_CONSTRAINT_TIGHTENED:divide",
    }
    found = by_check(document)
    assert "'shout'" in found[("describe", "output_schema")]["message"]
    assert found[("divide", "server_error")]["arguments"] == {"a": 0, "b": 0}
    assert ("add", "invalid_accepted") in found
    assert {t["name"]: t["result"] for t in document["tools"]}["forgotten"] == "skipped"
    reproduce = found[("divide", "server_error")]["reproduce"]
    assert reproduce.endswith("-- node ts_faulty_server.mjs")


def test_the_generated_server_over_http_through_url(tmp_path: Path) -> None:
    from mcpgen.build import build_spec

    assert build_spec(FIXTURES / "seeded.yaml", output=tmp_path / "seeded_mcp").ok
    server = HttpServer(
        "seeded_mcp",
        "--impl",
        "seeded_impl:Buggy",
        pythonpath=[tmp_path, FIXTURES],
        cwd=FIXTURES,
        log_dir=tmp_path,
    )
    try:
        server.wait_ready()
        code, document = report(
            "seeded.yaml",
            "--url",
            server.url,
            "--examples",
            "25",
            "--seed",
            "3",
            "--tool",
            "scale",
            "--tool",
            "profile",
            "--tool",
            "book",
            "--tool",
            "report",
            "--tool",
            "wait",
            "--header",
            "Authorization: Bearer not-a-secret-anyone-checks",
        )
    finally:
        server.stop()
    assert code == 1
    found = by_check(document)
    # remotely a crash is the server's internal-error answer; an invalid output its refusal
    assert found[("scale", "server_error")]["arguments"] == {"n": 301}
    assert found[("profile", "server_error")]["arguments"] == {"age": 0}
    # the task-required tool runs as a task over HTTP too: its crash at 50 pages is found
    assert found[("report", "server_error")]["arguments"] == {"pages": 50}
    assert found[("wait", "timeout")]["arguments"] == {"long": True}
    assert set(found) == {
        ("scale", "server_error"),
        ("profile", "server_error"),
        ("report", "server_error"),
        ("wait", "timeout"),
    }
    assert {t["name"]: t["result"] for t in document["tools"]}["report"] != "skipped"
    reproduce = found[("scale", "server_error")]["reproduce"]
    # the header is named in the reproduce line, never its value
    assert "--url " + server.url + " --header 'Authorization: …'" in reproduce
    assert "not-a-secret" not in json.dumps(document)


def test_junit_and_github_output(tmp_path: Path) -> None:
    junit = tmp_path / "report.xml"
    done = mcpgen_test(
        "seeded.yaml",
        "--impl",
        "seeded_impl:Buggy",
        "--examples",
        "10",
        "--seed",
        "1",
        "--tool",
        "scale",
        "--tool",
        "book",
        "--tool",
        "wipe",
        "--junit",
        str(junit),
        "--format",
        "github",
    )
    assert done.returncode == 1
    suite = ET.parse(junit).getroot()
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"scale", "book", "wipe"}
    failure = cases["scale"].find("failure")
    assert failure is not None and failure.get("type") == "handler_crash"
    assert cases["book"].find("failure") is None and cases["wipe"].find("skipped") is not None
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    [line] = done.stdout.splitlines()
    assert line.startswith("::error file=seeded.yaml,line=") and "handler_crash" in line


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = mcpgen_test(str(tmp_path / "none.yaml"), "--impl", "x:Y")
    assert missing.returncode == 2 and "no such spec file" in missing.stderr
    unknown = mcpgen_test("seeded.yaml", "--impl", "seeded_impl:Correct", "--tool", "nope")
    assert unknown.returncode == 2 and "unknown --tool 'nope'" in unknown.stderr
    dead = mcpgen_test(
        "seeded.yaml",
        "--",
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('boom-before-start\\n'); sys.exit(3)",
    )
    assert dead.returncode == 2 and "did not start" in dead.stderr
    assert "boom-before-start" in dead.stderr
    bad_impl = mcpgen_test("seeded.yaml", "--impl", "no_such_module:X")
    assert bad_impl.returncode == 2 and "cannot load" in bad_impl.stderr
    abstract = mcpgen_test("seeded.yaml", "--impl", "seeded_mcp.server:SeededServer")
    assert abstract.returncode == 2 and "abstract" in abstract.stderr
    from fixtures.http_server import free_port

    down = mcpgen_test("seeded.yaml", "--url", f"http://127.0.0.1:{free_port()}/mcp")
    assert down.returncode == 2 and "cannot reach the MCP server at" in down.stderr
    lonely = mcpgen_test("seeded.yaml", "--header", "A: b")
    assert lonely.returncode == 2 and "--header needs --url" in lonely.stderr
    not_object = mcpgen_test(
        "seeded.yaml", "--impl", "seeded_impl:Correct", "--tool", "scale", "--replay", "[1]"
    )
    assert not_object.returncode == 2 and "JSON object" in not_object.stderr
    both = mcpgen_test(
        "seeded.yaml", "--impl", "seeded_impl:Correct", "--url", "http://127.0.0.1:9/"
    )
    assert both.returncode == 2 and "one target" in both.stderr


def test_assert_contract_in_a_projects_own_tests(tmp_path: Path) -> None:
    script = (
        (
            "from mcpgen.testing import assert_contract\n"
            "from seeded_impl import Buggy, Correct\n"
            "report = assert_contract(SPEC, Correct, examples=10, tools=['scale'])\n"
            "assert report.findings == [] and report.tools[0].calls > 0\n"
            "try:\n"
            "    assert_contract(SPEC, Buggy, examples=20, tools=['scale'])\n"
            "except AssertionError as exc:\n"
            "    assert '{\"n\": 301}' in str(exc), exc\n"
            "else:\n"
            "    raise SystemExit('no finding')\n"
            "import pathlib\n"
            "from mcpgen.testing.session import UsageFailure\n"
            "edited = pathlib.Path(TMP) / 'edited.yaml'\n"
            "edited.write_text(pathlib.Path(SPEC).read_text().replace('Ten times n.', 'Ten n.'))\n"
            "try:\n"
            "    assert_contract(edited, Correct, examples=5)\n"
            "except UsageFailure as exc:\n"
            "    assert 'stale' in str(exc) and 'mcpgen build' in str(exc), exc\n"
            "else:\n"
            "    raise SystemExit('a stale package was used')\n"
        )
        .replace("TMP", repr(str(tmp_path)))
        .replace("SPEC", repr(str(FIXTURES / "seeded.yaml")))
    )
    from mcpgen.build import build_spec

    assert build_spec(FIXTURES / "seeded.yaml", output=tmp_path / "seeded_mcp").ok
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(FIXTURES)])}
    done = subprocess.run(
        check=False,
        args=[sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_valid_arguments_refused_by_an_mcpgen_server_are_a_finding() -> None:
    from mcpgen.testing.checks import ToolUnderTest, check_valid
    from mcpgen.testing.targets import Reply

    tool = ToolUnderTest("t", {"name": "t", "inputSchema": {"type": "object"}})
    refused = Reply(
        result={
            "content": [
                {
                    "type": "text",
                    "text": "Invalid arguments for tool 't': x: expected integer, got 'a'",
                }
            ],
            "isError": True,
        }
    )
    finding = check_valid(tool, {"x": "a"}, refused)
    assert finding is not None and finding.check == "server_error"
    declined = Reply(
        result={"content": [{"type": "text", "text": "no such city"}], "isError": True}
    )
    assert check_valid(tool, {}, declined) is None


def test_progress_lines_on_a_terminal_only() -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            check=False,
            args=[
                *MCPGEN,
                "test",
                "seeded.yaml",
                "--impl",
                "seeded_impl:Correct",
                "--examples",
                "3",
                "--tool",
                "scale",
            ],
            cwd=FIXTURES,
            stdout=follower,
            stderr=follower,
            timeout=120,
        )
        os.close(follower)
        output = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0
    assert b"tested scale: " in output and b"0 finding(s)" in output


def test_no_target_means_the_specs_server_implementation(tmp_path: Path) -> None:
    spec = tmp_path / "with_impl.yaml"
    spec.write_text(
        (FIXTURES / "seeded.yaml")
        .read_text(encoding="utf-8")
        .replace(
            "server: {name: seeded, version: 1.0.0}",
            "server: {name: seeded, version: 1.0.0, implementation: 'seeded_impl:Buggy'}",
        ),
        encoding="utf-8",
    )
    code, document = report(str(spec), "--examples", "20", "--seed", "1", "--tool", "initial")
    assert code == 1 and document["findings"][0]["arguments"] == {"name": ""}
    assert " --impl " not in document["findings"][0]["reproduce"]  # replays the same default
    none = mcpgen_test(str(FIXTURES / "seeded.yaml"))
    assert none.returncode == 2 and "no target" in none.stderr


def test_skip_check_drops_a_check_and_goes_into_reproduce_lines() -> None:
    code, document = report(
        "seeded.yaml",
        *("--impl", "seeded_impl:Buggy", "--tool", "query", "--tool", "wait"),
        *("--examples", "10", "--seed", "7", "--timeout", "20"),
        *("--skip-check", "error_as_success"),
    )
    assert code == 1
    [finding] = document["findings"]  # query's error text is no finding now
    assert finding["check"] == "timeout"
    argv = shlex.split(finding["reproduce"])
    assert argv[argv.index("--timeout") + 1] == "20"
    assert argv[argv.index("--skip-check") + 1] == "error_as_success"
    replays(finding)


def test_the_cli_offers_every_check_but_drift_to_skip() -> None:
    from mcpgen.cli.test import SKIPPABLE_CHECKS
    from mcpgen.testing.checks import CHECKS

    assert set(SKIPPABLE_CHECKS) == set(CHECKS) - {"drift"}


@pytest.mark.parametrize(
    "text",
    [
        "Error: 'NoneType' object has no attribute 'fetchall'",
        'Traceback (most recent call last):\n  File "x.py", line 1',
        "ValueError: invalid literal for int()",
        "sqlite3.OperationalError: no such table: t",
        "ERROR: sqlite3.OperationalError: no such table: t",
        "error: [Errno 2] No such file or directory: 'x'",
        "Error: TypeError: Cannot read properties of undefined (reading 'x')",
        "Error executing tool read_doc: [Errno 2] No such file",
        "'NoneType' object has no attribute 'paragraphs'",
        "  Exception: boom",
    ],
)
def test_error_reports_read_as_errors(text: str) -> None:
    from mcpgen.testing.checks import looks_like_an_error

    assert looks_like_an_error({"content": [{"type": "text", "text": text}]}) == text


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": "0 errors found"}],
        [{"type": "text", "text": "Error rate: 2%"}],
        [{"type": "text", "text": "Errors: none"}],
        [{"type": "text", "text": "Error: Operation failed"}],  # a demo's message, on purpose
        [{"type": "text", "text": "error: file not found"}],
        [{"type": "text", "text": "The Error: a novel"}],
        [{"type": "text", "text": "Error: x"}, {"type": "text", "text": "more"}],  # not alone
        [{"type": "image", "data": "", "mimeType": "image/png"}],
    ],
)
def test_other_answers_do_not(content: list[dict[str, Any]]) -> None:
    from mcpgen.testing.checks import looks_like_an_error

    assert looks_like_an_error({"content": content}) is None


HOSTILE_SERVER = ("shrink.yaml", "--examples", "2", "--seed", "1")
HOSTILE_COMMAND = ("--", sys.executable, "hostile_server.py")
# what a line of the report must never hold raw: line breaks (\n aside), a terminal's
# escapes, bidi overrides, C1 controls
RAW = ("\r", "\u2028", "\u2029", "\u202e", "\u202c", "\u009b", "\x1b", "\x07")


def _no_workflow_command(text: str) -> None:
    """GitHub's runner reads ``::cmd::`` at a line's start (after blanks) and the
    legacy ``##[cmd]`` anywhere in a line."""
    for line in text.split("\n"):
        assert not line.lstrip().startswith("::"), line
    assert "##[" not in text


def test_a_hostile_servers_words_stay_on_their_line_in_the_text_report() -> None:
    done = mcpgen_test(*HOSTILE_SERVER, *HOSTILE_COMMAND)
    assert done.returncode == 1, done.stderr
    _no_workflow_command(done.stdout)
    assert not any(char in done.stdout for char in RAW)
    lines = done.stdout.split("\n")
    assert not any(line.startswith("1. fake") for line in lines)
    # the server's words are still there to read, escaped
    assert any(
        line.startswith("2. archive: server_error: ")
        and "boom\\n::error::pwned\\r::add-mask::secret\\u2028" in line
        and "\\u202eevil" in line
        and "\\x9b31m" in line
        for line in lines
    )
    assert "  \\x3a:error::listed\\n::add-mask::x\\u202e  " in done.stdout  # the extra tool


def test_a_hostile_servers_words_are_escaped_in_json_as_diff_escapes_them() -> None:
    import importlib.util

    from mcpgen.printable import escape_json

    found_spec = importlib.util.spec_from_file_location("hostile", FIXTURES / "hostile_server.py")
    assert found_spec is not None and found_spec.loader is not None
    hostile = importlib.util.module_from_spec(found_spec)
    found_spec.loader.exec_module(hostile)

    done = mcpgen_test("--format", "json", *HOSTILE_SERVER, *HOSTILE_COMMAND)
    assert done.returncode == 1, done.stderr
    assert not any(char in done.stdout for char in RAW)
    _no_workflow_command(done.stdout)
    document = json.loads(done.stdout)
    assert done.stdout.rstrip("\n") == escape_json(
        json.dumps(document, indent=2, ensure_ascii=False)
    )
    found = by_check(document)
    assert found[("archive", "server_error")]["message"].endswith(hostile.HOSTILE)  # same text
    assert (hostile.EXTRA["name"], "drift") in found
