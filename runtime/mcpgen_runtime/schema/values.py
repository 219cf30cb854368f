"""What the validator knows of JSON values: their types as JSON sees them (``1.0`` is an
integer, ``True`` is not), equality for enum/const/uniqueItems, ``multipleOf`` (exact, or up to float rounding),
the string coercions a model's arguments get, and short readable reprs for messages.

``Err`` and ``Check`` are the types every compiled check is built from.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

_REPR_LIMIT: Final = 60


# An error while validating: (path relative to the check that made it, message, what
# was expected).  The third field is set only for mismatches of the value as a whole
# (type, enum, const), so failed anyOf branches can be merged into "expected A or B".
Err = tuple[tuple[str | int, ...], str, str | None]


Check = Callable[[Any, list[Err]], Any]


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")


def render_path(path: Iterable[str | int]) -> str:
    """``("items", 0, "date")`` → ``items[0].date``; odd keys are quoted in brackets."""
    parts: list[str] = []
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif isinstance(step, str) and _IDENTIFIER.match(step):
            parts.append(f".{step}" if parts else step)
        else:
            parts.append(f"[{short(step, 40)}]")
    return "".join(parts)


def short(value: Any, limit: int = _REPR_LIMIT) -> str:
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


def name_list(names: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(short(name, 40) for name in names[:limit])
    return shown + (", …" if len(names) > limit else "")


def counted(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


_TRUE_KEY: Final = ("bool", True)


_FALSE_KEY: Final = ("bool", False)


def json_key(value: Any) -> Any:
    """A hashable stand-in with JSON equality: 1 == 1.0, but True != 1 and False != 0."""
    if value is True:
        return _TRUE_KEY
    if value is False:
        return _FALSE_KEY
    if isinstance(value, Mapping):
        return ("object", frozenset((k, json_key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(json_key(v) for v in value))
    return value


_NONE_TYPE: Final = type(None)


EXACT_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "null": (_NONE_TYPE,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int,),  # a float is a number only when finite: judged by is_type
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def is_type(value: Any, name: str) -> bool:
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


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_fraction(value: float) -> Fraction:
    # The decimal literal, not the binary float, is what the author meant:
    # 19.99 is a multiple of 0.01 even though 19.99 / 0.01 != 1999 in floats.
    if isinstance(value, float) and not value.is_integer():
        return Fraction(repr(value))
    return Fraction(int(value))


# multipleOf with a float value: exact on the decimal literals (19.99 is a multiple of
# 0.01, though 19.99 / 0.01 is 1998.9999999999998 in floats), or, for what float
# arithmetic computed (7 * 0.1 is 0.7000000000000001), a quotient within
# FLOAT_MULTIPLE_TOLERANCE of a whole number of steps, relative to that number. The
# tolerance is a few thousand units in the last place: a handler's rounding passes,
# a value that differs in a digit anyone wrote (0.70000000001) does not. It applies
# to quotients below 2**32 only; beyond, a float's own spacing is near a step, and
# the check is exact (1e308 is no multiple of 0.123456789). Peers agree on these:
# Python's jsonschema and Ajv divide in floats (0.7000000000000001 / 0.1 == 7.0) and
# accept, Ajv's ``multipleOfPrecision`` is this idea with an absolute tolerance.
FLOAT_MULTIPLE_TOLERANCE: Final = 2.0**-40
_TOLERATED_QUOTIENT: Final = 2.0**32


def _near_multiple(value: float, step: float) -> bool:
    """Is the float ``value`` a whole number of ``step``s up to float rounding?"""
    quotient = value / step
    if not math.isfinite(quotient) or abs(quotient) >= _TOLERATED_QUOTIENT:
        return False
    return abs(quotient - round(quotient)) <= abs(quotient) * FLOAT_MULTIPLE_TOLERANCE


def multiple_of(step: float) -> Callable[[float], bool]:
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
            return (_as_fraction(value) / frac_step).denominator == 1 or _near_multiple(
                value, int_step
            )

        return check_int_step

    frac = _as_fraction(step)

    def check_fraction(value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (
            (_as_fraction(value) / frac).denominator == 1
            or isinstance(value, float)
            and _near_multiple(value, step)
        )

    return check_fraction


MAX_COERCED_LENGTH: Final = 100


_INT_TEXT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")


_NUMBER_TEXT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def make_coercer(integer: bool, number: bool, boolean: bool) -> Callable[[str], Any]:
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
