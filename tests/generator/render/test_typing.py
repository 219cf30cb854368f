"""Generated code passes `mypy --strict`, and wrong implementations are rejected."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import mypy_strict

from mcpgen.build import build_spec

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "weather"  # holds the committed weather_mcp package


def _mypy(*targets: str, where: Path = EXAMPLE) -> subprocess.CompletedProcess[str]:
    return mypy_strict(*targets, cwd=where)


def test_generated_package_is_mypy_strict_clean() -> None:
    result = _mypy("-p", "weather_mcp")
    assert result.returncode == 0, result.stdout + result.stderr


def test_typing_expectations_hold() -> None:
    # Every `# type: ignore[...]` in check_weather.py must silence a real error.
    result = _mypy(str(ROOT / "tests" / "typing" / "check_weather.py"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_explicit_null_and_left_out_arguments_type_check(tmp_path: Path) -> None:
    # UNSET (left out, not sent) versus None (sent as null, only where the schema
    # admits null), on the wire contract's generated client.
    result = build_spec(
        ROOT / "tests" / "fixtures" / "wire" / "tools.yaml", output=tmp_path / "wire_mcp"
    )
    assert result.ok, result.message
    checked = _mypy(
        str(tmp_path / "wire_mcp"), str(ROOT / "tests" / "typing" / "check_wire.py"), where=tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
