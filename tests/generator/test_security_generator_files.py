"""Files the generator reads and writes for the user, second review (issue 22).

- ``build --check`` renders and compares every time: a hand edit whose hash was also
  written into ``.mcpgen-manifest.json`` is stale, not "up to date".
- Replacing a file keeps its mode and owner: a 0600 host file holding tokens stays
  0600 after ``mcpgen config --write`` (``init`` and ``import -o`` share the code).
- No write goes through a symlinked folder mcpgen creates or writes under in the
  project (``.vscode -> ../elsewhere``, ``tests -> ../outside``).
- ``[tool.mcpgen]`` is looked for up to the repository root, never in a folder
  another user owns, and a file found above the working folder is named.
- ``config`` refuses the ``output:`` that ``build`` refuses; ``package:`` never
  shadows mcpgen or a package mcpgen or the generated package imports.
- A host file nested too deeply or that is not a regular file is a clear error.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.config import find_config
from mcpgen.spec.load import load_contract
from mcpgen.write import MANIFEST

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples/weather"
OTHER_USER = 54321
HANG_GUARD = 60  # seconds: turns a hang into a failure, never a pass/fail criterion

SPEC = """\
mcpgen: 1
package: {package}
{output}server: {{name: safe, version: 1.0.0}}
tools:
  - {{name: t, description: A tool., returns: string}}
"""


@pytest.fixture
def weather(tmp_path: Path) -> Path:
    project = tmp_path / "weather"
    shutil.copytree(WEATHER, project, ignore=shutil.ignore_patterns("__pycache__", "*_mcp"))
    return project / "tools.yaml"


@pytest.fixture
def chdir(tmp_path: Path) -> Iterator[None]:
    before = Path.cwd()
    try:
        yield
    finally:
        os.chdir(before)


def _spec(directory: Path, package: str = "safe_mcp", output: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    spec = directory / "tools.yaml"
    line = f"output: {output}\n" if output is not None else ""
    spec.write_text(SPEC.format(package=package, output=line), encoding="utf-8")
    return spec


# -- build --check renders and compares --------------------------------------------------


def test_check_sees_a_hand_edit_whose_hash_is_in_the_manifest(weather: Path) -> None:
    built = build_spec(weather)
    assert built.ok and built.output is not None
    server = built.output / "server.py"
    server.write_text(
        server.read_text(encoding="utf-8") + "import os  # hand edit\n", encoding="utf-8"
    )
    manifest_file = built.output / MANIFEST
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    manifest["outputs"]["server.py"] = hashlib.sha256(server.read_bytes()).hexdigest()
    manifest_file.write_text(json.dumps(manifest), encoding="utf-8")
    checked = build_spec(weather, check=True)
    assert checked.status == "stale"
    assert any("hand edit" in diff for diff in checked.diffs)
    result = CliRunner().invoke(main, ["build", "--check", str(weather)])
    assert result.exit_code == 1, result.output


# -- replacing a file keeps its mode and owner -------------------------------------------


def test_config_write_keeps_a_private_host_file_private(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "p")
    host = tmp_path / "host.json"
    host.write_text('{"mcpServers": {"other": {"env": {"TOKEN": "secret"}}}}', encoding="utf-8")
    host.chmod(0o600)
    if os.geteuid() == 0:
        os.chown(host, OTHER_USER, OTHER_USER)
    result = CliRunner().invoke(main, ["config", "json", str(spec), "--write", "--path", str(host)])
    assert result.exit_code == 0, result.output
    info = host.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600
    if os.geteuid() == 0:
        assert (info.st_uid, info.st_gid) == (OTHER_USER, OTHER_USER)
    assert "secret" in host.read_text(encoding="utf-8") and '"safe"' in host.read_text()


def test_init_keeps_the_mode_of_the_pyproject_it_extends(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[project]\nname = "proj"\n', encoding="utf-8")
    pyproject.chmod(0o640)
    result = CliRunner().invoke(main, ["init", str(project)])
    assert result.exit_code == 0, result.output
    assert "[tool.mcpgen]" in pyproject.read_text(encoding="utf-8")
    assert stat.S_IMODE(pyproject.stat().st_mode) == 0o640


# -- no write through a symlinked folder -------------------------------------------------


def test_config_vscode_refuses_a_symlinked_vscode_folder(tmp_path: Path, chdir: None) -> None:
    project = tmp_path / "proj"
    spec = _spec(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".vscode").symlink_to("../elsewhere")
    os.chdir(project)
    result = CliRunner().invoke(main, ["config", "vscode", str(spec), "--write"])
    assert result.exit_code == 2, result.output
    assert ".vscode" in result.output and "symbolic link" in result.output
    assert list(elsewhere.iterdir()) == []


def test_a_linked_folder_of_a_per_user_host_file_is_followed(
    tmp_path: Path, chdir: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cursor's ~/.cursor/mcp.json is the user's, not the project's: a dotfiles link
    there is theirs to make, even when the working folder is the home folder."""
    spec = _spec(tmp_path / "proj")
    home = tmp_path / "home"
    dotfiles = tmp_path / "dotfiles" / "cursor"
    dotfiles.mkdir(parents=True)
    home.mkdir()
    (home / ".cursor").symlink_to(dotfiles)
    monkeypatch.setenv("HOME", str(home))
    os.chdir(home)
    result = CliRunner().invoke(main, ["config", "cursor", str(spec), "--write"])
    assert result.exit_code == 0, result.output
    assert "safe" in json.loads((dotfiles / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]


def test_init_refuses_a_symlinked_tests_folder(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "tests").symlink_to("../outside")
    result = CliRunner().invoke(main, ["init", str(project)])
    assert result.exit_code == 2, result.output
    assert "tests" in result.output and "symbolic link" in result.output
    assert list(outside.iterdir()) == []
    assert not (project / "tools.yaml").exists()  # refused before anything was written


# -- [tool.mcpgen] stops at the repository root and at another user's folder ------------

TABLE = '[tool.mcpgen]\nallow-outside-refs = true\nspecs = ["tools.yaml"]\n'


def test_config_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert find_config(repo / "sub") is None
    assert find_config(tmp_path) is not None
    (repo / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    found = find_config(repo / "sub")
    assert found is not None and found.file == repo / "pyproject.toml"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder to another user")
def test_config_search_skips_a_folder_another_user_owns(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "mine").mkdir(parents=True)
    (shared / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    os.chown(shared, OTHER_USER, OTHER_USER)
    assert find_config(shared / "mine") is None


def test_a_config_above_the_working_folder_is_named(tmp_path: Path, chdir: None) -> None:
    spec = _spec(tmp_path / "proj")
    (spec.parent / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    (spec.parent / "deeper").mkdir()
    os.chdir(spec.parent / "deeper")
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
    assert f"using [tool.mcpgen] of {spec.parent / 'pyproject.toml'}" in result.output


# -- config and build share the output check; package names ----------------------------


def test_config_refuses_the_output_build_refuses(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "proj", output="../elsewhere/safe_mcp")
    built = CliRunner().invoke(main, ["build", str(spec)])
    assert built.exit_code == 1 and "leaves the spec's directory tree" in built.output
    result = CliRunner().invoke(main, ["config", "json", str(spec)])
    assert result.exit_code == 1, result.output
    assert "leaves the spec's directory tree" in result.output


@pytest.mark.parametrize(
    "package", ["click", "redis", "mcpgen", "mcpgen_runtime", "jinja2", "yaml", "httpx", "black"]
)
def test_a_package_may_not_shadow_a_dependency(tmp_path: Path, package: str) -> None:
    loaded = load_contract(_spec(tmp_path / "p", package=package))
    assert loaded.contract is None
    (message,) = [str(d) for d in loaded.diagnostics if "package" in str(d)]
    assert f"'{package}' would shadow" in message


# -- host files that are not plain JSON objects ------------------------------------------


def test_a_deeply_nested_host_file_is_a_clear_error(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "p")
    host = tmp_path / "host.json"
    host.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = CliRunner().invoke(main, ["config", "json", str(spec), "--write", "--path", str(host)])
    assert result.exit_code == 2, result.output
    assert "nested too deeply" in result.output
    assert not isinstance(result.exception, RecursionError)


def test_a_fifo_host_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "p")
    host = tmp_path / "host.json"
    os.mkfifo(host)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from mcpgen.cli import main; main()",
            "config",
            "json",
            str(spec),
            "--write",
            "--path",
            str(host),
        ],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "not a regular file" in done.stderr
    assert stat.S_ISFIFO(host.lstat().st_mode)
