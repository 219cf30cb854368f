"""The one way a string from a spec reaches generated source code.

A spec is often written by another team, so its strings are untrusted input to
a code generator: pasting a description into a template could close a string
literal and inject code (openapi-python-client had exactly this advisory).
Every spec string therefore becomes a Python literal here, through ``repr``-
grade escaping, and templates never interpolate spec text any other way.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["PySource", "py_docstring", "py_literal", "py_str"]


class PySource(str):
    """Python source that ``py_literal`` writes as it is, not quoted: a name mcpgen
    itself defines (never text from a spec)."""


# Characters that may stay raw inside a triple-quoted docstring.
_DOCSTRING_SAFE = frozenset("\n")


def py_str(text: str) -> str:
    """A Python string literal whose value is exactly ``text``."""
    literal = repr(text)
    # repr() picks single quotes; prefer double quotes (black's style) when that is free.
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1].replace("\\'", "'") + '"'
    return literal


def py_docstring(text: str) -> str:
    """A docstring literal for ``text``: triple-quoted and readable when that is
    safe, else a plain escaped literal (the value is the same either way)."""
    unsafe = (
        '"""' in text
        or "\\" in text
        or text.endswith('"')
        or any((ord(ch) < 32 and ch not in _DOCSTRING_SAFE) or ord(ch) == 127 for ch in text)
        or any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        or "\u2028" in text
        or "\u2029" in text
        or "\x85" in text
        or "\x0c" in text
    )
    if unsafe:
        return py_str(text)
    return '"""' + text + '"""'


def py_literal(value: Any) -> str:
    """A Python expression equal to the JSON value ``value``."""
    if isinstance(value, PySource):
        return str(value)
    if isinstance(value, str):
        return py_str(value)
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("JSON has no NaN or Infinity")
        # black writes an exponent without its plus sign (1e16, not 1e+16)
        return repr(value).replace("e+", "e")
    if isinstance(value, dict):
        items = ", ".join(f"{py_str(str(key))}: {py_literal(item)}" for key, item in value.items())
        return "{" + items + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(py_literal(item) for item in value) + "]"
    raise TypeError(f"not a JSON value: {type(value).__name__}")
