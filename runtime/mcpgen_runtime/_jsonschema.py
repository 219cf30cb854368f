"""A JSON Schema 2020-12 validator that compiles a schema once into a tree of closures.

It checks every tool call, optionally coercing the strings a model sends in place of
numbers and booleans, and reports problems in words a model can act on. ``format`` is
asserted for the formats ``_formats`` knows (an annotation for any other).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final
from urllib.parse import unquote

from ._formats import format_checker
from ._regex import EcmaRegex, RegexError

__all__ = [
    "Problem",
    "SchemaError",
    "ValidationFailed",
    "Validator",
    "compile_schema",
]

Validator = Callable[[Any], Any]

MAX_PROBLEMS: Final = 20
_REPR_LIMIT: Final = 60
_DESCRIBE_LIMIT: Final = 1000

# An error while validating: (path relative to the check that made it, message, what
# was expected).  The third field is set only for mismatches of the value as a whole
# (type, enum, const), so failed anyOf branches can be merged into "expected A or B".
_Err = tuple[tuple[str | int, ...], str, str | None]
_Check = Callable[[Any, list[_Err]], Any]


class SchemaError(Exception):
    """The schema is invalid, or uses something this validator does not support."""


@dataclass(frozen=True)
class Problem:
    """One reason an instance was rejected, located by its path inside the instance."""

    path: tuple[str | int, ...]
    message: str

    def render(self) -> str:
        if not self.path:
            return self.message
        return f"{_render_path(self.path)}: {self.message}"


class ValidationFailed(Exception):
    """An instance does not match its schema; ``problems`` says where and why."""

    problems: list[Problem]

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("ValidationFailed needs at least one problem")
        self.problems = list(problems[:MAX_PROBLEMS])
        super().__init__(self.problems)

    def describe(self, limit: int = 5) -> str:
        shown = self.problems[: max(1, limit)]
        more = len(self.problems) - len(shown)
        suffix = f" (and {more} more)" if more else ""
        text = "; ".join(problem.render() for problem in shown)
        budget = _DESCRIBE_LIMIT - len(suffix)
        if len(text) > budget:
            text = text[: budget - 1] + "…"
        return text + suffix

    def __str__(self) -> str:
        return self.describe()


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")


def _render_path(path: Iterable[str | int]) -> str:
    """``("items", 0, "date")`` → ``items[0].date``; odd keys are quoted in brackets."""
    parts: list[str] = []
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif isinstance(step, str) and _IDENTIFIER.match(step):
            parts.append(f".{step}" if parts else step)
        else:
            parts.append(f"[{_short(step, 40)}]")
    return "".join(parts)


# --------------------------------------------------------------------------- reprs


def _short(value: Any, limit: int = _REPR_LIMIT) -> str:
    """A repr cut to ``limit`` characters, built without walking a huge value."""
    out: list[str] = []
    _emit(value, out, limit + 1, 0)
    text = "".join(out)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _emit(value: Any, out: list[str], budget: int, depth: int) -> int:
    if budget <= 0:
        return budget
    if isinstance(value, str):
        text = repr(value[:budget])
    elif isinstance(value, bool) or value is None or isinstance(value, float):
        text = repr(value)
    elif isinstance(value, int):
        # repr of an int with thousands of digits is slow, or refused outright.
        text = repr(value) if value.bit_length() <= 256 else f"<{value.bit_length()}-bit integer>"
    elif isinstance(value, (Mapping, list, tuple)):
        if depth >= 8:
            text = "{…}" if isinstance(value, Mapping) else "[…]"
        else:
            is_map = isinstance(value, Mapping)
            out.append("{" if is_map else "[")
            budget -= 1
            items: Iterable[Any] = value.items() if isinstance(value, Mapping) else value
            for index, item in enumerate(items):
                if budget <= 0:
                    break
                if index:
                    out.append(", ")
                    budget -= 2
                if is_map:
                    budget = _emit(item[0], out, budget, depth + 1)
                    out.append(": ")
                    budget = _emit(item[1], out, budget - 2, depth + 1)
                else:
                    budget = _emit(item, out, budget, depth + 1)
            out.append("}" if is_map else "]")
            return budget - 1
    else:
        text = repr(value)[: max(budget, 0)]
    out.append(text)
    return budget - len(text)


def _names(names: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(_short(name, 40) for name in names[:limit])
    return shown + (", …" if len(names) > limit else "")


def _count(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


# ------------------------------------------------------------------ JSON semantics

_TRUE_KEY: Final = ("bool", True)
_FALSE_KEY: Final = ("bool", False)


def _key(value: Any) -> Any:
    """A hashable stand-in with JSON equality: 1 == 1.0, but True != 1 and False != 0."""
    if value is True:
        return _TRUE_KEY
    if value is False:
        return _FALSE_KEY
    if isinstance(value, Mapping):
        return ("object", frozenset((k, _key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_key(v) for v in value))
    return value


_NONE_TYPE: Final = type(None)
_EXACT_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "null": (_NONE_TYPE,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int,),  # a float is a number only when finite: judged by _is_type
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def _is_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        if isinstance(value, float):
            return math.isfinite(value)  # NaN and infinities are no JSON numbers
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    return isinstance(value, dict)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_fraction(value: float) -> Fraction:
    # The decimal literal, not the binary float, is what the author meant:
    # 19.99 is a multiple of 0.01 even though 19.99 / 0.01 != 1999 in floats.
    if isinstance(value, float) and not value.is_integer():
        return Fraction(repr(value))
    return Fraction(int(value))


def _multiple_of(step: float) -> Callable[[float], bool]:
    if isinstance(step, float) and step.is_integer():
        step = int(step)
    if isinstance(step, int):
        int_step = step
        frac_step = Fraction(step)

        def check_int_step(value: float) -> bool:
            if type(value) is int:
                return value % int_step == 0
            if not math.isfinite(value):
                return False
            return (_as_fraction(value) / frac_step).denominator == 1

        return check_int_step

    frac = _as_fraction(step)

    def check_fraction(value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (_as_fraction(value) / frac).denominator == 1

    return check_fraction


# ------------------------------------------------------------------------ coercion
#
# A model often sends "3" for 3 and "true" for true. Where the schema wants a number or
# a boolean and would refuse any string, the runtime converts a string that is plainly
# that value, and nothing else:
#
#   integer  an optional sign and decimal digits, no leading zero: "42", "-7", "0"
#            ("0123" reads as an identifier; "1e3" and "3.0" are not integer literals)
#   number   a JSON number, optionally "+"-signed: "3", "-0.5", "1e3"; the result is
#            what the JSON would hold (an exact int without fraction or exponent, else
#            a float) and must be finite
#   boolean  "true" or "false", exactly
#
# No spaces are stripped, digits are ASCII, and text longer than MAX_COERCED_LENGTH is
# never converted. Coercion is a fallback: a string that satisfies the schema (or a
# branch of its anyOf/oneOf) stays a string. An enum or const without "type" converts
# to its members' own types (enum [1, 2] reads "2", not "2.0").

MAX_COERCED_LENGTH: Final = 100
"""Characters at most in a string converted to a number (default 100): longer text is
not a number anyone meant, and converting it could cost time."""

_INT_TEXT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")
_NUMBER_TEXT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def _make_coercer(integer: bool, number: bool, boolean: bool) -> Callable[[str], Any]:
    """Convert a string to the scalar the schema wants; hand back the same string if not."""

    def coerce(text: str) -> Any:
        if (integer or number) and len(text) <= MAX_COERCED_LENGTH:
            if _INT_TEXT.fullmatch(text):
                return int(text)
            if number:
                match = _NUMBER_TEXT.fullmatch(text)
                if match is not None:
                    as_float = float(text)
                    if math.isfinite(as_float):
                        return as_float
        if boolean:
            if text == "true":
                return True
            if text == "false":
                return False
        return text

    return coerce


# --------------------------------------------------------------- shared checks


def _accept(value: Any, errs: list[_Err]) -> Any:
    return value


def _reject(value: Any, errs: list[_Err]) -> Any:
    errs.append(((), "no value is allowed here", None))
    return value


def _prefix(errs: list[_Err], start: int, step: str | int) -> None:
    for i in range(start, len(errs)):
        path, message, expected = errs[i]
        errs[i] = ((step, *path), message, expected)


def _run_chain(checks: Sequence[_Check], value: Any, errs: list[_Err], coerce: bool) -> Any:
    """Apply several schemas to one value; if one coerced it, check again from the start."""
    start = len(errs)
    result = value
    for check in checks:
        result = check(result, errs)
    if coerce and result is not value:
        del errs[start:]
        final = result
        for check in checks:
            final = check(final, errs)
        result = final
    return result


def _is_valid(check: _Check, value: Any) -> bool:
    scratch: list[_Err] = []
    check(value, scratch)
    return not scratch


def _report_alternatives(value: Any, failures: list[list[_Err]], errs: list[_Err]) -> None:
    """Explain why no anyOf/oneOf branch matched, as specifically as the failures allow."""
    deep = [
        (index, errors)
        for index, errors in enumerate(failures)
        if not (len(errors) == 1 and errors[0][0] == () and errors[0][2] is not None)
    ]
    if not deep:
        expected: list[str] = []
        for errors in failures:
            want = errors[0][2]
            if want is not None and want not in expected:
                expected.append(want)
        want_text = " or ".join(expected)
        errs.append(((), f"expected {want_text}, got {_short(value)}", want_text))
    elif len(deep) == 1:
        # The other branches wanted another kind of value entirely, so the one that
        # got further is the alternative the caller was aiming for.
        errs.extend(deep[0][1])
    else:
        parts = []
        for index, errors in deep:
            path, message, _ = errors[0]
            rendered = Problem(path, message).render()
            if len(rendered) > 200:
                rendered = rendered[:199] + "…"
            parts.append(f"(option {index + 1}) {rendered}")
        errs.append(((), "does not match any allowed alternative: " + "; ".join(parts), None))


# ----------------------------------------------------------------------- nodes


class _Node:
    """A compiled schema: its check, plus what unevaluated* needs to know about it."""

    __slots__ = (
        "all_items",
        "all_props",
        "always",
        "check",
        "cond",
        "contains",
        "dependent",
        "edges",
        "else_",
        "maybe",
        "patterns",
        "prefix",
        "props",
        "ready",
        "then",
        "uneval_items",
        "uneval_props",
        "where",
    )

    def __init__(self) -> None:
        self.check: _Check = _accept
        self.ready = False
        self.props: frozenset[str] = frozenset()
        self.patterns: tuple[EcmaRegex, ...] = ()
        self.all_props = False
        self.uneval_props = False
        self.prefix = 0
        self.all_items = False
        self.uneval_items = False
        self.contains: _Node | None = None
        self.always: list[_Node] = []
        self.maybe: list[_Node] = []
        self.cond: _Node | None = None
        self.then: _Node | None = None
        self.else_: _Node | None = None
        self.dependent: list[tuple[str, _Node]] = []
        # Subschemas applied to the same value (not to a part of it), for loop detection.
        self.edges: list[_Node] = []
        self.where = "#"


def _evaluated_props(node: _Node, value: Mapping[str, Any], seen: set[str], top: bool) -> bool:
    """Collect the property names ``node`` evaluates in ``value`` (which it accepts).

    Returns True as soon as every property is known to be evaluated.
    """
    if node.all_props or (node.uneval_props and not top):
        return True
    seen.update(name for name in node.props if name in value)
    if node.patterns:
        seen.update(name for name in value if any(p.search(name) for p in node.patterns))
    for sub in node.always:
        if _evaluated_props(sub, value, seen, False):
            return True
    for sub in node.maybe:
        if _is_valid(sub.check, value) and _evaluated_props(sub, value, seen, False):
            return True
    if node.cond is not None:
        if _is_valid(node.cond.check, value):
            if _evaluated_props(node.cond, value, seen, False):
                return True
            if node.then is not None and _evaluated_props(node.then, value, seen, False):
                return True
        elif node.else_ is not None and _evaluated_props(node.else_, value, seen, False):
            return True
    for name, sub in node.dependent:
        if name in value and _evaluated_props(sub, value, seen, False):
            return True
    return False


def _evaluated_items(node: _Node, value: Sequence[Any], seen: set[int], top: bool) -> bool:
    """Collect the indices ``node`` evaluates in ``value``; True when that is all of them."""
    if node.all_items or (node.uneval_items and not top):
        return True
    seen.update(range(min(node.prefix, len(value))))
    if node.contains is not None:
        check = node.contains.check
        seen.update(i for i, item in enumerate(value) if _is_valid(check, item))
    for sub in node.always:
        if _evaluated_items(sub, value, seen, False):
            return True
    for sub in node.maybe:
        if _is_valid(sub.check, value) and _evaluated_items(sub, value, seen, False):
            return True
    if node.cond is not None:
        if _is_valid(node.cond.check, value):
            if _evaluated_items(node.cond, value, seen, False):
                return True
            if node.then is not None and _evaluated_items(node.then, value, seen, False):
                return True
        elif node.else_ is not None and _evaluated_items(node.else_, value, seen, False):
            return True
    return False


_TYPE_NAMES: Final = frozenset(_EXACT_TYPES)
_UNSUPPORTED: Final = ("$dynamicRef", "$recursiveRef")
_NUMBER_KEYWORDS: Final = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)
_STRING_KEYWORDS: Final = ("minLength", "maxLength", "pattern")
_ARRAY_KEYWORDS: Final = ("items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems")
_OBJECT_KEYWORDS: Final = (
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "required",
    "dependentRequired",
    "minProperties",
    "maxProperties",
)

_Key = tuple[int, int, bool]


class _Compiler:
    def __init__(self, root: Mapping[str, Any] | bool, assert_formats: bool = True) -> None:
        self.root = root
        self.assert_formats = assert_formats
        self.nodes: dict[_Key, _Node] = {}
        self.regexes: dict[str, EcmaRegex] = {}

    # -- plumbing ---------------------------------------------------------------

    def node(self, schema: Any, base: Any, coerce: bool, where: str) -> _Node:
        if not isinstance(schema, (Mapping, bool)):
            raise SchemaError(f"{where}: a schema must be an object or a boolean")
        key = (id(schema), id(base), coerce)
        found = self.nodes.get(key)
        if found is not None:
            return found
        node = _Node()
        node.where = where
        self.nodes[key] = node
        if schema is True:
            node.check = _accept
        elif schema is False:
            node.check = _reject
        else:
            node.check = self.build(schema, base, coerce, where, node)
        node.ready = True
        return node

    def check_loops(self) -> None:
        """Refuse schemas whose in-place keywords ($ref, allOf, ...) loop back on themselves.

        Such a loop never reaches a smaller part of the value, so validating with it
        would recurse forever (the specification leaves its behaviour undefined).
        """
        state: dict[int, bool] = {}  # False while on the DFS stack, True once finished
        for start in self.nodes.values():
            if id(start) in state:
                continue
            state[id(start)] = False
            stack = [(start, iter(start.edges))]
            while stack:
                current, children = stack[-1]
                child = next(children, None)
                if child is None:
                    state[id(current)] = True
                    stack.pop()
                elif id(child) not in state:
                    state[id(child)] = False
                    stack.append((child, iter(child.edges)))
                elif not state[id(child)]:
                    raise SchemaError(
                        f"{child.where}: $ref loop that never descends into the value"
                    )

    def check_of(self, node: _Node) -> _Check:
        if node.ready:
            return node.check

        def deferred(value: Any, errs: list[_Err]) -> Any:
            return node.check(value, errs)

        return deferred

    def sub(self, schema: Any, base: Any, coerce: bool, where: str) -> _Check:
        return self.check_of(self.node(schema, base, coerce, where))

    def regex(self, pattern: Any, where: str) -> EcmaRegex:
        if not isinstance(pattern, str):
            raise SchemaError(f"{where}: a pattern must be a string")
        found = self.regexes.get(pattern)
        if found is None:
            try:
                found = EcmaRegex(pattern)
            except RegexError as exc:
                raise SchemaError(
                    f"{where}: invalid regular expression {pattern!r}: {exc}"
                ) from None
            self.regexes[pattern] = found
        return found

    def resolve(self, ref: Any, base: Any, where: str) -> tuple[Any, Any]:
        if not isinstance(ref, str):
            raise SchemaError(f"{where}: $ref must be a string")
        if not ref.startswith("#"):
            raise SchemaError(
                f"{where}: unsupported $ref {ref!r}: only local references ('#/...') are "
                "supported; bundle external schemas into $defs"
            )
        pointer = unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            raise SchemaError(f"{where}: unsupported $ref {ref!r}: anchors are not supported")
        target = base
        for raw in pointer.split("/")[1:] if pointer else ():
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and token in target:
                target = target[token]
            elif (
                isinstance(target, list)
                and token.isdigit()
                and (token == "0" or not token.startswith("0"))
                and int(token) < len(target)
            ):
                target = target[int(token)]
            else:
                raise SchemaError(f"{where}: $ref {ref!r} does not resolve")
            if isinstance(target, Mapping) and isinstance(target.get("$id"), str):
                base = target
        return target, base

    # -- keyword values ---------------------------------------------------------

    @staticmethod
    def number(schema: Mapping[str, Any], keyword: str, where: str) -> float | None:
        value = schema.get(keyword)
        if value is None:
            return None
        if not _is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
            raise SchemaError(f"{where}/{keyword}: must be a number")
        result: float = value
        return result

    @staticmethod
    def count(schema: Mapping[str, Any], keyword: str, where: str) -> int | None:
        value = schema.get(keyword)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SchemaError(f"{where}/{keyword}: must be a non-negative integer")
        result: int = value
        return result

    @staticmethod
    def schema_list(schema: Mapping[str, Any], keyword: str, where: str) -> list[Any]:
        value = schema[keyword]
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
            raise SchemaError(f"{where}/{keyword}: must be a non-empty array of schemas")
        return list(value)

    @staticmethod
    def schema_map(schema: Mapping[str, Any], keyword: str, where: str) -> Mapping[str, Any]:
        value = schema[keyword]
        if not isinstance(value, Mapping):
            raise SchemaError(f"{where}/{keyword}: must be an object")
        result: Mapping[str, Any] = value
        return result

    @staticmethod
    def string_list(value: Any, where: str) -> tuple[str, ...]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise SchemaError(f"{where}: must be an array of strings")
        if not all(isinstance(item, str) for item in value):
            raise SchemaError(f"{where}: must be an array of strings")
        return tuple(value)

    # -- one schema object ------------------------------------------------------

    def build(
        self, schema: Mapping[str, Any], base: Any, coerce: bool, where: str, node: _Node
    ) -> _Check:
        for keyword in _UNSUPPORTED:
            if keyword in schema:
                raise SchemaError(f"{where}: {keyword} is not supported")
        if schema is not self.root and isinstance(schema.get("$id"), str):
            base = schema

        types = self.types(schema, where)
        allowed: dict[str, list[Any]] = {}
        for keyword in ("enum", "const"):
            if keyword in schema:
                values = [schema["const"]] if keyword == "const" else schema["enum"]
                if keyword == "enum" and (
                    isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence)
                ):
                    raise SchemaError(f"{where}/enum: must be an array")
                allowed[keyword] = list(values)

        # Coerce only where the schema wants a number or boolean and would refuse any
        # string; without "type", enum/const say what the schema wants.
        coercer = None
        accepted = set(types) if types is not None else None
        if accepted is None and allowed:
            accepted = {_member_type(v) for values in allowed.values() for v in values}
        if coerce and accepted is not None and "string" not in accepted:
            integer = "integer" in accepted
            number = "number" in accepted
            boolean = "boolean" in accepted
            if integer or number or boolean:
                coercer = _make_coercer(integer, number, boolean)

        checks: list[_Check] = []
        for keyword, values in allowed.items():
            enum_coercer = coercer if types is None else None
            checks.append(self.enum_check(values, keyword == "const", enum_coercer))

        if any(k in schema for k in _NUMBER_KEYWORDS):
            checks.append(self.number_group(schema, where))
        if any(k in schema for k in _STRING_KEYWORDS):
            checks.append(self.string_group(schema, where))
        if "format" in schema:
            format_check = self.format_check(schema["format"], where)
            if format_check is not None:
                checks.append(format_check)
        if any(k in schema for k in _ARRAY_KEYWORDS):
            checks.append(self.array_group(schema, base, coerce, where, node))
        fuse_object = types == ("object",) and not checks
        if any(k in schema for k in _OBJECT_KEYWORDS):
            checks.append(self.object_group(schema, base, coerce, where, node, fuse_object))
        else:
            fuse_object = False

        order_sensitive = self.inplace_checks(schema, base, coerce, where, node, checks)
        uneval = self.unevaluated(schema, base, coerce, where, node)

        if fuse_object and len(checks) == 1 and not uneval:
            return checks[0]
        desc = " or ".join(types) if types is not None else ""
        rerun = coerce and (len(checks) + len(uneval) > 1 or order_sensitive)
        return _assemble(types, desc, coercer if types is not None else None, checks, uneval, rerun)

    def types(self, schema: Mapping[str, Any], where: str) -> tuple[str, ...] | None:
        if "type" not in schema:
            return None
        raw = schema["type"]
        names = (raw,) if isinstance(raw, str) else raw
        if (
            isinstance(names, (bytes, Mapping))
            or not isinstance(names, Sequence)
            or not names
            or not all(isinstance(n, str) and n in _TYPE_NAMES for n in names)
        ):
            raise SchemaError(f"{where}/type: unknown type {raw!r}")
        return tuple(names)

    def enum_check(
        self, values: list[Any], const: bool, coercer: Callable[[str], Any] | None
    ) -> _Check:
        keys = frozenset(_key(v) for v in values)
        if const:
            expected = _short(values[0])
        else:
            expected = f"one of {_short(values, 200)}"

        def enum(value: Any, errs: list[_Err]) -> Any:
            if _key(value) in keys:
                return value
            if coercer is not None and type(value) is str:
                converted = coercer(value)
                if converted is not value and _key(converted) in keys:
                    return converted
            errs.append(((), f"expected {expected}, got {_short(value)}", expected))
            return value

        return enum

    def number_group(self, schema: Mapping[str, Any], where: str) -> _Check:
        minimum = self.number(schema, "minimum", where)
        maximum = self.number(schema, "maximum", where)
        ex_min = self.number(schema, "exclusiveMinimum", where)
        ex_max = self.number(schema, "exclusiveMaximum", where)
        step = self.number(schema, "multipleOf", where)
        if step is not None and step <= 0:
            raise SchemaError(f"{where}/multipleOf: must be greater than 0")
        is_multiple = _multiple_of(step) if step is not None else None

        def numbers(value: Any, errs: list[_Err]) -> Any:
            kind = type(value)
            if kind is not int and kind is not float and not _is_number(value):
                return value
            if kind is float and not math.isfinite(value):
                errs.append(((), f"expected a finite number, got {_short(value)}", None))
                return value
            if minimum is not None and value < minimum:
                errs.append(((), f"must be >= {minimum!r}, got {_short(value)}", None))
            if maximum is not None and value > maximum:
                errs.append(((), f"must be <= {maximum!r}, got {_short(value)}", None))
            if ex_min is not None and value <= ex_min:
                errs.append(((), f"must be > {ex_min!r}, got {_short(value)}", None))
            if ex_max is not None and value >= ex_max:
                errs.append(((), f"must be < {ex_max!r}, got {_short(value)}", None))
            if is_multiple is not None and not is_multiple(value):
                errs.append(((), f"must be a multiple of {step!r}, got {_short(value)}", None))
            return value

        return numbers

    def string_group(self, schema: Mapping[str, Any], where: str) -> _Check:
        min_length = self.count(schema, "minLength", where)
        max_length = self.count(schema, "maxLength", where)
        source = schema.get("pattern")
        regex = self.regex(source, f"{where}/pattern") if "pattern" in schema else None
        shown = _short(source, 80)

        def strings(value: Any, errs: list[_Err]) -> Any:
            if not isinstance(value, str):
                return value
            if min_length is not None and len(value) < min_length:
                errs.append(
                    ((), f"must be at least {_count(min_length, 'character', 'characters')}", None)
                )
            if max_length is not None and len(value) > max_length:
                errs.append(
                    ((), f"must be at most {_count(max_length, 'character', 'characters')}", None)
                )
            if regex is not None and not regex.search(value):
                errs.append(((), f"must match pattern {shown}, got {_short(value)}", None))
            return value

        return strings

    def format_check(self, name: Any, where: str) -> _Check | None:
        if not isinstance(name, str):
            raise SchemaError(f"{where}/format: must be a string")
        known = format_checker(name) if self.assert_formats else None
        if known is None:
            return None  # an annotation: any string passes
        check, expected = known.check, known.expected

        def string_format(value: Any, errs: list[_Err]) -> Any:
            if isinstance(value, str) and not check(value):
                errs.append(((), f"expected {expected}, got {_short(value)}", None))
            return value

        return string_format

    def array_group(
        self, schema: Mapping[str, Any], base: Any, coerce: bool, where: str, node: _Node
    ) -> _Check:
        min_items = self.count(schema, "minItems", where)
        max_items = self.count(schema, "maxItems", where)
        unique = schema.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise SchemaError(f"{where}/uniqueItems: must be a boolean")
        prefix: tuple[_Check, ...] = ()
        if "prefixItems" in schema:
            prefix = tuple(
                self.sub(s, base, coerce, f"{where}/prefixItems/{i}")
                for i, s in enumerate(self.schema_list(schema, "prefixItems", where))
            )
        items_schema = schema.get("items", True)
        if not isinstance(items_schema, (Mapping, bool)):
            raise SchemaError(f"{where}/items: must be a schema (use prefixItems for tuples)")
        items_false = items_schema is False
        items = (
            None
            if items_schema is True or items_false
            else (self.sub(items_schema, base, coerce, f"{where}/items"))
        )
        contains = None
        min_contains = 1
        max_contains = None
        if "contains" in schema:
            # Counting matches must not coerce: which items the caller meant is unknowable.
            contains_node = self.node(schema["contains"], base, False, f"{where}/contains")
            contains = self.check_of(contains_node)
            node.contains = contains_node
            given_min = self.count(schema, "minContains", where)
            min_contains = 1 if given_min is None else given_min
            max_contains = self.count(schema, "maxContains", where)
        node.prefix = len(prefix)
        node.all_items = "items" in schema
        n_prefix = len(prefix)

        def arrays(value: Any, errs: list[_Err]) -> Any:
            if not isinstance(value, list):
                return value
            size = len(value)
            if min_items is not None and size < min_items:
                errs.append(
                    (
                        (),
                        f"expected at least {_count(min_items, 'item', 'items')}, got {size}",
                        None,
                    )
                )
            if max_items is not None and size > max_items:
                errs.append(((), f"expected at most {max_items} items, got {size}", None))
            out: list[Any] | None = None
            if n_prefix:
                for index, check in enumerate(prefix[:size]):
                    item = value[index]
                    start = len(errs)
                    result = check(item, errs)
                    if len(errs) != start:
                        _prefix(errs, start, index)
                    if result is not item:
                        if out is None:
                            out = list(value)
                        out[index] = result
            if items_false:
                if size > n_prefix:
                    errs.append(((), f"expected at most {n_prefix} items, got {size}", None))
            elif items is not None:
                for index in range(n_prefix, size):
                    item = value[index]
                    start = len(errs)
                    result = items(item, errs)
                    if len(errs) != start:
                        _prefix(errs, start, index)
                        if len(errs) >= MAX_PROBLEMS:
                            break
                    if result is not item:
                        if out is None:
                            out = list(value)
                        out[index] = result
            final = value if out is None else out
            if contains is not None:
                matches = sum(1 for item in final if _is_valid(contains, item))
                if matches < min_contains:
                    errs.append(
                        (
                            (),
                            (
                                f"expected at least {_count(min_contains, 'item', 'items')} "
                                f"matching the 'contains' schema, got {matches}"
                            ),
                            None,
                        )
                    )
                if max_contains is not None and matches > max_contains:
                    errs.append(
                        (
                            (),
                            (
                                f"expected at most {_count(max_contains, 'item', 'items')} "
                                f"matching the 'contains' schema, got {matches}"
                            ),
                            None,
                        )
                    )
            if unique:
                first: dict[Any, int] = {}
                for index, item in enumerate(final):
                    earlier = first.setdefault(_key(item), index)
                    if earlier != index:
                        errs.append(
                            (
                                (),
                                f"expected unique items, but items {earlier} and {index} are equal",
                                None,
                            )
                        )
                        break
            return final

        return arrays

    def object_group(
        self,
        schema: Mapping[str, Any],
        base: Any,
        coerce: bool,
        where: str,
        node: _Node,
        typed: bool,
    ) -> _Check:
        props: dict[str, _Check] = {}
        if "properties" in schema:
            for name, sub in self.schema_map(schema, "properties", where).items():
                props[name] = self.sub(sub, base, coerce, f"{where}/properties/{name}")
        patterns: list[tuple[EcmaRegex, _Check]] = []
        if "patternProperties" in schema:
            for source, sub in self.schema_map(schema, "patternProperties", where).items():
                regex = self.regex(source, f"{where}/patternProperties")
                patterns.append((regex, self.sub(sub, base, coerce, f"{where}/patternProperties")))
        additional_schema = schema.get("additionalProperties", True)
        forbid = additional_schema is False
        additional = None
        if not forbid and additional_schema is not True:
            additional = self.sub(additional_schema, base, coerce, f"{where}/additionalProperties")
        names = None
        if "propertyNames" in schema:
            names = self.sub(schema["propertyNames"], base, False, f"{where}/propertyNames")

        required = self.string_list(schema.get("required", ()), f"{where}/required")
        required_set = frozenset(required)
        min_props = self.count(schema, "minProperties", where)
        max_props = self.count(schema, "maxProperties", where)
        dep_required: list[tuple[str, tuple[str, ...]]] = []
        if "dependentRequired" in schema:
            for name, needs in self.schema_map(schema, "dependentRequired", where).items():
                dep_required.append((name, self.string_list(needs, f"{where}/dependentRequired")))

        node.props = frozenset(props)
        node.patterns = tuple(regex for regex, _ in patterns)
        node.all_props = "additionalProperties" in schema
        walk = bool(props or patterns or forbid or additional is not None)
        props_get = props.get
        type_message = "expected object, got "

        def extra_checks(name: str) -> list[_Check]:
            found = [check for regex, check in patterns if regex.search(name)]
            own = props_get(name)
            if own is not None:
                found.insert(0, own)
            elif not found and additional is not None:
                found.append(additional)
            return found

        def objects(value: Any, errs: list[_Err]) -> Any:
            if not isinstance(value, dict):
                if typed:
                    errs.append(((), type_message + _short(value), "object"))
                return value
            if required_set and not value.keys() >= required_set:
                missing = [name for name in required if name not in value]
                if len(missing) == 1:
                    errs.append(((), f"missing required property {_short(missing[0])}", None))
                else:
                    errs.append(((), f"missing required properties {_names(missing)}", None))
            if min_props is not None and len(value) < min_props:
                wanted = _count(min_props, "property", "properties")
                errs.append(((), f"expected at least {wanted}, got {len(value)}", None))
            if max_props is not None and len(value) > max_props:
                wanted = _count(max_props, "property", "properties")
                errs.append(((), f"expected at most {wanted}, got {len(value)}", None))
            for name, needs in dep_required:
                if name in value:
                    absent = [need for need in needs if need not in value]
                    if absent:
                        what = "property" if len(absent) == 1 else "properties"
                        errs.append(
                            ((), f"property {_short(name)} requires {what} {_names(absent)}", None)
                        )
            if names is not None:
                for name in value:
                    scratch: list[_Err] = []
                    names(name, scratch)
                    if scratch:
                        reason = scratch[0][1]
                        errs.append(((), f"invalid property name {_short(name)}: {reason}", None))
            if not walk:
                return value
            out: dict[str, Any] | None = None
            extras: list[str] = []
            for name, item in value.items():
                if patterns:
                    checks = extra_checks(name)
                    if not checks:
                        if forbid:
                            extras.append(name)
                        continue
                    start = len(errs)
                    result = _run_chain(checks, item, errs, coerce)
                else:
                    check = props_get(name)
                    if check is None:
                        if forbid:
                            extras.append(name)
                            continue
                        if additional is None:
                            continue
                        check = additional
                    start = len(errs)
                    result = check(item, errs)
                if len(errs) != start:
                    _prefix(errs, start, name)
                    if len(errs) >= MAX_PROBLEMS:
                        break
                if result is not item:
                    if out is None:
                        out = dict(value)
                    out[name] = result
            if extras:
                if len(extras) == 1:
                    errs.append(((), f"unexpected property {_short(extras[0])}", None))
                else:
                    errs.append(((), f"unexpected properties {_names(extras)}", None))
            return value if out is None else out

        return objects

    def inplace_checks(
        self,
        schema: Mapping[str, Any],
        base: Any,
        coerce: bool,
        where: str,
        node: _Node,
        checks: list[_Check],
    ) -> bool:
        """Append the in-place applicators; True if one may judge a value it did not coerce."""
        order_sensitive = False

        def inplace(sub: Any, path: str, mode: bool = coerce) -> _Node:
            child = self.node(sub, base, mode, path)
            node.edges.append(child)
            return child

        if "$ref" in schema:
            target, target_base = self.resolve(schema["$ref"], base, f"{where}/$ref")
            ref_node = self.node(target, target_base, coerce, f"{where}/$ref")
            node.edges.append(ref_node)
            checks.append(self.check_of(ref_node))
            node.always.append(ref_node)
        if "allOf" in schema:
            for i, sub in enumerate(self.schema_list(schema, "allOf", where)):
                branch = inplace(sub, f"{where}/allOf/{i}")
                checks.append(self.check_of(branch))
                node.always.append(branch)
        for keyword in ("anyOf", "oneOf"):
            if keyword not in schema:
                continue
            subs = self.schema_list(schema, keyword, where)
            plain_nodes = [inplace(s, f"{where}/{keyword}/{i}", False) for i, s in enumerate(subs)]
            node.maybe.extend(plain_nodes)
            plain = [self.check_of(n) for n in plain_nodes]
            coercing = None
            if coerce:
                coercing = [
                    self.check_of(inplace(s, f"{where}/{keyword}/{i}")) for i, s in enumerate(subs)
                ]
            if keyword == "anyOf":
                checks.append(_any_of(plain, coercing))
            else:
                checks.append(_one_of(plain, coercing))
                order_sensitive = True
        if "not" in schema:
            negated = self.check_of(inplace(schema["not"], f"{where}/not", False))
            shown = _short(schema["not"], 100)

            def not_(value: Any, errs: list[_Err]) -> Any:
                if _is_valid(negated, value):
                    errs.append(((), f"must not match the schema {shown}", None))
                return value

            checks.append(not_)
        if "if" in schema:
            cond_node = inplace(schema["if"], f"{where}/if", False)
            then_node = inplace(schema["then"], f"{where}/then") if "then" in schema else None
            else_node = inplace(schema["else"], f"{where}/else") if "else" in schema else None
            node.cond, node.then, node.else_ = cond_node, then_node, else_node
            if then_node is not None or else_node is not None:
                cond = self.check_of(cond_node)
                then = self.check_of(then_node) if then_node is not None else _accept
                else_ = self.check_of(else_node) if else_node is not None else _accept

                def if_(value: Any, errs: list[_Err]) -> Any:
                    return (then if _is_valid(cond, value) else else_)(value, errs)

                checks.append(if_)
                order_sensitive = True
        if "dependentSchemas" in schema:
            dependent: list[tuple[str, _Check]] = []
            for name, sub in self.schema_map(schema, "dependentSchemas", where).items():
                dep_node = inplace(sub, f"{where}/dependentSchemas/{name}")
                node.dependent.append((name, dep_node))
                dependent.append((name, self.check_of(dep_node)))

            def dependent_schemas(value: Any, errs: list[_Err]) -> Any:
                if isinstance(value, dict):
                    for name, check in dependent:
                        if name in value:
                            value = check(value, errs)
                return value

            checks.append(dependent_schemas)
            order_sensitive = True
        return order_sensitive

    def unevaluated(
        self, schema: Mapping[str, Any], base: Any, coerce: bool, where: str, node: _Node
    ) -> list[_Check]:
        result: list[_Check] = []
        if "unevaluatedProperties" not in schema and "unevaluatedItems" not in schema:
            return result
        # Which branches were valid is judged without coercion, on the final value.
        plain = self.node(schema, base, False, where) if coerce else node
        if "unevaluatedProperties" in schema:
            node.uneval_props = True
            result.append(
                self.uneval_props(schema["unevaluatedProperties"], base, coerce, where, plain)
            )
        if "unevaluatedItems" in schema:
            node.uneval_items = True
            result.append(self.uneval_items(schema["unevaluatedItems"], base, coerce, where, plain))
        return result

    def uneval_props(self, sub: Any, base: Any, coerce: bool, where: str, plain: _Node) -> _Check:
        forbid = sub is False
        check = None if forbid else self.sub(sub, base, coerce, f"{where}/unevaluatedProperties")

        def unevaluated_properties(value: Any, errs: list[_Err]) -> Any:
            if not isinstance(value, dict):
                return value
            seen: set[str] = set()
            if _evaluated_props(plain, value, seen, True):
                return value
            rest = [name for name in value if name not in seen]
            if not rest:
                return value
            if forbid or check is None:
                if len(rest) == 1:
                    errs.append(((), f"unexpected property {_short(rest[0])}", None))
                else:
                    errs.append(((), f"unexpected properties {_names(rest)}", None))
                return value
            out: dict[str, Any] | None = None
            for name in rest:
                item = value[name]
                start = len(errs)
                result = check(item, errs)
                if len(errs) != start:
                    _prefix(errs, start, name)
                if result is not item:
                    if out is None:
                        out = dict(value)
                    out[name] = result
            return value if out is None else out

        return unevaluated_properties

    def uneval_items(self, sub: Any, base: Any, coerce: bool, where: str, plain: _Node) -> _Check:
        forbid = sub is False
        check = None if forbid else self.sub(sub, base, coerce, f"{where}/unevaluatedItems")

        def unevaluated_items(value: Any, errs: list[_Err]) -> Any:
            if not isinstance(value, list):
                return value
            seen: set[int] = set()
            if _evaluated_items(plain, value, seen, True):
                return value
            rest = [index for index in range(len(value)) if index not in seen]
            if not rest:
                return value
            if forbid or check is None:
                shown = ", ".join(str(i) for i in rest[:10]) + (", …" if len(rest) > 10 else "")
                what = "item" if len(rest) == 1 else "items"
                errs.append(((), f"unexpected {what} at index {shown}", None))
                return value
            out: list[Any] | None = None
            for index in rest:
                item = value[index]
                start = len(errs)
                result = check(item, errs)
                if len(errs) != start:
                    _prefix(errs, start, index)
                if result is not item:
                    if out is None:
                        out = list(value)
                    out[index] = result
            return value if out is None else out

        return unevaluated_items


def _member_type(value: Any) -> str:
    """The JSON type of an enum or const member, telling integers from other numbers:
    the literal a string must be to become that member."""
    if isinstance(value, int) and not isinstance(value, bool):
        return "integer"
    return _json_type(value)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _any_of(plain: list[_Check], coercing: list[_Check] | None) -> _Check:
    def any_of(value: Any, errs: list[_Err]) -> Any:
        failures: list[list[_Err]] = []
        for check in plain:
            scratch: list[_Err] = []
            check(value, scratch)
            if not scratch:
                return value
            failures.append(scratch)
        if coercing is not None:
            failures = []
            for check in coercing:
                scratch = []
                result = check(value, scratch)
                if not scratch:
                    return result
                failures.append(scratch)
        _report_alternatives(value, failures, errs)
        return value

    return any_of


def _one_of(plain: list[_Check], coercing: list[_Check] | None) -> _Check:
    def too_many(matched: list[int], errs: list[_Err]) -> None:
        which = " and ".join(str(i + 1) for i in matched[:2])
        errs.append(((), f"must match exactly one alternative, but matches options {which}", None))

    def one_of(value: Any, errs: list[_Err]) -> Any:
        matched: list[int] = []
        failures: list[list[_Err]] = []
        for index, check in enumerate(plain):
            scratch: list[_Err] = []
            check(value, scratch)
            if scratch:
                failures.append(scratch)
            else:
                matched.append(index)
        if len(matched) == 1:
            return value
        if matched:
            too_many(matched, errs)
            return value
        if coercing is not None:
            results: list[tuple[int, Any]] = []
            failures = []
            for index, check in enumerate(coercing):
                scratch = []
                result = check(value, scratch)
                if scratch:
                    failures.append(scratch)
                else:
                    results.append((index, result))
            if len(results) == 1:
                return results[0][1]
            if results:
                too_many([index for index, _ in results], errs)
                return value
        _report_alternatives(value, failures, errs)
        return value

    return one_of


def _assemble(
    types: tuple[str, ...] | None,
    desc: str,
    coercer: Callable[[str], Any] | None,
    checks: list[_Check],
    uneval: list[_Check],
    rerun: bool,
) -> _Check:
    """Combine a schema object's type check and keyword checks into one closure."""
    if types is None:
        if not uneval and len(checks) <= 1 and not rerun:
            return checks[0] if checks else _accept
        exact: frozenset[type] = frozenset()
    else:
        exact = frozenset(t for name in types for t in _EXACT_TYPES[name])
    integral_float = types is not None and "integer" in types and "number" not in types
    expected = desc
    type_message = f"expected {desc}, got "
    wants_number = types is not None and ("integer" in types or "number" in types)

    def mismatch(value: Any) -> str:
        if wants_number and type(value) is float and not math.isfinite(value):
            # NaN or an infinity (what a decoder makes of NaN, Infinity or 1e400).
            return f"expected a finite number, got {_short(value)}"
        return type_message + _short(value)

    def type_ok(value: Any) -> bool:
        if integral_float and type(value) is float and value.is_integer():
            return True
        return types is not None and any(_is_type(value, name) for name in types)

    if types is not None and not checks and not uneval:
        if coercer is None:

            def typed(value: Any, errs: list[_Err]) -> Any:
                if type(value) in exact or type_ok(value):
                    return value
                errs.append(((), mismatch(value), expected))
                return value

            return typed

        def typed_coerced(value: Any, errs: list[_Err]) -> Any:
            if integral_float and type(value) is float and value.is_integer():
                return int(value)  # 1.0 is a JSON integer; a handler typed `int` gets an int
            if type(value) in exact or type_ok(value):
                return value
            if type(value) is str:
                converted = coercer(value)
                if converted is not value:
                    return converted
            errs.append(((), mismatch(value), expected))
            return value

        return typed_coerced

    def run(value: Any, errs: list[_Err]) -> Any:
        if coercer is not None and integral_float and type(value) is float and value.is_integer():
            value = int(value)
        if types is not None and type(value) not in exact and not type_ok(value):
            converted = coercer(value) if coercer is not None and type(value) is str else value
            if converted is value:
                errs.append(((), mismatch(value), expected))
                return value
            value = converted
        start = len(errs)
        original = value
        for check in checks:
            value = check(value, errs)
        if uneval and len(errs) == start:
            for check in uneval:
                value = check(value, errs)
        if rerun and value is not original:
            # A keyword coerced part of the value after others had judged the
            # original; judge the coerced value afresh so each keyword agrees.
            del errs[start:]
            final = value
            for check in checks:
                final = check(final, errs)
            if uneval and len(errs) == start:
                for check in uneval:
                    final = check(final, errs)
            value = final
        return value

    return run


def _identity(instance: Any) -> Any:
    return instance


def compile_schema(
    schema: Mapping[str, Any] | bool, *, coerce: bool = False, assert_formats: bool = True
) -> Validator:
    """Compile ``schema`` into a validator that returns the instance or raises ValidationFailed.

    With ``coerce``, strings are converted where the schema wants an integer, number
    or boolean and no string; the result is then a copy, and the input is never changed.
    ``assert_formats`` checks the formats ``_formats.FORMATS`` knows (False leaves every
    ``format`` an annotation, the specification's default).
    Raises SchemaError when the schema is invalid or uses something unsupported.
    """
    compiler = _Compiler(schema, assert_formats)
    try:
        root = compiler.node(schema, schema, coerce, "#")
        compiler.check_loops()
    except RecursionError:
        raise SchemaError("schema is nested too deeply") from None
    check = root.check
    if check is _accept:
        return _identity

    def validate(instance: Any) -> Any:
        errs: list[_Err] = []
        try:
            result = check(instance, errs)
        except RecursionError:
            raise ValidationFailed([Problem((), "value is nested too deeply")]) from None
        if errs:
            raise ValidationFailed(
                [Problem(path, message) for path, message, _ in errs[:MAX_PROBLEMS]]
            )
        return result

    return validate
