"""The mcpgen runtime: a sans-I/O MCP core with stdio server and client shells.

Every package mcpgen generates imports this distribution (``mcpgen-runtime``); with
``mcpgen build --runtime vendored`` a copy goes into the package as ``_runtime``.
It needs pydantic (generated models), idna (the ``hostname`` formats) and
opentelemetry-api (spans and metrics, a no-op until an SDK is installed; the ``otel``
extra brings the SDK and its OTLP exporter); the HTTP transports need the ``http``
extra (uvicorn, with httptools and uvloop where they build, serves; httpx2 calls).
``__all__`` is the public surface, and what generated code imports.
Names are imported on first use (PEP 562), so a server process never pays for
the client side (asyncio, subprocess) and starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._errors import (
        AuthRequired,
        ConnectionFailed,
        ContractMismatch,
        EndpointNotFound,
        Forbidden,
        HttpStatusError,
        McpError,
        NotAnMcpEndpoint,
        ProtocolError,
        ResultMismatch,
        ServerExited,
        Timeout,
        ToolError,
        Unauthorized,
    )
    from ._main import main
    from ._unset import UNSET, Unset
    from .auth.tokens import AuthInfo, InvalidToken, TokenVerifier, VerifierUnavailable
    from .client.aio import AsyncSession, AsyncTaskHandle
    from .client.asking import AsyncInputCallback, InputCallback
    from .client.base import AsyncProgressCallback, ProgressCallback
    from .client.core import ProtocolChoice
    from .client.listing import ListedTool
    from .client.results import ResultConverter, StructuredValue, convert_result
    from .client.sync import Session, TaskHandle
    from .client.task_state import TaskStatus
    from .protocol.asking import Accepted, Answer, Declined, Dismissed
    from .server.context import Cancelled, Context
    from .server.stdio import run_stdio, serve_streams
    from .server.tools import App, Binding
    from .transport.http.auth import AuthorizationCode, ClientCredentials, HttpAuth
    from .transport.lines import DEFAULT_MAX_MESSAGE_BYTES

from ._version import __version__, requirement, validate_runtime_version

_WHERE = {
    "Accepted": ".protocol.asking",
    "Answer": ".protocol.asking",
    "AsyncInputCallback": ".client.asking",
    "Declined": ".protocol.asking",
    "Dismissed": ".protocol.asking",
    "InputCallback": ".client.asking",
    "NotAnMcpEndpoint": "._errors",
    "HttpStatusError": "._errors",
    "EndpointNotFound": "._errors",
    "ConnectionFailed": "._errors",
    "AuthRequired": "._errors",
    "Unauthorized": "._errors",
    "Forbidden": "._errors",
    "ClientCredentials": ".transport.http.auth",
    "AuthorizationCode": ".transport.http.auth",
    "HttpAuth": ".transport.http.auth",
    "AuthInfo": ".auth.tokens",
    "InvalidToken": ".auth.tokens",
    "TokenVerifier": ".auth.tokens",
    "VerifierUnavailable": ".auth.tokens",
    "App": ".server.tools",
    "AsyncProgressCallback": ".client.base",
    "AsyncSession": ".client.aio",
    "AsyncTaskHandle": ".client.aio",
    "Binding": ".server.tools",
    "Cancelled": ".server.context",
    "ContractMismatch": "._errors",
    "Context": ".server.context",
    "ListedTool": ".client.listing",
    "DEFAULT_MAX_MESSAGE_BYTES": ".transport.lines",
    "McpError": "._errors",
    "ProgressCallback": ".client.base",
    "ProtocolChoice": ".client.core",
    "ProtocolError": "._errors",
    "ResultConverter": ".client.results",
    "StructuredValue": ".client.results",
    "ResultMismatch": "._errors",
    "ServerExited": "._errors",
    "Session": ".client.sync",
    "TaskHandle": ".client.sync",
    "TaskStatus": ".client.task_state",
    "Timeout": "._errors",
    "ToolError": "._errors",
    "UNSET": "._unset",
    "Unset": "._unset",
    "convert_result": ".client.results",
    "main": "._main",
    "run_stdio": ".server.stdio",
    "serve_streams": ".server.stdio",
}

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "UNSET",
    "Accepted",
    "Answer",
    "App",
    "AsyncInputCallback",
    "AsyncProgressCallback",
    "AsyncSession",
    "AsyncTaskHandle",
    "AuthInfo",
    "AuthRequired",
    "AuthorizationCode",
    "Binding",
    "Cancelled",
    "ClientCredentials",
    "ConnectionFailed",
    "Context",
    "ContractMismatch",
    "Declined",
    "Dismissed",
    "EndpointNotFound",
    "Forbidden",
    "HttpAuth",
    "HttpStatusError",
    "InvalidToken",
    "InputCallback",
    "ListedTool",
    "McpError",
    "NotAnMcpEndpoint",
    "ProgressCallback",
    "ProtocolChoice",
    "ProtocolError",
    "ResultConverter",
    "ResultMismatch",
    "ServerExited",
    "Session",
    "StructuredValue",
    "TaskHandle",
    "TaskStatus",
    "Timeout",
    "ToolError",
    "TokenVerifier",
    "Unauthorized",
    "Unset",
    "VerifierUnavailable",
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
