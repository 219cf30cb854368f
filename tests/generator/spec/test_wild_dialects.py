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


# -- issue 33, item 11: anchors and ids as each draft declares them ---------------------------

DRAFT_04 = "http://json-schema.org/draft-04/schema#"
CORPUS_TYPES: dict[str, Any] = {
    # an $anchor declared inside a type, referenced as `#name` from a tool
    "Address": {
        "$anchor": "address",
        "type": "object",
        "required": ["street"],
        "properties": {"street": {"type": "string", "minLength": 1}},
    },
    # a namespace of definitions, referenced as `#/types/v2/$defs/User`
    "v2": {"$defs": {"User": {"type": "object", "properties": {"age": {"type": "integer"}}}}},
}
CORPUS_TOOLS: list[dict[str, Any]] = [
    {"name": "ship", "parameters": [{"name": "to", "$ref": "#address"}]},
    {"name": "user", "parameters": [{"name": "who", "$ref": "#/types/v2/$defs/User"}]},
    # draft-07 declared an anchor with a plain-name $id
    {
        "name": "seven_anchor",
        "input_schema": {
            "$schema": DRAFT_07,
            "type": "object",
            "definitions": {"Zip": {"$id": "#zip", "type": "string", "pattern": "^[0-9]{5}$"}},
            "properties": {"zip": {"$ref": "#zip"}},
        },
    },
    # draft-04 spelled $id as `id`, and an anchor as `id: "#name"`
    {
        "name": "four_ids",
        "input_schema": {
            "$schema": DRAFT_04,
            "id": "https://example.com/four.json",
            "type": "object",
            "definitions": {"Code": {"id": "#code", "type": "string", "maxLength": 3}},
            "properties": {"code": {"$ref": "#code"}},
        },
    },
]
CORPUS_IMPL = """
from __future__ import annotations

from corpus_mcp import CorpusServer
from corpus_mcp import models as m


class Impl(CorpusServer):
    def ship(self, to: m.AddressDict) -> str:
        return to["street"]

    def user(self, who: m.UserDict) -> str:
        return str(who.get("age"))

    def seven_anchor(self, args: m.SevenAnchorArgs) -> str:
        return str(args.get("zip"))

    def four_ids(self, args: m.FourIdsArgs) -> str:
        return str(args.get("code"))
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    text = _spec(CORPUS_TOOLS, CORPUS_TYPES).replace("wild2", "corpus")
    (root / "tools.yaml").write_text(text, encoding="utf-8")
    result = build_spec(root / "tools.yaml", output=root / "gen" / "corpus_mcp")
    assert result.ok, [str(d) for d in result.diagnostics]
    (root / "gen" / "corpus_impl.py").write_text(CORPUS_IMPL, encoding="utf-8")
    return root / "gen"


def test_anchors_and_ids_of_every_draft_build_and_pass_mypy_strict(corpus: Path) -> None:
    """Before: "no $anchor 'address' in this schema" (an anchor inside a type), "'#zip' does
    not match '^[^#]*#?$'" (draft-07's plain-name $id), "unknown JSON Schema keyword 'id'
    (did you mean '$id'?)" (draft-04), and "it points to no schema inside this one"
    (`#/types/v2/$defs/User`)."""
    done = mypy_strict(corpus / "corpus_mcp", corpus / "corpus_impl.py", cwd=corpus)
    assert done.returncode == 0, done.stdout + done.stderr


def test_anchors_and_ids_of_every_draft_are_enforced(corpus: Path) -> None:
    from mcpgen_runtime import ToolError

    with import_package(corpus, "corpus_mcp") as package:
        listed = {tool["name"]: tool for tool in package.contract.TOOLS}
        four = listed["four_ids"]["inputSchema"]
        assert four["$id"] == "https://example.com/four.json" and "id" not in four
        assert four["$schema"] == DRAFT_2020_12
        assert listed["seven_anchor"]["inputSchema"]["$schema"] == DRAFT_2020_12
        import corpus_impl

        with package.CorpusClient.in_memory(corpus_impl.Impl()) as client:
            assert client.ship({"street": "Main"}) == "Main"
            assert client.seven_anchor(zip="12345") == "12345"
            assert client.four_ids(code="abc") == "abc"
            assert "7" in client.user({"age": 7})
            for call in (
                lambda: client.ship({"street": ""}),
                lambda: client.seven_anchor(zip="1234"),
                lambda: client.four_ids(code="abcd"),
                lambda: client.user({"age": "x"}),
            ):
                with pytest.raises(ToolError):
                    call()


def test_an_anchor_two_types_declare_is_ambiguous(tmp_path: Path) -> None:
    types = {
        "A": {"$anchor": "same", "type": "string"},
        "B": {"$anchor": "same", "type": "integer"},
    }
    tools = [{"name": "t", "parameters": [{"name": "x", "$ref": "#same"}]}]
    result = load_spec_text(_spec(tools, types), "tools.yaml", spec_dir=tmp_path)
    assert result.contract is None
    assert [d.message for d in result.errors] == [
        "'#same' is ambiguous: $anchor 'same' is declared in types A, B"
    ]


def test_a_pointer_into_a_type_that_finds_nothing_says_where(tmp_path: Path) -> None:
    types = {"v2": {"$defs": {"User": {"type": "object"}}}}
    tools = [{"name": "t", "parameters": [{"name": "x", "$ref": "#/types/v2/$defs/Usr"}]}]
    result = load_spec_text(_spec(tools, types), "tools.yaml", spec_dir=tmp_path)
    assert [d.message for d in result.errors] == [
        "'#/types/v2/$defs/Usr' does not resolve: type 'v2' has no schema at '/$defs/Usr'"
    ]
