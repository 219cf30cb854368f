"""The layout cache (black's output for the units that need it) lives in the output
directory as ``.mcpgen-layout-cache.json``: builds read and write it, ``--check``
neither reads nor writes it, and a build with it gives the bytes a build without it
gives (an edit of one tool included)."""

from __future__ import annotations

import shutil
from pathlib import Path

from mcpgen.build import LAYOUT_CACHE, build_spec

ROOT = Path(__file__).resolve().parent.parent
LAYOUT_SPEC = ROOT / "tests/fixtures/layout/tools.yaml"  # has units only black can format


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != LAYOUT_CACHE
    }


def _copy_spec(tmp_path: Path, name: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    spec = directory / "tools.yaml"
    shutil.copy(LAYOUT_SPEC, spec)
    return spec


def test_incremental_build_equals_full_build(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path, "incremental")
    first = build_spec(spec)
    assert first.status == "written" and first.output is not None
    assert (first.output / LAYOUT_CACHE).is_file()
    # edit one tool, rebuild over the previous output (and its cache)
    spec.write_text(spec.read_text().replace('description: "Short."', 'description: "Shorter."'))
    assert build_spec(spec).status == "written"
    fresh = _copy_spec(tmp_path, "full")
    fresh.write_text(spec.read_text())
    full = build_spec(fresh)
    assert full.output is not None
    assert _tree(first.output) == _tree(full.output)


def test_check_never_writes_nor_trusts_the_cache(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path, "check")
    built = build_spec(spec)
    assert built.output is not None
    cache = built.output / LAYOUT_CACHE
    # a cache that says something else must not make --check pass or fail
    poisoned = cache.read_text().replace("def ", "def evil_")
    cache.write_text(poisoned)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in built.output.rglob("*")}
    assert build_spec(spec, check=True).status == "fresh"
    spec.write_text(spec.read_text().replace('description: "Short."', 'description: "Other."'))
    assert build_spec(spec, check=True).status == "stale"
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in built.output.rglob("*")}
    assert after == before


def test_a_spec_that_needs_no_black_leaves_no_cache(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    shutil.copy(ROOT / "tests/fixtures/wire/tools.yaml", spec)
    built = build_spec(spec)
    assert built.ok and built.output is not None
    assert not (built.output / LAYOUT_CACHE).exists()


def test_a_cache_entry_that_is_other_code_is_not_used(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path, "poisoned")
    built = build_spec(spec)
    assert built.output is not None
    cache = built.output / LAYOUT_CACHE
    cache.write_text(cache.read_text().replace("def ", "def evil_"))
    spec.write_text(spec.read_text() + "\n")  # a new input hash: a real rebuild
    assert build_spec(spec).ok
    fresh = _copy_spec(tmp_path, "clean")
    fresh.write_text(spec.read_text())
    clean = build_spec(fresh)
    assert clean.output is not None
    assert _tree(built.output) == _tree(clean.output)
