"""The exact JSON each tool publishes: its ``tools/list`` descriptor and input schema.

Bundling the ``$ref``s of a spec is the front end's job (``spec/bundle.py``); by the
time a tool reaches here its schemas are self-contained.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpgen_runtime.protocol.constants import META_SCOPES

from . import ir

__all__ = ["derive_input_schema", "descriptor"]


def derive_input_schema(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    """The published input schema of a tool declared with ``parameters``."""
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def descriptor(tool: ir.Tool) -> dict[str, Any]:
    """The ``tools/list`` entry for ``tool`` in the 2025-11-25 shape."""
    result: dict[str, Any] = {"name": tool.name}
    if tool.title is not None:
        result["title"] = tool.title
    if tool.description is not None:
        result["description"] = tool.description
    result["inputSchema"] = tool.input_schema
    if tool.output_schema is not None:
        result["outputSchema"] = tool.output_schema
    annotations: dict[str, Any] = {}
    if tool.annotations_title is not None:
        annotations["title"] = tool.annotations_title
    for key, value in (
        ("readOnlyHint", tool.hints.read_only),
        ("destructiveHint", tool.hints.destructive),
        ("idempotentHint", tool.hints.idempotent),
        ("openWorldHint", tool.hints.open_world),
    ):
        if value is not None:
            annotations[key] = value
    annotations.update(tool.annotations or {})
    if annotations:
        result["annotations"] = annotations
    if tool.icons:
        result["icons"] = [_icon(icon) for icon in tool.icons]
    if tool.task_support != "forbidden" or tool.execution_explicit:
        result["execution"] = {"taskSupport": tool.task_support}
    if tool.meta is not None or tool.scopes:
        result["_meta"] = {**(tool.meta or {})}
        if tool.scopes:
            result["_meta"][META_SCOPES] = list(tool.scopes)
    return result


def _icon(icon: ir.Icon) -> dict[str, Any]:
    result: dict[str, Any] = {"src": icon.src}
    if icon.mime_type is not None:
        result["mimeType"] = icon.mime_type
    if icon.sizes is not None:
        result["sizes"] = list(icon.sizes)
    if icon.theme is not None:
        result["theme"] = icon.theme
    return result
