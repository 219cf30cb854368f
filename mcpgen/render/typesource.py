"""The Python text of models.py's declarations: helper-name markers, literals and
unions as annotation text, and the source of a pydantic model or a TypedDict.

Annotations are built as strings by ``typemap``; the names models.py imports
(``Any``, ``Literal``, ``Field``, ...) travel inside them as markers, so that a spec
type may take any of those names: the markers are resolved at the end, to the
name itself or to a private alias.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..names import py_identifier
from .escape import py_docstring, py_literal, py_str

__all__ = [
    "ANY", "HELPERS", "NOQA_UP013", "Declaration", "FieldSpec", "declared_names", "field_name",
    "helper", "identifiers_in",
    "is_alias", "literal", "model_source", "nullable", "rename_types", "resolve_helpers",
    "root_model_source", "split_union",
    "typeddict_source", "union_of",
]  # fmt: skip


# Names models.py imports. Generated text carries them as markers, replaced at the end
# by the name itself, or by a private alias when a spec type has taken the name (a
# `types` entry may well be called `Field` or `Required`).
HELPERS = {
    "Annotated": "typing", "Any": "typing", "Literal": "typing", "Required": "typing",
    "TypeAlias": "typing", "TypedDict": "typing",
    "BaseModel": "pydantic", "ConfigDict": "pydantic", "Field": "pydantic", "MISSING": "pydantic",
    "RootModel": "pydantic",
}  # fmt: skip


_MARK = "\x00"


def helper(name: str) -> str:
    return f"{_MARK}{name}{_MARK}"


ANY = helper("Any")


_MARKER = re.compile(f"{_MARK}([A-Za-z]+){_MARK}")


# a string literal (a `Literal[...]` value) or a helper marker: left alone by a rename
_STRING_OR_MARKER = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\x00[A-Za-z]+\x00""")


def rename_types(text: str, renames: Mapping[str, str]) -> str:
    """``text`` (an annotation) with the models.py names of ``renames`` replaced by
    their local names; string literals and helper markers are left as they are."""

    def rename(part: str) -> str:
        return _NAME.sub(lambda m: renames.get(m.group(1), m.group(1)), part)

    pieces, last = [], 0
    for match in _STRING_OR_MARKER.finditer(text):
        pieces += [rename(text[last : match.start()]), match.group(0)]
        last = match.end()
    return "".join(pieces) + rename(text[last:])


def declared_names(text: str) -> frozenset[str]:
    """The names an annotation (as ``typemap`` writes it, helpers still marked) uses
    outside its string literals: models.py types and builtins, never a helper and never
    a word inside a ``Literal["…"]`` value."""
    names: set[str] = set()
    last = 0
    for match in _STRING_OR_MARKER.finditer(text):
        names |= identifiers_in(text[last : match.start()])
        last = match.end()
    return frozenset(names | identifiers_in(text[last:]))


def resolve_helpers(text: str, taken: Iterable[str]) -> tuple[str, dict[str, str]]:
    """``text`` with helper markers replaced; the helpers used, name → local alias."""
    used: dict[str, str] = {}
    taken = frozenset(taken)

    def local(match: re.Match[str]) -> str:
        name = match.group(1)
        used[name] = f"_{name}" if name in taken else name
        return used[name]

    return _MARKER.sub(local, text), used


NOQA_UP013 = "  # noqa: UP013"


# Attributes of pydantic's BaseModel that a field name must not shadow.
_MODEL_RESERVED = frozenset(
    {
        "copy", "dict", "json", "schema", "schema_json", "construct", "validate", "fields",
        "parse_obj", "parse_raw", "parse_file", "from_orm", "update_forward_refs",
        "register", "self",
        "Config",  # a v1 config class to pydantic, refused beside model_config
    }
)  # fmt: skip


@dataclass
class Declaration:
    """One top-level statement of models.py."""

    name: str
    source: str
    eager: frozenset[str] = frozenset()  # names its statement evaluates at import time


@dataclass
class FieldSpec:
    wire: str
    py: str
    annotation: str
    required: bool
    description: str | None


def is_alias(declaration: Declaration) -> bool:
    return f": {helper('TypeAlias')} = " in declaration.source.split("\n", 1)[0]


def nullable(text: str, admits_null: bool) -> str:
    return text + " | None" if admits_null and not text.endswith("| None") and text != ANY else text


def literal(values: list[Any]) -> str:
    if not values or not all(v is None or isinstance(v, (str, int, bool, float)) for v in values):
        return ANY
    # mypy refuses an integer beyond 64 bits in a Literal (and pydantic cannot check one
    # there): such values are typed int, the validator holds them to the enum. A Literal
    # cannot hold a float either: a number member (2.5, or 5.0, which JSON may send as
    # 5) makes the type ``int | float`` beside the Literal of the rest.
    big = [v for v in values if _too_big(v)]
    floats = any(isinstance(v, float) for v in values)
    members: list[str] = []
    for value in values:
        if (
            value is not None
            and not isinstance(value, float)
            and value not in big
            and py_literal(value) not in members
        ):
            members.append(py_literal(value))
    parts = [f"{helper('Literal')}[{', '.join(members)}]"] if members else []
    parts += ["int | float"] if floats else ["int"] if big else []
    parts += ["None"] if None in values else []
    return " | ".join(parts) if parts else "None"


def _too_big(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63


def union_of(parts: list[str]) -> str:
    if ANY in parts:
        return ANY
    unique: list[str] = []
    for part in parts:
        for piece in split_union(part):
            if piece not in unique:
                unique.append(piece)
    if "None" in unique and len(unique) > 1:
        unique.remove("None")
        unique.append("None")
    return " | ".join(unique)


def split_union(text: str) -> list[str]:
    """Top-level ``|`` members of an annotation."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return parts


# Identifiers, non-ASCII ones too (a definition may be called ``Ünï``).
_NAME = re.compile(r"\b([^\W\d]\w*)\b")


def identifiers_in(text: str) -> frozenset[str]:
    return frozenset(_NAME.findall(text))


def field_name(wire: str, taken: set[str], hidden: set[str]) -> str:
    """A model attribute for ``wire``: an identifier that shadows nothing of BaseModel,
    and no name of models.py (``hidden``: a field ``Day`` would make a later
    ``list[Day]`` in the class body mean the field)."""
    name = py_identifier(unicodedata.normalize("NFKC", wire)).lstrip("_") or "field"
    if name[0].isdigit():
        name = "f_" + name
    if keyword.iskeyword(name) or name in _MODEL_RESERVED or name.startswith("model_"):
        name += "_"
    while name in taken or name in hidden or name in HELPERS:
        name += "_"
    taken.add(name)
    return name


def model_source(name: str, schema: Mapping[str, Any], fields: list[FieldSpec]) -> str:
    lines = [f"class {name}({helper('BaseModel')}):"]
    if isinstance(schema.get("description"), str) and schema["description"]:
        lines.append(f"    {py_docstring(schema['description'])}")
        lines.append("")
    # patternProperties admit keys besides the named ones even when
    # additionalProperties is false: the model cannot tell which, so it allows them
    closed = schema.get("additionalProperties") is False and not schema.get("patternProperties")
    config = [f"extra={py_str('forbid' if closed else 'allow')}"]
    if any(f.py != f.wire for f in fields):
        config.append("validate_by_name=True, validate_by_alias=True, serialize_by_alias=True")
    if any(f.py.startswith("model_") for f in fields):  # renamed off pydantic's own
        config.append("protected_namespaces=()")
    lines.append(f"    model_config = {helper('ConfigDict')}({', '.join(config)})")
    lines.append("")
    for f in fields:
        options = []
        if f.py != f.wire:
            options.append(f"alias={py_str(f.wire)}")
        if f.description:
            options.append(f"description={py_str(f.description)}")
        # An optional field is absent until the data has it, also when its schema has
        # a `default`: JSON Schema's `default` is an annotation, which no validator
        # applies, so a parsed result holds what was sent (the server, too, sends only
        # the fields a handler set). The default stays in the published schema.
        if f.required:
            kind, default = f.annotation, "..." if options else None
        else:
            kind, default = f"{f.annotation} | {helper('MISSING')}", helper("MISSING")
        if options:
            value = f"{helper('Field')}({', '.join(([default] if default else []) + options)})"
            lines.append(f"    {f.py}: {kind} = {value}")
        elif default is not None:
            lines.append(f"    {f.py}: {kind} = {default}")
        else:
            lines.append(f"    {f.py}: {kind}")
    return "\n".join(lines)


def root_model_source(name: str, schema: Mapping[str, Any], root: str) -> str:
    """A model whose value is ``root`` itself (an output object that is a mapping)."""
    lines = [f"class {name}({helper('RootModel')}[{root}]):"]
    if isinstance(schema.get("description"), str) and schema["description"]:
        lines.append(f"    {py_docstring(schema['description'])}")
    else:
        lines.append("    pass")
    return "\n".join(lines)


def typeddict_source(
    name: str, schema: Mapping[str, Any], fields: list[FieldSpec]
) -> tuple[str, frozenset[str]]:
    doc = schema.get("description") if isinstance(schema.get("description"), str) else None
    entries = [
        (f.wire, f"{helper('Required')}[{f.annotation}]" if f.required else f.annotation)
        for f in fields
    ]
    # Python reads class-body names NFKC-normalized (``ﬁx`` is ``fix`` there): such
    # keys, and any that are no identifiers ("max-results"), need the call syntax.
    if all(
        wire.isidentifier()
        and not keyword.iskeyword(wire)
        and unicodedata.normalize("NFKC", wire) == wire
        for wire, _ in entries
    ):
        lines = [f"class {name}({helper('TypedDict')}, total=False):"]
        if doc:
            lines += [f"    {py_docstring(doc)}", ""]
        lines += [f"    {wire}: {kind}" for wire, kind in entries] or ["    pass"]
        return "\n".join(lines), frozenset()
    # Wire names such as "max-results" cannot be class attributes.
    body = ", ".join(f"{py_str(wire)}: {kind}" for wire, kind in entries)
    arguments = f"{py_str(name)}, {{{body}}}, total=False"
    if all(wire.isidentifier() and not keyword.iskeyword(wire) for wire, _ in entries):
        # keys that NFKC-normalize to another name, where ruff's UP013 would rewrite the
        # call into a class whose ``ﬁx`` is ``fix``: the call is the only right syntax.
        # The comment goes on the statement's first line (where ruff reads it), after
        # the bracket; black joins the lines when they fit (``models._for_black``).
        source = f"{name} = {helper('TypedDict')}({NOQA_UP013}\n    {arguments}\n)"
    else:
        source = f"{name} = {helper('TypedDict')}({arguments})"
    if doc:
        source += f"\n{name}.__doc__ = {py_docstring(doc)}"
    return source, frozenset().union(*(identifiers_in(kind) for _, kind in entries)) | {"Required"}
