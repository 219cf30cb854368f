"""Deterministic example arguments for a tool's ``inputSchema``.

``example_arguments(schema)`` builds one object the schema accepts: every required
property, plus each optional property that declares a ``default`` (shown with that
default), each value chosen from what the schema says (``const``, ``enum``,
``default``, ``examples``, bounds and ``multipleOf``, lengths, ``format``,
``pattern``, ``$ref``/``$defs``, ``anyOf``/``oneOf``/``allOf``, ``prefixItems``,
``uniqueItems``). The result is checked with the runtime's own validator (the one the
generated server runs), so an example shown is one the server accepts; when no value
the generator can think of passes, :class:`NoExample` says why instead of a wrong one.

Same schema, same example: nothing here is random. ``mcpgen test`` has its own
generator with the same signature; either can stand in for the other.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any, Final

from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

from .regex_example import pattern_example

__all__ = ["NoExample", "example_arguments", "example_value"]

# One valid value per format the runtime asserts (any other format is an annotation).
FORMAT_EXAMPLES: Final[Mapping[str, str]] = {
    "date": "2024-01-31",
    "date-time": "2024-01-31T09:30:00Z",
    "time": "09:30:00Z",
    "duration": "P3D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri": "https://example.com/",
    "iri-reference": "https://example.com/",
    "uri-template": "https://example.com/{id}",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "json-pointer": "/a/0",
    "relative-json-pointer": "0/a",
    "regex": "^[a-z]+$",
}
_TYPE_ORDER: Final = ("object", "string", "integer", "number", "boolean", "array", "null")
_MAX_DEPTH: Final = 24  # a deeper (or endlessly recursive) schema gets its minimal values


class NoExample(ValueError):
    """No value the generator could build passes the schema (the message says why)."""


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments valid against ``schema`` (a tool's ``inputSchema``), deterministic.

    Raises NoExample when the schema accepts no object the generator can build (an
    unsatisfiable schema, a pattern it cannot invert) or is not a schema the runtime
    can compile."""
    value = example_value(schema)
    if not isinstance(value, dict):
        raise NoExample("the schema does not describe an object")
    return value


def example_value(schema: Mapping[str, Any] | bool) -> Any:
    """Any JSON value valid against ``schema`` (see :func:`example_arguments`)."""
    try:
        check = compile_schema(schema)
    except (SchemaError, RecursionError) as exc:
        raise NoExample(f"the schema cannot be compiled: {exc}") from None
    root = schema if isinstance(schema, Mapping) else {}
    failure = ""
    # First each value's first candidate, checked once at the root (most schemas need
    # no more); then with every candidate checked against its own sub-schema. Optional
    # properties with a default are shown when they can be; a default can drag in
    # another keyword (dependentRequired, if/then), so last without them.
    for careful, with_defaults in ((False, True), (True, True), (True, False)):
        value = _Builder(root, with_defaults, careful).value(schema, 0, ())
        try:
            check(value)
        except ValidationFailed as exc:
            failure = failure or exc.describe(1)
            continue
        return value
    raise NoExample(f"no generated value passes the schema: {failure}")


class _Builder:
    """Walks a schema once, choosing each value; sub-values are checked against their
    own sub-schema (with the root's ``$defs`` in reach) so a wrong first choice can
    fall back to the next candidate."""

    def __init__(self, root: Mapping[str, Any], with_defaults: bool, careful: bool) -> None:
        self.root = root
        self.with_defaults = with_defaults
        self.careful = careful  # False: take every first candidate unchecked
        # id(schema) -> (schema, its validator): holding the schema keeps its id unique
        self.checks: dict[int, tuple[Any, Any]] = {}

    def valid(self, schema: Mapping[str, Any] | bool, value: Any) -> bool:
        if not self.careful:
            return True
        key = id(schema)
        check = self.checks[key][1] if key in self.checks else None
        if check is None:
            wrapped: Any = schema
            if isinstance(schema, Mapping) and schema is not self.root:
                # keep the root's definitions in reach of the sub-schema's $refs
                wrapped = {"allOf": [schema], "$defs": self.root.get("$defs", {}),
                           "definitions": self.root.get("definitions", {})}
                if _has_root_ref(schema):
                    wrapped = {"allOf": [schema]}  # checked whole, at the end, instead
            try:
                check = compile_schema(wrapped)
            except (SchemaError, RecursionError):
                check = _accept_all
            self.checks[key] = (schema, check)
        try:
            check(value)
        except ValidationFailed:
            return False
        except RecursionError:
            return False
        return True

    def value(self, schema: Mapping[str, Any] | bool, depth: int, refs: tuple[str, ...]) -> Any:
        if schema is True or schema is False or not isinstance(schema, Mapping):
            return "example"
        first: Any = None
        for index, candidate in enumerate(self.candidates(schema, depth, refs)):
            if self.valid(schema, candidate):
                return candidate
            if index == 0:
                first = candidate
        return first  # the root's check reports what is wrong with it

    def candidates(self, schema: Mapping[str, Any], depth: int, refs: tuple[str, ...]) -> Any:
        """Values to try for ``schema``, best first."""
        if "const" in schema:
            yield schema["const"]
            return
        if "default" in schema:
            yield copy.deepcopy(schema["default"])
        if isinstance(schema.get("examples"), list):
            yield from (copy.deepcopy(item) for item in schema["examples"][:3])
        if isinstance(schema.get("enum"), list):
            yield from schema["enum"]
            return
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self.resolve(ref)
            if target is not None and ref not in refs and depth < _MAX_DEPTH:
                siblings = {k: v for k, v in schema.items() if k != "$ref"}
                yield self.value(_merge(target, siblings), depth + 1, (*refs, ref))
                return
        for keyword in ("oneOf", "anyOf"):
            if isinstance(schema.get(keyword), list):
                rest = {k: v for k, v in schema.items() if k != keyword}
                for branch in schema[keyword]:
                    if isinstance(branch, Mapping):
                        yield self.value(_merge(rest, branch), depth + 1, refs)
                return
        if isinstance(schema.get("allOf"), list):
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if isinstance(part, Mapping):
                    part = self.inline_ref(part, refs)
                    merged = _merge(merged, part)
            yield self.value(merged, depth + 1, refs)
            return
        for kind in _types(schema):
            yield from self.typed(kind, schema, depth, refs)

    def inline_ref(self, part: Mapping[str, Any], refs: tuple[str, ...]) -> Mapping[str, Any]:
        ref = part.get("$ref")
        if isinstance(ref, str) and ref not in refs:
            target = self.resolve(ref)
            if target is not None:
                return _merge(target, {k: v for k, v in part.items() if k != "$ref"})
        return part

    def resolve(self, ref: str) -> Mapping[str, Any] | None:
        """A local ``#/…`` pointer into the root schema; nothing else is followed."""
        if not ref.startswith("#"):
            return None
        node: Any = self.root
        for raw in ref[1:].split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node if isinstance(node, Mapping) else None

    def typed(self, kind: str, schema: Mapping[str, Any], depth: int, refs: tuple[str, ...]) -> Any:
        if kind == "object":
            yield self.object(schema, depth, refs)
        elif kind == "array":
            yield from self.arrays(schema, depth, refs)
        elif kind == "string":
            yield from _strings(schema)
        elif kind in ("integer", "number"):
            yield from _numbers(schema, integer=kind == "integer")
        elif kind == "boolean":
            yield True
            yield False
        elif kind == "null":
            yield None

    def object(self, schema: Mapping[str, Any], depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = [k for k in schema.get("required", []) if isinstance(k, str)]
        wanted = list(dict.fromkeys(required))
        if self.with_defaults and depth < _MAX_DEPTH:  # optional ones with a default
            wanted += [k for k, v in properties.items()
                       if k not in wanted and isinstance(v, Mapping) and "default" in v]
        minimum = schema.get("minProperties")
        if isinstance(minimum, int):
            wanted += [k for k in properties if k not in wanted][: max(0, minimum - len(wanted))]
        result: dict[str, Any] = {}
        for key in wanted:
            sub = properties.get(key, _extra_schema(schema))
            result[key] = self.value(sub, depth + 1, refs)
        return result

    def arrays(self, schema: Mapping[str, Any], depth: int, refs: tuple[str, ...]) -> Any:
        found = schema.get("prefixItems")
        prefix: list[Any] = found if isinstance(found, list) else []
        items = schema.get("items", {})
        minimum = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
        head = [self.value(sub, depth + 1, refs) for sub in prefix[:minimum]]
        count = max(0, minimum - len(head))
        if count and items is not False:
            yield head + self.distinct(items, count, depth, refs)
        else:
            yield head
        if "contains" in schema and depth < _MAX_DEPTH:
            yield [*head, self.value(schema["contains"], depth + 1, refs)]

    def distinct(self, items: Any, count: int, depth: int, refs: tuple[str, ...]) -> list[Any]:
        """``count`` item values, all different where the item schema allows it."""
        pool: list[Any] = []
        if isinstance(items, Mapping):
            seen = list(self.candidates(items, depth + 1, refs))
            pool = [v for v in seen if self.valid(items, v)]
        first = pool[0] if pool else self.value(items, depth + 1, refs)
        out: list[Any] = []
        for index in range(count * 4):  # a variant the item schema refuses is skipped
            if len(out) == count:
                break
            value = pool[index] if index < len(pool) else _variant(first, index)
            if value not in out and (index < len(pool) or self.valid(items, value)):
                out.append(value)
        while len(out) < count:  # the validator reports what could not be met
            out.append(first)
        return out


def _accept_all(value: Any) -> Any:
    return value


def _has_root_ref(schema: Any) -> bool:
    """Does a ``$ref: "#"`` (or a pointer outside ``$defs``) appear under ``schema``?
    Such a sub-schema cannot be checked alone."""
    stack = [schema]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith(("#/$defs/", "#/definitions/")):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        names = [t for t in declared if isinstance(t, str)]
        return sorted(names, key=lambda t: _TYPE_ORDER.index(t) if t in _TYPE_ORDER else 99)
    # no type: guess from the keywords present
    if any(k in schema for k in ("properties", "required", "additionalProperties")):
        return ["object"]
    if any(k in schema for k in ("items", "prefixItems", "minItems", "contains")):
        return ["array"]
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "multipleOf")):
        return ["number"]
    return ["string", "integer", "boolean", "null", "object", "array"]


def _merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``allOf`` of two schemas as one (properties merged, required joined, bounds the
    stricter); the validator has the last word on the value built from it."""
    merged = dict(base)
    for key, value in extra.items():
        if key not in merged:
            merged[key] = value
        elif key == "properties" and isinstance(value, Mapping):
            props = dict(merged[key])
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            merged[key] = props
        elif key == "required" and isinstance(value, list):
            merged[key] = list(dict.fromkeys([*merged[key], *value]))
        elif key in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"):
            merged[key] = max(merged[key], value)
        elif key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"):
            merged[key] = min(merged[key], value)
        elif key == "type" and isinstance(value, str) and isinstance(merged[key], list):
            merged[key] = value if value in merged[key] else merged[key]
        else:
            merged[key] = value
    return merged


def _extra_schema(schema: Mapping[str, Any]) -> Any:
    """The schema a required key outside ``properties`` must satisfy."""
    extra = schema.get("additionalProperties", {})
    return extra if isinstance(extra, Mapping) else {}


def _variant(value: Any, index: int) -> Any:
    """A value like ``value`` but different for each ``index`` (uniqueItems)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value + index
    if isinstance(value, float):
        return value + index
    if isinstance(value, str):
        return value + (str(index) if index else "")
    if isinstance(value, list) and value:
        return [_variant(value[0], index), *value[1:]]
    if isinstance(value, dict) and value:
        first = next(iter(value))
        return {**value, first: _variant(value[first], index)}
    return value


def _strings(schema: Mapping[str, Any]) -> Any:
    low = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
    high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
    pattern = schema.get("pattern")
    fmt = schema.get("format")
    if isinstance(pattern, str):
        for stretch in (0, 1, 2, 4, 8, 16, 64):
            text = pattern_example(pattern, stretch)
            if text is not None:
                yield text
    if isinstance(fmt, str) and fmt in FORMAT_EXAMPLES:
        yield FORMAT_EXAMPLES[fmt]
    base = "example"
    if len(base) < low:
        base = base + "x" * (low - len(base))
    if high is not None and len(base) > high:
        base = base[:high]
    yield base


def _numbers(schema: Mapping[str, Any], *, integer: bool) -> Any:
    low, high = _bound(schema, "minimum", "exclusiveMinimum", 1), _bound(
        schema, "maximum", "exclusiveMaximum", -1)
    step = schema.get("multipleOf")
    step = step if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0 else None
    start = 1 if low is None else low
    if high is not None and start > high:
        start = high
    if integer:
        start = math.ceil(start)
    if step is not None:
        units = math.ceil(start / step)
        value = units * step
        if integer and isinstance(value, float) and value.is_integer():
            value = int(value)
        yield value
    yield start if not isinstance(start, float) or not start.is_integer() else int(start)
    if low is not None and high is not None:
        yield (low + high) / 2 if not integer else math.floor((low + high) / 2)
    yield 0


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str, sign: int) -> float | None:
    """The tightest bound on one side; an exclusive one nudged inwards."""
    values: list[float] = []
    if _is_number(schema.get(inclusive)):
        values.append(schema[inclusive])
    if _is_number(schema.get(exclusive)):
        bound = schema[exclusive]
        nudge = 1 if isinstance(bound, int) else max(abs(bound) * 1e-9, 1e-9)
        values.append(bound + sign * nudge)
    if not values:
        return None
    return max(values) if sign > 0 else min(values)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
