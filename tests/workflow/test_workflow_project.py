"""Project configuration ([tool.mcpgen]), CI-grade diagnostics and host configuration.

Through the real CLI (click's runner, in a temporary project folder): commands
with no arguments read the nearest pyproject.toml's [tool.mcpgen], flags
override it; validate, build --check and diff speak text, json and github;
NO_COLOR/FORCE_COLOR; exit codes 0 clean, 1 findings, 2 usage or I/O;
`mcpgen config` prints and merges host entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "tests" / "fixtures" / "workflow" / "inventory"

SPEC = """\
mcpgen: 1
package: {package}
server: {{name: {name}, version: "1.0"}}
tools:
  - name: ping
    description: Answer.
    parameters: [{{name: who, type: string}}]
    callback: positional
"""


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "a.tools.yaml").write_text(SPEC.format(package="a_mcp", name="a"))
    (tmp_path / "b.tools.yaml").write_text(SPEC.format(package="b_mcp", name="b"))
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.mcpgen]\n'
        'specs = [{path = "api/a.tools.yaml", output = "src/a_mcp"}, "b.tools.yaml"]\n'
    )
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "sub" / "deeper")  # found from the working folder upward
    return tmp_path


def test_build_with_no_arguments_uses_tool_mcpgen(project: Path) -> None:
    code, out, err = _cli("build")
    assert code == 0, out + err
    assert (project / "src" / "a_mcp" / "server.py").is_file()  # per-spec output
    assert (project / "b_mcp" / "server.py").is_file()  # the spec's own default
    assert out.count(": wrote ") == 2
    code, out, _ = _cli("build", "--check")
    assert code == 0 and out.count("up to date") == 2
    code, out, _ = _cli("validate")
    assert code == 0 and out.count("valid (1 tool(s))") == 2
    # a SPEC on the command line wins over the configured list
    code, out, _ = _cli("validate", str(project / "b.tools.yaml"))
    assert code == 0 and out.count("valid") == 1


def test_flags_override_the_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.mcpgen]\nspecs = ["b.tools.yaml"]\ncheck = true\nformat = "json"\n'
    )
    code, out, _ = _cli("build")  # check = true: nothing written, stale
    assert code == 1 and not (project / "b_mcp").exists()
    assert json.loads(out)["specs"][0]["status"] == "stale"
    code, out, _ = _cli("build", "--format", "text")  # still a check, as text
    assert code == 1 and "fix: mcpgen build" in out + _


def test_a_bad_configuration_is_a_usage_error(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.mcpgen]\nspecz = ["b.tools.yaml"]\n')
    code, _, err = _cli("build")
    assert code == 2 and "unknown key(s) specz" in err


def test_no_spec_anywhere_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli("build")
    assert code == 2 and "mcpgen init" in err


def test_exit_codes_are_consistent(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    for args in (
        ["validate", missing],
        ["build", missing],
        ["build", "--check", missing],
        ["diff", missing, missing],
    ):
        code, _, err = _cli(*args)
        assert code == 2, (args, err)
    bad = tmp_path / "bad.yaml"
    bad.write_text("mcpgen: 1\npackage: x_mcp\nserver:\n  name: x\n   version: 1\ntools: []\n")
    for args in (["validate", str(bad)], ["build", str(bad)], ["build", "--check", str(bad)]):
        code, _, err = _cli(*args)
        assert code == 1, (args, err)
    code, _, err = _cli("validate", str(bad))
    # the YAML mistake in mcpgen's words, at line:col, then the closing count
    assert f"{bad}:5:11: YAML syntax error: a 'key: value' where none can start" in err
    assert "mapping values" not in err
    assert err.splitlines()[-1] == "1 error, 0 warnings in 1 spec"


def test_validate_formats_and_outside_refs(tmp_path: Path) -> None:
    spec = tmp_path / "svc" / "tools.yaml"
    spec.parent.mkdir()
    (tmp_path / "shared.json").write_text('{"type": "string"}')
    spec.write_text(
        SPEC.format(package="s_mcp", name="s").replace("type: string}", '$ref: "../shared.json"}')
    )
    code, _, err = _cli("validate", str(spec))
    assert code == 1 and "pass --allow-outside-refs" in err
    assert _cli("validate", "--allow-outside-refs", str(spec))[0] == 0
    code, out, _ = _cli("validate", "--format", "json", str(spec))
    document = json.loads(out)
    assert code == 1 and document["summary"] == {"specs": 1, "errors": 1, "warnings": 0}
    (diagnostic,) = document["specs"][0]["diagnostics"]
    assert diagnostic["line"] == 7 and diagnostic["path"].endswith("$ref")
    code, out, _ = _cli("validate", "--format", "github", str(spec))
    assert code == 1 and out.startswith(f"::error file={spec},line=7,col=")


def test_build_check_github_format_names_the_fix(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(SPEC.format(package="g_mcp", name="g"))
    code, out, _ = _cli("build", "--check", "--format", "github", str(spec))
    assert code == 1
    assert f"::error file={spec},line=1,title=mcpgen build::" in out
    assert f"fix%3A mcpgen build {spec}" not in out and f"fix: mcpgen build {spec}" in out
    assert "missing: " in out or "--- " in out  # what differs, in the job log


def _colored(env: dict[str, str], spec: Path) -> str:
    """Run validate in a pseudo-terminal-free subprocess (stderr is a pipe)."""
    done = subprocess.run(
        [sys.executable, "-c", "from mcpgen.cli import main; main()", "validate", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            **{k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")},
            **env,
        },
    )
    return done.stderr


def test_no_color_and_force_color(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text("mcpgen: 1\n")
    assert "\x1b[" not in _colored({}, spec)  # a pipe: plain
    assert "\x1b[31m" in _colored({"FORCE_COLOR": "1"}, spec)
    assert "\x1b[" not in _colored({"FORCE_COLOR": "1", "NO_COLOR": "1"}, spec)


def test_diff_with_no_arguments_compares_with_head(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=project, env={**os.environ, **env}, check=True)
    (project / "pyproject.toml").write_text(
        '[tool.mcpgen]\nspecs = ["b.tools.yaml"]\ndiff-category = "source"\n'
    )
    spec = project / "b.tools.yaml"
    spec.write_text(spec.read_text().replace("type: string", "enum: [x]"))
    code, out, _ = _cli("diff")
    assert code == 1, out  # an enum where any string was: typed callers break (source)
    assert "PARAM_ENUM_VALUE_REMOVED" in out and "at --category source" in out


def test_config_prints_and_merges_host_entries(project: Path) -> None:
    code, out, _ = _cli("config", "json", str(project / "b.tools.yaml"))
    assert code == 0
    entry = json.loads(out)["mcpServers"]["b"]
    assert entry["command"] == sys.executable and entry["args"] == ["-m", "b_mcp"]
    assert entry["env"]["PYTHONPATH"] == str(project.resolve())
    host = project / "claude.json"
    host.write_text(json.dumps({"theme": "dark", "mcpServers": {"other": {"command": "x"}}}))
    for _ in range(2):  # merging twice replaces the entry, keeps the rest
        code, out, _ = _cli(
            "config",
            "claude-desktop",
            str(project / "b.tools.yaml"),
            "--write",
            "--path",
            str(host),
        )
        assert code == 0, out
    merged = json.loads(host.read_text())
    assert merged["theme"] == "dark" and set(merged["mcpServers"]) == {"other", "b"}
    assert "replaced server 'b'" in out
    vscode = project / "vs.json"
    assert (
        _cli(
            "config",
            "vscode",
            str(project / "api" / "a.tools.yaml"),
            "--write",
            "--path",
            str(vscode),
        )[0]
        == 0
    )
    entry = json.loads(vscode.read_text())["servers"]["a"]
    assert entry["type"] == "stdio"
    # the configured output (src/a_mcp) is where the package is found
    assert entry["env"]["PYTHONPATH"].split(os.pathsep)[0] == str((project / "src").resolve())
    host.write_text("{not json")
    code, _, err = _cli(
        "config", "cursor", str(project / "b.tools.yaml"), "--write", "--path", str(host)
    )
    assert code == 2 and "not plain JSON" in err and host.read_text() == "{not json"


def test_one_misspelt_required_key_is_one_diagnostic(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text('mcpgen: 1\npackage: x_mcp\nserver: {name: x, versoin: "1"}\ntools: []\n')
    code, _, err = _cli("validate", str(spec))
    assert code == 1
    assert err.splitlines() == [
        (
            f"{spec}:3:19: server.versoin: unknown key 'versoin' (did you mean 'version'?); "
            "expected one of: name, version, title, instructions, implementation, "
            "registry_name, scopes, description, environment"
        ),
        "1 error, 0 warnings in 1 spec",
    ]
    # a key that is simply missing is still reported
    spec.write_text('mcpgen: 1\npackage: x_mcp\nserver: {name: x, title: "1"}\ntools: []\n')
    assert "missing required key 'version'" in _cli("validate", str(spec))[2]


def test_config_python_names_another_interpreter(project: Path) -> None:
    code, out, _ = _cli(
        "config", "json", str(project / "b.tools.yaml"), "--python", "/opt/app/.venv/bin/python"
    )
    assert code == 0
    assert json.loads(out)["mcpServers"]["b"]["command"] == "/opt/app/.venv/bin/python"
