"""The loopback redirect of the authorization code grant (RFC 8252 §7.3): a one-shot
HTTP listener on 127.0.0.1 that waits for the authorization server to send the
person's browser back with ``code``, ``state`` and ``iss``.

It reads one request line and the headers (bounded), answers a short page telling
the person to return to the terminal, and hands the request target to the waiting
grant; requests for other paths (a browser's ``/favicon.ico``) get 404.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Self
from urllib.parse import urlsplit

__all__ = ["LoopbackRedirect"]

_MAX_HEAD = 16 * 1024  # bytes of request line and headers read
_READ_TIMEOUT = 10.0  # seconds a connection may take to send its request
_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Authorization</title>"
    b"<p>The MCP client received the authorization response. You can close this "
    b"window and return to the terminal.</p>"
)


class LoopbackRedirect:
    """``async with LoopbackRedirect(port, path) as redirect``: ``redirect.uri`` is the
    redirect URI to register; ``await redirect.target()`` the request target
    (path and query) the browser came back with."""

    def __init__(self, port: int = 0, path: str = "/callback") -> None:
        if not path.startswith("/"):
            raise ValueError(f"a redirect path starts with '/': {path!r}")
        self.port = port
        self.path = path
        self._server: asyncio.Server | None = None
        self._arrived: asyncio.Future[str] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def __aenter__(self) -> Self:
        self._arrived = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, limit=_MAX_HEAD
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        if self._arrived is not None and not self._arrived.done():
            self._arrived.cancel()

    async def target(self) -> str:
        """The request target of the redirect (waits for it)."""
        assert self._arrived is not None, "use `async with`"
        return await self._arrived

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_READ_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            writer.close()
            return
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        target = parts[1] if len(parts) == 3 and parts[0] == "GET" else ""
        ours = urlsplit(target).path == self.path
        status, body = (b"200 OK", _PAGE) if ours else (b"404 Not Found", b"not found")
        writer.write(
            b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Cache-Control: no-store\r\nConnection: close\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()
        if ours and self._arrived is not None and not self._arrived.done():
            self._arrived.set_result(target)
