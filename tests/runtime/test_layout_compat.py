"""Packages generated before the runtime moved into subpackages still run against it.

``tests/fixtures/built_before_layout/weather_mcp`` is the weather example as mcpgen
generated it before the move (a frozen copy of the golden tree at that commit, not
regenerated). Generated code imports only ``mcpgen_runtime``'s public names, so the
move must leave it working: the client starts the server over real pipes, calls
tools (one as a task) from a thread and from asyncio, and both sides load the moved
modules.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FROZEN = REPO / "tests" / "fixtures" / "built_before_layout" / "weather_mcp"
WEATHER_DIR = REPO / "examples" / "weather"

PROBE = """
import asyncio, json, sys
from weather_mcp import AsyncWeatherClient, ToolError, WeatherClient

command = [sys.executable, "-m", "weather_mcp"]
seen = {}
with WeatherClient.stdio(command, cwd=sys.argv[1]) as client:
    seen["tools"] = sorted(tool.name for tool in client.list_tools())
    seen["forecast_days"] = len(client.get_forecast("Paris", days=2).days)
    seen["task_days"] = len(client.start_get_forecast("Oslo", days=3).result().days)
    try:
        client.current_temperature("  ")
    except ToolError as exc:
        seen["tool_error"] = type(exc).__name__

async def run_async() -> float:
    async with AsyncWeatherClient.stdio(command, cwd=sys.argv[1]) as client:
        return await client.current_temperature("Oslo")

seen["async_temperature"] = isinstance(asyncio.run(run_async()), float)
seen["moved_modules"] = sorted(
    name for name in sys.modules if name.startswith("mcpgen_runtime.client.")
)
print(json.dumps(seen))
"""


def test_a_package_generated_before_the_move_runs_against_the_moved_runtime(
    tmp_path: Path,
) -> None:
    shutil.copytree(FROZEN, tmp_path / "weather_mcp")
    path = os.pathsep.join([str(tmp_path), str(WEATHER_DIR)])
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(WEATHER_DIR)],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["tools"] == [
        "alerts.search",
        "current_temperature",
        "get_forecast",
        "report_observation",
    ]
    assert seen["forecast_days"] == 2 and seen["task_days"] == 3
    assert seen["tool_error"] == "ToolError" and seen["async_temperature"]
    # the package ran on the subpackage layout, not on a leftover flat module
    assert "mcpgen_runtime.client.sync" in seen["moved_modules"]


def test_no_alias_of_an_unreleased_path_is_left() -> None:
    """``_http`` and ``_http_config`` aliased ``http.server`` and ``http.config`` for
    paths an earlier README named; no release ever shipped them, so they went."""
    for name in ("_http", "_http_config"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"mcpgen_runtime.{name}")


def test_dir_lists_the_public_surface() -> None:
    """``dir(mcpgen_runtime)`` shows what a user may import: every name of
    ``__all__`` (imported lazily) and nothing of the layout underneath."""
    import mcpgen_runtime

    assert dir(mcpgen_runtime) == sorted(mcpgen_runtime.__all__)
    assert all(hasattr(mcpgen_runtime, name) for name in dir(mcpgen_runtime))
