"""Run a generated server (``python otel_noop.py bench_mcp [args…]``) with the
OpenTelemetry SDK installed and recording, but exporting nowhere: spans go through a
``BatchSpanProcessor`` to an exporter that drops them, metrics to an in-memory reader
nobody reads. What is left is the instrumentation's own cost (benchmarks/telemetry.py).
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class DropSpans(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def main() -> None:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(DropSpans()))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    package, sys.argv = sys.argv[1], [sys.argv[1], *sys.argv[2:]]
    runpy.run_module(package, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
