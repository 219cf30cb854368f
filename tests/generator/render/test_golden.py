"""Golden records: the generated tree of each spec of ``regen_golden.SPECS``, compared
file by file.

Regenerate on purpose with `make golden` (tests/regen_golden.py) and review the diff.
The example's record is its committed package (examples/weather/weather_mcp), whose
manifest is the build's own and is not compared here: `mcpgen build --check` is.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from regen_golden import EXAMPLE, GOLDEN, SPECS, golden_tree, record_dir

from mcpgen.build import build_spec

ROOT = Path(__file__).resolve().parents[3]


def test_every_golden_tree_has_a_spec() -> None:
    packages = {golden_tree(spec)[0] for spec in SPECS if spec != EXAMPLE}
    # (a mypy run over the records leaves its cache there: not a record)
    assert {p.name for p in GOLDEN.glob("*_mcp") if p.is_dir()} == packages


@pytest.mark.parametrize("spec", SPECS)
def test_generated_tree_matches_golden(spec: str) -> None:
    package, generated = golden_tree(spec)
    golden = record_dir(spec, package)
    on_disk = {
        path.relative_to(golden).as_posix(): path.read_bytes()
        for path in sorted(golden.rglob("*"))
        if path.is_file()
        and path.name != ".mcpgen-manifest.json"
        and "__pycache__" not in path.parts
    }
    assert sorted(generated) == sorted(on_disk), "file set differs; run `make golden` on purpose"
    for name, data in generated.items():
        if data != on_disk[name]:
            diff = "".join(
                difflib.unified_diff(
                    on_disk[name].decode().splitlines(True),
                    data.decode().splitlines(True),
                    f"golden/{name}",
                    f"generated/{name}",
                )
            )
            pytest.fail(f"{name} differs from its golden record:\n{diff}")


def test_the_committed_example_package_passes_build_check() -> None:
    # what a newcomer's `mcpgen build --check examples/weather/tools.yaml` says on a clone
    assert build_spec(ROOT / EXAMPLE, check=True).status == "fresh"


def test_generation_is_byte_identical_across_runs() -> None:
    assert golden_tree(SPECS[1]) == golden_tree(SPECS[1])
