"""Checking a caller's answer against the schema a tool asked with.

Both sides check: the server before a handler sees an answer, the client before
it sends one (``protocol.asking`` has the shapes). The requested schema is small
and asked rarely, so it is compiled per question; the answer is checked as it
came (no coercion: an answer is typed JSON, not a model's strings).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .validator import SchemaError, ValidationFailed, compile_schema

__all__ = ["answer_problem"]


def answer_problem(schema: Mapping[str, Any], value: object) -> str | None:
    """Why ``value`` does not answer ``schema`` (a requested schema), or None."""
    try:
        compile_schema(schema)(value)
    except ValidationFailed as exc:
        return exc.describe()
    except SchemaError as exc:
        return f"the requested schema cannot be checked: {exc}"
    return None
