"""The page: the model rendered by ``templates/docs/page.html.jinja``, and its file.

Deterministic: the page holds nothing but what the spec (and the old spec) say and
mcpgen's version, in a fixed order; the same inputs give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from .. import __version__, ir
from .markdown import render_markdown
from .model import ToolView, tool_view, type_views

if TYPE_CHECKING:
    import jinja2

    from .changes import ChangeRow, ChangeSummary

__all__ = [
    "INDEX",
    "LandingEntry",
    "landing_entry",
    "render_landing",
    "render_page",
    "tool_groups",
    "write_page",
]

INDEX = "index.html"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    from ..paths import templates_dir

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir() / "docs"),
        autoescape=True,  # every spec string is escaped unless it is Markup made in model.py
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(contract: ir.Contract, changes: ChangeSummary | None = None) -> str:
    """The whole page as text."""
    client_class = f"{contract.server.class_prefix}Client"
    by_tool: dict[str, list[ChangeRow]] = {}
    for row in changes.rows if changes is not None else []:
        for name, _ in row.tools or ((row.tool, row.linked),):
            by_tool.setdefault(name, []).append(row)
    tools = [
        tool_view(contract, tool, client_class, by_tool.get(tool.name, []))
        for tool in contract.tools
    ]
    instructions = contract.server.instructions
    script, script_hash = _script()
    groups = tool_groups(tools)
    return (
        _environment()
        .get_template("page.html.jinja")
        .render(
            contract=contract,
            server=contract.server,
            heading=contract.server.title or contract.server.name,
            instructions=Markup(render_markdown(instructions)) if instructions else None,
            tools=[view for _, members in groups for view in members],
            groups=groups,
            script=script,
            script_hash=script_hash,
            types=type_views(contract),
            changes=changes,
            client_class=client_class,
            version=__version__,
        )
    )


@lru_cache(maxsize=1)
def _script() -> tuple[Markup, str]:
    """The page's one script (a filter for the contents, the current section marked)
    and its CSP hash: the policy allows exactly this script, and the page works
    without it."""
    import base64
    import hashlib

    from ..paths import templates_dir

    text = (templates_dir() / "docs" / "page.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return Markup(text), f"sha256-{digest}"


def tool_groups(tools: list[ToolView]) -> list[tuple[str | None, list[ToolView]]]:
    """Tools grouped by the prefix of their names (``issues.create`` → ``issues``) when
    two or more share one, each group where its first tool is; the rest alone."""
    prefixes = [view.name.split(".", 1)[0] if "." in view.name else None for view in tools]
    shared = {p for p in prefixes if p is not None and prefixes.count(p) > 1}
    groups: list[tuple[str | None, list[ToolView]]] = []
    where: dict[str, int] = {}
    for view, prefix in zip(tools, prefixes, strict=True):
        if prefix in shared and prefix is not None:
            if prefix not in where:
                where[prefix] = len(groups)
                groups.append((prefix, []))
            groups[where[prefix]][1].append(view)
        else:
            groups.append((None, [view]))
    return groups


@dataclass(frozen=True)
class LandingEntry:
    heading: str
    version: str
    package: str
    tools: int
    href: str  # relative: ``<package>/index.html``


def landing_entry(contract: ir.Contract) -> LandingEntry:
    """What the landing page of several specs says of one contract."""
    return LandingEntry(
        contract.server.title or contract.server.name,
        contract.server.version,
        contract.package,
        len(contract.tools),
        f"{contract.package}/{INDEX}",
    )


def render_landing(entries: list[LandingEntry]) -> str:
    """The page linking each contract's page, in the order the specs were given."""
    template = _environment().get_template("landing.html.jinja")
    return template.render(entries=entries, version=__version__)


def write_page(directory: Path, html: str, *, check: bool = False) -> str:
    """Write ``directory/index.html`` (created with its parents); return what happened:
    ``wrote``, ``unchanged`` or, with ``check`` (nothing written), ``stale``.

    The file goes through a temporary file and a rename: a symlink at the target is
    replaced, never followed."""
    from ..safeio import replace_file

    target = directory / INDEX
    data = html.encode("utf-8")
    try:
        current = target.read_bytes() if target.is_file() and not target.is_symlink() else None
    except OSError:
        current = None
    if current == data:
        return "unchanged"
    if check:
        return "stale"
    directory.mkdir(parents=True, exist_ok=True)
    replace_file(target, data)
    return "wrote"
