"""What a tool's question to its caller looks like on the wire, for both sides.

A handler asks with ``ctx.ask(message, schema)``; a client answers through its
``on_input`` callback. Both eras carry the same thing, an elicitation in form
mode: a message and a *requested schema*, a flat object whose properties are
primitives (string, with an optional ``format`` among email/uri/date/date-time or
an ``enum``/``oneOf`` of choices; number; integer; boolean; and, at 2025-11-25, an
array of enumerated strings), and an answer with an ``action`` (accept, decline,
cancel) and, when accepted, ``content`` matching the schema. 2025-06-18 and
2025-11-25 send it as an ``elicitation/create`` request; 2026-07-28 as an entry
of an ``input_required`` result's ``inputRequests``, answered in the retried call's
``inputResponses``.

The outcome a handler branches on, and a callback may return, is one of three
small types: ``Accepted(value)``, ``Declined()``, ``Dismissed()`` (MCP's
``cancel``: the user closed the prompt without choosing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ELICITATION_VERSIONS",
    "Accepted",
    "Answer",
    "Declined",
    "Dismissed",
    "answer_from_wire",
    "answer_to_wire",
    "schema_problem",
]

# Handshake revisions that define elicitation/create (form mode).
ELICITATION_VERSIONS = frozenset({"2025-06-18", "2025-11-25"})


@dataclass(frozen=True)
class Accepted:
    """The caller answered: ``value`` matches the requested schema."""

    value: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Declined:
    """The caller (or its user) refused to answer, or cannot answer at all (no
    ``on_input``, no elicitation capability, an answer that never came)."""


@dataclass(frozen=True)
class Dismissed:
    """The user dismissed the question without choosing (MCP's ``cancel`` action)."""


Answer = Accepted | Declined | Dismissed

_COMMON = frozenset({"type", "title", "description", "default"})
_ALLOWED: dict[str, frozenset[str]] = {
    "string": _COMMON | {"minLength", "maxLength", "format", "pattern", "enum", "enumNames",
                         "oneOf"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"items", "minItems", "maxItems", "uniqueItems"},
}  # fmt: skip
_FORMATS = frozenset({"email", "uri", "date", "date-time"})


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` cannot be asked for (elicitation takes a flat object of
    primitives), or None when it can."""
    if not isinstance(schema, Mapping):
        return "the schema must be a JSON object"
    unknown = sorted(set(schema) - {"type", "properties", "required", "title", "description",
                                    "$schema"})  # fmt: skip
    if schema.get("type") != "object":
        return 'the schema must be {"type": "object", "properties": {...}}'
    if unknown:
        return f"the schema may not use {', '.join(map(repr, unknown))} at its root"
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        return "'properties' must be an object"
    for name, prop in properties.items():
        problem = _property_problem(prop)
        if problem is not None:
            return f"property {name!r}: {problem}"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(r in properties for r in required):
        return "'required' must list names of its properties"
    return None


def _property_problem(prop: object) -> str | None:
    if not isinstance(prop, Mapping):
        return "must be an object schema"
    kind = prop.get("type")
    allowed = _ALLOWED.get(kind) if isinstance(kind, str) else None
    if allowed is None:
        return "type must be one of string, number, integer, boolean (or an array of choices)"
    extra = sorted(set(prop) - allowed)
    if extra:
        return f"a {kind} may not use {', '.join(map(repr, extra))} (elicitation is flat)"
    if kind == "string" and prop.get("format", "email") not in _FORMATS:
        return f"format must be one of {', '.join(sorted(_FORMATS))}"
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping) or not ("enum" in items or "anyOf" in items):
            return "an array must be a multiple choice: items with an enum or anyOf of consts"
    return None


def answer_to_wire(answer: Answer) -> dict[str, Any]:
    """The ``ElicitResult`` that carries ``answer``."""
    if isinstance(answer, Accepted):
        return {"action": "accept", "content": dict(answer.value)}
    return {"action": "decline" if isinstance(answer, Declined) else "cancel"}


def answer_from_wire(result: object) -> Answer | str:
    """The answer an ``ElicitResult`` carries, or why it is not one (the content is
    not yet checked against the schema)."""
    if not isinstance(result, Mapping):
        return "an answer must be an object with an 'action'"
    action = result.get("action")
    if action == "decline":
        return Declined()
    if action == "cancel":
        return Dismissed()
    if action != "accept":
        return "'action' must be 'accept', 'decline' or 'cancel'"
    content = result.get("content", {})
    if not isinstance(content, dict):
        return "an accepted answer's 'content' must be an object"
    return Accepted(content)
