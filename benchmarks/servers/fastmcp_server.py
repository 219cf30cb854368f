"""``add`` and ``profile`` on FastMCP 4.2.3 (same typed functions as sdk_mcpserver.py)."""

from __future__ import annotations

from _typed import add, profile
from fastmcp import FastMCP

server = FastMCP("bench-fastmcp")
server.tool(add)
server.tool(profile)

if __name__ == "__main__":
    server.run("stdio", show_banner=False)
