"""``mcpgen import``: the spec as YAML text (block style, literal blocks, escaped
comments and strings), in the order a reader expects: header, server, types, tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from ..printable import escape_line, needs_escape
from .forms import DefClasses, ToolEntry, TypeHoister


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings as literal blocks, keys in their given order.

    A string holding a control, line-break (other than ``\\n``) or bidi character is
    written double-quoted, every non-ASCII character of it escaped: PyYAML would
    otherwise write bidi overrides (and U+2028 in some styles) raw, which an editor or
    a terminal shows as something other than the value. The value is the same."""

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if not needs_escape(text.replace("\n", "")):
            super().write_double_quoted(text, split)
            return
        saved, self.allow_unicode = self.allow_unicode, False
        try:
            super().write_double_quoted(text, split)
        finally:
            self.allow_unicode = saved

    def ignore_aliases(self, data: Any) -> bool:
        # A value met twice is written twice: no anchors, which would also collide
        # between the parts of a spec that are dumped one by one.
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if needs_escape(value.replace("\n", "")):
        style: str | None = '"'
    else:
        style = "|" if "\n" in value.strip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    # Short lists of scalars (required, enum, type unions) read best on one line.
    flow = len(value) <= 12 and all(
        isinstance(item, (int, float, bool))
        or (isinstance(item, str) and len(item) < 40 and "\n" not in item)
        for item in value
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


def _dump(value: Any) -> str:
    return yaml.dump(
        value,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )


def render_yaml(
    header: list[str],
    package: str,
    server: Mapping[str, Any],
    entries: Sequence[ToolEntry],
    levels: Mapping[str, int],
    stems: set[str],
    classes: DefClasses,
    notes: Mapping[str, list[str]],
) -> str:
    # Types are named afresh for the tools that share them: one kept as listed does not
    # claim a name.
    hoist = TypeHoister(classes, stems)
    tool_parts = [entry.entry(levels[entry.name], hoist) for entry in entries]
    types = hoist.types
    # Every comment line is one escaped line: a line break YAML recognises in a server's
    # name (\n, \r, NEL, U+2028, U+2029) would otherwise start a line of the spec.
    parts = ["".join(f"# {escape_line(line)}\n" for line in header)]
    parts.append(_dump({"mcpgen": 1, "package": package, "server": dict(server)}))
    if types:
        parts.append(_dump({"types": types}))
    parts.append("tools:\n" if entries else "tools: []\n")
    for entry, part in zip(entries, tool_parts, strict=True):
        for note in notes.get(entry.name, []):
            parts.append(f"# differs from the live listing: {escape_line(note)}\n")
        parts.append(_dump([part]))
    return "".join(parts)
