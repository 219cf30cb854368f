"""``guard``'s deadlines and connection cap on uvicorn's httptools protocol
(the C parser ``llhttp``, from ``uvicorn[standard]``), about twice as fast as h11 per
request. Imported only when httptools is installed and chosen (``--http-parser``).

httptools bounds no request head by itself, so this protocol does: a head over
``MAX_HEAD_BYTES`` (16 KiB, h11's bound) gets ``431`` and the connection is closed.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .guard import _Deadlines

__all__ = ["MAX_HEAD_BYTES", "GuardedHttpToolsProtocol"]

MAX_HEAD_BYTES = 16 * 1024


class GuardedHttpToolsProtocol(_Deadlines, HttpToolsProtocol):
    """Deadlines follow the parser's callbacks: a request's head is due from its first
    byte (or from the connection's opening), its body from the end of its head; between
    requests uvicorn's keep-alive timeout applies."""

    _phase = "idle"  # idle | head | body | done (the request is in; its answer is under way)
    _head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self._over_the_cap():
            self._begin_head()  # a connection that never sends a byte is a slow head too

    def _begin_head(self) -> None:
        self._phase = "head"
        self._head_bytes = 0
        self._await("head")

    def data_received(self, data: bytes) -> None:
        if self._phase == "idle":
            self._begin_head()
        if self._phase == "head":
            self._head_bytes += len(data)
        super().data_received(data)
        if (
            self._phase == "head"
            and self._head_bytes > MAX_HEAD_BYTES
            and not self.transport.is_closing()
        ):
            self._refuse(
                431,
                "Request Header Fields Too Large",
                f"the request head is larger than {MAX_HEAD_BYTES} bytes",
            )

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._phase != "head":  # a pipelined request behind one still answered
            self._begin_head()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._phase = "body"
        self._await("body")

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._phase = "done"
        self._clear()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._phase == "done":
            self._phase = "idle"

    def connection_lost(self, exc: Exception | None) -> None:
        self._clear()
        super().connection_lost(exc)
