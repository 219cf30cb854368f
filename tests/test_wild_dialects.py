"""Schemas from the wild, end to end (issue 23, items 14-16): declared drafts,
``$id`` inside a type, references by JSON pointer and ``$anchor``, foreign keywords.

Each schema is built into a package that passes ``mypy --strict``, served, and called
by the typed client; what the published schema says is what both sides enforce.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import import_package, mypy_strict

from mcpgen.build import build_spec
from mcpgen.spec.dialect import DRAFT_2020_12
from mcpgen.spec.load import load_spec_text

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
UUID = "123e4567-e89b-12d3-a456-426614174000"

TYPES: dict[str, Any] = {
    # item 14: an $id inside a type (its references used to resolve against the $id)
    "Account": {
        "$id": "https://example.com/account.json",
        "type": "object",
        "properties": {"owner": {"$ref": "#/types/Name"}, "kind": {"$ref": "#/$defs/Kind"}},
        "$defs": {"Kind": {"enum": ["personal", "team"]}},
    },
    "Name": {"type": "string", "minLength": 1},
}
TOOLS: list[dict[str, Any]] = [
    # item 15: a draft-07 schema means what draft-07 says, published as 2020-12
    {
        "name": "seven",
        "input_schema": {
            "$schema": DRAFT_07,
            "type": "object",
            "definitions": {"Id": {"type": "string", "format": "uuid"}},
            "properties": {
                "id": {"$ref": "#/definitions/Id", "maxLength": 3},  # ignored beside $ref
                "pair": {
                    "type": "array",
                    "items": [{"type": "integer"}, {"type": "string"}],
                    "additionalItems": False,
                },
                "deps": {"type": "object", "dependencies": {"a": ["b"]}},
            },
        },
    },
    # item 15: a draft-07 schema that means the same in 2020-12 keeps its $schema
    # (an imported server re-lists exactly); formats draft-07 lacks are annotations
    {
        "name": "legacy",
        "input_schema": {
            "$schema": DRAFT_07,
            "type": "object",
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "on": {"type": "string", "format": "date"},
            },
        },
    },
    # item 16: #/definitions in an input_schema that declares no draft
    {
        "name": "plain",
        "input_schema": {
            "type": "object",
            "required": ["when"],
            "definitions": {"Day": {"type": "string", "format": "date"}},
            "properties": {"when": {"$ref": "#/definitions/Day"}},
        },
    },
    # items 14, 16: pointers, anchors, OpenAPI's keywords, a type with an $id
    {
        "name": "refs",
        "parameters": [{"name": "value"}],
        "output_schema": {
            "$id": "https://example.com/refs.json",
            "type": "object",
            "nullable": True,
            "example": {"count": 1},
            "discriminator": {"propertyName": "count"},
            "allOf": [{"properties": {"flag": {"type": "boolean"}}}],
            "properties": {
                "count": {"$anchor": "count", "type": "integer", "minimum": 0},
                "again": {"$ref": "#count"},
                "same": {"$ref": "#/properties/count"},
                "flagged": {"$ref": "#/allOf/0/properties/flag"},
                "account": {"$ref": "#/types/Account"},
            },
        },
    },
]

IMPL = """
from __future__ import annotations

from wild2_mcp import Wild2Server
from wild2_mcp import models as m


class Impl(Wild2Server):
    def seven(self, args: m.SevenArgs) -> str:
        return "ok"

    def legacy(self, args: m.LegacyArgs) -> str:
        return args["id"]

    def plain(self, when: str) -> str:
        return when

    def refs(self, args: m.RefsArgs) -> m.RefsOutput:
        # unvalidated: the server's validator is what judges the result
        return m.RefsOutput.model_construct(**args["value"])
"""


def _spec(tools: list[dict[str, Any]], types: dict[str, Any] | None = None) -> str:
    return yaml.safe_dump(
        {
            "mcpgen": 1,
            "package": "wild2_mcp",
            "server": {"name": "wild2", "version": "1"},
            "types": types or {},
            "tools": tools,
        },
        sort_keys=False,
    )


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wild2")
    (root / "tools.yaml").write_text(_spec(TOOLS, TYPES), encoding="utf-8")
    result = build_spec(root / "tools.yaml", output=root / "gen" / "wild2_mcp")
    assert result.ok, [str(d) for d in result.diagnostics]
    (root / "gen" / "wild2_impl.py").write_text(IMPL, encoding="utf-8")
    return root / "gen"


@pytest.fixture(scope="module")
def package(gen: Path) -> Iterator[Any]:
    with import_package(gen, "wild2_mcp") as module:
        yield module


@pytest.fixture(scope="module")
def client(package: Any) -> Iterator[Any]:
    import wild2_impl

    with package.Wild2Client.in_memory(wild2_impl.Impl()) as connected:
        yield connected


def _listed(package: Any) -> dict[str, Any]:
    return {tool["name"]: tool for tool in package.contract.TOOLS}


def test_the_package_passes_mypy_strict(gen: Path) -> None:
    done = mypy_strict(gen / "wild2_mcp", gen / "wild2_impl.py", cwd=gen)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_draft_07_schema_is_published_as_the_2020_12_it_means(package: Any) -> None:
    """Before: published with its draft-07 ``$schema`` and enforced with 2020-12 rules
    (``maxLength`` beside ``$ref`` applied; tuple ``items`` refused as invalid)."""
    schema = _listed(package)["seven"]["inputSchema"]
    assert schema["$schema"] == DRAFT_2020_12
    assert schema["properties"]["id"] == {"$ref": "#/$defs/Id"}
    assert schema["properties"]["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert schema["properties"]["pair"]["items"] is False
    assert schema["properties"]["deps"]["dependentRequired"] == {"a": ["b"]}


def test_a_draft_07_schema_is_enforced_as_draft_07_reads(client: Any) -> None:
    from mcpgen_runtime import ToolError

    assert client.seven(id=UUID, pair=[1, "a"], deps={"a": 1, "b": 2}) == "ok"
    for bad in ({"pair": [1, "a", 3]}, {"deps": {"a": 1}}, {"pair": ["a"]}):
        with pytest.raises(ToolError):
            client.seven(**bad)


def test_a_draft_07_schema_that_means_the_same_is_published_as_written(
    package: Any, client: Any
) -> None:
    from mcpgen_runtime import ToolError

    assert _listed(package)["legacy"]["inputSchema"] == TOOLS[1]["input_schema"]
    assert client.legacy("not a uuid") == "not a uuid"  # draft-07 has no uuid format
    with pytest.raises(ToolError):
        client.legacy("x", on="tomorrow")  # it has date


def test_dropping_a_keyword_beside_ref_is_a_warning_at_its_line(tmp_path: Path) -> None:
    result = load_spec_text(_spec(TOOLS[:1]), "tools.yaml", spec_dir=tmp_path)
    assert result.contract is not None
    assert [d.message for d in result.warnings] == [
        "'maxLength' beside $ref is ignored by draft 07, which this schema declares: dropped"
    ]
    assert result.warnings[0].path == "tools[0].input_schema.properties.id.maxLength"


def test_definitions_in_an_input_schema_resolve(client: Any) -> None:
    """Before: "use '#/types/Name' or a file path (local $defs are for a hand-written
    input_schema)", said of a hand-written input_schema."""
    from mcpgen_runtime import ToolError

    assert client.plain("2026-12-03") == "2026-12-03"
    with pytest.raises(ToolError):
        client.plain("tomorrow")


@pytest.mark.filterwarnings("ignore::UserWarning")  # the handler's unvalidated models
def test_pointers_anchors_and_an_id_inside_a_type_resolve(client: Any) -> None:
    """Before: ``$anchor`` references and pointers such as ``#/allOf/0/…`` were refused;
    a type with an ``$id`` could not be modelled (``'#/$defs/B' does not resolve``)."""
    from mcpgen_runtime import ToolError

    value = {
        "count": 1,
        "again": 2,
        "same": 3,
        "flagged": True,
        "flag": False,
        "account": {"owner": "ann", "kind": "team"},
    }
    out = client.refs(value)
    assert out.model_dump(by_alias=True, exclude_unset=True) == value
    assert (out.again, out.same, out.flagged, out.account.owner) == (2, 3, True, "ann")
    for bad in (
        {"again": -1},
        {"same": "x"},
        {"flagged": 1},
        {"account": {"owner": ""}},
        {"account": {"kind": "other"}},
    ):
        with pytest.raises(ToolError, match="does not match the tool's output schema"):
            client.refs(bad)


def test_foreign_keywords_are_published_unchanged(package: Any) -> None:
    schema = _listed(package)["refs"]["outputSchema"]
    assert (schema["nullable"], schema["example"], schema["discriminator"]) == (
        True,
        {"count": 1},
        {"propertyName": "count"},
    )
    # the root's $id names the document; one below it would re-base its references
    assert schema["$id"] == "https://example.com/refs.json"
    assert "$id" not in schema["$defs"]["Account"] and "$anchor" not in str(schema)


@pytest.mark.parametrize(
    ("keyword", "message"),
    [
        ("typ", "unknown JSON Schema keyword 'typ' (did you mean 'type'?)"),
        ("propertys", "unknown JSON Schema keyword 'propertys' (did you mean 'properties'?)"),
        ("additionalItems", "'additionalItems' is draft 2019-09 and earlier"),
    ],
)
def test_near_misses_stay_errors(tmp_path: Path, keyword: str, message: str) -> None:
    tools = [{"name": "t", "parameters": [{"name": "x", "type": "array", keyword: {}}]}]
    result = load_spec_text(_spec(tools), "tools.yaml", spec_dir=tmp_path)
    assert result.contract is None
    assert [d.message for d in result.errors if message in d.message], result.errors


def test_other_unknown_keywords_are_annotations(tmp_path: Path) -> None:
    tools = [
        {
            "name": "t",
            "parameters": [
                {
                    "name": "x",
                    "type": "string",
                    "nullable": True,
                    "example": "a",
                    "widget": "textarea",
                }
            ],
        }
    ]
    result = load_spec_text(_spec(tools), "tools.yaml", spec_dir=tmp_path)
    assert result.contract is not None
    assert [d.message for d in result.warnings] == [
        "unknown keyword 'widget' is kept as an annotation: published unchanged, not checked"
    ]
    published = result.contract.tools[0].input_schema["properties"]["x"]
    assert published == {"type": "string", "nullable": True, "example": "a", "widget": "textarea"}
