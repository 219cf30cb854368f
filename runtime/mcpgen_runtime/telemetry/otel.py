"""OpenTelemetry per the MCP semantic conventions (the GenAI conventions' ``mcp.md``):
the names, the instruments and the ``_meta`` propagation every shell shares.

Only ``opentelemetry-api`` is a dependency, and it is imported only when telemetry
can record: ``providers`` answers None while no tracer or meter provider beyond the
API's own proxies and no-ops is installed (no SDK, nothing configured), and looks no
further than ``sys.modules`` while nobody has imported OpenTelemetry at all. A shell
asks once when it starts serving (a server) or connecting (a client), so an
uninstrumented request pays one ``is None`` test.

Propagation follows the conventions: the W3C keys ``traceparent``, ``tracestate``
and ``baggage`` travel unprefixed in ``params._meta``, read and written with the
globally configured propagators.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import Histogram, MeterProvider
    from opentelemetry.trace import Tracer, TracerProvider

__all__ = [
    "ARGUMENTS",
    "CAPTURE_CONTENT_ENV",
    "CLIENT_ADDRESS",
    "CLIENT_OPERATION_DURATION",
    "CLIENT_SESSION_DURATION",
    "DURATION_BUCKETS",
    "ERROR_TYPE",
    "JSONRPC_REQUEST_ID",
    "METHOD",
    "NETWORK_TRANSPORT",
    "OPERATION",
    "PROTOCOL_VERSION",
    "RESULT",
    "SCOPE",
    "SERVER_OPERATION_DURATION",
    "SERVER_SESSION_DURATION",
    "SESSION_ID",
    "STATUS_CODE",
    "TOOL_ERROR",
    "TOOL_NAME",
    "TRACE_KEYS",
    "Instruments",
    "capture_content_from_environment",
    "content_value",
    "extract_meta",
    "inject_meta",
    "providers",
    "span_name",
]

SCOPE = "mcpgen_runtime"  # the instrumentation scope of every span and instrument

# attribute keys (mcp.md, spans and metrics)
METHOD = "mcp.method.name"
TOOL_NAME = "gen_ai.tool.name"
OPERATION = "gen_ai.operation.name"  # "execute_tool" on tools/call only
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
PROTOCOL_VERSION = "mcp.protocol.version"
SESSION_ID = "mcp.session.id"
NETWORK_TRANSPORT = "network.transport"  # "pipe" (stdio) or "tcp" (HTTP)
CLIENT_ADDRESS = "client.address"
ERROR_TYPE = "error.type"  # the JSON-RPC code as a string, or TOOL_ERROR
STATUS_CODE = "rpc.response.status_code"
ARGUMENTS = "gen_ai.tool.call.arguments"  # opt-in (capture_content)
RESULT = "gen_ai.tool.call.result"  # opt-in (capture_content)
TOOL_ERROR = "tool_error"  # error.type of a CallToolResult with isError: true

SERVER_OPERATION_DURATION = "mcp.server.operation.duration"
CLIENT_OPERATION_DURATION = "mcp.client.operation.duration"
SERVER_SESSION_DURATION = "mcp.server.session.duration"
CLIENT_SESSION_DURATION = "mcp.client.session.duration"
# the ExplicitBucketBoundaries advice of all four histograms, in seconds
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

TRACE_KEYS = ("traceparent", "tracestate", "baggage")  # the _meta keys SEP-414 reserves

# The GenAI conventions' switch for recording message content (arguments, results).
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_PROVIDER_ENV = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")


def providers() -> tuple[TracerProvider | None, MeterProvider | None] | None:
    """The globally installed tracer and meter providers that record (each None when
    only the API's proxy or no-op is there); None when neither records."""
    if "opentelemetry.trace" not in sys.modules and not any(
        name in os.environ for name in _PROVIDER_ENV
    ):
        return None  # nobody imported OpenTelemetry: no provider can have been installed
    from opentelemetry import metrics, trace

    tracer_provider: TracerProvider | None = trace.get_tracer_provider()
    meter_provider: MeterProvider | None = metrics.get_meter_provider()
    # The API's own providers (proxies until one is set, no-ops) live in its packages;
    # any other (the SDK's, a vendor's) records.
    if type(tracer_provider).__module__.startswith("opentelemetry.trace"):
        tracer_provider = None
    if type(meter_provider).__module__.startswith("opentelemetry.metrics"):
        meter_provider = None
    if tracer_provider is None and meter_provider is None:
        return None
    return tracer_provider, meter_provider


class Instruments:
    """The tracer and the four histograms of one side (``server`` or ``client``)."""

    __slots__ = ("operation", "session", "tracer")

    def __init__(
        self,
        side: str,
        tracer_provider: TracerProvider | None,
        meter_provider: MeterProvider | None,
    ) -> None:
        from .._version import __version__

        self.tracer: Tracer | None = None
        if tracer_provider is not None:
            self.tracer = tracer_provider.get_tracer(SCOPE, __version__)
        self.operation: Histogram | None = None
        self.session: Histogram | None = None
        if meter_provider is not None:
            meter = meter_provider.get_meter(SCOPE, __version__)
            self.operation = meter.create_histogram(
                f"mcp.{side}.operation.duration",
                unit="s",
                description=f"MCP request duration as observed on the {side}",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )
            self.session = meter.create_histogram(
                f"mcp.{side}.session.duration",
                unit="s",
                description=f"The duration of the MCP session as observed on the {side}",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )


def span_name(method: str, tool: str | None) -> str:
    """``{mcp.method.name} {target}``: the tool is the target of a ``tools/call``
    (a contract names every tool, so the name's cardinality is bounded)."""
    return method if tool is None else f"{method} {tool}"


def extract_meta(meta: Any) -> Context | None:
    """The remote parent a request's ``_meta`` carries (None: no trace key in it)."""
    if not isinstance(meta, Mapping) or "traceparent" not in meta:
        return None
    from opentelemetry import propagate

    carrier = {key: meta[key] for key in TRACE_KEYS if isinstance(meta.get(key), str)}
    return propagate.extract(carrier)


def inject_meta(params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """``params`` with the current context's trace keys added to its ``_meta`` (a
    new mapping; the caller's is never written). Unchanged without a current span."""
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if not carrier:
        return params
    given = params.get("_meta") if params is not None else None
    meta: MutableMapping[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    meta.update(carrier)
    return {**(params or {}), "_meta": meta}


def capture_content_from_environment() -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for
    arguments and results on spans."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("true", "1", "yes")


def content_value(value: Any) -> str:
    """Arguments or a result as a span attribute: JSON text (the conventions allow a
    string where the SDK has no structured attributes)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
