"""The pieces compiled checks are assembled from: accept/reject, running a chain of
checks, the compiled node of one (sub)schema, the annotations ``unevaluated*`` reads,
and the ``anyOf``/``oneOf`` combinators with their merged messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .errors import MAX_PROBLEMS, Problem
from .regex import EcmaRegex
from .values import EXACT_TYPES, Check, Err, is_type, short


def accept(value: Any, errs: list[Err]) -> Any:
    return value


def reject(value: Any, errs: list[Err]) -> Any:
    errs.append(((), "no value is allowed here", None))
    return value


def prefix_paths(errs: list[Err], start: int, step: str | int) -> None:
    for i in range(start, len(errs)):
        path, message, expected = errs[i]
        errs[i] = ((step, *path), message, expected)


def run_chain(
    checks: Sequence[Check],
    uneval: Sequence[Check],
    value: Any,
    errs: list[Err],
    rerun: bool,
) -> Any:
    """Apply several checks to one value in turn, then (if they found nothing) the
    ``uneval`` ones; with ``rerun``, a value one of them coerced is judged afresh from
    the start, so that every check agrees on the final value."""
    start = len(errs)
    result = value
    for check in checks:
        result = check(result, errs)
    if uneval and len(errs) == start:
        for check in uneval:
            result = check(result, errs)
    if rerun and result is not value:
        # A check coerced part of the value after others had judged the original.
        del errs[start:]
        return run_chain(checks, uneval, result, errs, False)
    return result


def is_valid(check: Check, value: Any) -> bool:
    scratch: list[Err] = []
    check(value, scratch)
    return not scratch


def _report_alternatives(value: Any, failures: list[list[Err]], errs: list[Err]) -> None:
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
        errs.append(((), f"expected {want_text}, got {short(value)}", want_text))
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


class Node:
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
        self.check: Check = accept
        self.ready = False
        self.props: frozenset[str] = frozenset()
        self.patterns: tuple[EcmaRegex, ...] = ()
        self.all_props = False
        self.uneval_props = False
        self.prefix = 0
        self.all_items = False
        self.uneval_items = False
        self.contains: Node | None = None
        self.always: list[Node] = []
        self.maybe: list[Node] = []
        self.cond: Node | None = None
        self.then: Node | None = None
        self.else_: Node | None = None
        self.dependent: list[tuple[str, Node]] = []
        # Subschemas applied to the same value (not to a part of it), for loop detection.
        self.edges: list[Node] = []
        self.where = "#"


def evaluated(node: Node, value: Any, seen: set[Any], top: bool, props: bool) -> bool:
    """Collect what ``node`` evaluates in ``value`` (which it accepts) into ``seen``:
    property names (``props``, for ``unevaluatedProperties``) or array indices (for
    ``unevaluatedItems``). Returns True as soon as all of ``value`` is known evaluated.
    """
    if props:
        if node.all_props or (node.uneval_props and not top):
            return True
        seen.update(name for name in node.props if name in value)
        if node.patterns:
            seen.update(name for name in value if any(p.search(name) for p in node.patterns))
    else:
        if node.all_items or (node.uneval_items and not top):
            return True
        seen.update(range(min(node.prefix, len(value))))
        if node.contains is not None:
            check = node.contains.check
            seen.update(i for i, item in enumerate(value) if is_valid(check, item))
    if not node.edges:
        return False  # no in-place subschema (most nodes): nothing more to walk
    return any(evaluated(sub, value, seen, False, props) for sub in _applied(node, value, props))


def _applied(node: Node, value: Any, props: bool) -> Iterator[Node]:
    """The in-place subschemas of ``node`` that apply to ``value``, in order, lazily:
    ``$ref``/``allOf``, the valid ``anyOf``/``oneOf`` branches, the ``if`` (when it
    holds) and its ``then`` or else its ``else``, and (objects) ``dependentSchemas``."""
    yield from node.always
    for sub in node.maybe:
        if is_valid(sub.check, value):
            yield sub
    if node.cond is not None:
        if is_valid(node.cond.check, value):
            yield node.cond
            if node.then is not None:
                yield node.then
        elif node.else_ is not None:
            yield node.else_
    if props:
        for name, sub in node.dependent:
            if name in value:
                yield sub


def each(value: Any, pairs: Iterable[tuple[Any, Check]], errs: list[Err]) -> Any:
    """Run each check on its member of ``value`` (a list by index or a dict by name):
    a problem's path starts with the member's key, and a member a check coerced goes
    into a copy of ``value``, made at the first (the input is never changed)."""
    out: Any = None
    for key, check in pairs:
        item = value[key]
        start = len(errs)
        result = check(item, errs)
        if len(errs) != start:
            prefix_paths(errs, start, key)
            if len(errs) >= MAX_PROBLEMS:
                break
        if result is not item:
            if out is None:
                out = value.copy()
            out[key] = result
    return value if out is None else out


def member_type(value: Any) -> str:
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


def any_of_check(plain: list[Check], coercing: list[Check] | None) -> Check:
    def any_of(value: Any, errs: list[Err]) -> Any:
        failures: list[list[Err]] = []
        for check in plain:
            scratch: list[Err] = []
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


def one_of_check(plain: list[Check], coercing: list[Check] | None) -> Check:
    def too_many(matched: list[int], errs: list[Err]) -> None:
        which = " and ".join(str(i + 1) for i in matched[:2])
        errs.append(((), f"must match exactly one alternative, but matches options {which}", None))

    def one_of(value: Any, errs: list[Err]) -> Any:
        matched: list[int] = []
        failures: list[list[Err]] = []
        for index, check in enumerate(plain):
            scratch: list[Err] = []
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


def assemble(
    types: tuple[str, ...] | None,
    desc: str,
    coercer: Callable[[str], Any] | None,
    checks: list[Check],
    uneval: list[Check],
    rerun: bool,
) -> Check:
    """Combine a schema object's type check and keyword checks into one closure."""
    if types is None and not uneval and len(checks) <= 1 and not rerun:
        return checks[0] if checks else accept
    exact, integral_float, mismatch, type_ok = _type_test(types, desc)
    expected = desc
    if types is not None and not checks and not uneval:
        return _typed_only(exact, integral_float, mismatch, type_ok, expected, coercer)

    def run(value: Any, errs: list[Err]) -> Any:
        if coercer is not None and integral_float and type(value) is float and value.is_integer():
            value = int(value)
        if types is not None and type(value) not in exact and not type_ok(value):
            converted = coercer(value) if coercer is not None and type(value) is str else value
            if converted is value:
                errs.append(((), mismatch(value), expected))
                return value
            value = converted
        # run_chain's first pass, inlined: every schema object with keywords runs it
        start = len(errs)
        original = value
        for check in checks:
            value = check(value, errs)
        if uneval and len(errs) == start:
            for check in uneval:
                value = check(value, errs)
        if rerun and value is not original:
            del errs[start:]
            value = run_chain(checks, uneval, value, errs, False)
        return value

    return run


def _type_test(
    types: tuple[str, ...] | None, desc: str
) -> tuple[frozenset[type], bool, Callable[[Any], str], Callable[[Any], bool]]:
    """For ``types``: the Python types that pass outright, whether a float with an
    integral value counts as an integer, the message for a value of another type,
    and the full type test."""
    exact: frozenset[type] = frozenset()
    if types is not None:
        exact = frozenset(t for name in types for t in EXACT_TYPES[name])
    integral_float = types is not None and "integer" in types and "number" not in types
    type_message = f"expected {desc}, got "
    wants_number = types is not None and ("integer" in types or "number" in types)

    def mismatch(value: Any) -> str:
        if wants_number and type(value) is float and not math.isfinite(value):
            # NaN or an infinity (what a decoder makes of NaN, Infinity or 1e400).
            return f"expected a finite number, got {short(value)}"
        return type_message + short(value)

    def type_ok(value: Any) -> bool:
        if integral_float and type(value) is float and value.is_integer():
            return True
        return types is not None and any(is_type(value, name) for name in types)

    return exact, integral_float, mismatch, type_ok


def _typed_only(
    exact: frozenset[type],
    integral_float: bool,
    mismatch: Callable[[Any], str],
    type_ok: Callable[[Any], bool],
    expected: str,
    coercer: Callable[[str], Any] | None,
) -> Check:
    """A schema object that only states a type (the commonest leaf)."""
    if coercer is None:

        def typed(value: Any, errs: list[Err]) -> Any:
            if type(value) in exact or type_ok(value):
                return value
            errs.append(((), mismatch(value), expected))
            return value

        return typed

    def typed_coerced(value: Any, errs: list[Err]) -> Any:
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


def identity(instance: Any) -> Any:
    return instance
