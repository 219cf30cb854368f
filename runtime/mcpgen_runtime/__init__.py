"""The mcpgen runtime: a sans-I/O MCP core with stdio server and client shells.

This package is copied verbatim into every generated package as ``_runtime``;
it needs only the standard library (and pydantic, through generated models).
Names are imported on first use (PEP 562), so a server process never pays for
the client side (asyncio, subprocess) and starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._client import AsyncSession, ListedTool, ResultConverter, Session, convert_result
    from ._context import Cancelled, Context
    from ._errors import (
        ContractMismatch,
        McpError,
        ProtocolError,
        ResultMismatch,
        ServerExited,
        Timeout,
        ToolError,
    )
    from ._main import main
    from ._stdio_server import run_stdio, serve_streams
    from ._tools import App, Binding
    from ._unset import UNSET, Unset

_WHERE = {
    "App": "._tools",
    "AsyncSession": "._client",
    "Binding": "._tools",
    "Cancelled": "._context",
    "ContractMismatch": "._errors",
    "Context": "._context",
    "ListedTool": "._client",
    "McpError": "._errors",
    "ProtocolError": "._errors",
    "ResultConverter": "._client",
    "ResultMismatch": "._errors",
    "ServerExited": "._errors",
    "Session": "._client",
    "Timeout": "._errors",
    "ToolError": "._errors",
    "UNSET": "._unset",
    "Unset": "._unset",
    "convert_result": "._client",
    "main": "._main",
    "run_stdio": "._stdio_server",
    "serve_streams": "._stdio_server",
}

__all__ = [
    "UNSET",
    "App",
    "AsyncSession",
    "Binding",
    "Cancelled",
    "Context",
    "ContractMismatch",
    "ListedTool",
    "McpError",
    "ProtocolError",
    "ResultConverter",
    "ResultMismatch",
    "ServerExited",
    "Session",
    "Timeout",
    "ToolError",
    "Unset",
    "convert_result",
    "main",
    "run_stdio",
    "serve_streams",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value
