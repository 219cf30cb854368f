"""The HTTP server as an OAuth 2.1 resource server: who may reach the MCP endpoint.

``OAuthGate`` is asked by the ASGI app (``app``) at two points of a request to the
MCP endpoint, and answers with a ``Refusal`` or lets the request through:

1. ``authenticate``, from the headers alone, before the body is read: a token in the
   query string is refused (400, RFC 6750 ``invalid_request``: URLs end up in logs);
   no ``Authorization: Bearer`` token → 401 with a challenge naming the metadata
   document and the scopes the request needs (those of the tool ``Mcp-Name`` names,
   else those every tool needs); a token the verifier refuses → 401
   ``invalid_token``; a verifier that cannot check it now → 503.
2. ``authorize``, once the JSON-RPC request is decoded: a ``tools/call`` whose tool
   needs scopes the token lacks → 403 ``insufficient_scope`` with ``scope`` listing
   every scope the call needs, before anything of the call runs, in both protocol eras
   (the tool is named by the body, which the core holds ``Mcp-Name`` to).

It also serves the RFC 9728 metadata document (``metadata_paths``: the bare
well-known path and the path-suffixed form for the endpoint; no token needed, not
MCP traffic) and, when listing is filtered, the ``App`` a token's ``tools/list`` is
answered from (only the tools its scopes permit). A token is never logged, and never
part of any answer.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from ..auth.challenge import (
    bearer_challenge,
    metadata_body,
    metadata_paths,
    metadata_url,
    protected_resource_metadata,
)
from ..auth.scopes import ScopeTable
from ..auth.tokens import AuthInfo, InvalidToken, TokenVerifier, VerifierUnavailable
from ..server.tools import App

__all__ = ["MAX_LISTING_VIEWS", "OAuthGate", "Refusal"]

_log = logging.getLogger("mcpgen.http.auth")

# Filtered tools/list answers kept (by the set of contract scopes a token holds).
MAX_LISTING_VIEWS = 64


@dataclass(frozen=True)
class Refusal:
    """An answer instead of the request: status, challenge, a short text body."""

    status: int
    challenge: str | None
    text: str


class OAuthGate:
    """See the module docstring."""

    def __init__(
        self,
        app: App,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: tuple[str, ...],
        endpoint_path: str,
        filter_listing: bool = True,
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.table = ScopeTable(tool.descriptor for tool in app.tools.values())
        self.resource_metadata = metadata_url(resource)
        self.metadata_paths = metadata_paths(endpoint_path, resource)
        self.metadata = metadata_body(
            protected_resource_metadata(resource, authorization_servers, self.table.supported)
        )
        self.filter_listing = filter_listing
        self._views: collections.OrderedDict[frozenset[str], App] = collections.OrderedDict()

    async def authenticate(
        self, scope: Mapping[str, Any], authorization: list[bytes], tool: str | None
    ) -> AuthInfo | Refusal:
        """The token's ``AuthInfo`` or the refusal (``authorization``: the values of
        every ``Authorization`` header; ``tool``: what ``Mcp-Name`` names, if anything)."""
        needs = self.table.needs(tool) if tool is not None else self.table.common
        if _token_in_query(scope.get("query_string", b"")):
            return self._refuse(
                400,
                "invalid_request",
                "access tokens are accepted in the Authorization header only, never in the URL",
                needs,
            )
        if len(authorization) > 1:
            return self._refuse(400, "invalid_request", "more than one Authorization header", needs)
        scheme, _, token = (authorization[0] if authorization else b"").partition(b" ")
        if scheme.lower() != b"bearer":
            text = "Unauthorized: this endpoint needs an OAuth bearer token"
            return Refusal(401, bearer_challenge(self.resource_metadata, scope=needs), text)
        token = token.strip(b" ")
        if not token or not _token68(token):
            return self._refuse(401, "invalid_token", "the bearer token is malformed", needs)
        try:
            return await self.verifier.verify(token.decode("ascii"))
        except InvalidToken as exc:
            _log.info("refused a token: %s", exc)
            return self._refuse(401, "invalid_token", _describable(str(exc)), needs)
        except VerifierUnavailable as exc:
            _log.warning("cannot check tokens: %s", exc)
            return Refusal(503, None, "Service Unavailable: the token cannot be checked now")

    def authorize(self, message: Mapping[str, Any], auth: AuthInfo) -> Refusal | None:
        """403 for a ``tools/call`` of a tool whose scopes ``auth`` does not all hold."""
        if message.get("method") != "tools/call":
            return None
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            return None  # the core answers a call without a name
        missing = self.table.missing(name, auth.scopes)
        if not missing:
            return None
        description = f"{name} needs the scope{'s' if len(missing) > 1 else ''} " + " ".join(
            missing
        )
        return self._refuse(403, "insufficient_scope", description, self.table.needs(name))

    def listing_app(self, auth: AuthInfo) -> App:
        """The ``App`` answering this token's ``tools/list``: the tools it may call,
        marked ``cacheScope: private`` (the listing varies by authorization), or
        ``self.app`` itself when listing is not filtered."""
        if not self.filter_listing:
            return self.app
        granted = auth.scopes.intersection(self.table.supported)
        view = self._views.get(granted)
        if view is None:
            permitted = self.table.permitted(granted)
            tools = {name: tool for name, tool in self.app.tools.items() if name in permitted}
            view = self.app.derived(tools, list_cache_scope="private")
            self._views[granted] = view
            if len(self._views) > MAX_LISTING_VIEWS:
                self._views.popitem(last=False)
        else:
            self._views.move_to_end(granted)
        return view

    def _refuse(self, status: int, error: str, description: str, needs: tuple[str, ...]) -> Refusal:
        challenge = bearer_challenge(
            self.resource_metadata, error=error, description=description, scope=needs
        )
        reason = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden"}[status]
        return Refusal(status, challenge, f"{reason}: {description}")


def _token_in_query(query: bytes) -> bool:
    if b"access_token" not in query:
        return False
    return any(key == "access_token" for key, _ in parse_qsl(query.decode("latin-1"), True))


# RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/="


def _token68(token: bytes) -> bool:
    # translate deletes every allowed byte (in C): what is left is not allowed
    return not token.translate(None, _TOKEN_CHARS) and token.lstrip(b"=") != b""


def _describable(text: str) -> str:
    """A verifier's reason as an ``error_description``: printable, no quotes."""
    clean = "".join(ch for ch in text if 0x20 <= ord(ch) < 0x7F and ch not in '"\\')
    return clean[:200] or "the token is not valid"
