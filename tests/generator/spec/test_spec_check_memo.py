"""Meta-schema validation is remembered by content (mcpgen/spec/validate.py), without
hiding a problem: a copy of an invalid schema is reported at each place."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mcpgen.spec import validate
from mcpgen.spec.load import load_contract


def _spec(tmp_path: Path, minimum: str) -> Path:
    tools = "".join(
        textwrap.dedent(f"""\
          - name: t{i}
            parameters:
              - {{name: n, type: integer, minimum: {minimum}}}
            returns: integer
        """)
        for i in range(3)
    )
    path = tmp_path / "tools.yaml"
    path.write_text(
        "mcpgen: 1\npackage: memo_mcp\nserver: {name: memo, version: 1.0.0}\ntools:\n"
        + textwrap.indent(tools, "")
    )
    return path


def test_a_repeated_valid_schema_is_validated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validate, "_META_VALID", set())
    seen: list[object] = []
    real = validate._META_VALIDATOR

    class Counting:
        def iter_errors(self, schema: object) -> object:
            seen.append(schema)
            return real.iter_errors(schema)

    monkeypatch.setattr(validate, "_META_VALIDATOR", Counting())
    loaded = load_contract(_spec(tmp_path, "0"))
    assert loaded.contract is not None, loaded.diagnostics
    assert len(seen) == 1  # three tools, one parameter schema


def test_each_copy_of_an_invalid_schema_is_reported(tmp_path: Path) -> None:
    loaded = load_contract(_spec(tmp_path, '"zero"'))
    assert loaded.contract is None
    lines = sorted({d.line for d in loaded.diagnostics if "invalid JSON Schema" in d.message})
    assert len(lines) == 3, loaded.diagnostics
