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

if TYPE_CHECKING:
    from .schema_html import SchemaRenderer

__all__ = ["describe", "describe_object"]

_COUNTS: Final = (
    ("minLength", "maxLength", "length"), ("minItems", "maxItems", "items"),
    ("minContains", "maxContains", "matching items"),
)
_OBJECT_COUNTS: Final = (("minProperties", "maxProperties", "properties"),)
# Keywords named but not spelt out: the published JSON has their detail.
_NAMED: Final = ("not", "if", "then", "else", "dependentSchemas", "unevaluatedItems",
                 "unevaluatedProperties", "contentSchema")
_FLAGS: Final = (("deprecated", "deprecated"), ("readOnly", "read-only"),
                 ("writeOnly", "write-only"))
_ENUM_SHOWN: Final = 50


def _code(value: Any) -> Markup:
    from .schema_html import json_text

    return Markup("<code>{}</code>").format(json_text(value))


def describe(schema: Mapping[str, Any], renderer: SchemaRenderer) -> list[Markup]:
    """The constraints of one value's schema (object-level ones included)."""
    found: list[Markup] = _bounds(schema)
    if _number(schema.get("multipleOf")):
        found.append(Markup("multiple of {}").format(_code(schema["multipleOf"])))
    for low, high, words in _COUNTS:
        found.extend(_range(schema, low, high, words))
    if schema.get("uniqueItems") is True:
        found.append(Markup("unique items"))
    if isinstance(schema.get("pattern"), str):
        found.append(Markup("pattern {}").format(Markup("<code>{}</code>").format(schema["pattern"])))
    for key in ("format", "contentEncoding", "contentMediaType"):
        if isinstance(schema.get(key), str):
            found.append(Markup("{} {}").format(key, Markup("<code>{}</code>").format(schema[key])))
    if "const" in schema:
        found.append(Markup("exactly {}").format(_code(schema["const"])))
    if isinstance(schema.get("enum"), list):
        values = schema["enum"]
        shown = Markup(", ").join(_code(v) for v in values[:_ENUM_SHOWN])
        more = f" … and {len(values) - _ENUM_SHOWN} more" if len(values) > _ENUM_SHOWN else ""
        found.append(Markup("one of {}{}").format(shown, more))
    if "contains" in schema:
        found.append(Markup("contains {}").format(renderer.type_of(schema["contains"])))
    if isinstance(schema.get("prefixItems"), list):
        first = Markup(", ").join(renderer.type_of(s) for s in schema["prefixItems"])
        found.append(Markup("first items: {}").format(first))
    found.extend(describe_object(schema, renderer))
    for key in _NAMED:
        if key in schema:
            found.append(Markup("<code>{}</code> (see the published JSON)").format(key))
    for key, words in _FLAGS:
        if schema.get(key) is True:
            found.append(Markup("<span class=\"flag\">{}</span>").format(words))
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        found.append(Markup("e.g. {}").format(Markup(", ").join(
            _code(v) for v in schema["examples"][:3])))
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
        found.append(Markup("other properties: {}").format(renderer.type_of(extra)))
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        for pattern, sub in patterns.items():
            found.append(Markup("properties matching <code>{}</code>: {}").format(
                pattern, renderer.type_of(sub)))
    if isinstance(schema.get("propertyNames"), Mapping):
        names = describe(schema["propertyNames"], renderer)
        found.append(Markup("property names: {}").format(Markup("; ").join(names) or "any"))
    dependent = schema.get("dependentRequired")
    if isinstance(dependent, Mapping):
        for name, needs in dependent.items():
            if isinstance(needs, list):
                found.append(Markup("with <code>{}</code> also {}").format(
                    name, Markup(", ").join(Markup("<code>{}</code>").format(n) for n in needs)))
    return found


def _bounds(schema: Mapping[str, Any]) -> list[Markup]:
    """``1 ≤ value ≤ 14``, ``value > 0``: the numeric bounds as one inequality."""
    low = [(k, s) for k, s in (("minimum", "≤"), ("exclusiveMinimum", "<")) if _number(schema.get(k))]
    high = [(k, s) for k, s in (("maximum", "≤"), ("exclusiveMaximum", "<")) if _number(schema.get(k))]
    if len(low) == 1 and len(high) == 1:
        (lk, ls), (hk, hs) = low[0], high[0]
        return [Markup("{} {} value {} {}").format(_code(schema[lk]), ls, hs, _code(schema[hk]))]
    found = [Markup("value {} {}").format(">" if s == "<" else "≥", _code(schema[k])) for k, s in low]
    found += [Markup("value {} {}").format(s, _code(schema[k])) for k, s in high]
    return found


def _range(schema: Mapping[str, Any], low: str, high: str, words: str) -> list[Markup]:
    """``length 1–10``, ``items ≥ 1``: a count's bounds."""
    lo = schema.get(low) if isinstance(schema.get(low), int) else None
    hi = schema.get(high) if isinstance(schema.get(high), int) else None
    if lo is not None and hi is not None:
        text = f"{words} {lo}" if lo == hi else f"{words} {lo}–{hi}"
        return [Markup("{}").format(text)]
    if lo is not None:
        return [Markup("{} ≥ {}").format(words, lo)]
    if hi is not None:
        return [Markup("{} ≤ {}").format(words, hi)]
    return []


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
