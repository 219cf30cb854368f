"""Tests for the compiled JSON Schema validator in ``mcpgen_runtime.schema.validator``."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen_runtime.schema.formats import FORMATS
from mcpgen_runtime.schema.validator import (
    MAX_COERCED_LENGTH,
    Problem,
    SchemaError,
    ValidationFailed,
    compile_schema,
)

ADD_ARGS = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


def is_valid(schema: Any, instance: Any, *, coerce: bool = False) -> bool:
    try:
        compile_schema(schema, coerce=coerce)(instance)
    except ValidationFailed:
        return False
    return True


def messages(schema: Any, instance: Any, *, coerce: bool = False) -> list[str]:
    with pytest.raises(ValidationFailed) as info:
        compile_schema(schema, coerce=coerce)(instance)
    return [problem.render() for problem in info.value.problems]


# The reference asserts formats as the runtime does, with the runtime's checkers (each
# pinned against the official suite in test_schema_suite.py): the differential tests
# compare how keywords combine, not two readings of an RFC.
_FORMATS = jsonschema.FormatChecker(formats=())
for _name, _format in FORMATS.items():
    _FORMATS.checks(_name)(
        lambda value, check=_format.check: not isinstance(value, str) or check(value)
    )


def reference_valid(schema: Any, instance: Any) -> bool:
    validator = jsonschema.Draft202012Validator(schema, format_checker=_FORMATS)
    return bool(validator.is_valid(instance))


def nested_lists(depth: int) -> list[Any]:
    root: list[Any] = []
    current = root
    for _ in range(depth):
        child: list[Any] = []
        current.append(child)
        current = child
    return root


# ----------------------------------------------------------------- problems


def test_problem_render_paths() -> None:
    assert Problem((), "boom").render() == "boom"
    assert Problem(("days",), "m").render() == "days: m"
    assert Problem(("items", 0, "date"), "m").render() == "items[0].date: m"
    assert Problem((0, "a"), "m").render() == "[0].a: m"
    assert Problem(("a b", 2), "m").render() == "['a b'][2]: m"


def test_describe_truncates_and_counts() -> None:
    failed = ValidationFailed([Problem((f"p{i}",), "bad") for i in range(8)])
    text = failed.describe(limit=3)
    assert text == "p0: bad; p1: bad; p2: bad (and 5 more)"
    assert str(failed) == failed.describe()
    huge = ValidationFailed([Problem(("k",), "x" * 5000)])
    assert len(huge.describe()) <= 1000


def test_problems_capped_at_twenty() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    with pytest.raises(ValidationFailed) as info:
        compile_schema(schema)(["x"] * 500)
    assert len(info.value.problems) == 20
    assert "(and 15 more)" in info.value.describe()


def test_validation_failed_needs_a_problem() -> None:
    with pytest.raises(ValueError):
        ValidationFailed([])


def test_values_in_messages_are_bounded() -> None:
    big = "z" * 3_000_000
    (message,) = messages({"type": "integer"}, big)
    assert len(message) < 120 and message.endswith("…")
    (message,) = messages({"type": "string"}, {"k": list(range(100_000))})
    assert len(message) < 120
    (message,) = messages({"type": "string"}, 10**5000)
    assert "integer" in message and len(message) < 120


# -------------------------------------------------------------------- types


def test_add_args_example() -> None:
    validate = compile_schema(ADD_ARGS)
    args = {"a": 1, "b": 2}
    assert validate(args) is args
    assert messages(ADD_ARGS, {"a": "x", "cty": 2}) == [
        "missing required property 'b'",
        "a: expected integer, got 'x'",
        "unexpected property 'cty'",
    ]


@pytest.mark.parametrize(
    ("schema_type", "good", "bad"),
    [
        ("integer", [1, -3, 1.0, 10**30], [True, False, 1.5, "1", None]),
        ("number", [1, 1.5, -0.0], [True, "1.5", None]),
        ("boolean", [True, False], [0, 1, "true"]),
        ("null", [None], [0, False, ""]),
        ("string", ["", "x"], [1, None]),
        ("array", [[], [1]], [{}, "[]"]),
        ("object", [{}, {"a": 1}], [[], "{}"]),
    ],
)
def test_types(schema_type: str, good: list[Any], bad: list[Any]) -> None:
    validate = compile_schema({"type": schema_type})
    for value in good:
        assert validate(value) is value
    for value in bad:
        with pytest.raises(ValidationFailed):
            validate(value)


def test_type_messages() -> None:
    assert messages({"type": "integer"}, "abc") == ["expected integer, got 'abc'"]
    assert messages({"type": ["integer", "null"]}, "abc") == ["expected integer or null, got 'abc'"]
    assert messages({"properties": {"days": {"type": "integer"}}}, {"days": True}) == [
        "days: expected integer, got True"
    ]


# --------------------------------------------------------------- enum/const


def test_enum_message_and_json_equality() -> None:
    units = {"properties": {"units": {"enum": ["metric", "imperial"]}}}
    assert messages(units, {"units": "kelvin"}) == [
        "units: expected one of ['metric', 'imperial'], got 'kelvin'"
    ]
    assert is_valid({"enum": [1]}, 1.0)
    assert not is_valid({"enum": [1]}, True)
    assert not is_valid({"enum": [0]}, False)
    assert not is_valid({"enum": [True]}, 1)
    assert is_valid({"enum": [[1, {"a": 2}]]}, [1.0, {"a": 2.0}])
    assert not is_valid({"enum": [[1]]}, [True])
    assert not is_valid({"enum": [{"a": 0}]}, {"a": False})
    assert is_valid({"enum": [None, "x"]}, None)


def test_const() -> None:
    assert is_valid({"const": 3}, 3.0)
    assert not is_valid({"const": False}, 0)
    assert messages({"const": "on"}, "off") == ["expected 'on', got 'off'"]


# ------------------------------------------------------------------ numbers


def test_number_bounds_messages() -> None:
    days = {"properties": {"days": {"type": "integer", "minimum": 1, "maximum": 14}}}
    assert messages(days, {"days": 20}) == ["days: must be <= 14, got 20"]
    assert messages(days, {"days": 0}) == ["days: must be >= 1, got 0"]
    assert messages({"exclusiveMinimum": 0}, 0) == ["must be > 0, got 0"]
    assert messages({"exclusiveMaximum": 1.5}, 1.5) == ["must be < 1.5, got 1.5"]
    assert is_valid({"minimum": 1}, "not a number")


def test_multiple_of() -> None:
    assert messages({"multipleOf": 5}, 7) == ["must be a multiple of 5, got 7"]
    assert is_valid({"multipleOf": 5}, 10.0)
    assert is_valid({"multipleOf": 0.5}, 2.5)
    assert not is_valid({"multipleOf": 0.5}, 2.4)
    # Decimal semantics: what the literals say, not what binary floats round to.
    assert is_valid({"multipleOf": 0.01}, 19.99)
    assert is_valid({"multipleOf": 0.1}, 0.3)
    assert is_valid({"multipleOf": 3}, 10**40 * 3)
    assert is_valid({"multipleOf": 0.25}, 1e308)
    assert not is_valid({"multipleOf": 2}, 1.5)


@pytest.mark.parametrize(
    ("draft", "unchecked", "checked"),
    [
        ("http://json-schema.org/draft-07/schema#", ["uuid", "duration"], ["date", "email"]),
        ("http://json-schema.org/draft-06/schema#", ["date", "uuid", "regex"], ["uri-reference"]),
        ("http://json-schema.org/draft-04/schema#", ["json-pointer", "date"], ["ipv4"]),
        ("https://json-schema.org/draft/2020-12/schema", [], ["uuid", "duration", "date"]),
    ],
)
def test_formats_an_earlier_draft_lacks_are_annotations(
    draft: str, unchecked: list[str], checked: list[str]
) -> None:
    """A schema declaring draft-07 is published with its $schema when it means the same
    in 2020-12: the validator then reads `format: uuid` as draft-07 does (issue 23, 15)."""
    for name in unchecked:
        assert is_valid({"$schema": draft, "format": name}, "not it"), name
    for name in checked:
        assert not is_valid({"$schema": draft, "format": name}, "not it"), name


@pytest.mark.parametrize(
    ("step", "value"),
    [
        (0.1, 7 * 0.1),  # 0.7000000000000001
        (0.1, 0.1 * 3),  # 0.30000000000000004
        (0.01, sum([0.01] * 10)),  # 0.09999999999999999
        (3, 3 * 3.0000000000000004),  # 9.000000000000002, an integer step
        (0.05, 1.15 * 3),  # 3.4499999999999997
    ],
)
def test_multiple_of_tolerates_float_rounding(step: float, value: float) -> None:
    """What a handler computes in floats passes, as Ajv and Python's jsonschema let it
    (issue 23, item 17); before, the exact decimal check refused it."""
    assert is_valid({"multipleOf": step}, value)


@pytest.mark.parametrize(
    ("step", "value"),
    [
        (0.1, 0.70000000001),
        (0.0001, 0.00751),
        (3, 9.000001),
        (0.123456789, 1e308),
        (0.3, 1e20),  # a quotient beyond 2**32: exact only
    ],
)
def test_multiple_of_tolerance_is_rounding_only(step: float, value: float) -> None:
    assert not is_valid({"multipleOf": step}, value)


# ------------------------------------------------------------------ strings


def test_string_keywords() -> None:
    name = {"properties": {"name": {"type": "string", "minLength": 3, "maxLength": 5}}}
    assert messages(name, {"name": "ab"}) == ["name: must be at least 3 characters"]
    assert messages(name, {"name": "abcdef"}) == ["name: must be at most 5 characters"]
    # Code points, not UTF-16 units or bytes.
    assert is_valid({"maxLength": 2}, "😀😀")
    assert not is_valid({"minLength": 3}, "😀😀")
    assert is_valid({"pattern": "b"}, "abc")
    assert not is_valid({"pattern": "^b"}, "abc")
    assert messages({"pattern": "^[a-z]+$"}, "ABC") == ["must match pattern '^[a-z]+$', got 'ABC'"]
    # format is asserted (the formats mcpgen_runtime.schema.formats knows), else an annotation.
    assert not is_valid({"format": "email"}, "definitely not an email")
    assert is_valid({"format": "x-not-a-format"}, "definitely not an email")
    assert is_valid({"minLength": 10}, 5)


# ------------------------------------------------------------------- arrays


def test_array_keywords() -> None:
    tags = {"properties": {"tags": {"type": "array", "maxItems": 5, "minItems": 1}}}
    assert messages(tags, {"tags": list(range(9))}) == ["tags: expected at most 5 items, got 9"]
    assert messages(tags, {"tags": []}) == ["tags: expected at least 1 item, got 0"]
    items = {"items": {"type": "object", "properties": {"date": {"type": "string"}}}}
    assert messages({"properties": {"items": items}}, {"items": [{}, {"date": 5}]}) == [
        "items[1].date: expected string, got 5"
    ]
    pair = {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}
    assert is_valid(pair, ["a", 1])
    assert is_valid(pair, ["a"])
    assert messages(pair, ["a", 1, 2]) == ["expected at most 2 items, got 3"]
    assert messages(pair, [1, "a"]) == [
        "[0]: expected string, got 1",
        "[1]: expected integer, got 'a'",
    ]
    tail = {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}
    assert is_valid(tail, ["a", 1, 2]) and not is_valid(tail, ["a", "b"])


def test_contains() -> None:
    schema = {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3}
    assert is_valid(schema, ["a", 1, 2])
    assert messages(schema, ["a", 1]) == [
        "expected at least 2 items matching the 'contains' schema, got 1"
    ]
    assert messages(schema, [1, 2, 3, 4]) == [
        "expected at most 3 items matching the 'contains' schema, got 4"
    ]
    assert not is_valid({"contains": {}}, [])
    assert is_valid({"contains": {"type": "integer"}, "minContains": 0}, [])


def test_unique_items_uses_json_equality() -> None:
    unique = {"uniqueItems": True}
    assert messages(unique, [1, 2, 1.0]) == ["expected unique items, but items 0 and 2 are equal"]
    assert is_valid(unique, [0, False])
    assert is_valid(unique, [1, True])
    assert is_valid(unique, [[1], [True]])
    assert not is_valid(unique, [{"a": 1}, {"a": 1.0}])
    assert is_valid(unique, [{"a": 1}, {"a": True}])
    assert is_valid({"uniqueItems": False}, [1, 1])


# ------------------------------------------------------------------ objects


def test_required_and_additional_properties() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
        "additionalProperties": False,
    }
    assert messages(schema, {"days": 1}) == ["missing required property 'city'"]
    assert messages(schema, {}) == ["missing required properties 'city', 'days'"]
    assert messages(schema, {"city": "x", "days": 1, "cty": 1, "zz": 2}) == [
        "unexpected properties 'cty', 'zz'"
    ]
    assert messages(schema, [1]) == ["expected object, got [1]"]


def test_pattern_and_additional_property_schemas() -> None:
    schema = {
        "properties": {"a1": {"minimum": 5}},
        "patternProperties": {"^a": {"type": "integer"}, "1$": {"maximum": 10}},
        "additionalProperties": {"type": "string"},
    }
    assert is_valid(schema, {"a1": 7, "ab": 3, "zz": "s"})
    assert messages(schema, {"a1": 11}) == ["a1: must be <= 10, got 11"]
    assert messages(schema, {"a1": 4.5}) == [
        "a1: must be >= 5, got 4.5",
        "a1: expected integer, got 4.5",
    ]
    assert messages(schema, {"zz": 1}) == ["zz: expected string, got 1"]


def test_other_object_keywords() -> None:
    names = {"propertyNames": {"pattern": "^[a-z]+$"}}
    assert messages(names, {"ok": 1, "Bad": 2}) == [
        "invalid property name 'Bad': must match pattern '^[a-z]+$', got 'Bad'"
    ]
    dep = {"dependentRequired": {"card": ["cvv", "expiry"]}}
    assert is_valid(dep, {"cvv": 1})
    assert messages(dep, {"card": 1, "cvv": 1}) == ["property 'card' requires property 'expiry'"]
    dep_schema = {"dependentSchemas": {"card": {"required": ["cvv"]}}}
    assert messages(dep_schema, {"card": 1}) == ["missing required property 'cvv'"]
    sized = {"minProperties": 1, "maxProperties": 2}
    assert messages(sized, {}) == ["expected at least 1 property, got 0"]
    assert messages(sized, {"a": 1, "b": 2, "c": 3}) == ["expected at most 2 properties, got 3"]
    assert messages({"properties": {"x": False}}, {"x": 1}) == ["x: no value is allowed here"]


# --------------------------------------------------------------- applicators


def test_all_of_and_not() -> None:
    schema = {"allOf": [{"type": "integer"}, {"minimum": 3}]}
    assert is_valid(schema, 4) and not is_valid(schema, 2)
    assert messages({"not": {"type": "null"}}, None) == [
        "must not match the schema {'type': 'null'}"
    ]


def test_any_of_messages() -> None:
    optional = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert messages(optional, 5) == ["expected string or null, got 5"]
    model = {"type": "object", "required": ["city"]}
    assert messages({"anyOf": [model, {"type": "null"}]}, {"cty": "x"}) == [
        "missing required property 'city'"
    ]
    two_models = {"anyOf": [model, {"type": "object", "required": ["zip"]}]}
    (message,) = messages(two_models, {})
    assert message == (
        "does not match any allowed alternative: (option 1) missing required property "
        "'city'; (option 2) missing required property 'zip'"
    )
    assert messages({"anyOf": [{"const": "a"}, {"enum": [1, 2]}]}, 3) == [
        "expected 'a' or one of [1, 2], got 3"
    ]


def test_one_of() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}
    assert is_valid(schema, -1) and is_valid(schema, 0.5)
    assert messages(schema, 3) == [
        "must match exactly one alternative, but matches options 1 and 2"
    ]
    assert messages(schema, "x") == ["expected integer or number, got 'x'"]


def test_if_then_else() -> None:
    schema = {
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["a"]},
        "else": {"required": ["b"]},
    }
    assert is_valid(schema, {"kind": "a", "a": 1})
    assert messages(schema, {"kind": "a"}) == ["missing required property 'a'"]
    assert messages(schema, {"kind": "z"}) == ["missing required property 'b'"]
    assert is_valid({"if": {"type": "string"}}, 5)


def test_boolean_schemas() -> None:
    assert compile_schema(True)(5) == 5
    assert messages(False, 5) == ["no value is allowed here"]
    assert is_valid({"items": True}, [1]) and not is_valid({"items": False}, [1])


# --------------------------------------------------------------------- refs


def test_local_refs() -> None:
    schema = {
        "$defs": {"Day": {"type": "integer", "maximum": 14}, "a/b~c": {"type": "string"}},
        "definitions": {"Old": {"type": "boolean"}},
        "properties": {
            "days": {"$ref": "#/$defs/Day"},
            "odd": {"$ref": "#/$defs/a~1b~0c"},
            "pct": {"$ref": "#/$defs/a~1b~0%63"},
            "old": {"$ref": "#/definitions/Old"},
            "list": {"items": {"type": "null"}},
            "again": {"$ref": "#/properties/list/items"},
        },
    }
    assert is_valid(schema, {"days": 3, "odd": "x", "pct": "y", "old": True, "again": None})
    assert messages(schema, {"days": 20}) == ["days: must be <= 14, got 20"]
    assert not is_valid(schema, {"odd": 1})
    assert not is_valid(schema, {"pct": 1})
    assert not is_valid(schema, {"old": 1})
    assert not is_valid(schema, {"again": 1})


def test_ref_inside_embedded_resource_resolves_against_its_id() -> None:
    schema = {
        "$defs": {
            "B": {"type": "string"},
            "A": {
                "$id": "urn:example:a",
                "$defs": {"B": {"type": "integer"}},
                "properties": {"x": {"$ref": "#/$defs/B"}},
            },
        },
        "$ref": "#/$defs/A",
    }
    for instance in ({"x": 1}, {"x": "s"}):
        assert is_valid(schema, instance) is reference_valid(schema, instance)
    assert is_valid(schema, {"x": 1})


def test_ref_with_siblings_applies_both() -> None:
    schema = {"$defs": {"N": {"type": "integer"}}, "$ref": "#/$defs/N", "minimum": 5}
    assert is_valid(schema, 6)
    assert not is_valid(schema, 4)
    assert not is_valid(schema, "x")


def test_recursive_schema() -> None:
    tree = {
        "type": "object",
        "properties": {"value": {"type": "integer"}, "children": {"items": {"$ref": "#"}}},
        "required": ["value"],
    }
    good = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}
    assert is_valid(tree, good)
    assert messages(tree, {"value": 1, "children": [{"children": [{"value": "x"}]}]}) == [
        "children[0]: missing required property 'value'",
        "children[0].children[0].value: expected integer, got 'x'",
    ]


@pytest.mark.parametrize(
    "ref",
    ["http://example.com/s.json", "other.json#/a", "#anchor", "#/$defs/missing", "#/$defs/0x"],
)
def test_unsupported_or_broken_refs(ref: str) -> None:
    with pytest.raises(SchemaError):
        compile_schema({"$defs": {"x": {}}, "properties": {"a": {"$ref": ref}}})


def test_ref_loop_without_descent_is_schema_error() -> None:
    with pytest.raises(SchemaError):
        compile_schema({"$ref": "#"})
    with pytest.raises(SchemaError):
        compile_schema({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"})


# ----------------------------------------------------------- schema errors


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integr"},
        {"minLength": -1},
        {"minimum": "5"},
        {"pattern": "("},
        {"patternProperties": {"[": {}}},
        {"multipleOf": 0},
        {"required": "a"},
        {"properties": {"a": 5}},
        {"items": [{}]},
        {"anyOf": []},
        {"$dynamicRef": "#x"},
        {"uniqueItems": "yes"},
    ],
)
def test_schema_errors(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        compile_schema(schema)


def test_annotations_and_unknown_keywords_are_ignored() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:x",
        "title": "t",
        "description": "d",
        "default": 1,
        "examples": [1],
        "$comment": "c",
        "readOnly": True,
        "deprecated": True,
        "x-anything": {"type": "string"},
    }
    validate = compile_schema(schema)
    value = {"a": [1]}
    assert validate(value) is value


# -------------------------------------------------------------- unevaluated


def test_unevaluated_properties() -> None:
    schema = {
        "properties": {"a": {}},
        "allOf": [{"properties": {"b": {}}}],
        "anyOf": [{"properties": {"c": {}}, "required": ["c"]}, {"type": "object"}],
        "if": {"properties": {"d": {}}, "required": ["d"]},
        "then": {"properties": {"e": {}}},
        "patternProperties": {"^x": {}},
        "unevaluatedProperties": False,
    }
    assert is_valid(schema, {"a": 1, "b": 1, "c": 1, "x1": 1})
    assert is_valid(schema, {"d": 1, "e": 1})
    assert messages(schema, {"a": 1, "e": 1, "z": 2}) == ["unexpected properties 'e', 'z'"]
    via_ref = {
        "$defs": {"Base": {"properties": {"a": {"type": "integer"}}}},
        "$ref": "#/$defs/Base",
        "properties": {"b": {}},
        "unevaluatedProperties": {"type": "string"},
    }
    assert is_valid(via_ref, {"a": 1, "b": [], "c": "s"})
    assert messages(via_ref, {"c": 1}) == ["c: expected string, got 1"]
    closed = {"additionalProperties": True, "unevaluatedProperties": False}
    assert is_valid(closed, {"q": 1})


def test_unevaluated_items() -> None:
    schema = {
        "prefixItems": [{"type": "string"}],
        "allOf": [{"prefixItems": [{}, {"type": "integer"}]}],
        "contains": {"type": "boolean"},
        "unevaluatedItems": False,
    }
    assert is_valid(schema, ["a", 1, True, False])
    assert messages(schema, ["a", 1, True, None]) == ["unexpected item at index 3"]
    assert is_valid({"items": {}, "unevaluatedItems": False}, [1, 2])
    assert not is_valid({"unevaluatedItems": {"type": "integer"}}, [1, "x"])


# ------------------------------------------------------------------ nesting


@pytest.mark.parametrize("coerce", [False, True])
def test_deep_instance_with_recursive_schema(coerce: bool) -> None:
    deep = nested_lists(10_000)
    defs = {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}
    schema = {"$defs": defs, "$ref": "#/$defs/n"}
    assert messages(schema, deep, coerce=coerce) == ["value is nested too deeply"]
    assert is_valid(schema, nested_lists(20), coerce=coerce)
    wrapped = {"type": "object", "properties": {"tree": {"$ref": "#/$defs/n"}}, "$defs": defs}
    assert messages(wrapped, {"tree": deep}, coerce=coerce) == ["value is nested too deeply"]


@pytest.mark.parametrize("schema", [{}, True, {"title": "anything", "description": "goes"}])
def test_deep_instance_with_accept_all_schema(schema: Any) -> None:
    deep = nested_lists(10_000)
    assert compile_schema(schema)(deep) is deep
    assert compile_schema(schema, coerce=True)(deep) is deep


# ----------------------------------------------------------------- coercion


def test_coerce_scalars() -> None:
    integer = compile_schema({"type": "integer"}, coerce=True)
    assert integer("3") == 3 and type(integer("3")) is int
    assert integer("-2") == -2 and integer("+4") == 4 and integer("0") == 0
    with pytest.raises(ValidationFailed) as info:
        integer("3.5")
    assert str(info.value) == "expected integer, got '3.5'"
    # Only a plain decimal integer literal: no exponent, no fraction (even ".0"), no
    # leading zero ("0123" reads as an identifier), no spaces, ASCII digits.
    for bad in (
        "1e3",
        "1e300",
        "3.0",
        "0123",
        "-01",
        " 7 ",
        "7\n",
        "NaN",
        "inf",
        "1_000",
        "",
        "+",
        "0x10",
        "1e999",
        "٣",
    ):
        with pytest.raises(ValidationFailed):
            integer(bad)
    with pytest.raises(ValidationFailed):
        integer(True)
    with pytest.raises(ValidationFailed):
        integer("9" * (MAX_COERCED_LENGTH + 1))  # too long to be a number someone meant
    assert integer("9" * MAX_COERCED_LENGTH) == int("9" * MAX_COERCED_LENGTH)
    number = compile_schema({"type": "number"}, coerce=True)
    assert number("3.5") == 3.5 and number("-0.25") == -0.25
    assert number("1e3") == 1000.0 and type(number("1e3")) is float
    # What the JSON number would hold: no fraction or exponent is an exact int.
    assert number("4") == 4 and type(number("4")) is int
    assert number("9007199254740993") == 9007199254740993
    for bad in ("nan", "-Infinity", "1e400", "three", ".5", "5.", "05", "1e", " 1", "1e300000"):
        with pytest.raises(ValidationFailed):
            number(bad)
    boolean = compile_schema({"type": "boolean"}, coerce=True)
    assert boolean("true") is True and boolean("false") is False
    for bad in ("True", "FALSE", "yes", "1", " true"):
        with pytest.raises(ValidationFailed):
            boolean(bad)
    with pytest.raises(ValidationFailed):
        boolean(1)


def test_coerce_only_where_strings_are_not_accepted() -> None:
    either = compile_schema({"type": ["integer", "string"]}, coerce=True)
    assert either("3") == "3"
    assert compile_schema({"enum": [1, 2]}, coerce=True)("2") == 2
    assert compile_schema({"enum": [1, "2"]}, coerce=True)("2") == "2"
    assert compile_schema({"const": True}, coerce=True)("true") is True
    assert messages({"enum": [1, 2]}, "5", coerce=True) == ["expected one of [1, 2], got '5'"]
    untyped = compile_schema({"minimum": 5}, coerce=True)
    assert untyped("3") == "3"
    # Coercion feeds the other keywords: "20" becomes 20, which is too big.
    capped = {"properties": {"days": {"type": "integer", "maximum": 14}}}
    assert messages(capped, {"days": "20"}, coerce=True) == ["days: must be <= 14, got 20"]


def test_coercion_surprises_from_the_issue_are_gone() -> None:
    # "1e3" was the integer 1000 and "1e300" a 301-digit integer.
    integer = compile_schema({"type": "integer"}, coerce=True)
    assert messages({"type": "integer"}, "1e3", coerce=True) == ["expected integer, got '1e3'"]
    with pytest.raises(ValidationFailed):
        integer("1e300")
    # "0123" became 123 under a string-or-integer union whose string branch it failed.
    union = {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]}
    with pytest.raises(ValidationFailed):
        compile_schema(union, coerce=True)("0123")
    assert compile_schema(union, coerce=True)("123") == 123  # no branch takes the string
    assert compile_schema(union, coerce=True)("12") == "12"  # a branch takes the string
    # enum [1, 2] turned "2.0" into 2.0: an enum converts to its members' own type.
    assert messages({"enum": [1, 2]}, "2.0", coerce=True) == ["expected one of [1, 2], got '2.0'"]
    assert compile_schema({"enum": [1, 2]}, coerce=True)("2") == 2
    assert compile_schema({"enum": [0.5, 2]}, coerce=True)("0.5") == 0.5
    assert compile_schema({"const": 2.5}, coerce=True)("2.5") == 2.5
    # With a type, the type says which literal is read; the enum then compares in JSON
    # terms (2.0 == 2), and the value stays what the string held.
    typed = compile_schema({"type": "number", "enum": [1, 2]}, coerce=True)
    assert typed("2.0") == 2.0 and typed("2") == 2


def test_coerce_nested_and_not_mutating() -> None:
    schema = {
        "type": "object",
        "properties": {
            "days": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "object", "properties": {"fast": {"type": "boolean"}}},
            "name": {"type": "string"},
        },
    }
    validate = compile_schema(schema, coerce=True)
    args = {"days": ["1", 2, "3"], "opts": {"fast": "true"}, "name": "7"}
    before = copy.deepcopy(args)
    result = validate(args)
    assert result == {"days": [1, 2, 3], "opts": {"fast": True}, "name": "7"}
    assert args == before
    unchanged = {"days": [1], "opts": {"fast": False}, "name": "x"}
    assert validate(unchanged) is unchanged


def test_coerce_with_any_of_prefers_original() -> None:
    schema = {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^a"}]}
    validate = compile_schema(schema, coerce=True)
    assert validate("abc") == "abc"
    assert validate("12") == 12
    optional = compile_schema({"anyOf": [{"type": "integer"}, {"type": "null"}]}, coerce=True)
    assert optional("5") == 5 and optional(None) is None
    with pytest.raises(ValidationFailed):
        optional("five")
    literal = compile_schema({"anyOf": [{"type": "string"}, {"type": "integer"}]}, coerce=True)
    assert literal("5") == "5"


def test_coercion_never_validates_by_keyword_order() -> None:
    # The minimum is judged before allOf coerces; the coerced 3 must still be rejected.
    schema = {"allOf": [{"minimum": 5}, {"type": "integer"}]}
    with pytest.raises(ValidationFailed):
        compile_schema(schema, coerce=True)("3")
    assert compile_schema(schema, coerce=True)("7") == 7
    nested = {
        "allOf": [
            {"properties": {"a": {"minimum": 5}}},
            {"properties": {"a": {"type": "integer"}}},
        ]
    }
    with pytest.raises(ValidationFailed):
        compile_schema(nested, coerce=True)({"a": "3"})
    one = {"oneOf": [{"type": "integer"}, {"not": {"type": "string"}}]}
    with pytest.raises(ValidationFailed):
        compile_schema(one, coerce=True)("3")


# ------------------------------------------------------ differential testing

TRICKY: list[tuple[Any, Any, bool]] = [
    ({"type": "integer"}, 1.0, True),
    ({"type": "integer"}, True, False),
    ({"type": "number"}, False, False),
    ({"enum": [1, 2]}, True, False),
    ({"enum": [True]}, 1, False),
    ({"enum": [False]}, 0, False),
    ({"const": [1, {"a": 0}]}, [1.0, {"a": 0.0}], True),
    ({"const": [1, {"a": 0}]}, [True, {"a": False}], False),
    ({"uniqueItems": True}, [1, 1.0], False),
    ({"uniqueItems": True}, [0, False], True),
    ({"uniqueItems": True}, [{"a": [1]}, {"a": [1.0]}], False),
    ({"maxLength": 2}, "😀😀", True),
    ({"minLength": 3}, "😀😀", False),
    ({"pattern": "ab"}, "xxabxx", True),
    ({"pattern": "^ab$"}, "xxab", False),
    ({"multipleOf": 0.5}, 2.5, True),
    ({"contains": {"type": "integer"}, "minContains": 0}, [], True),
    ({"prefixItems": [{"type": "integer"}], "items": False}, [1, 2], False),
    ({"propertyNames": {"maxLength": 2}}, {"abc": 1}, False),
    (
        {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"},
        [[], [[]]],
        True,
    ),
    (
        {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"},
        [[], [[1]]],
        False,
    ),
    ({"items": {"$ref": "#"}, "maxItems": 1}, [[[]]], True),
    ({"items": {"$ref": "#"}, "maxItems": 1}, [[[], []]], False),
    (
        {
            "properties": {"a": {}},
            "oneOf": [{"properties": {"b": {}}, "required": ["b"]}, {"required": ["c"]}],
            "unevaluatedProperties": False,
        },
        {"a": 1, "b": 2},
        True,
    ),
    (
        {
            "properties": {"a": {}},
            "oneOf": [{"properties": {"b": {}}, "required": ["b"]}, {"required": ["c"]}],
            "unevaluatedProperties": False,
        },
        {"a": 1, "c": 2},
        False,
    ),
    ({"not": {"not": {"type": "null"}}}, None, True),
]


@pytest.mark.parametrize(("schema", "instance", "expected"), TRICKY)
def test_tricky_cases_against_jsonschema(schema: Any, instance: Any, expected: bool) -> None:
    assert reference_valid(schema, instance) is expected
    assert is_valid(schema, instance) is expected


KEYS = ["a", "b", "c", "ab", "x1"]
TYPES = ["null", "boolean", "integer", "number", "string", "array", "object"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-20, 20),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.5, 1.0, -2.0, 2.5, 1e300]),
    st.text(alphabet="ab1 😀", max_size=4),
    st.sampled_from(["3", "-2", " 7 ", "3.5", "1e3", "true", "False", "abc", "nan", "0123", "2.0"]),
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS), children, max_size=4)
    ),
    max_leaves=12,
)
small_numbers = st.integers(-5, 5) | st.sampled_from([0.5, -1.5, 2.0, 3.25])
counts = st.integers(0, 3)


def keyword_strategies(sub: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    return {
        "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3),
        "enum": st.lists(json_values, min_size=1, max_size=3),
        "const": json_values,
        "minimum": small_numbers,
        "maximum": small_numbers,
        "exclusiveMinimum": small_numbers,
        "exclusiveMaximum": small_numbers,
        "multipleOf": st.sampled_from([1, 2, 3, 0.5, 0.25]),
        "minLength": counts,
        "maxLength": counts,
        "pattern": st.sampled_from(["a", "^a", "b$", "[0-9]", "^.{2}$", "😀"]),
        "format": st.sampled_from(["email", "date-time", "ipv4", "x-unknown"]),
        "items": sub,
        "prefixItems": st.lists(sub, min_size=1, max_size=2),
        "contains": sub,
        "minContains": counts,
        "maxContains": counts,
        "minItems": counts,
        "maxItems": counts,
        "uniqueItems": st.booleans(),
        "properties": st.dictionaries(st.sampled_from(KEYS), sub, max_size=3),
        "patternProperties": st.dictionaries(st.sampled_from(["^a", "b", "1$"]), sub, max_size=2),
        "additionalProperties": sub,
        "propertyNames": sub,
        "required": st.lists(st.sampled_from(KEYS), max_size=3, unique=True),
        "dependentRequired": st.dictionaries(
            st.sampled_from(KEYS),
            st.lists(st.sampled_from(KEYS), max_size=2, unique=True),
            max_size=2,
        ),
        "dependentSchemas": st.dictionaries(st.sampled_from(KEYS), sub, max_size=2),
        "minProperties": counts,
        "maxProperties": counts,
        "allOf": st.lists(sub, min_size=1, max_size=3),
        "anyOf": st.lists(sub, min_size=1, max_size=3),
        "oneOf": st.lists(sub, min_size=1, max_size=3),
        "not": sub,
        "if": sub,
        "then": sub,
        "else": sub,
        "unevaluatedProperties": sub,
        "unevaluatedItems": sub,
    }


def schema_objects(sub: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    options = keyword_strategies(sub)
    return st.lists(st.sampled_from(sorted(options)), min_size=1, max_size=3, unique=True).flatmap(
        lambda names: st.fixed_dictionaries({name: options[name] for name in names})
    )


leaf_schemas = st.sampled_from([True, False, {}]) | schema_objects(st.just({}) | st.booleans())
schemas = st.recursive(leaf_schemas, schema_objects, max_leaves=5)

# Schemas that also refer to themselves ("#") and to a definition, recursively.
ref_leaves = leaf_schemas | st.sampled_from([{"$ref": "#"}, {"$ref": "#/$defs/d"}])
ref_inner = st.recursive(ref_leaves, schema_objects, max_leaves=5)
ref_schemas = st.builds(
    lambda root, d: (
        {**root, "$defs": {"d": d}}
        if isinstance(root, dict)
        else {"allOf": [root], "$defs": {"d": d}}
    ),
    ref_inner,
    ref_inner,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, instance=json_values)
def test_differential_against_jsonschema(schema: Any, instance: Any) -> None:
    assert is_valid(schema, instance) == reference_valid(schema, instance)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=ref_schemas, instance=json_values)
def test_differential_with_refs(schema: Any, instance: Any) -> None:
    try:
        validate = compile_schema(schema)
    except SchemaError as exc:
        # A $ref loop that never reaches a part of the value (undefined behaviour in
        # the specification); jsonschema may or may not recurse forever on it.
        assert "loop" in str(exc)
        return
    try:
        expected = reference_valid(schema, instance)
    except RecursionError:
        return
    try:
        validate(instance)
        got = True
    except ValidationFailed:
        got = False
    assert got == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, instance=json_values)
def test_coercion_properties(schema: Any, instance: Any) -> None:
    before = copy.deepcopy(instance)
    plain_valid = is_valid(schema, instance)
    try:
        result = compile_schema(schema, coerce=True)(instance)
    except ValidationFailed:
        assert not plain_valid
        return
    assert instance == before
    if plain_valid:
        # A value that is already valid is handed back untouched, except that an
        # integral float where the schema wants an integer (1.0 is a JSON integer)
        # becomes an int, so a handler typed `int` gets one.
        assert result is instance or _ints_for_integral_floats(instance, result)
    else:
        # Whatever coercion produced must be valid without coercion, for both validators.
        assert is_valid(schema, result)
        assert reference_valid(schema, result)


def _ints_for_integral_floats(instance: Any, result: Any) -> bool:
    """``result`` is ``instance`` with some integral floats made ints, nothing else."""
    if type(instance) is float and type(result) is int:
        return instance.is_integer() and result == instance
    if isinstance(instance, list) and isinstance(result, list) and len(instance) == len(result):
        return all(
            b is a or _ints_for_integral_floats(a, b) for a, b in zip(instance, result, strict=True)
        )
    if isinstance(instance, dict) and isinstance(result, dict) and instance.keys() == result.keys():
        return all(
            result[k] is instance[k] or _ints_for_integral_floats(instance[k], result[k])
            for k in instance
        )
    return False


def test_coercion_hands_an_integral_float_to_an_integer_as_an_int() -> None:
    """The one change coercion makes to a valid value (found by the property above
    with ``{"type": "integer"}`` and ``0.0``): it is an ``int`` for the handler."""
    for schema in ({"type": "integer"}, {"type": "integer", "additionalProperties": {}}):
        result = compile_schema(schema, coerce=True)(0.0)
        assert result == 0 and type(result) is int
    nested = compile_schema({"type": "array", "items": {"type": "integer"}}, coerce=True)
    assert nested([1.0, 2]) == [1, 2] and all(type(x) is int for x in nested([1.0, 2]))
    assert compile_schema({"type": "number"}, coerce=True)(1.0) == 1.0


def test_non_finite_floats_are_no_json_numbers() -> None:
    # What Python's JSON decoder makes of NaN, Infinity and 1e400: no JSON value.
    for value in (float("nan"), float("inf"), float("-inf")):
        for kind in ("number", "integer", ["number", "null"]):
            assert messages({"type": kind}, value) == [f"expected a finite number, got {value!r}"]
        assert messages({"minimum": 0}, value) == [f"expected a finite number, got {value!r}"]
        assert is_valid({"type": "string"}, "nan") and not is_valid({"type": "number"}, value)
    assert compile_schema({"type": "number"})(1.5) == 1.5
