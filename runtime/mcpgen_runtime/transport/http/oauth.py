"""OAuth 2.1 for the HTTP client: a server's 401 leads to a token, a 403
``insufficient_scope`` to one step-up (needs the ``auth`` extra: Authlib).

``OAuthSession`` runs one ``ClientCredentials`` or ``AuthorizationCode`` grant for
one MCP endpoint, as the MCP authorization spec lays out:

1. discovery: the 401's ``resource_metadata`` (else the RFC 9728 well-known URLs of
   the endpoint) → the protected resource metadata (on the endpoint's own origin; its
   ``resource`` must be the endpoint or a parent of it) → the first authorization
   server it lists (or the grant's ``issuer``, which must be listed) → that server's
   RFC 8414 metadata (else OpenID discovery), whose ``issuer`` must be the one asked for;
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
integration is not used because it is written for ``httpx``, not ``httpx2``. Only
https endpoints are contacted, or http on the loopback interface.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import json
import sys
import time
import webbrowser
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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
from authlib.oauth2.rfc8414 import get_well_known_url  # type: ignore[import-untyped, unused-ignore]

from ..._errors import AuthRequired, Forbidden, Unauthorized
from .auth import AuthorizationCode, Challenge, ClientCredentials, auth_error
from .loopback import LoopbackRedirect

__all__ = ["OAuthSession"]

_MAX_DOCUMENT = 256 * 1024  # bytes of a metadata document or token response read
_TIMEOUT = 30.0  # seconds one request to a metadata or token endpoint may take
_MAX_LEEWAY = 60.0  # renew a token at most this many seconds before it expires


@dataclass(frozen=True)
class _Found:
    """What discovery found: the resource, its authorization server and the metadata."""

    resource: str
    issuer: str
    metadata: Mapping[str, Any]
    scopes_supported: tuple[str, ...]
    source: str  # the challenge's resource_metadata it came from ("" : well-known)


class OAuthSession:
    """Tokens for one MCP endpoint from one grant (see the module docstring)."""

    def __init__(
        self, grant: ClientCredentials | AuthorizationCode, url: str, client: httpx2.AsyncClient
    ) -> None:
        self._grant = grant
        self._url = url
        self._client = client
        self._lock = asyncio.Lock()
        self._found: _Found | None = None

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
        return Forbidden(
            f"{self._url} needs scope {' '.join(missing) or '(unnamed)'} for this call, "
            f"but {said} only {' '.join(granted) or '(no scope)'} for client "
            f"{self._grant.client_id!r}: ask the authorization server's administrator "
            "to allow the client those scopes",
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
                raise self._forbidden(challenge, self._grant.tokens.get(self._url), str(refused))
            raise

    async def _token_request(
        self, grant_type: str, previous: Mapping[str, Any] | None, **params: Any
    ) -> dict[str, Any]:
        found = self._require_found()
        if "scope" in params:
            params["scope"] = " ".join(params["scope"]) or None
        body = prepare_token_request(grant_type, resource=found.resource, **params)
        secret = self._grant.client_secret
        method = "none" if secret is None else getattr(self._grant, "auth_method", None)
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "accept": "application/json",
        }
        uri = str(found.metadata["token_endpoint"])
        uri, headers, body = ClientAuth(self._grant.client_id, secret, method).prepare(
            "POST", uri, headers, body
        )
        status, answer = await self._fetch("POST", uri, headers, body.encode())
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
            uri = prepare_grant_uri(
                str(found.metadata["authorization_endpoint"]),
                grant.client_id,
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

    def _authorization_response(self, found: _Found, params: dict[str, str], state: str) -> str:
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

    # -- discovery ------------------------------------------------------------------------

    async def _discover(self, metadata_url: str) -> None:
        """Find (once, or again when a challenge names other metadata) the resource
        and its authorization server."""
        found = self._found
        if found is not None and metadata_url in ("", found.source):
            return
        resource_metadata, prm_url = await self._resource_metadata(metadata_url)
        resource = resource_metadata.get("resource")
        if not isinstance(resource, str) or not _covers(resource, self._url):
            raise self._discovery_error(f"{prm_url} describes resource {resource!r}, not this one")
        servers = resource_metadata.get("authorization_servers")
        servers = [s for s in servers if isinstance(s, str)] if isinstance(servers, list) else []
        pinned = self._grant.issuer
        if pinned is not None and pinned not in servers:
            raise self._discovery_error(f"{prm_url} does not name {pinned!r} (the grant's issuer)")
        if not servers:
            raise self._discovery_error(f"{prm_url} names no authorization server")
        issuer = pinned or servers[0]
        metadata = await self._server_metadata(issuer)
        scopes = resource_metadata.get("scopes_supported")
        scopes = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else []
        self._found = _Found(resource, issuer, metadata, tuple(scopes), metadata_url)

    async def _resource_metadata(self, metadata_url: str) -> tuple[dict[str, Any], str]:
        parts = urlsplit(self._url)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        candidates = [metadata_url] if metadata_url else []
        candidates += [f"{origin}/.well-known/oauth-protected-resource{path}"] if path else []
        candidates += [f"{origin}/.well-known/oauth-protected-resource"]
        for url in candidates:
            if _origin(url) != _origin(self._url):
                raise self._discovery_error(
                    f"the server points to protected resource metadata on another origin ({url})"
                )
            status, document = await self._fetch("GET", url)
            if status == 200 and document:
                return document, url
        raise self._discovery_error(f"no protected resource metadata at {', '.join(candidates)}")

    async def _server_metadata(self, issuer: str) -> dict[str, Any]:
        _check_endpoint(issuer, self._url)
        candidates = [
            get_well_known_url(issuer, external=True),
            get_well_known_url(issuer, external=True, suffix="openid-configuration"),
            issuer.rstrip("/") + "/.well-known/openid-configuration",
        ]
        for url in dict.fromkeys(candidates):
            status, metadata = await self._fetch("GET", url)
            if status != 200 or not metadata:
                continue
            if str(metadata.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
                raise self._discovery_error(f"{url} is the metadata of {metadata.get('issuer')!r}")
            self._check_server(issuer, metadata)
            return metadata
        raise self._discovery_error(f"no authorization server metadata for {issuer}")

    def _check_server(self, issuer: str, metadata: Mapping[str, Any]) -> None:
        needed = ["token_endpoint"]
        if isinstance(self._grant, AuthorizationCode):
            needed.append("authorization_endpoint")
            if "S256" not in (metadata.get("code_challenge_methods_supported") or ()):
                raise self._discovery_error(f"{issuer} does not support PKCE with S256")
        for key in needed:
            endpoint = metadata.get(key)
            if not isinstance(endpoint, str):
                raise self._discovery_error(f"{issuer}'s metadata has no {key}")
            _check_endpoint(endpoint, self._url)

    def _require_found(self) -> _Found:
        assert self._found is not None, "discovery runs first"
        return self._found

    # -- HTTP ------------------------------------------------------------------------------

    async def _fetch(
        self, method: str, url: str, headers: Mapping[str, str] | None = None, body: bytes = b""
    ) -> tuple[int, dict[str, Any]]:
        """One request to a metadata or token endpoint: the status and the JSON object
        answered (empty when the answer is no JSON object); never follows redirects."""
        _check_endpoint(url, self._url)
        try:
            async with asyncio.timeout(_TIMEOUT):
                request = self._client.build_request(
                    method, url, headers=headers or {"accept": "application/json"}, content=body
                )
                response = await self._client.send(request, stream=True)
                try:
                    data = await _bounded(response)
                finally:
                    await response.aclose()
        except (httpx2.HTTPError, OSError, TimeoutError) as exc:
            raise Unauthorized(
                f"cannot reach {url} to authorize the client: {exc or type(exc).__name__}",
                url=self._url,
                error="unreachable",
            ) from None
        try:
            document = json.loads(data)
        except (ValueError, RecursionError):
            document = None
        return response.status_code, document if isinstance(document, dict) else {}

    def _as_refusal(self, answer: Mapping[str, Any], where: str) -> Unauthorized:
        found = self._require_found()
        error = str(answer.get("error") or "invalid_response")
        description = answer.get("error_description")
        said = f": {description}" if isinstance(description, str) and description else ""
        return Unauthorized(
            f"the authorization server {found.issuer} refused {where} for client "
            f"{self._grant.client_id!r} with {error}{said}"[:1000],
            url=self._url,
            error=error,
        )

    def _discovery_error(self, what: str) -> Unauthorized:
        return Unauthorized(
            f"cannot find how to authorize with {self._url}: {what}",
            url=self._url,
            error="discovery_failed",
        )


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


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _covers(resource: str, url: str) -> bool:
    """``resource`` names the endpoint ``url``: the same origin, a parent path."""
    if _origin(resource) != _origin(url) or urlsplit(resource).fragment:
        return False
    base = urlsplit(resource).path.rstrip("/")
    path = urlsplit(url).path.rstrip("/")
    return path == base or path.startswith(base + "/")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_endpoint(url: str, endpoint: str) -> None:
    """OAuth needs TLS: https, or http on the loopback interface only."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and _loopback(parts.hostname or ""):
        return
    raise Unauthorized(
        f"refusing to use {url!r} to authorize with {endpoint}: OAuth endpoints must be "
        "https (http only on 127.0.0.1/localhost)",
        url=endpoint,
        error="insecure_endpoint",
    )


async def _bounded(response: httpx2.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > _MAX_DOCUMENT:
            raise httpx2.DecodingError(f"more than {_MAX_DOCUMENT} bytes")
        parts.append(chunk)
    return b"".join(parts)


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
