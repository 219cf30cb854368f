"""The opt-in handler context: cancellation, progress, logging and asking the caller.

A handler that declares a ``ctx`` parameter receives a ``Context``; handlers
that do not keep their plain signatures. Everything here is safe to call from
the worker thread or event loop a handler runs on.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from ..auth.tokens import AuthInfo
from ..protocol.asking import Answer, Declined, schema_problem
from ..protocol.jsonrpc import encode

__all__ = ["LOG_LEVELS", "Asker", "Cancelled", "Context"]

# RFC 5424 severities, least severe first.
LOG_LEVELS: tuple[str, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)  # fmt: skip
_SEVERITY = {name: index for index, name in enumerate(LOG_LEVELS)}


class Cancelled(Exception):
    """Raised by ``Context.raise_if_cancelled()``; the call's reply is suppressed."""


class Asker(Protocol):
    """How this call's questions reach its caller (``server.asking``); ``streams``:
    the questions go out beside the call's answer (a stateless shell streams it)."""

    streams: bool

    def answer(
        self, message: str, schema: Mapping[str, Any], timeout: float | None, ctx: Context
    ) -> Answer: ...

    async def answer_async(
        self, message: str, schema: Mapping[str, Any], timeout: float | None, ctx: Context
    ) -> Answer: ...


class Context:
    """Per-call services for a handler: ``cancelled``, ``report_progress``, ``log``,
    ``ask`` (``ask_sync`` in a sync handler); ``auth``, who called (the verified
    token's ``AuthInfo``) where the server checks tokens."""

    NONE: ClassVar[Context]  # a detached context: never cancelled, reports nothing

    def __init__(
        self,
        *,
        request_id: Any = None,
        progress_token: Any = None,
        emit: Callable[[bytes], None] | None = None,
        log_level: str | None = None,
        logger: str = "",
        progress_messages: bool = True,
        task_id: str | None = None,
        auth: AuthInfo | None = None,
        asker: Asker | None = None,
    ) -> None:
        self.request_id = request_id
        # the caller's verified token over HTTP with authorization; None on stdio and
        # on a server that checks no tokens
        self.auth = auth
        self.task_id = task_id
        self._progress_token = progress_token
        self._emit = emit
        self._log_threshold = _SEVERITY.get(log_level, None) if log_level is not None else None
        self._logger = logger
        self._progress_messages = progress_messages
        self._last_progress: float | None = None
        self._cancelled = threading.Event()
        self.asker = asker  # None: this call cannot ask (ask answers Declined)
        self._waits: list[concurrent.futures.Future[Any]] = []

    @property
    def notifies(self) -> bool:
        """Whether this call's caller asked for anything (progress, or logs at some
        level) or may be asked something (a handshake-era ask): a shell that has a
        choice answers the call on a stream only then."""
        asks = self.asker is not None and self.asker.streams
        return self._progress_token is not None or self._log_threshold is not None or asks

    @property
    def can_send(self) -> bool:
        """Whether a frame this call sends reaches its caller (else it is dropped)."""
        return self._emit is not None

    def send_to(self, emit: Callable[[bytes], None] | None) -> None:
        """Where this context's notifications go from now on (``None``: nowhere)."""
        self._emit = emit

    def send_frame(self, frame: bytes) -> None:
        """Send a frame to the caller (an ask's request) where notifications go."""
        if self._emit is not None:
            self._emit(frame)

    # -- cancellation ---------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        """True once the caller cancelled this call (sync handlers poll this)."""
        return self._cancelled.is_set()

    def raise_if_cancelled(self) -> None:
        if self._cancelled.is_set():
            raise Cancelled(f"request {self.request_id!r} was cancelled")

    def cancel(self) -> None:
        self._cancelled.set()
        for future in self._waits:
            future.cancel()  # an ask waiting for its answer stops waiting

    def watch(self, future: concurrent.futures.Future[Any]) -> None:
        """Cancel ``future`` (an ask's answer) when this call is cancelled."""
        self._waits.append(future)
        if self._cancelled.is_set():
            future.cancel()

    # -- asking the caller ---------------------------------------------------------

    async def ask(
        self, message: str, schema: Mapping[str, Any], *, timeout: float | None = None
    ) -> Answer:
        """Ask the caller (its user) for input: ``Accepted(value)`` with ``value``
        checked against ``schema`` (a flat object of primitives, as MCP elicitation
        allows), ``Declined()`` or ``Dismissed()``. A caller that cannot answer (no
        elicitation capability, no ``on_input``, a task, no answer within ``timeout``
        seconds, 300 by default) declines. At 2026-07-28 the handler is run again
        from the top once the answer comes (see ``server.asking``): code before an
        ``ask`` must be safe to repeat. A schema elicitation cannot carry is a
        ``TypeError`` here."""
        _check_question(message, schema)
        if self.asker is None:
            return Declined()
        return await self.asker.answer_async(message, schema, timeout, self)

    def ask_sync(
        self, message: str, schema: Mapping[str, Any], *, timeout: float | None = None
    ) -> Answer:
        """``ask`` for a sync handler (it blocks this call's worker thread)."""
        _check_question(message, schema)
        if self.asker is None:
            return Declined()
        return self.asker.answer(message, schema, timeout, self)

    # -- progress and logs --------------------------------------------------------

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` when the caller asked for progress.

        Progress must increase; a value not above the last one is dropped.
        """
        if self._emit is None or self._progress_token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self._progress_messages:
            params["message"] = message
        self._emit(encode({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}))

    def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` when the caller's log level admits ``level``."""
        severity = _SEVERITY.get(level)
        if severity is None:
            raise ValueError(f"unknown log level {level!r}; one of {', '.join(LOG_LEVELS)}")
        if self._emit is None or self._log_threshold is None or severity < self._log_threshold:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger or self._logger:
            params["logger"] = logger or self._logger
        self._emit(encode({"jsonrpc": "2.0", "method": "notifications/message", "params": params}))

    def debug(self, data: Any) -> None:
        self.log("debug", data)

    def info(self, data: Any) -> None:
        self.log("info", data)

    def warning(self, data: Any) -> None:
        self.log("warning", data)

    def error(self, data: Any) -> None:
        self.log("error", data)


def _check_question(message: object, schema: Mapping[str, Any]) -> None:
    if not isinstance(message, str):
        raise TypeError(f"ctx.ask: the message must be a str, not {type(message).__name__}")
    problem = schema_problem(schema)
    if problem is not None:
        raise TypeError(f"ctx.ask: {problem}")


Context.NONE = Context()
