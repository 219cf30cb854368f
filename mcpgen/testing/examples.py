"""Example values of a schema, the one generator behind ``mcpgen docs`` and ``mcpgen test``:
the example request of each tool on the page, and the example and boundary cases the
first phase of ``mcpgen test`` calls (and the base its negative cases break).

:func:`example_value` is deterministic (same schema, same value, whatever
``PYTHONHASHSEED``) and returns only values the runtime's validator (the one a
generated server runs) accepts. It tries, in order:

1. the readable pick (:mod:`.readable`): what a reader would write and what the schema
   suggests (``examples``, ``default``, ``enum``, bounds, ``"example"``, a sample per
   ``format``, a pattern's simplest match), optional properties shown with their
   ``default``;
2. when the validator refuses that, the simplest value Hypothesis finds with the
   strategy ``mcpgen test`` draws from (:mod:`.strategies`, shrunk: ``0``, ``""``, the
   lower bound, the required keys only).

When neither gives a valid value, :class:`ExampleError` says why instead of a wrong one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hypothesis import find
from hypothesis.errors import HypothesisException

from mcpgen_runtime.schema.validator import SchemaError, compile_schema

from .readable import NO_VALUE, readable_value
from .strategies import FIND_SETTINGS, canonical, integer_bounds, passes, valid_values

__all__ = [
    "NO_VALUE",
    "ExampleError",
    "boundary_arguments",
    "example_arguments",
    "example_value",
    "part_example",
    "resolve_defs_ref",
]

_UNICODE_SAMPLE = "é✓😀"
# the longest string and array a boundary case writes out at its maxLength / maxItems
MAX_FULL_TEXT = 10_000
MAX_FULL_ITEMS = 1_000


class ExampleError(ValueError):
    """No valid value of the schema could be found, or the schema cannot be compiled
    (the message says which)."""


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Deterministic valid arguments for a tool's ``inputSchema``.

    Raises ExampleError when none can be found (an unsatisfiable schema) or the runtime
    cannot compile the schema."""
    value = example_value(schema)
    if not isinstance(value, dict):
        raise ExampleError("the schema does not describe an object")
    return value


def example_value(schema: Mapping[str, Any] | bool) -> Any:
    """A deterministic value ``schema`` accepts (see the module docstring)."""
    try:
        validate = compile_schema(schema)
    except (SchemaError, RecursionError) as exc:
        raise ExampleError(f"the schema cannot be compiled: {exc}") from None
    value, failure = readable_value(schema, validate)
    if value is not NO_VALUE:
        return value
    try:
        return simplest(schema)
    except ExampleError:  # the readable pick's fault says best what is wrong
        raise ExampleError(f"no generated value passes the schema: {failure}") from None


def simplest(schema: Mapping[str, Any] | bool) -> Any:
    """The shrunk-minimal value Hypothesis finds for ``schema``."""
    try:
        return find(valid_values(schema), lambda _: True, settings=FIND_SETTINGS)
    except HypothesisException as exc:
        raise ExampleError(
            f"no value matching the schema was found ({type(exc).__name__})"
        ) from None


# ------------------------------------------------------------------ boundary cases


def boundary_arguments(schema: Mapping[str, Any], limit: int) -> list[dict[str, Any]]:
    """Valid arguments at the edges, each one place away from the example: every top
    property at its bounds (minimum/maximum, min/max length, empty and full arrays,
    each enum member, null where allowed, a non-ASCII string), optional properties
    present one at a time, all at once and all absent (the example shows those with a
    ``default``). At most ``limit``, deduplicated, in a fixed order; each accepted by
    the runtime's validator."""
    validate = compile_schema(schema)
    base = example_arguments(schema)
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    # the example shows optional properties that have a default: also call without them
    cases: list[dict[str, Any]] = [base, {k: v for k, v in base.items() if k in required}]
    every_optional = dict(base)
    for name, sub in properties.items():
        resolved = resolve_defs_ref(sub, schema)
        if name not in base:
            present = part_example(resolved, schema)
            if present is not NO_VALUE:
                cases.append({**base, name: present})
                every_optional[name] = present
        for value in edge_values(resolved, schema):
            cases.append({**base, name: value})
    cases.append(every_optional)
    seen: set[str] = set()
    kept: list[dict[str, Any]] = []
    for case in cases:
        key = canonical(case)
        if key not in seen and passes(validate, case):
            seen.add(key)
            kept.append(case)
        if len(kept) >= limit:
            break
    return kept


def resolve_defs_ref(sub: Any, root: Mapping[str, Any]) -> Any:
    """``sub``'s target when it is a ``#/$defs/…`` reference into ``root``, else ``sub``."""
    if (
        isinstance(sub, Mapping)
        and isinstance(sub.get("$ref"), str)
        and sub["$ref"].startswith("#/$defs/")
    ):
        return root.get("$defs", {}).get(sub["$ref"][len("#/$defs/") :], sub)
    return sub


def part_example(sub: Any, root: Mapping[str, Any], pick: Any = None) -> Any:
    """The example of a sub-schema of ``root`` (its ``$defs`` attached), or NO_VALUE;
    ``pick`` (default :func:`example_value`) may be :func:`simplest` instead."""
    local = dict(sub) if isinstance(sub, Mapping) else sub
    if isinstance(local, dict) and "$defs" in root:
        local.setdefault("$defs", root["$defs"])
    try:
        return (pick or example_value)(local)
    except (ExampleError, ValueError, RecursionError):
        return NO_VALUE


def edge_values(schema: Any, root: Mapping[str, Any]) -> list[Any]:
    """Values at the edges of one property's schema (unchecked: the caller filters);
    ``root`` holds the ``$defs`` its references point into."""
    if not isinstance(schema, Mapping):
        return []
    values: list[Any] = []
    if "const" in schema:
        values.append(schema["const"])
    if isinstance(schema.get("enum"), list):
        values.extend(schema["enum"])
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        values.extend(edge_values(branch, root))
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else (kinds or [])
    if "null" in kinds:
        values.append(None)
    if "boolean" in kinds:
        values.extend([False, True])
    if "integer" in kinds or "number" in kinds:
        values.extend(_number_edges(schema, integer="number" not in kinds))
    if "string" in kinds and "pattern" not in schema and "format" not in schema:
        values.extend(_string_edges(schema))
    if "array" in kinds:
        values.extend(_array_edges(schema, root))
    return values


def _number_edges(schema: Mapping[str, Any], *, integer: bool) -> list[Any]:
    lo, hi = integer_bounds(schema)
    values: list[Any] = [v for v in (lo, hi) if v is not None]
    if lo is None and hi is None:
        values.extend([0, -1, 1_000_000])
    if not integer:
        low, high = schema.get("minimum"), schema.get("maximum")
        values.extend(v for v in (low, high) if isinstance(v, float))
        for key, direction in (("exclusiveMinimum", math.inf), ("exclusiveMaximum", -math.inf)):
            if isinstance(schema.get(key), (int, float)):
                values.append(math.nextafter(float(schema[key]), direction))
    return values


def _string_edges(schema: Mapping[str, Any]) -> list[str]:
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    values = ["x" * low]
    if isinstance(high, int) and high <= MAX_FULL_TEXT:
        values.append("x" * high)
    sample = (_UNICODE_SAMPLE * (1 + low // len(_UNICODE_SAMPLE)))[: max(low, len(_UNICODE_SAMPLE))]
    if isinstance(high, int):
        sample = sample[:high]
    values.append(sample)
    values.append(" " * max(low, 1))
    return values


def _array_edges(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[list[Any]]:
    low = int(schema.get("minItems", 0))
    high = schema.get("maxItems")
    items = schema.get("items")
    values: list[list[Any]] = [[]] if low == 0 else []
    if not isinstance(items, Mapping) or "prefixItems" in schema:
        return values
    item = part_example(items, root)
    if item is NO_VALUE:
        return values
    if low:
        values.append([item] * low)
    if isinstance(high, int) and 0 < high <= MAX_FULL_ITEMS and not schema.get("uniqueItems"):
        values.append([item] * high)
    return values
