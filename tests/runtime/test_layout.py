"""The runtime's layout rules: protocol constants in one module, no import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import mcpgen_runtime

RUNTIME = Path(mcpgen_runtime.__file__).parent
MODULES = {path.stem: ast.parse(path.read_text()) for path in sorted(RUNTIME.glob("*.py"))}


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            ids.add(id(body[0].value))
    return ids


def test_protocol_constants_live_in_one_module() -> None:
    """`_meta` keys, extension names and reserved error codes are written only in
    _protocol; everywhere else uses its names."""
    found = []
    for name, tree in MODULES.items():
        if name == "_protocol":
            continue
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value.startswith("io.modelcontextprotocol/")
            ):
                found.append(f"{name}:{node.lineno}: {node.value!r}")
            if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
                    and isinstance(node.operand, ast.Constant)
                    and isinstance(node.operand.value, int)
                    and 31000 <= node.operand.value <= 32768):
                found.append(f"{name}:{node.lineno}: -{node.operand.value}")
    assert found == []


def _type_only(tree: ast.Module) -> set[int]:
    """Ids of the import statements under ``if TYPE_CHECKING:`` (never run)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            ids.update(id(sub) for sub in ast.walk(node))
    return ids


def _imports(tree: ast.Module) -> set[str]:
    """Runtime modules this one imports when it runs, at any depth (a function-level
    import counts; one under ``if TYPE_CHECKING:`` does not)."""
    out = set()
    skip = _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module)
            else:
                out.update(alias.name for alias in node.names)
    return out & set(MODULES)


def test_no_import_cycles() -> None:
    graph = {name: _imports(tree) for name, tree in MODULES.items()}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt in path:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(node)

    done: set[str] = set()
    for name in sorted(graph):
        if name not in done and name != "__init__":
            visit(name, [name])
    assert cycles == []


def test_the_runtime_explains_itself() -> None:
    """Comments and messages state facts, not sections of documents outside the
    repository, and point users of the runtime at the runtime's own extra."""
    root = RUNTIME.parent.parent
    sources = [*RUNTIME.glob("*.py"), *(root / "mcpgen").rglob("*.py"), *(root / "templates").glob("*")]
    # the two outside documents' citation forms, spelled in pieces so that this file
    # does not cite them itself
    outside = ("DESIGN" + " §", "PROTOCOL" + ".md")
    cited = [f"{p.name}: {word}" for p in sources for word in outside if word in p.read_text()]
    assert cited == []
    assert not [p.name for p in RUNTIME.glob("*.py") if "mcpgen[http]" in p.read_text()]
