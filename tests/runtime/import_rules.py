"""The runtime's import rules, checked over its source (tests/runtime/test_layout.py).

Every import counts: at module level, inside a function, under ``if TYPE_CHECKING:``
and by name (a string such as ``".http.server"`` handed to ``importlib.import_module``,
or kept in a table for it); and so does the import Python makes implicitly: importing
``client.core`` runs ``client/__init__`` first (a subpackage's parent, when the
importer is not inside that subpackage already; the root package's ``__init__`` is
left out, it loads nothing until a name is asked for). The rules:

- no cycle between runtime modules;
- each part imports only the parts below it (``ALLOWED``): the client never imports
  the server or HTTP, the server never imports the client, the schema part imports
  nothing but the protocol part and the root's leaf modules;
- only the http part imports the SDK/ASGI stack (``SDK_STACK``) at module level (the
  rest may load it inside a function, when HTTP is asked for);
- only the tasks part imports redis, at any level;
- the HTTP shell (the http part) keeps to the server core's public surface: it
  imports no ``_name`` from another part, reads no ``obj._attr`` of an object not
  its own (``self``, ``cls``), and sets no attribute of such an object, since the
  core owns its state (``ServerConnection.receive_stateless`` takes what a request
  implies). Each exception is in ``SHELL_EXCEPTIONS`` with its reason;
- no module imports an underscore name of another module (``from .values import
  _short``): a name two modules share is public in the module that defines it, so
  a file split is a boundary with a surface, not one module cut in half. Each
  exception is in ``PRIVATE_IMPORT_EXCEPTIONS`` with its reason;
- no module reads a private attribute of another module's objects
  (``session._core``; read by name, tests/private_reads.py): what a module needs of
  another's object is on its public surface (the client's flows read a session's
  settings and its ``core``). Each exception is in ``PRIVATE_READ_EXCEPTIONS``
  with its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from private_reads import private, private_reads

# A module's part: its subpackage, or one of two groups of root modules.
LEAVES = frozenset({"_errors", "_impl", "_unset", "_version"})  # root modules that import no part
# the public surface and the command line
ENTRY = frozenset({"__init__", "_main"})

ALLOWED: Mapping[str, frozenset[str]] = {
    "leaf": frozenset(),
    "protocol": frozenset({"leaf"}),
    "schema": frozenset({"leaf", "protocol"}),
    "ratelimit": frozenset({"leaf"}),
    "tasks": frozenset({"leaf", "protocol", "ratelimit"}),
    "transport": frozenset({"leaf", "protocol"}),
    "auth": frozenset({"leaf", "protocol"}),
    "contract": frozenset({"leaf", "protocol", "schema", "auth"}),
    "telemetry": frozenset({"leaf", "protocol"}),
    "server": frozenset({"leaf", "protocol", "schema", "ratelimit", "tasks", "auth", "telemetry"}),
    "client": frozenset({"leaf", "protocol", "schema", "contract", "transport", "telemetry"}),
    "http": frozenset(
        {"leaf", "protocol", "schema", "ratelimit", "tasks", "auth", "server", "telemetry"}
    ),
    "entry": frozenset(
        {
            "leaf",
            "protocol",
            "schema",
            "contract",
            "ratelimit",
            "tasks",
            "transport",
            "auth",
            "telemetry",
            "server",
            "client",
            "http",
        }
    ),
}

SDK_STACK = frozenset({"mcp", "mcp_types", "starlette", "uvicorn", "h11", "anyio", "sse_starlette"})

# The parts whose modules keep to other parts' public surfaces (see the docstring).
SHELLS = frozenset({"http"})
# "module: the expression" -> why the shell may do it.
SHELL_EXCEPTIONS: Mapping[str, str] = {
    "http.guard: self.conn.__class__": (
        "uvicorn's h11 connection, not the core's: the guard swaps in a subclass that "
        "refuses double framing (one of the uvicorn internals read only in the guards, "
        "tests/runtime/http/test_uvicorn_internals.py)"
    ),
}

# "module: name" -> why the module may import that underscore name of another module.
PRIVATE_IMPORT_EXCEPTIONS: Mapping[str, str] = {}

# "module: obj._name" -> why the module may read that private attribute.
PRIVATE_READ_EXCEPTIONS: Mapping[str, str] = {
    "_main: argparse._ArgumentGroup": (
        "an annotation only: argparse has no public name for the type of "
        "add_argument_group's result (typeshed calls it _ArgumentGroup)"
    ),
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing runtime module, dotted below the package ("client.core")
    target: str  # a runtime module (same form) or an outside top-level package
    kind: str  # "module", "function", "type" (under TYPE_CHECKING) or "name" (a string)
    inside: bool  # target is a runtime module
    line: int


def load(root: Path) -> dict[str, ast.Module]:
    """The runtime's modules by dotted name below the package (``__init__`` for the
    package itself, ``client`` for ``client/__init__.py``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        out[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def part_of(module: str) -> str:
    head = module.split(".")[0]
    if head in LEAVES:
        return "leaf"
    if head in ENTRY:
        return "entry"
    return head


def _package_of(module: str, modules: Mapping[str, object]) -> list[str]:
    """The package a module's relative imports start from."""
    if module == "__init__":
        return []
    parts = module.split(".")
    is_package = any(other.startswith(module + ".") for other in modules)
    return parts if is_package else parts[:-1]


def _resolve(module: str, level: int, name: str, modules: Mapping[str, object]) -> str | None:
    base = _package_of(module, modules)
    if level > len(base) + 1:
        return None
    base = base[: len(base) - (level - 1)]
    dotted = ".".join([*base, *filter(None, name.split("."))])
    if dotted in modules:
        return dotted
    return "__init__" if dotted == "" else None


def _kinds(tree: ast.Module) -> dict[int, str]:
    """The kind of each import node: under TYPE_CHECKING, inside a function, else module."""
    kinds: dict[int, str] = {}

    def walk(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            here = kind
            if isinstance(child, ast.If) and ast.unparse(child.test) in (
                "TYPE_CHECKING",
                "typing.TYPE_CHECKING",
            ):
                here = "type"
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                here = "function" if kind == "module" else kind
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                kinds[id(child)] = here
            walk(child, here)

    walk(tree, "module")
    return kinds


def imports(module: str, tree: ast.Module, modules: Mapping[str, object]) -> list[Import]:
    """Every import of one module, resolved to runtime modules where it is one."""
    out: list[Import] = []
    kinds = _kinds(tree)
    for node in ast.walk(tree):
        kind = kinds.get(id(node), "module")
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append(Import(module, alias.name.split(".")[0], kind, False, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append(Import(module, node.module.split(".")[0], kind, False, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            for alias in node.names:  # a submodule named in the list is imported itself
                sub = _resolve(module, node.level, f"{base}.{alias.name}", modules)
                target = sub or _resolve(module, node.level, base, modules)
                if target is not None:
                    out.append(Import(module, target, kind, True, node.lineno))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (node.value.startswith(".") and len(node.value) > 1)
        ):
            target = _by_name(module, node.value, modules)
            if target is not None:
                out.append(Import(module, target, "name", True, node.lineno))
    return out


def _by_name(module: str, text: str, modules: Mapping[str, object]) -> str | None:
    """The runtime module a relative dotted string names, if it names one."""
    level = len(text) - len(text.lstrip("."))
    rest = text[level:]
    if not all(piece.isidentifier() for piece in rest.split(".") if rest):
        return None
    return _resolve(module, level, rest, modules)


def with_parents(edges: list[Import], modules: Mapping[str, object]) -> list[Import]:
    """The edges plus the implicit import of each target's parent packages."""
    out = list(edges)
    for edge in edges:
        if not edge.inside:
            continue
        pieces = edge.target.split(".")
        for depth in range(1, len(pieces)):
            parent = ".".join(pieces[:depth])
            if parent in modules and not (edge.source + ".").startswith(parent + "."):
                out.append(Import(edge.source, parent, f"{edge.kind}, parent", True, edge.line))
    return out


def loads(module: str, modules: Mapping[str, ast.Module]) -> set[str]:
    """What importing ``module`` runs: the runtime modules (its own parent packages
    included) and outside top-level packages imported at module level, transitively."""
    pieces = module.split(".")
    todo = [module, *(".".join(pieces[:d]) for d in range(1, len(pieces)))]
    seen: set[str] = set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if current not in modules:
            continue  # an outside package: its own imports are not ours to follow
        edges = with_parents(imports(current, modules[current], modules), modules)
        todo += [edge.target for edge in edges if edge.kind.split(",")[0] == "module"]
    return seen


def cycles(edges: list[Import]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for edge in edges:
        if edge.inside and edge.target != edge.source:
            graph.setdefault(edge.source, set()).add(edge.target)
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(node)

    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    return found


def _own(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def shell_reaches(module: str, tree: ast.Module, modules: Mapping[str, object]) -> list[str]:
    """What a shell module does to objects not its own: private names imported from
    another part, private attributes read, attributes set (exceptions left out)."""
    out: list[str] = []
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}

    def own(value: ast.expr) -> bool:  # self, cls, or a class of this module
        return _own(value) or (isinstance(value, ast.Name) and value.id in classes)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            target = _resolve(module, node.level, node.module or "", modules)
            if target is not None and part_of(target) != part_of(module):
                out += [
                    f"{module}:{node.lineno} imports {alias.name} from {target}"
                    for alias in node.names
                    if private(alias.name)
                ]
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and not own(target.value)
                and f"{module}: {ast.unparse(target)}" not in SHELL_EXCEPTIONS
            ):
                out.append(f"{module}:{node.lineno} sets {ast.unparse(target)}")
        if (
            isinstance(node, ast.Attribute)
            and private(node.attr)
            and not own(node.value)
            and f"{module}: {ast.unparse(node)}" not in SHELL_EXCEPTIONS
        ):
            out.append(f"{module}:{node.lineno} reads {ast.unparse(node)}")
    return out


def _from_target(
    module: str, node: ast.ImportFrom, name: str, modules: Mapping[str, object]
) -> str | None:
    """The runtime module ``from <node.module> import <name>`` reads, if it is one:
    relative, or absolute through ``mcpgen_runtime``."""
    base = node.module or ""
    if node.level:
        return _resolve(module, node.level, f"{base}.{name}" if name else base, modules)
    if base != "mcpgen_runtime" and not base.startswith("mcpgen_runtime."):
        return None
    dotted = ".".join(filter(None, [base.partition(".")[2], name]))
    if dotted in modules:
        return dotted
    return "__init__" if dotted == "" else None


def private_imports(module: str, tree: ast.Module, modules: Mapping[str, object]) -> list[str]:
    """Each underscore name ``module`` imports from another runtime module (a private
    submodule named in the list is a module, not a name; exceptions left out)."""
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        target = _from_target(module, node, "", modules)
        for alias in node.names:
            if (
                target is None
                or target == module
                or not private(alias.name)
                or _from_target(module, node, alias.name, modules) is not None
                or f"{module}: {alias.name}" in PRIVATE_IMPORT_EXCEPTIONS
            ):
                continue
            out.append(f"{module}:{node.lineno} imports the private {alias.name} from {target}")
    return out


def violations(modules: Mapping[str, ast.Module]) -> list[str]:
    """Every broken rule, one line each (empty: the layout holds)."""
    edges = [edge for name, tree in modules.items() for edge in imports(name, tree, modules)]
    edges = with_parents(edges, modules)
    out = [f"cycle: {' -> '.join(cycle)}" for cycle in cycles(edges)]
    out += [
        f"{name} is in no part the rules know" for name in modules if part_of(name) not in ALLOWED
    ]
    for edge in edges:
        where = f"{edge.source}:{edge.line} imports {edge.target} ({edge.kind})"
        src = part_of(edge.source)
        if edge.inside:
            dst = part_of(edge.target)
            if dst != src and dst not in ALLOWED.get(src, frozenset()):
                out.append(f"{src} may not import {dst}: {where}")
        elif edge.target in SDK_STACK and edge.kind == "module" and src != "http":
            out.append(f"only http imports the SDK/ASGI stack at module level: {where}")
        elif edge.target == "redis" and src != "tasks":
            out.append(f"only tasks imports redis: {where}")
    for name, tree in modules.items():
        out += private_imports(name, tree, modules)
        out += private_reads(name, tree, PRIVATE_READ_EXCEPTIONS)
        if part_of(name) in SHELLS:
            reaches = shell_reaches(name, tree, modules)
            out += [f"the shell reaches into an object not its own: {r}" for r in reaches]
    return out
