"""A type used by many tools is defined once and referenced (issue: a 200-value enum
shared by 30 tools was copied into every Args class and both clients, half of the
48,700 lines generated for a 300-tool spec)."""

from __future__ import annotations

from pathlib import Path

import yaml

from mcpgen.build import build_spec

VALUES = [f"region-{i:03d}" for i in range(200)]


def _lines(tmp_path: Path, name: str, uses: int, *, shared: bool, inline: bool = False) -> int:
    """Lines of the generated package (its own modules) for ``uses`` tools that each
    take and return a region: the shared 200-value enum (a ``types`` entry, or with
    ``inline`` the same enum written out in every schema), or a plain string."""
    region: dict[str, object] = {"$ref": "#/types/Region"} if shared else {"type": "string"}
    if inline:
        region = {"enum": VALUES}
    tools = [
        {
            "name": f"tool_{i}",
            "parameters": [{"name": "region", **region}],
            "output_schema": {
                "type": "object",
                "properties": {"region": region},
                "required": ["region"],
            },
        }
        for i in range(uses)
    ]
    spec = {
        "mcpgen": 1,
        "package": f"{name}_mcp",
        "server": {"name": name, "version": "1"},
        "types": {"Region": {"enum": VALUES}},
        "tools": tools,
    }
    folder = tmp_path / name
    folder.mkdir()
    (folder / "tools.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    result = build_spec(folder / "tools.yaml", output=folder / "out" / f"{name}_mcp")
    assert result.ok, result.message
    package = folder / "out" / f"{name}_mcp"
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for path in package.glob("*.py"))


def test_a_shared_enum_costs_its_size_once_and_a_line_or_two_per_use(tmp_path: Path) -> None:
    one = _lines(tmp_path, "one", 1, shared=True) - _lines(tmp_path, "one_str", 1, shared=False)
    many = _lines(tmp_path, "many", 30, shared=True) - _lines(
        tmp_path, "many_str", 30, shared=False
    )
    # the enum itself (~200 lines in models.py, ~200 in contract.py) is paid once; each
    # of the 29 more tools uses it twice (argument and result), and each use may add a
    # line or two (a "$defs" entry naming the shared object, a wrapped signature),
    # never the enum again (before: 12,402 lines more for 30 tools than for one)
    assert many - one <= 2 * 2 * 29, (one, many)


def test_an_inline_enum_repeated_in_many_tools_is_written_once(tmp_path: Path) -> None:
    """The same enum written out in each tool's schemas: models.py declares it once (an
    alias named after its first use), contract.py writes the list once and puts that
    object in each published schema (each schema still holds the whole enum)."""
    one = _lines(tmp_path, "i_one", 1, shared=False, inline=True) - _lines(
        tmp_path, "i_one_str", 1, shared=False
    )
    many = _lines(tmp_path, "i_many", 30, shared=False, inline=True) - _lines(
        tmp_path, "i_many_str", 30, shared=False
    )
    assert many - one <= 2 * 2 * 29, (one, many)
