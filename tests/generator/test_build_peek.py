"""The no-op check finds the output directory without parsing the whole spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgen import build


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("package: a\noutput: build/a\n", "build/a"),
        ('package: "q"  # quoted\n', "q"),
        ("package: 'x'\noutput: 'o p'\n", "o p"),
        ("mcpgen: 1\npackage: w\noutput: out/w  # comment\ntools: []\n", "out/w"),
        ("package: a\nserver:\n  output: nested\n", "a"),  # only top-level keys count
    ],
)
def test_top_level_keys_are_read_without_yaml(
    text: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(text)

    def no_yaml(*args: object, **kwargs: object) -> None:
        raise AssertionError("the fast path must not parse YAML")

    monkeypatch.setattr(build.yaml, "load", no_yaml)
    assert build._peek_output(spec, None) == tmp_path / expected


def test_unusual_specs_fall_back_to_a_parse(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text('{"package": "j", "output": "out/j"}\n')  # JSON is YAML too
    assert build._peek_output(spec, None) == tmp_path / "out/j"
