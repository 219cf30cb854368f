"""The one type mapping: JSON Schema → Python types, for models, TypedDicts and signatures.

A schema has two Python faces. Arguments and ``…Args`` TypedDicts describe JSON
values as handlers receive them (an object is a ``TypedDict``); output models are
pydantic models (an object is a ``BaseModel``). Both faces come from this module, so
one construct maps the same way everywhere:

| JSON Schema | JSON face | model face |
|---|---|---|
| ``string`` (any ``format``) | ``str`` | ``str`` |
| ``integer`` | ``int`` | ``int`` |
| ``number`` | ``int \\| float`` (3 stays 3, big integers stay exact) | same |
| ``boolean`` / ``null`` | ``bool`` / ``None`` | same |
| ``enum`` / ``const`` of strings, integers, booleans | ``Literal[…]`` | same |
| ``array`` with ``items`` | ``list[T]`` | same |
| object with ``properties`` | a ``TypedDict`` | a model (``extra="allow"`` unless ``additionalProperties: false``) |
| object with only ``additionalProperties`` | ``dict[str, T]`` | same |
| ``anyOf`` / ``oneOf`` / ``type: [..]`` | ``A \\| B`` | same; a discriminated union when every branch is an object with a required ``const`` property |
| ``$ref`` to a ``types`` entry | the entry's TypedDict (``NameDict``) or alias | the entry's model or alias |

Names: a ``types`` entry ``Name`` that is an object is the model ``Name`` and the
TypedDict ``NameDict``; any other entry is an alias ``Name`` (``NameDict`` too when its
JSON face differs, as for a union of objects), defined once and referenced wherever it
is used. Inline objects are named after where they sit: ``<Tool><Param>`` for an
argument, ``<Parent><Property>`` inside another object. An optional model field that
is not nullable defaults to pydantic's ``MISSING`` (absent, never ``None``).

What types cannot say is checked by the runtime validator on both sides (the server on
arguments and results, the client on results): formats, patterns, bounds, lengths.
"""

from __future__ import annotations

import json
import keyword
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from .. import ir
from ..names import MODELS_PY_NAMES, class_name, py_identifier
from ..spec.keywords import (
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
    SCHEMA_VALUE_KEYWORDS,
    walk_schemas,
)
from .escape import py_docstring, py_literal, py_str

__all__ = [
    "ANY", "HELPERS", "MAX_MODEL_SCHEMA_DEPTH", "RETURN_ANNOTATIONS", "Declaration", "TypeMap",
    "json_depth", "resolve_helpers",
]  # fmt: skip

MAX_MODEL_SCHEMA_DEPTH = 98
"""Deepest nesting (JSON objects and arrays; the schema itself is level 1) of a type or
an output schema that gets Python types. The mapping recurses once per level, and black
formats the nested annotations it writes; the loader reports a deeper schema with its
position rather than a build failing on Python's recursion limit."""


def json_depth(value: Any) -> int:
    """Levels of nested objects and arrays in ``value`` (a scalar is 0, ``{}`` is 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


# Names models.py imports. Generated text carries them as markers, replaced at the end
# by the name itself, or by a private alias when a spec type has taken the name (a
# `types` entry may well be called `Field` or `Required`).
HELPERS = {
    "Annotated": "typing", "Any": "typing", "Literal": "typing", "Required": "typing",
    "TypeAlias": "typing", "TypedDict": "typing",
    "BaseModel": "pydantic", "ConfigDict": "pydantic", "Field": "pydantic", "MISSING": "pydantic",
}  # fmt: skip
_MARK = "\x00"


def _h(name: str) -> str:
    return f"{_MARK}{name}{_MARK}"


ANY = _h("Any")
_MARKER = re.compile(f"{_MARK}([A-Za-z]+){_MARK}")


def resolve_helpers(text: str, taken: Iterable[str]) -> tuple[str, dict[str, str]]:
    """``text`` with helper markers replaced; the helpers used, name → local alias."""
    used: dict[str, str] = {}
    taken = frozenset(taken)

    def local(match: re.Match[str]) -> str:
        name = match.group(1)
        used[name] = f"_{name}" if name in taken else name
        return used[name]

    return _MARKER.sub(local, text), used

Face = str  # "json" or "model"

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
class _Field:
    wire: str
    py: str
    annotation: str
    required: bool
    default: Any
    has_default: bool
    description: str | None


@dataclass
class TypeMap:
    """Python types for one contract; ``declarations`` is the body of models.py."""

    defs: Mapping[str, Any]
    declarations: dict[str, Declaration] = field(default_factory=dict)
    _taken: set[str] = field(default_factory=set)
    _named: dict[tuple[str, Face], str] = field(default_factory=dict)  # (def, face) → name
    _busy: set[tuple[str, Face]] = field(default_factory=set)
    _params: dict[tuple[str, str], str] = field(default_factory=dict)
    _field_names: set[str] = field(default_factory=set)  # model attributes, never class names
    _avoid: set[str] = field(default_factory=set)  # method and parameter names: no class names
    _def_names: dict[str, str] = field(default_factory=dict)  # definition key → Python name
    # (tool, "input" | "output") → that schema's local $defs names → definition keys
    _scopes: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    _repeated_enums: set[str] = field(default_factory=set)  # enum lists met twice or more
    _enum_aliases: dict[str, str] = field(default_factory=dict)  # enum list → alias name

    @classmethod
    def for_contract(cls, contract: ir.Contract) -> TypeMap:
        scoped = _ScopedDefs.of(contract)
        typemap = cls(scoped.defs)
        typemap._scopes = scoped.renames
        reserved = {f"{t.class_name}{s}" for t in contract.tools for s in ("Args", "Output")}
        # Python names of methods and parameters: a model of that name would be
        # hidden by them in the generated signatures
        python = {t.py_name for t in contract.tools}
        python |= {p.py_name for t in contract.tools for p in t.parameters}
        typemap._taken |= reserved | set(contract.types) | set(HELPERS)
        typemap._avoid |= python
        # every definition's Python name, fixed before anything is mapped (stable names)
        typemap._def_names = {name: name for name in contract.types}
        for key, (wanted, owner) in scoped.local.items():
            wanted_name = _def_class_name(wanted) if key == wanted else owner + class_name(wanted)
            typemap._def_names[key] = typemap.fresh(wanted_name)
        typemap._repeated_enums = _repeated_enums(contract)
        for name in contract.types:
            typemap.named(name, "model")
        for tool in contract.tools:
            typemap.declare_output(tool)
        for tool in contract.tools:
            typemap.declare_args(tool)
        return typemap

    def names_in(self, text: str) -> set[str]:
        """The names of models.py that ``text`` (an annotation) refers to."""
        return {name for name in _names_in(text) if self.declarations.get(name)}

    def parameter(self, tool: ir.Tool, param: ir.Parameter) -> str:
        """The annotation of one argument (JSON face), the same in Args, handler and client."""
        key = (tool.name, param.name)
        if key not in self._params:
            hint = f"{tool.class_name}{class_name(param.name)}"
            schema = _rename_refs(param.schema, self._scopes.get((tool.name, "input"), {}))
            self._params[key] = self.annotation(schema, hint, "json")
        return self._params[key]

    def declare_args(self, tool: ir.Tool) -> None:
        name = f"{tool.class_name}Args"
        fields = [
            _Field(p.name, p.name, self.parameter(tool, p), p.required, None, False, None)
            for p in tool.parameters
        ]
        doc = f"Arguments of tool {tool.name!r}, keyed by wire name."
        source, eager = _typeddict_source(name, {"description": doc}, fields)
        self.declare(name, source, eager)

    def declare_output(self, tool: ir.Tool) -> None:
        if tool.output_schema is None:
            return
        name = f"{tool.class_name}Output"
        if tool.output_type_ref is not None:
            target = self.named(tool.output_type_ref, "model")
            self.declare(name, f"{name} = {target}", eager=frozenset({target}))
            return
        schema = _rename_refs({k: v for k, v in tool.output_schema.items() if k != "$defs"},
                              self._scopes.get((tool.name, "output"), {}))
        if not _is_object(schema):
            merged = self.merge_all_of(schema) if isinstance(schema.get("allOf"), list) else None
            schema = merged if merged is not None and _is_object(merged) else {
                **{k: v for k, v in schema.items() if k in ("description", "additionalProperties")},
                "properties": {},
            }
        self.object_type(schema, name, "model")

    # -- names ---------------------------------------------------------------

    def fresh(self, wanted: str) -> str:
        name, counter = wanted, 2
        while name in self._taken or name in self._field_names or name in self._avoid:
            name, counter = f"{wanted}{counter}", counter + 1
        self._taken.add(name)
        return name

    def named(self, ref: str, face: Face) -> str:
        """The Python name of definition ``ref`` on ``face``, declared on first use."""
        key = (ref, face)
        if key in self._named:
            return self._named[key]
        schema = self.defs.get(ref)
        if schema is None:
            return ANY
        python = self._def_names.get(ref, ref)
        if _is_object(schema):
            name = python if face == "model" else self.fresh(f"{python}Dict")
            self._named[key] = name
            self.object_type(schema, name, face)
            return name
        if key in self._busy:  # an alias that contains itself: Python cannot spell it
            return ANY
        self._busy.add(key)
        try:
            text = self.annotation(schema, class_name(ref), face)
        finally:
            self._busy.discard(key)
        if face == "json":
            shared = self.named(ref, "model")
            if self._alias_text(ref, "model") == text:  # the same on both faces: one alias
                self._named[key] = shared
                return shared
            name = self.fresh(f"{python}Dict")
        else:
            name = python
        self._named[key] = name
        self.declare(name, f"{name}: {_h('TypeAlias')} = {text}", eager=_names_in(text))
        return name

    def _alias_text(self, ref: str, face: Face) -> str | None:
        name = self._named.get((ref, face))
        declared = self.declarations.get(name or "")
        if declared is None:
            return None
        return declared.source.split(" = ", 1)[1]

    def declare(self, name: str, source: str, eager: frozenset[str] = frozenset()) -> None:
        self.declarations[name] = Declaration(name, source, eager)

    # -- the mapping -----------------------------------------------------------

    def annotation(self, schema: Any, hint: str, face: Face) -> str:
        """The annotation for values valid under ``schema``; inline objects get names
        starting with ``hint``."""
        if not isinstance(schema, dict) or not schema:
            return ANY
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = self.named(_ref_name(ref), face)
            return _nullable(target, _admits_null_besides_ref(schema))
        if "const" in schema:
            return _literal([schema["const"]])
        if isinstance(schema.get("enum"), list):
            return self.enum(schema["enum"], hint)
        for key in ("oneOf", "anyOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.union(schema[key], hint, face)
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            merged = self.merge_all_of(schema)
            if merged is not None:
                return self.annotation(merged, hint, face)
        kinds = schema.get("type")
        if isinstance(kinds, list):
            parts = [self.one(str(kind), schema, hint, face) for kind in kinds]
            return _union(parts)
        if isinstance(kinds, str):
            return self.one(kinds, schema, hint, face)
        if "properties" in schema:
            return self.one("object", schema, hint, face)
        return ANY

    def enum(self, values: list[Any], hint: str) -> str:
        """``Literal[…]`` of ``values``; a long one that the contract repeats is an alias,
        declared once (named after its first use) and referenced (see SHARED_ENUM_MIN_CHARS)."""
        text = _literal(values)
        key = _enum_key(values)
        if len(text) < SHARED_ENUM_MIN_CHARS or key is None or key not in self._repeated_enums:
            return text
        if key not in self._enum_aliases:
            name = self.fresh(hint)
            self._enum_aliases[key] = name
            self.declare(name, f"{name}: {_h('TypeAlias')} = {text}", eager=_names_in(text))
        return self._enum_aliases[key]

    def one(self, kind: str, schema: Mapping[str, Any], hint: str, face: Face) -> str:
        if kind == "object":
            if isinstance(schema.get("properties"), dict) and schema["properties"]:
                return self.object_type(schema, self.fresh(_face_name(hint, face)), face)
            return f"dict[str, {self.map_values(schema, hint, face)}]"
        if kind == "array":
            items = schema.get("items")
            if isinstance(items, dict) and "prefixItems" not in schema:
                return f"list[{self.annotation(items, f'{hint}Item', face)}]"
            return f"list[{ANY}]"
        return _SCALARS.get(kind, ANY)

    def map_values(self, schema: Mapping[str, Any], hint: str, face: Face) -> str:
        """The value type of an object without named properties: what
        ``additionalProperties`` or any of ``patternProperties`` admits (which key
        may hold which is the validator's to check; a type cannot say it)."""
        extra = schema.get("additionalProperties", True)
        if extra is True or extra == {}:
            return ANY
        patterns = schema.get("patternProperties")
        branches = list(patterns.values()) if isinstance(patterns, dict) else []
        if isinstance(extra, dict):
            branches.insert(0, extra)
        if not branches:
            return ANY  # additionalProperties false and no patterns: only {}
        return self.union(branches, f"{hint}Value", face)

    def union(self, branches: list[Any], hint: str, face: Face) -> str:
        tag = _discriminator(branches, self.defs)
        parts = []
        for index, branch in enumerate(branches, 1):
            suffix = _pascal(str(tag[1][index - 1])) if tag else f"Option{index}"
            parts.append(self.annotation(branch, f"{hint}{suffix}", face))
        text = _union(parts)
        if tag and face == "model" and ANY not in parts:
            nullable = text.endswith(" | None")
            core = text.removesuffix(" | None")
            if " | " in core:
                text = f"{_h('Annotated')}[{core}, {_h('Field')}(discriminator={py_str(tag[0])})]"
                text = text + " | None" if nullable else text
        return text

    def merge_all_of(self, schema: Mapping[str, Any]) -> dict[str, Any] | None:
        """``allOf`` of objects (or one member) as one schema; None when it is not that simple."""
        members = [self.resolve(m) for m in schema["allOf"]]
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        if len(members) == 1 and not rest.get("properties"):
            return {**rest, **members[0]} if isinstance(members[0], dict) else None
        if not all(isinstance(m, dict) and _is_object(m) for m in members):
            return None
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for member in [*members, rest]:
            merged["properties"].update(member.get("properties") or {})
            merged["required"] += [r for r in member.get("required") or [] if r not in merged["required"]]
            if member.get("additionalProperties") is False:
                merged["additionalProperties"] = False
        return merged

    def resolve(self, schema: Any) -> Any:
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) == 1:
            return self.defs.get(_ref_name(ref), schema)
        return schema

    # -- objects -----------------------------------------------------------------

    def object_type(
        self, schema: Mapping[str, Any], name: str, face: Face, stem: str | None = None
    ) -> str:
        """Declare ``name`` as the TypedDict or model of an object schema; objects nested
        in it are named ``<stem><Property>``."""
        self._taken.add(name)
        self.declare(name, "")  # placeholder: keeps declaration order parent-first
        if stem is None:
            stem = name.removesuffix("Dict") if face == "json" else name
        fields = self.fields(schema, stem, face)
        if face == "model":
            self.declare(name, _model_source(name, schema, fields))
        else:
            source, eager = _typeddict_source(name, schema, fields)
            self.declare(name, source, eager)
        return name

    def fields(self, schema: Mapping[str, Any], owner: str, face: Face) -> list[_Field]:
        properties: Mapping[str, Any] = (
            schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        )
        required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
        taken: set[str] = set()
        result = []
        for wire, sub in properties.items():
            py = _field_name(wire, taken, self._taken) if face == "model" else wire
            self._field_names.add(py)
            sub_schema = sub if isinstance(sub, dict) else {}
            result.append(
                _Field(
                    wire=wire,
                    py=py,
                    annotation=self.annotation(sub_schema, f"{owner}{class_name(wire)}", face),
                    required=wire in required,
                    default=sub_schema.get("default"),
                    has_default="default" in sub_schema,
                    description=sub_schema.get("description")
                    if isinstance(sub_schema.get("description"), str)
                    else None,
                )
            )
        return result

    # -- output ------------------------------------------------------------------

    def ordered(self) -> list[Declaration]:
        """Declarations in an order Python can execute: classes first (their annotations
        are lazy), then aliases and functional TypedDicts after what they evaluate."""
        lazy = [d for d in self.declarations.values() if not d.eager and not _is_alias(d)]
        eager = [d for d in self.declarations.values() if d.eager or _is_alias(d)]
        done = {d.name for d in lazy}
        ordered = list(lazy)
        pending = list(eager)
        while pending:
            ready = [d for d in pending if all(n in done or n not in self.declarations for n in d.eager)]
            if not ready:  # a cycle through aliases: keep the given order (cannot happen for
                ready = pending[:1]  # aliases of self, which ``named`` turns into Any)
            for declaration in ready:
                ordered.append(declaration)
                done.add(declaration.name)
                pending.remove(declaration)
        return ordered


# --------------------------------------------------------------------------- definitions


@dataclass
class _ScopedDefs:
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
    def of(cls, contract: ir.Contract) -> _ScopedDefs:
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
                        scoped.defs[rename[name]] = _rename_refs(value, rename)
                scoped.renames[(tool.name, kind)] = rename
        return scoped


def _local_refs(schema: Any) -> set[str]:
    """The names ``#/$defs/<name>`` references in ``schema`` point to."""
    names = set()
    for node, _ in walk_schemas(schema, ()):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            names.add(_ref_name(ref))
    return names


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
        stack.extend(_local_refs(local[current]))
    return json.dumps(seen, sort_keys=True, default=repr)


def _ref_name(ref: str) -> str:
    """The definition a ``#/$defs/…`` reference names (a deeper pointer names none)."""
    return unquote(ref.removeprefix("#/$defs/")).replace("~1", "/").replace("~0", "~")


def _rename_refs(schema: Any, rename: Mapping[str, str]) -> Any:
    """``schema`` with ``#/$defs/<name>`` references renamed (schema positions only:
    a ``const`` or ``default`` that happens to hold a ``$ref`` key is data)."""
    if not rename or not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/") \
                and _ref_name(value) in rename:
            target = rename[_ref_name(value)]
            value = "#/$defs/" + quote(target.replace("~", "~0").replace("/", "~1"), safe="")
        elif key in SCHEMA_VALUE_KEYWORDS:
            value = _rename_refs(value, rename)
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            value = [_rename_refs(item, rename) for item in value]
        elif key in SCHEMA_MAP_KEYWORDS and key != "$defs" and isinstance(value, dict):
            value = {name: _rename_refs(item, rename) for name, item in value.items()}
        result[key] = value
    return result


def _def_class_name(name: str) -> str:
    """The Python name wanted for a tool's own definition ``name``: the name itself
    when it can be one (an identifier Python reads as written, not a keyword, not a
    name models.py uses, not class-private), else its PascalCase form. (A second,
    different definition of the same name is prefixed with its tool's class name.)"""
    if (
        name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("__")
        and unicodedata.normalize("NFKC", name) == name and name not in MODELS_PY_NAMES
    ):
        return name
    return class_name(name)


# --------------------------------------------------------------------------- helpers

# A positional or named handler's value by its ``returns:`` kind (the JSON face:
# ``returns`` names a kind, not a schema, so arrays and objects hold Any).
RETURN_ANNOTATIONS = {
    "string": "str",
    "integer": "int",
    "number": "int | float",
    "boolean": "bool",
    "object": "dict[str, Any]",
    "array": "list[Any]",
    "content": "list[dict[str, Any]]",
    "result": "dict[str, Any]",  # a CallToolResult: content, structuredContent, _meta
}

_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "int | float",
    "boolean": "bool",
    "null": "None",
    "object": f"dict[str, {ANY}]",
    "array": f"list[{ANY}]",
}


def _is_object(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and schema.get("type") in ("object", None)
        and isinstance(schema.get("properties"), dict)
        and bool(schema["properties"])
        and not any(k in schema for k in ("anyOf", "oneOf", "enum", "const", "$ref"))
    )


def _face_name(hint: str, face: Face) -> str:
    """Every TypedDict made from an object schema ends in ``Dict``; models do not."""
    return hint if face == "model" else f"{hint}Dict"


def _is_alias(declaration: Declaration) -> bool:
    return f": {_h('TypeAlias')} = " in declaration.source.split("\n", 1)[0]


def _admits_null_besides_ref(schema: Mapping[str, Any]) -> bool:
    kinds = schema.get("type")
    return kinds == "null" or (isinstance(kinds, list) and "null" in kinds)


def _nullable(text: str, nullable: bool) -> str:
    return text + " | None" if nullable and not text.endswith("| None") and text != ANY else text


SHARED_ENUM_MIN_CHARS = 100
"""An inline ``enum`` whose ``Literal[…]`` is this long or longer (100 characters: more
than a line) and that the contract holds more than once becomes one alias in models.py,
referenced by every use, instead of a copy per argument, field and signature."""


def _enum_key(values: list[Any]) -> str | None:
    try:
        return json.dumps(values, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def _repeated_enums(contract: ir.Contract) -> set[str]:
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
            key = _enum_key(values) if isinstance(values, list) else None
            if key is not None:
                (repeated if key in seen else seen).add(key)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return repeated


def _literal(values: list[Any]) -> str:
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
        if value is not None and not isinstance(value, float) and value not in big \
                and py_literal(value) not in members:
            members.append(py_literal(value))
    parts = [f"{_h('Literal')}[{', '.join(members)}]"] if members else []
    parts += ["int | float"] if floats else ["int"] if big else []
    parts += ["None"] if None in values else []
    return " | ".join(parts) if parts else "None"


def _too_big(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63


def _union(parts: list[str]) -> str:
    if ANY in parts:
        return ANY
    unique: list[str] = []
    for part in parts:
        for piece in _split_union(part):
            if piece not in unique:
                unique.append(piece)
    if "None" in unique and len(unique) > 1:
        unique.remove("None")
        unique.append("None")
    return " | ".join(unique)


def _split_union(text: str) -> list[str]:
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


def _discriminator(branches: list[Any], defs: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """A property that every non-null branch (an object) requires with a distinct
    constant: its name and each branch's value ("Null" for the null branch)."""
    objects: list[Any] = []
    for branch in branches:
        ref = branch.get("$ref") if isinstance(branch, dict) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            branch = defs.get(_ref_name(ref))
        if isinstance(branch, dict) and branch.get("type") == "null":
            objects.append(None)
        elif _is_object(branch):
            objects.append(branch)
        else:
            return None
    present = [o for o in objects if o is not None]
    if len(present) < 2:
        return None
    for name in present[0]["properties"]:
        values = [_constant(o["properties"].get(name)) for o in present]
        required = all(name in (o.get("required") or []) for o in present)
        if required and None not in values and len({repr(v) for v in values}) == len(values):
            found = iter(values)
            return name, ["Null" if o is None else next(found) for o in objects]
    return None


def _constant(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("const"), (str, int)) and not isinstance(schema["const"], bool):
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], (str, int)):
        return enum[0]
    return None


def _pascal(text: str) -> str:
    return class_name(text) if re.search(r"[0-9A-Za-z]", text) else "Option"


# Identifiers, non-ASCII ones too (a definition may be called ``Ünï``).
_NAME = re.compile(r"\b([^\W\d]\w*)\b")


def _names_in(text: str) -> frozenset[str]:
    return frozenset(_NAME.findall(text))


def _field_name(wire: str, taken: set[str], hidden: set[str]) -> str:
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


def _model_source(name: str, schema: Mapping[str, Any], fields: list[_Field]) -> str:
    lines = [f"class {name}({_h('BaseModel')}):"]
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
    lines.append(f"    model_config = {_h('ConfigDict')}({', '.join(config)})")
    lines.append("")
    for f in fields:
        options = []
        if f.py != f.wire:
            options.append(f"alias={py_str(f.wire)}")
        if f.description:
            options.append(f"description={py_str(f.description)}")
        if f.required:
            kind, default = f.annotation, "..." if options else None
        elif f.has_default and (f.default is not None or "None" in _split_union(f.annotation)):
            kind, default = f.annotation, py_literal(f.default)
        else:
            kind, default = f"{f.annotation} | {_h('MISSING')}", _h("MISSING")
        if options:
            value = f"{_h('Field')}({', '.join(([default] if default else []) + options)})"
            lines.append(f"    {f.py}: {kind} = {value}")
        elif default is not None:
            lines.append(f"    {f.py}: {kind} = {default}")
        else:
            lines.append(f"    {f.py}: {kind}")
    return "\n".join(lines)


def _typeddict_source(
    name: str, schema: Mapping[str, Any], fields: list[_Field]
) -> tuple[str, frozenset[str]]:
    doc = schema.get("description") if isinstance(schema.get("description"), str) else None
    entries = [(f.wire, f"{_h('Required')}[{f.annotation}]" if f.required else f.annotation) for f in fields]
    # Python reads class-body names NFKC-normalized (``ﬁx`` is ``fix`` there): such
    # keys, and any that are no identifiers ("max-results"), need the call syntax.
    if all(
        wire.isidentifier() and not keyword.iskeyword(wire)
        and unicodedata.normalize("NFKC", wire) == wire
        for wire, _ in entries
    ):
        lines = [f"class {name}({_h('TypedDict')}, total=False):"]
        if doc:
            lines += [f"    {py_docstring(doc)}", ""]
        lines += [f"    {wire}: {kind}" for wire, kind in entries] or ["    pass"]
        return "\n".join(lines), frozenset()
    # Wire names such as "max-results" cannot be class attributes.
    body = ", ".join(f"{py_str(wire)}: {kind}" for wire, kind in entries)
    source = f"{name} = {_h('TypedDict')}({py_str(name)}, {{{body}}}, total=False)"
    if doc:
        source += f"\n{name}.__doc__ = {py_docstring(doc)}"
    return source, frozenset().union(*(_names_in(kind) for _, kind in entries)) | {"Required"}
