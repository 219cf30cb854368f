"""Arguments that break a tool's input schema in exactly one place.

Each case starts from the tool's example arguments and changes one thing: a required key
left out, a value of a wrong JSON type, a value one step past a bound (``maximum`` + 1,
``maxLength`` + 1, ``minItems`` - 1, a value outside the ``enum``, a string the
``pattern`` refuses), an unknown key where ``additionalProperties`` is false, an array
item that breaks ``items`` (``'tags'[0] of type integer``), and the same inside nested
objects and inside the objects an array holds (``'rows'[0].'qty' above its maximum``). A case is
kept only if the server's own validator refuses it *after coercion* (``"3"`` for an
integer is coerced, so it is no invalid argument for an mcpgen server).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpgen_runtime.schema.validator import compile_schema

from .examples import NO_VALUE, example_arguments, part_example, resolve_defs_ref
from .strategies import canonical, integer_bounds, passes

__all__ = ["InvalidCase", "invalid_arguments"]

_WRONG_TYPES: tuple[tuple[str, Any], ...] = (
    ("string", "not-a-valid-value"),
    ("integer", 7),
    ("boolean", True),
    ("array", []),
    ("object", {}),
    ("null", None),
)
_UNKNOWN_KEY = "mcpgen_unexpected_argument"


@dataclass(frozen=True)
class InvalidCase:
    arguments: dict[str, Any]
    breaks: str  # what is wrong, in words: "'days' above its maximum"


def invalid_arguments(schema: Mapping[str, Any], limit: int) -> list[InvalidCase]:
    """The one-place-wrong cases of ``schema`` (an object schema), at most ``limit``;
    nested objects are broken too (``'booking'.'seats' above its maximum``)."""
    refuses = _refuser(schema)
    base = example_arguments(schema)
    cases = [InvalidCase(value, why) for value, why in _object_cases(schema, base, schema, 0)]
    seen: set[str] = set()
    kept: list[InvalidCase] = []
    for case in cases:
        key = canonical(case.arguments)
        if key not in seen and case.breaks not in seen and refuses(case.arguments):
            seen.update((key, case.breaks))  # one case per kind of break
            kept.append(case)
        if len(kept) >= limit:
            break
    return kept


_MAX_NESTING = 3


def _object_cases(
    schema: Mapping[str, Any], value: dict[str, Any], root: Mapping[str, Any], depth: int
) -> list[tuple[dict[str, Any], str]]:
    """``value`` (valid for the object ``schema``) broken in one place, with why."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    cases: list[tuple[dict[str, Any], str]] = []
    for name in schema.get("required", []):
        if name in value:
            cases.append(
                ({k: v for k, v in value.items() if k != name}, f"required {name!r} left out")
            )
    for name, sub in properties.items():
        resolved = resolve_defs_ref(sub, root)
        for wrong, why in _wrong_values(resolved, root):
            cases.append(({**value, name: wrong}, f"{name!r} {why}"))
        if depth < _MAX_NESTING:
            current = value[name] if name in value else part_example(resolved, root)
            cases.extend(
                ({**value, name: broken}, f"{name!r}{why}")
                for broken, why in _inner_cases(resolved, current, root, depth + 1)
            )
    if schema.get("additionalProperties") is False and _UNKNOWN_KEY not in properties:
        cases.append(({**value, _UNKNOWN_KEY: 1}, f"unknown argument {_UNKNOWN_KEY!r}"))
    return cases


def _inner_cases(
    schema: Any, value: Any, root: Mapping[str, Any], depth: int
) -> list[tuple[Any, str]]:
    """``value`` (valid for ``schema``) broken one level down: an object's property, or
    an array's first item (a wrong item itself, or, for an array of objects, its first
    object broken in one place). ``why`` starts with how to reach the place."""
    if not isinstance(schema, Mapping):
        return []
    if isinstance(value, dict) and "properties" in schema:
        return [(broken, f".{why}") for broken, why in _object_cases(schema, value, root, depth)]
    items = resolve_defs_ref(schema.get("items"), root)
    if not isinstance(items, Mapping) or "prefixItems" in schema:
        return []
    first = value[0] if isinstance(value, list) and value else part_example(items, root)
    if first is NO_VALUE:
        return []
    rest = value[1:] if isinstance(value, list) else []
    cases = [([wrong, *rest], f"[0] {why}") for wrong, why in _wrong_values(items, root)]
    if isinstance(first, dict) and "properties" in items:
        cases.extend(
            ([broken, *rest], f"[0].{why}")
            for broken, why in _object_cases(items, first, root, depth)
        )
    return cases


def _refuser(schema: Mapping[str, Any]) -> Any:
    coercing = compile_schema(schema, coerce=True)
    return lambda arguments: not passes(coercing, arguments)


def _wrong_values(schema: Any, root: Mapping[str, Any]) -> list[tuple[Any, str]]:
    """Candidate values that break ``schema`` (the caller keeps those that do)."""
    if not isinstance(schema, Mapping):
        return []
    kinds = schema.get("type")
    kinds = {kinds} if isinstance(kinds, str) else set(kinds or [])
    out: list[tuple[Any, str]] = []
    if kinds:
        allowed = kinds | ({"integer"} if "number" in kinds else set())
        for kind, value in _WRONG_TYPES:
            if kind not in allowed:
                out.append((value, f"of type {kind} (expected {' or '.join(sorted(kinds))})"))
                break
    out.extend(_past_bounds(schema, root))
    if isinstance(schema.get("enum"), list):
        out.append(("mcpgen-not-a-member", "outside its enum"))
        out.append((123456789, "outside its enum"))
    if "const" in schema:
        out.append(("mcpgen-not-the-const", "not its const"))
    if isinstance(schema.get("pattern"), str):
        out.extend((text, "not matching its pattern") for text in ("", "!", " ", "~~~~", "0"))
    if isinstance(schema.get("format"), str):
        out.append(("not a " + schema["format"], f"not a valid {schema['format']}"))
    return out


def _past_bounds(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[tuple[Any, str]]:
    out: list[tuple[Any, str]] = []
    lo, hi = integer_bounds(schema)
    if hi is not None:
        out.append((hi + 1, "above its maximum"))
    if lo is not None:
        out.append((lo - 1, "below its minimum"))
    if isinstance(schema.get("maxLength"), int):
        out.append(("x" * (schema["maxLength"] + 1), "longer than its maxLength"))
    if isinstance(schema.get("minLength"), int) and schema["minLength"] > 0:
        out.append(("x" * (schema["minLength"] - 1), "shorter than its minLength"))
    if isinstance(schema.get("maxItems"), int) and isinstance(schema.get("items"), Mapping):
        item = part_example(schema["items"], root)
        if item is not NO_VALUE:
            out.append(([item] * (schema["maxItems"] + 1), "with more items than maxItems"))
    if isinstance(schema.get("minItems"), int) and schema["minItems"] > 0:
        out.append(([], "with fewer items than minItems"))
    return out
