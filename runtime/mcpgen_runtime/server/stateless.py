"""A request that arrives on its own, by a stateless transport (Streamable HTTP):
which era it belongs to, the one check of its 2026-07-28 ``_meta`` envelope, and the
HTTP status of each answer. ``ServerConnection.receive_stateless`` uses these; the
HTTP shell hands it the request and what its headers said (``Routing``) and maps
the actions that come back to HTTP. Nothing here reads a header or a socket.

The era is decided here, once (``stateless_era``): a request whose transport names no
revision, or a handshake revision, is of the handshake era (at the revision named,
else ``DEFAULT_STATELESS_VERSION``, as the transport says); any other revision
(2026-07-28, or one this server does not know) takes the request down the
2026-07-28 checks, where an unknown one is refused. ``initialize`` always opens a
handshake connection, as the first request of any connection does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ..protocol.constants import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_VERSION,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
)
from ..protocol.revisions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from .actions import SendFrame, error_frame
from .context import LOG_LEVELS

__all__ = [
    "DEFAULT_STATELESS_VERSION",
    "MODERN_HTTP_STATUS",
    "Routing",
    "envelope_refusal",
    "handshake_log_level",
    "notification_refusal",
    "stateless_era",
]

# The revision a handshake-era request is taken for when its transport names none
# (Streamable HTTP without an MCP-Protocol-Version header).
DEFAULT_STATELESS_VERSION = "2025-03-26"

# The HTTP status of a 2026-07-28 JSON-RPC error, by code (others, and every
# handshake-era answer: 200).
MODERN_HTTP_STATUS: Mapping[int, int] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}

# The param a 2026-07-28 request's Mcp-Name routing value must equal, by method.
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class Routing(NamedTuple):
    """What the transport carried beside the body: the revision it names
    (``MCP-Protocol-Version``), the method and name it routes by (``Mcp-Method``,
    ``Mcp-Name``, decoded; None when absent or malformed), the first routing
    header sent more than once, if any, every ``Mcp-Param-*`` header (lower-case
    name, value as sent, in order), which ``tools/call`` holds against the arguments
    its tool mirrors (``protocol.param_headers``), and the ``Mcp-Session-Id`` (a
    handshake-era client that declared elicitation was handed one: ``server.asking``)."""

    version: str | None = None
    method: str | None = None
    name: str | None = None
    duplicated: str | None = None
    params: tuple[tuple[str, str], ...] = ()
    session: str | None = None


def stateless_era(version: str | None) -> str:
    """``"legacy"`` or ``"modern"``: the era of a request whose transport names
    ``version`` (see the module docstring)."""
    return "legacy" if version is None or version in HANDSHAKE_VERSIONS else "modern"


def notification_refusal(version: str | None) -> bytes | None:
    """The error (HTTP 400) for a notification whose transport names a revision this
    server does not serve, else None (the notification is accepted, 202)."""
    if stateless_era(version) == "modern" and version not in MODERN_VERSIONS:
        return _unsupported(None, version).data
    return None


def handshake_log_level(meta: Any) -> str:
    """The least severe level a stateless handshake-era call's logs may have: the
    request's own ``_meta`` log-level key, else every level (a stateless server
    cannot remember a ``logging/setLevel``)."""
    level = meta.get(META_LOG_LEVEL) if isinstance(meta, dict) else None
    return level if level in LOG_LEVELS else LOG_LEVELS[0]


def envelope_refusal(
    request_id: Any,
    meta: Any,
    routing: Routing | None = None,
    method: str = "",
    params: Any = None,
    *,
    values: bool = True,
) -> SendFrame | None:
    """The error refusing a 2026-07-28 request's ``_meta`` envelope, or ``None``: the
    one check of it. With ``routing`` (a stateless transport), an incomplete envelope
    is refused as absent, and the routing must agree with the body and name a served
    revision; ``values`` False stops there (an ``initialize``, which opens a handshake
    connection whatever its envelope holds)."""
    if routing is not None and routing.duplicated is not None:
        return error_frame(
            request_id, HEADER_MISMATCH, f"{routing.duplicated} header appears more than once"
        )
    if not isinstance(meta, dict) or (
        routing is not None and (META_VERSION not in meta or META_CAPABILITIES not in meta)
    ):
        return error_frame(
            request_id,
            INVALID_PARAMS,
            "Invalid params: params._meta must be an object carrying "
            f"{META_VERSION} and {META_CAPABILITIES}",
        )
    if routing is not None:  # both keys are there (refused as absent above otherwise)
        refused = _routing_refusal(request_id, meta, routing, method, params)
        if refused is not None or not values:
            return refused
    elif META_VERSION not in meta or META_CAPABILITIES not in meta:
        missing = [key for key in (META_VERSION, META_CAPABILITIES) if key not in meta]
        return error_frame(
            request_id, INVALID_PARAMS, f"Invalid params: _meta is missing {', '.join(missing)}"
        )
    return _envelope_values_refusal(request_id, meta)


def _routing_refusal(
    request_id: Any, meta: Mapping[str, Any], routing: Routing, method: str, params: Any
) -> SendFrame | None:
    """The routing headers against the body (the envelope is there)."""
    if routing.version != meta[META_VERSION]:
        return error_frame(
            request_id,
            HEADER_MISMATCH,
            "mcp-protocol-version header does not match the request envelope's protocol version",
        )
    if routing.method != method:
        return error_frame(
            request_id,
            HEADER_MISMATCH,
            "mcp-method header does not match the request body's method",
        )
    key = _NAME_PARAM.get(method)
    named = params.get(key) if key is not None and isinstance(params, dict) else None
    if named is not None and routing.name != named:
        return error_frame(
            request_id,
            HEADER_MISMATCH,
            f"mcp-name header does not match the request body's {key!r}",
        )
    if routing.version not in MODERN_VERSIONS:
        return _unsupported(request_id, routing.version)
    return None


def _envelope_values_refusal(request_id: Any, meta: Mapping[str, Any]) -> SendFrame | None:
    """The envelope's values: a supported revision, capabilities, a known log level."""
    version = meta[META_VERSION]
    if not isinstance(version, str):
        return error_frame(
            request_id, INVALID_PARAMS, f"Invalid params: {META_VERSION} must be a string"
        )
    if version not in MODERN_VERSIONS:
        return _unsupported(request_id, version)
    if not isinstance(meta[META_CAPABILITIES], dict):
        return error_frame(
            request_id, INVALID_PARAMS, f"Invalid params: {META_CAPABILITIES} must be an object"
        )
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        return error_frame(request_id, INVALID_PARAMS, f"Invalid params: log level {level!r}")
    return None


def _unsupported(request_id: Any, requested: Any) -> SendFrame:
    return error_frame(
        request_id,
        UNSUPPORTED_VERSION,
        "Unsupported protocol version",
        {"supported": list(MODERN_VERSIONS), "requested": requested},
    )
