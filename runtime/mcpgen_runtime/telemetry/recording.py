"""What a client session's and a server's telemetry share (``telemetry.client``,
``telemetry.server``): the side's instruments, the attributes an operation starts
with, its span ended and its duration recorded, and the session's duration. The two
sides differ only in what the conventions make them differ in: the span's kind, the
metric names (``mcp.client.*``, ``mcp.server.*``) and their own attributes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .otel import METHOD, OPERATION, PROTOCOL_VERSION, TOOL_NAME, Instruments

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

__all__ = ["Recording", "end_span", "use_span"]


class Recording:
    """The recording side of a session or a server: ``common``, the attributes every
    operation and the session carry (the transport; the client's server address and
    port too)."""

    def __init__(
        self,
        side: str,
        common: dict[str, Any],
        tracer_provider: TracerProvider | None,
        meter_provider: MeterProvider | None,
    ) -> None:
        self.instruments = Instruments(side, tracer_provider, meter_provider)
        self.common = common
        self.opened = time.perf_counter()

    def attributes(self, method: str, tool: str | None) -> dict[str, Any]:
        """The attributes an operation starts with, shared by its span and histogram."""
        attributes = {METHOD: method, **self.common}
        if tool is not None:
            attributes[TOOL_NAME] = tool
            attributes[OPERATION] = "execute_tool"
        return attributes

    def record(
        self, seconds: float, attributes: dict[str, Any], learnt: dict[str, Any] | None = None
    ) -> None:
        """An operation's duration: ``mcp.<side>.operation.duration``, with its
        ``attributes`` (updated with what was ``learnt`` since it started)."""
        histogram = self.instruments.operation
        if histogram is not None:
            if learnt:
                attributes.update(learnt)
            histogram.record(seconds, attributes)

    def record_session(self, version: str | None) -> None:
        """The session's duration until now: ``mcp.<side>.session.duration``."""
        histogram = self.instruments.session
        if histogram is None:
            return
        attributes = dict(self.common)
        if version is not None:
            attributes[PROTOCOL_VERSION] = version
        histogram.record(time.perf_counter() - self.opened, attributes)


def use_span(span: Span) -> AbstractContextManager[Span]:
    """``span`` is the current one inside (not ended on leaving; an exception is
    neither recorded on it nor sets its status: the side says what failed)."""
    from opentelemetry import trace

    return trace.use_span(span, record_exception=False, set_status_on_exception=False)


def end_span(span: Span, attributes: dict[str, Any], error: str | None) -> None:
    """End ``span`` with ``attributes`` added (those it started with are kept) and,
    where ``error`` is not None, an error status described by it."""
    span.set_attributes(attributes)
    if error is not None:
        from opentelemetry.trace import StatusCode

        span.set_status(StatusCode.ERROR, error)
    span.end()
