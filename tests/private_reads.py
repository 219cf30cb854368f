"""The rule that a module reads no private attribute of another module's objects,
for the runtime's import rules (tests/runtime/import_rules.py) and the generator's
(tests/generator/test_generator_layers.py).

Python cannot tell from the source what class an object has, so the rule is read by
name: ``obj._name`` (an attribute, not ``self``, ``cls`` or ``super()``) is another
module's private state unless a class of the reading module defines ``_name`` itself
(a method, a class attribute or a ``self._name = …``), which is how one class of a
module legitimately reaches into another of the same module (a task handle into its
session, a classmethod building an instance). Dunder names are public. Each reading
the rule should let pass is written, with its reason, in the caller's exceptions
(``"module: obj._name"``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own(node: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: the object's own attributes."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def class_body_names(cls: ast.ClassDef) -> set[str]:
    """The names a class body defines: its methods and its class-level names."""
    names: set[str] = set()
    for item in cls.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
    return names


def defined_private_names(tree: ast.Module) -> frozenset[str]:
    """The private attribute names the module's classes define: methods, class-level
    names, and attributes set on ``self``/``cls``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names |= class_body_names(node)
        elif isinstance(node, ast.Attribute) and _own(node.value):
            names.add(node.attr)
    return frozenset(name for name in names if private(name))


def private_reads(module: str, tree: ast.Module, exceptions: Mapping[str, str]) -> list[str]:
    """Each ``obj._name`` of ``module`` that reads another module's private state."""
    own = defined_private_names(tree)
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and private(node.attr)
            and node.attr not in own
            and not _own(node.value)
            and f"{module}: {ast.unparse(node)}" not in exceptions
        ):
            out.append(f"{module}:{node.lineno} reads {ast.unparse(node)}")
    return out
