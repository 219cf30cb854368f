"""The "Changes since X" section: ``mcpgen diff``'s classification, one row per cause.

Rows come from the same comparison as ``mcpgen diff`` (``diff_files`` or
``diff_against_git``, the loaders included) and keep its rule names, severities and
categories. They are ordered breaking first, the strictest category first
(source, call, behavior), then warnings, then compatible changes; within a group in
``mcpgen diff``'s own order (by tool, then rule). Changes that share a cause are one
row: a new enum value in a shared type used by 20 tools is one row "used by 20 tools"
(the change's descriptor path is followed through ``$ref``s to find the type), and the
same change at the same path of several tools is one row too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from mcpgen_runtime.contract.compare import Severity

from ..diff import DiffReport, LocatedChange

__all__ = ["ChangeRow", "ChangeSummary", "change_rows", "load_report"]

_SEVERITY_RANK = {Severity.BREAKING: 0, Severity.WARNING: 1, Severity.COMPATIBLE: 2}


@dataclass(frozen=True)
class ChangeRow:
    tool: str  # the first tool of the row; "" for the contract as a whole (package, types)
    linked: bool  # the tool exists in the new contract: its name links to its section
    rule: str
    severity: str  # breaking | warning | compatible
    category: str  # source | call | behavior, for a breaking change; else ""
    path: str
    message: str
    # every tool the row stands for, each with whether it links: one cause, many tools
    tools: tuple[tuple[str, bool], ...] = ()
    location: str = ""  # the schema location that changed: ``types.Region.enum``, or path
    paths: tuple[tuple[str, str], ...] = ()  # (tool, descriptor path) of each change


@dataclass(frozen=True)
class ChangeSummary:
    old_label: str
    rows: list[ChangeRow]
    breaking: int
    warnings: int
    compatible: int


def _order(located: LocatedChange) -> tuple[int, int]:
    change = located.change
    strictness = -int(change.category) if change.category is not None else 0
    return _SEVERITY_RANK[change.severity], strictness


_TOKEN: Final = re.compile(r'\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def _tokens(path: str) -> list[str | int] | None:
    """``inputSchema.properties.x.oneOf[1]["a b"]`` as its keys and indexes."""
    out: list[str | int] = []
    at = 0
    while at < len(path):
        match = _TOKEN.match(path, at)
        if match is None:
            return None
        name, index, quoted = match.groups()
        out.append(name if name is not None else int(index) if index else json.loads(quoted))
        at = match.end()
    return out


def shared_location(
    schema_of: Mapping[str, Any], path: str, types: Mapping[str, Any]
) -> str | None:
    """``types.Region.enum`` when the descriptor ``path`` of a change runs through a
    ``$ref`` to a shared type (the innermost one), else None."""
    tokens = _tokens(path)
    if not tokens or not isinstance(tokens[0], str):
        return None
    root = schema_of.get(tokens[0])
    node: Any = root
    found: tuple[str, int] | None = None
    for step in range(1, len(tokens) + 1):
        for _ in range(8):  # a chain of references
            ref = node.get("$ref") if isinstance(node, Mapping) else None
            if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
                break
            name = ref[len("#/$defs/") :]
            if name in types:
                found = (name, step)
            node = (root.get("$defs") or {}).get(name) if isinstance(root, Mapping) else None
        if step == len(tokens):
            break
        token = tokens[step]
        if isinstance(node, Mapping) and isinstance(token, str):
            node = node.get(token)
        elif isinstance(node, list) and isinstance(token, int) and token < len(node):
            node = node[token]
        else:
            break
    if found is None:
        return None
    name, step = found
    rest = "".join(f"[{t}]" if isinstance(t, int) else f".{t}" for t in tokens[step:])
    return f"types.{name}{rest}"


def change_rows(
    report: DiffReport,
    tools: set[str],
    descriptors: Mapping[str, Mapping[str, Any]] | None = None,
    types: Mapping[str, Any] | None = None,
) -> ChangeSummary:
    """The section's rows, breaking first; ``tools`` are the new contract's tool names.
    One cause, one row: changes of several tools with the same rule and the same
    location (a shared type, from ``descriptors`` of the new tools and ``types``, else
    the same path) and the same words are one row that lists its tools."""
    ordered = sorted(report.changes, key=_order)  # stable: diff's own order within a group
    groups: dict[tuple[str, str, str, str], list[LocatedChange]] = {}
    locations: dict[tuple[str, str, str, str], str] = {}
    for located in ordered:
        change = located.change
        schema_of = (descriptors or {}).get(change.tool)
        shared = shared_location(schema_of, change.path, types or {}) if schema_of else None
        words = change.message.partition(": ")[2] if shared else change.message
        key = (change.severity.value, change.rule, shared or change.path, words)
        groups.setdefault(key, []).append(located)
        locations[key] = shared or change.path
    rows = [_row(members, tools, locations[key]) for key, members in groups.items()]
    count = {severity: 0 for severity in Severity}
    for located in report.changes:
        count[located.change.severity] += 1
    return ChangeSummary(
        report.old_label,
        rows,
        count[Severity.BREAKING],
        count[Severity.WARNING],
        count[Severity.COMPATIBLE],
    )


def _row(members: list[LocatedChange], tools: set[str], location: str) -> ChangeRow:
    first = members[0].change
    names = list(dict.fromkeys(m.change.tool for m in members))
    message = first.message
    if location.startswith("types.") and len(names) > 1:
        name = location.split(".")[1]
        message = f"type {name}: {first.message.partition(': ')[2] or first.message}"
    return ChangeRow(
        tool=first.tool,
        linked=first.tool in tools,
        rule=first.rule,
        severity=first.severity.value,
        category=first.category.name.lower() if first.category else "",
        path=first.path if len(names) == 1 else location,
        message=message,
        tools=tuple((name, name in tools) for name in names),
        location=location,
        paths=tuple((m.change.tool, m.change.path) for m in members),
    )


def load_report(spec: Path, against: str, *, allow_outside_refs: bool) -> DiffReport:
    """Compare ``spec`` with ``against``, read as ``mcpgen diff`` reads it: an existing
    file is the old spec (``mcpgen diff OLD SPEC``); anything else is a git ref
    (``mcpgen diff SPEC --against REF``). Raises ``DiffFailed``."""
    import tempfile

    from ..diff import diff_against_git, diff_files

    if Path(against).is_file():
        return diff_files(Path(against), spec, allow_outside_refs=allow_outside_refs)
    with tempfile.TemporaryDirectory(prefix="mcpgen-docs-") as scratch:
        return diff_against_git(spec, against, Path(scratch), allow_outside_refs=allow_outside_refs)
