"""What the compatibility rules compare schemas by: normalised shapes, the JSON types
a schema admits, numeric bounds and how each aspect moved (narrower, wider, equal).
"""

from __future__ import annotations

import enum
import json
import math
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from ..protocol.fingerprint import canonical_json
from ..protocol.pointer import MISSING, resolve_pointer
from ..schema.nodes import member_type

_MAX_DEPTH: Final = 64


MAX_PATH_DEPTH: Final = 200


_IDENT: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")


ALL_TYPES: Final = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


# Validation keywords whose changes are analysed below (plus text handled by its own rules).
ANALYSED: Final = frozenset(
    {
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "minProperties",
        "maxProperties", "pattern", "format", "uniqueItems", "additionalProperties",
        "properties", "required", "items", "anyOf", "oneOf", "allOf", "default", "description",
    }
)  # fmt: skip


# Validation keywords whose changes are not analysed: any change is assumed breaking.
UNANALYSED: Final = frozenset(
    {
        "$ref", "$dynamicRef", "$recursiveRef", "not", "if", "then", "else", "dependentRequired",
        "dependentSchemas", "dependencies", "patternProperties", "propertyNames", "prefixItems",
        "additionalItems", "contains", "minContains", "maxContains", "unevaluatedItems",
        "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip


VALIDATION: Final = (ANALYSED | UNANALYSED) - {"default", "description"}


# Compared only through the references that use them.
IGNORED: Final = frozenset({"$defs", "definitions"})


KNOWN_TOOL_KEYS: Final = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons",
     "execution", "_meta"}
)  # fmt: skip


# (hint, MCP default when absent, unsafe direction is True -> False?, rule unsafe, rule safe)
HINTS: Final = (
    ("readOnlyHint", False, True, "HINT_READ_ONLY_REMOVED", "HINT_READ_ONLY_ADDED"),
    ("destructiveHint", True, False, "HINT_DESTRUCTIVE_ADDED", "HINT_DESTRUCTIVE_REMOVED"),
    ("idempotentHint", False, True, "HINT_IDEMPOTENT_REMOVED", "HINT_IDEMPOTENT_ADDED"),
    ("openWorldHint", True, False, "HINT_OPEN_WORLD_ADDED", "HINT_OPEN_WORLD_REMOVED"),
)


TASK_VALUES: Final = ("forbidden", "optional", "required")


class Rel(enum.Enum):
    """How the set of values a schema aspect allows moved from OLD to NEW."""

    EQUAL = 0
    NARROWER = 1
    WIDER = 2
    INCOMPARABLE = 3


def by_name(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    result: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            result.setdefault(tool["name"], tool)
    return result


def without_name(tool: Mapping[str, Any]) -> bytes:
    """The fingerprint body (no ``execution``) without the name, for rename detection."""
    return canon({k: v for k, v in tool.items() if k not in ("name", "execution")})


def _norm(value: Any) -> Any:
    """JSON value with integral floats as ints and string keys, so 1 == 1.0 as in JSON Schema."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def canon(value: Any) -> bytes:
    try:
        return canonical_json(_norm(value))
    except (TypeError, ValueError):
        return repr(value).encode()


def same(a: Any, b: Any) -> bool:
    return a is b or canon(a) == canon(b)


def fmt(value: Any) -> str:
    """A short JSON rendering of a value for messages."""
    if value is MISSING:
        return "absent"
    try:
        text = json.dumps(_norm(value), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def child_path(path: str, name: str) -> str:
    return f"{path}.{name}" if _IDENT.match(name) else f"{path}[{json.dumps(name)}]"


def sub(subject: str, name: str) -> str:
    return f"{subject}.{name}" if subject else name


def differs(old: Mapping[str, Any], new: Mapping[str, Any], key: str) -> bool:
    return (key in old) != (key in new) or (key in old and not same(old[key], new[key]))


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _as_schema(value: Any) -> dict[str, Any]:
    """A schema as a fresh dict: ``true``/absent/junk allow anything, ``false`` nothing."""
    if value is False:
        return {"not": {}}
    if isinstance(value, Mapping):
        return dict(value)
    return {}


def _pointer(root: Any, ref: str) -> Any:
    """Resolve a local ``#/...`` JSON pointer inside ``root``, or return ``MISSING``."""
    if not ref.startswith("#"):
        return MISSING
    return resolve_pointer(root, urllib.parse.unquote(ref[1:]))


def _simple_types(schema: Any) -> frozenset[str] | None:
    """The types of a schema that is exactly ``{"type": ...}``, else None."""
    if not isinstance(schema, Mapping) or set(schema) != {"type"}:
        return None
    declared = schema["type"]
    if isinstance(declared, str):
        return frozenset({declared})
    if isinstance(declared, list) and declared and all(isinstance(t, str) for t in declared):
        return frozenset(declared)
    return None


def normalize(raw: Any, root: Any, depth: int = 0) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Resolve ``$ref`` chains and fold simple unions; return the schema and refs followed."""
    schema = _as_schema(raw)
    chain: tuple[str, ...] = ()
    while isinstance(schema.get("$ref"), str) and len(chain) < _MAX_DEPTH:
        ref = schema["$ref"]
        target = MISSING if ref in chain else _pointer(root, ref)
        if target is MISSING:
            break
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**_as_schema(target), **siblings}
        chain += (ref,)
    if depth < _MAX_DEPTH:
        for keyword in ("anyOf", "oneOf"):
            folded = _fold_union(schema, keyword, root, depth)
            if folded is not None:
                return folded[0], chain + folded[1]
    return schema, chain


def _fold_union(
    schema: dict[str, Any], keyword: str, root: Any, depth: int
) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    alternatives = schema.get(keyword)
    if not isinstance(alternatives, list) or not alternatives:
        return None
    rest = {k: v for k, v in schema.items() if k != keyword}
    simple = [_simple_types(alt) for alt in alternatives]
    if "type" not in rest and all(types is not None for types in simple):
        union = sorted(frozenset().union(*(t for t in simple if t is not None)))
        rest["type"] = union[0] if len(union) == 1 else union
        return rest, ()
    nulls = [i for i, types in enumerate(simple) if types == frozenset({"null"})]
    if len(alternatives) != 2 or len(nulls) != 1 or rest.keys() & VALIDATION:
        return None
    other, chain = normalize(alternatives[1 - nulls[0]], root, depth + 1)
    if other.keys() & {"anyOf", "oneOf", "allOf", "not", "if", "$ref", "$dynamicRef"}:
        return None
    merged = {**other, **rest}
    declared = merged.get("type")
    if isinstance(declared, str) and declared != "null":
        merged["type"] = [declared, "null"]
    elif isinstance(declared, list) and "null" not in declared:
        merged["type"] = [*declared, "null"]
    if "const" in merged and "enum" not in merged:
        merged["enum"] = [merged.pop("const")]
    if isinstance(merged.get("enum"), list) and None not in merged["enum"]:
        merged["enum"] = [*merged["enum"], None]
    return merged, chain


def _value_type(value: Any) -> str:
    """The JSON type of a value, a number without fraction counting as an integer
    (as JSON Schema's ``integer`` does)."""
    if isinstance(value, float) and value.is_integer():
        return "integer"
    return member_type(value)


def _closure(types: Iterable[str]) -> frozenset[str]:
    result = set(types)
    if "number" in result:
        result.add("integer")
    return frozenset(result)


def effective_types(schema: Mapping[str, Any]) -> frozenset[str]:
    """The effective type set: declared types narrowed by enum/const values."""
    result = ALL_TYPES
    declared = schema.get("type")
    if isinstance(declared, str):
        result = _closure([declared])
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        result = _closure(declared)
    values = enum_values(schema)
    if values is not None:
        result = result & _closure(_value_type(v) for v in values)
    return result


def declared_ok(schema: Mapping[str, Any]) -> bool:
    declared = schema.get("type", "null")
    if isinstance(declared, list):
        return all(isinstance(t, str) for t in declared)
    return isinstance(declared, str)


def enum_values(schema: Mapping[str, Any]) -> list[Any] | None:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def as_fraction(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return Fraction(repr(value))
    return Fraction(value)


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else repr(float(value))


_Bound = tuple[Fraction, bool, str]  # value, exclusive, keyword that sets it


def bound_of(schema: Mapping[str, Any], lower: bool) -> _Bound | None:
    inclusive_kw, exclusive_kw = (
        ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
    )
    inclusive = as_fraction(schema.get(inclusive_kw))
    flag = schema.get(exclusive_kw)
    candidates: list[_Bound] = []
    if isinstance(flag, bool):  # draft-04 form: a flag on minimum/maximum
        if inclusive is not None:
            candidates.append((inclusive, flag, inclusive_kw))
    else:
        if inclusive is not None:
            candidates.append((inclusive, False, inclusive_kw))
        exclusive = as_fraction(flag)
        if exclusive is not None:
            candidates.append((exclusive, True, exclusive_kw))
    if not candidates:
        return None
    sign = 1 if lower else -1
    return max(candidates, key=lambda b: (sign * b[0], b[1]))


def bound_rel(old: _Bound | None, new: _Bound | None, lower: bool) -> Rel:
    if old is None or new is None:
        return Rel.EQUAL if old is new else (Rel.NARROWER if old is None else Rel.WIDER)
    sign = 1 if lower else -1
    old_key, new_key = (sign * old[0], old[1]), (sign * new[0], new[1])
    if old_key == new_key:
        return Rel.EQUAL
    return Rel.NARROWER if new_key > old_key else Rel.WIDER


def show_bound(bound: _Bound | None, lower: bool) -> str:
    if bound is None:
        return "none"
    op = (">" if lower else "<") + ("" if bound[1] else "=")
    return f"{op} {_show(bound[0])}"


def presence_rel(old: Any, new: Any) -> Rel:
    """For keywords that restrict when present (pattern, format, const): any change narrows."""
    if same(old, new):
        return Rel.EQUAL
    if old is MISSING:
        return Rel.NARROWER
    if new is MISSING:
        return Rel.WIDER
    return Rel.INCOMPARABLE


def _set_rel(old: Fraction | None, new: Fraction | None) -> Rel | None:
    """EQUAL, NARROWER (a bound added) or WIDER (removed); None: both set, differing."""
    if old == new:
        return Rel.EQUAL
    if old is None:
        return Rel.NARROWER
    if new is None:
        return Rel.WIDER
    return None


def multiple_rel(old: Fraction | None, new: Fraction | None) -> Rel:
    rel = _set_rel(old, new)
    if rel is not None:
        return rel
    assert old is not None and new is not None  # _set_rel answered the other cases
    if (new / old).denominator == 1:
        return Rel.NARROWER
    if (old / new).denominator == 1:
        return Rel.WIDER
    return Rel.INCOMPARABLE


def count_rel(old: Fraction | None, new: Fraction | None, lower: bool) -> Rel:
    """minLength-style (absent = 0) or maxLength-style (absent = unbounded) bounds."""
    if lower:
        old, new = old or Fraction(0), new or Fraction(0)
    rel = _set_rel(old, new)
    if rel is not None:
        return rel
    assert old is not None and new is not None  # _set_rel answered the other cases
    return Rel.NARROWER if (new > old) == lower else Rel.WIDER


def slot(value: Any) -> Mapping[str, Any] | bool:
    """``items``/``additionalProperties``: False (closed) or a schema (absent/true = {})."""
    if value is False:
        return False
    return value if isinstance(value, Mapping) else {}
