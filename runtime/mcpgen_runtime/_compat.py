"""Compatibility rules between two lists of MCP tool descriptors (OLD, NEW), written once.

``mcpgen diff OLD NEW`` and a generated client's contract check on connect (OLD = the
contract, NEW = what the live server lists) both call :func:`compare_tools`, so they agree.

Rules, in result order (results sort by tool name, then this order, then path, then message):

    Rule                        Severity    Category  Meaning
    TOOL_REMOVED                breaking    CALL      a tool is gone: every call to it fails
    TOOL_RENAMED                breaking    SOURCE    one tool removed + one added, equal but for the name
    TOOL_ADDED                  compatible  -         a new tool
    PARAM_REMOVED               breaking    SOURCE    a parameter is gone (always breaking, see below)
    PARAM_RENAMED               breaking    SOURCE    one parameter removed + one added, same schema/place
    PARAM_ORDER_CHANGED         breaking    SOURCE    positional order moved (reordered, or inserted
                                                      before an existing parameter); top level only
    PARAM_REQUIRED_ADDED        breaking    CALL      a new required parameter
    PARAM_MADE_REQUIRED         breaking    CALL      an optional parameter became required
    PARAM_TYPE_NARROWED         breaking    CALL      the accepted type set shrank
    PARAM_TYPE_CHANGED          breaking    CALL      the accepted type set changed (neither shrank nor grew)
    PARAM_ENUM_VALUE_REMOVED    breaking    CALL      an enum value removed, or an enum added where none was
    PARAM_CONSTRAINT_TIGHTENED  breaking    CALL      minimum up, maximum down, exclusive*, min*/max*
                                                      Length/Items/Properties, pattern/format added or
                                                      changed, multipleOf, const, uniqueItems,
                                                      additionalProperties/items closed or narrowed
    PARAM_KEYWORD_CHANGED       breaking    CALL      a validation keyword this module does not analyse
                                                      (allOf, not, if, prefixItems, unresolved $ref, ...)
                                                      changed: assumed breaking
    PARAM_DEFAULT_CHANGED       warning     -         a default added, removed or changed
    PARAM_DESCRIPTION_CHANGED   warning     -         a description inside inputSchema changed
    PARAM_OPTIONAL_ADDED        compatible  -         a new optional parameter
    PARAM_MADE_OPTIONAL         compatible  -         a required parameter became optional
    PARAM_TYPE_WIDENED          compatible  -         more types accepted (integer -> number, + "null")
    PARAM_ENUM_VALUE_ADDED      compatible  -         an enum value added, or the enum dropped
    PARAM_CONSTRAINT_LOOSENED   compatible  -         the opposite of PARAM_CONSTRAINT_TIGHTENED
    OUTPUT_SCHEMA_REMOVED       breaking    CALL      no outputSchema any more (no structuredContent)
    OUTPUT_FIELD_REMOVED        breaking    SOURCE    an output field is gone
    OUTPUT_FIELD_TYPE_CHANGED   breaking    SOURCE    an output type widened or changed
    OUTPUT_FIELD_MADE_OPTIONAL  breaking    CALL      a required output field became optional
    OUTPUT_ENUM_VALUE_ADDED     breaking    CALL      an output enum value added, or the enum dropped
    OUTPUT_CONSTRAINT_LOOSENED  breaking    CALL      an output constraint loosened or changed, or a field
                                                      added to an object that forbade extra properties
    OUTPUT_KEYWORD_CHANGED      breaking    CALL      like PARAM_KEYWORD_CHANGED, in outputSchema
    OUTPUT_SCHEMA_ADDED         compatible  -         an outputSchema where there was none
    OUTPUT_FIELD_ADDED          compatible  -         a new output field (object open to extra fields)
    OUTPUT_FIELD_MADE_REQUIRED  compatible  -         an optional output field became required
    OUTPUT_FIELD_TYPE_NARROWED  compatible  -         an output type narrowed
    OUTPUT_ENUM_VALUE_REMOVED   compatible  -         an output enum value removed, or an enum added
    OUTPUT_CONSTRAINT_TIGHTENED compatible  -         an output constraint tightened
    HINT_READ_ONLY_REMOVED      breaking    BEHAVIOR  readOnlyHint true -> false (absent = false)
    HINT_DESTRUCTIVE_ADDED      breaking    BEHAVIOR  destructiveHint false -> true (absent = true)
    HINT_IDEMPOTENT_REMOVED     breaking    BEHAVIOR  idempotentHint true -> false (absent = false)
    HINT_OPEN_WORLD_ADDED       breaking    BEHAVIOR  openWorldHint false -> true (absent = true)
    HINT_READ_ONLY_ADDED        compatible  -         readOnlyHint false -> true
    HINT_DESTRUCTIVE_REMOVED    compatible  -         destructiveHint true -> false
    HINT_IDEMPOTENT_ADDED       compatible  -         idempotentHint false -> true
    HINT_OPEN_WORLD_REMOVED     compatible  -         openWorldHint true -> false
    TASK_SUPPORT_TIGHTENED      breaking    BEHAVIOR  taskSupport moved to required or to forbidden
    TASK_SUPPORT_LOOSENED       compatible  -         taskSupport moved to optional
    DESCRIPTION_CHANGED         warning     -         tool description changed (steers tool choice; a
                                                      known tool-poisoning vector: review it)
    TITLE_CHANGED               warning     -         title or annotations.title changed
    ICONS_CHANGED               compatible  -         icons changed
    META_CHANGED                compatible  -         _meta changed
    SCHEMA_ANNOTATION_CHANGED   compatible  -         a non-validating schema keyword changed (title,
                                                      examples, deprecated, ...; output descriptions
                                                      and defaults)
    UNKNOWN_FIELD_CHANGED       compatible  -         a descriptor/annotations/execution member this
                                                      module does not know changed
    EQUIVALENT_FORM             compatible  -         written differently, same meaning (an explicit
                                                      default, a hint ignored for a read-only tool, a
                                                      schema rewritten equivalently)

Categories (a breaking change has exactly one; ``breaking(category=C)`` returns C and stricter):

- SOURCE: for a tool that still exists, the Python surface generated from the contract shifts
  under code written against it: a tool or parameter is renamed, a parameter removed or moved
  (positional order), an output model loses a field or a field changes type.  Most of these also
  break the wire; PARAM_ORDER_CHANGED does not (arguments travel by name).
- CALL: an old client breaks on the wire against the new server: a request that used to be valid
  is rejected (tool removed, new required parameter, narrower type/enum/constraint), or a result
  no longer validates against the old output schema, which the generated client checks
  (output schema removed, field made optional, output enum value added, output constraint loosened).
- BEHAVIOR: calls still work, but a promise changed (hints in the unsafe direction, task support).

Decisions:

- Inputs and outputs are mirror images: inputs break when they accept less, outputs when they
  may produce more.  An added output enum value is breaking (exhaustive readers and the generated
  ``Literal`` types reject it).  A field added to an output object whose old schema had
  ``additionalProperties: false`` is OUTPUT_CONSTRAINT_LOOSENED (generated models forbid extras).
- PARAM_REMOVED is always breaking: the generated signature loses it, and on the wire the server
  either rejects it (closed schema) or silently ignores it (open schema); the message says which.
- Changes whose direction is unknown (a pattern or format replaced, an unanalysed keyword) count
  as breaking on both sides.  ``anyOf``/``oneOf`` of plain types fold into a type set, and a
  two-way union with ``{"type": "null"}`` folds into "nullable"; other unions of equal length
  compare alternative by alternative, of unequal length as sets of alternatives (``oneOf`` is
  treated like ``anyOf``).  ``integer`` is a subset of ``number``.  ``enum``/``const`` narrow the
  effective type set, so ``{"enum": [1]}`` and ``{"type": "integer", "enum": [1]}`` are equal.
- ``$ref`` to ``#/...`` resolves inside the descriptor's own inputSchema or outputSchema (sibling
  keywords override the target); ``$defs`` are compared only through the references that use
  them; a reference cycle is compared once.
- Hints compare by effective value with the MCP defaults; a read-only tool counts as
  non-destructive and idempotent, so readOnlyHint true -> false with the other two absent also
  reports HINT_DESTRUCTIVE_ADDED and HINT_IDEMPOTENT_REMOVED.  Non-boolean hints count as absent.
  Absent ``execution.taskSupport`` is "forbidden"; an unknown value counts as tightened.
- Tools are matched by ``name``; entries without a string name are ignored; for a duplicate name
  the first entry wins.  The message of a change never includes a description's text.
- The caller decides what to compare: a client checking a server that negotiated an older
  revision should first strip the contract's descriptors to that revision's fields.
"""

from __future__ import annotations

import enum
import json
import math
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final

from ._fingerprint import canonical_json
from ._pointer import MISSING, resolve_pointer

__all__ = ["RULES", "Category", "Change", "Rule", "Severity", "breaking", "compare_tools"]


class Category(enum.IntEnum):
    """How far a breaking change reaches; higher is stricter (SOURCE ⊃ CALL ⊃ BEHAVIOR)."""

    BEHAVIOR = 1
    CALL = 2
    SOURCE = 3


class Severity(str, enum.Enum):
    """Whether a change breaks a consumer, deserves a human look, or is safe."""

    BREAKING = "breaking"
    WARNING = "warning"
    COMPATIBLE = "compatible"


@dataclass(frozen=True)
class Rule:
    """One kind of change: its stable name, severity, category (breaking only) and meaning."""

    name: str
    severity: Severity
    category: Category | None
    summary: str


@dataclass(frozen=True)
class Change:
    """One classified difference of one tool."""

    tool: str
    rule: str
    severity: Severity
    category: Category | None
    path: str
    message: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form: severity as its value, category lower-case or None."""
        return {
            "tool": self.tool,
            "rule": self.rule,
            "severity": self.severity.value,
            "category": None if self.category is None else self.category.name.lower(),
            "path": self.path,
            "message": self.message,
        }


_B, _W, _C = Severity.BREAKING, Severity.WARNING, Severity.COMPATIBLE
_SRC, _CALL, _BEH = Category.SOURCE, Category.CALL, Category.BEHAVIOR

_RULE_LIST: Final[tuple[Rule, ...]] = (
    Rule("TOOL_REMOVED", _B, _CALL, "a tool is gone: every call to it fails"),
    Rule("TOOL_RENAMED", _B, _SRC, "a tool was renamed"),
    Rule("TOOL_ADDED", _C, None, "a new tool"),
    Rule("PARAM_REMOVED", _B, _SRC, "a parameter is gone"),
    Rule("PARAM_RENAMED", _B, _SRC, "a parameter was renamed"),
    Rule("PARAM_ORDER_CHANGED", _B, _SRC, "the positional order of parameters changed"),
    Rule("PARAM_REQUIRED_ADDED", _B, _CALL, "a new required parameter"),
    Rule("PARAM_MADE_REQUIRED", _B, _CALL, "an optional parameter became required"),
    Rule("PARAM_TYPE_NARROWED", _B, _CALL, "a parameter accepts fewer types"),
    Rule("PARAM_TYPE_CHANGED", _B, _CALL, "a parameter accepts different types"),
    Rule("PARAM_ENUM_VALUE_REMOVED", _B, _CALL, "a parameter accepts fewer enum values"),
    Rule("PARAM_CONSTRAINT_TIGHTENED", _B, _CALL, "a parameter constraint tightened"),
    Rule("PARAM_KEYWORD_CHANGED", _B, _CALL, "an unanalysed input validation keyword changed"),
    Rule("PARAM_DEFAULT_CHANGED", _W, None, "a parameter default changed"),
    Rule("PARAM_DESCRIPTION_CHANGED", _W, None, "a parameter description changed"),
    Rule("PARAM_OPTIONAL_ADDED", _C, None, "a new optional parameter"),
    Rule("PARAM_MADE_OPTIONAL", _C, None, "a required parameter became optional"),
    Rule("PARAM_TYPE_WIDENED", _C, None, "a parameter accepts more types"),
    Rule("PARAM_ENUM_VALUE_ADDED", _C, None, "a parameter accepts more enum values"),
    Rule("PARAM_CONSTRAINT_LOOSENED", _C, None, "a parameter constraint loosened"),
    Rule("OUTPUT_SCHEMA_REMOVED", _B, _CALL, "the output schema is gone"),
    Rule("OUTPUT_FIELD_REMOVED", _B, _SRC, "an output field is gone"),
    Rule("OUTPUT_FIELD_TYPE_CHANGED", _B, _SRC, "an output type widened or changed"),
    Rule("OUTPUT_FIELD_MADE_OPTIONAL", _B, _CALL, "a required output field became optional"),
    Rule("OUTPUT_ENUM_VALUE_ADDED", _B, _CALL, "an output may carry a new enum value"),
    Rule("OUTPUT_CONSTRAINT_LOOSENED", _B, _CALL, "an output constraint loosened or changed"),
    Rule("OUTPUT_KEYWORD_CHANGED", _B, _CALL, "an unanalysed output validation keyword changed"),
    Rule("OUTPUT_SCHEMA_ADDED", _C, None, "a new output schema"),
    Rule("OUTPUT_FIELD_ADDED", _C, None, "a new output field"),
    Rule("OUTPUT_FIELD_MADE_REQUIRED", _C, None, "an optional output field became required"),
    Rule("OUTPUT_FIELD_TYPE_NARROWED", _C, None, "an output type narrowed"),
    Rule("OUTPUT_ENUM_VALUE_REMOVED", _C, None, "an output carries fewer enum values"),
    Rule("OUTPUT_CONSTRAINT_TIGHTENED", _C, None, "an output constraint tightened"),
    Rule("HINT_READ_ONLY_REMOVED", _B, _BEH, "the tool is no longer read-only"),
    Rule("HINT_DESTRUCTIVE_ADDED", _B, _BEH, "the tool may now be destructive"),
    Rule("HINT_IDEMPOTENT_REMOVED", _B, _BEH, "the tool is no longer idempotent"),
    Rule("HINT_OPEN_WORLD_ADDED", _B, _BEH, "the tool may now reach an open world"),
    Rule("HINT_READ_ONLY_ADDED", _C, None, "the tool became read-only"),
    Rule("HINT_DESTRUCTIVE_REMOVED", _C, None, "the tool is no longer destructive"),
    Rule("HINT_IDEMPOTENT_ADDED", _C, None, "the tool became idempotent"),
    Rule("HINT_OPEN_WORLD_REMOVED", _C, None, "the tool became closed-world"),
    Rule("TASK_SUPPORT_TIGHTENED", _B, _BEH, "task support moved to required or forbidden"),
    Rule("TASK_SUPPORT_LOOSENED", _C, None, "task support moved to optional"),
    Rule("DESCRIPTION_CHANGED", _W, None, "the tool description changed"),
    Rule("TITLE_CHANGED", _W, None, "the tool title changed"),
    Rule("ICONS_CHANGED", _C, None, "the icons changed"),
    Rule("META_CHANGED", _C, None, "_meta changed"),
    Rule("SCHEMA_ANNOTATION_CHANGED", _C, None, "a non-validating schema keyword changed"),
    Rule("UNKNOWN_FIELD_CHANGED", _C, None, "a member this module does not know changed"),
    Rule("EQUIVALENT_FORM", _C, None, "written differently, same meaning"),
)

RULES: Final[Mapping[str, Rule]] = MappingProxyType({rule.name: rule for rule in _RULE_LIST})
_RANK: Final[Mapping[str, int]] = {rule.name: index for index, rule in enumerate(_RULE_LIST)}


def breaking(changes: Iterable[Change], *, category: Category = Category.BEHAVIOR) -> list[Change]:
    """The breaking changes at or above ``category`` (CALL returns SOURCE and CALL ones)."""
    return [
        change
        for change in changes
        if change.severity is Severity.BREAKING
        and change.category is not None
        and change.category >= category
    ]


def compare_tools(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[Change]:
    """Every classified difference from ``old`` to ``new``, in a stable order."""
    old_tools, new_tools = _by_name(old), _by_name(new)
    out = _Out()
    removed = [name for name in old_tools if name not in new_tools]
    added = [name for name in new_tools if name not in old_tools]
    if (
        len(removed) == 1
        and len(added) == 1
        and _without_name(old_tools[removed[0]]) == _without_name(new_tools[added[0]])
    ):
        old_name, new_name = removed[0], added[0]
        out.tool = old_name
        out.add("TOOL_RENAMED", "name", f"tool {old_name!r} was renamed to {new_name!r}")
        _compare_tool(old_tools[old_name], new_tools[new_name], out)
    else:
        for name in removed:
            out.tool = name
            out.add("TOOL_REMOVED", "name", f"tool {name!r} was removed; calls to it fail")
        for name in added:
            out.tool = name
            out.add("TOOL_ADDED", "name", f"new tool {name!r}")
    for name, old_tool in old_tools.items():
        if name in new_tools:
            out.tool = name
            _compare_tool(old_tool, new_tools[name], out)
    return sorted(out.changes, key=lambda c: (c.tool, _RANK[c.rule], c.path, c.message))


# --------------------------------------------------------------------------- helpers

_MISSING: Final = MISSING
_MAX_DEPTH: Final = 64
_MAX_PATH_DEPTH: Final = 200
_IDENT: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")
_ALL_TYPES: Final = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})

# Validation keywords whose changes are analysed below (plus text handled by its own rules).
_ANALYSED: Final = frozenset(
    {
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "minProperties",
        "maxProperties", "pattern", "format", "uniqueItems", "additionalProperties",
        "properties", "required", "items", "anyOf", "oneOf", "allOf", "default", "description",
    }
)  # fmt: skip
# Validation keywords whose changes are not analysed: any change is assumed breaking.
_UNANALYSED: Final = frozenset(
    {
        "$ref", "$dynamicRef", "$recursiveRef", "not", "if", "then", "else", "dependentRequired",
        "dependentSchemas", "dependencies", "patternProperties", "propertyNames", "prefixItems",
        "additionalItems", "contains", "minContains", "maxContains", "unevaluatedItems",
        "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip
_VALIDATION: Final = (_ANALYSED | _UNANALYSED) - {"default", "description"}
# Compared only through the references that use them.
_IGNORED: Final = frozenset({"$defs", "definitions"})

_KNOWN_TOOL_KEYS: Final = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons",
     "execution", "_meta"}
)  # fmt: skip
# (hint, MCP default when absent, unsafe direction is True -> False?, rule unsafe, rule safe)
_HINTS: Final = (
    ("readOnlyHint", False, True, "HINT_READ_ONLY_REMOVED", "HINT_READ_ONLY_ADDED"),
    ("destructiveHint", True, False, "HINT_DESTRUCTIVE_ADDED", "HINT_DESTRUCTIVE_REMOVED"),
    ("idempotentHint", False, True, "HINT_IDEMPOTENT_REMOVED", "HINT_IDEMPOTENT_ADDED"),
    ("openWorldHint", True, False, "HINT_OPEN_WORLD_ADDED", "HINT_OPEN_WORLD_REMOVED"),
)
_TASK_VALUES: Final = ("forbidden", "optional", "required")


class _Rel(enum.Enum):
    """How the set of values a schema aspect allows moved from OLD to NEW."""

    EQUAL = 0
    NARROWER = 1
    WIDER = 2
    INCOMPARABLE = 3


class _Out:
    """Collects the changes of the tool being compared."""

    def __init__(self) -> None:
        self.tool = ""
        self.changes: list[Change] = []

    def add(self, rule: str, path: str, message: str) -> None:
        info = RULES[rule]
        self.changes.append(Change(self.tool, rule, info.severity, info.category, path, message))


def _by_name(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    result: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            result.setdefault(tool["name"], tool)
    return result


def _without_name(tool: Mapping[str, Any]) -> bytes:
    """The fingerprint body (no ``execution``) without the name, for rename detection."""
    return _canon({k: v for k, v in tool.items() if k not in ("name", "execution")})


def _norm(value: Any) -> Any:
    """JSON value with integral floats as ints and string keys, so 1 == 1.0 as in JSON Schema."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def _canon(value: Any) -> bytes:
    try:
        return canonical_json(_norm(value))
    except (TypeError, ValueError):
        return repr(value).encode()


def _same(a: Any, b: Any) -> bool:
    return a is b or _canon(a) == _canon(b)


def _fmt(value: Any) -> str:
    """A short JSON rendering of a value for messages."""
    if value is _MISSING:
        return "absent"
    try:
        text = json.dumps(_norm(value), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if _IDENT.match(name) else f"{path}[{json.dumps(name)}]"


def _sub(subject: str, name: str) -> str:
    return f"{subject}.{name}" if subject else name


def _differs(old: Mapping[str, Any], new: Mapping[str, Any], key: str) -> bool:
    return (key in old) != (key in new) or (key in old and not _same(old[key], new[key]))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# --------------------------------------------------------------------------- schema shapes


def _as_schema(value: Any) -> dict[str, Any]:
    """A schema as a fresh dict: ``true``/absent/junk allow anything, ``false`` nothing."""
    if value is False:
        return {"not": {}}
    if isinstance(value, Mapping):
        return dict(value)
    return {}


def _pointer(root: Any, ref: str) -> Any:
    """Resolve a local ``#/...`` JSON pointer inside ``root``, or return ``_MISSING``."""
    if not ref.startswith("#"):
        return _MISSING
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


def _normalize(raw: Any, root: Any, depth: int = 0) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Resolve ``$ref`` chains and fold simple unions; return the schema and refs followed."""
    schema = _as_schema(raw)
    chain: tuple[str, ...] = ()
    while isinstance(schema.get("$ref"), str) and len(chain) < _MAX_DEPTH:
        ref = schema["$ref"]
        target = _MISSING if ref in chain else _pointer(root, ref)
        if target is _MISSING:
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
    if len(alternatives) != 2 or len(nulls) != 1 or rest.keys() & _VALIDATION:
        return None
    other, chain = _normalize(alternatives[1 - nulls[0]], root, depth + 1)
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
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _closure(types: Iterable[str]) -> frozenset[str]:
    result = set(types)
    if "number" in result:
        result.add("integer")
    return frozenset(result)


def _types(schema: Mapping[str, Any]) -> frozenset[str]:
    """The effective type set: declared types narrowed by enum/const values."""
    result = _ALL_TYPES
    declared = schema.get("type")
    if isinstance(declared, str):
        result = _closure([declared])
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        result = _closure(declared)
    values = _enum_values(schema)
    if values is not None:
        result = result & _closure(_value_type(v) for v in values)
    return result


def _declared_ok(schema: Mapping[str, Any]) -> bool:
    declared = schema.get("type", "null")
    if isinstance(declared, list):
        return all(isinstance(t, str) for t in declared)
    return isinstance(declared, str)


def _enum_values(schema: Mapping[str, Any]) -> list[Any] | None:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def _number(value: Any) -> Fraction | None:
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


def _bound(schema: Mapping[str, Any], lower: bool) -> _Bound | None:
    inclusive_kw, exclusive_kw = (
        ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
    )
    inclusive = _number(schema.get(inclusive_kw))
    flag = schema.get(exclusive_kw)
    candidates: list[_Bound] = []
    if isinstance(flag, bool):  # draft-04 form: a flag on minimum/maximum
        if inclusive is not None:
            candidates.append((inclusive, flag, inclusive_kw))
    else:
        if inclusive is not None:
            candidates.append((inclusive, False, inclusive_kw))
        exclusive = _number(flag)
        if exclusive is not None:
            candidates.append((exclusive, True, exclusive_kw))
    if not candidates:
        return None
    sign = 1 if lower else -1
    return max(candidates, key=lambda b: (sign * b[0], b[1]))


def _bound_rel(old: _Bound | None, new: _Bound | None, lower: bool) -> _Rel:
    if old is None or new is None:
        return _Rel.EQUAL if old is new else (_Rel.NARROWER if old is None else _Rel.WIDER)
    sign = 1 if lower else -1
    old_key, new_key = (sign * old[0], old[1]), (sign * new[0], new[1])
    if old_key == new_key:
        return _Rel.EQUAL
    return _Rel.NARROWER if new_key > old_key else _Rel.WIDER


def _show_bound(bound: _Bound | None, lower: bool) -> str:
    if bound is None:
        return "none"
    op = (">" if lower else "<") + ("" if bound[1] else "=")
    return f"{op} {_show(bound[0])}"


def _presence_rel(old: Any, new: Any) -> _Rel:
    """For keywords that restrict when present (pattern, format, const): any change narrows."""
    if _same(old, new):
        return _Rel.EQUAL
    if old is _MISSING:
        return _Rel.NARROWER
    if new is _MISSING:
        return _Rel.WIDER
    return _Rel.INCOMPARABLE


def _multiple_rel(old: Fraction | None, new: Fraction | None) -> _Rel:
    if old == new:
        return _Rel.EQUAL
    if old is None:
        return _Rel.NARROWER
    if new is None:
        return _Rel.WIDER
    if (new / old).denominator == 1:
        return _Rel.NARROWER
    if (old / new).denominator == 1:
        return _Rel.WIDER
    return _Rel.INCOMPARABLE


def _count_rel(old: Fraction | None, new: Fraction | None, lower: bool) -> _Rel:
    """minLength-style (absent = 0) or maxLength-style (absent = unbounded) bounds."""
    if lower:
        old, new = old or Fraction(0), new or Fraction(0)
    if old == new:
        return _Rel.EQUAL
    if old is None:
        return _Rel.NARROWER
    if new is None:
        return _Rel.WIDER
    return _Rel.NARROWER if (new > old) == lower else _Rel.WIDER


def _slot(value: Any) -> Mapping[str, Any] | bool:
    """``items``/``additionalProperties``: False (closed) or a schema (absent/true = {})."""
    if value is False:
        return False
    return value if isinstance(value, Mapping) else {}


# --------------------------------------------------------------------------- schema diff


class _SchemaDiff:
    """Compares one inputSchema or outputSchema pair, emitting side-specific rules."""

    def __init__(self, out: _Out, output: bool, old_root: Any, new_root: Any) -> None:
        self.out = out
        self.output = output
        self.old_root = old_root
        self.new_root = new_root

    def who(self, subject: str) -> str:
        if not subject:
            return "output schema" if self.output else "input schema"
        return f"output field {subject!r}" if self.output else f"parameter {subject!r}"

    def relation(self, rel: _Rel, path: str, subject: str, what: str, kind: str) -> None:
        """Emit a type/constraint change: ``kind`` is "type" or "constraint"."""
        if rel is _Rel.EQUAL:
            return
        if kind == "type":
            if self.output:
                narrowed = rel is _Rel.NARROWER
                rule = "OUTPUT_FIELD_TYPE_NARROWED" if narrowed else "OUTPUT_FIELD_TYPE_CHANGED"
            else:
                rule = {
                    _Rel.NARROWER: "PARAM_TYPE_NARROWED",
                    _Rel.WIDER: "PARAM_TYPE_WIDENED",
                    _Rel.INCOMPARABLE: "PARAM_TYPE_CHANGED",
                }[rel]
        elif self.output:
            narrowed = rel is _Rel.NARROWER
            rule = "OUTPUT_CONSTRAINT_TIGHTENED" if narrowed else "OUTPUT_CONSTRAINT_LOOSENED"
        else:
            widened = rel is _Rel.WIDER
            rule = "PARAM_CONSTRAINT_LOOSENED" if widened else "PARAM_CONSTRAINT_TIGHTENED"
        self.out.add(rule, path, f"{self.who(subject)}: {what}")

    def keyword_changed(self, path: str, subject: str, keyword: str) -> None:
        rule = "OUTPUT_KEYWORD_CHANGED" if self.output else "PARAM_KEYWORD_CHANGED"
        self.out.add(
            rule,
            _child(path, keyword),
            f"{self.who(subject)}: {keyword!r} changed (not analysed; assumed breaking)",
        )

    # -- entry point

    def compare(
        self,
        old_raw: Any,
        new_raw: Any,
        path: str,
        subject: str,
        stack: frozenset[tuple[object, object]] = frozenset(),
        top: bool = False,
    ) -> None:
        if path.count(".") > _MAX_PATH_DEPTH:
            return  # absurdly deep schemas: the section's EQUIVALENT_FORM net still fires
        old, old_chain = _normalize(old_raw, self.old_root)
        new, new_chain = _normalize(new_raw, self.new_root)
        if old_chain or new_chain:
            key = (old_chain or ("@", id(old_raw)), new_chain or ("@", id(new_raw)))
            if key in stack:
                return
            stack = stack | {key}
        self.compare_types(old, new, path, subject)
        self.compare_enums(old, new, path, subject)
        self.compare_constraints(old, new, path, subject)
        self.compare_object(old, new, path, subject, stack, top)
        self.compare_slot(old, new, "items", path, subject, stack)
        self.compare_unions(old, new, path, subject, stack)
        self.compare_rest(old, new, path, subject)

    # -- aspects

    def compare_types(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        declared_same = not _differs(old, new, "type")
        if not declared_same and not (_declared_ok(old) and _declared_ok(new)):
            self.keyword_changed(path, subject, "type")
            return
        if declared_same and _enum_values(old) is not None and _enum_values(new) is not None:
            return  # the value sets decide; compare_enums reports them
        old_types, new_types = _types(old), _types(new)
        if old_types == new_types:
            return
        if new_types < old_types:
            rel = _Rel.NARROWER
        elif new_types > old_types:
            rel = _Rel.WIDER
        else:
            rel = _Rel.INCOMPARABLE

        def show(types: frozenset[str]) -> str:
            if types == _ALL_TYPES:
                return "any"
            shown = types - {"integer"} if "number" in types else types
            return "|".join(sorted(shown)) or "nothing"

        type_path = _child(path, "type") if "type" in old or "type" in new else path
        what = f"type {show(old_types)} -> {show(new_types)}"
        self.relation(rel, type_path, subject, what, "type")

    def compare_enums(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        if "enum" in old and "enum" in new and _same(old["enum"], new["enum"]):
            return
        if ("enum" in old and not isinstance(old["enum"], list)) or (
            "enum" in new and not isinstance(new["enum"], list)
        ):
            self.keyword_changed(path, subject, "enum")
            return
        old_values, new_values = old.get("enum"), new.get("enum")
        if old_values is None and new_values is None:
            return
        enum_path = _child(path, "enum")
        who = self.who(subject)
        narrowed_rule = "OUTPUT_ENUM_VALUE_REMOVED" if self.output else "PARAM_ENUM_VALUE_REMOVED"
        widened_rule = "OUTPUT_ENUM_VALUE_ADDED" if self.output else "PARAM_ENUM_VALUE_ADDED"
        if old_values is None:
            self.out.add(narrowed_rule, enum_path, f"{who}: enum {_fmt(new_values)} added")
            return
        if new_values is None:
            self.out.add(widened_rule, enum_path, f"{who}: enum restriction removed")
            return
        old_keys = {_canon(v): v for v in old_values}
        new_keys = {_canon(v): v for v in new_values}
        removed = [old_keys[k] for k in sorted(old_keys.keys() - new_keys.keys())]
        added = [new_keys[k] for k in sorted(new_keys.keys() - old_keys.keys())]
        if removed:
            shown = ", ".join(_fmt(v) for v in removed)
            self.out.add(narrowed_rule, enum_path, f"{who}: enum value(s) {shown} removed")
        if added:
            shown = ", ".join(_fmt(v) for v in added)
            self.out.add(widened_rule, enum_path, f"{who}: enum value(s) {shown} added")

    def compare_constraints(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        for lower in (True, False):
            keywords = ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
            if not any(_differs(old, new, kw) for kw in keywords):
                continue
            junk = [
                kw
                for kw in keywords
                for side in (old, new)
                if kw in side
                and _number(side[kw]) is None
                and not (kw.startswith("exclusive") and isinstance(side[kw], bool))
            ]
            if junk:
                self.keyword_changed(path, subject, junk[0])
                continue
            old_bound, new_bound = _bound(old, lower), _bound(new, lower)
            rel = _bound_rel(old_bound, new_bound, lower)
            setter = new_bound or old_bound
            kw_path = _child(path, setter[2] if setter else keywords[0])
            name = "lower bound" if lower else "upper bound"
            what = f"{name} {_show_bound(old_bound, lower)} -> {_show_bound(new_bound, lower)}"
            self.relation(rel, kw_path, subject, what, "constraint")
        for keyword, lower in (
            ("minLength", True), ("maxLength", False), ("minItems", True), ("maxItems", False),
            ("minProperties", True), ("maxProperties", False),
        ):  # fmt: skip
            if not _differs(old, new, keyword):
                continue
            old_n, new_n = _number(old.get(keyword)), _number(new.get(keyword))
            if (keyword in old and old_n is None) or (keyword in new and new_n is None):
                self.keyword_changed(path, subject, keyword)
                continue
            rel = _count_rel(old_n, new_n, lower)
            what = f"{keyword} {_fmt(old.get(keyword, _MISSING))} -> "
            what += _fmt(new.get(keyword, _MISSING))
            self.relation(rel, _child(path, keyword), subject, what, "constraint")
        if _differs(old, new, "multipleOf"):
            old_m, new_m = _number(old.get("multipleOf")), _number(new.get("multipleOf"))
            valid = [
                number is not None and number > 0
                for side, number in ((old, old_m), (new, new_m))
                if "multipleOf" in side
            ]
            if not all(valid):
                self.keyword_changed(path, subject, "multipleOf")
            else:
                what = f"multipleOf {_fmt(old.get('multipleOf', _MISSING))} -> "
                what += _fmt(new.get("multipleOf", _MISSING))
                rel = _multiple_rel(old_m, new_m)
                self.relation(rel, _child(path, "multipleOf"), subject, what, "constraint")
        for keyword in ("pattern", "format", "const"):
            if not _differs(old, new, keyword):
                continue
            old_v, new_v = old.get(keyword, _MISSING), new.get(keyword, _MISSING)
            rel = _presence_rel(old_v, new_v)
            if old_v is _MISSING:
                what = f"{keyword} {_fmt(new_v)} added"
            elif new_v is _MISSING:
                what = f"{keyword} {_fmt(old_v)} removed"
            else:
                what = f"{keyword} {_fmt(old_v)} -> {_fmt(new_v)}"
            self.relation(rel, _child(path, keyword), subject, what, "constraint")
        if _differs(old, new, "uniqueItems"):
            old_u, new_u = old.get("uniqueItems") is True, new.get("uniqueItems") is True
            if old_u != new_u:
                rel = _Rel.NARROWER if new_u else _Rel.WIDER
                what = "uniqueItems required" if new_u else "uniqueItems no longer required"
                self.relation(rel, _child(path, "uniqueItems"), subject, what, "constraint")

    def compare_object(
        self,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        path: str,
        subject: str,
        stack: frozenset[tuple[object, object]],
        top: bool,
    ) -> None:
        old_props, new_props = _mapping(old.get("properties")), _mapping(new.get("properties"))
        old_req, new_req = _required(old), _required(new)
        old_names = list(old_props) + [n for n in old_req if n not in old_props]
        new_names = list(new_props) + [n for n in new_req if n not in new_props]
        self.compare_slot(old, new, "additionalProperties", path, subject, stack)
        if not old_names and not new_names:
            return
        props_path = _child(path, "properties")
        removed = [n for n in old_names if n not in new_names]
        added = [n for n in new_names if n not in old_names]
        renamed: dict[str, str] = {}
        if not self.output and len(removed) == 1 and len(added) == 1:
            before, after = removed[0], added[0]
            if (
                before in old_props
                and after in new_props
                and list(old_props).index(before) == list(new_props).index(after)
                and (before in old_req) == (after in new_req)
                and _same(old_props[before], new_props[after])
            ):
                renamed[before] = after
                who = self.who(_sub(subject, before))
                self.out.add(
                    "PARAM_RENAMED", _child(props_path, before), f"{who} renamed to {after!r}"
                )
        closed_new = new.get("additionalProperties") is False
        for name in removed:
            if name in renamed:
                continue
            who = self.who(_sub(subject, name))
            if self.output:
                message = f"{who} was removed"
                self.out.add("OUTPUT_FIELD_REMOVED", _child(props_path, name), message)
            else:
                effect = "is rejected" if closed_new else "is ignored by the server"
                message = f"{who} was removed; a call that sends it {effect}"
                self.out.add("PARAM_REMOVED", _child(props_path, name), message)
        for name in added:
            if name in renamed.values():
                continue
            who = self.who(_sub(subject, name))
            child = _child(props_path, name)
            if self.output:
                if old.get("additionalProperties") is False:
                    message = f"new {who} in an object that forbade additional properties"
                    self.out.add("OUTPUT_CONSTRAINT_LOOSENED", child, message)
                else:
                    self.out.add("OUTPUT_FIELD_ADDED", child, f"new {who}")
            elif name in new_req:
                self.out.add("PARAM_REQUIRED_ADDED", child, f"new required {who}")
            else:
                self.out.add("PARAM_OPTIONAL_ADDED", child, f"new optional {who}")
        for name in old_names:
            if name not in new_names:
                continue
            child, child_subject = _child(props_path, name), _sub(subject, name)
            was, now = name in old_req, name in new_req
            if was != now:
                who = self.who(child_subject)
                if self.output:
                    rule = "OUTPUT_FIELD_MADE_REQUIRED" if now else "OUTPUT_FIELD_MADE_OPTIONAL"
                else:
                    rule = "PARAM_MADE_REQUIRED" if now else "PARAM_MADE_OPTIONAL"
                self.out.add(rule, child, f"{who} became {'required' if now else 'optional'}")
            self.compare(
                old_props.get(name, {}), new_props.get(name, {}), child, child_subject, stack
            )
        if top and not self.output:
            self.compare_order(list(old_props), list(new_props), renamed, props_path)

    def compare_order(
        self, old_order: list[str], new_order: list[str], renamed: Mapping[str, str], path: str
    ) -> None:
        mapped = [renamed.get(name, name) for name in old_order]
        common_old = [name for name in mapped if name in new_order]
        common_new = [name for name in new_order if name in mapped]
        if common_old != common_new:
            message = "parameter order changed: " + ", ".join(common_old)
            message += " -> " + ", ".join(common_new)
            self.out.add("PARAM_ORDER_CHANGED", path, message)
            return
        if not common_new:
            return
        last = new_order.index(common_new[-1])
        inserted = [name for name in new_order[:last] if name not in mapped]
        if inserted:
            shown = ", ".join(repr(name) for name in inserted)
            message = f"parameter(s) {shown} inserted before existing ones; positions shift"
            self.out.add("PARAM_ORDER_CHANGED", path, message)

    def compare_slot(
        self,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        keyword: str,
        path: str,
        subject: str,
        stack: frozenset[tuple[object, object]],
    ) -> None:
        """``items`` or ``additionalProperties``: closed (false), open, or a schema."""
        if keyword not in old and keyword not in new:
            return
        old_value, new_value = old.get(keyword), new.get(keyword)
        if isinstance(old_value, list) or isinstance(new_value, list):  # tuple-form items
            if not _same(old_value, new_value):
                self.keyword_changed(path, subject, keyword)
            return
        old_slot, new_slot = _slot(old_value), _slot(new_value)
        slot_path = _child(path, keyword)
        if old_slot is False or new_slot is False:
            if old_slot is new_slot:
                return
            rel = _Rel.NARROWER if new_slot is False else _Rel.WIDER
            closed = "closed" if new_slot is False else "opened"
            self.relation(rel, slot_path, subject, f"{keyword} {closed}", "constraint")
            return
        suffix = "[]" if keyword == "items" else "*"
        child_subject = subject + suffix if keyword == "items" else _sub(subject, suffix)
        self.compare(old_slot, new_slot, slot_path, child_subject, stack)

    def compare_unions(
        self,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        path: str,
        subject: str,
        stack: frozenset[tuple[object, object]],
    ) -> None:
        for keyword in ("anyOf", "oneOf", "allOf"):
            old_alts, new_alts = old.get(keyword, _MISSING), new.get(keyword, _MISSING)
            if not isinstance(old_alts, list) or not isinstance(new_alts, list):
                if not _same(old_alts, new_alts):
                    self.keyword_changed(path, subject, keyword)
                continue
            if len(old_alts) == len(new_alts):
                for index, (old_alt, new_alt) in enumerate(zip(old_alts, new_alts, strict=True)):
                    alt_path = f"{_child(path, keyword)}[{index}]"
                    self.compare(old_alt, new_alt, alt_path, subject, stack)
                continue
            if keyword == "allOf":
                self.keyword_changed(path, subject, keyword)
                continue
            old_keys = {_canon(alt) for alt in old_alts}
            new_keys = {_canon(alt) for alt in new_alts}
            gone, came = len(old_keys - new_keys), len(new_keys - old_keys)
            if gone and came:
                rel = _Rel.INCOMPARABLE
            elif gone:
                rel = _Rel.NARROWER
            elif came:
                rel = _Rel.WIDER
            else:
                rel = _Rel.EQUAL
            what = f"{keyword}: {gone} alternative(s) removed, {came} added"
            self.relation(rel, _child(path, keyword), subject, what, "type")

    def compare_rest(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        who = self.who(subject)
        if _differs(old, new, "default"):
            if self.output:
                self.out.add(
                    "SCHEMA_ANNOTATION_CHANGED", _child(path, "default"), f"{who}: default changed"
                )
            else:
                what = f"{who}: default {_fmt(old.get('default', _MISSING))} -> "
                what += _fmt(new.get("default", _MISSING))
                self.out.add("PARAM_DEFAULT_CHANGED", _child(path, "default"), what)
        if _differs(old, new, "description"):
            rule = "SCHEMA_ANNOTATION_CHANGED" if self.output else "PARAM_DESCRIPTION_CHANGED"
            self.out.add(rule, _child(path, "description"), f"{who}: description changed")
        for keyword in sorted((old.keys() | new.keys()) - _ANALYSED - _IGNORED):
            if not _differs(old, new, keyword):
                continue
            if keyword in _UNANALYSED:
                self.keyword_changed(path, subject, keyword)
            else:
                self.out.add(
                    "SCHEMA_ANNOTATION_CHANGED",
                    _child(path, keyword),
                    f"{who}: annotation {keyword!r} changed",
                )


def _required(schema: Mapping[str, Any]) -> list[str]:
    names = schema.get("required")
    if not isinstance(names, list):
        return []
    return list(dict.fromkeys(name for name in names if isinstance(name, str)))


# --------------------------------------------------------------------------- tool diff


def _compare_tool(old: Mapping[str, Any], new: Mapping[str, Any], out: _Out) -> None:
    if _differs(old, new, "title"):
        message = f"title {_fmt(old.get('title', _MISSING))} -> {_fmt(new.get('title', _MISSING))}"
        out.add("TITLE_CHANGED", "title", message)
    if _differs(old, new, "description"):
        out.add("DESCRIPTION_CHANGED", "description", "description changed; review the new text")

    def section(key: str, compare: Callable[[], None]) -> None:
        before = len(out.changes)
        compare()
        if len(out.changes) == before and _differs(old, new, key):
            out.add("EQUIVALENT_FORM", key, f"{key} rewritten without a change in meaning")

    old_in, new_in = old.get("inputSchema"), new.get("inputSchema")
    section(
        "inputSchema",
        lambda: _SchemaDiff(out, False, old_in, new_in).compare(
            old_in, new_in, "inputSchema", "", top=True
        ),
    )
    if "outputSchema" in old and "outputSchema" not in new:
        out.add(
            "OUTPUT_SCHEMA_REMOVED", "outputSchema", "output schema removed; no structured result"
        )
    elif "outputSchema" in new and "outputSchema" not in old:
        out.add("OUTPUT_SCHEMA_ADDED", "outputSchema", "output schema added")
    elif "outputSchema" in old:
        old_out, new_out = old["outputSchema"], new["outputSchema"]
        section(
            "outputSchema",
            lambda: _SchemaDiff(out, True, old_out, new_out).compare(
                old_out, new_out, "outputSchema", ""
            ),
        )
    section("annotations", lambda: _compare_annotations(old, new, out))
    section("execution", lambda: _compare_execution(old, new, out))
    if _differs(old, new, "icons"):
        out.add("ICONS_CHANGED", "icons", "icons changed")
    if _differs(old, new, "_meta"):
        out.add("META_CHANGED", "_meta", "_meta changed")
    for key in sorted((old.keys() | new.keys()) - _KNOWN_TOOL_KEYS):
        if _differs(old, new, key):
            out.add("UNKNOWN_FIELD_CHANGED", key, f"member {key!r} changed")


def _effective_hints(annotations: Mapping[str, Any]) -> dict[str, bool]:
    result: dict[str, bool] = {}
    for name, default, *_ in _HINTS:
        value = annotations.get(name)
        result[name] = value if isinstance(value, bool) else default
    if result["readOnlyHint"]:  # a read-only tool neither destroys nor repeats effects
        result["destructiveHint"] = False
        result["idempotentHint"] = True
    return result


def _compare_annotations(old: Mapping[str, Any], new: Mapping[str, Any], out: _Out) -> None:
    old_ann, new_ann = _mapping(old.get("annotations")), _mapping(new.get("annotations"))
    if _differs(old_ann, new_ann, "title"):
        message = f"annotations.title {_fmt(old_ann.get('title', _MISSING))} -> "
        message += _fmt(new_ann.get("title", _MISSING))
        out.add("TITLE_CHANGED", "annotations.title", message)
    old_eff, new_eff = _effective_hints(old_ann), _effective_hints(new_ann)
    for name, _default, unsafe_when_lost, unsafe_rule, safe_rule in _HINTS:
        path = f"annotations.{name}"
        if old_eff[name] != new_eff[name]:
            unsafe = old_eff[name] if unsafe_when_lost else new_eff[name]
            before = _show_hint(old_ann.get(name), old_eff[name])
            message = f"{name} {before} -> {_show_hint(new_ann.get(name), new_eff[name])}"
            out.add(unsafe_rule if unsafe else safe_rule, path, message)
        elif _differs(old_ann, new_ann, name):
            message = f"{name} restated; effective value stays {str(new_eff[name]).lower()}"
            out.add("EQUIVALENT_FORM", path, message)
    known = {"title"} | {name for name, *_ in _HINTS}
    for key in sorted((old_ann.keys() | new_ann.keys()) - known):
        if _differs(old_ann, new_ann, key):
            out.add("UNKNOWN_FIELD_CHANGED", f"annotations.{key}", f"annotation {key!r} changed")


def _show_hint(raw: Any, effective: bool) -> str:
    """``true``/``false`` as written, or ``(true)`` when implied by a default."""
    shown = "true" if effective else "false"
    return shown if isinstance(raw, bool) and raw == effective else f"({shown})"


def _compare_execution(old: Mapping[str, Any], new: Mapping[str, Any], out: _Out) -> None:
    old_exec, new_exec = _mapping(old.get("execution")), _mapping(new.get("execution"))
    old_task = old_exec.get("taskSupport", "forbidden")
    new_task = new_exec.get("taskSupport", "forbidden")
    path = "execution.taskSupport"
    if not _same(old_task, new_task):
        message = f"taskSupport {_fmt(old_task)} -> {_fmt(new_task)}"
        if new_task == "optional" and old_task in _TASK_VALUES:
            out.add("TASK_SUPPORT_LOOSENED", path, message)
        else:
            out.add("TASK_SUPPORT_TIGHTENED", path, message)
    elif _differs(old_exec, new_exec, "taskSupport"):
        out.add("EQUIVALENT_FORM", path, f"taskSupport restated; stays {_fmt(new_task)}")
    for key in sorted((old_exec.keys() | new_exec.keys()) - {"taskSupport"}):
        if _differs(old_exec, new_exec, key):
            out.add("UNKNOWN_FIELD_CHANGED", f"execution.{key}", f"execution {key!r} changed")
