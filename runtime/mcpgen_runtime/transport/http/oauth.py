"""OAuth 2.1 for the HTTP client: a server's 401 leads to a token, a 403
``insufficient_scope`` to one step-up (needs the ``auth`` extra: Authlib).

``OAuthSession`` runs one ``ClientCredentials`` or ``AuthorizationCode`` grant for
one MCP endpoint, as the MCP authorization spec lays out:

1. discovery (``discovery``): from the 401's ``resource_metadata`` to the
   authorization server's metadata; an ``AuthorizationCode`` without ``client_id``
   then registers itself (RFC 7591) and keeps the registration;
2. the grant, with the RFC 8707 ``resource`` parameter on every authorization and
   token request: client credentials, or the authorization code with PKCE S256 through
   a loopback redirect (``loopback``) whose ``state`` and RFC 9207 ``iss`` are checked;
3. the token is kept in the grant object and renewed shortly before it expires (its
   refresh token, else a new grant);
4. a 403 ``insufficient_scope`` asks once for the union of the granted and the
   demanded scopes; a server still refusing, or an authorization server granting
   less, ends in ``Forbidden`` naming the missing scopes.

Authlib (its framework-free pieces: PKCE, the authorization URL and token request
encoding, client authentication, token expiry) does the OAuth encoding; its httpx
integration is not used because it is written for ``httpx``, not ``httpx2``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import time
import webbrowser
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
from authlib.common.security import generate_token  # type: ignore[import-untyped, unused-ignore]
from authlib.oauth2.auth import ClientAuth  # type: ignore[import-untyped, unused-ignore]
from authlib.oauth2.rfc6749 import OAuth2Token  # type: ignore[import-untyped, unused-ignore]
from authlib.oauth2.rfc6749.parameters import (  # type: ignore[import-untyped, unused-ignore]
    prepare_grant_uri,
    prepare_token_request,
)
from authlib.oauth2.rfc7636 import (  # type: ignore[import-untyped, unused-ignore]
    create_s256_code_challenge,
)

from ..._errors import AuthRequired, Forbidden, Unauthorized
from .auth import AuthorizationCode, Challenge, ClientCredentials, auth_error
from .discovery import Discovered, Discovery
from .loopback import LoopbackRedirect

__all__ = ["OAuthSession"]

_MAX_LEEWAY = 60.0  # renew a token at most this many seconds before it expires
_JSON = {"content-type": "application/json", "accept": "application/json"}
_FORM = {"content-type": "application/x-www-form-urlencoded", "accept": "application/json"}


class OAuthSession:
    """Tokens for one MCP endpoint from one grant (see the module docstring)."""

    def __init__(
        self, grant: ClientCredentials | AuthorizationCode, url: str, client: httpx2.AsyncClient
    ) -> None:
        self._grant = grant
        self._url = url
        self._discovery = Discovery(url, client)
        self._lock = asyncio.Lock()
        self._found: Discovered | None = None

    # -- what the transport asks --------------------------------------------------------

    async def authorization(self) -> str | None:
        """The ``Authorization`` header of the next request (None: none yet)."""
        token = self._grant.tokens.get(self._url)
        if token is not None and _expiring(token):
            async with self._lock:
                token = self._grant.tokens.get(self._url)
                if token is not None and _expiring(token):
                    token = await self._renew(token)
        return _header(token)

    async def challenged(self, challenge: Challenge, sent: str | None, tries: set[int]) -> bool:
        """Obtain what the 401/403 ``challenge`` asks for; True: send the request again.
        Each status is handled once per request; other answers raise ``AuthRequired``."""
        status = challenge.status
        if status in tries or (status == 403 and challenge.error != "insufficient_scope"):
            return False
        tries.add(status)
        async with self._lock:
            token = self._grant.tokens.get(self._url)
            if status == 403 and set(challenge.scopes) <= set(_granted(token)):
                return False  # nothing named to ask for: a step-up cannot help
            if status == 401 and token is not None and _header(token) != sent:
                return not _expiring(token)  # another call renewed it meanwhile
            await self._discover(challenge.resource_metadata)
            if status == 401:
                self._grant.tokens.pop(self._url, None)
                renewed = await self._refresh(token) if token is not None else None
                token = renewed or await self._obtain(self._scopes(challenge, token), challenge)
            else:
                token = await self._obtain(self._scopes(challenge, token), challenge)
                missing = [s for s in challenge.scopes if s not in _granted(token)]
                if missing:  # the authorization server would not grant them
                    self._grant.tokens[self._url] = token
                    raise self._forbidden(challenge, token, "the authorization server granted")
            self._grant.tokens[self._url] = token
        return True

    def refused(self, challenge: Challenge) -> AuthRequired:
        """The error of a 401/403 the session could not get past."""
        token = self._grant.tokens.get(self._url)
        if challenge.status == 403:
            return self._forbidden(challenge, token, "after one step-up the token has")
        return auth_error(self._url, challenge)

    def _forbidden(self, challenge: Challenge, token: Any, said: str) -> Forbidden:
        granted = _granted(token) if token is not None else []
        missing = [s for s in challenge.scopes if s not in granted]
        has = " ".join(granted) or "(no scope)"
        client = f"client {self._client_id()!r}"
        if missing:
            text = (
                f"{self._url} needs scope {' '.join(missing)} for this call, but {said} "
                f"only {has} for {client}: ask the authorization server's administrator "
                "to allow the client those scopes"
            )
        else:
            demanded = " ".join(challenge.scopes) or "no scope it names"
            text = (
                f"{self._url} refuses the call with 403 (demanding {demanded}) although the "
                f"token of {client} has {has}: the server's scope rules and its challenge "
                "disagree; check the server's configuration"
            )
        return Forbidden(
            text,
            url=self._url,
            www_authenticate=challenge.header,
            error=challenge.error,
            required_scopes=challenge.scopes,
            missing_scopes=missing,
        )

    # -- scopes and tokens ----------------------------------------------------------------

    def _scopes(self, challenge: Challenge, token: Mapping[str, Any] | None) -> list[str]:
        """The configured, granted and demanded scopes (the spec's scope selection:
        the challenge's, else ``scopes_supported`` when nothing else names any)."""
        have = _granted(token) if token is not None else []
        wanted = _union(self._grant.scopes or (), have, challenge.scopes)
        if not wanted and self._found is not None:
            wanted = list(self._found.scopes_supported)
        return wanted

    async def _renew(self, token: Mapping[str, Any]) -> dict[str, Any] | None:
        """A token about to expire: its refresh token, else a new grant."""
        await self._discover("")
        renewed = await self._refresh(token)
        if renewed is None:
            renewed = await self._obtain(_granted(token), Challenge(401))
        self._grant.tokens[self._url] = renewed
        return renewed

    async def _refresh(self, token: Mapping[str, Any]) -> dict[str, Any] | None:
        refresh_token = token.get("refresh_token")
        if not isinstance(refresh_token, str):
            return None
        try:
            renewed = await self._token_request("refresh_token", token, refresh_token=refresh_token)
        except Unauthorized:
            return None  # expired or revoked: a new grant
        renewed.setdefault("refresh_token", refresh_token)  # RFC 6749 §6: may keep the old
        return renewed

    async def _obtain(self, scopes: list[str], challenge: Challenge) -> dict[str, Any]:
        try:
            if isinstance(self._grant, ClientCredentials):
                return await self._token_request("client_credentials", None, scope=scopes)
            return await self._authorize(self._grant, scopes)
        except Unauthorized as refused:
            if challenge.status == 403 and refused.error == "invalid_scope":
                raise self._forbidden(
                    challenge, self._grant.tokens.get(self._url), str(refused)
                ) from refused
            raise

    async def _token_request(
        self, grant_type: str, previous: Mapping[str, Any] | None, **params: Any
    ) -> dict[str, Any]:
        found = self._require_found()
        if "scope" in params:
            params["scope"] = " ".join(params["scope"]) or None
        body = prepare_token_request(grant_type, resource=found.resource, **params)
        client_id, secret, method = self._credentials()
        uri, headers, body = ClientAuth(client_id, secret, method).prepare(
            "POST", str(found.metadata["token_endpoint"]), dict(_FORM), body
        )
        status, answer = await self._discovery.fetch("POST", uri, headers, body.encode())
        if status != 200 or not isinstance(answer.get("access_token"), str):
            raise self._as_refusal(answer, f"its token endpoint ({grant_type})")
        if str(answer.get("token_type", "")).lower() != "bearer":
            raise Unauthorized(
                f"{found.issuer} issued a {answer.get('token_type')!r} token; MCP uses Bearer",
                url=self._url,
            )
        if "scope" not in answer:  # RFC 6749 §5.1: omitted means as requested (or as before)
            asked = params.get("scope") or (previous or {}).get("scope")
            if asked:
                answer["scope"] = asked
        return dict(OAuth2Token(answer))

    # -- the authorization code grant ---------------------------------------------------

    async def _authorize(self, grant: AuthorizationCode, scopes: list[str]) -> dict[str, Any]:
        found = self._require_found()
        state, verifier = generate_token(32), generate_token(64)
        async with LoopbackRedirect(grant.redirect_port, grant.redirect_path) as redirect:
            await self._register(grant, redirect.uri)
            uri = prepare_grant_uri(
                str(found.metadata["authorization_endpoint"]),
                self._credentials()[0],
                "code",
                redirect.uri,
                scope=" ".join(scopes) or None,
                state=state,
                code_challenge=create_s256_code_challenge(verifier),
                code_challenge_method="S256",
                resource=found.resource,
            )
            await _open(grant.open_url, uri)
            try:
                async with asyncio.timeout(grant.timeout):
                    target = await redirect.target()
            except TimeoutError:
                raise Unauthorized(
                    f"no authorization response reached {redirect.uri} within "
                    f"{grant.timeout:g}s (AuthorizationCode.timeout)",
                    url=self._url,
                    error="timeout",
                ) from None
        code = self._authorization_response(found, dict(parse_qsl(urlsplit(target).query)), state)
        return await self._token_request(
            "authorization_code", None, code=code, redirect_uri=redirect.uri, code_verifier=verifier
        )

    def _authorization_response(self, found: Discovered, params: dict[str, str], state: str) -> str:
        """The code of a redirect whose ``iss`` (RFC 9207) and ``state`` are ours."""
        iss = params.get("iss")
        expects_iss = found.metadata.get("authorization_response_iss_parameter_supported") is True
        if (iss is None and expects_iss) or (iss is not None and iss != found.issuer):
            raise Unauthorized(
                f"the authorization response came from issuer {iss!r}, not {found.issuer!r} "
                "(RFC 9207): refused, it may be a mix-up attack",
                url=self._url,
                error="invalid_issuer",
            )
        if params.get("state") != state:
            raise Unauthorized(
                "the authorization response carries another state: refused (CSRF)",
                url=self._url,
                error="invalid_state",
            )
        code = params.get("code")
        if "error" in params or not code:
            raise self._as_refusal(params, "the authorization")
        return code

    def _as_refusal(self, answer: Mapping[str, Any], where: str) -> Unauthorized:
        found = self._require_found()
        error = str(answer.get("error") or "invalid_response")
        description = answer.get("error_description")
        said = f": {description}" if isinstance(description, str) and description else ""
        return Unauthorized(
            f"the authorization server {found.issuer} refused {where} for client "
            f"{self._client_id()!r} with {error}{said}"[:1000],
            url=self._url,
            error=error,
        )

    # -- discovery and the client's identity -------------------------------------------------

    async def _discover(self, metadata_url: str) -> None:
        """Find (once, or again when a challenge names other metadata) the resource
        and its authorization server."""
        found = self._found
        if found is not None and metadata_url in ("", found.source):
            return
        code_flow = isinstance(self._grant, AuthorizationCode)
        self._found = await self._discovery.find(metadata_url, self._grant.issuer, code_flow)

    def _credentials(self) -> tuple[str, str | None, str]:
        """The client id, secret and token endpoint authentication method."""
        grant = self._grant
        if isinstance(grant, ClientCredentials):
            return grant.client_id, grant.client_secret, grant.auth_method
        if grant.client_id is not None:
            secret = grant.client_secret
            return grant.client_id, secret, "none" if secret is None else "client_secret_basic"
        registered = grant.registrations[self._require_found().issuer]
        secret = registered.get("client_secret")
        secret = secret if isinstance(secret, str) else None
        method = registered.get("token_endpoint_auth_method")
        method = method if isinstance(method, str) else "client_secret_basic" if secret else "none"
        return str(registered["client_id"]), secret, method

    def _client_id(self) -> str:
        grant, found = self._grant, self._found
        if grant.client_id is not None:
            return grant.client_id
        registered = grant.registrations.get(found.issuer) if found is not None else None
        return str(registered["client_id"]) if registered else "(not registered)"

    async def _register(self, grant: AuthorizationCode, redirect_uri: str) -> None:
        """RFC 7591: a client without ``client_id`` registers itself, once per server."""
        found = self._require_found()
        if grant.client_id is not None or found.issuer in grant.registrations:
            return
        endpoint = found.metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise Unauthorized(
                f"{found.issuer} offers no dynamic client registration: pass "
                "AuthorizationCode(client_id=…) as registered with it",
                url=self._url,
                error="registration_unsupported",
            )
        offered = found.metadata.get("token_endpoint_auth_methods_supported")
        offered = offered if isinstance(offered, list) else ["client_secret_basic"]
        methods = ("none", "client_secret_basic", "client_secret_post")
        method = next((m for m in methods if m in offered), "none")
        asked = {
            "client_name": grant.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        }
        status, answer = await self._discovery.fetch(
            "POST", endpoint, _JSON, json.dumps(asked).encode()
        )
        if status not in (200, 201) or not isinstance(answer.get("client_id"), str):
            raise self._as_refusal(answer, "the client's registration")
        answer.setdefault("token_endpoint_auth_method", method)
        grant.registrations[found.issuer] = answer

    def _require_found(self) -> Discovered:
        assert self._found is not None, "discovery runs first"
        return self._found


def _header(token: Mapping[str, Any] | None) -> str | None:
    return None if token is None else f"Bearer {token['access_token']}"


def _granted(token: Mapping[str, Any] | None) -> list[str]:
    scope = (token or {}).get("scope")
    return scope.split() if isinstance(scope, str) else []


def _expiring(token: Mapping[str, Any]) -> bool:
    """Within the last quarter of its life (at most the last minute), or expired."""
    expires_at, expires_in = token.get("expires_at"), token.get("expires_in")
    if not isinstance(expires_at, int | float):
        return False
    life = float(expires_in) if isinstance(expires_in, int | float) else _MAX_LEEWAY * 4
    return time.time() >= expires_at - min(_MAX_LEEWAY, life / 4)


def _union(*groups: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(scope for group in groups for scope in group))


async def _open(opener: Any, uri: str) -> None:
    """Show the person the authorization URL: the grant's ``open_url``, else a browser."""
    if opener is not None:
        if inspect.iscoroutinefunction(opener):
            await opener(uri)
        else:
            await asyncio.to_thread(opener, uri)
        return
    if not await asyncio.to_thread(webbrowser.open, uri):
        print(f"Open this URL in a browser to authorize the MCP client:\n{uri}", file=sys.stderr)
