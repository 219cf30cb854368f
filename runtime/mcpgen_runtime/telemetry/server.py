"""What a server records of each request: a ``SERVER`` span, the
``mcp.server.operation.duration`` histogram and a request log line.

The shells (``server.stdio``, ``http.exchange``, ``http.task_layer``) call this module; the
sans-I/O core stays out of it (it only hands the stdio shell each decoded message
with its actions, ``ServerConnection.observe``). A shell builds one
``ServerTelemetry`` when it starts serving, with ``ServerTelemetry.start``, which
answers None when there is nothing to record (no OpenTelemetry provider installed,
request lines off): an unobserved request then costs one ``is None`` test.

Per request: ``begin`` (the message, when it arrived) gives an ``Observation``;
``end`` closes it with the answer's code (a frame the core answered with), or
``finished`` with a call's outcome. The parent of the span is the context
the request's ``params._meta`` carries; a transport's own context (HTTP trace
headers) is linked, not parented, as the conventions say. A task's execution is a
span of its own (``task_started``), linked to the call that started it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..protocol.constants import META_VERSION
from ..protocol.jsonrpc import INTERNAL_ERROR
from .logs import log_request, request_logging
from .otel import (
    ARGUMENTS,
    CLIENT_ADDRESS,
    ERROR_TYPE,
    JSONRPC_REQUEST_ID,
    NETWORK_TRANSPORT,
    OPERATION,
    PROTOCOL_VERSION,
    RESULT,
    STATUS_CODE,
    TOOL_ERROR,
    TOOL_NAME,
    capture_content_from_environment,
    content_value,
    extract_meta,
    providers,
    span_name,
)
from .recording import Recording, end_span, use_span

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, SpanContext, TracerProvider

__all__ = ["Observation", "ServerTelemetry", "TaskObservation"]

_NOTHING = contextlib.nullcontext()  # reusable: it holds no state


class Observation:
    """One request being observed."""

    __slots__ = ("attributes", "method", "request_id", "requestor", "span", "started", "tool",
                 "trace_id", "version")  # fmt: skip

    def __init__(
        self,
        method: str,
        request_id: Any,
        tool: str | None,
        started: float,
        attributes: dict[str, Any],
    ) -> None:
        self.method = method
        self.request_id = request_id
        self.tool = tool
        self.started = started  # time.perf_counter() when the request arrived
        self.span: Span | None = None
        self.attributes = attributes  # those the histogram shares with the span
        self.requestor: str | None = None
        self.trace_id: str | None = None
        self.version: str | None = None


class TaskObservation:
    """The execution of one task: its span (None without a tracer)."""

    __slots__ = ("span",)

    def __init__(self, span: Span | None) -> None:
        self.span = span


class ServerTelemetry(Recording):
    """The recording side of one server process (see the module docstring)."""

    def __init__(
        self,
        transport: str,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        capture_content: bool = False,
        log: bool = True,
    ) -> None:
        super().__init__("server", {NETWORK_TRANSPORT: transport}, tracer_provider, meter_provider)
        self.transport = transport  # network.transport: "pipe" (stdio) or "tcp"
        self.providers = (tracer_provider, meter_provider)
        self.capture_content = capture_content
        self.log = log
        self.last_version: str | None = None  # a stdio session's (2026-07-28: per request)

    @classmethod
    def start(cls, transport: str, capture_content: bool | None = None) -> ServerTelemetry | None:
        """The telemetry of a server starting now over ``transport``, with the global
        providers and the request log's setting; None when nothing would be recorded."""
        found = providers()
        log = request_logging()
        if found is None and not log:
            return None
        tracer_provider, meter_provider = found if found is not None else (None, None)
        if capture_content is None:
            capture_content = capture_content_from_environment()
        return cls(
            transport,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            capture_content=capture_content,
            log=log,
        )

    # -- a request ----------------------------------------------------------------------

    def begin(
        self,
        message: Mapping[str, Any],
        started: float,
        *,
        client_address: str | None = None,
        requestor: str | None = None,
        transport_context: Context | None = None,
    ) -> Observation:
        """A request (a valid id and a string method) that arrived at ``started``
        (``time.perf_counter()``): its span opened, started back then."""
        method = message["method"]
        params = message.get("params")
        params = params if isinstance(params, Mapping) else {}
        tool = params.get("name") if method == "tools/call" else None
        tool = tool if isinstance(tool, str) else None
        obs = Observation(method, message["id"], tool, started, self.attributes(method, tool))
        obs.requestor = requestor if requestor is not None else client_address
        meta = params.get("_meta")
        if isinstance(meta, Mapping):
            version = meta.get(META_VERSION)
            obs.version = version if isinstance(version, str) else None
        tracer = self.instruments.tracer
        if tracer is None:
            obs.trace_id = _traceparent_trace_id(meta)
            return obs
        obs.span = self._open_span(obs, meta, started, client_address, transport_context)
        if self.capture_content and obs.tool is not None:
            obs.span.set_attribute(ARGUMENTS, content_value(params.get("arguments")))
        obs.trace_id = format(obs.span.get_span_context().trace_id, "032x")
        return obs

    def _open_span(
        self,
        obs: Observation,
        meta: Any,
        started: float,
        client_address: str | None,
        transport_context: Context | None,
    ) -> Span:
        from opentelemetry import trace

        assert self.instruments.tracer is not None
        links = []
        if transport_context is not None:
            linked = trace.get_current_span(transport_context).get_span_context()
            if linked.is_valid:
                links.append(trace.Link(linked))
        start_ns = time.time_ns() - int((time.perf_counter() - started) * 1e9)
        span = self.instruments.tracer.start_span(
            span_name(obs.method, obs.tool),
            context=extract_meta(meta),
            kind=trace.SpanKind.SERVER,
            attributes=obs.attributes,
            links=links,
            start_time=start_ns,
        )
        span.set_attribute(JSONRPC_REQUEST_ID, str(obs.request_id))
        if client_address is not None:
            span.set_attribute(CLIENT_ADDRESS, client_address)
        return span

    @property
    def traces(self) -> bool:
        """Whether spans are recorded (else only metrics and log lines)."""
        return self.instruments.tracer is not None

    def context_of(self, obs: Observation) -> Context | None:
        """A context whose current span is the request's (handlers run in it)."""
        if obs.span is None:
            return None
        from opentelemetry import trace

        return trace.set_span_in_context(obs.span)

    def current(self, obs: Observation) -> contextlib.AbstractContextManager[object]:
        """The request's span is the current one inside (not ended on leaving); with
        no span, a shared no-op (a request that is only logged builds nothing)."""
        if obs.span is None:
            return _NOTHING
        return use_span(obs.span)

    def current_caller(self) -> SpanContext | None:
        """The current span's context (a task's starting call, where it runs in it)."""
        if self.instruments.tracer is None:
            return None
        from opentelemetry import trace

        return trace.get_current_span().get_span_context()

    def finished(
        self,
        obs: Observation,
        outcome: Any,
        version: str | None = None,
        http_status: int | None = None,
    ) -> None:
        """The call of ``obs`` ended with ``outcome`` (a ``CallOutcome``)."""
        if outcome.cancelled:
            self.end(obs, cancelled=True, version=version, http_status=http_status)
        elif outcome.result is None:
            self.end(obs, code=INTERNAL_ERROR, version=version, http_status=http_status)
        else:
            self.end(obs, result=outcome.result, version=version, http_status=http_status)

    def end(
        self,
        obs: Observation,
        *,
        code: int | None = None,
        result: Mapping[str, Any] | None = None,
        cancelled: bool = False,
        version: str | None = None,
        http_status: int | None = None,
    ) -> None:
        """Close the span, record the duration, write the log line."""
        seconds = time.perf_counter() - obs.started
        version = obs.version or version
        learnt: dict[str, Any] = {}  # what the span did not have when it started
        if version is not None:
            learnt[PROTOCOL_VERSION] = self.last_version = version
        status = "ok"
        if code is not None:
            learnt[ERROR_TYPE] = learnt[STATUS_CODE] = str(code)
            status = "error"
        elif cancelled:
            status = learnt[ERROR_TYPE] = "cancelled"
        elif result is not None and result.get("isError") is True:
            status = learnt[ERROR_TYPE] = TOOL_ERROR
        span = obs.span
        if span is not None:
            self._close_span(span, learnt, status, result)
        self.record(seconds, obs.attributes, learnt)
        if self.log:
            log_request(
                {
                    "method": obs.method,
                    "tool": obs.tool,
                    "status": status,
                    "code": code,
                    "http_status": http_status,
                    "duration_ms": round(seconds * 1000, 3),
                    "requestor": obs.requestor,
                    "request_id": obs.request_id,
                    "trace_id": obs.trace_id,
                }
            )

    def _close_span(
        self, span: Span, attributes: dict[str, Any], status: str, result: Mapping[str, Any] | None
    ) -> None:
        """End ``span`` with ``attributes`` added (those it started with are kept)."""
        if status == "ok" and self.capture_content and result is not None:
            attributes = {**attributes, RESULT: content_value(result)}
        end_span(span, attributes, None if status == "ok" else attributes.get(ERROR_TYPE))

    # -- tasks and the session -------------------------------------------------------------

    def task_started(self, tool: str, task_id: str, caller: SpanContext | None) -> TaskObservation:
        """A task's execution begins: a span of its own (a new trace), linked to the
        call that started it."""
        tracer = self.instruments.tracer
        if tracer is None:
            return TaskObservation(None)
        from opentelemetry import context, trace

        links = [trace.Link(caller)] if caller is not None and caller.is_valid else []
        span = tracer.start_span(
            span_name("execute_tool", tool),
            context=context.Context(),  # a root: the task outlives the call
            kind=trace.SpanKind.INTERNAL,
            attributes={
                TOOL_NAME: tool,
                OPERATION: "execute_tool",
                "mcp.task.id": task_id,
                NETWORK_TRANSPORT: self.transport,
            },
            links=links,
        )
        return TaskObservation(span)

    def task_finished(self, task: TaskObservation, outcome: Any) -> None:
        span = task.span
        if span is None:
            return
        attributes: dict[str, Any] = {}
        if outcome.cancelled:
            attributes[ERROR_TYPE] = "cancelled"
        elif outcome.result is None:
            attributes[ERROR_TYPE] = str(INTERNAL_ERROR)
        elif outcome.result.get("isError") is True:
            attributes[ERROR_TYPE] = TOOL_ERROR
        self._close_span(span, attributes, attributes.get(ERROR_TYPE, "ok"), outcome.result)

    def flush(self, timeout_millis: int = 5000) -> None:
        """Export what the providers still hold (a server about to exit: uvicorn ends the
        process on the signal that stopped it, so ``atexit`` never runs)."""
        for provider in self.providers:
            force_flush = getattr(provider, "force_flush", None)
            if force_flush is not None:  # the SDK's providers have it; the API's need none
                force_flush(timeout_millis)

    def session_ended(self, version: str | None) -> None:
        """The one session of a stdio server ended: ``mcp.server.session.duration``."""
        self.record_session(version or self.last_version)


def _traceparent_trace_id(meta: Any) -> str | None:
    """The trace id of a W3C ``traceparent`` in ``_meta`` (no tracer to parse it)."""
    if not isinstance(meta, Mapping):
        return None
    value = meta.get("traceparent")
    if isinstance(value, str) and len(value) >= 55 and value[2] == "-" and value[35] == "-":
        trace_id = value[3:35]
        if all(c in "0123456789abcdef" for c in trace_id) and trace_id != "0" * 32:
            return trace_id
    return None
