"""Structured results of any JSON type (SEP-2106), and how the earlier revisions,
whose ``structuredContent`` must be an object, carry them.

At 2026-07-28 a tool's ``outputSchema`` may be any JSON Schema (an array, a string, a
union) and ``structuredContent`` is the value itself. 2025-06-18 and 2025-11-25 require
an object: there a tool whose schema is not an object one (``needs_wrapper``) publishes
``{"type": "object", "properties": {"result": <schema>}, "required": ["result"]}``,
with ``_meta["io.mcpgen/wrappedResult"]`` naming the member (``"result"``) so that a
reader can tell a wrapper from a tool that returns an object with a ``result`` field,
and sends ``{"result": value}`` (its JSON text too). The contract (a generated
package's ``TOOLS``, fingerprints, ``mcpgen diff``) always holds the tool's own
schema; ``unwrap_descriptor`` turns a wrapped listing back into it, so a tool has one
form whichever revision listed it, and the typed client returns the same value on
every revision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .constants import META_MCPGEN_PREFIX
from .revisions import MODERN_VERSIONS

__all__ = [
    "WRAP_MEMBER",
    "WRAP_META_KEY",
    "descriptor_for_revision",
    "needs_wrapper",
    "plain_value",
    "unwrap_descriptor",
    "unwrap_value",
    "wrap_value",
    "wrapped_schema",
]

WRAP_META_KEY = META_MCPGEN_PREFIX + "wrappedResult"
WRAP_MEMBER = "result"
_ROOT_ONLY = ("$schema", "$id", "$defs")  # stay at the wrapper's root, where refs find them


def needs_wrapper(output_schema: Any) -> bool:
    """Whether revisions before 2026-07-28 need ``output_schema`` wrapped: its root
    is not ``"type": "object"``."""
    if isinstance(output_schema, bool):
        return True
    return isinstance(output_schema, Mapping) and output_schema.get("type") != "object"


def wrapped_schema(output_schema: Any) -> dict[str, Any]:
    """The object schema an earlier revision publishes for ``output_schema``."""
    if not isinstance(output_schema, Mapping):
        inner: Any = output_schema
        root: dict[str, Any] = {}
    else:
        inner = {k: v for k, v in output_schema.items() if k not in _ROOT_ONLY}
        root = {k: output_schema[k] for k in _ROOT_ONLY if k in output_schema}
    return {
        **{k: v for k, v in root.items() if k != "$defs"},
        "type": "object",
        "properties": {WRAP_MEMBER: inner},
        "required": [WRAP_MEMBER],
        **({"$defs": root["$defs"]} if "$defs" in root else {}),
    }


def descriptor_for_revision(descriptor: Mapping[str, Any], version: str) -> Mapping[str, Any]:
    """``descriptor`` as ``version`` lists it: before 2026-07-28 a non-object output
    schema wrapped and marked; otherwise unchanged."""
    output = descriptor.get("outputSchema")
    if version in MODERN_VERSIONS or output is None or not needs_wrapper(output):
        return descriptor
    meta = descriptor.get("_meta")
    return {
        **descriptor,
        "outputSchema": wrapped_schema(output),
        "_meta": {**(meta if isinstance(meta, Mapping) else {}), WRAP_META_KEY: WRAP_MEMBER},
    }


def unwrap_descriptor(descriptor: Mapping[str, Any]) -> Mapping[str, Any]:
    """A listed tool in its own form: a marked wrapper replaced by the schema it
    wraps (the mark dropped, and ``_meta`` with it when nothing else was there)."""
    meta = descriptor.get("_meta")
    output = descriptor.get("outputSchema")
    if not isinstance(meta, Mapping) or meta.get(WRAP_META_KEY) != WRAP_MEMBER:
        return descriptor
    if not isinstance(output, Mapping) or not isinstance(output.get("properties"), Mapping):
        return descriptor
    inner = output["properties"].get(WRAP_MEMBER)
    if inner is None:
        return descriptor
    root = {k: output[k] for k in _ROOT_ONLY if k in output}
    unwrapped = dict(descriptor)
    unwrapped["outputSchema"] = (
        {**{k: v for k, v in root.items() if k != "$defs"}, **inner, **_defs(root)}
        if isinstance(inner, Mapping)
        else inner
    )
    rest = {k: v for k, v in meta.items() if k != WRAP_META_KEY}
    if rest:
        unwrapped["_meta"] = rest
    else:
        del unwrapped["_meta"]
    return unwrapped


def _defs(root: Mapping[str, Any]) -> dict[str, Any]:
    return {"$defs": root["$defs"]} if "$defs" in root else {}


def wrap_value(value: Any) -> dict[str, Any]:
    """The ``structuredContent`` an earlier revision sends for ``value``."""
    return {WRAP_MEMBER: value}


def unwrap_value(structured: Any) -> tuple[bool, Any]:
    """(True, the value) of a wrapper ``structuredContent``; (False, None) when it is
    not one."""
    if isinstance(structured, dict) and set(structured) == {WRAP_MEMBER}:
        return True, structured[WRAP_MEMBER]
    return False, None


# JSON's scalars by exact type: most of a structured value, passed through untouched
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_value(value: Any) -> Any:
    """A handler's structured value as JSON data: models dumped (by alias, what was
    set), inside lists and dicts too. A plain dict or list whose items are scalars
    is returned as it is, with no copy (the usual case, on every call's path)."""
    kind = type(value)
    if kind in _JSON_SCALARS:
        return value
    if kind is dict:
        for item in value.values():
            if type(item) not in _JSON_SCALARS:
                return {key: plain_value(item) for key, item in value.items()}
        return value
    if kind is list:
        for item in value:
            if type(item) not in _JSON_SCALARS:
                return [plain_value(item) for item in value]
        return value
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list | tuple):
        return [plain_value(item) for item in value]
    if isinstance(value, dict):
        return {key: plain_value(item) for key, item in value.items()}
    return value
