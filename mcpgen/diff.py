"""``mcpgen diff``: every change between two specs, classified by named rules.

The wire-level rules live in ``runtime/_compat.py`` (one implementation, shared with
the generated clients' check on connect): this module loads both specs to IR,
compares their published descriptors with it, and adds the rules only a spec can
show, because they concern the Python surface generated from it (handler shape,
return type, ``async``, Python names, package and classes).  ``--against REF``
reads the older spec, and every schema file it references, from git.

Spec rules (the wire rules are listed in ``runtime/_compat.py``):

    Rule                         Severity    Category  Meaning
    PACKAGE_RENAMED              breaking    SOURCE    ``package`` changed: imports break
    SERVER_CLASSES_RENAMED       breaking    SOURCE    ``server.name`` changed the class prefix
    TYPE_REMOVED                 breaking    SOURCE    a ``types`` entry (a model class) is gone
    METHOD_RENAMED               breaking    SOURCE    a tool's Python method name changed
    MODELS_RENAMED               breaking    SOURCE    a tool's …Args/…Output class names changed
    PARAM_PY_RENAMED             breaking    SOURCE    a renamed parameter's Python name changed
    CALLBACK_CHANGED             breaking    SOURCE    handler shape changed (explicitly, or implied
                                                       by the defaults: a first optional parameter,
                                                       an output schema added or removed)
    RETURNS_CHANGED              breaking    SOURCE    ``returns`` of a positional/named tool changed
    ASYNC_CHANGED                breaking    SOURCE    the handler moved between def and async def
    TIMEOUT_TIGHTENED            breaking    BEHAVIOR  a timeout added or lowered
    TIMEOUT_LOOSENED             compatible  -         a timeout raised or removed
    SERVER_INSTRUCTIONS_CHANGED  warning     -         instructions steer the model: review them
    SERVER_INFO_CHANGED          compatible  -         server name (same classes), version, title or
                                                       implementation changed
    TYPE_ADDED                   compatible  -         a new ``types`` entry

A wire rename (TOOL_RENAMED, PARAM_RENAMED) that keeps the Python name adds nothing:
``get-item`` → ``get_item`` breaks callers on the wire but not the generated code.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import click
import yaml

from mcpgen_runtime._compat import RULES, Category, Change, Rule, Severity, compare_tools

from . import ir
from .printable import escape_json, escape_line
from .safeio import MAX_SPEC_BYTES, read_regular
from .schemas import descriptor
from .spec.errors import Diagnostic
from .spec.load import load_contract, load_spec_text
from .spec.yamlpos import PositionedDocument, load_yaml

__all__ = [
    "ALL_RULES",
    "SPEC_RULES",
    "DiffFailed",
    "DiffReport",
    "LocatedChange",
    "diff_against_git",
    "diff_contracts",
    "diff_files",
    "render_github",
    "render_json",
    "render_text",
]

_B, _W, _C = Severity.BREAKING, Severity.WARNING, Severity.COMPATIBLE
_SRC, _BEH = Category.SOURCE, Category.BEHAVIOR

# Rules only a spec can show: what a descriptor does not carry (the Python surface
# generated from the contract, handler shapes, timeouts, server metadata).
_SPEC_RULE_LIST: Final[tuple[Rule, ...]] = (
    Rule("PACKAGE_RENAMED", _B, _SRC, "the generated package's import name changed"),
    Rule("SERVER_CLASSES_RENAMED", _B, _SRC, "server.name changed the generated class names"),
    Rule("TYPE_REMOVED", _B, _SRC, "a shared type (and its model class) is gone"),
    Rule("METHOD_RENAMED", _B, _SRC, "the tool's Python method name changed"),
    Rule("MODELS_RENAMED", _B, _SRC, "the tool's generated …Args/…Output classes were renamed"),
    Rule("PARAM_PY_RENAMED", _B, _SRC, "a parameter's Python name changed"),
    Rule("CALLBACK_CHANGED", _B, _SRC, "the handler shape (positional/named/structured) changed"),
    Rule("RETURNS_CHANGED", _B, _SRC, "the declared return type of the handler changed"),
    Rule("ASYNC_CHANGED", _B, _SRC, "the handler moved between def and async def"),
    Rule("TIMEOUT_TIGHTENED", _B, _BEH, "a call may now be abandoned sooner"),
    Rule("TIMEOUT_LOOSENED", _C, None, "a call may now run longer"),
    Rule("SERVER_INSTRUCTIONS_CHANGED", _W, None, "initialize instructions changed"),
    Rule("SERVER_INFO_CHANGED", _C, None, "server name, version, title or implementation changed"),
    Rule("TYPE_ADDED", _C, None, "a new shared type"),
)
SPEC_RULES: Final[Mapping[str, Rule]] = MappingProxyType({r.name: r for r in _SPEC_RULE_LIST})
ALL_RULES: Final[Mapping[str, Rule]] = MappingProxyType({**RULES, **SPEC_RULES})

# Where each spec rule sorts among the wire rules (after the rule named here).
_AFTER: Final = {
    "METHOD_RENAMED": "TOOL_RENAMED",
    "MODELS_RENAMED": "TOOL_RENAMED",
    "PARAM_PY_RENAMED": "PARAM_RENAMED",
    "CALLBACK_CHANGED": "OUTPUT_CONSTRAINT_TIGHTENED",
    "RETURNS_CHANGED": "OUTPUT_CONSTRAINT_TIGHTENED",
    "ASYNC_CHANGED": "OUTPUT_CONSTRAINT_TIGHTENED",
    "TIMEOUT_TIGHTENED": "TASK_SUPPORT_LOOSENED",
    "TIMEOUT_LOOSENED": "TASK_SUPPORT_LOOSENED",
}


def _rank_table() -> dict[str, int]:
    """Output order: contract-level rules first, then the wire rules with each spec
    rule placed after the wire rule it belongs with."""
    order = ["PACKAGE_RENAMED", "SERVER_CLASSES_RENAMED", "TYPE_REMOVED",
             "SERVER_INSTRUCTIONS_CHANGED", "SERVER_INFO_CHANGED", "TYPE_ADDED"]  # fmt: skip
    for name in RULES:
        order.append(name)
        order.extend(rule for rule, after in _AFTER.items() if after == name)
    return {name: index for index, name in enumerate(order)}


_RANK: Final = _rank_table()
CONTRACT: Final = ""  # the "tool" of a change about the whole contract


class DiffFailed(Exception):
    """A spec could not be loaded (``diagnostics``) or read from git (the message)."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.diagnostics = list(diagnostics)


@dataclass(frozen=True)
class LocatedChange:
    """A classified change plus the line of the NEW spec it concerns, when known."""

    change: Change
    line: int | None

    def fails(self, category: Category) -> bool:
        c = self.change
        return c.severity is Severity.BREAKING and c.category is not None and c.category >= category

    def as_dict(self, category: Category) -> dict[str, object]:
        return {**self.change.as_dict(), "line": self.line, "fails": self.fails(category)}


@dataclass
class DiffReport:
    """The result of comparing OLD with NEW: labels for output, ``new_file`` for annotations."""

    old_label: str
    new_label: str
    new_file: str
    changes: list[LocatedChange] = field(default_factory=list)
    tool_lines: dict[str, int] = field(default_factory=dict)  # tool → its line in NEW

    def failing(self, category: Category) -> list[LocatedChange]:
        return [change for change in self.changes if change.fails(category)]

    def ignoring(self, rules: Iterable[str]) -> DiffReport:
        skip = set(rules)
        kept = [c for c in self.changes if c.change.rule not in skip]
        return DiffReport(self.old_label, self.new_label, self.new_file, kept, self.tool_lines)


# --------------------------------------------------------------------------- loading


def _load(path: Path, *, allow_outside_refs: bool) -> tuple[ir.Contract, PositionedDocument]:
    # diff writes nothing: where a spec builds does not matter here
    result = load_contract(path, allow_outside_refs=allow_outside_refs, allow_outside_output=True)
    if result.contract is None:
        raise DiffFailed(f"{path}: invalid spec", result.errors or result.diagnostics)
    try:
        text = read_regular(path, limit=MAX_SPEC_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # replaced since it was loaded
        raise DiffFailed(f"{path}: cannot read spec: {exc}") from None
    doc, _ = load_yaml(text, str(path))
    return result.contract, doc


def diff_files(old: Path, new: Path, *, allow_outside_refs: bool = False) -> DiffReport:
    """``mcpgen diff OLD NEW``."""
    old_contract, _ = _load(old, allow_outside_refs=allow_outside_refs)
    new_contract, doc = _load(new, allow_outside_refs=allow_outside_refs)
    changes = diff_contracts(old_contract, new_contract, doc)
    return DiffReport(str(old), str(new), str(new), changes, _tool_lines(new_contract))


def diff_against_git(
    spec: Path, ref: str, scratch: Path, *, allow_outside_refs: bool = False
) -> DiffReport:
    """``mcpgen diff SPEC --against REF``: OLD is SPEC as committed at REF.

    The spec and the schema files it references (followed transitively) are
    copied out of git into ``scratch`` at the same relative places, so that
    ``$ref``s resolve exactly as they did at REF.
    """
    old_spec, rel = _materialise(spec, ref, scratch)
    label = f"{ref}:{rel}"
    loaded = load_spec_text(
        old_spec.read_text(encoding="utf-8"),
        label,
        spec_dir=old_spec.parent,
        allow_outside_refs=allow_outside_refs,
        allow_outside_output=True,
    )
    if loaded.contract is None:
        raise DiffFailed(f"{label}: invalid spec", loaded.errors or loaded.diagnostics)
    new_contract, doc = _load(spec, allow_outside_refs=allow_outside_refs)
    changes = diff_contracts(loaded.contract, new_contract, doc)
    return DiffReport(label, str(spec), str(spec), changes, _tool_lines(new_contract))


def _tool_lines(new: ir.Contract) -> dict[str, int]:
    """Each tool's line in NEW (a tool only OLD has gets none)."""
    return {tool.name: tool.line for tool in new.tools if tool.line}


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise DiffFailed("--against needs git on PATH") from None
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise DiffFailed(detail[-1] if detail else f"git {' '.join(args)} failed")
    return done.stdout


def _materialise(spec: Path, ref: str, scratch: Path) -> tuple[Path, str]:
    """Write SPEC@REF and its referenced files under ``scratch``; return the spec's
    copy and its path relative to the repository root."""
    folder = spec.resolve().parent
    if not folder.is_dir():
        raise DiffFailed(f"{spec}: no such directory")
    top = Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip()).resolve()
    try:
        commit = _git(folder, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffFailed:
        raise DiffFailed(f"{ref!r} is not a commit of the repository at {top}") from None
    commit_id = commit.decode().strip()
    rel = Path(os.path.relpath(spec.resolve(), top)).as_posix()
    if rel.startswith("../"):
        raise DiffFailed(f"{spec} is outside the git repository at {top}")
    pending, seen = [rel], set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            data = _git(top, "show", f"{commit_id}:{path}")
        except DiffFailed:
            if path == rel:
                raise DiffFailed(f"{rel} does not exist at {ref}") from None
            continue  # the loader reports the missing reference with its position
        target = scratch / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        pending.extend(_referenced_files(data, path))
    return scratch / rel, rel


def _referenced_files(data: bytes, path: str) -> Iterator[str]:
    """Repository-relative paths of the files that ``$ref``s in one document name."""
    try:
        document = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        return
    base = posixpath.dirname(path)
    for ref in _refs(document):
        location = ref.partition("#")[0]
        if not location or ":" in location.split("/", 1)[0]:
            continue  # local pointer or a URL: nothing to fetch
        joined = posixpath.normpath(posixpath.join(base, location))
        if not joined.startswith("../") and joined != "..":
            yield joined


def _refs(root: Any) -> Iterator[str]:
    """Every ``$ref`` string in a document, visiting each node once: YAML aliases share
    nodes, and a walk that followed every path through them could take forever."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, list):
            stack.extend(reversed(node))
            continue
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                stack.append(value)


# --------------------------------------------------------------------------- comparing


class _Changes:
    def __init__(self) -> None:
        self.items: list[tuple[Change, int | None]] = []

    def add(self, tool: str, rule: str, path: str, message: str, line: int | None) -> None:
        info = ALL_RULES[rule]
        self.items.append((Change(tool, rule, info.severity, info.category, path, message), line))


def diff_contracts(
    old: ir.Contract, new: ir.Contract, new_doc: PositionedDocument | None = None
) -> list[LocatedChange]:
    """Wire changes (``compare_tools`` on the published descriptors) plus spec-only ones."""
    lines = _Lines(new, new_doc)
    out = _Changes()
    wire = compare_tools([descriptor(t) for t in old.tools], [descriptor(t) for t in new.tools])
    for old_tool, new_tool in _pairs(old, new, wire):
        lines.alias(old_tool.name, new_tool.name)  # a renamed tool's lines are the new one's
    for change in wire:
        out.items.append((change, lines.of(change.tool, change.path)))
    _compare_contract(old, new, out, lines)
    for old_tool, new_tool in _pairs(old, new, wire):
        param_renamed = any(
            change.tool == old_tool.name and change.rule == "PARAM_RENAMED" for change in wire
        )
        _compare_tool(old_tool, new_tool, out, lines, param_renamed)
    ordered = sorted(
        out.items,
        key=lambda item: (item[0].tool, _RANK[item[0].rule], item[0].path, item[0].message),
    )
    return [LocatedChange(change, line) for change, line in ordered]


def _pairs(
    old: ir.Contract, new: ir.Contract, wire: Sequence[Change]
) -> Iterator[tuple[ir.Tool, ir.Tool]]:
    """Tools present on both sides, matched by wire name or by a detected rename."""
    new_by_name = {tool.name: tool for tool in new.tools}
    old_names = {tool.name for tool in old.tools}
    for tool in old.tools:
        if tool.name in new_by_name:
            yield tool, new_by_name[tool.name]
    if any(change.rule == "TOOL_RENAMED" for change in wire):
        removed = [tool for tool in old.tools if tool.name not in new_by_name]
        added = [tool for tool in new.tools if tool.name not in old_names]
        if len(removed) == 1 and len(added) == 1:
            yield removed[0], added[0]


def _compare_contract(old: ir.Contract, new: ir.Contract, out: _Changes, lines: _Lines) -> None:
    if old.package != new.package:
        message = (
            f"package {old.package!r} -> {new.package!r}: imports of the generated package break"
        )
        out.add(CONTRACT, "PACKAGE_RENAMED", "package", message, lines.at(("package",)))
    at_name = lines.at(("server", "name"))
    if old.server.class_prefix != new.server.class_prefix:
        before, after = old.server.class_prefix, new.server.class_prefix
        message = f"{before}Server/{before}Client are now {after}Server/{after}Client"
        out.add(CONTRACT, "SERVER_CLASSES_RENAMED", "server.name", message, at_name)
    elif old.server.name != new.server.name:
        message = f"server name {old.server.name!r} -> {new.server.name!r}"
        out.add(CONTRACT, "SERVER_INFO_CHANGED", "server.name", message, at_name)
    for key in ("version", "title", "implementation"):
        before, after = getattr(old.server, key), getattr(new.server, key)
        if before != after:
            message = f"server {key} {_show(before)} -> {_show(after)}"
            out.add(
                CONTRACT, "SERVER_INFO_CHANGED", f"server.{key}", message, lines.at(("server", key))
            )
    if old.server.instructions != new.server.instructions:
        out.add(
            CONTRACT,
            "SERVER_INSTRUCTIONS_CHANGED",
            "server.instructions",
            "instructions changed (they steer the model); review the new text",
            lines.at(("server", "instructions")),
        )
    for name in sorted(old.types.keys() - new.types.keys()):
        message = f"type {name!r} and its model class {name} are gone"
        out.add(CONTRACT, "TYPE_REMOVED", f"types.{name}", message, lines.at(("types",)))
    for name in sorted(new.types.keys() - old.types.keys()):
        out.add(
            CONTRACT, "TYPE_ADDED", f"types.{name}", f"new type {name!r}", lines.at(("types", name))
        )


def _compare_tool(
    old: ir.Tool, new: ir.Tool, out: _Changes, lines: _Lines, param_renamed: bool
) -> None:
    tool, line = old.name, lines.tool(new.name)
    if old.py_name != new.py_name:
        message = f"Python method {old.py_name}() is now {new.py_name}()"
        out.add(tool, "METHOD_RENAMED", "name", message, line)
    if old.class_name != new.class_name:
        message = f"{old.class_name}Args/…Output are now {new.class_name}Args/…Output"
        out.add(tool, "MODELS_RENAMED", "name", message, line)
    new_params = {p.name: p for p in new.parameters}
    renamed = _renamed_parameter(old, new) if param_renamed else None
    for param in old.parameters:
        after = new_params.get(param.name)
        if after is None and renamed is not None and renamed[0] == param.name:
            after = new_params[renamed[1]]
        if after is not None and after.py_name != param.py_name:
            message = f"Python parameter {param.py_name!r} is now {after.py_name!r}"
            path = f"inputSchema.properties.{after.name}"
            out.add(tool, "PARAM_PY_RENAMED", path, message, lines.of(new.name, path))
    if old.callback != new.callback:
        message = (
            f"handler shape {old.callback} -> {new.callback}"
            f"{_implied(new)}; implementations must change their signature"
        )
        out.add(tool, "CALLBACK_CHANGED", "callback", message, lines.tool_key(new.name, "callback"))
    elif old.callback != "structured" and old.returns != new.returns:
        message = (
            f"returns {old.returns} -> {new.returns}: the handler and client method types change"
        )
        out.add(tool, "RETURNS_CHANGED", "returns", message, lines.tool_key(new.name, "returns"))
    if old.is_async != new.is_async:
        shape = "async def" if new.is_async else "def"
        message = f"the handler must now be written as {shape}"
        out.add(tool, "ASYNC_CHANGED", "async", message, lines.tool_key(new.name, "async"))
    if old.timeout != new.timeout:
        was, now = old.timeout, new.timeout
        tighter = now is not None and (was is None or now < was)
        rule = "TIMEOUT_TIGHTENED" if tighter else "TIMEOUT_LOOSENED"
        message = f"timeout {_seconds(was)} -> {_seconds(now)}"
        out.add(tool, rule, "timeout", message, lines.tool_key(new.name, "timeout"))


def _renamed_parameter(old: ir.Tool, new: ir.Tool) -> tuple[str, str] | None:
    """The one parameter renamed in place (same position), as ``_compat`` detects it."""
    old_names = [p.name for p in old.parameters]
    new_names = [p.name for p in new.parameters]
    gone = [n for n in old_names if n not in new_names]
    came = [n for n in new_names if n not in old_names]
    if len(gone) == 1 and len(came) == 1 and old_names.index(gone[0]) == new_names.index(came[0]):
        return gone[0], came[0]
    return None


def _implied(tool: ir.Tool) -> str:
    if tool.callback == "named":
        return " (a parameter is optional)"
    if tool.callback == "structured":
        return " (the tool has an output_schema)"
    return ""


def _show(value: object) -> str:
    return "absent" if value is None else json.dumps(value, ensure_ascii=False)


def _seconds(value: float | None) -> str:
    return "none" if value is None else f"{value:g}s"


class _Lines:
    """Lines in the NEW spec: of a tool, of one of its keys, of a parameter."""

    def __init__(self, contract: ir.Contract, doc: PositionedDocument | None) -> None:
        self.doc = doc
        self.tools = {tool.name: (index, tool) for index, tool in enumerate(contract.tools)}

    def alias(self, old_name: str, new_name: str) -> None:
        if old_name not in self.tools and new_name in self.tools:
            self.tools[old_name] = self.tools[new_name]

    def _uses_parameters(self, index: int) -> bool:
        data = self.doc.data if self.doc is not None else None
        tools = data.get("tools") if isinstance(data, dict) else None
        return (
            isinstance(tools, list)
            and isinstance(tools[index], dict)
            and ("input_schema" not in tools[index])
        )

    def at(self, path: tuple[str | int, ...]) -> int | None:
        if self.doc is None:
            return None
        return self.doc.position(path, key=True).line

    def tool(self, name: str) -> int | None:
        return self.tools[name][1].line or None if name in self.tools else None

    def tool_key(self, name: str, key: str) -> int | None:
        if self.doc is None or name not in self.tools:
            return self.tool(name)
        return self.doc.position(("tools", self.tools[name][0], key), key=True).line

    def of(self, tool: str, path: str) -> int | None:
        """The line of a change's descriptor ``path``: its parameter or key, else the tool."""
        if tool not in self.tools or self.doc is None:
            return self.tool(tool)
        index, ir_tool = self.tools[tool]
        parameters = self._uses_parameters(index)
        prefix = "inputSchema.properties."
        if path.startswith(prefix):
            name = path[len(prefix) :].split(".", 1)[0].split("[", 1)[0]
            positions = {p.name: i for i, p in enumerate(ir_tool.parameters)}
            if parameters and name in positions:
                return self.doc.position(("tools", index, "parameters", positions[name])).line
            return self.doc.position(("tools", index, "input_schema"), key=True).line
        head = path.split(".", 1)[0]
        key = {
            "inputSchema": "parameters" if parameters else "input_schema",
            "outputSchema": "output_schema",
            "annotations": "hints",
            "execution": "task_support",
            "_meta": "meta",
            "title": "title",
            "description": "description",
            "icons": "icons",
        }.get(head)
        if key is None:
            return self.tool(tool)
        return self.doc.position(("tools", index, key), key=True).line


# --------------------------------------------------------------------------- output


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
