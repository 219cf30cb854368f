"""The ``--url`` target: a Streamable HTTP endpoint, spoken to with the standard library.

One JSON-RPC request per POST (``Accept: application/json, text/event-stream``); the
answer is read from a JSON body or from the server-sent events of the stream. The
handshake is 2025-11-25 (``initialize``, then ``notifications/initialized``); an
``Mcp-Session-Id`` the server hands out is sent back on every later request, so both
stateless and stateful servers work. Nothing but ``url`` is ever contacted.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

from .targets import Reply, TargetFailed

__all__ = ["HttpTarget"]

_PROTOCOL = "2025-11-25"
_MAX_BODY = 16 * 1024 * 1024


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirect is an answer to report, never followed elsewhere


class HttpTarget:
    def __init__(self, url: str, *, timeout: float = 30.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise TargetFailed(f"--url {url}: not an http:// or https:// URL")
        self.url = url
        self.description = f"--url {url}"
        self.timeout = timeout
        self.session_id: str | None = None
        self.protocol_version = _PROTOCOL
        self._opener = urllib.request.build_opener(_NoRedirect)
        self._next_id = 0

    def start(self) -> None:
        try:
            self._request(
                "initialize",
                {
                    "protocolVersion": _PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "mcpgen-test", "version": "1"},
                },
                self.timeout,
                initializing=True,
            )
            self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.timeout)
        except (OSError, ValueError) as exc:
            raise TargetFailed(f"{self.description}: cannot connect: {exc}") from None

    def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: Any = None
        for _ in range(100):
            try:
                page = self._request(
                    "tools/list", {"cursor": cursor} if cursor else {}, self.timeout
                )
            except (OSError, ValueError) as exc:
                raise TargetFailed(f"{self.description}: tools/list failed: {exc}") from None
            result = page.get("result")
            if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                raise TargetFailed(f"{self.description}: tools/list failed: {page.get('error')}")
            tools.extend(t for t in result["tools"] if isinstance(t, dict))
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return tools

    def call(
        self, name: str, arguments: dict[str, Any], timeout: float, *, task: bool = False
    ) -> Reply:
        if task:
            return Reply(gone="tools that require tasks are not tested over --url yet")
        try:
            answer = self._request("tools/call", {"name": name, "arguments": arguments}, timeout)
        except TimeoutError:
            return Reply(timed_out=True)
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                return Reply(timed_out=True)
            return Reply(gone=str(exc))
        except (OSError, ValueError) as exc:
            return Reply(gone=str(exc))
        if isinstance(answer.get("error"), dict):
            return Reply(error=answer["error"])
        result = answer.get("result")
        return Reply(result=result if isinstance(result, dict) else {"malformed": result})

    def restart(self) -> None:
        self.session_id = None
        self.start()

    def close(self) -> None:
        if self.session_id is None:
            return
        request = urllib.request.Request(self.url, method="DELETE", headers=self._headers())
        try:
            self._opener.open(request, timeout=5).close()
        except OSError:
            pass

    # -- the wire ----------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": self.protocol_version,
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    def _request(
        self, method: str, params: dict[str, Any], timeout: float, initializing: bool = False
    ) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        body, content_type, session = self._post(message, timeout)
        if initializing and session:
            self.session_id = session
        answer = _find_answer(body, content_type, request_id)
        if answer is None:
            raise ValueError(f"no answer to {method} in the response")
        return answer

    def _post(self, message: dict[str, Any], timeout: float) -> tuple[bytes, str, str | None]:
        data = json.dumps(message).encode("utf-8")
        request = urllib.request.Request(
            self.url, data=data, method="POST", headers=self._headers()
        )
        try:
            response = self._opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as exc:  # a JSON-RPC error may come with a 4xx/5xx
            body = exc.read(_MAX_BODY)
            if exc.headers.get_content_type() in ("application/json", "text/event-stream") and body:
                return body, exc.headers.get_content_type(), None
            raise ValueError(f"HTTP {exc.code} {exc.reason}") from None
        with response:
            return (
                response.read(_MAX_BODY),
                response.headers.get_content_type(),
                response.headers.get("Mcp-Session-Id"),
            )


def _find_answer(body: bytes, content_type: str, request_id: int) -> dict[str, Any] | None:
    if not body:
        return None
    if content_type == "text/event-stream":
        messages = [
            json.loads(line[5:].strip())
            for line in body.decode("utf-8").splitlines()
            if line.startswith("data:") and line[5:].strip()
        ]
    else:
        loaded = json.loads(body)
        messages = loaded if isinstance(loaded, list) else [loaded]
    for message in messages:
        if isinstance(message, dict) and message.get("id") == request_id:
            return message
    return None
