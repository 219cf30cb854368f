"""Annotations are built as parts (``render.code``), never as text scanned again.

The type mapping once wrote helper names (``Literal``, ``Field``, ``TypeAlias``) as
NUL-marked text and found types, helpers and string literals in it again with regular
expressions. Those scans read a ``[`` inside a ``Literal`` value as a bracket (so
``Literal["["] | None`` was one union member and ``None`` did not go last) and took a
marker's name for a type of that name (an alias using ``Literal`` waited for the type
``Literal``). Here a spec whose types and fields are named like helpers, and whose
``Literal`` values hold helper names, brackets, pipes and quotes, prints right; and no
module of ``mcpgen/render`` holds a marker or a scan again.
"""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import build_package, import_package, mypy_strict

from mcpgen.render.code import Helper, Ref, Value, code
from mcpgen.render.typesource import ANY, NONE, helper, literal, ref, union_of

RENDER = Path(__file__).resolve().parents[3] / "mcpgen" / "render"

ODD = ["Any", "Literal[", "a|b", "]", 'x"y', "Field(discriminator='k')"]

TYPES: dict[str, Any] = {
    "Field": {
        "type": "object",
        "properties": {
            "Literal": {"enum": [*ODD, None]},
            "Any": {"type": "string"},
            "TypeAlias": {"type": "integer"},
        },
        "required": ["Any"],
    },
    "Literal": {"enum": ["Any", "Field", "TypeAlias"]},
    "Annotated": {"anyOf": [{"enum": ["[", None]}, {"type": "integer"}]},
    "Cat": {
        "type": "object",
        "properties": {"kind": {"const": "Any"}, "MISSING": {"type": "boolean"}},
        "required": ["kind"],
    },
    "Dog": {
        "type": "object",
        "properties": {"kind": {"const": 'Literal["x"] | None'}},
        "required": ["kind"],
    },
    "TypeAlias": {"oneOf": [{"$ref": "#/types/Cat"}, {"$ref": "#/types/Dog"}]},
}

PARAMETERS = [
    {"name": "field", "$ref": "#/types/Field"},
    {"name": "literal", "$ref": "#/types/Literal"},
    {"name": "annotated", "$ref": "#/types/Annotated"},
    {"name": "pet", "$ref": "#/types/TypeAlias"},
    {"name": "Required", "enum": ["Required", "]|["], "required": False},
]


def _spec() -> str:
    output = {
        "type": "object",
        "properties": {
            n: {"$ref": f"#/types/{t}"} for n, t in [("pet", "TypeAlias"), ("field", "Field")]
        },
    }
    return yaml.safe_dump(
        {
            "mcpgen": 1,
            "package": "helpernames_mcp",
            "server": {"name": "helpernames", "version": "1"},
            "types": TYPES,
            "tools": [{"name": "t", "parameters": PARAMETERS, "output_schema": output}],
        },
        sort_keys=False,
    )


def test_helper_names_brackets_and_pipes_in_literals_print_right(tmp_path: Path) -> None:
    gen = build_package(_spec(), tmp_path, "helpernames_mcp")
    models_py = (gen / "helpernames_mcp" / "models.py").read_text(encoding="utf-8")
    # the `[` inside a value is no bracket: None goes last
    assert 'Annotated: _TypeAlias = _Literal["["] | int | None\n' in models_py
    assert 'Literal: _TypeAlias = _Literal["Any", "Field", "TypeAlias"]\n' in models_py
    assert "    kind: _Literal['Literal[\"x\"] | None']\n" in models_py
    assert '    Required: _Literal["Required", "]|["]\n' in models_py
    # the aliases in the order they were declared: none waits for a type named like
    # a helper it uses
    aliases = [line.split(":")[0] for line in models_py.splitlines() if ": _TypeAlias = " in line]
    assert aliases == ["Annotated", "Literal", "TypeAlias", "TypeAliasDict"]
    client_py = (gen / "helpernames_mcp" / "client.py").read_text(encoding="utf-8")
    assert '        Required: Literal["Required", "]|["] | Unset = UNSET,\n' in client_py
    assert "    from .models import Literal as Literal_\n" in client_py
    done = mypy_strict(gen / "helpernames_mcp", cwd=gen)
    assert done.returncode == 0, done.stdout + done.stderr
    with import_package(gen, "helpernames_mcp") as package:
        models = package.models
        assert models.Literal == typing.Literal["Any", "Field", "TypeAlias"]
        field_type = models.Field.model_fields["Literal_"].annotation
        assert set(typing.get_args(typing.get_args(field_type)[0])) == set(ODD)
        for value in ODD:
            assert models.Field.model_validate({"Literal": value, "Any": "a"}).Literal_ == value
        out = models.TOutput.model_validate({"pet": {"kind": 'Literal["x"] | None'}})
        assert type(out.pet) is models.Dog
        params = inspect.signature(package.HelpernamesClient.t).parameters
        assert params["literal"].annotation == "Literal_"
        assert params["annotated"].annotation == "Annotated"


def test_code_prints_reads_names_and_splits_unions_from_its_parts() -> None:
    day = code("list[", ref("Day"), "] | ", helper("Literal"), "[", Value('"]|["'), "]")
    assert day.text() == 'list[Day] | Literal["]|["]'
    assert day.text({"Day": "Day_"}, {"Literal": "_Literal"}) == 'list[Day_] | _Literal["]|["]'
    assert day.refs == {"Day"} and day.helpers == {"Literal"}
    assert [m.text() for m in day.union_members()] == ["list[Day]", 'Literal["]|["]']
    # adjacent text is one part, so equal code is equal parts
    assert code("int", " | ", "None") == code("int | None") == ("int | None",)
    # a type named like a helper is not the helper
    assert ref("Any") != ANY and union_of([ref("Any"), NONE]).text() == "Any | None"
    assert union_of([ref("Any"), ANY]) == ANY
    assert literal(["Any", None]) == code(helper("Literal"), "[", Value('"Any"'), "] | None")
    assert isinstance(literal(["x"])[0], Helper) and not literal([1.5]).refs
    assert Ref("Any") != Helper("Any")


# what the NUL-marker design defined; nothing may bring them back
REMOVED = {
    "_MARK", "_MARKER", "_STRING_OR_MARKER", "_NAME", "rename_types", "declared_names",
    "resolve_helpers", "identifiers_in", "split_union", "is_alias",
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(RENDER.glob("*.py")), ids=lambda p: p.name)
def test_no_render_module_holds_a_marker_or_a_scan(module: Path) -> None:
    source = module.read_bytes()
    assert b"\x00" not in source and b"\\x00" not in source and b"\\x01" not in source
    tree = ast.parse(source)
    defined = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    } | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert not defined & REMOVED
    for node in ast.walk(tree):  # the former markers, written as escapes or not
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            value = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            assert "\x00" not in value and "\x01" not in value, f"{module.name}:{node.lineno}"
