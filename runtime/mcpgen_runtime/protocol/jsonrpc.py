"""JSON-RPC 2.0 framing for MCP over stdio: codes, encoding, message kinds."""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "encode",
    "error_response",
    "result_response",
]

from .constants import (  # the codes, re-exported for the framing's callers
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_dumps_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode


def encode(message: Any) -> bytes:
    """One frame: compact UTF-8 JSON and a newline (JSON escapes any newline
    inside strings, so a frame never spans lines)."""
    text = _dumps(message) + "\n"
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (a peer may send "\ud800": valid JSON, not UTF-8) goes
        # back escaped as it came, instead of failing the frame.
        return (_dumps_ascii(message) + "\n").encode()


def result_response(request_id: Any, result: Any) -> bytes:
    return encode({"jsonrpc": "2.0", "id": request_id, "result": result})


def result_response_raw(request_id: Any, result_json: str) -> bytes:
    """A response whose result is already JSON text (cached ``tools/list`` bodies)."""
    return f'{{"jsonrpc":"2.0","id":{_dumps_ascii(request_id)},"result":{result_json}}}\n'.encode()


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return encode({"jsonrpc": "2.0", "id": request_id, "error": error})


def dumps(value: Any) -> str:
    """Compact JSON text, as sent on the wire."""
    return _dumps(value)
