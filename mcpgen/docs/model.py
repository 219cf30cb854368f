"""The page model: what the template shows of a contract, every string already safe.

Built from the IR (``ir.Contract``) and the published descriptors; the template only
lays it out. Text from the spec reaches the page either escaped by the template
(autoescape) or as ``Markup`` made here from escaped parts and sanitised Markdown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from markupsafe import Markup

from mcpgen_runtime.protocol.structured import needs_wrapper

from .. import ir
from ..descriptors import descriptor
from ..testing.examples import ExampleError, example_arguments, example_value
from .markdown import render_markdown
from .schema_html import Links, SchemaRenderer

__all__ = ["Badge", "Example", "IconView", "ToolView", "TypeView", "tool_view", "type_views"]

# MCP's defaults for a hint a server leaves out (what a client must assume).
_HINTS: Final = (
    # attribute, wire name, word when true, word when false, MCP default, badge kinds
    ("read_only", "readOnlyHint", "read-only", "not read-only", False, ("good", "warn")),
    ("destructive", "destructiveHint", "destructive", "non-destructive", True, ("bad", "good")),
    ("idempotent", "idempotentHint", "idempotent", "not idempotent", False, ("good", "muted")),
    ("open_world", "openWorldHint", "open-world", "closed-world", True, ("info", "muted")),
)
_WRITE_HINTS: Final = ("destructive", "idempotent")
_RETURNS: Final = {
    "string": "text: one text content block",
    "integer": "an integer, sent as JSON text in a text content block",
    "number": "a number, sent as JSON text in a text content block",
    "boolean": "a boolean, sent as JSON text in a text content block",
    "object": "a JSON object, sent as JSON text in a text content block",
    "array": "a JSON array, sent as JSON text in a text content block",
    "content": "MCP content blocks (text, image, audio, resource links…), as the tool sends them",
    "result": "content blocks and, when the tool sends it, structuredContent, as the tool sends them",
}
# What only the server's author needs, per ``returns``: shown under "For implementers".
_RETURNS_IMPL: Final = {
    "result": "the handler returns the whole CallToolResult (content, structuredContent, "
    "_meta); the server passes it through unchanged",
    "content": "the handler returns a list of MCP content blocks, sent as they are",
}
_TASKS: Final = {
    "forbidden": "a plain call (no task)",
    "optional": "a plain call, or a task when the client asks for one",
    "required": "always a task: the client polls for its status and result",
}
TYPE_PREFIX: Final = "type:"  # ':' never occurs in a tool name, so ids cannot collide


@dataclass(frozen=True)
class Badge:
    label: str
    kind: str  # css class: good, warn, bad, info, muted
    note: str = ""


@dataclass(frozen=True)
class IconView:
    src: str
    inline: bool  # a data: image shown as an image; any other URL shown as text
    mime_type: str | None
    sizes: str
    theme: str | None


@dataclass(frozen=True)
class Example:
    request: str | None  # the JSON-RPC tools/call request, pretty-printed
    python: str | None  # the call of the generated client method
    problem: str | None  # why there is no example
    result: str | None = None  # an example structuredContent, valid against the output schema


@dataclass
class ToolView:
    name: str
    anchor: str
    heading: str
    description: Markup
    summary: str  # the description's first sentence, plain text, for the overview
    params: Markup
    has_params: bool
    output: Markup | None
    returns: str | None
    output_type: str | None  # anchor of the shared type the output schema is
    badges: list[Badge]
    hints_unset: str
    tasks: str
    task_support: str
    timeout: str | None  # None: no timeout (the page says so once, for every tool)
    handler: str
    returns_impl: str | None  # what the handler returns, for implementers
    output_article: str  # "a" or "an", before the output type's name
    icons: list[IconView]
    meta: str | None
    scopes: tuple[str, ...]  # OAuth scopes a caller's token must hold (server's first)
    example: Example
    local_defs: list[tuple[str, str, Markup]]
    descriptor: str
    changes: list[Any] = field(default_factory=list)
    # the output schema is not an object one: wrapped before 2026-07-28 (SEP-2106)
    output_wrapped: bool = False


@dataclass
class TypeView:
    name: str
    anchor: str
    body: Markup
    used_by: list[str]


def _anchors(contract: ir.Contract, schema: Mapping[str, Any], local: str) -> Links:
    """Each ``$defs`` name of a published schema → the section it links to: the shared
    type's when the definition is that type, unchanged; else ``local`` + name."""
    found = schema.get("$defs")
    defs: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    anchors = {name: TYPE_PREFIX + name for name in contract.types}
    for name, definition in defs.items():
        if contract.types.get(name) != definition:
            anchors[name] = f"{local}{name}"
    return Links(anchors)


def _changed_fields(tool: str, changes: Sequence[Any], side: str) -> frozenset[str]:
    """The top-level fields of ``side`` (inputSchema, outputSchema) a change concerns."""
    prefix = f"{side}.properties."
    names = set()
    for row in changes:
        for name, path in row.paths:
            if name == tool and path.startswith(prefix):
                rest = path[len(prefix) :]
                names.add(
                    json.loads(rest[1:].split("]")[0])
                    if rest.startswith('["')
                    else re.split(r"[.\[]", rest)[0]
                )
    return frozenset(names)


def tool_view(
    contract: ir.Contract, tool: ir.Tool, client_class: str, changes: Sequence[Any] = ()
) -> ToolView:
    local = f"def:{tool.name}:"
    published = descriptor(tool)
    in_links = _anchors(contract, tool.input_schema, local)
    renderer = SchemaRenderer(
        in_links,
        root_anchor=f"{tool.name}:input",
        changed=_changed_fields(tool.name, changes, "inputSchema"),
    )
    if tool.input_schema.get("properties"):
        params = renderer.object_table(tool.input_schema)
    else:
        params = Markup('<span class="none">No parameters.</span>') + renderer.object_notes(
            tool.input_schema, 0
        )
    output = None
    if tool.output_schema is not None and tool.output_type_ref is None:
        out_links = _anchors(contract, tool.output_schema, local)
        output = SchemaRenderer(
            out_links,
            root_anchor=f"{tool.name}:output",
            changed=_changed_fields(tool.name, changes, "outputSchema"),
        ).object_table(tool.output_schema)
    local_defs = _local_defs(contract, tool, local)
    badges, unset = _hint_badges(tool.hints)
    output_name = tool.output_type_ref or ""
    if tool.task_support != "forbidden":
        badges.append(Badge(f"tasks: {tool.task_support}", "info", _TASKS[tool.task_support]))
    if tool.scopes:
        badges.append(Badge("scoped", "info", "over HTTP, a token holding its scopes"))
    return ToolView(
        name=tool.name,
        anchor=tool.name,
        heading=tool.title or tool.annotations_title or tool.name,
        description=Markup(render_markdown(tool.description)) if tool.description else Markup(""),
        summary=one_line(tool.description or ""),
        params=params,
        has_params=bool(tool.input_schema.get("properties")),
        output=output,
        returns=None if tool.output_schema is not None else _RETURNS[tool.returns],
        output_type=None if tool.output_type_ref is None else tool.output_type_ref,
        badges=badges,
        hints_unset=unset,
        tasks=_TASKS[tool.task_support],
        task_support=tool.task_support,
        timeout=None if tool.timeout is None else f"{tool.timeout:g} s",
        handler=f"{'async def' if tool.is_async else 'def'} {tool.py_name} ({tool.callback})",
        returns_impl=None if tool.output_schema is not None else _RETURNS_IMPL.get(tool.returns),
        output_article=article(output_name),
        output_wrapped=tool.output_schema is not None and needs_wrapper(tool.output_schema),
        icons=[_icon(icon) for icon in tool.icons],
        meta=None if tool.meta is None else json.dumps(tool.meta, indent=2, ensure_ascii=False),
        scopes=tool.scopes,
        example=_example(tool, client_class),
        local_defs=local_defs,
        descriptor=json.dumps(published, indent=2, ensure_ascii=False),
        changes=list(changes),
    )


def _local_defs(contract: ir.Contract, tool: ir.Tool, local: str) -> list[tuple[str, str, Markup]]:
    """The definitions of a tool's schemas that are not shared types, one section each."""
    found: dict[str, Mapping[str, Any]] = {}
    for schema in (tool.input_schema, tool.output_schema or {}):
        defs = schema.get("$defs")
        if isinstance(defs, Mapping):
            for name, definition in defs.items():
                if contract.types.get(name) != definition and name not in found:
                    found[name] = definition
    out = []
    for name, definition in found.items():
        links = _anchors(contract, tool.input_schema, local)
        links.anchors.update(_anchors(contract, tool.output_schema or {}, local).anchors)
        body = (
            SchemaRenderer(links, root_anchor=f"{local}{name}").object_table(definition)
            if (isinstance(definition, Mapping))
            else Markup("")
        )
        out.append((f"{local}{name}", name, body))
    return out


def _hint_badges(hints: ir.Hints) -> tuple[list[Badge], str]:
    """A badge per hint the spec sets; the unset ones in words, with MCP's default."""
    badges: list[Badge] = []
    unset: list[str] = []
    for attribute, wire, yes, no, default, kinds in _HINTS:
        value = getattr(hints, attribute)
        if value is None and hints.read_only is True and attribute in _WRITE_HINTS:
            continue  # MCP gives them meaning only when readOnlyHint is false
        if value is None:
            unset.append(yes if default else no)
            continue
        badges.append(
            Badge(yes if value else no, kinds[0 if value else 1], f"{wire}: {str(value).lower()}")
        )
    return badges, ", ".join(unset)


def one_line(text: str, limit: int = 140) -> str:
    """The first sentence of a Markdown description as plain text, cut at ``limit``."""
    plain = " ".join(Markup(render_markdown(text.strip().split("\n\n", 1)[0])).striptags().split())
    end = plain.find(". ")
    if end != -1:
        plain = plain[: end + 1]
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


def article(word: str) -> str:
    """``a`` or ``an`` before a type's name, by its first letter (``an Issue``)."""
    return "an" if word[:1].lower() in ("a", "e", "i", "o", "u") else "a"


def _icon(icon: ir.Icon) -> IconView:
    inline = (
        icon.src.startswith("data:image/")
        and ";base64," in icon.src
        and not icon.src.lower().startswith("data:image/svg")
    )
    return IconView(icon.src, inline, icon.mime_type, " ".join(icon.sizes or ()), icon.theme)


def _needed(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without the optional ones that only repeat their default (a call
    need not send them), when the schema still accepts what is left."""
    from mcpgen_runtime.schema.errors import ValidationFailed
    from mcpgen_runtime.schema.validator import compile_schema

    properties = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    if not isinstance(properties, Mapping):
        return arguments
    kept = {
        key: value
        for key, value in arguments.items()
        if key in needed
        or not isinstance(properties.get(key), Mapping)
        or "default" not in properties[key]
        or properties[key]["default"] != value
    }
    try:
        compile_schema(schema)(kept)
    except ValidationFailed:
        return arguments
    return kept


def _example_result(tool: ir.Tool) -> str | None:
    """An example ``structuredContent`` from the output schema, valid against it."""
    if tool.output_schema is None:
        return None
    try:
        value = example_value(tool.output_schema)
    except ExampleError:
        return None
    return json.dumps(value, indent=2, ensure_ascii=False)


def _example(tool: ir.Tool, client_class: str) -> Example:
    try:
        arguments = _needed(tool.input_schema, example_arguments(tool.input_schema))
    except ExampleError as exc:
        return Example(None, None, str(exc))
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool.name, "arguments": arguments},
    }
    py_names = {param.name: param.py_name for param in tool.parameters}
    args = [f"{py_names.get(key, key)}={py_literal(value)}" for key, value in arguments.items()]
    call = f"result = client.{tool.py_name}({', '.join(args)})"
    if len(call) > 56:  # one argument a line, as black lays it out
        call = f"result = client.{tool.py_name}(\n" + "".join(f"    {a},\n" for a in args) + ")"
    if tool.callback == "structured" and tool.output_schema is not None:
        kind = "a type alias" if needs_wrapper(tool.output_schema) else "a pydantic model"
        call += f"\n# result: {tool.output_type_ref or tool.class_name + 'Output'} ({kind})"
    if tool.task_support != "forbidden":  # the same arguments start it as a task
        call += (
            f"\n# as a task: handle = client.start_{tool.py_name}(…)"
            "\n# handle.status(), handle.result(), handle.cancel()"
        )
    return Example(
        json.dumps(request, indent=2, ensure_ascii=False), call, None, _example_result(tool)
    )


def py_literal(value: Any) -> str:
    """A JSON value as Python source, strings in double quotes as black writes them
    (a JSON string literal is a valid Python one)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)  # None, True/False, int, float


def type_views(contract: ir.Contract) -> list[TypeView]:
    """One section per ``types`` entry (file references included), with its users."""
    used: dict[str, list[str]] = {name: [] for name in contract.types}
    for tool in contract.tools:
        for schema in (tool.input_schema, tool.output_schema or {}):
            for name, definition in (schema.get("$defs") or {}).items():
                if contract.types.get(name) == definition and tool.name not in used[name]:
                    used[name].append(tool.name)
        if tool.output_type_ref in used and tool.name not in used[tool.output_type_ref]:
            used[tool.output_type_ref].append(tool.name)
    links = Links({name: TYPE_PREFIX + name for name in contract.types})
    views = []
    for name, schema in contract.types.items():
        renderer = SchemaRenderer(links, root_anchor=TYPE_PREFIX + name)
        body = (
            renderer.object_table(schema)
            if isinstance(schema, Mapping)
            else renderer.summary(schema)
        )
        views.append(TypeView(name, TYPE_PREFIX + name, body, used[name]))
    return views
