"""The published root of tool schemas and the JSON Schema forms a spec may use.

- ``inputSchema`` and ``outputSchema`` always have ``"type": "object"`` at the
  root and still resolve: a root ``$ref`` (to a ``types`` entry, a file, or a
  hand-written schema's own ``$defs``) is published with the referenced
  definition inlined at the root;
- an output (or hand-written input) schema that cannot describe an object is a
  build error at its line:col, whether written inline, in ``types`` or in a file;
- a parameter may carry JSON Schema's own ``required: [...]`` list at its top level;
- a hand-written ``input_schema`` may use local ``$defs`` and ``#/$defs/X``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcpgen.spec.load import load_contract
from mcpgen_runtime.protocol.structured import needs_wrapper

ISSUE = {
    "type": "object",
    "properties": {"number": {"type": "integer"}, "title": {"type": "string"}},
    "required": ["number", "title"],
    "additionalProperties": False,
}


def _load_yaml(tmp_path: Path, text: str) -> tuple[Any, list[str]]:
    spec = tmp_path / "tools.yaml"
    spec.write_text(HEAD + textwrap.dedent(text), encoding="utf-8")
    result = load_contract(spec)
    shown = [str(d).replace(str(spec), "tools.yaml") for d in result.diagnostics]
    return result.contract, shown


def _contract(tmp_path: Path, text: str) -> Any:
    contract, diagnostics = _load_yaml(tmp_path, text)
    assert contract is not None, diagnostics
    assert diagnostics == []
    return contract


def _errors(tmp_path: Path, text: str) -> list[str]:
    contract, diagnostics = _load_yaml(tmp_path, text)
    assert contract is None
    return diagnostics


HEAD = """\
mcpgen: 1
package: t_mcp
server: {name: t, version: "1.0"}
"""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _resolves(schema: dict[str, Any], good: Any, bad: Any) -> None:
    """The published schema is valid 2020-12, self-contained, and means what it says."""
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(good)
    assert not validator.is_valid(bad)


# -- output schemas: a root $ref is inlined --------------------------------------------


def test_output_ref_to_object_type_is_inlined(tmp_path: Path) -> None:
    contract = _contract(
        tmp_path,
        """\
        types:
          Issue: {type: object, properties: {number: {type: integer}, title: {type: string}},
                  required: [number, title], additionalProperties: false}
        tools:
          - name: get_issue
            output_schema: {$ref: "#/types/Issue"}
        """,
    )
    tool = contract.tools[0]
    assert _dumps(tool.output_schema) == _dumps(ISSUE)
    assert tool.output_type_ref == "Issue"  # GetIssueOutput stays an alias of Issue
    _resolves(tool.output_schema, {"number": 1, "title": "x"}, {"number": 1, "title": "x", "z": 0})


def test_recursive_output_type_keeps_its_defs(tmp_path: Path) -> None:
    contract = _contract(
        tmp_path,
        """\
        types:
          Node:
            type: object
            properties:
              id: {type: integer}
              kids: {type: array, items: {$ref: "#/types/Node"}}
              tag: {$ref: "#/types/Tag"}
            required: [id]
          Tag: {enum: [a, b]}
        tools:
          - name: tree
            output_schema: {$ref: "#/types/Node", description: The root node.}
        """,
    )
    schema = contract.tools[0].output_schema
    assert schema["type"] == "object" and "$ref" not in schema
    assert schema["description"] == "The root node."
    assert schema["properties"]["kids"] == {"type": "array", "items": {"$ref": "#/$defs/Node"}}
    assert sorted(schema["$defs"]) == ["Node", "Tag"]
    assert contract.tools[0].output_type_ref is None  # not a bare $ref: a model of its own
    _resolves(schema, {"id": 1, "kids": [{"id": 2, "tag": "a"}]}, {"id": 1, "kids": [{"id": "x"}]})


def test_output_ref_to_object_file_is_inlined(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "summary.json").write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {"open": {"type": "integer"}, "top": {"$ref": "#/$defs/Top"}},
                "required": ["open"],
                "$defs": {"Top": {"type": "array", "items": {"type": "string"}}},
            }
        ),
        encoding="utf-8",
    )
    contract = _contract(
        tmp_path,
        """\
        tools:
          - name: summary
            output_schema: {$ref: "schemas/summary.json"}
        """,
    )
    tool = contract.tools[0]
    schema = tool.output_schema
    assert schema["type"] == "object"
    assert schema["properties"]["top"] == {"$ref": "#/$defs/SummaryTop"}
    assert schema["$defs"] == {"SummaryTop": {"type": "array", "items": {"type": "string"}}}
    assert tool.output_type_ref == "Summary"  # an alias of the file's model
    _resolves(schema, {"open": 2, "top": ["a"]}, {"open": 2, "top": [1]})


def test_root_anyof_of_objects_gets_a_root_type(tmp_path: Path) -> None:
    contract = _contract(
        tmp_path,
        """\
        types:
          A: {type: object, properties: {kind: {const: a}}, required: [kind]}
          B: {type: object, properties: {kind: {const: b}}, required: [kind]}
        tools:
          - name: either
            output_schema: {oneOf: [{$ref: "#/types/A"}, {$ref: "#/types/B"}]}
        """,
    )
    schema = contract.tools[0].output_schema
    assert list(schema)[:2] == ["type", "oneOf"] and schema["type"] == "object"
    _resolves(schema, {"kind": "a"}, {"kind": "c"})


@pytest.mark.parametrize(
    ("output", "published", "good", "bad"),
    [
        ('{$ref: "#/types/State"}',
         {"$ref": "#/$defs/State", "$defs": {"State": {"enum": ["open", "closed"]}}},
         "open", "ajar"),
        ('{$ref: "schemas/list.json"}',
         {"$ref": "#/$defs/List", "$defs": {"List": {"type": "array"}}}, [1], {}),
        ("{type: string}", {"type": "string"}, "x", 1),
        ("{anyOf: [{type: string}, {$ref: '#/types/State'}]}",
         {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/State"}],
          "$defs": {"State": {"enum": ["open", "closed"]}}}, "any", 2),
        ("{type: [object, 'null']}", {"type": ["object", "null"]}, None, 3),
        ("{properties: {a: {type: string}}}", {"properties": {"a": {"type": "string"}}}, 4,
         {"a": 5}),
    ],
)  # fmt: skip
def test_an_output_schema_of_any_type_is_published_as_written(
    tmp_path: Path, output: str, published: dict[str, Any], good: Any, bad: Any
) -> None:
    """SEP-2106: an output schema that does not describe an object is published as
    written (what it references under ``$defs``); the runtime wraps it for the
    revisions before 2026-07-28 (``protocol.structured``)."""
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "list.json").write_text('{"type": "array"}', encoding="utf-8")
    contract = _contract(
        tmp_path,
        f"""\
        types:
          State: {{enum: [open, closed]}}
        tools:
          - name: any
            output_schema: {output}
        """,
    )
    schema = contract.tools[0].output_schema
    assert schema == published
    assert needs_wrapper(schema)
    _resolves(schema, good, bad)


# -- hand-written input schemas --------------------------------------------------------


def test_input_schema_root_ref_is_inlined_with_its_parameters(tmp_path: Path) -> None:
    contract = _contract(
        tmp_path,
        """\
        types:
          Issue: {type: object, properties: {number: {type: integer}, title: {type: string}},
                  required: [number, title], additionalProperties: false}
        tools:
          - name: create
            input_schema: {$ref: "#/types/Issue"}
        """,
    )
    tool = contract.tools[0]
    assert _dumps(tool.input_schema) == _dumps(ISSUE)
    assert [(p.name, p.required) for p in tool.parameters] == [("number", True), ("title", True)]


def test_input_schema_root_ref_to_non_object_is_an_error(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        """\
        types:
          State: {enum: [open, closed]}
        tools:
          - name: create
            input_schema: {$ref: "#/types/State"}
        """,
    )
    assert errors == [
        (
            "tools.yaml:8:26: tools[0].input_schema.$ref: an input schema must describe an object "
            "(type: object), and '#/types/State' does not: tool arguments are a JSON object"
        )
    ]


PYDANTIC_STYLE = """\
        tools:
          - name: create
            input_schema:
              $defs:
                Tag: {type: string, enum: [bug, feature]}
                Draft:
                  type: object
                  properties:
                    title: {type: string}
                    tags: {type: array, items: {$ref: "#/$defs/Tag"}}
                    parent: {$ref: "#/types/Issue"}
                  required: [title]
                  additionalProperties: false
              $ref: "#/$defs/Draft"
        """


def test_input_schema_local_defs_published_as_written(tmp_path: Path) -> None:
    """As pydantic and FastMCP emit them: local ``$defs``, ``#/$defs/X`` refs, root $ref;
    a spec type used beside them is bundled into the same ``$defs``."""
    contract = _contract(
        tmp_path,
        """\
        types:
          Issue: {type: object, properties: {number: {type: integer}}, required: [number]}\n"""
        + PYDANTIC_STYLE,
    )
    tool = contract.tools[0]
    schema = tool.input_schema
    assert schema["type"] == "object"
    assert schema["properties"] == {
        "title": {"type": "string"},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
        "parent": {"$ref": "#/$defs/Issue"},
    }
    assert list(schema["$defs"]) == ["Tag", "Draft", "Issue"]
    assert schema["$defs"]["Tag"] == {"type": "string", "enum": ["bug", "feature"]}
    assert [(p.name, p.required) for p in tool.parameters] == [
        ("title", True),
        ("tags", False),
        ("parent", False),
    ]
    _resolves(
        schema,
        {"title": "t", "tags": ["bug"], "parent": {"number": 1}},
        {"title": "t", "tags": ["nope"]},
    )


def test_input_schema_local_defs_without_root_ref(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"when": {"$ref": "#/$defs/When"}},
        "$defs": {"When": {"type": "string", "format": "date"}},
    }
    contract = _contract(tmp_path, f"tools:\n  - name: t\n    input_schema: {json.dumps(schema)}\n")
    assert _dumps(contract.tools[0].input_schema) == _dumps(schema)


def test_local_def_named_like_a_type_is_an_error(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        """\
        types:
          Issue: {type: object, properties: {number: {type: integer}}, required: [number]}
          Tag: {type: string}\n"""
        + PYDANTIC_STYLE,
    )
    assert errors == [
        (
            "tools.yaml:11:9: tools[0].input_schema.$defs.Tag: local definition 'Tag' has the name "
            "of types entry 'Tag'; both would be published as '#/$defs/Tag': rename one"
        )
    ]


def test_local_ref_that_does_not_resolve_is_an_error(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        """\
        tools:
          - name: t
            input_schema:
              type: object
              properties: {a: {$ref: "#/$defs/Nope"}}
              $defs: {Known: {type: string}}
        """,
    )
    assert errors == [
        (
            "tools.yaml:8:30: tools[0].input_schema.properties.a.$ref: '#/$defs/Nope' does not "
            "resolve: this schema's $defs has no 'Nope' (it has: Known)"
        )
    ]


def test_file_ref_beside_local_defs_gets_a_fresh_name(tmp_path: Path) -> None:
    (tmp_path / "item.json").write_text(
        '{"type": "object", "properties": {"a": {"type": "string"}}}', encoding="utf-8"
    )
    contract = _contract(
        tmp_path,
        """\
        tools:
          - name: t
            input_schema:
              type: object
              properties: {x: {$ref: "#/$defs/Item"}, y: {$ref: "item.json"}}
              $defs: {Item: {type: integer}}
        """,
    )
    schema = contract.tools[0].input_schema
    assert schema["properties"]["y"] == {"$ref": "#/$defs/Item2"}
    assert schema["$defs"]["Item"] == {"type": "integer"}
    _resolves(schema, {"x": 1, "y": {"a": "s"}}, {"x": 1, "y": {"a": 2}})


# -- a parameter's own `required` list ---------------------------------------------------


def test_parameter_with_json_schema_required_list(tmp_path: Path) -> None:
    contract = _contract(
        tmp_path,
        """\
        tools:
          - name: move
            parameters:
              - name: to
                type: object
                properties: {x: {type: integer}, y: {type: integer}}
                required: [x, y]
              - name: by
                type: object
                properties: {dx: {type: integer}}
                required: [dx]
                default: {dx: 1}
        """,
    )
    tool = contract.tools[0]
    assert [(p.name, p.required) for p in tool.parameters] == [("to", True), ("by", False)]
    assert tool.input_schema["properties"]["to"]["required"] == ["x", "y"]
    assert tool.input_schema["required"] == ["to"]
    _resolves(tool.input_schema, {"to": {"x": 1, "y": 2}}, {"to": {"x": 1}})


def test_parameter_required_list_is_checked_as_json_schema(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        """\
        tools:
          - name: move
            parameters:
              - {name: to, type: object, required: [x, x]}
              - {name: at, type: object, required: "x"}
        """,
    )
    assert errors == [
        (
            "tools.yaml:7:44: tools[0].parameters[0].required: invalid JSON Schema: ['x', 'x'] has "
            "non-unique elements"
        ),
        (
            "tools.yaml:8:44: tools[0].parameters[1].required: expected true or false or a list, "
            "got 'x'"
        ),
    ]
