"""The resource server's words on the wire: ``WWW-Authenticate`` challenges (RFC 6750,
RFC 9728 section 5.1) and the protected-resource metadata document (RFC 9728).

Standard library only. Every value placed in a quoted challenge parameter is checked
to hold no quote, backslash or control character: scopes are (the contract's
validation), and the descriptions are this module's own text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "WELL_KNOWN",
    "bearer_challenge",
    "metadata_body",
    "metadata_paths",
    "metadata_url",
    "protected_resource_metadata",
]

# RFC 9728 section 3: where a resource's metadata lives, before the resource's path.
WELL_KNOWN = "/.well-known/oauth-protected-resource"


def _quoted(value: str) -> str:
    if any(ch in value for ch in '"\\') or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError(f"cannot quote {value!r} in a challenge")
    return f'"{value}"'


def bearer_challenge(
    resource_metadata: str,
    *,
    error: str | None = None,
    description: str | None = None,
    scope: Iterable[str] = (),
) -> str:
    """A ``WWW-Authenticate`` value: ``Bearer`` with ``error`` (``invalid_token``,
    ``insufficient_scope``, ``invalid_request``; None when no token was sent), a
    human ``error_description``, the ``scope`` the request needs and where the
    metadata document is (``resource_metadata``)."""
    params: list[str] = []
    if error is not None:
        params.append(f"error={_quoted(error)}")
    if description is not None:
        params.append(f"error_description={_quoted(description)}")
    scopes = " ".join(scope)
    if scopes:
        params.append(f"scope={_quoted(scopes)}")
    params.append(f"resource_metadata={_quoted(resource_metadata)}")
    return "Bearer " + ", ".join(params)


def metadata_url(resource: str) -> str:
    """Where a client finds ``resource``'s metadata: the well-known path inserted
    between the host and the resource's path (RFC 9728 section 3.1)."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + path, parts.query, ""))


def metadata_paths(endpoint_path: str, resource: str) -> frozenset[str]:
    """The paths this server answers with its metadata: the bare well-known path, the
    path-suffixed form for its MCP endpoint, and the one its resource URL implies
    (the same unless a proxy serves the endpoint under another path)."""
    suffixed = WELL_KNOWN + endpoint_path.rstrip("/")
    return frozenset({WELL_KNOWN, suffixed, urlsplit(metadata_url(resource)).path})


def protected_resource_metadata(
    resource: str, authorization_servers: Sequence[str], scopes: Sequence[str]
) -> dict[str, Any]:
    """The RFC 9728 document: this resource, who issues its tokens, the scopes the
    contract names, and that tokens come in the ``Authorization`` header only."""
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
        "bearer_methods_supported": ["header"],
    }
    if scopes:
        document["scopes_supported"] = list(scopes)
    return document


def metadata_body(document: dict[str, Any]) -> bytes:
    """The document as the server sends it (UTF-8 JSON)."""
    return json.dumps(document, separators=(",", ":")).encode()
