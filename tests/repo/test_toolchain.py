"""The development toolchain is pinned: `make test`, `make demo` and `make bench` install
under ``requirements/dev-constraints.txt`` (written by `make lock`), so a fresh clone gets
the mypy, ruff, pytest, SDK peers and redis-py the suite last passed with, whatever was
released since. A newer mypy or set of stubs once turned an unused ``type: ignore`` into a
red CI on a new machine; these tests keep the pin complete and in force."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "requirements" / "dev-constraints.txt"


def pins() -> dict[str, str]:
    pinned: dict[str, str] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep and version, f"not an exact pin: {line!r}"
        pinned[canonicalize_name(name)] = version
    return pinned


def declared(*extras: str) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    return {canonicalize_name(Requirement(spec).name) for spec in wanted} - {"mcpgen-runtime"}


def test_every_declared_dependency_is_pinned() -> None:
    missing = sorted(declared("dev", "http", "redis", "bench", "docs") - set(pins()))
    assert not missing, f"not in {CONSTRAINTS.name}: {missing}; run `make lock`"


def test_the_suite_runs_on_the_pinned_toolchain() -> None:
    """The venv this suite runs in was installed under the pins (`make test` does that)."""
    pinned = pins()
    drift = {}
    for name in sorted(declared("dev", "http")):
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a marker left it out here (uvloop on Windows, say)
        if installed != pinned[name]:
            drift[name] = (installed, pinned[name])
    assert not drift, f"installed vs pinned: {drift}; run `make clean test`"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_installs_every_venv_under_the_pins() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    lines = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "test", "demo", "bench"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    installs = [line for line in lines if re.search(r"pip install .*-e ", line)]
    assert len(installs) >= 3, lines
    for line in installs:
        assert "-c requirements/dev-constraints.txt" in line, line
