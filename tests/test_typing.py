"""Generated code passes `mypy --strict`, and wrong implementations are rejected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"


def _mypy(*targets: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--config-file", "/dev/null",
         "--python-version", "3.11", *targets],
        cwd=GOLDEN, capture_output=True, text=True, check=False, env={"MYPYPATH": str(GOLDEN), "PATH": "/usr/bin:/bin"},
    )


def test_generated_package_is_mypy_strict_clean() -> None:
    result = _mypy("-p", "weather_mcp")
    assert result.returncode == 0, result.stdout + result.stderr


def test_typing_expectations_hold() -> None:
    # Every `# type: ignore[...]` in check_weather.py must silence a real error.
    result = _mypy(str(ROOT / "tests" / "typing" / "check_weather.py"))
    assert result.returncode == 0, result.stdout + result.stderr
