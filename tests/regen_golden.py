"""Regenerate tests/golden/ from the example specs, on purpose (`make golden`).

Review the resulting diff before committing it: the golden records are the
reviewed, expected output of the generator.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcpgen.render.project import render_package
from mcpgen.spec.load import load_contract

GOLDEN = ROOT / "tests" / "golden"


def main() -> None:
    for spec in sorted(ROOT.glob("examples/*/tools.yaml")):
        result = load_contract(spec.relative_to(ROOT))
        assert result.contract is not None, result.diagnostics
        target = GOLDEN / result.contract.package
        shutil.rmtree(target, ignore_errors=True)
        for name, data in render_package(result.contract).items():
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        print(f"regenerated {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
