"""The sans-I/O server core: lines in, frames and tool invocations out.

``ServerConnection.receive(line)`` parses one line from the client and returns
actions: ``Send`` (a frame to write) or ``Invoke`` (a tool call the shell runs,
then hands back to ``respond``). No threads, no I/O, no event loop: the stdio
shell, the in-memory transport and the fuzzers all drive this same object.

Scope: the initialize-handshake revisions 2024-11-05 … 2025-11-25.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ToolError
from ._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    error_response,
    result_response,
    result_response_raw,
)
from ._tools import App, CallOutcome, ToolRuntime, for_revision
from ._versions import LATEST_HANDSHAKE, negotiate_version

__all__ = ["Invoke", "Send", "ServerConnection"]

_MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
_BATCH_VERSION = "2025-03-26"  # the one revision whose clients may send JSON-RPC batches


@dataclass(frozen=True, slots=True)
class Send:
    data: bytes


@dataclass(frozen=True, slots=True)
class Invoke:
    """Run ``tool`` with ``args`` (already validated), then call ``respond``."""

    request_id: Any
    tool: ToolRuntime
    args: tuple[Any, ...] | dict[str, Any]
    version: str


Action = Send | Invoke


class ServerConnection:
    """One client connection (one stdio process) of a tools-only MCP server."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.version: str | None = None  # negotiated revision, once initialized
        self._handlers = {
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }

    # -- input ------------------------------------------------------------

    def receive(self, line: bytes | str) -> list[Action]:
        """Everything one line from the client asks for."""
        if not line.strip():
            return []  # blank lines between frames are harmless
        try:
            message = json.loads(line)
        except RecursionError:
            return [Send(error_response(None, INVALID_REQUEST, "Invalid Request: nested too deeply"))]
        except (ValueError, UnicodeDecodeError):
            return [Send(error_response(None, PARSE_ERROR, "Parse error: invalid JSON"))]
        if isinstance(message, list):
            return self._batch(message)
        return self._message(message)

    def _batch(self, messages: list[Any]) -> list[Action]:
        if self.version != _BATCH_VERSION:
            return [Send(error_response(
                None, INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not accepted at this "
                "protocol revision"))]
        if not messages:
            return [Send(error_response(None, INVALID_REQUEST, "Invalid Request: empty batch"))]
        actions: list[Action] = []
        for message in messages:
            if isinstance(message, dict) and message.get("method") == "initialize":
                actions.append(Send(error_response(
                    message.get("id"), INVALID_REQUEST, "Invalid Request: initialize cannot be batched")))
                continue
            actions.extend(self._message(message))
        # Replies to a batch go out one frame each; 2025-03-26 clients match them by id.
        return actions

    def _message(self, message: Any) -> list[Action]:
        if not isinstance(message, dict):
            return [Send(error_response(None, INVALID_REQUEST, "Invalid Request: expected a JSON object"))]
        method = message.get("method")
        if "id" not in message:
            if isinstance(method, str):
                self._notification(method, message.get("params"))
            return []  # never answer a notification, nor an id-less response or error
        request_id = message["id"]
        if method is None and ("result" in message or "error" in message):
            return []  # a response: this server sends no requests, so nothing awaits it
        if type(request_id) not in (str, int):
            return [Send(error_response(
                None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer"))]
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return [Send(error_response(
                request_id, INVALID_REQUEST, "Invalid Request: expected jsonrpc '2.0' and a method"))]
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return [Send(error_response(request_id, INVALID_PARAMS, "Invalid params: expected an object"))]
        handler = self._handlers.get(method)
        if handler is None:
            return [Send(error_response(request_id, METHOD_NOT_FOUND, "Method not found", method))]
        return handler(request_id, params)

    def _notification(self, method: str, params: Any) -> None:
        # notifications/initialized needs no action; cancellation arrives with issue "protocol".
        return None

    # -- methods ------------------------------------------------------------

    def _initialize(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        version = negotiate_version(params.get("protocolVersion"))
        self.version = version
        info = dict(self.app.server_info)
        if version in ("2024-11-05", "2025-03-26"):
            info.pop("title", None)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": info,
        }
        if self.app.instructions is not None:
            result["instructions"] = self.app.instructions
        return [Send(result_response(request_id, result))]

    def _ping(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        return [Send(result_response(request_id, {}))]

    def _require_initialized(self, request_id: Any) -> list[Action] | None:
        if self.version is None:
            return [Send(error_response(
                request_id, INVALID_REQUEST, "Invalid Request: send initialize first"))]
        return None

    def _tools_list(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        refused = self._require_initialized(request_id)
        if refused:
            return refused
        if params.get("cursor") is not None:
            # one page holds every tool, so no cursor this server issued can exist
            return [Send(error_response(request_id, INVALID_PARAMS, "Invalid params: unknown cursor"))]
        version = self.version or LATEST_HANDSHAKE
        return [Send(result_response_raw(request_id, self.app.list_payloads[version]))]

    def _tools_call(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        refused = self._require_initialized(request_id)
        if refused:
            return refused
        name = params.get("name")
        if not isinstance(name, str):
            return [Send(error_response(
                request_id, INVALID_PARAMS, "Invalid params: tools/call needs a string 'name'"))]
        tool = self.app.tools.get(name)
        if tool is None:
            return [Send(error_response(request_id, INVALID_PARAMS, f"Unknown tool: {name}"))]
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            return [Send(error_response(
                request_id, INVALID_PARAMS, "Invalid params: 'arguments' must be an object"))]
        try:
            args = tool.check_arguments(arguments)
        except ToolError as exc:
            return [Send(result_response(request_id, {"content": exc.content, "isError": True}))]
        return [Invoke(request_id, tool, args, self.version or LATEST_HANDSHAKE)]

    # -- output ---------------------------------------------------------------

    def respond(self, invoke: Invoke, outcome: CallOutcome) -> bytes:
        """The frame answering a finished ``Invoke``."""
        if outcome.result is None:
            return error_response(invoke.request_id, INTERNAL_ERROR, outcome.internal_error or
                                  "Internal error")
        try:
            return result_response(invoke.request_id, for_revision(outcome.result, invoke.version))
        except (TypeError, ValueError):
            # a content block the handler built by hand that JSON cannot carry
            return error_response(invoke.request_id, INTERNAL_ERROR,
                                  f"Internal error in tool '{invoke.tool.name}'")
