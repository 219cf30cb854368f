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
    from ._unset import UNSET, Unset
    from .client import (
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
    from .server.context import Cancelled, Context
    from .server.stdio import run_stdio, serve_streams
    from .server.tools import App, Binding
    from .transport import DEFAULT_MAX_MESSAGE_BYTES

from ._version import __version__, requirement, validate_runtime_version

_WHERE = {
    "App": ".server.tools",
    "AsyncProgressCallback": ".client",
    "AsyncSession": ".client",
    "AsyncTaskHandle": ".client",
    "Binding": ".server.tools",
    "Cancelled": ".server.context",
    "ContractMismatch": "._errors",
    "Context": ".server.context",
    "ListedTool": ".client",
    "DEFAULT_MAX_MESSAGE_BYTES": ".transport",
    "McpError": "._errors",
    "ProgressCallback": ".client",
    "ProtocolChoice": ".client",
    "ProtocolError": "._errors",
    "ResultConverter": ".client",
    "ResultMismatch": "._errors",
    "ServerExited": "._errors",
    "Session": ".client",
    "TaskHandle": ".client",
    "TaskStatus": ".client",
    "Timeout": "._errors",
    "ToolError": "._errors",
    "UNSET": "._unset",
    "Unset": "._unset",
    "convert_result": ".client",
    "main": "._main",
    "run_stdio": ".server.stdio",
    "serve_streams": ".server.stdio",
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


def __dir__() -> list[str]:
    """The public names (``__all__``), whether or not imported yet; the
    subpackages are the runtime's own."""
    return sorted(__all__)
