"""The generator's layers: which part of ``mcpgen`` may import which.

The pipeline reads spec → ir → descriptors → render → write, and ``build`` and ``cli``
drive it. The front end (``spec/``) and the renderer (``render/``) are siblings: both
read the IR and the published descriptors (``descriptors``), neither imports the other,
and what both need of JSON Schema (its vocabulary, the depth limit of the type
mapping) lives in a leaf module, ``keywords``. Every import counts: at module level,
inside functions and under ``if TYPE_CHECKING:``. docs/architecture.md ("What may
import what") states the same table in words.

Within and across parts, no module imports an underscore name of another module
(``from .common import _echo``): a name two modules share is public where it is
defined. Each exception is in ``PRIVATE_IMPORT_EXCEPTIONS`` with its reason.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
from private_reads import private_reads

import mcpgen

PACKAGE = Path(mcpgen.__file__).parent

# Modules that import no other part of mcpgen: the version, the JSON Schema
# vocabulary, Python names, where mcpgen's files are, the one print escape, safe I/O.
LEAVES = frozenset({"__init__", "keywords", "names", "paths", "printable", "safeio"})

PIPELINE_AND_COMMANDS = frozenset(
    {"ir", "descriptors", "spec", "render", "write", "build", "report", "progress", "config"}
    | {"starter", "hosts", "deploy", "diff", "importer", "testing", "docs"}
)

ALLOWED: Mapping[str, frozenset[str]] = {
    "leaf": frozenset(),
    "ir": frozenset({"leaf"}),
    "descriptors": frozenset({"leaf", "ir"}),
    "spec": frozenset({"leaf", "ir", "descriptors"}),
    "render": frozenset({"leaf", "ir", "descriptors"}),
    "write": frozenset({"leaf"}),
    "report": frozenset({"leaf", "spec"}),  # prints a spec's diagnostics
    "progress": frozenset({"leaf", "report"}),
    "build": frozenset({"leaf", "ir", "spec", "render", "write"}),
    # the commands beside the pipeline read its front end and the IR, never the CLI
    "config": frozenset({"leaf"}),
    "starter": frozenset({"leaf"}),
    "hosts": frozenset({"leaf"}),
    "deploy": frozenset({"leaf", "ir", "spec"}),
    "diff": frozenset({"leaf", "ir", "descriptors", "spec"}),
    "importer": frozenset({"leaf", "descriptors", "spec"}),
    "testing": frozenset({"leaf", "ir", "descriptors", "spec", "build", "report"}),
    "docs": frozenset({"leaf", "ir", "descriptors", "spec", "diff", "testing"}),
    "hatch": frozenset({"leaf", "spec", "build", "config"}),
    "cli": frozenset({"leaf"} | PIPELINE_AND_COMMANDS),  # any part
}

# "module: name" -> why the module may import that underscore name of another module.
PRIVATE_IMPORT_EXCEPTIONS: Mapping[str, str] = {}


def part(module: str) -> str:
    """``render.layout`` → ``render``; a leaf module → ``leaf``."""
    top = module.split(".")[0]
    return "leaf" if top in LEAVES else top


def load(root: Path) -> dict[str, ast.Module]:
    """Every module under ``root`` by its dotted name inside the package."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        modules[name.removesuffix(".__init__") if name != "__init__" else name] = ast.parse(
            path.read_text(encoding="utf-8")
        )
    return modules


def imported(module: str, tree: ast.Module, is_package: bool) -> set[str]:
    """The mcpgen modules ``module`` imports (dotted, inside the package)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {
                alias.name.removeprefix("mcpgen.")
                for alias in node.names
                if alias.name.startswith("mcpgen.")
            }
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module != "mcpgen" and not str(node.module).startswith("mcpgen."):
                    continue  # the runtime (mcpgen_runtime) is not a part of the generator
                base = node.module.split(".")[1:]
            else:
                up = package[: len(package) - node.level + 1]
                base = up + (node.module.split(".") if node.module else [])
            if base:
                found.add(".".join(base))
            else:  # `from .. import __version__, ir`: the root's own name or a module
                found |= {"__init__" if a.name.startswith("__") else a.name for a in node.names}
    return found


def violations(modules: Mapping[str, ast.Module], packages: frozenset[str]) -> list[str]:
    """Each import of a part the importer's part may not use, as text."""
    found = []
    for name, tree in sorted(modules.items()):
        here = part(name)
        allowed = ALLOWED.get(here)
        if allowed is None:
            found.append(f"{name}: part {here!r} has no row in ALLOWED")
            continue
        for target in sorted(imported(name, tree, name in packages)):
            there = part(target)
            if there != here and there not in allowed:
                found.append(f"{name} imports {target}: {here} may not import {there}")
    return found


def private_imports(modules: Mapping[str, ast.Module], packages: frozenset[str]) -> list[str]:
    """Each ``from x import _name`` of an mcpgen module by another (a private submodule
    named in the list is a module, not a name; exceptions left out), as text."""
    found = []
    for name, tree in sorted(modules.items()):
        package = name.split(".") if name in packages else name.split(".")[:-1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 0:
                if node.module != "mcpgen" and not str(node.module).startswith("mcpgen."):
                    continue
                base = str(node.module).split(".")[1:]
            else:
                base = package[: len(package) - node.level + 1]
                base += node.module.split(".") if node.module else []
            target = ".".join(base) or "__init__"
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if (
                    not private
                    or target == name
                    or ".".join([*base, alias.name]) in modules
                    or f"{name}: {alias.name}" in PRIVATE_IMPORT_EXCEPTIONS
                ):
                    continue
                found.append(f"{name}:{node.lineno} imports the private {alias.name} from {target}")
    return found


def _packages(root: Path) -> frozenset[str]:
    return frozenset(
        ".".join(p.parent.relative_to(root).parts) for p in root.rglob("__init__.py") if p != root
    )


def test_the_generator_keeps_its_layers() -> None:
    modules = load(PACKAGE)
    assert violations(modules, _packages(PACKAGE)) == []
    # every part of the package has a row, and the table is the parts there are
    assert {part(name) for name in modules} == set(ALLOWED)


def test_the_layers_have_no_cycle() -> None:
    """Parts import only parts listed before them in a topological order."""
    done: set[str] = set()
    remaining = dict(ALLOWED)
    while remaining:
        ready = [p for p, needs in remaining.items() if needs - {p} <= done]
        assert ready, f"a cycle among {sorted(remaining)}"
        for p in ready:
            done.add(p)
            del remaining[p]


def test_the_front_end_and_the_renderer_import_nothing_of_each_other() -> None:
    assert "render" not in ALLOWED["spec"] and "spec" not in ALLOWED["render"]


@pytest.mark.parametrize(
    ("modules", "expected"),
    [
        pytest.param(
            {"spec.validate": "def f():\n    from ..render.typemap import json_depth\n"},
            "spec.validate imports render.typemap: spec may not import render",
            id="spec imports render inside a function",
        ),
        pytest.param(
            {"render.typedefs": "from ..spec.keywords import LOCAL_REF\n"},
            "render.typedefs imports spec.keywords: render may not import spec",
            id="render imports spec",
        ),
        pytest.param(
            {
                "write": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import ir\n"
            },
            "write imports ir: write may not import ir",
            id="under TYPE_CHECKING, from the root package",
        ),
        pytest.param(
            {"build": "import mcpgen.cli.common\n"},
            "build imports cli.common: build may not import cli",
            id="absolute import",
        ),
        pytest.param(
            {"newpart.x": "x = 1\n"},
            "newpart.x: part 'newpart' has no row in ALLOWED",
            id="a part without a row",
        ),
    ],
)
def test_each_kind_of_violation_is_caught(modules: dict[str, str], expected: str) -> None:
    trees = {name: ast.parse(textwrap.dedent(text)) for name, text in modules.items()}
    assert violations(trees, frozenset()) == [expected]


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports(load(PACKAGE), _packages(PACKAGE)) == []


def test_no_module_reads_another_modules_private_attributes() -> None:
    """No ``obj._name`` of an object another module defines (tests/private_reads.py;
    the generator has no exception to the rule)."""
    found = [line for name, tree in load(PACKAGE).items() for line in private_reads(name, tree, {})]
    assert found == []
    caught = private_reads("build", ast.parse("def f(view):\n    return view._fields\n"), {})
    assert caught == ["build:2 reads view._fields"]


def test_every_private_import_exception_is_used_and_explained() -> None:
    found = {
        f"{name}: {alias.name}"
        for name, tree in load(PACKAGE).items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert set(PRIVATE_IMPORT_EXCEPTIONS) <= found
    assert all(len(reason) > 40 for reason in PRIVATE_IMPORT_EXCEPTIONS.values())


@pytest.mark.parametrize(
    ("modules", "expected"),
    [
        pytest.param(
            {"cli.docs": "from .common import _echo, echo\n", "cli.common": ""},
            ["cli.docs:1 imports the private _echo from cli.common"],
            id="a sibling's underscore name",
        ),
        pytest.param(
            {"build": "def f():\n    from mcpgen.render.package import _ToolView\n"},
            ["build:2 imports the private _ToolView from render.package"],
            id="absolute, inside a function",
        ),
        pytest.param(
            {"cli.docs": "from .. import __version__, _private_mod\n", "_private_mod": ""},
            [],
            id="a dunder name and a private submodule are not private names",
        ),
    ],
)
def test_private_imports_are_caught(modules: dict[str, str], expected: list[str]) -> None:
    trees = {name: ast.parse(textwrap.dedent(text)) for name, text in modules.items()}
    assert private_imports(trees, frozenset({"cli"})) == expected
