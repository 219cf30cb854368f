"""``add`` and ``profile`` on the official SDK's low-level ``Server`` (mcp 2.3.0).

    python sdk_lowlevel.py [--tools TOOLS.json]

The low-level server publishes whatever descriptors it is given (run.py passes the
generated contract's) and, like the SDK itself, validates no arguments: a handler
gets the raw ``arguments`` dict.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from _profile import add, profile
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

ADD_TOOL: dict[str, Any] = {
    "name": "add",
    "description": "Add two integers.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"sum": {"type": "integer"}},
        "required": ["sum"],
    },
}


def _load_tools() -> list[types.Tool]:
    raw = [ADD_TOOL]
    if "--tools" in sys.argv:
        with open(sys.argv[sys.argv.index("--tools") + 1], encoding="utf-8") as f:
            raw = json.load(f)
    return [types.Tool.model_validate(tool) for tool in raw]


TOOLS = _load_tools()
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "add":
        value = add(args["a"], args["b"])
    elif params.name == "profile":
        value = profile(args)
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    return types.CallToolResult(
        content=[types.TextContent(text=_dumps(value))], structured_content=value
    )


server = Server("bench-lowlevel", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
