"""The JSON Schema 2020-12 vocabulary, for checking keywords and walking schemas.

Shared by the front end (``spec/``: checking and bundling a spec's schemas) and the
renderer (``render/``: mapping them to Python types), which import nothing of each
other; so is the depth limit of that mapping, which the front end enforces.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote

__all__ = [
    "GENERATOR_DIRECTIVES",
    "GENERATOR_DIRECTIVE_PREFIXES",
    "JSON_TYPES",
    "KNOWN_KEYWORDS",
    "LOCAL_REF",
    "MAX_MODEL_SCHEMA_DEPTH",
    "SCHEMA_LIST_KEYWORDS",
    "SCHEMA_MAP_KEYWORDS",
    "SCHEMA_VALUE_KEYWORDS",
    "JsonPath",
    "child_schemas",
    "is_generator_directive",
    "json_depth",
    "local_ref_names",
    "walk_schemas",
]

JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")

# Keywords whose value is one subschema / a list of them / a map of them.
SCHEMA_VALUE_KEYWORDS = frozenset(
    {
        "additionalProperties", "contains", "contentSchema", "else", "if", "items", "not",
        "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties",
    }
)  # fmt: skip
SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_MAP_KEYWORDS = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)

KNOWN_KEYWORDS = (
    SCHEMA_VALUE_KEYWORDS
    | SCHEMA_LIST_KEYWORDS
    | SCHEMA_MAP_KEYWORDS
    | frozenset(
        {
            # core
            "$anchor", "$comment", "$dynamicAnchor", "$dynamicRef", "$id", "$ref", "$schema",
            "$vocabulary",
            # validation
            "const", "dependentRequired", "enum", "exclusiveMaximum", "exclusiveMinimum",
            "maxContains", "maxItems", "maxLength", "maxProperties", "maximum", "minContains",
            "minItems", "minLength", "minProperties", "minimum", "multipleOf", "pattern",
            "required", "type", "uniqueItems",
            # meta-data, format, content
            "default", "deprecated", "description", "examples", "readOnly", "title", "writeOnly",
            "format", "contentEncoding", "contentMediaType",
            # draft-07 spellings still met in the wild
            "dependencies",
        }
    )
)  # fmt: skip

# Schema keys that steer datamodel-code-generator rather than describe data. The ones
# here name a module, type or class for models.py to import (x-python-import,
# x-python-type, customTypePath, customBasePath), put an expression into it
# (default_factory), or are the generator's own internal markers (x-python-*,
# x-datamodel-code-generator-*): a spec, often written by another team or imported
# from a server, must not choose what the generated package imports or runs. Other
# extension keys the generator reads (x-enum-varnames, x-enumNames,
# x-enum-descriptions, x-enum-field-as-literal, x-is-base-class, x-is-classvar, ...)
# only name or shape classes it writes itself (member names are sanitized) and stay.
GENERATOR_DIRECTIVES = frozenset({"customTypePath", "customBasePath", "default_factory"})
GENERATOR_DIRECTIVE_PREFIXES = ("x-python-", "x-datamodel-code-generator-")


def is_generator_directive(key: str) -> bool:
    """Is ``key`` a code-generator directive a spec may not use (see above)?"""
    return key in GENERATOR_DIRECTIVES or key.startswith(GENERATOR_DIRECTIVE_PREFIXES)


JsonPath = tuple[str | int, ...]


def child_schemas(schema: Any, path: JsonPath) -> Iterator[tuple[Any, JsonPath]]:
    """The subschemas directly inside ``schema`` (one level), each with its path."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in SCHEMA_VALUE_KEYWORDS:
            yield value, path + (key,)
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            for index, item in enumerate(value):
                yield item, path + (key, index)
        elif key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            for name, item in value.items():
                yield item, path + (key, name)


def walk_schemas(schema: Any, path: JsonPath) -> Iterator[tuple[Any, JsonPath]]:
    """Every subschema of ``schema`` (itself included) with its path."""
    yield schema, path
    for child, where in child_schemas(schema, path):
        yield from walk_schemas(child, where)


LOCAL_REF = "#/$defs/"


def local_ref_names(schema: Any) -> set[str]:
    """The definition each ``#/$defs/…`` reference in ``schema`` points into (the first
    segment of its pointer, percent- and ``~``-decoded)."""
    names: set[str] = set()
    for node, _ in walk_schemas(schema, ()):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if isinstance(ref, str) and ref.startswith(LOCAL_REF):
            names.add(
                unquote(ref[len(LOCAL_REF) :].split("/", 1)[0])
                .replace("~1", "/")
                .replace("~0", "~")
            )
    return names


MAX_MODEL_SCHEMA_DEPTH = 98
"""Deepest nesting (JSON objects and arrays; the schema itself is level 1) of a type or
an output schema that gets Python types. The mapping recurses once per level, and black
formats the nested annotations it writes; the loader reports a deeper schema with its
position rather than a build failing on Python's recursion limit."""


def json_depth(value: Any) -> int:
    """Levels of nested objects and arrays in ``value`` (a scalar is 0, ``{}`` is 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest
