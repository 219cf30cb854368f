"""The Python code of models.py's declarations: literals and unions as annotations,
and the source of a pydantic model or a TypedDict.

Everything here is ``code.Code``: the models.py types an annotation names are ``Ref``
parts and the names models.py imports (``Any``, ``Literal``, ``Field``, ...) ``Helper``
parts, so that a spec type may take any of those names: ``models`` prints a helper
under a private alias where a type has its name, and ``signatures`` prints a type
under its local name in server.py and client.py.
"""

from __future__ import annotations

import keyword
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..names import py_identifier
from .code import Code, Helper, Part, Ref, Value, code, join
from .escape import py_docstring, py_literal, py_str

__all__ = [
    "ANY", "HELPERS", "NOQA_UP013", "NONE", "Declaration", "FieldSpec", "alias_source",
    "field_name", "helper", "literal", "model_source", "nullable", "ref",
    "root_model_source", "typeddict_source", "union_of",
]  # fmt: skip


# Names models.py imports: printed as themselves, or as a private alias where a spec
# type has taken the name (a `types` entry may well be called `Field` or `Required`).
HELPERS = {
    "Annotated": "typing", "Any": "typing", "Literal": "typing", "Required": "typing",
    "TypeAlias": "typing", "TypedDict": "typing",
    "BaseModel": "pydantic", "ConfigDict": "pydantic", "Field": "pydantic", "MISSING": "pydantic",
    "RootModel": "pydantic",
}  # fmt: skip


def helper(name: str) -> Code:
    """The name ``HELPERS`` holds."""
    return _HELPER_CODE[name]


def ref(name: str) -> Code:
    """The models.py type ``name``."""
    return Code((Ref(name),))


_HELPER_CODE = {name: Code((Helper(name),)) for name in HELPERS}
ANY = helper("Any")
NONE = code("None")


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
    source: Code
    eager: bool = False  # its statement evaluates the types it names at import time
    alias: Code | None = None  # the value of a ``TypeAlias``


@dataclass
class FieldSpec:
    wire: str
    py: str
    annotation: Code
    required: bool
    description: str | None


def alias_source(name: str, value: Code) -> Declaration:
    """``name: TypeAlias = value``."""
    return Declaration(name, code(f"{name}: ", helper("TypeAlias"), " = ", value), True, value)


def nullable(annotation: Code, admits_null: bool) -> Code:
    if admits_null and not annotation.endswith("| None") and annotation != ANY:
        return code(annotation, " | None")
    return annotation


def literal(values: list[Any]) -> Code:
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
    pieces: list[Code | Part] = []
    if members:
        pieces += [helper("Literal"), "["]
        for index, member in enumerate(members):
            pieces += [", " if index else "", Value(member)]
        pieces.append("]")
    others = ["int | float"] if floats else ["int"] if big else []
    others += ["None"] if None in values else []
    return code(*pieces, " | " if pieces and others else "", " | ".join(others)) or NONE


def _too_big(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63


def union_of(parts: list[Code]) -> Code:
    if ANY in parts:
        return ANY
    unique: list[Code] = []
    for part in parts:
        for piece in part.union_members():
            if piece not in unique:
                unique.append(piece)
    if NONE in unique and len(unique) > 1:
        unique.remove(NONE)
        unique.append(NONE)
    return join(" | ", unique)


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


def model_source(name: str, schema: Mapping[str, Any], fields: list[FieldSpec]) -> Code:
    pieces: list[Code | Part] = [f"class {name}(", helper("BaseModel"), "):\n"]
    if isinstance(schema.get("description"), str) and schema["description"]:
        pieces += ["    ", Value(py_docstring(schema["description"])), "\n\n"]
    # patternProperties admit keys besides the named ones even when
    # additionalProperties is false: the model cannot tell which, so it allows them
    closed = schema.get("additionalProperties") is False and not schema.get("patternProperties")
    config = [f"extra={py_str('forbid' if closed else 'allow')}"]
    if any(f.py != f.wire for f in fields):
        config.append("validate_by_name=True, validate_by_alias=True, serialize_by_alias=True")
    if any(f.py.startswith("model_") for f in fields):  # renamed off pydantic's own
        config.append("protected_namespaces=()")
    pieces += ["    model_config = ", helper("ConfigDict"), f"({', '.join(config)})\n"]
    for f in fields:
        pieces += ["\n", *_field_line(f)]
    return code(*pieces)


def _field_line(f: FieldSpec) -> list[Code | Part]:
    options: list[Code | Part] = []
    if f.py != f.wire:
        options += [", alias=", Value(py_str(f.wire))]
    if f.description:
        options += [", description=", Value(py_str(f.description))]
    # An optional field is absent until the data has it, also when its schema has
    # a `default`: JSON Schema's `default` is an annotation, which no validator
    # applies, so a parsed result holds what was sent (the server, too, sends only
    # the fields a handler set). The default stays in the published schema.
    line: list[Code | Part] = [f"    {f.py}: ", f.annotation]
    if not f.required:
        line += [" | ", helper("MISSING")]
    if options:
        default = "..." if f.required else helper("MISSING")
        return [*line, " = ", helper("Field"), "(", default, *options, ")"]
    if not f.required:
        return [*line, " = ", helper("MISSING")]
    return line


def root_model_source(name: str, schema: Mapping[str, Any], root: Code) -> Code:
    """A model whose value is ``root`` itself (an output object that is a mapping)."""
    head = (f"class {name}(", helper("RootModel"), "[", root, "]):\n    ")
    if isinstance(schema.get("description"), str) and schema["description"]:
        return code(*head, Value(py_docstring(schema["description"])))
    return code(*head, "pass")


def typeddict_source(
    name: str, schema: Mapping[str, Any], fields: list[FieldSpec]
) -> tuple[Code, bool]:
    """The TypedDict's statement, and whether it evaluates its annotations at once
    (the call syntax does, a class does not)."""
    doc = schema.get("description") if isinstance(schema.get("description"), str) else None
    required = helper("Required")
    entries = [
        (f.wire, (required, "[", f.annotation, "]") if f.required else (f.annotation,))
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
        pieces: list[Code | Part] = [f"class {name}(", helper("TypedDict"), ", total=False):"]
        if doc:
            pieces += ["\n    ", Value(py_docstring(doc)), "\n"]
        for wire, kind in entries:
            pieces += [f"\n    {wire}: ", *kind]
        return code(*pieces, "" if entries else "\n    pass"), False
    # Wire names such as "max-results" cannot be class attributes.
    pieces = [Value(py_str(name)), ", {"]
    for index, (wire, kind) in enumerate(entries):
        pieces += [", " if index else "", Value(py_str(wire)), ": ", *kind]
    arguments = code(*pieces, "}, total=False")
    if all(wire.isidentifier() and not keyword.iskeyword(wire) for wire, _ in entries):
        # keys that NFKC-normalize to another name, where ruff's UP013 would rewrite the
        # call into a class whose ``ﬁx`` is ``fix``: the call is the only right syntax.
        # The comment goes on the statement's first line (where ruff reads it), after
        # the bracket; black joins the lines when they fit (``models._for_black``).
        source = code(f"{name} = ", helper("TypedDict"), f"({NOQA_UP013}\n    ", arguments, "\n)")
    else:
        source = code(f"{name} = ", helper("TypedDict"), "(", arguments, ")")
    if doc:
        source = code(source, f"\n{name}.__doc__ = ", Value(py_docstring(doc)))
    return source, True
