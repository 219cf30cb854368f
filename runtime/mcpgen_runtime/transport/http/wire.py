"""The sans-I/O side of a Streamable HTTP client: what to send with a message and what
an answer means, for the asyncio shell (``aio``) and the thread shell (``sync``).

- ``read_message``: what the transport needs of an outgoing line (its id, method and
  routing name, the envelope's protocol version).
- ``HttpPeer``: the headers of each POST (``Accept``, the caller's own headers,
  ``Mcp-Session-Id`` once a handshake-era server handed one out, ``MCP-Protocol-Version``
  on every request after ``initialize``; at 2026-07-28 the version of the request's
  own envelope with ``Mcp-Method`` and ``Mcp-Name``, and a ``tools/call``'s arguments
  its tool marks ``x-mcp-header`` as ``Mcp-Param-*``), how an answer is read (JSON,
  an event stream, nothing) and the error an answer that is no MCP answer means,
  each naming the URL and what to check.
- ``EventStream``: cuts a ``text/event-stream`` body into the data of its events,
  never holding more than ``max_message_bytes`` of one event.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from ..._errors import (
    ConnectionFailed,
    EndpointNotFound,
    HttpStatusError,
    McpError,
    NotAnMcpEndpoint,
    ProtocolError,
)
from ...protocol.constants import INVALID_REQUEST, META_VERSION
from ...protocol.param_headers import (
    HeaderParam,
    encode_header_value,
    header_params,
    param_headers,
)
from .auth import auth_error, parse_challenge

__all__ = [
    "ACCEPT",
    "AnswerKind",
    "EventStream",
    "FailureCallback",
    "HttpPeer",
    "Message",
    "read_message",
    "too_large",
    "url_origin",
]

#: Called by an HTTP transport when one request cannot be answered: the request's
#: id and a function making the error (called only when the request still waits).
FailureCallback = Callable[[int, Callable[[], McpError]], None]

ACCEPT = "application/json, text/event-stream"

#: How to read an answer: a JSON body, an event stream, no body, or an error.
AnswerKind = Literal["json", "sse", "empty", "refused"]

_decode = json.JSONDecoder().decode
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_EXCERPT = 200  # characters of a refused answer's body quoted in its error
_PROBE_REFUSALS = frozenset({400, 405, 406, 415, 422})  # how servers refuse a method they lack


@dataclass(frozen=True, slots=True)
class Message:
    """One outgoing line as the transport sees it."""

    body: bytes
    id: int | None  # our request's id; None for a notification or a reply
    method: str | None  # None for a reply to a server request
    name: str | None  # the Mcp-Name of a 2026-07-28 request
    version: str | None  # the protocol version of a 2026-07-28 request's envelope
    cancels: int | None = None  # the request a ``notifications/cancelled`` gives up
    arguments: Mapping[str, Any] | None = None  # a tools/call's arguments

    @property
    def label(self) -> str:
        """The message as errors name it: ``tools/call 'add'``, ``initialize``."""
        method = self.method or "a reply"
        return f"{method} {self.name!r}" if self.name is not None else method


def read_message(line: bytes) -> Message:
    """What the transport needs of a line the client core wrote (always one JSON object)."""
    message = _decode(line.decode())
    request_id = message.get("id") if "method" in message else None
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    key = _NAME_PARAM.get(method) if isinstance(method, str) else None
    name = params.get(key) if key is not None else None
    meta = params.get("_meta")
    version = meta.get(META_VERSION) if isinstance(meta, dict) else None
    cancels = params.get("requestId") if method == "notifications/cancelled" else None
    arguments = params.get("arguments") if method == "tools/call" else None
    return Message(
        line,
        request_id if type(request_id) is int else None,
        method if isinstance(method, str) else None,
        name if isinstance(name, str) else None,
        version if isinstance(version, str) else None,
        cancels if type(cancels) is int else None,
        arguments if isinstance(arguments, dict) else None,
    )


def too_large(url: str, limit: int) -> ProtocolError:
    return ProtocolError(
        f"{url}: the server sent a message larger than {limit} bytes (the client's "
        "max_message_bytes); raise it if the server's answers are legitimately that large",
        reason="message_too_large",
        data={"limit": limit, "url": url},
    )


class HttpPeer:
    """What one client keeps of one MCP endpoint: its URL, the caller's headers, the
    session id and protocol version the server agreed to."""

    def __init__(self, url: str, headers: Mapping[str, str] | None, max_message_bytes: int) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        self.url = url
        self.max_message_bytes = max_message_bytes
        self._origin = url_origin(url)
        # identity: a compressed body could expand past every bound before we see it
        self._base = {"accept": ACCEPT, "content-type": "application/json"}
        self._base["accept-encoding"] = "identity"
        for key, value in (headers or {}).items():
            if not key or any(c in key + value for c in "\r\n\0"):
                raise ValueError(f"not a header one line can carry: {key!r}: {value!r}")
            self._base[key.lower()] = value
        self.session_id: str | None = None
        self._handshake_version: str | None = None  # agreed by initialize
        self._modern_version: str | None = None  # of the last enveloped request
        # tool name → the arguments its 2026-07-28 calls mirror into Mcp-Param-* headers
        self.param_headers: dict[str, tuple[HeaderParam, ...]] = {}

    def learn_tools(self, tools: Iterable[Mapping[str, Any]]) -> None:
        """Mirror the ``x-mcp-header`` arguments of ``tools`` (descriptors: the
        contract's, or a listing's) into the headers of their calls; a tool whose
        annotations break the rules mirrors nothing (an official client drops it)."""
        for tool in tools:
            name, schema = tool.get("name"), tool.get("inputSchema")
            if isinstance(name, str) and isinstance(schema, dict):
                self.param_headers[name] = header_params(schema)

    # -- what goes out ------------------------------------------------------------

    def headers(self, message: Message) -> dict[str, str]:
        """The headers of the POST carrying ``message``."""
        headers = dict(self._base)
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if message.method == "initialize":
            self._modern_version = None  # the handshake era from here on
            return headers
        if message.version is not None:
            self._modern_version = message.version
        version = message.version or self._handshake_version or self._modern_version
        if version is not None:
            headers["mcp-protocol-version"] = version
        if self._modern_version is not None and self._handshake_version is None:
            if message.method is not None:
                headers["mcp-method"] = message.method
            if message.name is not None:
                headers["mcp-name"] = encode_header_value(message.name)
                mirrored = self.param_headers.get(message.name)
                if mirrored and message.arguments is not None:
                    headers.update(param_headers(mirrored, message.arguments))
        return headers

    def close_headers(self) -> dict[str, str] | None:
        """The headers of the DELETE that ends a handshake-era session (None: no session)."""
        if self.session_id is None:
            return None
        headers = {key: value for key, value in self._base.items() if key != "content-type"}
        headers["mcp-session-id"] = self.session_id
        if self._handshake_version is not None:
            headers["mcp-protocol-version"] = self._handshake_version
        return headers

    # -- what comes back ----------------------------------------------------------

    def redirect(self, status: int, headers: Mapping[str, str]) -> bool:
        """Follow a 307/308 to the same origin (the endpoint moved, the POST stays a
        POST): True after moving ``url``; anything else is left to ``kind``."""
        location = headers.get("location")
        if status not in (307, 308) or not location:
            return False
        target = urljoin(self.url, location)
        if url_origin(target) != self._origin:
            return False
        self.url = target
        return True

    def kind(self, message: Message, status: int, headers: Mapping[str, str]) -> AnswerKind:
        """How to read the answer to ``message``; keeps a session id ``initialize`` got."""
        if message.method == "initialize" and 200 <= status < 300:
            session_id = headers.get("mcp-session-id")
            if session_id:
                self.session_id = session_id
        if not 200 <= status < 300:
            return "refused"
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "text/event-stream":
            return "sse"
        if content_type == "application/json":
            return "json"
        if status in (202, 204) or headers.get("content-length") == "0":
            return "empty"
        return "refused"

    def adopt(self, message: Message, data: bytes) -> None:
        """Note the revision an ``initialize`` answer agreed to (sent from now on)."""
        if message.method != "initialize":
            return
        try:
            answer = _decode(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return
        result = answer.get("result") if isinstance(answer, dict) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self._handshake_version = version

    def refusal(
        self, message: Message, status: int, headers: Mapping[str, str], body: bytes
    ) -> bytes | McpError:
        """What an answer that ``kind`` called refused means: a JSON-RPC error for
        ``message`` (a line to deliver, the server's error under our request's id) or
        the error to fail it with."""
        content_type = headers.get("content-type", "")
        if status in (401, 403):
            challenge = parse_challenge(status, headers.get("www-authenticate", ""))
            return auth_error(self.url, challenge)
        if 300 <= status < 400:
            return HttpStatusError(
                f"{self.url} redirects {message.label} to {headers.get('location', '(nowhere)')} "
                f"({status}); a client follows only 307/308 to the same origin: use the "
                "target URL itself if you trust it",
                status=status,
                url=self.url,
                reason="redirect",
            )
        error = _jsonrpc_error(body) if content_type.startswith("application/json") else None
        if error is None and message.method == "server/discover" and status in _PROBE_REFUSALS:
            # a handshake-era server refusing the probe in its own words: the era probe
            # falls back to initialize on an error, which reports a server truly broken
            error = {"code": INVALID_REQUEST, "message": f"HTTP {status}{_excerpt(body)}"}
        if status == 404 and self.session_id is not None:
            return EndpointNotFound(
                f"{self.url} no longer knows the session {self.session_id} ({message.label}): "
                "it ended or the server restarted; connect a new client",
                url=self.url,
            )
        if error is not None and message.id is not None:
            line = {"jsonrpc": "2.0", "id": message.id, "error": error}
            return json.dumps(line, separators=(",", ":")).encode()
        if status == 404:
            return EndpointNotFound(
                f"{self.url} answered 404 Not Found to {message.label}: no MCP endpoint at "
                "this URL (check its path: mcpgen servers and the official SDKs serve /mcp)",
                url=self.url,
            )
        if 200 <= status < 300:
            return NotAnMcpEndpoint(
                f"{self.url} answered {message.label} with "
                f"{content_type or 'no content type'}, not JSON or an event stream: this is "
                f"not an MCP endpoint (check the URL){_excerpt(body)}",
                url=self.url,
                content_type=content_type,
            )
        return HttpStatusError(
            f"{self.url} answered {message.label} with HTTP {status}{_excerpt(body)} "
            "(check the server's log)",
            status=status,
            url=self.url,
        )

    def unanswered(self, message: Message, last: bytes | None) -> McpError:
        """The error of a request whose answer ended without its response."""
        why = "without a JSON-RPC response to it"
        if last is not None:
            try:
                _decode(last.decode("utf-8"))
            except RecursionError:
                why = "with a message nested too deeply to read"
            except ValueError:  # also bad UTF-8
                why = f"with a message that is not JSON: {last[:_EXCERPT]!r}"
        return ProtocolError(
            f"{self.url}: the server ended its answer to {message.label} {why}",
            reason="no_response",
            data={"url": self.url},
        )

    def unreachable(self, message: Message, exc: BaseException) -> ConnectionFailed:
        return ConnectionFailed(
            f"cannot reach the MCP server at {self.url} ({message.label}): "
            f"{exc or type(exc).__name__}; check that the server is running and listening "
            "at that host and port",
            url=self.url,
        )

    def cut_off(self, message: Message, exc: BaseException) -> ConnectionFailed:
        return ConnectionFailed(
            f"the MCP server at {self.url} closed the connection in the middle of its "
            f"answer to {message.label} ({exc or type(exc).__name__}); check the server's log",
            url=self.url,
        )

    def closed(self) -> ConnectionFailed:
        return ConnectionFailed(f"the HTTP client of {self.url} is closed", url=self.url)


class EventStream:
    """Cuts a ``text/event-stream`` body into the data of its ``message`` events
    (the only kind MCP sends); comments, ``id`` and ``retry`` are skipped. Raises
    ``ProtocolError`` as soon as one event or one line would pass ``max_data`` bytes."""

    __slots__ = ("_data", "_event", "_max", "_pending", "_pending_size", "_size", "_url")

    def __init__(self, url: str, max_data: int) -> None:
        self._pending: list[bytes] = []  # the line not ended yet, in pieces
        self._pending_size = 0
        self._data: list[bytes] = []
        self._size = 0
        self._event = b""
        self._max = max_data
        self._url = url

    def feed(self, chunk: bytes) -> list[bytes]:
        """The data of every event ``chunk`` completes."""
        if b"\n" not in chunk:  # a long line arriving in pieces: joined once, at its end
            self._pending.append(chunk)
            self._pending_size += len(chunk)
            if self._pending_size > self._max + 16:
                raise too_large(self._url, self._max)
            return []
        if self._pending:
            chunk = b"".join([*self._pending, chunk])
            self._pending.clear()
        lines = chunk.split(b"\n")
        tail = lines.pop()
        self._pending_size = len(tail)
        if tail:
            self._pending.append(tail)
        if self._pending_size > self._max + 16:
            raise too_large(self._url, self._max)
        events: list[bytes] = []
        for line in lines:
            event = self._line(line[:-1] if line.endswith(b"\r") else line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: bytes) -> bytes | None:
        if not line:
            return self._dispatch()
        if line.startswith(b":"):
            return None
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self._size += len(value) + 1
            if self._size > self._max:
                raise too_large(self._url, self._max)
            self._data.append(value)
        elif field == b"event":
            self._event = value
        return None

    def _dispatch(self) -> bytes | None:
        data, event = self._data, self._event
        self._data, self._size, self._event = [], 0, b""
        if not data or event not in (b"", b"message"):
            return None
        return data[0] if len(data) == 1 else b"\n".join(data)


def url_origin(url: str) -> tuple[str, str, int | None]:
    """``url``'s origin: scheme, lower-case host and port (the scheme's default if none)."""
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _jsonrpc_error(body: bytes) -> dict[str, Any] | None:
    try:
        answer = _decode(body.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    return error if isinstance(error, dict) else None


def _excerpt(body: bytes) -> str:
    text = body[:_EXCERPT].decode("utf-8", "replace").strip()
    return f": {' '.join(text.split())!r}" if text else ""
