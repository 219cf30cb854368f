"""`make test` counts what the suite runs in Python subprocesses (stdio servers, ``python
-m <package>`` HTTP servers, the CLI), not only what runs in the pytest workers:
``[tool.coverage.run] patch = ["subprocess"]`` in pyproject.toml starts coverage in every
Python child of this venv, and pytest-cov combines their data files into one figure.
Without it the figure left out the server sides the end-to-end tests exercise."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import coverage
import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = "import coverage; print(getattr(coverage.process_startup, 'coverage', None) is not None)"


def test_the_coverage_settings_reach_subprocesses() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    run = settings["tool"]["coverage"]["run"]
    assert "subprocess" in run["patch"]
    assert run["parallel"] is True  # one data file per process, combined at the end


def test_a_python_child_is_measured_when_the_suite_is() -> None:
    if coverage.Coverage.current() is None:
        pytest.skip("the suite runs without coverage (no --cov): nothing to hand down")
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "True", done.stderr
