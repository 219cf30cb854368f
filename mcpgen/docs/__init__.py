"""``mcpgen docs``: a contract as one self-contained HTML page, with its changes.

    page.py           the page (Jinja template ``templates/docs/``) and its file
    model.py          what the page shows of each tool and type (from the IR)
    schema_html.py    JSON Schema → field tables, nested tables, alternatives, links
    constraints.py    every validation keyword in words
    markdown.py       descriptions: Markdown (raw HTML off) → nh3-sanitised HTML
    changes.py        "Changes since X" from ``mcpgen diff``'s classification

Each tool's example request comes from ``mcpgen.testing.examples`` (the generator
``mcpgen test`` calls with): readable, deterministic, checked by the runtime validator.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .. import ir
from ..descriptors import descriptor
from .changes import ChangeSummary, change_rows, load_report
from .page import INDEX, LandingEntry, landing_entry, render_landing, render_page, write_page

__all__ = [
    "INDEX",
    "ChangeSummary",
    "LandingEntry",
    "change_rows",
    "landing_entry",
    "load_report",
    "render_docs",
    "render_landing",
    "write_page",
]


def render_docs(
    contract: ir.Contract,
    spec: Path | None = None,
    against: str | None = None,
    *,
    allow_outside_refs: bool = False,
    label: str | None = None,
) -> str:
    """The page for ``contract``; with ``against`` (an old spec file or a git ref) and
    ``spec`` (the new spec's path), its "Changes since" section too, the old version
    named ``label`` (default: ``against`` as the user gave it: ``v1.2.0``, a file). Raises
    ``DiffFailed`` when the old spec cannot be read."""
    changes = None
    if against is not None:
        if spec is None:
            raise ValueError("comparing needs the spec's path")
        report = load_report(spec, against, allow_outside_refs=allow_outside_refs)
        changes = change_rows(
            report,
            {tool.name for tool in contract.tools},
            {tool.name: descriptor(tool) for tool in contract.tools},
            contract.types,
        )
        changes = replace(changes, old_label=label or against)
    return render_page(contract, changes)
