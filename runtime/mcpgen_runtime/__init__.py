"""The mcpgen runtime: a sans-I/O MCP core with stdio server and client shells.

Every package mcpgen generates imports this distribution (``mcpgen-runtime``); with
``mcpgen build --runtime vendored`` a copy goes into the package as ``_runtime``.
It needs only the standard library (and pydantic, through generated models); the
HTTP transport needs the ``http`` extra (the official MCP SDK).
``__all__`` is the public surface, and what generated code imports.
Names are imported on first use (PEP 562), so a server process never pays for
the client side (asyncio, subprocess) and starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._client import (
        AsyncProgressCallback,
        AsyncSession,
        AsyncTaskHandle,
        ListedTool,
        ProgressCallback,
        ProtocolChoice,
        ResultConverter,
        Session,
        TaskHandle,
        TaskStatus,
        convert_result,
    )
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
    from ._transport import DEFAULT_MAX_MESSAGE_BYTES
    from ._unset import UNSET, Unset

from ._version import __version__, requirement, validate_runtime_version

_WHERE = {
    "App": "._tools",
    "AsyncProgressCallback": "._client",
    "AsyncSession": "._client",
    "AsyncTaskHandle": "._client",
    "Binding": "._tools",
    "Cancelled": "._context",
    "ContractMismatch": "._errors",
    "Context": "._context",
    "ListedTool": "._client",
    "DEFAULT_MAX_MESSAGE_BYTES": "._transport",
    "McpError": "._errors",
    "ProgressCallback": "._client",
    "ProtocolChoice": "._client",
    "ProtocolError": "._errors",
    "ResultConverter": "._client",
    "ResultMismatch": "._errors",
    "ServerExited": "._errors",
    "Session": "._client",
    "TaskHandle": "._client",
    "TaskStatus": "._client",
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
    "DEFAULT_MAX_MESSAGE_BYTES",
    "UNSET",
    "App",
    "AsyncProgressCallback",
    "AsyncSession",
    "AsyncTaskHandle",
    "Binding",
    "Cancelled",
    "Context",
    "ContractMismatch",
    "ListedTool",
    "McpError",
    "ProgressCallback",
    "ProtocolChoice",
    "ProtocolError",
    "ResultConverter",
    "ResultMismatch",
    "ServerExited",
    "Session",
    "TaskHandle",
    "TaskStatus",
    "Timeout",
    "ToolError",
    "Unset",
    "__version__",
    "convert_result",
    "main",
    "requirement",
    "run_stdio",
    "serve_streams",
    "validate_runtime_version",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value
