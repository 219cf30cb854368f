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
| object with only ``additionalProperties`` | ``dict[str, T]`` | same (an output's root: a ``RootModel`` of it) |
| ``properties`` without ``type`` | the TypedDict ``\\| bool \\| int \\| float \\| str \\| list \\| None`` | the model ``\\| …`` the same |
| ``anyOf`` / ``oneOf`` / ``type: [..]`` | ``A \\| B`` | same; a discriminated union when every branch is an object with a required ``const`` property |
| ``$ref`` to a ``types`` entry | the entry's TypedDict (``NameDict``) or alias | the entry's model or alias |

Names: a ``types`` entry ``Name`` that is an object is the model ``Name`` and the
TypedDict ``NameDict``; any other entry is an alias ``Name`` (``NameDict`` too when its
JSON face differs, as for a union of objects), defined once and referenced wherever it
is used. Inline objects are named after where they sit: ``<Tool><Param>`` for an
argument, ``<Parent><Property>`` inside another object. An optional model field
defaults to pydantic's ``MISSING`` (absent, never ``None``, and never the schema's
``default``: an annotation, published, not filled in).

What types cannot say is checked by the runtime validator on both sides (the server on
arguments and results, the client on results): formats, patterns, bounds, lengths.

``typedefs`` decides what each definition is called and which enums are shared;
``typesource`` writes the Python code (``code.Code``) of what this module decides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpgen_runtime.protocol.structured import needs_wrapper

from .. import ir
from ..keywords import MAX_MODEL_SCHEMA_DEPTH, json_depth
from ..names import class_name
from .code import Code, Value, code
from .escape import py_str
from .typedefs import (
    SHARED_ENUM_MIN_CHARS,
    ScopedDefs,
    def_class_name,
    enum_key,
    ref_name,
    rename_refs,
    repeated_enums,
)
from .typesource import (
    ANY,
    HELPERS,
    NONE,
    Declaration,
    FieldSpec,
    alias_source,
    field_name,
    helper,
    literal,
    model_source,
    nullable,
    ref,
    root_model_source,
    typeddict_source,
    union_of,
)

__all__ = ["MAX_MODEL_SCHEMA_DEPTH", "RETURN_ANNOTATIONS", "TypeMap", "json_depth"]

Face = str  # "json" or "model"


@dataclass
class TypeMap:
    """Python types for one contract; ``declarations`` is the body of models.py."""

    defs: Mapping[str, Any]
    declarations: dict[str, Declaration] = field(default_factory=dict)
    _taken: set[str] = field(default_factory=set)
    _named: dict[tuple[str, Face], str] = field(default_factory=dict)  # (def, face) → name
    _busy: set[tuple[str, Face]] = field(default_factory=set)
    _params: dict[tuple[str, str], Code] = field(default_factory=dict)
    _field_names: set[str] = field(default_factory=set)  # model attributes, never class names
    _avoid: set[str] = field(default_factory=set)  # method and parameter names: no class names
    _def_names: dict[str, str] = field(default_factory=dict)  # definition key → Python name
    # (tool, "input" | "output") → that schema's local $defs names → definition keys
    _scopes: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    _repeated_enums: set[str] = field(default_factory=set)  # enum lists met twice or more
    _enum_aliases: dict[str, str] = field(default_factory=dict)  # enum list → alias name
    _null_aliases: set[str] = field(default_factory=set)  # aliases whose value is None

    @classmethod
    def for_contract(cls, contract: ir.Contract) -> TypeMap:
        scoped = ScopedDefs.of(contract)
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
            wanted_name = def_class_name(wanted) if key == wanted else owner + class_name(wanted)
            typemap._def_names[key] = typemap.fresh(wanted_name)
        typemap._repeated_enums = repeated_enums(contract)
        for name in contract.types:
            typemap.named(name, "model")
        for tool in contract.tools:
            typemap.declare_output(tool)
        for tool in contract.tools:
            typemap.declare_args(tool)
        return typemap

    def parameter(self, tool: ir.Tool, param: ir.Parameter) -> Code:
        """The annotation of one argument (JSON face), the same in Args, handler and client."""
        key = (tool.name, param.name)
        if key not in self._params:
            hint = f"{tool.class_name}{class_name(param.name)}"
            schema = rename_refs(param.schema, self._scopes.get((tool.name, "input"), {}))
            self._params[key] = self.annotation(schema, hint, "json")
        return self._params[key]

    def declare_args(self, tool: ir.Tool) -> None:
        name = f"{tool.class_name}Args"
        fields = [
            FieldSpec(p.name, p.name, self.parameter(tool, p), p.required, None)
            for p in tool.parameters
        ]
        doc = f"Arguments of tool {tool.name!r}, keyed by wire name."
        source, eager = typeddict_source(name, {"description": doc}, fields)
        self.declarations[name] = Declaration(name, source, eager)

    def declare_output(self, tool: ir.Tool) -> None:
        if tool.output_schema is None:
            return
        name = f"{tool.class_name}Output"
        if needs_wrapper(tool.output_schema):  # a list, a scalar, a union: an alias of it
            own = self._own_output(tool, tool.output_schema)
            self.declarations[name] = alias_source(name, self.annotation(own, name, "model"))
            return
        target_schema = self.defs.get(tool.output_type_ref or "")
        if tool.output_type_ref is not None and not (
            isinstance(target_schema, dict) and _is_mapping(target_schema)
        ):  # a mapping's alias is no model: it gets the RootModel below
            target = self.named(tool.output_type_ref, "model")
            self.declarations[name] = Declaration(name, code(f"{name} = ", target), eager=True)
            return
        schema = self._own_output(tool, tool.output_schema)
        if not _is_object(schema) and _is_mapping(schema):
            # only keys by pattern or additionalProperties: a mapping, as when nested
            values = self.map_values(schema, name, "model")
            root = code("dict[str, ", values, "]")
            # a base class: evaluated at once
            self.declarations[name] = Declaration(name, root_model_source(name, schema, root), True)
            return
        if not _is_object(schema):
            merged = self.merge_all_of(schema) if isinstance(schema.get("allOf"), list) else None
            schema = (
                merged
                if merged is not None and _is_object(merged)
                else {
                    **{
                        k: v
                        for k, v in schema.items()
                        if k in ("description", "additionalProperties")
                    },
                    "properties": {},
                }
            )
        self.object_type(schema, name, "model")

    def _own_output(self, tool: ir.Tool, output: Mapping[str, Any]) -> Any:
        """``output`` (the tool's output schema) without its ``$defs``, its ``$ref``s
        renamed to the contract's definitions."""
        own = {k: v for k, v in output.items() if k != "$defs"}
        return rename_refs(own, self._scopes.get((tool.name, "output"), {}))

    # -- names ---------------------------------------------------------------

    def fresh(self, wanted: str) -> str:
        name, counter = wanted, 2
        while name in self._taken or name in self._field_names or name in self._avoid:
            name, counter = f"{wanted}{counter}", counter + 1
        self._taken.add(name)
        return name

    def named(self, key: str, face: Face) -> Code:
        """The type definition ``key`` is on ``face`` (declared on first use): a models.py
        type, or ``Any`` where Python cannot spell it."""
        if (key, face) in self._named:
            return ref(self._named[(key, face)])
        schema = self.defs.get(key)
        if schema is None:
            return ANY
        python = self._def_names.get(key, key)
        if _is_object(schema):
            name = python if face == "model" else self.fresh(f"{python}Dict")
            self._named[(key, face)] = name
            return ref(self.object_type(schema, name, face))
        if (key, face) in self._busy:  # an alias that contains itself: Python cannot spell it
            return ANY
        self._busy.add((key, face))
        try:
            value = self.annotation(schema, class_name(key), face)
        finally:
            self._busy.discard((key, face))
        if face == "json":
            shared = self.named(key, "model")
            if self._alias_value(key, "model") == value:  # the same on both faces: one alias
                self._named[(key, face)] = self._named[(key, "model")]
                return shared
            name = self.fresh(f"{python}Dict")
        else:
            name = python
        self._named[(key, face)] = name
        if value == NONE or self._null_alias(value):
            self._null_aliases.add(name)
        self.declarations[name] = alias_source(name, value)
        return ref(name)

    def _alias_value(self, key: str, face: Face) -> Code | None:
        declared = self.declarations.get(self._named.get((key, face), ""))
        return declared.alias if declared is not None else None

    def _null_alias(self, annotation: Code) -> bool:
        """Is ``annotation`` an alias whose value is None?"""
        return annotation.ref_name() in self._null_aliases

    # -- the mapping -----------------------------------------------------------

    def annotation(self, schema: Any, hint: str, face: Face) -> Code:
        """The annotation for values valid under ``schema``; inline objects get names
        starting with ``hint``."""
        if not isinstance(schema, dict) or not schema:
            return ANY
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = self.named(ref_name(ref), face)
            if self._null_alias(target):
                # an alias of None is None at run time: `N | None` would be `None | None`,
                # which Python refuses when pydantic evaluates it
                target = NONE
            if _untyped_object(self.defs.get(ref_name(ref))):
                return union_of([target, NOT_OBJECT])
            return nullable(target, _admits_null_besides_ref(schema))
        if "const" in schema:
            return literal([schema["const"]])
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
            return union_of(parts)
        if isinstance(kinds, str):
            return self.one(kinds, schema, hint, face)
        if "properties" in schema:
            # `properties` constrains objects only: without `type`, any other value passes
            text = self.one("object", schema, hint, face)
            return union_of([text, NOT_OBJECT]) if _untyped_object(schema) else text
        return ANY

    def enum(self, values: list[Any], hint: str) -> Code:
        """``Literal[…]`` of ``values``; a long one that the contract repeats is an alias,
        declared once (named after its first use) and referenced (see SHARED_ENUM_MIN_CHARS)."""
        value = literal(values)
        key = enum_key(values)
        if (
            len(value.text()) < SHARED_ENUM_MIN_CHARS
            or key is None
            or key not in self._repeated_enums
        ):
            return value
        if key not in self._enum_aliases:
            name = self.fresh(hint)
            self._enum_aliases[key] = name
            self.declarations[name] = alias_source(name, value)
        return ref(self._enum_aliases[key])

    def one(self, kind: str, schema: Mapping[str, Any], hint: str, face: Face) -> Code:
        if kind == "object":
            if isinstance(schema.get("properties"), dict) and schema["properties"]:
                return ref(self.object_type(schema, self.fresh(_face_name(hint, face)), face))
            return code("dict[str, ", self.map_values(schema, hint, face), "]")
        if kind == "array":
            items = schema.get("items")
            if isinstance(items, dict) and "prefixItems" not in schema:
                return code("list[", self.annotation(items, f"{hint}Item", face), "]")
            return code("list[", ANY, "]")
        return _SCALARS.get(kind, ANY)

    def map_values(self, schema: Mapping[str, Any], hint: str, face: Face) -> Code:
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

    def union(self, branches: list[Any], hint: str, face: Face) -> Code:
        tag = _discriminator(branches, self.defs)
        parts = []
        for index, branch in enumerate(branches, 1):
            suffix = _pascal(str(tag[1][index - 1])) if tag else f"Option{index}"
            parts.append(self.annotation(branch, f"{hint}{suffix}", face))
        union = union_of(parts)
        if tag and face == "model" and ANY not in parts:
            nullable = union.endswith(" | None")
            core = union.removesuffix(" | None")
            if core.says(" | "):
                field_call = code(helper("Field"), "(discriminator=", Value(py_str(tag[0])), ")")
                union = code(helper("Annotated"), "[", core, ", ", field_call, "]")
                union = code(union, " | None") if nullable else union
        return union

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
            merged["required"] += [
                r for r in member.get("required") or [] if r not in merged["required"]
            ]
            if member.get("additionalProperties") is False:
                merged["additionalProperties"] = False
        return merged

    def resolve(self, schema: Any) -> Any:
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) == 1:
            return self.defs.get(ref_name(ref), schema)
        return schema

    # -- objects -----------------------------------------------------------------

    def object_type(
        self, schema: Mapping[str, Any], name: str, face: Face, stem: str | None = None
    ) -> str:
        """Declare ``name`` as the TypedDict or model of an object schema; objects nested
        in it are named ``<stem><Property>``."""
        self._taken.add(name)
        # placeholder: keeps declaration order parent-first
        self.declarations[name] = Declaration(name, code())
        if stem is None:
            stem = name.removesuffix("Dict") if face == "json" else name
        fields = self.fields(schema, stem, face)
        if face == "model":
            self.declarations[name] = Declaration(name, model_source(name, schema, fields))
        else:
            source, eager = typeddict_source(name, schema, fields)
            self.declarations[name] = Declaration(name, source, eager)
        return name

    def fields(self, schema: Mapping[str, Any], owner: str, face: Face) -> list[FieldSpec]:
        properties: Mapping[str, Any] = (
            schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        )
        required = (
            set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
        )
        taken: set[str] = set()
        result = []
        for wire, sub in properties.items():
            py = field_name(wire, taken, self._taken) if face == "model" else wire
            self._field_names.add(py)
            sub_schema = sub if isinstance(sub, dict) else {}
            result.append(
                FieldSpec(
                    wire=wire,
                    py=py,
                    annotation=self.annotation(sub_schema, f"{owner}{class_name(wire)}", face),
                    required=wire in required,
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
        lazy = [d for d in self.declarations.values() if not d.eager]
        eager = [d for d in self.declarations.values() if d.eager]
        done = {d.name for d in lazy}
        ordered = list(lazy)
        pending = list(eager)
        while pending:
            ready = [
                d
                for d in pending
                if all(n in done or n not in self.declarations for n in d.source.refs)
            ]
            if not ready:  # a cycle through aliases: keep the given order (cannot happen for
                ready = pending[:1]  # aliases of self, which ``named`` turns into Any)
            for declaration in ready:
                ordered.append(declaration)
                done.add(declaration.name)
                pending.remove(declaration)
        return ordered


# --------------------------------------------------------------------------- helpers

# A positional or named handler's value by its ``returns:`` kind (the JSON face:
# ``returns`` names a kind, not a schema, so arrays and objects hold Any).
RETURN_ANNOTATIONS = {
    "string": code("str"),
    "integer": code("int"),
    "number": code("int | float"),
    "boolean": code("bool"),
    "object": code("dict[str, ", ANY, "]"),
    "array": code("list[", ANY, "]"),
    "content": code("list[dict[str, ", ANY, "]]"),
    "result": code("dict[str, ", ANY, "]"),  # a CallToolResult: content, structuredContent, _meta
}

_SCALARS = {
    "string": code("str"),
    "integer": code("int"),
    "number": code("int | float"),
    "boolean": code("bool"),
    "null": NONE,
    "object": code("dict[str, ", ANY, "]"),
    "array": code("list[", ANY, "]"),
}


def _is_object(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and schema.get("type") in ("object", None)
        and isinstance(schema.get("properties"), dict)
        and bool(schema["properties"])
        and not any(k in schema for k in ("anyOf", "oneOf", "enum", "const", "$ref"))
    )


# What a schema with `properties` and no `type` admits besides objects.
NOT_OBJECT = code("bool | int | float | str | list[", ANY, "] | None")


def _untyped_object(schema: Any) -> bool:
    """An object schema that does not say ``type``: it admits every non-object too."""
    return _is_object(schema) and "type" not in schema and not schema.get("allOf")


def _is_mapping(schema: Mapping[str, Any]) -> bool:
    """An object schema without named properties whose values have a schema: keys by
    ``patternProperties``, or ``additionalProperties`` other than true (not false alone,
    which admits only ``{}``)."""
    if schema.get("properties") or any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref")):
        return False
    extra = schema.get("additionalProperties", True)
    return bool(schema.get("patternProperties")) or isinstance(extra, dict) and extra != {}


def _face_name(hint: str, face: Face) -> str:
    """Every TypedDict made from an object schema ends in ``Dict``; models do not."""
    return hint if face == "model" else f"{hint}Dict"


def _admits_null_besides_ref(schema: Mapping[str, Any]) -> bool:
    kinds = schema.get("type")
    return kinds == "null" or (isinstance(kinds, list) and "null" in kinds)


def _discriminator(branches: list[Any], defs: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """A property that every non-null branch (an object) requires with a distinct
    constant: its name and each branch's value ("Null" for the null branch)."""
    objects: list[Any] = []
    for branch in branches:
        ref = branch.get("$ref") if isinstance(branch, dict) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            branch = defs.get(ref_name(ref))
        if isinstance(branch, dict) and branch.get("type") == "null":
            objects.append(None)
        elif _is_object(branch) and not _untyped_object(branch):
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
