"""The JSON Schema of the spec format (``mcpgen: 1``).

One source of truth: the loader checks the structure of a spec against it, and
``mcpgen schema`` prints it for editors (yaml-language-server). Parameters are
JSON Schemas themselves; their keywords are checked by ``keywords.py``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ..ir import CALLBACKS, RETURNS, TASK_SUPPORT

__all__ = [
    "EDITOR_SCHEMA",
    "REGISTRY_NAME_PATTERN",
    "SCOPE_PATTERN",
    "SPEC_FORMAT_SCHEMA",
    "TOOL_NAME_PATTERN",
    "schema_file",
]

TOOL_NAME_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"

_ICON: dict[str, Any] = {
    "type": "object",
    "description": "An icon clients may show next to the tool.",
    "properties": {
        "src": {"type": "string", "description": "https: or data: URI"},
        "mime_type": {"type": "string"},
        "sizes": {"type": "array", "items": {"type": "string"}},
        "theme": {"enum": ["light", "dark"]},
    },
    "required": ["src"],
    "additionalProperties": False,
}

_HINTS: dict[str, Any] = {
    "type": "object",
    "description": "Behaviour hints, each published only when set.",
    "properties": {
        "read_only": {"type": "boolean", "description": "annotations.readOnlyHint"},
        "destructive": {"type": "boolean", "description": "annotations.destructiveHint"},
        "idempotent": {"type": "boolean", "description": "annotations.idempotentHint"},
        "open_world": {"type": "boolean", "description": "annotations.openWorldHint"},
    },
    "additionalProperties": False,
}

_PARAMETER: dict[str, Any] = {
    "type": "object",
    "description": "A JSON Schema (any 2020-12 keyword) plus name, description and required.",
    "properties": {
        "name": {"type": "string", "description": "Wire name of the argument."},
        "description": {"type": "string"},
        "required": {
            "type": ["boolean", "array"],
            "description": (
                "true or false: whether the argument must be given (default: true unless the "
                "parameter has a default). A list: JSON Schema's own `required`, the properties "
                "an object argument must have."
            ),
        },
        "header": {
            "type": "string",
            "description": (
                "Over Streamable HTTP (2026-07-28) the argument is also sent as the header "
                "Mcp-Param-<header>, for proxies to route on (published as x-mcp-header). "
                "A string, boolean or bounded integer parameter only."
            ),
        },
    },
    "required": ["name"],
    "additionalProperties": True,
}

# Reverse-DNS namespace (at least two labels), one slash, the server's own name: the
# registry's pattern (^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$) with the namespace's dot required.
REGISTRY_NAME_PATTERN = r"^[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+/[a-zA-Z0-9._-]+$"
# An OAuth scope token (RFC 6749 section 3.3: printable ASCII but space, '"' and '\\'):
# it travels in a space-separated list and in a quoted WWW-Authenticate parameter.
SCOPE_PATTERN = r"^[\x21\x23-\x5b\x5d-\x7e]+$"

_SCOPES: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "pattern": SCOPE_PATTERN},
    "uniqueItems": True,
}

_ENVIRONMENT_VARIABLE: dict[str, Any] = {
    "type": "object",
    "description": "An environment variable the implementation reads.",
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
        "description": {"type": "string"},
        "secret": {"type": "boolean", "description": "A password, token or key (isSecret)."},
        "required": {"type": "boolean", "description": "The server cannot start without it."},
        "default": {"type": "string"},
    },
    "required": ["name"],
    "additionalProperties": False,
}

_JSON_SCHEMA: dict[str, Any] = {
    "type": ["object", "boolean"],
    "description": "A JSON Schema 2020-12; $ref may point to #/types/Name or a file.",
}

_TOOL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": TOOL_NAME_PATTERN, "description": "Wire name."},
        "title": {"type": "string"},
        "annotation_title": {
            "anyOf": [{"type": "string"}, {"const": False}],
            "description": (
                "annotations.title when it differs from title: a string, or false for none "
                "(default: title)."
            ),
        },
        "description": {"type": "string"},
        "parameters": {"type": "array", "items": _PARAMETER},
        "input_schema": {**_JSON_SCHEMA, "type": "object"},
        "output_schema": _JSON_SCHEMA,
        "returns": {
            "enum": list(RETURNS),
            "description": (
                "Type of a positional or named handler's value (default string); result: the "
                "whole CallToolResult (content blocks, structuredContent, _meta)."
            ),
        },
        "callback": {"enum": list(CALLBACKS)},
        "hints": _HINTS,
        "task_support": {"enum": list(TASK_SUPPORT)},
        "icons": {"type": "array", "items": _ICON},
        "async": {"type": "boolean", "description": "The handler is `async def`."},
        "timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Seconds before a call is abandoned with an error.",
        },
        "meta": {"type": "object", "description": "Published as _meta."},
        "scopes": {
            **_SCOPES,
            "description": (
                "OAuth scopes a caller's token must hold to call this tool over authenticated "
                "HTTP (added to server.scopes); published in _meta as io.mcpgen/scopes."
            ),
        },
        "annotations": {
            "type": "object",
            "description": (
                "More members of annotations (a server's own, such as category), published "
                "unchanged beside annotation_title and hints, which set title and the hints."
            ),
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}

SPEC_FORMAT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://mcpgen.dev/schema/mcpgen-1.json",
    "title": "mcpgen tool contract",
    "type": "object",
    "properties": {
        "mcpgen": {"const": 1, "description": "Format version."},
        "package": {
            "type": "string",
            "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$",
            "description": "Import name of the generated package.",
        },
        "output": {
            "type": "string",
            "description": "Output directory, relative to this file (default ./<package>).",
        },
        "server": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "version": {"type": "string", "minLength": 1},
                "title": {"type": "string"},
                "instructions": {"type": "string"},
                "implementation": {
                    "type": "string",
                    "pattern": r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$",
                    "description": "module:Class used by `python -m <package>` by default.",
                },
                "registry_name": {
                    "type": "string",
                    "pattern": REGISTRY_NAME_PATTERN,
                    "maxLength": 200,
                    "description": (
                        "The MCP Registry name, reverse-DNS namespace / server "
                        "(io.github.you/weather): server.json's name and the README's mcp-name."
                    ),
                },
                "scopes": {
                    **_SCOPES,
                    "description": (
                        "OAuth scopes every tool needs over authenticated HTTP (a tool's own "
                        "scopes add to them)."
                    ),
                },
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 100,
                    "description": "One line on what the server does (server.json's description).",
                },
                "environment": {
                    "type": "array",
                    "items": _ENVIRONMENT_VARIABLE,
                    "description": (
                        "Environment variables the implementation reads (server.json lists "
                        "them, with the runtime's own)."
                    ),
                },
            },
            "required": ["name", "version"],
            "additionalProperties": False,
        },
        "types": {
            "type": "object",
            "additionalProperties": _JSON_SCHEMA,
            "propertyNames": {"pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
        },
        "tools": {"type": "array", "items": _TOOL},
    },
    "required": ["mcpgen", "package", "server", "tools"],
    "additionalProperties": False,
}


def _editor_schema() -> dict[str, Any]:
    """SPEC_FORMAT_SCHEMA with every embedded JSON Schema (parameters, types, input and
    output schemas, at any depth) checked against the 2020-12 vocabulary: a misspelt
    keyword (`typ:`) or type (`type: strin`) is flagged by the editor, and keywords
    complete. The loader keeps the loose form and checks keywords itself (keywords.py),
    with a did-you-mean, so one typo gives one diagnostic there."""
    from ..keywords import (
        JSON_TYPES,
        KNOWN_KEYWORDS,
        SCHEMA_LIST_KEYWORDS,
        SCHEMA_MAP_KEYWORDS,
        SCHEMA_VALUE_KEYWORDS,
    )

    ref = {"$ref": "#/$defs/schema"}
    type_name = {"enum": list(JSON_TYPES)}
    keywords: dict[str, Any] = {}
    for keyword in sorted(KNOWN_KEYWORDS):
        if keyword in SCHEMA_VALUE_KEYWORDS:
            keywords[keyword] = ref
        elif keyword in SCHEMA_LIST_KEYWORDS:
            keywords[keyword] = {"type": "array", "items": ref}
        elif keyword in SCHEMA_MAP_KEYWORDS:
            keywords[keyword] = {"type": "object", "additionalProperties": ref}
        elif keyword == "type":
            keywords[keyword] = {"anyOf": [type_name, {"type": "array", "items": type_name}]}
        elif keyword == "required":
            keywords[keyword] = {"type": "array", "items": {"type": "string"}}
        else:
            keywords[keyword] = {}
    extensions: dict[str, Any] = {
        "^x-": {}
    }  # vendor keywords stay allowed (the loader refuses directives)
    schema_def = {
        "type": ["object", "boolean"],
        "description": "A JSON Schema 2020-12; $ref may point to #/types/Name or a file.",
        "properties": keywords,
        "patternProperties": extensions,
        "additionalProperties": False,
    }
    parameter_def = {
        **_PARAMETER,
        "properties": {**keywords, **_PARAMETER["properties"]},
        "patternProperties": extensions,
        "additionalProperties": False,
    }
    editor = copy.deepcopy(SPEC_FORMAT_SCHEMA)
    editor["$defs"] = {"schema": schema_def, "parameter": parameter_def}
    editor["properties"]["types"]["additionalProperties"] = ref
    tool = editor["properties"]["tools"]["items"]["properties"]
    tool["parameters"]["items"] = {"$ref": "#/$defs/parameter"}
    tool["input_schema"] = {**ref, "type": "object"}
    tool["output_schema"] = ref
    return editor


EDITOR_SCHEMA: dict[str, Any] = _editor_schema()


def schema_file() -> Path:
    """The shipped copy of ``EDITOR_SCHEMA`` (for ``# yaml-language-server: $schema=``).

    A test keeps the file equal to the dict above.
    """
    return Path(__file__).resolve().parent / "mcpgen-1.schema.json"
