"""Every validation keyword of a schema in words, one list item each.

Bounds read as inequalities on the value (``≥ 1``, ``< 10``), lengths and counts as
inequalities on the length or count, ``pattern``/``format``/``enum``/``const`` with
their values as code. A keyword the page does not put in words (``if``, ``not``,
``dependentSchemas``…) is still named, so nothing that constrains a value is hidden.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from markupsafe import Markup

from .markup import html, json_text

if TYPE_CHECKING:
    from .schema_html import SchemaRenderer

__all__ = ["describe", "describe_object"]

_COUNTS: Final = (
    ("minLength", "maxLength", "length"),
    ("minItems", "maxItems", "items"),
    ("minContains", "maxContains", "matching items"),
)
_OBJECT_COUNTS: Final = (("minProperties", "maxProperties", "properties"),)
# Keywords named but not spelt out: the published JSON has their detail.
_NAMED: Final = (
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_FLAGS: Final = (
    ("deprecated", "deprecated"),
    ("readOnly", "read-only"),
    ("writeOnly", "write-only"),
)
_ENUM_SHOWN: Final = 50


def _code(value: Any) -> Markup:
    return html("<code>{}</code>", json_text(value))


def describe(schema: Mapping[str, Any], renderer: SchemaRenderer) -> list[Markup]:
    """The constraints of one value's schema (object-level ones included)."""
    found: list[Markup] = _bounds(schema)
    if _number(schema.get("multipleOf")):
        found.append(html("multiple of {}", _code(schema["multipleOf"])))
    for low, high, words in _COUNTS:
        found.extend(_range(schema, low, high, words))
    if schema.get("uniqueItems") is True:
        found.append(Markup("unique items"))
    if isinstance(schema.get("pattern"), str):
        found.append(html("pattern {}", html("<code>{}</code>", schema["pattern"])))
    for key in ("format", "contentEncoding", "contentMediaType"):
        if isinstance(schema.get(key), str):
            found.append(html("{} {}", key, html("<code>{}</code>", schema[key])))
    if "const" in schema:
        found.append(html("exactly {}", _code(schema["const"])))
    if isinstance(schema.get("enum"), list):
        values = schema["enum"]
        shown = Markup(", ").join(_code(v) for v in values[:_ENUM_SHOWN])
        more = f" … and {len(values) - _ENUM_SHOWN} more" if len(values) > _ENUM_SHOWN else ""
        found.append(html("one of {}{}", shown, more))
    if "contains" in schema:
        found.append(html("contains {}", renderer.type_of(schema["contains"])))
    if isinstance(schema.get("prefixItems"), list):
        first = Markup(", ").join(renderer.type_of(s) for s in schema["prefixItems"])
        found.append(html("first items: {}", first))
    items = schema.get("items")
    if (
        isinstance(items, Mapping)
        and "$ref" not in items
        and not any(key in items for key in ("properties", "anyOf", "oneOf", "allOf"))
    ):
        found.extend(html("each item: {}", part) for part in describe(items, renderer))
    found.extend(describe_object(schema, renderer))
    for key in _NAMED:
        if key in schema:
            found.append(html("<code>{}</code> (see the published JSON)", key))
    if isinstance(schema.get("x-mcp-header"), str):
        header = html("<code>Mcp-Param-{}</code>", schema["x-mcp-header"])
        found.append(html("also sent as the HTTP header {} (2026-07-28)", header))
    for key, words in _FLAGS:
        if schema.get(key) is True:
            found.append(html('<span class="flag">{}</span>', words))
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        found.append(html("e.g. {}", Markup(", ").join(_code(v) for v in schema["examples"][:3])))
    return found


def describe_object(schema: Mapping[str, Any], renderer: SchemaRenderer) -> list[Markup]:
    """The constraints that concern an object's members as a whole."""
    found: list[Markup] = []
    for low, high, words in _OBJECT_COUNTS:
        found.extend(_range(schema, low, high, words))
    extra = schema.get("additionalProperties")
    if extra is False:
        found.append(Markup("no other properties"))
    elif isinstance(extra, Mapping) and extra:
        found.append(html("other properties: {}", renderer.type_of(extra)))
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        for pattern, sub in patterns.items():
            found.append(
                html("properties matching <code>{}</code>: {}", pattern, renderer.type_of(sub))
            )
    if isinstance(schema.get("propertyNames"), Mapping):
        names = describe(schema["propertyNames"], renderer)
        found.append(html("property names: {}", Markup("; ").join(names) or "any"))
    dependent = schema.get("dependentRequired")
    if isinstance(dependent, Mapping):
        for name, needs in dependent.items():
            if isinstance(needs, list):
                found.append(
                    html(
                        "with <code>{}</code> also {}",
                        name,
                        Markup(", ").join(html("<code>{}</code>", n) for n in needs),
                    )
                )
    return found


def _bounds(schema: Mapping[str, Any]) -> list[Markup]:
    """``1 ≤ value ≤ 14``, ``value > 0``: the numeric bounds as one inequality."""
    low = [
        (k, s) for k, s in (("minimum", "≤"), ("exclusiveMinimum", "<")) if _number(schema.get(k))
    ]
    high = [
        (k, s) for k, s in (("maximum", "≤"), ("exclusiveMaximum", "<")) if _number(schema.get(k))
    ]
    if len(low) == 1 and len(high) == 1:
        (lk, ls), (hk, hs) = low[0], high[0]
        return [html("{} {} value {} {}", _code(schema[lk]), ls, hs, _code(schema[hk]))]
    found = [html("value {} {}", ">" if s == "<" else "≥", _code(schema[k])) for k, s in low]
    found += [html("value {} {}", s, _code(schema[k])) for k, s in high]
    return found


def _range(schema: Mapping[str, Any], low: str, high: str, words: str) -> list[Markup]:
    """``length 1–10``, ``items ≥ 1``: a count's bounds."""
    lo = schema.get(low) if isinstance(schema.get(low), int) else None
    hi = schema.get(high) if isinstance(schema.get(high), int) else None
    if lo is not None and hi is not None:
        text = f"{words} {lo}" if lo == hi else f"{words} {lo}–{hi}"
        return [html("{}", text)]
    if lo is not None:
        return [html("{} ≥ {}", words, lo)]
    if hi is not None:
        return [html("{} ≤ {}", words, hi)]
    return []


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
