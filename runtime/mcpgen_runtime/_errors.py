"""Every error a user of a generated package can catch, in one tree.

    McpError                      base of everything below
    ├── ToolError                 a tool answered with ``isError: true`` (or a
    │                             handler raised it to send its own message)
    ├── ProtocolError             the peer answered with a JSON-RPC error, or sent
    │                             something the protocol does not allow
    │   ├── ContractMismatch      the server's tools break the generated contract
    │   ├── ResultMismatch        a tool's result does not fit the contract (the
    │   │                         output schema, the model, the ``returns`` type)
    │   ├── HttpStatusError       an HTTP server answered with a status that is no
    │   │   │                     MCP answer (``status``, ``url``)
    │   │   ├── AuthRequired      401 or 403 (``www_authenticate``: the challenge)
    │   │   │   ├── Unauthorized  401: no token, or one the server refused (``error``)
    │   │   │   └── Forbidden     403: the token lacks scopes (``missing_scopes``)
    │   │   └── EndpointNotFound  404: no MCP endpoint at that URL
    │   └── NotAnMcpEndpoint      an HTTP answer that is neither JSON nor SSE
    ├── ServerExited              the server process ended (exit code, stderr tail)
    │   └── ConnectionFailed      an HTTP server cannot be reached, or closed the
    │                             connection in the middle of an answer
    └── Timeout                   no answer within the request's time limit

Handlers raise ``ToolError`` to send a message a model can act on; any other
exception from a handler is reported without its text (see ``server.tools``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "AuthRequired",
    "ConnectionFailed",
    "ContractMismatch",
    "EndpointNotFound",
    "Forbidden",
    "HttpStatusError",
    "McpError",
    "NotAnMcpEndpoint",
    "ProtocolError",
    "ResultMismatch",
    "ServerExited",
    "Timeout",
    "ToolError",
    "Unauthorized",
]


class McpError(Exception):
    """Base class of every error raised by the mcpgen runtime."""


class ToolError(McpError):
    """A tool execution error: the result carried ``isError: true``.

    Raised by a handler, its message becomes the text the caller sees.
    Raised by a client, ``content`` holds the content blocks of the result.
    """

    def __init__(self, message: str, *, content: Sequence[Mapping[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.content: list[Mapping[str, Any]] = (
            list(content) if content is not None else [{"type": "text", "text": message}]
        )


class ProtocolError(McpError):
    """A JSON-RPC error from the peer, or a message the protocol forbids.

    ``code`` is the JSON-RPC error code (or 0 for a local protocol violation),
    ``reason`` a short machine-readable tag such as ``"invalid_tool"``.
    """

    def __init__(
        self, message: str, *, code: int = 0, data: Any = None, reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data
        self.reason = reason


class ContractMismatch(ProtocolError):
    """The server's listed tools break the contract the client was generated from.

    ``changes`` holds the breaking differences (``mcpgen_runtime.contract.rules.Change``).
    """

    def __init__(self, message: str, *, changes: Sequence[Any] = ()) -> None:
        super().__init__(message, reason="contract_mismatch")
        self.changes = list(changes)


class ResultMismatch(ProtocolError):
    """A tool's result does not fit the contract the client was generated from: a
    structured result that fails the output schema or the ``…Output`` model, or a
    value that is not the declared ``returns`` type.

    ``tool`` is the tool's wire name; ``path`` locates the problem inside the result
    (``("rows", 1, "day")``; empty for the result as a whole, for instance when a
    required property is missing, which the message then names).
    """

    def __init__(self, message: str, *, tool: str, path: Sequence[str | int] = ()) -> None:
        super().__init__(message, reason="result_mismatch")
        self.tool = tool
        self.path: tuple[str | int, ...] = tuple(path)


class ServerExited(McpError):
    """The server process exited; ``stderr_tail`` holds its last stderr lines."""

    def __init__(self, message: str, *, returncode: int | None, stderr_tail: str = "") -> None:
        text = (
            message
            if not stderr_tail
            else f"{message}\n--- server stderr (tail) ---\n{stderr_tail}"
        )
        super().__init__(text)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class Timeout(McpError):
    """A request got no answer within its time limit."""


class HttpStatusError(ProtocolError):
    """An HTTP server answered a message with a status that carries no MCP answer
    (a redirect, 5xx, …); ``status`` is the HTTP status, ``url`` the endpoint."""

    def __init__(self, message: str, *, status: int, url: str, reason: str = "http_status") -> None:
        super().__init__(message, reason=reason, data={"status": status, "url": url})
        self.status = status
        self.url = url


class AuthRequired(HttpStatusError):
    """401 or 403: the server wants credentials (``www_authenticate`` holds its
    ``WWW-Authenticate`` challenge, or "")."""

    def __init__(self, message: str, *, status: int, url: str, www_authenticate: str) -> None:
        super().__init__(message, status=status, url=url, reason="auth_required")
        self.www_authenticate = www_authenticate


class Unauthorized(AuthRequired):
    """401: the server wants a token, or refused the one sent (expired, wrong audience),
    or no token could be obtained (the authorization server refused: ``error`` is its
    OAuth error code such as ``invalid_client`` or ``access_denied``, else the
    challenge's, such as ``invalid_token``)."""

    def __init__(
        self, message: str, *, url: str, www_authenticate: str = "", error: str = ""
    ) -> None:
        super().__init__(message, status=401, url=url, www_authenticate=www_authenticate)
        self.error = error


class Forbidden(AuthRequired):
    """403: the token is valid but lacks scopes the call needs. ``required_scopes``
    are those the server's challenge names, ``missing_scopes`` those the token (after
    one step-up, when the client obtains its own tokens) still lacks."""

    def __init__(
        self,
        message: str,
        *,
        url: str,
        www_authenticate: str = "",
        error: str = "insufficient_scope",
        required_scopes: Sequence[str] = (),
        missing_scopes: Sequence[str] = (),
    ) -> None:
        super().__init__(message, status=403, url=url, www_authenticate=www_authenticate)
        self.error = error
        self.required_scopes = tuple(required_scopes)
        self.missing_scopes = tuple(missing_scopes)


class EndpointNotFound(HttpStatusError):
    """404: nothing serves MCP at the URL (a wrong path, or a session the server forgot)."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message, status=404, url=url, reason="endpoint_not_found")


class NotAnMcpEndpoint(ProtocolError):
    """An HTTP answer that is neither ``application/json`` nor ``text/event-stream``
    (an HTML page, a proxy's error page); ``url`` is the endpoint."""

    def __init__(self, message: str, *, url: str, content_type: str) -> None:
        super().__init__(message, reason="not_mcp", data={"url": url, "content_type": content_type})
        self.url = url
        self.content_type = content_type


class ConnectionFailed(ServerExited):
    """An HTTP server could not be reached (refused, unknown host, TLS) or closed the
    connection in the middle of an answer; ``url`` is the endpoint."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message, returncode=None)
        self.url = url


def error_from_response(error: Mapping[str, Any], method: str) -> ProtocolError:
    """The ``ProtocolError`` for a JSON-RPC error object."""
    code = error.get("code")
    message = error.get("message")
    return ProtocolError(
        f"{method}: {message if isinstance(message, str) else 'error'}",
        code=code if type(code) is int else 0,
        data=error.get("data"),
    )
