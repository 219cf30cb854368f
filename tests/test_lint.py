"""The codebase stays `mypy --strict` and `ruff` clean (STYLE.md); CI runs this."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_strict_on_mcpgen_and_the_runtime() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "mcpgen", "runtime/mcpgen_runtime"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_on_code_tests_and_benchmarks() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "mcpgen", "runtime", "tests", "benchmarks", "hatch_build.py"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
