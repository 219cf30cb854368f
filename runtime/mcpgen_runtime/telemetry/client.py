"""What a client session records: a ``CLIENT`` span per operation (``tools/call``,
``tools/list``, any ``request``), whose context goes to the server in
``params._meta``; the ``mcp.client.operation.duration`` and
``mcp.client.session.duration`` histograms.

The sessions (``client.sync``, ``client.aio``) build one ``ClientTelemetry`` when they
connect, with ``ClientTelemetry.start``, which answers None while no OpenTelemetry
provider records: an uninstrumented call then costs one ``is None`` test. An
operation is a context manager (``operation``) around the session's flow: its span is
the current one while the flow runs, so every request the flow prepares
(``prepared``: a task's polls too) carries it as the parent, and the first request's
id names the span's ``jsonrpc.request.id``. The operation in progress is kept in a
context variable, so calls from several threads or tasks of one session stay apart.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._errors import ProtocolError, Timeout, ToolError
from .otel import (
    ERROR_TYPE,
    JSONRPC_REQUEST_ID,
    NETWORK_TRANSPORT,
    PROTOCOL_VERSION,
    STATUS_CODE,
    TOOL_ERROR,
    inject_meta,
    providers,
    span_name,
)
from .recording import Recording, end_span, use_span

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

__all__ = ["ClientOperation", "ClientTelemetry", "error_type"]


class ClientOperation:
    """One operation in progress: its span (None without a tracer), the attributes
    its histogram shares with the span, whether its request id is known, and what
    failed (the span's error status, None while nothing has)."""

    __slots__ = ("attributes", "error", "identified", "span")

    def __init__(self, span: Span | None, attributes: dict[str, Any]) -> None:
        self.span = span
        self.attributes = attributes
        self.identified = False
        self.error: str | None = None


_CURRENT: contextvars.ContextVar[ClientOperation | None] = contextvars.ContextVar(
    "mcpgen_client_operation", default=None
)


class ClientTelemetry(Recording):
    """The recording side of one client session."""

    def __init__(
        self,
        transport: str,
        *,
        server_address: str | None = None,
        server_port: int | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        common: dict[str, Any] = {NETWORK_TRANSPORT: transport}
        if server_address is not None:
            common["server.address"] = server_address
            if server_port is not None:
                common["server.port"] = server_port
        super().__init__("client", common, tracer_provider, meter_provider)

    @classmethod
    def start(
        cls, transport: str, server_address: str | None = None, server_port: int | None = None
    ) -> ClientTelemetry | None:
        """The telemetry of a session connecting now, with the global providers;
        None when they record nothing."""
        found = providers()
        if found is None:
            return None
        return cls(
            transport,
            server_address=server_address,
            server_port=server_port,
            tracer_provider=found[0],
            meter_provider=found[1],
        )

    @contextlib.contextmanager
    def operation(self, method: str, tool: str | None, version: str) -> Iterator[None]:
        """Around one operation of the session (see the module docstring)."""
        attributes = self.attributes(method, tool)
        if version:
            attributes[PROTOCOL_VERSION] = version
        span = None
        tracer = self.instruments.tracer
        if tracer is not None:
            from opentelemetry.trace import SpanKind

            span = tracer.start_span(span_name(method, tool), kind=SpanKind.CLIENT)
        current = ClientOperation(span, attributes)
        token = _CURRENT.set(current)
        started = time.perf_counter()
        try:
            if span is None:
                yield
            else:
                with use_span(span):
                    yield
        except BaseException as exc:
            self._failed(current, exc)
            raise
        finally:
            _CURRENT.reset(token)
            self._ended(current, time.perf_counter() - started)

    def prepared(self, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """A request of the current operation is being prepared: ``params`` with the
        trace context in its ``_meta``."""
        current = _CURRENT.get()
        if current is None or current.span is None:
            return params
        return inject_meta(params)

    def identify(self, request_id: int) -> None:
        """The id of the request just prepared: the operation's, if it is the first."""
        current = _CURRENT.get()
        if current is not None and not current.identified and current.span is not None:
            current.identified = True
            current.span.set_attribute(JSONRPC_REQUEST_ID, str(request_id))

    def _failed(self, current: ClientOperation, exc: BaseException) -> None:
        kind = error_type(exc)
        current.attributes[ERROR_TYPE] = kind
        if isinstance(exc, ProtocolError) and exc.code is not None:
            current.attributes[STATUS_CODE] = str(exc.code)
        current.error = str(exc)[:500] or kind

    def _ended(self, current: ClientOperation, seconds: float) -> None:
        if current.span is not None:
            end_span(current.span, current.attributes, current.error)
        self.record(seconds, current.attributes)

    def session_ended(self, version: str) -> None:
        """The session closed: ``mcp.client.session.duration``."""
        self.record_session(version or None)


def error_type(exc: BaseException) -> str:
    """``error.type`` of an operation that raised ``exc``: ``tool_error`` for an
    ``isError`` result, the JSON-RPC code of an error answer, ``timeout``, else the
    exception's class name."""
    if isinstance(exc, ToolError):
        return TOOL_ERROR
    if isinstance(exc, ProtocolError) and exc.code is not None:
        return str(exc.code)
    if isinstance(exc, Timeout):
        return "timeout"
    return type(exc).__qualname__
