"""What the runtime's docstrings claim about imports and dependencies is true.

`tests/repo/test_dotted_paths.py` checks that every module a text names exists; this checks
claims of another kind, which once went stale unnoticed (``http/__init__`` said it
imported the official MCP SDK long after it stopped; the package docstring said the
runtime needed only the standard library):

- "the only part that imports X": the part imports X and no other part does;
- "Nothing here imports the official MCP SDK": no module of the part imports ``mcp``;
- the package docstring names every dependency of ``runtime/pyproject.toml`` and of
  its ``http`` extra, and every distribution it names is one of them.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
PACKAGE = RUNTIME / "mcpgen_runtime"
ONLY = re.compile(r"the only part that imports (\w+)")
NO_SDK = "Nothing here imports the official MCP SDK"


def imported_roots(module: Path) -> set[str]:
    """The top-level names a module imports anywhere (at module level or inside a function)."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def part_of(module: Path) -> str:
    relative = module.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imports_by_part() -> dict[str, set[str]]:
    parts: dict[str, set[str]] = {}
    for module in PACKAGE.rglob("*.py"):
        parts.setdefault(part_of(module), set()).update(imported_roots(module))
    return parts


def part_docstrings() -> dict[str, str]:
    return {
        init.parent.name: ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        for init in PACKAGE.glob("*/__init__.py")
    }


CLAIMS = [
    (part, library) for part, text in part_docstrings().items() for library in ONLY.findall(text)
]


def test_the_runtime_makes_claims_of_this_kind() -> None:
    assert CLAIMS, "no 'the only part that imports' claim left: drop this test or the regex"


@pytest.mark.parametrize(("part", "library"), CLAIMS)
def test_the_only_part_that_imports_a_library_is_that_part(part: str, library: str) -> None:
    parts = imports_by_part()
    assert library in parts[part], f"{part}/ says it imports {library}, and does not"
    others = sorted(other for other, roots in parts.items() if other != part and library in roots)
    assert not others, f"{part}/ says it is the only part that imports {library}: {others} do"


def test_a_part_that_says_it_never_imports_the_sdk_does_not() -> None:
    parts = imports_by_part()
    claimed = [part for part, text in part_docstrings().items() if NO_SDK in " ".join(text.split())]
    assert claimed
    for part in claimed:
        assert not parts[part] & {"mcp", "mcp_types"}, f"{part}/ imports the SDK"


def test_the_package_docstring_names_the_runtime_dependencies() -> None:
    project = tomllib.loads((RUNTIME / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["http"]]
    names = {Requirement(spec).name for spec in declared}
    text = " ".join(
        (ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text("utf-8"))) or "").split()
    )
    missing = sorted(name for name in names if name not in text)
    assert not missing, f"mcpgen_runtime's docstring does not name {missing}"
    assert "only the standard library" not in text
