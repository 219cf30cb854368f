"""`make test PYTHON=…` and `make test-quick` (what `.ci/run` runs under Python 3.12 and
3.13): a venv per interpreter, and a subset whose files exist. The runs themselves are
CI's (`.ci/run` prints how long each took)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _dry_run(*args: str) -> list[str]:
    # run as a top-level make even when the suite itself runs under `make test` (CI):
    # a sub-make inherits MAKEFLAGS/MAKELEVEL and prints "Entering directory" lines
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_another_interpreter_gets_a_venv_of_its_own() -> None:
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    lines = _dry_run("test-quick", f"PYTHON={sys.executable}")
    assert lines[0] == f"{sys.executable} -m venv .venv-{version}"
    assert not [line for line in lines if re.search(r"(^|\s)\.venv(/|\s|$)", line)]
    (run,) = [line for line in lines if "pytest" in line]
    assert run.startswith(f".venv-{version}/bin/pytest ")


def test_the_default_interpreter_keeps_dot_venv() -> None:
    lines = _dry_run("test-quick")
    assert lines[0] == "python3 -m venv .venv"


def test_the_quick_subset_names_files_that_exist() -> None:
    (run,) = [line for line in _dry_run("test-quick") if "pytest" in line]
    paths = [part for part in run.split() if part.startswith("tests/")]
    assert paths == [
        "tests/workflow/test_workflow_build.py",
        "tests/generator/render/test_golden.py",
        "tests/runtime/auth/test_auth_tokens.py",
        "tests/runtime/client/test_client.py",
        "tests/runtime/client/test_client_core.py",
        "tests/runtime/client/test_client_flows.py",
        "tests/runtime/client/test_client_session_flows.py",
        "tests/runtime/contract/test_compat.py",
        "tests/runtime/http/test_http_identity.py",
        "tests/runtime/http/test_uvicorn_internals.py",
        "tests/runtime/protocol/test_param_headers.py",
        "tests/runtime/ratelimit/test_ratelimit.py",
        "tests/runtime/schema/test_formats.py",
        "tests/runtime/schema/test_jsonschema.py",
        "tests/runtime/schema/test_regex.py",
        "tests/runtime/schema/test_schema_suite.py",
        "tests/runtime/server/test_server_stateless.py",
        "tests/runtime/tasks/test_tasks.py",
        "tests/runtime/tasks/test_taskstore.py",
        "tests/runtime/test_claims.py",
        "tests/runtime/test_layout.py",
        "tests/runtime/transport/test_http_transport.py",
        "tests/runtime/transport/test_transport.py",
        "tests/workflow/test_newcomer.py",
    ]
    assert all((ROOT / path).exists() for path in paths)


def test_ci_runs_the_quick_subset_under_each_newer_interpreter() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")], check=False).returncode == 0
    assert (
        "for version in ${MCPGEN_CI_PYTHONS-3.12 3.13}" in script
        and 'make test-quick PYTHON="$python"' in script
    )
