"""``add`` and ``profile`` on the official SDK's ``MCPServer`` (mcp 2.3.0): typed
functions, pydantic validation of arguments, structured output from the return type."""

from __future__ import annotations

from _typed import add, profile
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-mcpserver")
server.tool(structured_output=True)(add)
server.tool(structured_output=True)(profile)

if __name__ == "__main__":
    server.run("stdio")
