"""What one generated file imports, collected by name and printed as isort orders it.

Each name is added where the code that uses it is decided (a signature's annotation
knows the types it names), never found again by scanning the rendered text; the
block comes out as ruff's isort rules (``I001``, defaults) and black keep it:

- sections in order, a blank line between them: ``from __future__``, the standard
  library, third-party (``pydantic``, ``mcpgen_runtime``), then the package's own
  relative imports (a vendored runtime, ``._runtime``, is one of those);
- in a section, ``import x`` lines before ``from x import …`` lines, modules in
  case-insensitive order (a relative ``.`` before ``.models``);
- the names of one ``from`` import by kind (``CONSTANTS``, then ``Classes``, then the
  rest), case-insensitively inside a kind; a name imported ``as`` another is a
  statement of its own (isort's ``combine-as-imports`` is off by default);
- a statement longer than the line one name a line in parentheses, with a trailing
  comma, which both isort and black keep as it is.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .layout import INDENT, Group, Layout, fits

__all__ = ["Imports", "export_order", "name_order", "natural"]

_THIRD_PARTY = frozenset({"mcpgen_runtime", "pydantic"})
_DIGITS = re.compile(r"(\d+)")


def natural(text: str) -> tuple[str | int, ...]:
    """``text`` in natural order, numbers by value (``Tool5`` before ``Tool15``), as
    ruff orders names."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(text)))


def name_order(name: str) -> tuple[int, tuple[str | int, ...], str]:
    """isort's order of imported names: constants, classes, the rest; then by name."""
    if len(name) > 1 and name.isupper():
        kind = 0
    elif name[:1].isupper():
        kind = 1
    else:
        kind = 2
    return kind, natural(name.lower()), name


def export_order(names: Iterable[str]) -> list[str]:
    """``__all__`` in the order ruff's ``RUF022`` asks for (SCREAMING_CASE, CamelCase,
    the rest; by name inside each)."""

    def key(name: str) -> tuple[int, tuple[str | int, ...]]:
        if name.isupper():
            return 0, natural(name)
        return (1 if name[:1].isupper() else 2), natural(name)

    return sorted(set(names), key=key)


def _section(module: str) -> int:
    if module == "__future__":
        return 0
    if module.startswith("."):
        return 3
    top = module.split(".")[0]
    if top in _THIRD_PARTY or top not in sys.stdlib_module_names:
        return 2
    return 1


@dataclass
class Imports:
    """The imports of one generated file (or of one ``if TYPE_CHECKING:`` block)."""

    modules: set[str] = field(default_factory=set)  # ``import x``
    names: dict[str, set[tuple[str, str | None]]] = field(default_factory=dict)

    def add(self, module: str, *names: str) -> Imports:
        """``from module import names``; with no names, ``import module``."""
        if not names:
            self.modules.add(module)
        for name in names:
            self.names.setdefault(module, set()).add((name, None))
        return self

    def add_as(self, module: str, name: str, local: str) -> Imports:
        """``from module import name as local`` (plain when the two are one)."""
        self.names.setdefault(module, set()).add((name, None if local == name else local))
        return self

    def __bool__(self) -> bool:
        return bool(self.modules or self.names)

    def statements(self, layout: Layout, depth: int) -> list[list[list[str]]]:
        """The import statements (each as its lines), one list per section."""
        sections: dict[int, list[tuple[tuple[Any, ...], list[str]]]] = {}
        key: tuple[Any, ...]
        for module in self.modules:
            key = (0, natural(module.lower()), module)
            sections.setdefault(_section(module), []).append((key, [f"import {module}"]))
        for module, entries in self.names.items():
            plain = sorted((n for n, local in entries if local is None), key=name_order)
            statements = [plain] if plain else []
            statements += [[f"{n} as {local}"] for n, local in entries if local is not None]
            for names in statements:
                first = names[0].split(" as ")
                key = (1, natural(module.lower()), module, name_order(first[0]), first[-1])
                lines = self._from(layout, module, names, depth)
                sections.setdefault(_section(module), []).append((key, lines))
        return [[lines for _, lines in sorted(sections[s])] for s in sorted(sections)]

    @staticmethod
    def _from(layout: Layout, module: str, names: list[str], depth: int) -> list[str]:
        line = f"from {module} import {', '.join(names)}"
        if fits(INDENT * depth + line):
            return [line]
        block = layout.block(Group(f"from {module} import (", tuple(names), ")"), depth)
        return block.split("\n")

    def block(self, layout: Layout, depth: int = 0) -> str:
        """The whole block as text for a template (the first line unindented, as a
        template writes it after its own indentation)."""
        indent = INDENT * depth
        out: list[str] = []
        for section in self.statements(layout, depth):
            if out:
                out.append("")
            for lines in section:
                out += [lines[0], *lines[1:]]
        return "\n".join(
            line if i == 0 or not line or line.startswith(indent) else indent + line
            for i, line in enumerate(out)
        )
