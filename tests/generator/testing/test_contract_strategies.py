"""The schema → strategy compiler and the deterministic examples of `mcpgen test`:
every value drawn as valid is accepted by the runtime's validator (a refused one would be
a false positive), patterns keep ECMA-262 meaning, and examples are deterministic."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen.testing import example_arguments
from mcpgen.testing.examples import boundary_arguments
from mcpgen.testing.negative import invalid_arguments
from mcpgen.testing.strategies import valid_values
from mcpgen_runtime.schema.validator import ValidationFailed, compile_schema

SCHEMAS: list[dict[str, Any]] = [
    {"type": "integer", "minimum": -3, "exclusiveMaximum": 7, "multipleOf": 2},
    {"type": "number", "exclusiveMinimum": 0, "maximum": 1.5},
    {"type": "string", "pattern": "^\\d{3}$"},  # ECMA \d is ASCII only
    {"type": "string", "pattern": "^[\\w-]+$", "maxLength": 5},
    {"type": "string", "format": "date-time"},
    {"type": "string", "format": "ipv6"},
    {"type": "string", "format": "email", "maxLength": 40},
    {"enum": ["a", 1, None]},
    {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
    {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "integer", "maximum": 5}]},
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]},
        ]
    },
    {
        "type": "array",
        "items": {"type": "integer"},
        "uniqueItems": True,
        "minItems": 2,
        "maxItems": 4,
    },
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "items": False},
    {
        "type": "object",
        "additionalProperties": {"type": "number"},
        "propertyNames": {"pattern": "^k"},
    },
    {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}},
        "required": ["t"],
        "$defs": {
            "T": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}},
                "additionalProperties": False,
            }
        },
    },
    {"type": "string", "not": {"const": ""}},
    {"type": "array", "contains": {"const": 5}, "maxItems": 3},
    {
        "type": "object",
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
        "minProperties": 1,
    },
    {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "dependentRequired": {"a": ["b"]},
        "if": {"required": ["a"]},
        "then": {"properties": {"b": {"minLength": 1}}},
    },
    {"type": ["integer", "string"], "minimum": 3, "maxLength": 2},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[str(i) for i in range(len(SCHEMAS))])
def test_drawn_values_pass_the_runtime_validator(schema: dict[str, Any]) -> None:
    validate = compile_schema(schema)

    @settings(
        max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(valid_values(schema))
    def check(value: Any) -> None:
        validate(value)  # raises on a false positive

    check()


def test_ecma_digit_class_draws_ascii_digits_only() -> None:
    seen: list[str] = []

    @settings(max_examples=60, database=None, deadline=None)
    @given(valid_values({"type": "string", "pattern": "^\\d+$"}))
    def collect(value: str) -> None:
        seen.append(value)

    collect()
    assert seen and all(set(v) <= set("0123456789") for v in seen)


TOOL = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 9},
        "mode": {"enum": ["x", "y"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "note": {"type": ["string", "null"], "maxLength": 3},
    },
    "required": ["n"],
    "additionalProperties": False,
}


def test_example_arguments_are_deterministic_and_valid() -> None:
    first = example_arguments(TOOL)
    assert first == example_arguments(TOOL) == {"n": 1}
    compile_schema(TOOL)(first)
    assert example_arguments(
        {**TOOL, "properties": {**TOOL["properties"], "n": {"type": "integer", "examples": [4]}}}
    ) == {"n": 4}


def test_boundary_cases_are_valid_and_reach_the_edges() -> None:
    cases = boundary_arguments(TOOL, 100)
    validate = compile_schema(TOOL)
    for case in cases:
        validate(case)
    values = [c.get("n") for c in cases]
    assert 1 in values and 9 in values
    assert {c.get("mode") for c in cases} >= {"x", "y"}
    assert any(c.get("note", "") is None for c in cases)
    assert any(c.get("tags") == [] for c in cases) and any(
        len(c.get("tags", [])) == 2 for c in cases
    )


def test_boundary_cases_call_with_and_without_defaulted_options() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "unit": {"enum": ["c", "f"], "default": "c"}},
        "required": ["n"],
    }
    assert example_arguments(schema) == {"n": 1, "unit": "c"}  # the page shows the default
    assert {"n": 1} in boundary_arguments(schema, 100)


def test_negative_cases_each_break_the_schema_after_coercion() -> None:
    coercing = compile_schema(TOOL, coerce=True)
    cases = invalid_arguments(TOOL, 100)
    breaks = {case.breaks for case in cases}
    assert "required 'n' left out" in breaks and "'n' above its maximum" in breaks
    assert "unknown argument 'mcpgen_unexpected_argument'" in breaks
    for case in cases:
        with pytest.raises(ValidationFailed):
            coercing(case.arguments)


def test_an_unsatisfiable_schema_has_no_example() -> None:
    from mcpgen.testing.examples import ExampleError

    with pytest.raises(ExampleError):
        example_arguments(
            {
                "type": "object",
                "properties": {"a": {"type": "integer", "minimum": 5, "maximum": 1}},
                "required": ["a"],
            }
        )


def test_strategies_accept_bool_schemas() -> None:
    assert st is not None
    assert example_arguments({"type": "object", "properties": {"a": True}}) == {}


def test_negative_cases_reach_into_nested_objects_through_refs() -> None:
    schema = {
        "type": "object",
        "properties": {"order": {"$ref": "#/$defs/Order"}},
        "required": ["order"],
        "additionalProperties": False,
        "$defs": {
            "Order": {
                "type": "object",
                "properties": {
                    "qty": {"type": "integer", "minimum": 1, "maximum": 9},
                    "when": {"type": "string", "format": "date"},
                },
                "required": ["qty"],
                "additionalProperties": False,
            }
        },
    }
    breaks = {case.breaks: case.arguments for case in invalid_arguments(schema, 100)}
    assert breaks["'order'.'qty' above its maximum"] == {"order": {"qty": 10}}
    assert breaks["'order'.required 'qty' left out"] == {"order": {}}
    assert "'order'.'when' not a valid date" in breaks
    assert "'order'.unknown argument 'mcpgen_unexpected_argument'" in breaks


def test_not_idempotent_says_where_the_answers_part() -> None:
    from mcpgen.testing.checks import difference
    from mcpgen.testing.targets import Reply

    first = Reply(result={"content": [{"type": "text", "text": "created at 2:11:40 PM"}]})
    second = Reply(result={"content": [{"type": "text", "text": "created at 2:11:41 PM"}]})
    shown = difference(first, second)
    assert "2:11:40" in shown.split(" then ")[0] and "2:11:41" in shown.split(" then ")[1]


def test_a_remote_returns_value_of_the_wrong_type_is_an_output_schema_finding() -> None:
    from mcpgen.testing.checks import ToolUnderTest, check_valid
    from mcpgen.testing.targets import Reply

    tool = ToolUnderTest("n", {"name": "n", "inputSchema": {"type": "object"}}, returns="integer")

    def text(value: str) -> Reply:
        return Reply(result={"content": [{"type": "text", "text": value}], "isError": False})

    assert check_valid(tool, {}, text("42")) is None
    for wrong in ("4.5", "true", '"42"', "forty-two"):
        finding = check_valid(tool, {}, text(wrong))
        assert finding is not None and finding.check == "output_schema", wrong
