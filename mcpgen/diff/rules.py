"""The rules of ``mcpgen diff`` that only a spec can show, and the comparison of two
loaded contracts: the wire rules (``compare_tools`` of the runtime's ``contract.compare``) on their
published descriptors plus the spec rules below, each change placed at its line of NEW.
The rule table is in the docstring of the package (``mcpgen.diff``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from mcpgen_runtime.contract.compare import RULES, Category, Change, Rule, Severity, compare_tools

from .. import ir
from ..descriptors import descriptor
from ..spec.errors import Diagnostic
from ..spec.yamlpos import PositionedDocument

__all__ = [
    "ALL_RULES",
    "CONTRACT",
    "SPEC_RULES",
    "DiffFailed",
    "DiffReport",
    "LocatedChange",
    "diff_contracts",
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

# annotations members a spec sets with keys of its own (hints, annotation_title); the
# rest come from the spec's `annotations`
_SPEC_ANNOTATION_KEYS: Final = frozenset(
    {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
)

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
    """The one parameter renamed in place (same position), as ``contract.compare`` detects it."""
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

    def _scopes_line(self, index: int) -> int | None:
        """A scope change's line: the tool's ``scopes``, else ``server.scopes`` (a
        server-wide scope reaches every tool), else the tool."""
        assert self.doc is not None
        data = self.doc.data if isinstance(self.doc.data, dict) else {}
        tools = data.get("tools")
        tool = tools[index] if isinstance(tools, list) else None
        server = data.get("server")
        if isinstance(tool, dict) and "scopes" in tool:
            return self.doc.position(("tools", index, "scopes"), key=True).line
        if isinstance(server, dict) and "scopes" in server:
            return self.doc.position(("server", "scopes"), key=True).line
        return self.doc.position(("tools", index), key=False).line

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
        if path == "scopes":
            return self._scopes_line(index)
        parameters = self._uses_parameters(index)
        prefix = "inputSchema.properties."
        if path.startswith(prefix):
            name = path[len(prefix) :].split(".", 1)[0].split("[", 1)[0]
            positions = {p.name: i for i, p in enumerate(ir_tool.parameters)}
            if parameters and name in positions:
                return self.doc.position(("tools", index, "parameters", positions[name])).line
            return self.doc.position(("tools", index, "input_schema"), key=True).line
        head, _, member = path.partition(".")
        if head == "annotations" and member not in _SPEC_ANNOTATION_KEYS:
            head = "annotations.extra"  # a server's own member: the spec's `annotations`
        key = {
            "inputSchema": "parameters" if parameters else "input_schema",
            "outputSchema": "output_schema",
            "annotations": "hints",
            "annotations.extra": "annotations",
            "execution": "task_support",
            "_meta": "meta",
            "scopes": "scopes",
            "title": "title",
            "description": "description",
            "icons": "icons",
        }.get(head)
        if key is None:
            return self.tool(tool)
        return self.doc.position(("tools", index, key), key=True).line
