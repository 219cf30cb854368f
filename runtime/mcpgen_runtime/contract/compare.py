"""Compatibility rules between two lists of MCP tool descriptors (OLD, NEW), written once.

``mcpgen diff OLD NEW`` and a generated client's contract check on connect (OLD = the
contract, NEW = what the live server lists) both call :func:`compare_tools`, so they agree.

Rules, in result order (results sort by tool name, then this order, then path, then message):

    Rule                        Severity    Category  Meaning
    TOOL_REMOVED                breaking    SOURCE    a tool is gone: every call to it fails
    TOOL_RENAMED                breaking    SOURCE    one tool removed + one added, equal but for the name
    TOOL_ADDED                  compatible  -         a new tool
    PARAM_REMOVED               breaking    SOURCE    a parameter is gone (always breaking, see below)
    PARAM_RENAMED               breaking    SOURCE    one parameter removed + one added, same schema/place
    PARAM_ORDER_CHANGED         breaking    SOURCE    positional order moved (reordered, or inserted
                                                      before an existing parameter); top level only
    PARAM_REQUIRED_ADDED        breaking    SOURCE    a new required parameter
    PARAM_MADE_REQUIRED         breaking    SOURCE    an optional parameter became required
    PARAM_TYPE_NARROWED         breaking    SOURCE    the accepted type set shrank
    PARAM_TYPE_CHANGED          breaking    SOURCE    the accepted type set changed (neither shrank nor grew)
    PARAM_ENUM_VALUE_REMOVED    breaking    SOURCE    an enum value removed, or an enum added where none was
    PARAM_CONSTRAINT_TIGHTENED  breaking    CALL      minimum up, maximum down, exclusive*, min*/max*
                                                      Length/Items/Properties, pattern/format added or
                                                      changed, multipleOf, const, uniqueItems,
                                                      additionalProperties/items closed or narrowed
    PARAM_KEYWORD_CHANGED       breaking    CALL      a validation keyword this module does not analyse
                                                      (allOf, not, if, prefixItems, unresolved $ref, ...)
                                                      changed: assumed breaking
    PARAM_HEADER_ADDED          breaking    CALL      x-mcp-header added to a parameter or renamed: an
                                                      old client over 2026-07-28 HTTP sends no (or the
                                                      old) Mcp-Param-* header and is refused (-32020)
    PARAM_DEFAULT_CHANGED       warning     -         a default added, removed or changed
    PARAM_DESCRIPTION_CHANGED   warning     -         a description inside inputSchema changed
    PARAM_HEADER_REMOVED        compatible  -         x-mcp-header removed: the server ignores a header
                                                      it no longer declares
    PARAM_OPTIONAL_ADDED        compatible  -         a new optional parameter
    PARAM_MADE_OPTIONAL         compatible  -         a required parameter became optional
    PARAM_TYPE_WIDENED          compatible  -         more types accepted (integer -> number, + "null")
    PARAM_ENUM_VALUE_ADDED      compatible  -         an enum value added, or the enum dropped
    PARAM_CONSTRAINT_LOOSENED   compatible  -         the opposite of PARAM_CONSTRAINT_TIGHTENED
    OUTPUT_SCHEMA_REMOVED       breaking    SOURCE    no outputSchema any more (no structuredContent)
    OUTPUT_WRAPPING_CHANGED     breaking    SOURCE    an object {result: X} became X, or X became
                                                      {result: X}: the revisions before 2026-07-28
                                                      list and send the same wrapper (no change
                                                      there), but at 2026-07-28 structuredContent is
                                                      another value, and the typed method's return
                                                      type changes (``protocol.structured``)
    OUTPUT_FIELD_REMOVED        breaking    SOURCE    an output field is gone
    OUTPUT_FIELD_TYPE_CHANGED   breaking    SOURCE    an output type widened or changed
    OUTPUT_FIELD_MADE_OPTIONAL  breaking    SOURCE    a required output field became optional
    OUTPUT_ENUM_VALUE_ADDED     breaking    SOURCE    an output enum value added, or the enum dropped
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
    SCOPE_ADDED                 breaking    CALL      the tool needs a scope more (io.mcpgen/scopes in
                                                      _meta): tokens issued for it may lack it
    SCOPE_REMOVED               compatible  -         the tool needs a scope less
    META_CHANGED                compatible  -         _meta changed (besides the scopes)
    SCHEMA_ANNOTATION_CHANGED   compatible  -         a non-validating schema keyword changed (title,
                                                      examples, deprecated, ...; output descriptions
                                                      and defaults)
    UNKNOWN_FIELD_CHANGED       compatible  -         a descriptor/annotations/execution member this
                                                      module does not know changed
    EQUIVALENT_FORM             compatible  -         written differently, same meaning (an explicit
                                                      default, a hint ignored for a read-only tool, a
                                                      schema rewritten equivalently)

Categories (a breaking change has exactly one; ``breaking(category=C)`` returns C and stricter):

- SOURCE: code written against the generated package stops type-checking (mypy): a tool or
  parameter is removed or renamed, a parameter moved (positional order), made required or added
  as required (a call without it no longer fits the signature), a parameter's type or enum
  narrowed or changed (its annotation or ``Literal`` shrinks), an output model loses a field, a
  field changes type or becomes optional, an output enum gains a value (exhaustive matches over
  the ``Literal`` fail), the output schema is gone (the method's return type changes).  All of
  these but PARAM_ORDER_CHANGED also break the wire (arguments travel by name), so SOURCE is
  also CALL: ``--category call`` fails on them too.
- CALL: an old client breaks on the wire against the new server but its code still type-checks:
  a value the annotations allow is rejected (a tightened constraint: minimum, pattern, length),
  or a result no longer validates against the old output schema, which the generated client
  checks (an output constraint loosened), or an unanalysed keyword changed.
- BEHAVIOR: calls still work, but a promise changed (hints in the unsafe direction, task support).

Decisions:

- Inputs and outputs are mirror images: inputs break when they accept less, outputs when they
  may produce more.  An added output enum value is breaking (exhaustive readers and the generated
  ``Literal`` types reject it).  A field added to an output object whose old schema had
  ``additionalProperties: false`` is OUTPUT_CONSTRAINT_LOOSENED (generated models forbid extras).
- PARAM_REMOVED is always breaking: the generated signature loses it, and on the wire the server
  either rejects it (closed schema) or silently ignores it (open schema); the message says which.
- Changes whose direction is unknown (a format replaced, a pattern replaced by one neither
  contains, an unanalysed keyword) count as breaking on both sides.  A replaced ``pattern`` is
  compared structurally (``patterns.py``): a class that gains characters, a repeat whose bounds
  widen, an added alternative or a dropped anchor is wider.  A single schema on one side and an
  ``anyOf``/``oneOf`` on the other compare as one alternative against the union's (one change:
  wider when the single schema is among them).  ``anyOf``/``oneOf`` of plain types fold into a type set, and a
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

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..auth.scopes import tool_scopes
from ..protocol.constants import META_SCOPES
from ..protocol.pointer import MISSING
from ..protocol.structured import needs_wrapper, wrapped_schema
from .rules import (  # the rule vocabulary, re-exported as this module's API
    RANK,
    RULES,
    Category,
    Change,
    Out,
    Rule,
    Severity,
)
from .schemas import SchemaDiff
from .shapes import (
    HINTS,
    KNOWN_TOOL_KEYS,
    TASK_VALUES,
    by_name,
    differs,
    fmt,
    mapping,
    same,
    without_name,
)

__all__ = ["RULES", "Category", "Change", "Rule", "Severity", "breaking", "compare_tools"]


def _wrapping_changed(old: Any, new: Any) -> bool:
    """Whether one output schema is the other's wrapper (``{result: X}`` and ``X``)."""
    if needs_wrapper(old) == needs_wrapper(new):
        return False
    inner, outer = (new, old) if needs_wrapper(new) else (old, new)
    return same(wrapped_schema(inner), outer)


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
    old_tools, new_tools = by_name(old), by_name(new)
    out = Out()
    removed = [name for name in old_tools if name not in new_tools]
    added = [name for name in new_tools if name not in old_tools]
    if (
        len(removed) == 1
        and len(added) == 1
        and without_name(old_tools[removed[0]]) == without_name(new_tools[added[0]])
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
    return sorted(out.changes, key=lambda c: (c.tool, RANK[c.rule], c.path, c.message))


# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- schema shapes


# --------------------------------------------------------------------------- schema diff


# --------------------------------------------------------------------------- tool diff


def _compare_tool(old: Mapping[str, Any], new: Mapping[str, Any], out: Out) -> None:
    if differs(old, new, "title"):
        message = f"title {fmt(old.get('title', MISSING))} -> {fmt(new.get('title', MISSING))}"
        out.add("TITLE_CHANGED", "title", message)
    if differs(old, new, "description"):
        out.add("DESCRIPTION_CHANGED", "description", "description changed; review the new text")

    def section(key: str, compare: Callable[[], None]) -> None:
        before = len(out.changes)
        compare()
        if len(out.changes) == before and differs(old, new, key):
            out.add("EQUIVALENT_FORM", key, f"{key} rewritten without a change in meaning")

    old_in, new_in = old.get("inputSchema"), new.get("inputSchema")
    section(
        "inputSchema",
        lambda: SchemaDiff(out, False, old_in, new_in).compare(
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
        if _wrapping_changed(old_out, new_out):
            what = "unwrapped" if needs_wrapper(new_out) else "wrapped"
            out.add(
                "OUTPUT_WRAPPING_CHANGED",
                "outputSchema",
                f"output {what}: the same {{result: …}} object before 2026-07-28; "
                f"at 2026-07-28 structuredContent is now "
                + ("the value itself" if what == "unwrapped" else "{result: value}"),
            )
        else:
            section(
                "outputSchema",
                lambda: SchemaDiff(out, True, old_out, new_out).compare(
                    old_out, new_out, "outputSchema", ""
                ),
            )
    section("annotations", lambda: _compare_annotations(old, new, out))
    section("execution", lambda: _compare_execution(old, new, out))
    if differs(old, new, "icons"):
        out.add("ICONS_CHANGED", "icons", "icons changed")
    _compare_meta(old, new, out)
    for key in sorted((old.keys() | new.keys()) - KNOWN_TOOL_KEYS):
        if differs(old, new, key):
            out.add("UNKNOWN_FIELD_CHANGED", key, f"member {key!r} changed")


def _compare_meta(old: Mapping[str, Any], new: Mapping[str, Any], out: Out) -> None:
    """The OAuth scopes a tool needs (mcpgen's ``_meta`` key), then the rest of ``_meta``."""
    before, after = tool_scopes(old), tool_scopes(new)
    for scope in after:
        if scope not in before:
            out.add("SCOPE_ADDED", "scopes", f"needs scope {scope!r}: tokens may lack it")
    for scope in before:
        if scope not in after:
            out.add("SCOPE_REMOVED", "scopes", f"no longer needs scope {scope!r}")

    def rest(descriptor: Mapping[str, Any]) -> dict[str, Any]:
        """``_meta`` without the scopes (absent when nothing else is in it)."""
        if "_meta" not in descriptor:
            return {}
        meta = descriptor["_meta"]
        if isinstance(meta, Mapping):
            meta = {key: value for key, value in meta.items() if key != META_SCOPES}
            return {"_meta": meta} if meta else {}
        return {"_meta": meta}

    if differs(rest(old), rest(new), "_meta"):
        out.add("META_CHANGED", "_meta", "_meta changed")


def _effective_hints(annotations: Mapping[str, Any]) -> dict[str, bool]:
    result: dict[str, bool] = {}
    for name, default, *_ in HINTS:
        value = annotations.get(name)
        result[name] = value if isinstance(value, bool) else default
    if result["readOnlyHint"]:  # a read-only tool neither destroys nor repeats effects
        result["destructiveHint"] = False
        result["idempotentHint"] = True
    return result


def _compare_annotations(old: Mapping[str, Any], new: Mapping[str, Any], out: Out) -> None:
    old_ann, new_ann = mapping(old.get("annotations")), mapping(new.get("annotations"))
    if differs(old_ann, new_ann, "title"):
        message = f"annotations.title {fmt(old_ann.get('title', MISSING))} -> "
        message += fmt(new_ann.get("title", MISSING))
        out.add("TITLE_CHANGED", "annotations.title", message)
    old_eff, new_eff = _effective_hints(old_ann), _effective_hints(new_ann)
    for name, _default, unsafe_when_lost, unsafe_rule, safe_rule in HINTS:
        path = f"annotations.{name}"
        if old_eff[name] != new_eff[name]:
            unsafe = old_eff[name] if unsafe_when_lost else new_eff[name]
            before = _show_hint(old_ann.get(name), old_eff[name])
            message = f"{name} {before} -> {_show_hint(new_ann.get(name), new_eff[name])}"
            out.add(unsafe_rule if unsafe else safe_rule, path, message)
        elif differs(old_ann, new_ann, name):
            message = f"{name} restated; effective value stays {str(new_eff[name]).lower()}"
            out.add("EQUIVALENT_FORM", path, message)
    known = {"title"} | {name for name, *_ in HINTS}
    for key in sorted((old_ann.keys() | new_ann.keys()) - known):
        if differs(old_ann, new_ann, key):
            out.add(
                "UNKNOWN_FIELD_CHANGED",
                f"annotations.{key}",
                f"annotations.{key} {fmt(old_ann.get(key, MISSING))} -> "
                f"{fmt(new_ann.get(key, MISSING))}",
            )


def _show_hint(raw: Any, effective: bool) -> str:
    """``true``/``false`` as written, or ``(true)`` when implied by a default."""
    shown = "true" if effective else "false"
    return shown if isinstance(raw, bool) and raw == effective else f"({shown})"


def _compare_execution(old: Mapping[str, Any], new: Mapping[str, Any], out: Out) -> None:
    old_exec, new_exec = mapping(old.get("execution")), mapping(new.get("execution"))
    old_task = old_exec.get("taskSupport", "forbidden")
    new_task = new_exec.get("taskSupport", "forbidden")
    path = "execution.taskSupport"
    if not same(old_task, new_task):
        message = f"taskSupport {fmt(old_task)} -> {fmt(new_task)}"
        if new_task == "optional" and old_task in TASK_VALUES:
            out.add("TASK_SUPPORT_LOOSENED", path, message)
        else:
            out.add("TASK_SUPPORT_TIGHTENED", path, message)
    elif differs(old_exec, new_exec, "taskSupport"):
        out.add("EQUIVALENT_FORM", path, f"taskSupport restated; stays {fmt(new_task)}")
    for key in sorted((old_exec.keys() | new_exec.keys()) - {"taskSupport"}):
        if differs(old_exec, new_exec, key):
            out.add("UNKNOWN_FIELD_CHANGED", f"execution.{key}", f"execution {key!r} changed")
