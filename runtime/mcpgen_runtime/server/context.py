"""The opt-in handler context: cancellation, progress and logging for one call.

A handler that declares a ``ctx`` parameter receives a ``Context``; handlers
that do not keep their plain signatures. Everything here is safe to call from
the worker thread or event loop a handler runs on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from ..auth.tokens import AuthInfo
from ..protocol.jsonrpc import encode

__all__ = ["LOG_LEVELS", "Cancelled", "Context"]

# RFC 5424 severities, least severe first.
LOG_LEVELS: tuple[str, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)  # fmt: skip
_SEVERITY = {name: index for index, name in enumerate(LOG_LEVELS)}


class Cancelled(Exception):
    """Raised by ``Context.raise_if_cancelled()``; the call's reply is suppressed."""


class Context:
    """Per-call services for a handler: ``cancelled``, ``report_progress``, ``log``;
    ``auth``, who called (the verified token's ``AuthInfo``) where the server checks tokens."""

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

    @property
    def notifies(self) -> bool:
        """Whether this call's caller asked for anything (progress, or logs at some
        level): a shell that has a choice answers the call on a stream only then."""
        return self._progress_token is not None or self._log_threshold is not None

    def send_to(self, emit: Callable[[bytes], None] | None) -> None:
        """Where this context's notifications go from now on (``None``: nowhere)."""
        self._emit = emit

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


Context.NONE = Context()
