"""The token verifiers a server builds from its settings: JWTs checked against the
issuer's published keys, opaque tokens by RFC 7662 introspection.

Their fetches (the issuer's metadata, its JWKS, an introspection) are blocking urllib
calls run on a thread (``asyncio.to_thread``), so the event loop never waits on the
network; what they fetch is cached. Each fetch goes only to a URL the operator gave or
the configured issuer's metadata named: a token names nothing that is fetched (its
``kid`` only selects a key of the set already configured). Redirects are not
followed; an answer is at most ``MAX_FETCH_BYTES``; ``http`` URLs are accepted on
loopback hosts only (tests, a sidecar), every other URL must be ``https``.

Key rotation: a token signed with a key the cached set lacks makes the verifier fetch
the set again, at most once per ``REFETCH_INTERVAL_SECONDS`` (the first time at once),
so made-up ``kid`` values cannot turn the server into a flood of fetches.

A JWT once accepted is remembered, by its exact text, for ``ACCEPTED_SECONDS`` or until
it expires, whichever is first (at most ``MAX_ACCEPTED`` of them): a client sends the
same token with every request, and checking it again (decoding, a signature) costs more
than the rest of a small call. So a key the issuer withdraws stops working for tokens
already seen here within ``ACCEPTED_SECONDS``.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from ..auth.jwt import (
    DEFAULT_LEEWAY_SECONDS,
    JwtRules,
    KeySet,
    UnknownKey,
    info_of,
    looks_like_jwt,
    verify_jwt,
)
from ..auth.tokens import AuthInfo, InvalidToken, VerifierUnavailable
from ..protocol.addresses import discovery_urls, secure_url

__all__ = [
    "ACCEPTED_SECONDS",
    "FETCH_TIMEOUT_SECONDS",
    "MAX_ACCEPTED",
    "MAX_FETCH_BYTES",
    "REFETCH_INTERVAL_SECONDS",
    "BearerVerifier",
    "IntrospectionVerifier",
    "JwtVerifier",
    "VerifierUnavailable",
    "check_fetch_url",
    "discovery_urls",
]

FETCH_TIMEOUT_SECONDS = 5.0
MAX_FETCH_BYTES = 1024 * 1024
REFETCH_INTERVAL_SECONDS = 10.0
ACCEPTED_SECONDS = 60.0
MAX_ACCEPTED = 1024


def check_fetch_url(url: str, what: str) -> str:
    """``url`` if the verifiers may fetch it: https, or http on a loopback host."""
    if secure_url(url):
        return url
    raise ValueError(f"{what} must be an https URL (http only on a loopback host): {url!r}")


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx stays an error: only the configured URL is fetched


_OPENER = urllib.request.build_opener(_NoRedirects)


def fetch_json(url: str, *, data: bytes | None = None, headers: Mapping[str, str] = {}) -> Any:
    """GET (or POST ``data`` to) ``url`` and decode its JSON answer: blocking, bounded."""
    request = urllib.request.Request(
        url, data=data, headers={"Accept": "application/json", **headers}
    )
    try:
        with _OPENER.open(request, timeout=FETCH_TIMEOUT_SECONDS) as answer:
            body = answer.read(MAX_FETCH_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise VerifierUnavailable(f"{_where(url)} answered HTTP {exc.code}") from None
    except (OSError, ValueError) as exc:
        raise VerifierUnavailable(f"{_where(url)} cannot be reached: {exc}") from None
    if len(body) > MAX_FETCH_BYTES:
        raise VerifierUnavailable(f"{_where(url)} answered more than {MAX_FETCH_BYTES} bytes")
    try:
        return json.loads(body)
    except ValueError:
        raise VerifierUnavailable(f"{_where(url)} did not answer JSON") from None


def _where(url: str) -> str:
    parts = urlsplit(url)  # no query string: it could hold a credential
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class JwtVerifier:
    """JWT access tokens checked against the issuer's JWKS (``auth.jwt``)."""

    def __init__(self, rules: JwtRules, *, jwks_url: str | None = None) -> None:
        self.rules = rules
        check_fetch_url(rules.issuer, "--auth-issuer")
        self.jwks_url = None if jwks_url is None else check_fetch_url(jwks_url, "--auth-jwks-url")
        self.keys: KeySet | None = None
        self.fetches = 0  # JWKS documents fetched (each one replaces the set)
        self._refetched_at: float | None = None
        self._lock = asyncio.Lock()
        # token text -> (accepted until, its AuthInfo); oldest first
        self._accepted: collections.OrderedDict[str, tuple[float, AuthInfo]] = (
            collections.OrderedDict()
        )

    async def verify(self, token: str) -> AuthInfo:
        now = time.time()
        seen = self._accepted.get(token)
        if seen is not None and seen[0] > now:
            return seen[1]
        keys = self.keys or await self._load(None)
        try:
            info = verify_jwt(token, keys, self.rules)
        except UnknownKey:
            keys = await self._load(keys)
            info = verify_jwt(token, keys, self.rules)  # still unknown: refused
        expires = info.expires_at if info.expires_at is not None else now
        self._accepted[token] = (min(now + ACCEPTED_SECONDS, expires + self.rules.leeway), info)
        self._accepted.move_to_end(token)
        if len(self._accepted) > MAX_ACCEPTED:
            self._accepted.popitem(last=False)
        return info

    async def _load(self, stale: KeySet | None) -> KeySet:
        """The key set: fetched when there is none yet, or fetched again when ``stale``
        lacked a token's key (unless another request just did, or the last such
        fetch was less than ``REFETCH_INTERVAL_SECONDS`` ago)."""
        async with self._lock:
            if self.keys is not None and self.keys is not stale:
                return self.keys  # loaded (or reloaded) while this request waited
            if stale is not None:
                now = time.monotonic()
                last = self._refetched_at
                if last is not None and now - last < REFETCH_INTERVAL_SECONDS:
                    return stale
                self._refetched_at = now
            if self.jwks_url is None:
                self.jwks_url = await asyncio.to_thread(self._discover)
            document = await asyncio.to_thread(fetch_json, self.jwks_url)
            try:
                self.keys = KeySet(document)
            except ValueError as exc:
                raise VerifierUnavailable(f"{_where(self.jwks_url)}: {exc}") from None
            self.fetches += 1
            return self.keys

    def _discover(self) -> str:
        """The issuer's ``jwks_uri``, from the first metadata document that answers."""
        problems = []
        for url in discovery_urls(self.rules.issuer):
            try:
                metadata = fetch_json(url)
            except VerifierUnavailable as exc:
                problems.append(str(exc))
                continue
            if not isinstance(metadata, dict) or metadata.get("issuer") != self.rules.issuer:
                problems.append(f"{_where(url)} is not metadata of {self.rules.issuer}")
                continue
            jwks = metadata.get("jwks_uri")
            if not isinstance(jwks, str):
                raise VerifierUnavailable(f"{_where(url)} names no jwks_uri")
            try:
                return check_fetch_url(jwks, "the issuer's jwks_uri")
            except ValueError as exc:
                raise VerifierUnavailable(str(exc)) from None
        raise VerifierUnavailable("no metadata of the issuer: " + "; ".join(problems))


class IntrospectionVerifier:
    """Opaque tokens asked about at an RFC 7662 introspection endpoint, with this
    server's client credentials (HTTP Basic, as RFC 6749 section 2.3.1 encodes them)."""

    def __init__(
        self,
        url: str,
        *,
        audience: str,
        issuer: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        leeway: float = DEFAULT_LEEWAY_SECONDS,
    ) -> None:
        self.url = check_fetch_url(url, "--auth-introspection-url")
        self.audience = audience
        self.issuer = issuer
        self.leeway = leeway
        self._headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if client_id is not None:
            pair = f"{quote(client_id, safe='')}:{quote(client_secret or '', safe='')}"
            self._headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()

    async def verify(self, token: str) -> AuthInfo:
        body = urlencode({"token": token, "token_type_hint": "access_token"}).encode()
        answer = await asyncio.to_thread(fetch_json, self.url, data=body, headers=self._headers)
        if not isinstance(answer, dict):
            raise VerifierUnavailable(f"{_where(self.url)} did not answer an object")
        return self.accept(answer, time.time())

    def accept(self, answer: Mapping[str, Any], now: float) -> AuthInfo:
        """The ``AuthInfo`` of an introspection answer, or ``InvalidToken``."""
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        audience = answer.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.audience not in audiences:
            raise InvalidToken("the token is not meant for this resource (aud)")
        if self.issuer is not None and answer.get("iss", self.issuer) != self.issuer:
            raise InvalidToken("the token is from another issuer (iss)")
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if isinstance(exp, int | float) and exp + self.leeway < now:
            raise InvalidToken("the token has expired")
        if isinstance(nbf, int | float) and nbf - self.leeway > now:
            raise InvalidToken("the token is not valid yet")
        return info_of(answer)


class BearerVerifier:
    """The server's verifier from its settings: a JWT checked locally, an opaque token
    (or a JWT whose issuer publishes no keys) introspected when an endpoint is set."""

    def __init__(
        self, jwt: JwtVerifier | None, introspection: IntrospectionVerifier | None
    ) -> None:
        self.jwt = jwt
        self.introspection = introspection

    async def verify(self, token: str) -> AuthInfo:
        if self.jwt is not None and looks_like_jwt(token):
            try:
                return await self.jwt.verify(token)
            except VerifierUnavailable:
                if self.introspection is None:
                    raise
        if self.introspection is not None:
            return await self.introspection.verify(token)
        raise InvalidToken("the token is not a JWT, and no introspection endpoint is set")
