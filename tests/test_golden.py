"""Golden records: the generated tree of every example spec, compared file by file.

Regenerate on purpose with `make golden` (tests/regen_golden.py) and review the diff.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from mcpgen.render.project import render_package
from mcpgen.spec.load import load_contract

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
SPECS = sorted(ROOT.glob("examples/*/tools.yaml"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.parent.name)
def test_generated_tree_matches_golden(spec: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = load_contract(spec.relative_to(ROOT))
    assert result.contract is not None, result.diagnostics
    golden = GOLDEN / result.contract.package
    generated = render_package(result.contract)
    on_disk = {
        path.relative_to(golden).as_posix(): path.read_bytes()
        for path in sorted(golden.rglob("*"))
        if path.is_file()
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


def test_generation_is_byte_identical_across_runs() -> None:
    result = load_contract(SPECS[0])
    assert result.contract is not None
    assert render_package(result.contract) == render_package(result.contract)
