"""What a verified access token says, and the interface that verifies one.

``AuthInfo`` is what a handler reads as ``ctx.auth`` and what task isolation binds
tasks to (``requestor``). ``TokenVerifier`` is the one interface every way of checking
a token implements: the JWT and introspection verifiers of ``http.verifiers``, or a
deployment's own object passed to ``build_asgi_app(..., token_verifier=...)``.
Standard library only.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["AuthInfo", "InvalidToken", "TokenVerifier", "VerifierUnavailable", "scopes_of"]


@dataclass(frozen=True)
class AuthInfo:
    """A token the server accepted: who (``subject``, ``client_id``), what it may do
    (``scopes``), and every claim as the issuer or the introspection endpoint gave it."""

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    claims: Mapping[str, Any] = field(default_factory=dict)
    expires_at: float | None = None  # seconds since the epoch (the exp claim)

    @functools.cached_property
    def requestor(self) -> str:
        """The identity tasks are bound to: subject and client together (one user's
        tasks through two clients stay apart), written so that no two pairs collide.
        Written once per ``AuthInfo`` (a verifier hands the same one to every request
        of a token it remembers)."""
        return json.dumps([self.subject, self.client_id], separators=(",", ":"))


class InvalidToken(Exception):
    """The token is not acceptable (bad signature, expired, wrong audience, inactive…).

    The message says why, for the ``error_description`` of the 401 and the server's
    log; it never holds the token itself.
    """


class VerifierUnavailable(Exception):
    """A token cannot be checked now (the issuer's metadata, keys or introspection
    endpoint did not answer usefully): the client gets 503, not 401."""


class TokenVerifier(Protocol):
    """Checks a bearer token: returns what it grants, or raises ``InvalidToken``.

    Called on the event loop for every request to the MCP endpoint: an implementation
    that does blocking I/O runs it in a thread (``asyncio.to_thread``) and caches what
    it can. ``VerifierUnavailable`` answers 503; any other exception is a server error
    (500), not a 401.
    """

    async def verify(self, token: str) -> AuthInfo: ...


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token's claims grant: ``scope`` (RFC 9068 and RFC 7662: one
    space-separated string) or, as some issuers write it, ``scp`` (a list or a string)."""
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()
