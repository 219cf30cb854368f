"""Black-clean source without running black over every line.

Running black over a whole generated package was ~88% of a build's CPU time (black
parses everything twice). The templates therefore write code that is already in
black's style, and this module lays out the parts whose shape depends on the spec:

- a bracketed construct (a signature, a call, an import, a data literal) goes on one
  line when it fits in ``LINE_LENGTH`` columns, else one item per line with a trailing
  comma. Black keeps such a "magic trailing comma" split as it is, so the output is
  stable under black whether or not black would have chosen the same split itself;
- a docstring is indented the way black indents it (``docstring``), when its text is
  plain; other docstrings are left to black.

Whatever is not certain is left to black, one *unit* at a time: a top-level
statement, or a method of a top-level class (or the class's head, before its first
method). ``finish`` finds the lines longer than the limit that black could split
(not in ``safe``) and the text the layout marked ``unsure`` (a docstring not in
black's form, a declaration black rewrites), and only then reads the file's syntax
tree to find the units that hold them, and runs black, in one batch, over those.
Nothing travels inside the text to mark a unit.
Nothing is cached: the units left to black are few (a long ``Literal[…]`` annotation,
a docstring that is not plain text), and an unchanged spec never reaches the renderer
(the manifest's no-op check); see docs/architecture.md, "Generated code and linters".

The result must equal ``black.format_str`` of itself (tests/generator/render/test_generated_layout.py checks
every generated file of the test specs with black).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .escape import PySource, py_str

__all__ = [
    "INDENT",
    "LINE_LENGTH",
    "Atom",
    "Group",
    "Layout",
    "black_format",
    "fits",
    "literal_node",
]

LINE_LENGTH = 88
INDENT = "    "

_SEPARATOR = "# mcpgen-layout-unit"


def width(line: str) -> int:
    """The width black measures a line by (East Asian wide characters count twice)."""
    if line.isascii():
        return len(line)
    from black.strings import str_width  # black is slow to import: only when needed

    return int(str_width(line))


def fits(line: str) -> bool:
    if line.isascii():
        return len(line) <= LINE_LENGTH
    # a character is 0 to 2 columns wide: decide without black's table when the
    # bounds agree (``→`` in a docstring should not cost importing black)
    narrow = sum(1 for ch in line if ch.isascii())
    if narrow + 2 * (len(line) - narrow) <= LINE_LENGTH:
        return True
    if narrow > LINE_LENGTH:
        return False
    return width(line) <= LINE_LENGTH


@dataclass(frozen=True)
class Group:
    """``head item, item tail``: one line when it fits, else exploded with a trailing
    comma. ``one_tuple``: a single item keeps its comma on one line (``("a",)``).

    ``hug``: between the two, black's own split of a signature or a call of two or
    more items, head / the items on one line / tail, when each of the three fits
    (black splits a ``def`` at its first bracket and a call at its last, and keeps
    the items together when they fit). Never for a literal: black explodes those."""

    head: str
    items: tuple[Node, ...]
    tail: str
    one_tuple: bool = False
    hug: bool = False  # a signature or a call: try the items on one line of their own

    @functools.cached_property
    def text(self) -> str:
        """The group on one line (kept: ``lines`` asks each level for its subtree's)."""
        inner = ", ".join(flat(item) for item in self.items)
        return self.head + inner + ("," if self.one_tuple else "") + self.tail


Node = str | Group


def flat(node: Node) -> str:
    return node if isinstance(node, str) else node.text


def literal_node(value: Any, prefix: str = "") -> Node:
    """A JSON value (or a ``PySource``) as a layout node, keys and strings escaped
    with ``py_str``; ``prefix`` goes before it on its first line (``"key": ``)."""
    if isinstance(value, dict) and value:
        items = tuple(literal_node(v, py_str(str(k)) + ": ") for k, v in value.items())
        return Group(prefix + "{", items, "}")
    if isinstance(value, list) and value:
        return Group(prefix + "[", tuple(literal_node(v) for v in value), "]")
    if isinstance(value, tuple) and not value:
        return Atom(prefix + "()")
    if isinstance(value, tuple):
        items = tuple(literal_node(v) for v in value)
        return Group(prefix + "(", items, ")", one_tuple=len(items) == 1)
    from .escape import py_literal

    text = prefix + py_literal(value)
    # a PySource (``_DEFS["Name"]``) has brackets black could split at
    return text if isinstance(value, PySource) else Atom(text)


class Atom(str):
    """Text black cannot split: a scalar literal, perhaps after a ``"key": `` prefix
    (no bracket or delimiter outside its strings). A long line of one stays long."""


@dataclass
class Layout:
    """Lays out one package's files; collects what ``finish`` must leave to black."""

    safe: set[str] = field(default_factory=set)  # long lines black leaves as they are
    # text black must format wherever it stands (a docstring literal, a first line)
    unsure: set[str] = field(default_factory=set)
    black_units: int = 0  # how many units went to black (for tests and the benchmark)

    # -- laying out -------------------------------------------------------------------

    def lines(self, node: Node, depth: int, suffix: str = "") -> list[str]:
        indent = INDENT * depth
        one = indent + flat(node) + suffix
        if fits(one) or isinstance(node, str) or not node.items:
            if isinstance(node, Atom) and not fits(one):
                self.safe.add(one)
            return [one]
        if node.hug and len(node.items) > 1:
            body = indent + INDENT + ", ".join(flat(item) for item in node.items)
            hugged = [indent + node.head, body, indent + node.tail + suffix]
            if all(fits(line) for line in hugged):
                return hugged
        out = [indent + node.head]
        for item in node.items:
            out += self.lines(item, depth + 1, ",")
        out.append(indent + node.tail + suffix)
        return out

    def block(self, node: Node, depth: int, suffix: str = "") -> str:
        """``lines`` as text for a template, the first line without its indent (the
        template writes it)."""
        text = "\n".join(self.lines(node, depth, suffix))
        return text[len(INDENT * depth) :]

    def call(self, head: str, args: Iterable[str], tail: str, depth: int) -> str:
        """``head(args)tail`` for a ``def`` or a statement ending in a call (``head``
        ends with the opening bracket); see ``Group.hug``."""
        return self.block(Group(head, tuple(args), tail, hug=True), depth)

    def imports(self, module: str, names: Iterable[str], depth: int) -> str:
        """``from module import names``: one line when it fits, else one name a line in
        parentheses (black's form for a long import)."""
        names = tuple(names)
        line = f"from {module} import {', '.join(names)}"
        if fits(INDENT * depth + line):
            return line
        return self.block(Group(f"from {module} import (", names, ")"), depth)

    def assign(self, target: str, value: str, depth: int) -> str:
        """``target = value`` for an atom ``value`` (a string literal, say): one line
        when it fits, else the value alone inside parentheses when that fits (black's
        form); longer ones are left to black (the line stays long and unsafe)."""
        indent = INDENT * depth
        line = f"{target} = {value}"
        if fits(indent + line) or not fits(indent + INDENT + value):
            return line
        return f"{target} = (\n{indent}{INDENT}{value}\n{indent})"

    def display(self, head: str, items: Iterable[str], tail: str, depth: int) -> str:
        """A list or dict display ``head items tail``: one line, or one item a line."""
        return self.block(Group(head, tuple(items), tail), depth)

    def literal(self, value: Any, depth: int, prefix: str = "") -> str:
        return self.block(literal_node(value, prefix), depth)

    def docstring(self, text: str, depth: int) -> str:
        """``text`` as black writes it as a docstring at ``depth``: plain text in
        triple quotes, continuation lines indented. Text black would change in other
        ways (trailing spaces, tabs, indented lines, quotes at the ends, escapes) is
        written as ``py_docstring`` does and left to black."""
        from .escape import py_docstring

        literal = py_docstring(text)
        indent = INDENT * depth
        lines = text.split("\n")
        plain = (
            literal.startswith('"""')
            and text
            and not text[0].isspace()
            and not text.startswith('"')
            and not text.endswith(("\\", '"', " "))
            and "\t" not in text
            and all(line == line.rstrip() for line in lines)
            # black removes the common indentation of the lines after the first
            and (len(lines) == 1 or any(line and not line[0].isspace() for line in lines[1:]))
        )
        if not plain:
            self.unsure.add(literal)
            return literal
        if len(lines) == 1:  # black leaves a one-line docstring as it is
            if not fits(indent + literal):
                self.safe.add(indent + literal)
            return literal
        out = [lines[0]]
        last = len(lines) - 2
        for i, line in enumerate(lines[1:]):
            out.append(indent + line if line or i == last else "")
        body = "\n".join(out)
        last_line = out[-1]
        if (
            not body.endswith("\n")
            and len(last_line) + 3 > LINE_LENGTH
            and len(indent) + 3 <= LINE_LENGTH
        ):
            body += "\n" + indent
        result = '"""' + body + '"""'
        self.safe.update(ln for ln in (indent + result).split("\n") if not fits(ln))
        return result

    # -- finishing --------------------------------------------------------------------

    def finish(self, text: str) -> str:
        """``text`` with the units that need it formatted by black (in one batch)."""
        lines = text.split("\n")
        todo = {i for i, line in enumerate(lines) if not fits(line) and line not in self.safe}
        for marked in self.unsure:
            start = text.find(marked)
            while start != -1:
                todo.add(text.count("\n", 0, start))
                start = text.find(marked, start + 1)
        if not todo:
            return text
        units = _units(text, todo)
        self.black_units += len(units)
        formatted = _black_batch([(depth, "\n".join(lines[a:b])) for a, b, depth in units])
        for (a, b, _), body in sorted(zip(units, formatted, strict=True), reverse=True):
            lines[a:b] = body.split("\n")
        return "\n".join(lines)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _span(node: ast.stmt) -> tuple[int, int]:
    """The 0-based line range of a statement, its decorators included."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return first - 1, node.end_lineno or node.lineno


def _units(text: str, todo: set[int]) -> list[tuple[int, int, int]]:
    """The units (first line, end line, depth) that hold the lines ``todo``: a
    top-level statement, or in a top-level class the method holding the line (depth
    1), else the class's head up to its first method, else the whole class."""
    units: set[tuple[int, int, int]] = set()
    lines = text.split("\n")
    for node in ast.parse(text).body:
        start, end = _span(node)
        held = {i for i in todo if start <= i < end}
        if not held:
            continue
        if not isinstance(node, ast.ClassDef):
            units.add((start, end, 0))
            continue
        methods = [_span(m) for m in node.body if isinstance(m, _FUNCTIONS)]
        head_end = methods[0][0] if methods else end
        inside = [next((m for m in methods if m[0] <= i < m[1]), None) for i in held]
        if any(m is None and not start <= i < head_end for m, i in zip(inside, held, strict=True)):
            units.add((start, end, 0))  # a line between methods: the class as a whole
            continue
        for method in inside:
            units.add((*method, 1) if method else (start, _head(lines, start, head_end), 0))
    whole = [(a, b) for a, b, depth in units if depth == 0]
    return sorted(u for u in units if u[2] == 0 or not any(a <= u[0] < b for a, b in whole))


def _head(lines: list[str], start: int, end: int) -> int:
    """``end`` moved up past the blank lines that close a class's head."""
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _mode() -> Any:
    from black.mode import Mode, TargetVersion

    return Mode(target_versions={TargetVersion.PY311}, line_length=LINE_LENGTH)


def black_format(source: str) -> str:
    """``source`` formatted by black in mcpgen's mode."""
    from black import format_str

    return str(format_str(source, mode=_mode()))


def _black_batch(units: list[tuple[int, str]]) -> list[str]:
    """Format units (depth, text) with one black call. Each unit is wrapped so that its
    lines sit at their depth (``class _:`` per level), separated by comment lines."""
    parts: list[str] = []
    edges: list[tuple[str, str]] = []
    for i, (depth, body) in enumerate(units):
        lines = body.split("\n")
        lead = _blank_prefix(lines)
        trail = _blank_prefix(lines[::-1])
        core = lines[lead : len(lines) - trail]
        edges.append(("\n" * lead, "\n" * trail))
        wrapper = [INDENT * level + "class _:" for level in range(depth)]
        parts.append("\n".join([f"{_SEPARATOR} {i}", *wrapper, *core]))
    out = black_format("\n\n".join(parts) + "\n")
    pieces: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in out.split("\n"):
        if line.startswith(_SEPARATOR + " "):
            current = pieces.setdefault(int(line[len(_SEPARATOR) + 1 :]), [])
        elif current is not None:
            current.append(line)
    results = []
    for i, (depth, _) in enumerate(units):
        wrappers = {INDENT * level + "class _:" for level in range(depth)}
        lines = pieces[i]
        while lines and (not lines[0].strip() or lines[0] in wrappers):
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        before, after = edges[i]
        results.append(before + "\n".join(lines) + after)
    return results


def _blank_prefix(lines: list[str]) -> int:
    n = 0
    for line in lines:
        if line.strip():
            break
        n += 1
    return n
