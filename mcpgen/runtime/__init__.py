"""The mcpgen runtime: a sans-I/O MCP core with stdio server and client shells.

This package is copied verbatim into every generated package as ``_runtime``;
it needs only the standard library (and pydantic, through generated models).
"""

from ._client import AsyncSession, ListedTool, Session, convert_result
from ._context import Cancelled, Context
from ._errors import ContractMismatch, McpError, ProtocolError, ServerExited, Timeout, ToolError
from ._main import main
from ._stdio_server import run_stdio, serve_streams
from ._tools import App, Binding

__all__ = [
    "App",
    "AsyncSession",
    "Binding",
    "Cancelled",
    "ContractMismatch",
    "Context",
    "ListedTool",
    "McpError",
    "ProtocolError",
    "ServerExited",
    "Session",
    "Timeout",
    "ToolError",
    "convert_result",
    "main",
    "run_stdio",
    "serve_streams",
]
