"""The readable pick of :mod:`.examples`: one value a schema suggests, built by hand.

:func:`readable_value` walks the schema once and picks, for each value, what a reader
would write: ``const``, ``default``, ``examples``, the first ``enum`` member, a bound
(or the middle of two) that meets ``multipleOf``, ``"example"`` stretched or cut to the
lengths, a sample per ``format``, a pattern's simplest match, the branches of
``anyOf``/``oneOf``/``allOf``, ``$ref``/``$defs`` followed, ``prefixItems``,
``uniqueItems``. Every required property is present, and each optional one that
declares a ``default`` (shown with it) when the object still validates with it.
Each candidate is checked against its own sub-schema so a wrong first pick falls back
to the next; the caller checks the whole value with the runtime's validator and falls
back to Hypothesis when even that fails. Nothing here is random.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from typing import Any, Final

from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

from .strategies import is_number, merge_schemas, pattern_string, ref_target, schema_types

__all__ = ["FORMAT_EXAMPLES", "NO_VALUE", "readable_value"]

NO_VALUE: Final = object()  # "no value": None is a JSON value
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
_UNTYPED_ORDER: Final = ("string", "integer", "number", "boolean", "null", "object", "array")
_MAX_DEPTH: Final = 24  # a deeper (or endlessly recursive) schema gets its minimal values


def readable_value(
    schema: Mapping[str, Any] | bool, check: Callable[[Any], Any]
) -> tuple[Any, str]:
    """The readable value of ``schema`` that ``check`` (its compiled validator) accepts
    and ``""``; or NO_VALUE and what was wrong with the first pick."""
    root = schema if isinstance(schema, Mapping) else {}
    # First each value's first candidate, checked once at the root (most schemas need
    # no more); then with every candidate checked against its own sub-schema. Optional
    # properties with a default are shown when they can be; a default can drag in
    # another keyword (dependentRequired, if/then), so last without them.
    failure = ""
    for careful, with_defaults in ((False, True), (True, True), (True, False)):
        value = _Builder(root, with_defaults, careful).value(schema, 0, ())
        try:
            check(value)
        except ValidationFailed as exc:
            failure = failure or exc.describe(1)
            continue
        except RecursionError:
            failure = failure or "the schema nests too deeply"
            continue
        return value, ""
    return NO_VALUE, failure


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
                wrapped = {
                    "allOf": [schema],
                    "$defs": self.root.get("$defs", {}),
                    "definitions": self.root.get("definitions", {}),
                }
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
                yield self.value(merge_schemas(target, siblings), depth + 1, (*refs, ref))
                return
        for keyword in ("oneOf", "anyOf"):
            if isinstance(schema.get(keyword), list):
                rest = {k: v for k, v in schema.items() if k != keyword}
                for branch in schema[keyword]:
                    if isinstance(branch, Mapping):
                        yield self.value(merge_schemas(rest, branch), depth + 1, refs)
                return
        if isinstance(schema.get("allOf"), list):
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if isinstance(part, Mapping):
                    part = self.inline_ref(part, refs)
                    merged = merge_schemas(merged, part)
            yield self.value(merged, depth + 1, refs)
            return
        for kind in _types(schema):
            yield from self.typed(kind, schema, depth, refs)

    def inline_ref(self, part: Mapping[str, Any], refs: tuple[str, ...]) -> Mapping[str, Any]:
        ref = part.get("$ref")
        if isinstance(ref, str) and ref not in refs:
            target = self.resolve(ref)
            if target is not None:
                return merge_schemas(target, {k: v for k, v in part.items() if k != "$ref"})
        return part

    def resolve(self, ref: str) -> Mapping[str, Any] | None:
        """A local ``#/…`` pointer into the root schema; nothing else is followed."""
        node = ref_target(self.root, ref)
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

    def object(
        self, schema: Mapping[str, Any], depth: int, refs: tuple[str, ...]
    ) -> dict[str, Any]:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = [k for k in schema.get("required", []) if isinstance(k, str)]
        wanted = list(dict.fromkeys(required))
        if self.with_defaults and depth < _MAX_DEPTH:  # optional ones with a default
            wanted += [
                k
                for k, v in properties.items()
                if k not in wanted and isinstance(v, Mapping) and "default" in v
            ]
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
    """The types ``schema`` allows, the most readable first (an untyped one: a string)."""
    order = _TYPE_ORDER if "type" in schema else _UNTYPED_ORDER
    return sorted(schema_types(schema), key=lambda t: order.index(t) if t in order else 99)


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
        text = pattern_string(pattern, low, high)
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
    low, high = (
        _bound(schema, "minimum", "exclusiveMinimum", 1),
        _bound(schema, "maximum", "exclusiveMaximum", -1),
    )
    step = schema.get("multipleOf")
    step = (
        step if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0 else None
    )
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
    if is_number(schema.get(inclusive)):
        values.append(schema[inclusive])
    if is_number(schema.get(exclusive)):
        bound = schema[exclusive]
        nudge = 1 if isinstance(bound, int) else max(abs(bound) * 1e-9, 1e-9)
        values.append(bound + sign * nudge)
    if not values:
        return None
    return max(values) if sign > 0 else min(values)
