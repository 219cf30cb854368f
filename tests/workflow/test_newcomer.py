"""The newcomer's path, scripted: what the README's Install and Quickstart say, run for real.

A fresh venv installs mcpgen from this checkout (`pip install <checkout>`, as the
README says; dependencies come from the configured package index, so the test
skips when pip cannot reach one). Then, in an empty folder: `mcpgen init`,
`mcpgen build` with no arguments, `python -m <package>` from the project folder
answers `initialize`, the scaffolded test and `mypy --strict` pass, `mcpgen config
json` prints an entry that starts the server from anywhere, the project built as a
wheel through the hatch hook installs into another fresh venv and serves its tools,
and `pre-commit try-repo` blocks a stale spec and a hand-edited generated file.

One venv is built per module (about a minute); the steps share one project folder
and run in order.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen.build import runtime_requirement

ROOT = Path(__file__).resolve().parents[2]
DEV_BIN = Path(sys.executable).parent
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

pytestmark = pytest.mark.timeout(900)


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        args,
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    return where / "bin"


def _pip_or_skip(done: subprocess.CompletedProcess[str]) -> None:
    if done.returncode != 0:
        text = done.stdout + done.stderr
        ours = "mcpgen-runtime" in text or "mcpgen_runtime" in text  # never an index's fault
        if not ours and ("No matching distribution" in text or "Could not find a version" in text):
            pytest.skip(f"pip cannot reach a package index:\n{text[-1500:]}")
        raise AssertionError(text)


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def quickstart_install_line() -> str:
    """The ``pip install`` line of the README's Quickstart, without its comment."""
    quickstart = _readme().split("## Quickstart", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line for line in quickstart.splitlines() if "pip install" in line]
    assert len(lines) == 1, quickstart
    return lines[0].split("#", 1)[0].strip()


def readme_sample(command: str) -> list[str]:
    """The output lines the README shows after ``$ command`` in a console block."""
    block = _readme().split(f"$ {command}\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def _initialize(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start a stdio server, send `initialize` and `tools/list`, close stdin."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "newcomer", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        },
    ]
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        input="".join(json.dumps(r) + "\n" for r in requests),
        timeout=120,
        check=False,
    )
    replies = {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    assert set(replies) == {1, 2, 3}, done.stdout + done.stderr
    return replies


class Walk:
    """What the steps share: the fresh venv and the project folder."""

    bin: Path
    project: Path
    log: list[str]

    def sh(
        self,
        *args: str,
        cwd: Path | None = None,
        ok: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        done = _run(list(args), cwd or self.project, env)
        shown = " ".join(Path(a).name if a.startswith(str(self.bin)) else a for a in args)
        self.log.append(f"$ {shown}\n{done.stdout}{done.stderr}".rstrip())
        if ok:
            assert done.returncode == 0, done.stdout + done.stderr
        return done


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walk]:
    base = tmp_path_factory.mktemp("newcomer")
    state = Walk()
    state.bin = _venv(base / "venv")
    state.log = []
    # README, Quickstart: its install line exactly as printed, the checkout for its path
    line = quickstart_install_line()
    args = shlex.split(line.replace("/path/to/mcpgen", str(ROOT)))
    assert args[:4] == ["python", "-m", "pip", "install"], line
    _pip_or_skip(_run([str(state.bin / "python"), *args[1:4], "-q", *args[4:]], base))
    state.log.append(f"$ {line}")
    state.project = base / "notes"
    state.project.mkdir()
    yield state
    transcript = os.environ.get("MCPGEN_WALK_LOG")
    if transcript:  # the closing note of issue 13 shows this
        Path(transcript).write_text("\n\n".join(state.log) + "\n", encoding="utf-8")


def test_1_init_in_an_empty_folder(walk: Walk) -> None:
    done = walk.sh(str(walk.bin / "mcpgen"), "init")
    assert "next:" in done.stdout
    names = {p.relative_to(walk.project).as_posix() for p in walk.project.rglob("*") if p.is_file()}
    assert names == {
        "tools.yaml",
        "notes_impl.py",
        "tests/test_notes.py",
        "conftest.py",
        "pyproject.toml",
        ".pre-commit-config.yaml",
        ".gitignore",
        ".mcpgen/mcpgen-1.schema.json",
    }


def test_2_build_with_no_arguments(walk: Walk) -> None:
    done = walk.sh(str(walk.bin / "mcpgen"), "build")
    assert "tools.yaml: wrote" in done.stdout and "notes_mcp" in done.stdout
    # the README's sample output, but for the time it took
    seconds = re.compile(r"\(\d+\.\d+s\)")
    shown = [seconds.sub("(…s)", line) for line in done.stdout.splitlines()]
    assert shown == [seconds.sub("(…s)", line) for line in readme_sample("mcpgen build")]
    assert (walk.project / "notes_mcp" / "__main__.py").is_file()
    again = walk.sh(str(walk.bin / "mcpgen"), "build", "--check")
    assert "up to date" in again.stdout


def test_3_python_m_serves_from_the_project_folder(walk: Walk) -> None:
    replies = _initialize([str(walk.bin / "python"), "-m", "notes_mcp"], walk.project)
    assert replies[1]["result"]["serverInfo"]["name"] == "notes"
    assert [t["name"] for t in replies[2]["result"]["tools"]] == ["greet", "add"]
    assert replies[3]["result"]["structuredContent"] == {"sum": 5}
    walk.log.append(
        "$ python -m notes_mcp   # initialize, tools/list, tools/call add(2, 3)\n"
        f"serverInfo {replies[1]['result']['serverInfo']}; tools greet, add; "
        f"add -> {replies[3]['result']['structuredContent']}"
    )


def test_4_the_scaffolded_test_and_mypy_pass(walk: Walk) -> None:
    # the fresh venv has what the project needs at run time; pytest and mypy come from the
    # dev venv (a newcomer installs them alongside)
    done = walk.sh(str(DEV_BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider")
    # the README's sample output, but for the time it took
    summary = re.sub(r" in \d+\.\d+s$", "", done.stdout.strip().splitlines()[-1])
    assert [done.stdout.splitlines()[0].strip(), summary] == readme_sample("python -m pytest -q")
    walk.sh(str(DEV_BIN / "mypy"), "--strict", "notes_impl.py", "tests")


def test_5_config_json_starts_the_server(walk: Walk, tmp_path: Path) -> None:
    done = walk.sh(str(walk.bin / "mcpgen"), "config", "json")
    entry = json.loads(done.stdout)["mcpServers"]["notes"]
    assert Path(entry["command"]).is_absolute()
    # a host starts it from a folder of its own
    replies = _initialize([entry["command"], *entry["args"]], tmp_path, entry["env"])
    assert replies[3]["result"]["structuredContent"] == {"sum": 5}


def test_6_hatch_hook_wheel_serves_its_tools(walk: Walk, tmp_path: Path) -> None:
    """The build-hook example of docs/workflow.md as written: the project declares no runtime, the
    hook adds it to the wheel. Before, the wheel did not depend on mcpgen-runtime and
    `python -m notes_mcp` failed in a fresh venv with an ImportError."""
    consumer = tmp_path / "consumer"
    shutil.copytree(
        walk.project, consumer, ignore=shutil.ignore_patterns("notes_mcp", "__pycache__")
    )  # no generated code
    page = (ROOT / "docs" / "workflow.md").read_text(encoding="utf-8")
    example = page.split("## Build hook (hatchling)", 1)[1].split("```toml\n", 1)[1]
    with (consumer / "pyproject.toml").open("a", encoding="utf-8") as pyproject:
        pyproject.write("\n" + example.split("```", 1)[0])
    # offline: the dev venv has hatchling and this mcpgen, so no build isolation
    walk.sh(
        str(DEV_BIN / "pip"),
        "wheel",
        "-q",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(tmp_path / "dist"),
        ".",
        cwd=consumer,
    )
    (wheel,) = (tmp_path / "dist").glob("notes_server-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [
            line
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    assert requires == [f"Requires-Dist: {runtime_requirement('installed')}"], requires
    # the runtime is not on an index yet: a wheel of it, found through --find-links
    walk.sh(
        str(DEV_BIN / "pip"),
        "wheel",
        "-q",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(tmp_path / "runtime"),
        str(ROOT / "runtime"),
        cwd=tmp_path,
    )
    served = _venv(tmp_path / "served")
    _pip_or_skip(
        _run(
            [
                str(served / "pip"),
                "install",
                "-q",
                "--find-links",
                str(tmp_path / "runtime"),
                str(wheel),
            ],
            tmp_path,
        )
    )
    assert not (served.parent / "bin" / "mcpgen").exists()  # the wheel needs no mcpgen
    replies = _initialize([str(served / "python"), "-m", "notes_mcp"], tmp_path)
    assert [t["name"] for t in replies[2]["result"]["tools"]] == ["greet", "add"]
    assert replies[3]["result"]["structuredContent"] == {"sum": 5}
    walk.log.append(
        f"$ pip install --find-links <runtime wheel> {wheel.name} (fresh venv); "
        f"python -m notes_mcp\nadd -> {replies[3]['result']['structuredContent']}"
    )


@pytest.mark.skipif(
    shutil.which("git") is None or not (DEV_BIN / "pre-commit").exists(),
    reason="needs git and pre-commit (the dev extra)",
)
def test_7_pre_commit_blocks_a_stale_spec_and_a_hand_edit(walk: Walk) -> None:
    project = walk.project
    head = _run(["git", "rev-parse", "HEAD"], ROOT).stdout.strip()

    def git(*args: str) -> None:
        done = _run(["git", *args], project, GIT_ENV)
        assert done.returncode == 0, done.stderr

    def try_repo() -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory() as home:
            # no --all-files: what is staged, as on a commit
            return walk.sh(
                str(DEV_BIN / "pre-commit"),
                "try-repo",
                str(ROOT),
                "mcpgen-check",
                "--ref",
                head,
                "--color",
                "never",
                ok=False,
                env={**GIT_ENV, "PRE_COMMIT_HOME": home},
            )

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "notes")
    spec = project / "tools.yaml"
    original = spec.read_text(encoding="utf-8")
    spec.write_text(
        original.replace("Add two integers.", "Add two whole numbers."), encoding="utf-8"
    )
    git("add", "tools.yaml")
    stale = try_repo()
    if "An unexpected error has occurred" in stale.stdout + stale.stderr:
        pytest.skip(f"pre-commit could not install mcpgen:\n{stale.stdout[-1500:]}")
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "tools.yaml: stale" in stale.stdout and "fix: mcpgen build tools.yaml" in stale.stdout

    spec.write_text(original, encoding="utf-8")
    git("add", "tools.yaml")
    client = project / "notes_mcp" / "client.py"
    client.write_text(client.read_text(encoding="utf-8") + "# a hand edit\n", encoding="utf-8")
    git("add", "notes_mcp/client.py")  # only a generated file is staged
    edited = try_repo()
    assert edited.returncode == 1, edited.stdout + edited.stderr
    assert "client.py" in edited.stdout and "a hand edit" in edited.stdout
