"""The codebase stays `mypy --strict` and `ruff` clean and formatted; CI runs this."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINTED = ["mcpgen", "runtime", "tests", "benchmarks", "hatch_build.py", "docs/hooks.py"]


def test_mypy_strict_on_mcpgen_and_the_runtime() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "mcpgen",
            "runtime/mcpgen_runtime",
            "docs/hooks.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_on_code_tests_and_benchmarks() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *LINTED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_tests_and_benchmarks_are_formatted() -> None:
    """One formatter, ruff format ([tool.ruff.format] in pyproject.toml), over every tree."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *LINTED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, "run `ruff format`:\n" + result.stdout + result.stderr


def test_functions_stay_under_sixty_lines() -> None:
    """The size rule for functions (about 60 lines), held for the generator, the runtime, the
    build hook and the docs hook."""
    long = []
    for path in [
        *ROOT.joinpath("mcpgen").rglob("*.py"),
        *ROOT.joinpath("runtime", "mcpgen_runtime").rglob("*.py"),
        ROOT / "hatch_build.py",
        ROOT / "docs" / "hooks.py",
    ]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {size} lines")
    assert not long, "\n".join(long)


def test_ruff_rule_selection_is_declared() -> None:
    """The rule families are written down in pyproject.toml, not left to ruff's defaults."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    selected = set(config["tool"]["ruff"]["lint"]["select"])
    assert {"E", "F", "W", "I", "UP", "B"} <= selected
