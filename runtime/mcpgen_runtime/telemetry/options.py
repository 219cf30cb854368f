"""The entry point's observability options (``--log-format``, ``--trace-content``) and
the set-up they ask for, before a server starts: its logging (``logs``) and the
OpenTelemetry SDK from ``OTEL_*`` (``setup``).

Request lines are off unless asked for, over both transports: a line costs the
server about as much CPU as the call it reports (benchmarks/telemetry.py: some 15 µs
against 13 µs for a small HTTP call), so the default path stays as fast as it was,
and an operator turns them on with one flag (``--log-format json`` behind a log
pipeline). A stdio host keeps the server's stderr anyway. Diagnostics are always
written, and nothing ever goes to stdout.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from .logs import LOG_FORMATS, configure_logging
from .otel import capture_content_from_environment
from .setup import configure_from_environment

__all__ = ["Observability", "add_observability_arguments", "set_up_observability"]


@dataclass(frozen=True)
class Observability:
    """What the entry point decided: the log format, whether the SDK was set up here,
    whether spans carry tool arguments and results."""

    log_format: str
    otel_here: bool
    capture_content: bool


def add_observability_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("observability")
    group.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=None,
        help="one line per request on stderr, as text or JSON, or off (the default); "
        "diagnostics always go to stderr",
    )
    group.add_argument(
        "--trace-content",
        action="store_true",
        default=None,
        help="record tool arguments and results on spans (they may hold secrets; also "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)",
    )


def set_up_observability(
    args: argparse.Namespace, service_name: str, *, in_workers: bool
) -> Observability:
    """Configure logging and, unless ``in_workers`` (each --workers process does it
    for itself), the OpenTelemetry SDK as ``OTEL_*`` says."""
    log_format = args.log_format or "off"
    configure_logging(log_format)
    otel_here = False if in_workers else configure_from_environment(service_name)
    capture = bool(args.trace_content) or capture_content_from_environment()
    return Observability(log_format, otel_here, capture)
