"""The OpenTelemetry SDK set up from the standard ``OTEL_*`` environment variables, by a
generated server's entry point (``python -m <package>``).

Nothing is exported unless the environment asks: the SDK is set up only when it is
installed (``pip install 'mcpgen-runtime[otel]'``), ``OTEL_SDK_DISABLED`` is not
true, no provider is installed already (``opentelemetry-instrument`` or the
application did it: theirs is kept), and one of ``OTEL_TRACES_EXPORTER``,
``OTEL_METRICS_EXPORTER`` or an ``OTEL_EXPORTER_OTLP_*ENDPOINT`` is set. Then each
signal whose exporter is named (or ``otlp`` when only an endpoint is given; ``none``
turns a signal off) gets a provider: spans through a ``BatchSpanProcessor``,
metrics through a ``PeriodicExportingMetricReader``, both flushed at exit. The
exporters are found by name through the SDK's own entry points
(``opentelemetry_traces_exporter``, ``opentelemetry_metrics_exporter``: ``otlp``,
``console``…), and read their endpoint, headers and protocol from ``OTEL_*``
themselves; the resource comes from ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES``, the server's name by default.

The ``console`` exporters write to stderr here, never stdout: a stdio server's stdout
is its protocol stream.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import sys
from collections.abc import Mapping
from typing import Any

from .logs import diagnostics
from .otel import providers

__all__ = ["configure_from_environment", "exporter_names"]

_LOG = diagnostics("telemetry")


def exporter_names(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The span and metric exporters the environment asks for (None: that signal off)."""
    endpoint = any(
        environ.get(name)
        for name in (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        )
    )
    default = "otlp" if endpoint else None

    def named(variable: str) -> str | None:
        value = environ.get(variable, "").strip().lower() or default
        return None if value in (None, "none") else value.split(",")[0].strip()

    return named("OTEL_TRACES_EXPORTER"), named("OTEL_METRICS_EXPORTER")


def configure_from_environment(service_name: str) -> bool:
    """Install the SDK's providers as the environment says (see the module docstring);
    whether anything was installed."""
    environ = os.environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    spans, metrics = exporter_names(environ)
    if spans is None and metrics is None:
        return False
    if importlib.util.find_spec("opentelemetry.sdk") is None:
        _LOG.warning(
            "OTEL_* asks for telemetry but the OpenTelemetry SDK is not installed "
            "(pip install 'mcpgen-runtime[otel]'); nothing is exported"
        )
        return False
    if providers() is not None:
        return False  # someone installed providers already: theirs are kept
    from opentelemetry.sdk.resources import Resource

    resource = Resource.create({})  # OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": service_name}))
    try:
        if spans is not None:
            _install_tracing(spans, resource)
        if metrics is not None:
            _install_metrics(metrics, resource)
    except (LookupError, ImportError, ValueError) as exc:
        _LOG.warning("OpenTelemetry is not set up: %s", exc)
        return False
    return True


def _exporter(group: str, name: str) -> Any:
    """An instance of the exporter ``name`` of the SDK's entry point ``group``
    (``otlp``: the OTLP exporter of ``OTEL_EXPORTER_OTLP_PROTOCOL``, HTTP by default)."""
    if name == "otlp":
        protocol = os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").strip()
        name = "otlp_proto_grpc" if protocol == "grpc" else "otlp_proto_http"
    # here, not at module level: importlib.metadata costs a server ~20 ms of start-up,
    # and only an OTEL_* setting that names an exporter needs it
    from importlib.metadata import entry_points

    found = [point for point in entry_points(group=group) if point.name == name]
    if not found:
        known = sorted(point.name for point in entry_points(group=group))
        raise LookupError(f"no {group} named {name!r} (installed: {', '.join(known) or 'none'})")
    exporter_class = found[0].load()
    if name == "console":
        return exporter_class(out=sys.stderr)
    return exporter_class()


def _install_tracing(name: str, resource: Any) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=resource)
    provider.add_span_processor(
        BatchSpanProcessor(_exporter("opentelemetry_traces_exporter", name))
    )
    trace.set_tracer_provider(provider)
    atexit.register(provider.shutdown)


def _install_metrics(name: str, resource: Any) -> None:
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    reader = PeriodicExportingMetricReader(_exporter("opentelemetry_metrics_exporter", name))
    provider = MeterProvider(resource=resource, metric_readers=[reader])
    metrics.set_meter_provider(provider)
    atexit.register(provider.shutdown)
