"""The "Changes since X" section: ``mcpgen diff``'s classification, one row per change.

Rows come from the same comparison as ``mcpgen diff`` (``diff_files`` or
``diff_against_git``, the loaders included) and keep its rule names, severities and
categories. They are ordered breaking first, the strictest category first
(source, call, behavior), then warnings, then compatible changes; within a group in
``mcpgen diff``'s own order (by tool, then rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mcpgen_runtime.contract.compare import Severity

from ..diff import DiffReport, LocatedChange

__all__ = ["ChangeRow", "ChangeSummary", "change_rows", "load_report"]

_SEVERITY_RANK = {Severity.BREAKING: 0, Severity.WARNING: 1, Severity.COMPATIBLE: 2}


@dataclass(frozen=True)
class ChangeRow:
    tool: str  # "" for the contract as a whole (package, server, types)
    linked: bool  # the tool exists in the new contract: its name links to its section
    rule: str
    severity: str  # breaking | warning | compatible
    category: str  # source | call | behavior, for a breaking change; else ""
    path: str
    message: str


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


def change_rows(report: DiffReport, tools: set[str]) -> ChangeSummary:
    """The section's rows, breaking first; ``tools`` are the new contract's tool names."""
    ordered = sorted(report.changes, key=_order)  # stable: diff's own order within a group
    rows = [
        ChangeRow(
            tool=located.change.tool,
            linked=located.change.tool in tools,
            rule=located.change.rule,
            severity=located.change.severity.value,
            category=located.change.category.name.lower() if located.change.category else "",
            path=located.change.path,
            message=located.change.message,
        )
        for located in ordered
    ]
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
