"""``HttpTransport``: the Streamable HTTP transport of the sync session, the asyncio
one (``aio``) run on an event loop of its own thread.

One implementation of the wire serves both sessions: the loop thread plays the part
a stdio transport's reader thread plays (it calls ``on_line``, so progress callbacks
run there), a request's POST is handed to it without waiting, and the session's
wait on its lock bounds the whole call. Notifications other than cancellations wait
for their POST, so they reach the server in order.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from ..._errors import McpError
from ..lines import DEFAULT_MAX_MESSAGE_BYTES, CloseCallback, LineCallback
from .aio import AsyncHttpTransport
from .auth import HttpAuth
from .wire import FailureCallback, HttpPeer, Message, read_message

__all__ = ["HttpTransport"]

T = TypeVar("T")

logger = logging.getLogger("mcpgen.client")

_STOP_TIMEOUT = 10.0  # seconds stop() waits for the loop thread


class HttpTransport:
    """``AsyncHttpTransport`` behind the sync transport interface."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 30.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        auth: HttpAuth | None = None,
    ) -> None:
        self._inner = AsyncHttpTransport(
            url,
            headers=headers,
            connect_timeout=connect_timeout,
            max_message_bytes=max_message_bytes,
            auth=auth,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def url(self) -> str:
        return self._inner.url

    @property
    def peer(self) -> HttpPeer:
        return self._inner.peer

    @property
    def on_failure(self) -> FailureCallback | None:
        return self._inner.on_failure

    @on_failure.setter
    def on_failure(self, callback: FailureCallback | None) -> None:
        self._inner.on_failure = callback

    def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="mcpgen-http", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            self._run(self._inner.start(on_line, on_close))
        except BaseException:
            self.stop()  # no loop thread outlives a start that failed (an authorization)
            raise

    def send(self, line: bytes) -> None:
        loop = self._loop
        if loop is None or self._stopped:
            raise self._inner.exit_error()
        message = read_message(line)
        waits = message.id is None and message.cancels is None
        if waits and threading.current_thread() is not self._thread:
            self._run(self._inner.send_message(message))
        else:
            loop.call_soon_threadsafe(self._post_quietly, message)

    def _post_quietly(self, message: Message) -> None:
        try:
            self._inner.post_nowait(message)
        except McpError as exc:  # closed meanwhile
            failure = exc
            if message.id is not None and self._inner.on_failure is not None:
                self._inner.on_failure(message.id, lambda: failure)

    def stop(self) -> None:
        """Stop the inner transport, then the loop and its thread; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            self._run(self._inner.stop(), _STOP_TIMEOUT)
        except (TimeoutError, concurrent.futures.TimeoutError):
            logger.warning("closing the HTTP client of %s took too long", self.url)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(_STOP_TIMEOUT)
            if not thread.is_alive():
                loop.close()

    def exit_error(self) -> McpError:
        return self._inner.exit_error()

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)
