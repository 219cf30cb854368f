"""Every broken spec under ``tests/specs/bad/`` against its pinned ``mcpgen validate`` output.

Each ``<name>.yaml`` holds one class of problem (``many_problems.yaml`` holds
several at once, to pin that all errors of a file are reported together) and
``<name>.expected`` the exact diagnostics ``mcpgen validate`` prints on stderr,
run from the repository root with a relative spec path.

To rewrite the expected files after an intended change of wording, run::

    MCPGEN_REGEN=1 .venv/bin/pytest tests/generator/spec/test_bad_specs.py

and review the diff of ``tests/specs/bad/*.expected`` before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.cli import main

ROOT = Path(__file__).resolve().parents[3]
BAD = ROOT / "tests" / "specs" / "bad"
SPECS = sorted(BAD.glob("*.yaml"))
REGEN = os.environ.get("MCPGEN_REGEN") == "1"


def _listing(directory: Path) -> list[tuple[str, int, int]]:
    return sorted(
        (str(path.relative_to(directory)), path.stat().st_size, path.stat().st_mtime_ns)
        for path in directory.rglob("*")
    )


def _validate(spec: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["validate", spec.relative_to(ROOT).as_posix()])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_enough_bad_specs() -> None:
    assert len(SPECS) >= 15
    assert not [s.name for s in SPECS if not s.with_suffix(".expected").exists() and not REGEN]


@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_validate_output(spec: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _listing(BAD)
    code, stdout, stderr = _validate(spec, monkeypatch)
    expected_file = spec.with_suffix(".expected")
    if REGEN:
        expected_file.write_text(stderr, encoding="utf-8")
        before = _listing(BAD)
    assert code == 1
    assert stdout == ""
    assert stderr == expected_file.read_text(encoding="utf-8")
    # every line is file:line:col: …, naming the spec as given, then the closing count
    rel = spec.relative_to(ROOT).as_posix()
    *lines, closing = stderr.splitlines()
    errors = sum(1 for line in lines if ": warning: " not in line)
    assert closing == (
        f"{errors} error{'' if errors == 1 else 's'}, {len(lines) - errors} "
        f"warning{'' if len(lines) - errors == 1 else 's'} in 1 spec"
    )
    for line in lines:
        assert line.startswith(rel + ":"), line
        _, lineno, col, _ = line[len(rel) :].split(":", 3)
        assert lineno.isdigit() and col.isdigit(), line
    assert _listing(BAD) == before, "validate wrote something"


def test_many_problems_reports_all_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, stderr = _validate(BAD / "many_problems.yaml", monkeypatch)
    assert len(stderr.splitlines()) >= 8


def test_validate_several_specs_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    args = ["validate", "examples/weather/tools.yaml", "tests/specs/bad/bad_type.yaml"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.stdout == "examples/weather/tools.yaml: valid (4 tool(s))\n"
    assert result.stderr == (BAD / "bad_type.expected").read_text(encoding="utf-8").replace(
        " in 1 spec\n", " in 2 specs\n"
    )
