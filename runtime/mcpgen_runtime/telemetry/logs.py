"""The server's one logger: a line per request and the runtime's diagnostics, on stderr.

Everything the runtime says goes through the standard ``logging`` tree under the
``mcpgen`` logger: its ``request`` child carries one record per answered request (see
``log_request``: the fields are fixed, so a parser can rely on them), and the other
children carry diagnostics (a handler's traceback, a store that failed, an ignored
setting). ``configure_logging`` (called by the generated entry point's
``--log-format``) puts one handler on ``mcpgen`` writing to stderr, never stdout (the
stdio protocol stream):

- ``json``: one JSON object per line: ``time`` (UTC, ISO 8601), ``level``, ``logger``,
  ``message`` and, for requests, the fields below;
- ``text``: ``mcpgen: <message>`` lines, a request as ``key=value`` pairs;
- ``off``: no request lines; diagnostics still come out as text.

What never reaches a line: argument values, results, header values (tokens), and URLs
(a task store's password): a request line holds only the names below, the requestor
(the authenticated subject or the client's address, never a credential) and ids. A
string a peer chose (method, request id) is cut to ``MAX_FIELD_CHARS`` and, in text,
quoted when it holds anything but plain characters, so no peer can forge a line.

Without ``configure_logging`` (a server run from Python, ``serve(impl)``) the
server's diagnostics (``DIAGNOSTIC_PARTS``) still go to stderr as text, as the
runtime has always promised (a handler's traceback is never lost to an application's
logging set-up), and no request lines are written.
"""

from __future__ import annotations

import datetime
import json
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DIAGNOSTIC_PARTS",
    "LOG_FORMATS",
    "MAX_FIELD_CHARS",
    "REQUEST_FIELDS",
    "configure_logging",
    "diagnostics",
    "log_request",
    "request_logging",
]

LOG_FORMATS = ("off", "text", "json")
# The fields of a request line, in this order (None values are kept in JSON, dropped in text).
REQUEST_FIELDS = (
    "method",  # mcp.method.name
    "tool",  # the tool of a tools/call
    "status",  # "ok", "error", "tool_error", "cancelled", or a shell's refusal ("rate_limited"…)
    "code",  # the JSON-RPC error code, when an error answered
    "http_status",  # HTTP only
    "duration_ms",
    "requestor",  # the authenticated subject, else the client address (HTTP); None on stdio
    "request_id",
    "trace_id",  # the span's, else the caller's traceparent's
)
MAX_FIELD_CHARS = 200
# The parts whose diagnostics reach stderr even before configure_logging.
DIAGNOSTIC_PARTS = ("server", "tasks", "telemetry")

_ROOT = "mcpgen"
_REQUESTS = logging.getLogger(_ROOT + ".request")


def diagnostics(part: str) -> logging.Logger:
    """The logger of one part of the runtime (``server``, ``tasks``, ``http``…)."""
    return logging.getLogger(f"{_ROOT}.{part}")


def request_logging() -> bool:
    """Whether a request line would be written (checked once when a server starts)."""
    return _REQUESTS.isEnabledFor(logging.INFO)


def log_request(fields: Mapping[str, Any]) -> None:
    """Write one request line: ``fields`` keyed by ``REQUEST_FIELDS`` (missing ones
    are None). Shells outside this package (rate limits, drain) call it for the
    requests they answer themselves.

    Under ``configure_logging`` the line goes straight to its handler, formatted as a
    record would be but without building one (a ``LogRecord`` costs more than the
    rest of a line); otherwise it is an ordinary ``logging`` record."""
    direct = _DIRECT
    if direct is not None:
        direct.write_request(_bounded(fields))
    elif _REQUESTS.isEnabledFor(logging.INFO):
        _REQUESTS.info("request", extra={"mcpgen_request": _bounded(fields)})


def _bounded(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields in order, a string a peer chose cut to ``MAX_FIELD_CHARS``."""
    out = {}
    for name in REQUEST_FIELDS:
        value = fields.get(name)
        if type(value) is str and len(value) > MAX_FIELD_CHARS:
            value = value[:MAX_FIELD_CHARS] + "…"
        out[name] = value
    return out


def configure_logging(log_format: str, adopt: tuple[str, ...] = ()) -> None:
    """Send every ``mcpgen`` record to stderr in ``log_format`` (one of ``LOG_FORMATS``),
    replacing the handler an earlier call installed. ``adopt``: other loggers (the
    HTTP server's, under ``json``) whose records take the same way, so that every line
    of the stream parses."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"unknown log format {log_format!r} (expected off, text or json)")
    for part in DIAGNOSTIC_PARTS:  # from now on through the one handler below
        logger = logging.getLogger(f"{_ROOT}.{part}")
        _remove_ours(logger)
        logger.propagate = True
    handler = _StderrHandler()
    handler.setFormatter(_JsonFormatter() if log_format == "json" else _TextFormatter())
    for name in (_ROOT, *adopt):
        logger = logging.getLogger(name)
        _remove_ours(logger)
        logger.addHandler(handler)
        logger.propagate = False  # one line per record, not one more from the root logger
    logging.getLogger(_ROOT).setLevel(logging.INFO)
    _REQUESTS.disabled = log_format == "off"
    global _DIRECT
    _DIRECT = None if log_format == "off" else handler


def _remove_ours(logger: logging.Logger) -> None:
    """Take off ``logger`` the handlers this module put there (an earlier set-up's)."""
    for old in list(logger.handlers):
        if isinstance(old, _StderrHandler):
            logger.removeHandler(old)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler on whatever ``sys.stderr`` is when a record is written (the
    stdio server points ``sys.stdout`` there too, never the other way round)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr  # not setStream: it would flush the one replaced
        super().emit(record)

    def write_request(self, fields: dict[str, Any]) -> None:
        """A request line, as ``emit`` would write its record (see ``log_request``)."""
        formatter = self.formatter
        assert isinstance(formatter, _JsonFormatter | _TextFormatter)
        line = formatter.request_line(_now(), fields)
        with self.lock:  # type: ignore[union-attr]
            stream = sys.stderr
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # stderr closed or gone: a log line is never worth failing a request


# one encoder for every line (json.dumps with options builds a new one per call)
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)

# The handler of configure_logging when it writes request lines (None: off, or not
# configured: records then take logging's own way).
_DIRECT: _StderrHandler | None = None

_second = -1
_second_text = ""


def _now() -> str:
    """UTC now, ISO 8601 to the millisecond; the date and time formatted once a second."""
    global _second, _second_text
    now = time.time()
    whole = int(now)
    if whole != _second:
        _second_text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _second = whole
    return f"{_second_text}.{int((now - whole) * 1000):03d}Z"


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _JsonFormatter(logging.Formatter):
    def request_line(self, moment: str, fields: dict[str, Any]) -> str:
        line = {"time": moment, "level": "info", "logger": _REQUESTS.name, "message": "request"}
        line.update(fields)
        return _ENCODER.encode(line)

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "mcpgen_request", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return _ENCODER.encode(line)


class _TextFormatter(logging.Formatter):
    def request_line(self, moment: str, fields: dict[str, Any]) -> str:
        pairs = " ".join(f"{k}={_text(v)}" for k, v in fields.items() if v is not None)
        return f"mcpgen: {moment} request {pairs}"

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "mcpgen_request", None)
        if isinstance(fields, dict):
            return self.request_line(_timestamp(record), fields)
        text = f"mcpgen: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _text(value: Any) -> str:
    text = str(value)
    if text and text.isprintable() and " " not in text and '"' not in text and "=" not in text:
        return text
    return json.dumps(text, ensure_ascii=True)


def _default_diagnostics() -> None:
    """Diagnostics of the server's parts to stderr as text until ``configure_logging``."""
    handler = _StderrHandler()
    handler.setFormatter(_TextFormatter())
    for part in DIAGNOSTIC_PARTS:
        logger = logging.getLogger(f"{_ROOT}.{part}")
        if not logger.handlers:
            logger.addHandler(handler)
            logger.propagate = False


_default_diagnostics()
