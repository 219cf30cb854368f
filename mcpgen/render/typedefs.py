"""What a contract defines and repeats, for the type mapping: every ``$defs`` entry
under one key (a tool schema's own definitions are local to it), the Python name each
gets, and the enums the contract writes more than once.
"""

from __future__ import annotations

import json
import keyword
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from .. import ir
from ..keywords import (
    LOCAL_REF,
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
    SCHEMA_VALUE_KEYWORDS,
    local_ref_names,
)
from ..names import MODELS_PY_NAMES, class_name

__all__ = [
    "SHARED_ENUM_MIN_CHARS", "ScopedDefs", "def_class_name", "enum_key", "ref_name",
    "rename_refs", "repeated_enums",
]  # fmt: skip


@dataclass
class ScopedDefs:
    """Every definition of a contract under one key each.

    ``types`` entries (and the files they reference) are global: their names are
    their keys. A tool schema's own ``$defs`` are local to that schema: the same name
    may mean different things in two tools (``Item`` a string in one, an integer in
    another), or the same thing. Definitions with the same name and the same content,
    down to everything they reference, share one key (one Python type); any other
    gets a fresh key, and the schemas that use it have their references renamed.
    """

    defs: dict[str, Any]
    renames: dict[tuple[str, str], dict[str, str]]  # (tool, input|output) → local → key
    local: dict[str, tuple[str, str]]  # key of a local definition → (its name, its tool)

    @classmethod
    def of(cls, contract: ir.Contract) -> ScopedDefs:
        scoped = cls(dict(contract.types), {}, {})
        keys: dict[tuple[str, str], str] = {}  # (name, closure) → key
        for tool in contract.tools:
            for kind, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
                own = schema.get("$defs") if isinstance(schema, dict) else None
                if not isinstance(own, dict) or not own:
                    continue
                local = {name: value for name, value in own.items() if name not in contract.types}
                rename: dict[str, str] = {}
                for name in local:
                    identity = (name, _closure_id(local, name))
                    if identity not in keys:
                        key, counter = name, 2
                        while key in scoped.defs:
                            key, counter = f"{name}#{counter}", counter + 1
                        keys[identity] = key
                        scoped.defs[key] = None  # filled below, once renames are known
                        scoped.local[key] = (name, tool.class_name)
                    rename[name] = keys[identity]
                for name, value in local.items():
                    if scoped.defs[rename[name]] is None:
                        scoped.defs[rename[name]] = rename_refs(value, rename)
                scoped.renames[(tool.name, kind)] = rename
        return scoped


def _closure_id(local: Mapping[str, Any], name: str) -> str:
    """A definition's identity: its content and that of every local definition it
    reaches, as canonical JSON."""
    seen: dict[str, Any] = {}
    stack = [name]
    while stack:
        current = stack.pop()
        if current in seen or current not in local:
            continue
        seen[current] = local[current]
        stack.extend(local_ref_names(local[current]))
    return json.dumps(seen, sort_keys=True, default=repr)


def ref_name(ref: str) -> str:
    """The definition a ``#/$defs/…`` reference names (a deeper pointer names none)."""
    return unquote(ref.removeprefix(LOCAL_REF)).replace("~1", "/").replace("~0", "~")


def rename_refs(schema: Any, rename: Mapping[str, str]) -> Any:
    """``schema`` with ``#/$defs/<name>`` references renamed (schema positions only:
    a ``const`` or ``default`` that happens to hold a ``$ref`` key is data)."""
    if not rename or not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if (
            key == "$ref"
            and isinstance(value, str)
            and value.startswith(LOCAL_REF)
            and ref_name(value) in rename
        ):
            target = rename[ref_name(value)]
            value = LOCAL_REF + quote(target.replace("~", "~0").replace("/", "~1"), safe="")
        elif key in SCHEMA_VALUE_KEYWORDS:
            value = rename_refs(value, rename)
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            value = [rename_refs(item, rename) for item in value]
        elif key in SCHEMA_MAP_KEYWORDS and key != "$defs" and isinstance(value, dict):
            value = {name: rename_refs(item, rename) for name, item in value.items()}
        result[key] = value
    return result


def def_class_name(name: str) -> str:
    """The Python name wanted for a tool's own definition ``name``: the name itself
    when it can be one (an identifier Python reads as written, not a keyword, not a
    name models.py uses, not class-private), else its PascalCase form. (A second,
    different definition of the same name is prefixed with its tool's class name.)"""
    if (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("__")
        and unicodedata.normalize("NFKC", name) == name
        and name not in MODELS_PY_NAMES
    ):
        return name
    return class_name(name)


SHARED_ENUM_MIN_CHARS = 98
"""An inline ``enum`` whose ``Literal[…]`` is this long or longer (98 characters: more
than a line) and that the contract holds more than once becomes one alias in models.py,
referenced by every use, instead of a copy per argument, field and signature."""


def enum_key(values: list[Any]) -> str | None:
    try:
        return json.dumps(values, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def repeated_enums(contract: ir.Contract) -> set[str]:
    """The ``enum`` lists that occur more than once in the contract's schemas."""
    seen: set[str] = set()
    repeated: set[str] = set()
    stack: list[Any] = [*contract.types.values()]
    for tool in contract.tools:
        stack += [tool.input_schema, tool.output_schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            values = node.get("enum")
            key = enum_key(values) if isinstance(values, list) else None
            if key is not None:
                (repeated if key in seen else seen).add(key)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return repeated
