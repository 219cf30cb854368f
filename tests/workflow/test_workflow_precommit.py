"""The repository's ``.pre-commit-hooks.yaml``, run for real with ``pre-commit try-repo``.

pre-commit clones this repository at HEAD (the hook file must be committed) and
installs mcpgen from it into its own environment, which needs PyPI for the
dependencies (~10-15 s).  ``pre-commit run`` through a consumer config reuses that
environment from a ``PRE_COMMIT_HOME`` shared by the module; ``try-repo`` always
builds a fresh one, so it is used for the two checks the contract is about (fresh
passes, stale fails).  A temporary git repository holds a spec and its schema file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "workflow" / "inventory"
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")

pytestmark = [
    pytest.mark.skipif(
        not PRE_COMMIT.exists() or shutil.which("git") is None,
        reason="needs pre-commit (the dev extra) and git",
    ),
    # each try-repo builds a fresh environment (pip installs mcpgen and its runtime):
    # about 110 s per test on a busy 2-core machine, too close to the suite's 120 s
    pytest.mark.timeout(600),
]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def head() -> str:
    hooks = _git(ROOT, "show", "HEAD:.pre-commit-hooks.yaml")
    assert {hook["id"] for hook in yaml.safe_load(hooks)} == {
        "mcpgen-build",
        "mcpgen-check",
        "mcpgen-docs",
    }
    return _git(ROOT, "rev-parse", "HEAD").strip()


def _pre_commit(repo: Path, home: Path, *args: str, all_files: bool = True) -> tuple[int, str]:
    done = subprocess.run(
        [str(PRE_COMMIT), *args, *(["--all-files"] if all_files else []), "--color", "never"],
        cwd=repo,
        env={**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    if "An unexpected error has occurred" in output and "pip" in output:
        pytest.skip(f"pre-commit could not install mcpgen (no network to PyPI?):\n{output[-2000:]}")
    return done.returncode, output


def _try_repo(repo: Path, hook: str, ref: str, *, all_files: bool = True) -> tuple[int, str]:
    """``pre-commit try-repo``: always a fresh clone and environment (it ignores
    PRE_COMMIT_HOME), so the test calls it only where it matters. ``all_files=False``:
    only what is staged, as on a real commit."""
    with tempfile.TemporaryDirectory() as home:
        return _pre_commit(
            repo, Path(home), "try-repo", str(ROOT), hook, "--ref", ref, all_files=all_files
        )


def _run(repo: Path, hook: str, home: Path) -> tuple[int, str]:
    """``pre-commit run`` through the consumer's config: the environment is built once
    in the module's PRE_COMMIT_HOME and reused."""
    return _pre_commit(repo, home, "run", hook)


def test_hook_definitions() -> None:
    hooks = {
        hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    }
    assert hooks["mcpgen-build"]["entry"] == "mcpgen build"
    assert hooks["mcpgen-check"]["entry"] == "mcpgen build --check"
    assert hooks["mcpgen-docs"]["entry"] == "mcpgen docs"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False and hook["require_serial"] is True
        # every commit, not only spec changes: a hand-edited generated file is caught too
        assert hook["always_run"] is True and "files" not in hook
        # no default args: [tool.mcpgen] specs, else ./tools.yaml
        assert "args" not in hook


def test_check_hook_passes_when_fresh_and_fails_when_stale(
    tmp_path: Path, pre_commit_home: Path, head: str
) -> None:
    repo = tmp_path / "consumer"
    shutil.copytree(FIXTURE, repo)
    config = {
        "repos": [
            {
                "repo": str(ROOT),
                "rev": head,
                "hooks": [{"id": "mcpgen-build"}, {"id": "mcpgen-check"}],
            }
        ]
    }
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(repo, "init", "-q")
    _git(repo, "add", "tools.yaml", "schemas/item.json", ".pre-commit-config.yaml")
    _git(repo, "commit", "-qm", "contract")

    # The build hook generates the package (untracked output: pre-commit sees no change).
    code, output = _run(repo, "mcpgen-build", pre_commit_home)
    assert code == 0, output
    assert (repo / "build" / "inventory_mcp" / "client.py").is_file()
    _git(repo, "add", "build")
    _git(repo, "commit", "-qm", "generated")

    code, output = _try_repo(repo, "mcpgen-check", head)
    assert code == 0, output
    assert "mcpgen build --check" in output and "Passed" in output

    # A schema file the spec references changes: the committed package is stale.
    item = repo / "schemas" / "item.json"
    item.write_text(item.read_text().replace("^[A-Z0-9-]+$", "^[A-Z0-9]+$"))
    before = {p: p.read_bytes() for p in (repo / "build").rglob("*") if p.is_file()}
    code, output = _try_repo(repo, "mcpgen-check", head)
    assert code == 1, output
    assert "Failed" in output and "tools.yaml: stale" in output
    assert {p: p.read_bytes() for p in (repo / "build").rglob("*") if p.is_file()} == before

    # The build hook rewrites the tracked output, so pre-commit fails it: stage and retry.
    code, output = _run(repo, "mcpgen-build", pre_commit_home)
    assert code == 1 and "files were modified by this hook" in output, output
    code, output = _run(repo, "mcpgen-check", pre_commit_home)
    assert code == 0, output


def test_docs_hook_writes_the_page_and_fails_when_it_changed(
    tmp_path: Path, pre_commit_home: Path, head: str
) -> None:
    """The optional mcpgen-docs hook: [tool.mcpgen] docs-output says where; a spec
    change rewrites the tracked page, so pre-commit fails the hook until it is staged."""
    repo = tmp_path / "consumer"
    shutil.copytree(FIXTURE, repo)
    (repo / "pyproject.toml").write_text(
        '[tool.mcpgen]\nspecs = ["tools.yaml"]\ndocs-output = "site"\n', encoding="utf-8"
    )
    config = {"repos": [{"repo": str(ROOT), "rev": head, "hooks": [{"id": "mcpgen-docs"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(repo, "init", "-q")
    _git(
        repo, "add", "tools.yaml", "schemas/item.json", ".pre-commit-config.yaml", "pyproject.toml"
    )
    _git(repo, "commit", "-qm", "contract")

    code, output = _run(repo, "mcpgen-docs", pre_commit_home)
    assert code == 0, output
    page = repo / "site" / "index.html"
    assert "<!DOCTYPE html>" in page.read_text(encoding="utf-8")
    _git(repo, "add", "site")
    _git(repo, "commit", "-qm", "docs")
    code, output = _run(repo, "mcpgen-docs", pre_commit_home)
    assert code == 0, output  # unchanged: nothing rewritten

    item = repo / "schemas" / "item.json"
    item.write_text(item.read_text().replace("^[A-Z0-9-]+$", "^[A-Z0-9]+$"))
    code, output = _run(repo, "mcpgen-docs", pre_commit_home)
    assert code == 1 and "files were modified by this hook" in output, output
    assert "^[A-Z0-9]+$" in page.read_text(encoding="utf-8")
