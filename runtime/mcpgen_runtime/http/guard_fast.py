"""``guard``'s deadlines and connection cap on uvicorn's httptools protocol
(the C parser ``llhttp``, from ``uvicorn[standard]``), about twice as fast as h11 per
request. Imported only when httptools is installed and chosen (``--http-parser``).

httptools bounds no request head by itself, so this protocol does: a head over
``MAX_HEAD_BYTES`` (16 KiB, h11's bound) gets ``431`` and the connection is closed.
llhttp reports a chunked body's trailer fields through the same callback as the
head's fields, and uvicorn would append them to the request's headers (where an
identity header could be forged after a proxy checked the head): here trailers
go to a list nobody reads, and the bytes of a chunked body that are not body
(chunk sizes, extensions, trailers) count against the same 16 KiB from the last
body byte on, 431 past it.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .guard import Deadlines

__all__ = ["MAX_HEAD_BYTES", "GuardedHttpToolsProtocol"]

MAX_HEAD_BYTES = 16 * 1024


class GuardedHttpToolsProtocol(Deadlines, HttpToolsProtocol):
    """Deadlines follow the parser's callbacks: a request's head is due from its first
    byte (or from the connection's opening), its body from the end of its head; between
    requests uvicorn's keep-alive timeout applies. A request answered before its body
    was in (421, 413, ...) owes the next head once its body has arrived."""

    _phase = "idle"  # idle | head | body | done (the request is in; its answer is under way)
    _head_bytes = 0  # of the head; of a chunked body: bytes since its last body byte
    _chunked = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self._over_the_cap():
            self._begin_head()  # a connection that never sends a byte is a slow head too

    def _begin_head(self) -> None:
        self._phase = "head"
        self._head_bytes = 0
        self._chunked = False
        self._await("head")

    def data_received(self, data: bytes) -> None:
        phase = self._phase
        if phase == "idle":
            self._begin_head()
            phase = "head"
        if phase == "head":
            self._head_bytes += len(data)
        elif phase == "body" and self._chunked:
            self._chunked_data(data)
            return
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

    def _chunked_data(self, data: bytes) -> None:
        """Feed a piece of a chunked body; what of it is not body counts against the
        head limit (uvicorn's ``on_body`` appends the body to ``cycle.body``, which the
        application empties only between reads; a body answered already is dropped,
        so all of it counts)."""
        cycle = self.cycle
        before = len(cycle.body)
        super().data_received(data)
        if self._phase != "body" or self.transport.is_closing():
            return  # the request is in (or refused)
        body = max(len(cycle.body) - before, 0)
        framing = len(data) - body
        self._head_bytes = framing if body else self._head_bytes + framing
        if self._head_bytes <= MAX_HEAD_BYTES:
            return
        if cycle.response_complete:
            self.transport.close()  # answered already: nothing more is read
            self._closed_with_unsent()
            return
        self._refuse(
            431,
            "Request Header Fields Too Large",
            f"the chunked body's framing and trailers are larger than {MAX_HEAD_BYTES} bytes",
        )

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._phase != "head":  # a pipelined request behind one still answered
            self._begin_head()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self.headers = list(self.headers)  # trailers (llhttp's later on_header) land here
        self._phase = "body"
        self._head_bytes = 0
        self._await("body")

    def on_chunk_header(self) -> None:
        self._chunked = True  # called by httptools for chunked bodies only

    def on_message_complete(self) -> None:
        super().on_message_complete()
        if self.cycle.response_complete:
            self._begin_head()  # answered before its body: the next head is due now
            return
        self._phase = "done"
        self._clear()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._closed_with_unsent()
        if self._phase == "done":
            self._phase = "idle"

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_watching()
        super().connection_lost(exc)
