"""The generated code is black-clean without black formatting all of it.

mcpgen lays out most code itself (mcpgen/render/layout.py) and leaves to black only
the units it cannot be sure of. These tests hold that to black: every generated file
equals ``black.format_str`` of itself, whatever the spec throws at the layout, and
the same spec gives the same bytes every time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpgen.build import OLD_LAYOUT_CACHE, build_spec
from mcpgen.render import layout
from mcpgen.render.layout import black_format
from mcpgen.render.package import render_package
from mcpgen.spec.load import load_contract

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from genspec import write_spec

SPECS = [
    ROOT / "examples/weather/tools.yaml",
    ROOT / "tests/fixtures/layout/tools.yaml",  # long names and texts, wide text, quotes
    ROOT / "tests/fixtures/fidelity/tools.yaml",
    ROOT / "tests/fixtures/names/tools.yaml",
    ROOT / "tests/fixtures/robust_tools.yaml",
    ROOT / "tests/fixtures/tracker/tools.yaml",
    ROOT / "tests/fixtures/conformance/tools.yaml",
]


def _render(spec: Path, **kwargs: object) -> dict[str, bytes]:
    loaded = load_contract(spec)
    assert loaded.contract is not None, loaded.diagnostics
    return render_package(loaded.contract, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.parent.name)
def test_every_generated_file_passes_black_check(spec: Path) -> None:
    files = _render(spec)
    for name, data in files.items():
        if name.endswith(".py"):
            text = data.decode()
            assert black_format(text) == text, f"{spec}: {name} is not black-clean"
            assert "\x00" not in text and "\x01" not in text
    assert _render(spec) == files  # byte-identical across runs


def test_the_benchmark_spec_needs_no_black(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The common shapes (the benchmark's four) are laid out without black: black
    costs ~2 ms a method, which made it ~88% of a build."""
    import black

    calls: list[int] = []
    real = black.format_str
    monkeypatch.setattr(black, "format_str", lambda *a, **k: calls.append(1) or real(*a, **k))
    files = _render(write_spec(tmp_path, 40))
    monkeypatch.undo()
    assert calls == []
    for name, data in files.items():
        if name.endswith(".py"):
            assert black_format(data.decode()) == data.decode(), name


def test_no_layout_cache_is_kept_and_an_old_one_is_removed(tmp_path: Path) -> None:
    """Units black formats are formatted on every build and kept nowhere: an output
    directory holds only the package and its manifest, and the cache file older
    builds wrote there goes on the next build."""
    spec = tmp_path / "tools.yaml"
    spec.write_text((ROOT / "tests/fixtures/layout/tools.yaml").read_text())
    first = build_spec(spec)
    assert first.status == "written" and first.output is not None
    assert not (first.output / OLD_LAYOUT_CACHE).exists()
    # an earlier mcpgen's cache, holding an entry that is not this build's code
    (first.output / OLD_LAYOUT_CACHE).write_text('{"k": "import os"}')
    spec.write_text(spec.read_text().replace('description: "Short."', 'description: "Shorter."'))
    again = build_spec(spec)
    assert again.status == "written" and again.output is not None
    assert not (again.output / OLD_LAYOUT_CACHE).exists()
    fresh = tmp_path / "fresh" / "tools.yaml"
    fresh.parent.mkdir()
    fresh.write_text(spec.read_text())
    full = build_spec(fresh)
    assert full.output is not None

    def tree(directory: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(directory.glob("*.py"))}

    assert tree(again.output) == tree(full.output)


def test_output_is_byte_stable_across_processes(tmp_path: Path) -> None:
    """Two interpreters (another hash seed each) write the same bytes."""
    import subprocess

    script = (
        "import sys, hashlib; from mcpgen.spec.load import load_contract; "
        "from mcpgen.render.package import render_package; "
        "c = load_contract(sys.argv[1]).contract; "
        "print(hashlib.sha256(repr(sorted(render_package(c).items())).encode()).hexdigest())"
    )
    spec = str(ROOT / "tests/fixtures/layout/tools.yaml")
    digests = {
        subprocess.run(
            [sys.executable, "-c", script, spec],
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1


def test_fits_measures_as_black_does() -> None:
    """``fits`` decides wide text without black's width table when it can; where it
    does, it must agree with black (a CJK character is two columns, a combining one none)."""
    from black.strings import str_width

    for n in range(0, 110, 3):
        for text in ("x" * n, "天" * n, "x" * n + "é", "x" * n + "天" * (n // 3), "e\u0301" * n):
            assert layout.fits(text) == (str_width(text) <= layout.LINE_LENGTH), (n, text)


def test_models_that_are_not_python_fail_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """black rejected invalid code on the way; without it, models.py (names and
    annotations from the spec's schemas) is compiled, so a type-mapping bug fails the
    build instead of the import."""
    from mcpgen.render import package

    monkeypatch.setattr(package, "render_models", lambda *a: "x: list[1x]\n")
    with pytest.raises(SyntaxError):
        _render(ROOT / "tests/fixtures/wire/tools.yaml")


def test_black_gets_only_the_units_that_need_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout spec has units only black can format: black sees those, each a
    method or a top-level statement, never a whole file."""
    sent: list[tuple[int, str]] = []
    real = layout._black_batch
    monkeypatch.setattr(layout, "_black_batch", lambda units: sent.extend(units) or real(units))
    files = _render(ROOT / "tests/fixtures/layout/tools.yaml")
    assert sent, "the layout spec has units only black can format"
    longest = max(data.count(b"\n") for data in files.values())
    assert all(depth in (0, 1) and body.count("\n") < longest // 2 for depth, body in sent)


def test_units_are_found_from_the_syntax_tree() -> None:
    text = (
        "import os\n"
        "\n\n"
        "class A:\n"
        '    """Doc."""\n'
        "\n"
        "    def f(self) -> None:\n"
        "        pass\n"
        "\n"
        "    @staticmethod\n"
        "    def g() -> None:\n"
        "        pass\n"
        "\n\n"
        "X = 1\n"
    )
    # line 4 (the docstring) is the class's head, line 10 is inside g, 14 is X
    assert layout._units(text, {4, 10, 14}) == [(3, 5, 0), (9, 12, 1), (14, 15, 0)]
    # a line of f and a line of the head: two units, never the whole class
    assert layout._units(text, {3, 7}) == [(3, 5, 0), (6, 8, 1)]
