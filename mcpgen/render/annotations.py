"""Python type annotations for argument schemas.

Arguments reach handlers as validated JSON values (dicts, lists, str, int, …),
not as models, so their annotations describe JSON: ``{"type": "integer"}`` is
``int``, an enum of strings is a ``Literal``, an object is ``dict[str, Any]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .escape import py_literal

__all__ = ["RETURN_ANNOTATIONS", "annotation"]

_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "dict[str, Any]",
    "array": "list[Any]",
}

RETURN_ANNOTATIONS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "object": "dict[str, Any]",
    "array": "list[Any]",
    "content": "list[dict[str, Any]]",
    "result": "dict[str, Any]",  # a CallToolResult: content, structuredContent, _meta
}


def annotation(schema: Any, defs: Mapping[str, Any], _seen: frozenset[str] = frozenset()) -> str:
    """The annotation for values valid under ``schema`` (``Any`` when unsure)."""
    if schema is True or schema == {}:
        return "Any"
    if not isinstance(schema, dict):
        return "Any"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in _seen or name not in defs:
            return "Any"
        return annotation(defs[name], defs, _seen | {name})
    if "const" in schema:
        return _literal([schema["const"]])
    if "enum" in schema and isinstance(schema["enum"], list):
        return _literal(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return _union([annotation(branch, defs, _seen) for branch in schema[key]])
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return _union([_one(str(kind), schema, defs, _seen) for kind in kinds])
    if isinstance(kinds, str):
        return _one(kinds, schema, defs, _seen)
    return "Any"


def _one(kind: str, schema: Mapping[str, Any], defs: Mapping[str, Any], seen: frozenset[str]) -> str:
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"list[{annotation(schema['items'], defs, seen)}]"
    return _SCALARS.get(kind, "Any")


def _literal(values: list[Any]) -> str:
    if not values or not all(v is None or isinstance(v, (str, int, bool)) for v in values):
        return "Any"
    # mypy refuses an integer beyond 64 bits in a Literal: such values are just `int`
    big = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2**63]
    members = [py_literal(v) for v in values if v is not None and v not in big]
    parts = [f"Literal[{', '.join(members)}]"] if members else []
    parts += ["int"] if big else []
    parts += ["None"] if None in values else []
    return " | ".join(parts) if parts else "None"


def _union(parts: list[str]) -> str:
    if "Any" in parts:
        return "Any"
    unique: list[str] = []
    for part in parts:
        if part not in unique:
            unique.append(part)
    if "None" in unique and len(unique) > 1:
        unique.remove("None")
        unique.append("None")
    return " | ".join(unique)
