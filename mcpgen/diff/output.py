"""The three output formats of ``mcpgen diff``: text (grouped per tool), JSON, and
GitHub workflow annotations."""

from __future__ import annotations

import json
import re

import click

from mcpgen_runtime.contract.compare import Category, Change, Severity

from ..printable import escape_json, escape_line
from .rules import DiffReport

__all__ = ["render_github", "render_json", "render_text"]


def _category_label(change: Change) -> str:
    return change.category.name.lower() if change.category is not None else ""


def render_text(report: DiffReport, category: Category, *, color: bool = False) -> list[str]:
    """One line per change, grouped per tool, then a summary line.

    Names, paths and messages come from the specs: their control, line-break and bidi
    characters are escaped here, before the colour codes of ``color`` are added (the
    CLI prints these lines as they are)."""
    lines = [escape_line(f"{report.old_label} -> {report.new_label}")]
    current: str | None = None
    width = max((len(c.change.rule) for c in report.changes), default=0)
    for located in report.changes:
        change = located.change
        if change.tool != current:
            current = change.tool
            line = report.tool_lines.get(change.tool)
            where = f" ({report.new_file}:{line})" if line else ""
            lines.append(
                escape_line(f"{change.tool}{where}")
                if change.tool
                else "contract (package, server, types)"
            )
        severity = change.severity.value
        label = f"{severity:<10} {_category_label(change):<8}"
        if color:
            tint = {
                "breaking": "red" if located.fails(category) else "magenta",
                "warning": "yellow",
            }.get(severity)
            label = click.style(label, fg=tint) if tint else label
        detail = escape_line(f"{change.rule:<{width}}  {change.path}: {change.message}")
        lines.append(f"  {label} {detail}")
    lines.append(_summary(report, category))
    return lines


def _summary(report: DiffReport, category: Category) -> str:
    counts = {severity: 0 for severity in Severity}
    for located in report.changes:
        counts[located.change.severity] += 1
    failing = report.failing(category)
    by_category = {level: 0 for level in sorted(Category, reverse=True)}  # strictest first
    for located in report.changes:
        if located.change.severity is Severity.BREAKING and located.change.category is not None:
            by_category[located.change.category] += 1
    detail = ", ".join(f"{n} {level.name.lower()}" for level, n in by_category.items() if n)
    breaking = f"{counts[Severity.BREAKING]} breaking" + (f" ({detail})" if detail else "")
    tally = (
        f"{len(report.changes)} change(s): {breaking}, {counts[Severity.WARNING]} warning(s), "
        f"{counts[Severity.COMPATIBLE]} compatible"
    )
    level = category.name.lower()
    if failing:
        return f"FAIL {tally}; {len(failing)} breaking at --category {level}"
    return f"OK {tally}; nothing breaking at --category {level}"


def render_json(report: DiffReport, category: Category) -> str:
    counts = {severity.value: 0 for severity in Severity}
    for located in report.changes:
        counts[located.change.severity.value] += 1
    document = {
        "old": report.old_label,
        "new": report.new_label,
        "category": category.name.lower(),
        "failed": bool(report.failing(category)),
        "summary": {**counts, "failing": len(report.failing(category))},
        "changes": [located.as_dict(category) for located in report.changes],
    }
    return escape_json(json.dumps(document, indent=2, ensure_ascii=False))


def render_github(report: DiffReport, category: Category) -> list[str]:
    """GitHub Actions workflow commands: ``::error`` for what fails, ``::warning`` for the
    rest that deserves a look (warnings, breaking changes below the category)."""
    lines: list[str] = []
    for located in report.changes:
        change = located.change
        if located.fails(category):
            kind = "error"
        elif change.severity is Severity.COMPATIBLE:
            continue
        else:
            kind = "warning"
        props = f"file={_gh_property(report.new_file)}"
        if located.line:
            props += f",line={located.line}"
        props += f",title={_gh_property(change.rule)}"
        subject = f"{change.tool}: " if change.tool else ""
        lines.append(f"::{kind} {props}::{_gh_data(subject + change.message)}")
    lines.append(_summary(report, category))
    return lines


def _gh_data(text: str) -> str:
    # Names and messages come from the specs: every control character but the line
    # breaks, which GitHub's own escapes below carry, is escaped visibly.
    text = "".join(
        part if part in ("\r", "\n") else escape_line(part) for part in re.split(r"([\r\n])", text)
    )
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")
