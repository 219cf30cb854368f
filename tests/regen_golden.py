"""Regenerate the golden records on purpose (`make golden`): one tree per spec of ``SPECS``.

Review the resulting diff before committing it: the golden records are the
reviewed, expected output of the generator (tests/generator/render/test_golden.py compares them).
The example's record is the package committed beside it, examples/weather/weather_mcp
(built as a user builds it, manifest included, so `mcpgen build --check` passes on a
fresh clone); every other spec's is tests/golden/<its package>.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"

EXAMPLE = "examples/weather/tools.yaml"

# Together they cover a large contract, every callback shape, tasks, shared types and
# odd names.
SPECS = (
    EXAMPLE,  # the example: positional, named, structured, a task
    "tests/fixtures/golden/large.yaml",  # 40 tools in ten shapes, a 200-value enum
    "tests/fixtures/wire/tools.yaml",  # every callback shape and returns kind, nulls
    "tests/fixtures/contract_test/seeded.yaml",  # optional and required tasks
    "tests/fixtures/tracker/tools.yaml",  # shared types, a shared enum, a recursive type
    "tests/fixtures/names/tools.yaml",  # odd names: keywords, NFKC, typing's names
)


def golden_tree(spec: str) -> tuple[str, dict[str, bytes]]:
    """The package name and generated files of ``spec`` (relative to the checkout)."""
    from mcpgen.render.package import render_package
    from mcpgen.spec.load import load_contract

    here = Path.cwd()
    os.chdir(ROOT)  # diagnostics and the header name the spec as the checkout does
    try:
        result = load_contract(Path(spec))
    finally:
        os.chdir(here)
    assert result.contract is not None, result.diagnostics
    return result.contract.package, render_package(result.contract)


def record_dir(spec: str, package: str) -> Path:
    """Where the golden record of ``spec`` lives."""
    return ROOT / Path(EXAMPLE).parent / package if spec == EXAMPLE else GOLDEN / package


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from mcpgen.build import build_spec

    for spec in SPECS:
        package, files = golden_tree(spec)
        target = record_dir(spec, package)
        if spec == EXAMPLE:
            result = build_spec(ROOT / spec, force=True)
            assert result.ok, result.diagnostics
            print(f"rebuilt {target.relative_to(ROOT)} from {spec}")
            continue
        shutil.rmtree(target, ignore_errors=True)
        for name, data in files.items():
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        print(f"regenerated {target.relative_to(ROOT)} from {spec}")


if __name__ == "__main__":
    main()
