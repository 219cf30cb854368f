"""JSON Schema as HTML: a table of fields (name, type, required or default, every
constraint, description), nested tables for inline objects, a list of alternatives for
``anyOf``/``oneOf``, and a link for every ``$ref``.

A reference is never expanded: ``#/$defs/X`` links to the shared type's section when
``X`` is a ``types`` entry published unchanged, else to the tool's own definition
(listed under the tool), so a recursive schema is a link back, never an endless table.
Inline nesting stops at ``MAX_DEPTH`` levels and a schema renders at most ``MAX_ROWS``
rows (a YAML alias can make a small spec a huge tree); the published JSON, shown beside
each tool, has the rest.

Every string from the spec goes through ``escape`` (names, values, patterns) or, for a
description, through :func:`markdown.render_markdown`; nothing is pasted raw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from markupsafe import Markup

from .constraints import describe, describe_object
from .markdown import render_markdown
from .markup import html, json_text

__all__ = ["MAX_DEPTH", "MAX_ROWS", "Links", "SchemaRenderer"]

MAX_DEPTH: Final = 8
MAX_ROWS: Final = 2_000
_CONTAINERS: Final = ("object", "array")


@dataclass
class Links:
    """Where each ``#/$defs/X`` of one schema points: an anchor id per name."""

    anchors: dict[str, str] = field(default_factory=dict)

    def href(self, ref: str) -> tuple[str, str] | None:
        """(label, anchor) for a reference, or None for one the page cannot place."""
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix):
                name = ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
                if name in self.anchors:
                    return name, self.anchors[name]
        return None


@dataclass
class SchemaRenderer:
    """Renders the schemas of one tool or type; ``markdown`` renders descriptions."""

    links: Links
    root_anchor: str | None = None  # where ``$ref: "#"`` points
    markdown: Callable[[str], str] = render_markdown
    rows: int = 0
    changed: frozenset[str] = frozenset()  # top-level fields a listed change concerns

    # ---------------------------------------------------------------- entry points

    def object_table(self, schema: Mapping[str, Any], depth: int = 0, notes: bool = True) -> Markup:
        """The fields of an object schema as a table (or its shape when it has none);
        ``notes``: its own description above and its object-wide constraints below (a
        nested table's row shows them instead). A column no field fills is left out."""
        properties = schema.get("properties")
        if not isinstance(properties, Mapping) or not properties:
            return self.summary(schema, depth)
        required = {k for k in schema.get("required", []) if isinstance(k, str)}
        rows = [self.cells(name, sub, name in required, depth) for name, sub in properties.items()]
        shown = [row for row in rows if row is not None]
        columns = [True, True, True, any(row[3] for row in shown), any(row[4] for row in shown)]
        names = ("Name", "Type", "Required", "Constraints", "Description")
        head = "".join(f"<th>{name}</th>" for name, on in zip(names, columns, strict=True) if on)
        out = [Markup(f'<table class="fields"><thead><tr>{head}</tr></thead><tbody>')]
        classes = ("name", "type", "need", "constraints", "md")
        for row in shown:
            cells = "".join(
                f'<td class="{css}">{cell}</td>'
                for css, cell, on in zip(classes, row[:5], columns, strict=True)
                if on
            )
            out.append(Markup(f"<tr{row[6]}>{cells}</tr>"))
            if row[5]:
                out.append(
                    html(
                        '<tr class="nested"><td></td><td colspan="{}">{}</td></tr>',
                        sum(columns) - 1,
                        row[5],
                    )
                )
        if len(shown) < len(rows):
            out.append(
                Markup(
                    '<tr><td colspan="5" class="cut">… more fields than a page '
                    "shows; see the published JSON</td></tr>"
                )
            )
        out.append(Markup("</tbody></table>"))
        if notes:
            if isinstance(schema.get("description"), str):
                out.insert(
                    0,
                    html('<div class="md">{}</div>', Markup(self.markdown(schema["description"]))),
                )
            out.append(self.object_notes(schema, depth))
        return Markup("").join(out)

    def summary(self, schema: Any, depth: int = 0) -> Markup:
        """A schema without a field table: its type, constraints and description."""
        if not isinstance(schema, Mapping):
            return html('<div class="shape">{}</div>', self.type_of(schema))
        parts = [
            html(
                '<div class="shape"><span class="type">{}</span>{}</div>',
                self.type_of(schema),
                self.constraint_list(schema, depth),
            )
        ]
        if isinstance(schema.get("description"), str):
            parts.append(
                html('<div class="md">{}</div>', Markup(self.markdown(schema["description"])))
            )
        parts.append(self.nested(schema, depth))
        return Markup("").join(parts)

    # -------------------------------------------------------------------- rows

    def cells(
        self, name: str, schema: Any, required: bool, depth: int
    ) -> tuple[Markup, ...] | None:
        """One field's cells (name, type, required, constraints, description) and what
        nests under it; None past ``MAX_ROWS``."""
        self.rows += 1
        if self.rows > MAX_ROWS:
            return None
        sub = schema if isinstance(schema, Mapping) else {}
        if "default" in sub:
            need = html(
                '<span class="opt">default</span> <code>{}</code>', json_text(sub["default"])
            )
        else:
            need = (
                Markup('<span class="req">required</span>')
                if required
                else Markup('<span class="opt">optional</span>')
            )
        description = Markup("")
        if isinstance(sub.get("description"), str):
            description = Markup(self.markdown(sub["description"]))
        changed = depth == 0 and name in self.changed
        label = html("<code>{}</code>", name)
        if depth == 0 and self.root_anchor and self.root_anchor.endswith(":input"):
            target = f"{self.root_anchor}.{name}"  # a link to this parameter
            label = html('<a class="param" id="{}" href="#{}">{}</a>', target, target, label)
        return (
            label
            + (Markup(' <span class="pill changed">changed</span>') if changed else Markup("")),
            self.type_of(schema),
            need,
            self.constraint_list(sub, depth),
            description,
            self.nested(sub, depth),
            Markup(' class="changed"') if changed else Markup(""),
        )

    def nested(self, schema: Mapping[str, Any], depth: int) -> Markup:
        """What sits under a field: an inline object's fields, an array's item fields,
        the alternatives of anyOf/oneOf, the parts of allOf."""
        if depth >= MAX_DEPTH:
            return html(
                '<p class="cut">… nested deeper than {} levels; see the published JSON</p>',
                MAX_DEPTH,
            )
        out: list[Markup] = []
        if isinstance(schema.get("properties"), Mapping) and schema["properties"]:
            out.append(self.object_table(schema, depth + 1, notes=False))
        items = schema.get("items")
        if isinstance(items, Mapping) and _worth_nesting(items):
            out.append(Markup('<p class="sub">Each item:</p>') + self.summary(items, depth + 1))
        for keyword, label in (
            ("oneOf", "Exactly one of"),
            ("anyOf", "Any of"),
            ("allOf", "All of"),
        ):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches:
                out.append(self.alternatives(label, branches, depth))
        return Markup("").join(out)

    def alternatives(self, label: str, branches: list[Any], depth: int) -> Markup:
        """The choices of a union, each named by what tells it apart (``choice_name``)."""
        key = _discriminator(branches)
        items = []
        for branch in branches:
            name = choice_name(branch, key)
            head = html('<p class="choice">{}</p>', name) if name else Markup("")
            items.append(html("<li>{}{}</li>", head, self.summary(branch, depth + 1)))
        return html(
            '<div class="alts"><p class="sub">{}:</p><ol>{}</ol></div>',
            label,
            Markup("").join(items),
        )

    def object_notes(self, schema: Mapping[str, Any], depth: int) -> Markup:
        notes = self.constraint_list(schema, depth, only_object=True)
        return html('<div class="notes">{}</div>', notes) if notes else Markup("")

    # -------------------------------------------------------------------- types

    def type_of(self, schema: Any) -> Markup:
        """The type in words, references as links: ``array of Day``, ``string | null``."""
        if schema is True or schema == {}:
            return Markup("any")
        if schema is False:
            return Markup("nothing (always rejected)")
        if not isinstance(schema, Mapping):
            return Markup("?")
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.reference(ref)
        declared = schema.get("type")
        names = (
            [declared]
            if isinstance(declared, str)
            else ([t for t in declared if isinstance(t, str)] if isinstance(declared, list) else [])
        )
        if not names:
            names = _implied_types(schema)
        words = [self.one_type(name, schema) for name in names]
        if not words:
            for keyword, word in (
                ("oneOf", "one of"),
                ("anyOf", "any of"),
                ("allOf", "all of"),
                ("not", "not"),
            ):
                if keyword in schema:
                    return Markup(word + " …")
            return Markup("any")
        return Markup(" | ").join(words)

    def one_type(self, name: str, schema: Mapping[str, Any]) -> Markup:
        if name == "array":
            items = schema.get("items")
            if isinstance(items, Mapping) and items:
                return html("array of {}", self.type_of(items))
            return Markup("array")
        return html("{}", name)

    def reference(self, ref: str) -> Markup:
        if ref == "#" and self.root_anchor:
            return html('<a href="#{}">(this schema, recursively)</a>', self.root_anchor)
        target = self.links.href(ref)
        if target is None:
            return html("<code>$ref {}</code>", ref)
        label, anchor = target
        return html('<a class="ref" href="#{}">{}</a>', anchor, label)

    # -------------------------------------------------------------- constraints

    def constraint_list(
        self, schema: Mapping[str, Any], depth: int, only_object: bool = False
    ) -> Markup:
        found = describe_object(schema, self) if only_object else describe(schema, self)
        if not found:
            return Markup("")
        return html(
            '<ul class="cons">{}</ul>', Markup("").join(html("<li>{}</li>", item) for item in found)
        )


def _const(schema: Any) -> tuple[bool, Any]:
    """(True, value) for a schema that admits one value (``const``, a one-value enum)."""
    if not isinstance(schema, Mapping):
        return False, None
    if "const" in schema:
        return True, schema["const"]
    values = schema.get("enum")
    if isinstance(values, list) and len(values) == 1:
        return True, values[0]
    return False, None


def _discriminator(branches: list[Any]) -> str | None:
    """The property that tells a union's object choices apart: the one most of them
    pin to a single value (``op: {const: close}``), at least two of them, each a
    different value."""
    seen: dict[str, list[str]] = {}
    for branch in branches:
        properties = branch.get("properties") if isinstance(branch, Mapping) else None
        if not isinstance(properties, Mapping):
            continue
        for name, sub in properties.items():
            pinned, value = _const(sub)
            if pinned:
                seen.setdefault(name, []).append(json_text(value))
    usable = [
        (len(values), name)
        for name, values in seen.items()
        if len(values) >= min(2, len(branches)) and len(set(values)) == len(values)
    ]
    return max(usable)[1] if usable else None


def choice_name(branch: Any, key: str | None) -> Markup | None:
    """What a union's choice is: its ``title``, else the value of the property that
    tells the choices apart (``op = "close"``); None when neither is there (a ``$ref``
    choice shows its type's name already)."""
    if not isinstance(branch, Mapping):
        return None
    if isinstance(branch.get("title"), str) and branch["title"].strip():
        return html("<b>{}</b>", branch["title"])
    properties = branch.get("properties")
    if key is not None and isinstance(properties, Mapping) and key in properties:
        pinned, value = _const(properties[key])
        if pinned:
            return html("<code>{} = {}</code>", key, json_text(value))
    return None


def _worth_nesting(schema: Mapping[str, Any]) -> bool:
    """Does an item schema have structure of its own (not just a type or a $ref)?"""
    return any(k in schema for k in ("properties", "oneOf", "anyOf", "allOf")) or (
        isinstance(schema.get("items"), Mapping) and _worth_nesting(schema["items"])
    )


def _implied_types(schema: Mapping[str, Any]) -> list[str]:
    """A type for a schema that states none, from ``const``/``enum`` or its keywords."""
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(values, list) and values:
        return list(dict.fromkeys(_json_type(v) for v in values))
    if "properties" in schema:
        return ["object"]
    if "items" in schema or "prefixItems" in schema:
        return ["array"]
    return []


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
