"""JSON Schema 2020-12 → Hypothesis strategy, written for mcpgen's contracts.

``hypothesis-jsonschema`` reads drafts 4–7 only (no ``prefixItems``, ``$defs``, recursive
``$ref``), so this module compiles a schema itself, keyword by keyword, into a strategy
that draws mostly valid values; :func:`valid_values` then filters the draws with the
runtime's own validator (``schema.validator.compile_schema``, formats asserted, patterns
with ECMA-262 semantics through ``schema.regex.EcmaRegex``), so every value it yields is one
the server must accept. Where a keyword is hard to build (``not``, ``if``, ``oneOf``'s
exclusivity, ``contains``, ``dependent*``) the filter alone enforces it.

Decisions a user may meet: an object draws extra keys only where
``additionalProperties`` is a schema (a map), never for an absent or ``true`` one;
arrays without ``maxItems`` stay short (``minItems`` + 4); a ``$ref`` cycle is followed
``MAX_REF_DEPTH`` times, after which the recursive branch draws nothing (an optional
property is left out, an array stays empty).
"""

from __future__ import annotations

import functools
import json
import math
import re
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from mcpgen_runtime.protocol.pointer import MISSING, resolve_pointer
from mcpgen_runtime.schema.regex import EcmaRegex, RegexError
from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

from .format_strategies import format_strategy

__all__ = [
    "FIND_SETTINGS",
    "MAX_REF_DEPTH",
    "PATTERN_DRAWS",
    "PATTERN_SECONDS",
    "SHRINK_LENGTH",
    "BudgetSpent",
    "SearchBudget",
    "is_number",
    "json_values",
    "merge_schemas",
    "passes",
    "pattern_string",
    "ref_target",
    "schema_strategy",
    "schema_types",
    "valid_values",
]

MAX_REF_DEPTH = 2
# The example search of one ``pattern`` (``pattern_string``): candidates examined, and
# a clock guard in case examining them is slow (see SearchBudget); matches longer
# than SHRINK_LENGTH are not shrunk (see pattern_string).
PATTERN_DRAWS = 500
PATTERN_SECONDS = 10.0
SHRINK_LENGTH = 64
_OPEN_ARRAY_EXTRA = 4
_MAP_SIZE = 3
# Lengths across the whole range (``_spread``): besides Hypothesis's own short draws,
# half of strings and arrays take a length drawn evenly up to their bound; an
# unbounded string up to LONG_TEXT characters past its minLength, an unbounded array up
# to LONG_ITEMS items. Bounds beyond are cut to these (a server failing only past 10,000
# characters is out of reach; the boundary phase writes maxima out, see examples.py).
LONG_TEXT = 1_000
LONG_TEXT_BOUND = 10_000
LONG_ITEMS = 100
LONG_ITEMS_BOUND = 1_000

JSON_SCALARS: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
# ``find`` with these is deterministic (derandomized, no example database) and shrinks
# to the simplest value: the deterministic picks of ``examples`` use them.
FIND_SETTINGS = settings(
    database=None,
    derandomize=True,
    max_examples=200,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.generate, Phase.shrink),
)
_ALL_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def canonical(value: Any) -> str:
    """JSON Schema equality as a string: ``uniqueItems`` and ``enum`` compare by it."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def valid_values(schema: Mapping[str, Any] | bool) -> st.SearchStrategy[Any]:
    """Values ``schema`` accepts, by the runtime's validator (raises SchemaError for a
    schema the runtime cannot compile)."""
    validate = compile_schema(schema)
    return schema_strategy(schema).filter(lambda value: passes(validate, value))


def passes(validate: Any, value: Any) -> bool:
    try:
        validate(value)
    except ValidationFailed:
        return False
    return True


def schema_strategy(schema: Mapping[str, Any] | bool) -> st.SearchStrategy[Any]:
    """A strategy drawing values shaped by ``schema`` (mostly valid: filter them)."""
    return _Compiler(schema).compile(schema, ())


class _Compiler:
    def __init__(self, root: Mapping[str, Any] | bool) -> None:
        self.root = root
        self.defs = root.get("$defs", {}) if isinstance(root, Mapping) else {}

    def compile(self, schema: Any, refs: tuple[str, ...]) -> st.SearchStrategy[Any]:
        if schema is True or schema == {}:
            return json_values
        if schema is False or not isinstance(schema, Mapping):
            return st.nothing()
        if "$ref" in schema:
            return self.reference(schema, refs)
        if "allOf" in schema:
            return self.checked(self.compile(_merge_all_of(schema, self.resolve), refs), schema)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                rest = {k: v for k, v in schema.items() if k != key}
                branches = [self.compile(_merge(rest, self.resolve(b)), refs) for b in schema[key]]
                combined = st.one_of(branches)
                return self.checked(combined, schema) if key == "oneOf" else combined
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"])) if schema["enum"] else st.nothing()
        strategy = st.one_of([self.typed(t, schema, refs) for t in schema_types(schema)])
        if any(key in schema for key in ("not", "if", "dependentSchemas")):
            return self.checked(strategy, schema)
        return strategy

    def resolve(self, schema: Any) -> Any:
        """``schema`` with a bare local ``$ref`` replaced by its target (one level)."""
        if isinstance(schema, Mapping) and set(schema) == {"$ref"}:
            target = self.target(schema["$ref"])
            return target if target is not None else schema
        return schema

    def target(self, ref: Any) -> Any:
        return ref_target(self.root, ref)

    def reference(self, schema: Mapping[str, Any], refs: tuple[str, ...]) -> st.SearchStrategy[Any]:
        ref = schema["$ref"]
        if refs.count(ref) >= MAX_REF_DEPTH:
            return st.nothing()
        target = self.target(ref)
        if target is None:
            return json_values
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        if siblings:
            return self.compile({"allOf": [target, siblings]}, (*refs, ref))
        return self.compile(target, (*refs, ref))

    def checked(
        self, strategy: st.SearchStrategy[Any], schema: Mapping[str, Any]
    ) -> st.SearchStrategy[Any]:
        """``strategy`` filtered by ``schema`` itself (with the root's ``$defs``)."""
        local = dict(schema)
        if self.defs and "$defs" not in local:
            local["$defs"] = self.defs
        try:
            validate = compile_schema(local)
        except (SchemaError, RecursionError):
            return strategy  # a reference the local copy cannot reach: the root filter decides
        return strategy.filter(lambda value: passes(validate, value))

    def typed(
        self, kind: str, schema: Mapping[str, Any], refs: tuple[str, ...]
    ) -> st.SearchStrategy[Any]:
        if kind == "null":
            return st.none()
        if kind == "boolean":
            return st.booleans()
        if kind == "integer":
            return _integers(schema)
        if kind == "number":
            return _integers(schema) | _floats(schema)
        if kind == "string":
            return _strings(schema)
        if kind == "array":
            return self.array(schema, refs)
        return self.object(schema, refs)

    def array(self, schema: Mapping[str, Any], refs: tuple[str, ...]) -> st.SearchStrategy[Any]:
        low = int(schema.get("minItems", 0))
        bound = schema.get("maxItems")
        high = (
            low + _OPEN_ARRAY_EXTRA
            if bound is None
            else min(int(bound), low + 2 * _OPEN_ARRAY_EXTRA)
        )
        longest = low + LONG_ITEMS if bound is None else min(int(bound), LONG_ITEMS_BOUND)
        prefix = [self.compile(item, refs) for item in schema.get("prefixItems", [])]
        items_schema = schema.get("items", True)
        rest = self.compile(items_schema, refs) if items_schema is not False else st.nothing()
        unique = canonical if schema.get("uniqueItems") else None
        if not prefix and "contains" in schema:
            # one item drawn from `contains` at a drawn place: random lists rarely hold one
            needed = self.compile(schema["contains"], refs)
            others = _lists(rest, max(0, low - 1), max(0, high - 1), unique)
            return st.builds(_insert, others, needed, st.integers(0, high))
        if not prefix:
            short = _lists(rest, low, high, unique)
            if unique is not None or longest <= high or rest.is_empty:
                return short  # unique items may be too few for a long array
            return _spread(short, low, longest, lambda n: _lists(rest, n, n, None))
        head = st.tuples(*prefix).map(list)
        tail = _lists(rest, 0, max(0, high - len(prefix)), None)
        combined = st.builds(lambda h, t: h + t, head, tail)
        # fewer items than the prefix is also valid (each prefix schema is optional)
        shorter = st.integers(low, len(prefix)).flatmap(lambda n: head.map(lambda h: h[:n]))
        return st.one_of(shorter, combined)

    def object(self, schema: Mapping[str, Any], refs: tuple[str, ...]) -> st.SearchStrategy[Any]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = [name for name in schema.get("required", []) if isinstance(name, str)]
        fixed = {name: self.compile(properties.get(name, True), refs) for name in required}
        optional = {
            name: self.compile(sub, refs) for name, sub in properties.items() if name not in fixed
        }
        base = st.fixed_dictionaries(fixed, optional=optional)
        extra = self.extra_keys(schema, refs, set(properties))
        if extra is None:
            return base
        return st.builds(lambda known, more: {**more, **known}, base, extra)

    def extra_keys(
        self, schema: Mapping[str, Any], refs: tuple[str, ...], known: set[str]
    ) -> st.SearchStrategy[dict[str, Any]] | None:
        maps: list[st.SearchStrategy[dict[str, Any]]] = []
        names = (
            _strings(schema["propertyNames"])
            if isinstance(schema.get("propertyNames"), Mapping)
            else st.text(min_size=1, max_size=8)
        )
        names = names.filter(lambda key: isinstance(key, str) and key not in known)
        for pattern, sub in schema.get("patternProperties", {}).items():
            keys = _pattern_text(pattern, 0, 12).filter(lambda key: key not in known)
            maps.append(_maps(keys, self.compile(sub, refs), 2))
        additional = schema.get("additionalProperties", True)
        if isinstance(additional, Mapping):
            maps.append(_maps(names, self.compile(additional, refs), _MAP_SIZE))
        if not maps:
            return None
        return st.tuples(*maps).map(lambda parts: {k: v for part in parts for k, v in part.items()})


def ref_target(root: Any, ref: Any) -> Any:
    """What a local ``$ref`` (``#`` or ``#/…``, percent-encoded) points to in ``root``,
    or None; nothing outside the document is followed."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    found = resolve_pointer(root, unquote(ref[1:]))
    return None if found is MISSING else found


def _insert(items: list[Any], item: Any, place: int) -> list[Any]:
    return [*items[:place], item, *items[place:]]


def _lists(
    items: st.SearchStrategy[Any], low: int, high: int, unique: Any
) -> st.SearchStrategy[list[Any]]:
    if items.is_empty:  # a recursion cut short: only the empty array is left
        return st.just([]) if low == 0 else st.nothing()
    return st.lists(items, min_size=low, max_size=high, unique_by=unique)


def _maps(
    keys: st.SearchStrategy[str], values: st.SearchStrategy[Any], high: int
) -> st.SearchStrategy[dict[str, Any]]:
    if keys.is_empty or values.is_empty:
        return st.just({})
    return st.dictionaries(keys, values, max_size=high)


def schema_types(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The JSON types ``schema`` allows: its ``type``, else those its keywords hint at,
    else all."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list):
        return tuple(t for t in declared if t in _ALL_TYPES)
    hinted = [
        kind
        for kind, keys in (
            ("object", ("properties", "required", "additionalProperties", "patternProperties")),
            ("array", ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")),
            ("string", ("minLength", "maxLength", "pattern", "format")),
            (
                "number",
                ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
            ),
        )
        if any(key in schema for key in keys)
    ]
    return tuple(hinted) or _ALL_TYPES


def _bounds(schema: Mapping[str, Any]) -> tuple[float | None, float | None, bool, bool]:
    low, high = schema.get("minimum"), schema.get("maximum")
    exclusive_low = exclusive_high = False
    above, below = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(above, (int, float)) and (low is None or above >= low):
        low, exclusive_low = above, True
    if isinstance(below, (int, float)) and (high is None or below <= high):
        high, exclusive_high = below, True
    return low, high, exclusive_low, exclusive_high


def integer_bounds(schema: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The smallest and largest integer the bounds allow (None: unbounded)."""
    low, high, exclusive_low, exclusive_high = _bounds(schema)
    lo = None if low is None else (math.floor(low) + 1 if exclusive_low else math.ceil(low))
    hi = None if high is None else (math.ceil(high) - 1 if exclusive_high else math.floor(high))
    return lo, hi


def _integers(schema: Mapping[str, Any]) -> st.SearchStrategy[int]:
    lo, hi = integer_bounds(schema)
    if lo is not None and hi is not None and lo > hi:
        return st.nothing()
    step = schema.get("multipleOf")
    if isinstance(step, int) and not isinstance(step, bool) and step > 0:
        first = None if lo is None else -(-lo // step)
        last = None if hi is None else hi // step
        return st.integers(first, last).map(lambda k: k * step)
    strategy = st.integers(lo, hi)
    return strategy.filter(lambda n: _multiple(n, step)) if step is not None else strategy


def _floats(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    low, high, exclusive_low, exclusive_high = _bounds(schema)
    step = schema.get("multipleOf")
    if step is not None:
        return st.nothing()  # multiples come from _integers; fractional steps below
    if low is not None and high is not None and low > high:
        return st.nothing()
    return st.floats(
        min_value=low,
        max_value=high,
        exclude_min=exclusive_low and low is not None,
        exclude_max=exclusive_high and high is not None,
        allow_nan=False,
        allow_infinity=False,
    )


def _multiple(value: Any, step: Any) -> bool:
    if not isinstance(step, (int, float)) or step <= 0:
        return True
    quotient = value / step
    return math.isfinite(quotient) and quotient == int(quotient)


def _strings(schema: Mapping[str, Any]) -> st.SearchStrategy[str]:
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    high = None if high is None else int(high)
    if high is not None and low > high:
        return st.nothing()
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        return _pattern_text(pattern, low, high)
    formatted = format_strategy(schema["format"]) if isinstance(schema.get("format"), str) else None
    if formatted is not None:
        return formatted.filter(
            lambda text: low <= len(text) <= (high if high is not None else len(text))
        )
    short = st.text(min_size=low, max_size=high if high is not None else max(low, low + 12))
    longest = low + LONG_TEXT if high is None else min(high, LONG_TEXT_BOUND)
    return _spread(short, low, longest, lambda n: st.text(min_size=n, max_size=n))


def _spread(
    short: st.SearchStrategy[Any],
    low: int,
    longest: int,
    of_length: Callable[[int], st.SearchStrategy[Any]],
) -> st.SearchStrategy[Any]:
    """``short`` (Hypothesis's own sizes, which stay near the minimum), or half the time
    a length drawn evenly from ``low`` to ``longest``: a server that fails only on names
    longer than 20, or exactly at a ``maxLength`` of 200, is found. Shrinking goes to
    ``short`` first and to shorter lengths."""
    if longest <= low:
        return short
    return st.one_of(short, st.integers(low, longest).flatmap(of_length))


def _pattern_text(
    pattern: str, low: int, high: int | None, budget: Callable[[], bool] = lambda: True
) -> st.SearchStrategy[str]:
    """Strings matching ``pattern`` by ECMA-262 rules: drawn with Python's engine from
    the runtime's translation (or the source as written), kept only when the ECMA
    matcher agrees and the length fits. ``budget`` is called before each draw is
    examined (a :class:`SearchBudget` raises when it is spent)."""
    try:
        matcher = EcmaRegex(pattern)
    except RegexError:
        return st.nothing()
    base: st.SearchStrategy[str] | None = None
    for source in (matcher.translated, pattern):
        try:
            with warnings.catch_warnings():
                # a Rust nested class ("[[a-z]-]") reads as something else to Python
                warnings.simplefilter("error", FutureWarning)
                re.compile(source)
        except (re.error, FutureWarning):
            continue
        base = st.from_regex(source, fullmatch=True)
        break
    if base is None:
        base = st.text(max_size=high if high is not None else 16)
    limit = high if high is not None else math.inf
    return base.filter(
        lambda text: budget() and low <= len(text) <= limit and bool(matcher.search(text))
    )


class SearchBudget:
    """At most ``draws`` candidates examined by one search, and ``seconds`` from the
    first; past either, :class:`BudgetSpent` ends the search. The count is what stops
    a search (the same spec, the same page); the clock, far above what the count
    allows on a loaded machine, is a guard against a candidate slow to examine, and
    started by the first one so that warming up (imports, Hypothesis's engine)
    never counts."""

    def __init__(self, draws: int, seconds: float) -> None:
        self.draws = draws
        self.seconds = seconds
        self.used = 0
        self.stop_at = math.inf
        self.spent = False

    def __call__(self) -> bool:
        now = time.monotonic()
        if self.used == 0:
            self.stop_at = now + self.seconds
        if self.used >= self.draws or now >= self.stop_at:
            self.spent = True
            raise BudgetSpent
        self.used += 1
        return True


class BudgetSpent(BaseException):
    """A :class:`SearchBudget` ran out. Not an ``Exception``: Hypothesis takes one
    raised by a draw for a failure to shrink, and lets this through at once."""


@functools.lru_cache(maxsize=4096)
def pattern_string(pattern: str, low: int = 0, high: int | None = None) -> str | None:
    """The simplest string ``pattern`` matches (ECMA-262) with a length in ``low..high``,
    deterministic; None when none is found within the budget (``PATTERN_DRAWS``
    candidates, ``PATTERN_SECONDS``). Worked out once per process.

    The first draw Hypothesis makes (derandomized) is the simplest choice of every
    part (each repeat its least), so the first match found is most often the
    simplest already. Only a short one (``SHRINK_LENGTH``) is shrunk further:
    Hypothesis's shrinker spends time growing faster than a string's length even
    when it cannot shrink it (~4 s for ``^[a-z]{400}$``, ~2 min for ``{2000}``)."""
    try:
        first = _find_pattern_text(pattern, low, high, shrink=False)
    except (HypothesisException, BudgetSpent):
        return None
    if len(first) > SHRINK_LENGTH:
        return first
    try:
        return _find_pattern_text(pattern, low, high, shrink=True)
    except (HypothesisException, BudgetSpent):
        return first


def _find_pattern_text(pattern: str, low: int, high: int | None, *, shrink: bool) -> str:
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)
    found: str = find(
        _pattern_text(pattern, low, high, SearchBudget(PATTERN_DRAWS, PATTERN_SECONDS)),
        lambda _: True,
        settings=settings(FIND_SETTINGS, phases=phases),
    )
    return found


def _merge(base: Mapping[str, Any], branch: Any) -> Any:
    """``base``'s keywords with ``branch``'s on top (a branch of anyOf/oneOf)."""
    if not isinstance(branch, Mapping):
        return branch if base == {} else ({**base} if branch is True else False)
    merged = dict(base)
    merged.update(branch)
    return merged


def _merge_all_of(schema: Mapping[str, Any], resolve: Any) -> dict[str, Any]:
    """One schema drawing candidates for every member of ``allOf`` (the filter checks)."""
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for member in schema["allOf"]:
        member = resolve(member)
        if isinstance(member, Mapping):
            merged = merge_schemas(merged, member)
    return merged


_STRICTER: dict[str, Any] = {
    **dict.fromkeys(("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"), max),
    **dict.fromkeys(("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"), min),
}


def merge_schemas(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Two schemas that must both hold, as one to build candidates from: properties
    merged (one both name becomes an ``allOf``), ``required`` joined, types intersected
    (``integer`` within ``number``), bounds the stricter; any other keyword of ``extra``
    replaces ``base``'s. The validator has the last word on what is built from it."""
    merged = dict(base)
    for key, value in extra.items():
        mine = merged.get(key)
        if key not in merged:
            merged[key] = value
        elif key == "properties" and isinstance(mine, Mapping) and isinstance(value, Mapping):
            props = dict(mine)
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            merged[key] = props
        elif key == "required" and isinstance(mine, list) and isinstance(value, list):
            merged[key] = list(dict.fromkeys([*mine, *value]))
        elif key == "type" and isinstance(mine, (str, list)) and isinstance(value, (str, list)):
            merged[key] = _common_types(mine, value)
        elif key in _STRICTER and is_number(mine) and is_number(value):
            merged[key] = _STRICTER[key](mine, value)
        else:
            merged[key] = value
    return merged


def _common_types(mine: str | list[str], theirs: str | list[str]) -> list[str]:
    ours = {mine} if isinstance(mine, str) else set(mine)
    other = {theirs} if isinstance(theirs, str) else set(theirs)
    both = ours & other
    if ("number" in ours and "integer" in other) or ("integer" in ours and "number" in other):
        both.add("integer")
    return sorted(both)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
