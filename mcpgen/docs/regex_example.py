"""A string that a JSON Schema ``pattern`` matches, for the page's examples.

The pattern is read with Python's own regular-expression parser, which understands
the ECMA-262 syntax patterns use in practice (classes, ranges, groups, alternation,
quantifiers, anchors, ``\\d``/``\\w``/``\\s``), and a shortest string is built from the
parse: each quantifier repeated its minimum number of times (plus ``stretch``, for a
``minLength``), the first branch of each alternation, the first character each class
allows. The caller checks the result with the runtime's ECMA-262 matcher, which has
the last word: a pattern Python reads differently, or cannot read (``\\p{L}``),
yields a string that fails there, or None here.
"""

from __future__ import annotations

import re
from typing import Any, Final

try:  # Python's regular-expression parser (``sre_parse`` before 3.11)
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10 and older are not supported
    _c = _p = None

__all__ = ["pattern_example"]

_LIMIT: Final = 1_000  # characters at most in an example string
_PRINTABLE: Final = [chr(c) for c in range(0x21, 0x7F)] + [" "]
# A character for each category escape (\d, \w, \s and their negations).
_CATEGORY: Final = {
    "CATEGORY_DIGIT": "0", "CATEGORY_NOT_DIGIT": "a", "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": "-", "CATEGORY_SPACE": " ", "CATEGORY_NOT_SPACE": "a",
}


class _Unsupported(Exception):
    pass


def pattern_example(pattern: str, stretch: int = 0) -> str | None:
    """A short string ``pattern`` matches, or None when it cannot be built."""
    try:
        parsed = _p.parse(pattern)
        text = _emit(parsed, stretch)
    except (re.error, _Unsupported, RecursionError, OverflowError, ValueError):
        return None
    return text if len(text) <= _LIMIT else None


def _emit(items: Any, stretch: int) -> str:
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("a" if arg != ord("a") else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_in_class(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            count = low + stretch
            if high is not _c.MAXREPEAT:
                count = min(count, high)
            out.append(_emit(sub, stretch) * count)
        elif name == "SUBPATTERN":
            out.append(_emit(arg[-1], stretch))
        elif name == "ATOMIC_GROUP":
            out.append(_emit(arg, stretch))
        elif name == "BRANCH":
            out.append(_emit(arg[1][0], stretch))
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue  # anchors and lookaround take no characters
        else:  # back-references, conditionals: leave them to someone else
            raise _Unsupported(name)
        if sum(map(len, out)) > _LIMIT:
            raise _Unsupported("too long")
    return "".join(out)


def _in_class(items: list[tuple[Any, Any]]) -> str:
    """The first printable character a class ``[…]`` matches."""
    negate = bool(items) and str(items[0][0]) == "NEGATE"
    if not negate:
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                return chr(arg)
            if name == "RANGE":
                return chr(arg[0])
            if name == "CATEGORY":
                return _CATEGORY.get(str(arg), "a")
        raise _Unsupported("empty class")
    for char in _PRINTABLE:
        if not _class_has(items[1:], char):
            return char
    raise _Unsupported("class excludes every printable character")


def _class_has(items: list[tuple[Any, Any]], char: str) -> bool:
    code = ord(char)
    for op, arg in items:
        name = str(op)
        if name == "LITERAL" and arg == code:
            return True
        if name == "RANGE" and arg[0] <= code <= arg[1]:
            return True
        if name == "CATEGORY":
            probe = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D",
                     "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W",
                     "CATEGORY_SPACE": r"\s", "CATEGORY_NOT_SPACE": r"\S"}.get(str(arg))
            if probe is None or re.fullmatch(probe, char, re.ASCII):
                return True
    return False
