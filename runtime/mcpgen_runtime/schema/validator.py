"""A JSON Schema 2020-12 validator that compiles a schema once into a tree of closures.

It checks every tool call, optionally coercing the strings a model sends in place of
numbers and booleans, and reports problems in words a model can act on. ``format`` is
asserted for the formats ``schema.formats`` knows (an annotation for any other).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from .compiler import Here
from .containers import ContainerKeywords
from .errors import MAX_PROBLEMS, Problem, SchemaError, ValidationFailed
from .formats import format_checker
from .nodes import (
    Node,
    accept,
    any_of_check,
    assemble,
    identity,
    is_valid,
    member_type,
    one_of_check,
)
from .values import (
    EXACT_TYPES,
    MAX_COERCED_LENGTH,
    Check,
    Err,
    counted,
    is_number,
    json_key,
    make_coercer,
    multiple_of,
    short,
)

__all__ = [
    "MAX_COERCED_LENGTH",
    "MAX_PROBLEMS",
    "Problem",
    "SchemaError",
    "ValidationFailed",
    "Validator",
    "compile_schema",
]

Validator = Callable[[Any], Any]


# --------------------------------------------------------------------------- reprs


# ------------------------------------------------------------------ JSON semantics


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

"""Characters at most in a string converted to a number (default 100): longer text is
not a number anyone meant, and converting it could cost time."""


# --------------------------------------------------------------- shared checks


# ----------------------------------------------------------------------- nodes


_TYPE_NAMES: Final = frozenset(EXACT_TYPES)
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


class _Compiler(ContainerKeywords):
    # -- plumbing ---------------------------------------------------------------

    # -- keyword values ---------------------------------------------------------

    # -- one schema object ------------------------------------------------------

    def build(self, here: Here) -> Check:
        schema, coerce, where = here.schema, here.coerce, here.where
        for keyword in _UNSUPPORTED:
            if keyword in schema:
                raise SchemaError(f"{where}: {keyword} is not supported")
        if schema is not self.root and isinstance(schema.get("$id"), str):
            here = Here(schema, schema, coerce, where, here.node)  # a resource of its own

        types = self.types(schema, where)
        allowed = _allowed_values(schema, where)
        coercer = _coercer_for(types, allowed) if coerce else None

        checks: list[Check] = []
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
            checks.append(self.array_group(here))
        fuse_object = types == ("object",) and not checks
        if any(k in schema for k in _OBJECT_KEYWORDS):
            checks.append(self.object_group(here, fuse_object))
        else:
            fuse_object = False

        order_sensitive = self.inplace_checks(here, checks)
        uneval = self.unevaluated(here)

        if fuse_object and len(checks) == 1 and not uneval:
            return checks[0]
        desc = " or ".join(types) if types is not None else ""
        rerun = coerce and (len(checks) + len(uneval) > 1 or order_sensitive)
        return assemble(types, desc, coercer if types is not None else None, checks, uneval, rerun)

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
    ) -> Check:
        keys = frozenset(json_key(v) for v in values)
        if const:
            expected = short(values[0])
        else:
            expected = f"one of {short(values, 200)}"

        def enum(value: Any, errs: list[Err]) -> Any:
            if json_key(value) in keys:
                return value
            if coercer is not None and type(value) is str:
                converted = coercer(value)
                if converted is not value and json_key(converted) in keys:
                    return converted
            errs.append(((), f"expected {expected}, got {short(value)}", expected))
            return value

        return enum

    def number_group(self, schema: Mapping[str, Any], where: str) -> Check:
        minimum = self.number(schema, "minimum", where)
        maximum = self.number(schema, "maximum", where)
        ex_min = self.number(schema, "exclusiveMinimum", where)
        ex_max = self.number(schema, "exclusiveMaximum", where)
        step = self.number(schema, "multipleOf", where)
        if step is not None and step <= 0:
            raise SchemaError(f"{where}/multipleOf: must be greater than 0")
        is_multiple = multiple_of(step) if step is not None else None

        def numbers(value: Any, errs: list[Err]) -> Any:
            kind = type(value)
            if kind is not int and kind is not float and not is_number(value):
                return value
            if kind is float and not math.isfinite(value):
                errs.append(((), f"expected a finite number, got {short(value)}", None))
                return value
            if minimum is not None and value < minimum:
                errs.append(((), f"must be >= {minimum!r}, got {short(value)}", None))
            if maximum is not None and value > maximum:
                errs.append(((), f"must be <= {maximum!r}, got {short(value)}", None))
            if ex_min is not None and value <= ex_min:
                errs.append(((), f"must be > {ex_min!r}, got {short(value)}", None))
            if ex_max is not None and value >= ex_max:
                errs.append(((), f"must be < {ex_max!r}, got {short(value)}", None))
            if is_multiple is not None and not is_multiple(value):
                errs.append(((), f"must be a multiple of {step!r}, got {short(value)}", None))
            return value

        return numbers

    def string_group(self, schema: Mapping[str, Any], where: str) -> Check:
        min_length = self.count(schema, "minLength", where)
        max_length = self.count(schema, "maxLength", where)
        source = schema.get("pattern")
        regex = self.regex(source, f"{where}/pattern") if "pattern" in schema else None
        shown = short(source, 80)

        def strings(value: Any, errs: list[Err]) -> Any:
            if not isinstance(value, str):
                return value
            if min_length is not None and len(value) < min_length:
                errs.append(
                    ((), f"must be at least {counted(min_length, 'character', 'characters')}", None)
                )
            if max_length is not None and len(value) > max_length:
                errs.append(
                    ((), f"must be at most {counted(max_length, 'character', 'characters')}", None)
                )
            if regex is not None and not regex.search(value):
                errs.append(((), f"must match pattern {shown}, got {short(value)}", None))
            return value

        return strings

    def format_check(self, name: Any, where: str) -> Check | None:
        if not isinstance(name, str):
            raise SchemaError(f"{where}/format: must be a string")
        known = (
            format_checker(name)
            if self.assert_formats and name not in self.unknown_formats
            else None
        )
        if known is None:
            return None  # an annotation: any string passes
        check, expected = known.check, known.expected

        def string_format(value: Any, errs: list[Err]) -> Any:
            if isinstance(value, str) and not check(value):
                errs.append(((), f"expected {expected}, got {short(value)}", None))
            return value

        return string_format

    def inplace_checks(self, here: Here, checks: list[Check]) -> bool:
        """Append the in-place applicators; True if one may judge a value it did not coerce."""
        schema, base, coerce, where, node = here.parts()
        order_sensitive = False

        def inplace(sub: Any, path: str, mode: bool = coerce) -> Node:
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
            if keyword in schema:
                checks.append(self.alternatives(here, keyword, inplace))
                order_sensitive = order_sensitive or keyword == "oneOf"
        if "not" in schema:
            negated = self.check_of(inplace(schema["not"], f"{where}/not", False))
            checks.append(_not(negated, short(schema["not"], 100)))
        if "if" in schema:
            conditional = self.conditional(here, inplace)
            if conditional is not None:
                checks.append(conditional)
                order_sensitive = True
        if "dependentSchemas" in schema:
            dependent: list[tuple[str, Check]] = []
            for name, sub in self.schema_map(schema, "dependentSchemas", where).items():
                dep_node = inplace(sub, f"{where}/dependentSchemas/{name}")
                node.dependent.append((name, dep_node))
                dependent.append((name, self.check_of(dep_node)))
            checks.append(_dependent_schemas(dependent))
            order_sensitive = True
        return order_sensitive

    def alternatives(self, here: Here, keyword: str, inplace: Callable[..., Node]) -> Check:
        """``anyOf`` or ``oneOf``: branches judged without coercion first, then (when
        coercing) branches that coerce."""
        where = here.where
        subs = self.schema_list(here.schema, keyword, where)
        plain_nodes = [inplace(s, f"{where}/{keyword}/{i}", False) for i, s in enumerate(subs)]
        here.node.maybe.extend(plain_nodes)
        plain = [self.check_of(n) for n in plain_nodes]
        coercing = None
        if here.coerce:
            coercing = [
                self.check_of(inplace(s, f"{where}/{keyword}/{i}")) for i, s in enumerate(subs)
            ]
        return (
            any_of_check(plain, coercing) if keyword == "anyOf" else one_of_check(plain, coercing)
        )

    def conditional(self, here: Here, inplace: Callable[..., Node]) -> Check | None:
        """``if``/``then``/``else`` (None: neither branch, so nothing to check)."""
        schema, where, node = here.schema, here.where, here.node
        cond_node = inplace(schema["if"], f"{where}/if", False)
        then_node = inplace(schema["then"], f"{where}/then") if "then" in schema else None
        else_node = inplace(schema["else"], f"{where}/else") if "else" in schema else None
        node.cond, node.then, node.else_ = cond_node, then_node, else_node
        if then_node is None and else_node is None:
            return None
        cond = self.check_of(cond_node)
        then = self.check_of(then_node) if then_node is not None else accept
        else_ = self.check_of(else_node) if else_node is not None else accept

        def if_(value: Any, errs: list[Err]) -> Any:
            return (then if is_valid(cond, value) else else_)(value, errs)

        return if_


def _allowed_values(schema: Mapping[str, Any], where: str) -> dict[str, list[Any]]:
    """``enum`` and ``const`` as lists of the values they allow, by keyword."""
    allowed: dict[str, list[Any]] = {}
    for keyword in ("enum", "const"):
        if keyword in schema:
            values = [schema["const"]] if keyword == "const" else schema["enum"]
            if keyword == "enum" and (
                isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence)
            ):
                raise SchemaError(f"{where}/enum: must be an array")
            allowed[keyword] = list(values)
    return allowed


def _coercer_for(
    types: tuple[str, ...] | None, allowed: Mapping[str, list[Any]]
) -> Callable[[str], Any] | None:
    """Coerce only where the schema wants a number or boolean and would refuse any
    string; without "type", enum/const say what the schema wants."""
    accepted = set(types) if types is not None else None
    if accepted is None and allowed:
        accepted = {member_type(v) for values in allowed.values() for v in values}
    if accepted is None or "string" in accepted:
        return None
    integer = "integer" in accepted
    number = "number" in accepted
    boolean = "boolean" in accepted
    if integer or number or boolean:
        return make_coercer(integer, number, boolean)
    return None


def _not(negated: Check, shown: str) -> Check:
    def not_(value: Any, errs: list[Err]) -> Any:
        if is_valid(negated, value):
            errs.append(((), f"must not match the schema {shown}", None))
        return value

    return not_


def _dependent_schemas(dependent: list[tuple[str, Check]]) -> Check:
    def dependent_schemas(value: Any, errs: list[Err]) -> Any:
        if isinstance(value, dict):
            for name, check in dependent:
                if name in value:
                    value = check(value, errs)
        return value

    return dependent_schemas


def compile_schema(
    schema: Mapping[str, Any] | bool, *, coerce: bool = False, assert_formats: bool = True
) -> Validator:
    """Compile ``schema`` into a validator that returns the instance or raises ValidationFailed.

    With ``coerce``, strings are converted where the schema wants an integer, number
    or boolean and no string; the result is then a copy, and the input is never changed.
    ``assert_formats`` checks the formats ``schema.formats.FORMATS`` knows (False leaves every
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
    if check is accept:
        return identity

    def validate(instance: Any) -> Any:
        errs: list[Err] = []
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
