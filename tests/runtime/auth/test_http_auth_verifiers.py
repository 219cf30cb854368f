"""The verifiers a server builds from its settings (``http.verifiers``), against an
issuer served over a real loopback socket: discovery of its keys through RFC 8414
metadata, key rotation (an unknown kid fetches the keys again, at most once per
interval), introspection of opaque tokens with the server's client credentials."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.jwks_issuer import Issuer, running_issuer

pytest.importorskip("jwt", reason="the auth extra (PyJWT) is not installed")

from mcpgen_runtime.auth.jwt import JwtRules
from mcpgen_runtime.auth.tokens import InvalidToken
from mcpgen_runtime.http import verifiers
from mcpgen_runtime.http.verifiers import (
    BearerVerifier,
    IntrospectionVerifier,
    JwtVerifier,
    VerifierUnavailable,
    check_fetch_url,
    discovery_urls,
)

AUDIENCE = "https://mcp.example/mcp"


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


def test_keys_are_found_through_the_issuers_metadata(issuer: Issuer) -> None:
    verifier = JwtVerifier(JwtRules(issuer.url, AUDIENCE))

    async def run() -> None:
        info = await verifier.verify(issuer.token(audience=AUDIENCE, scope="a b"))
        assert info.scopes == {"a", "b"}
        # concurrent requests share the cached keys: no further fetch
        await asyncio.gather(*(verifier.verify(issuer.token(audience=AUDIENCE)) for _ in range(5)))

    asyncio.run(run())
    assert issuer.fetches["/.well-known/oauth-authorization-server"] == 1
    assert issuer.fetches["/jwks"] == 1


def test_a_rotated_key_is_fetched_once_and_made_up_kids_are_rate_limited(
    issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier = JwtVerifier(JwtRules(issuer.url, AUDIENCE), jwks_url=issuer.url + "/jwks")
    clock = [1000.0]
    monkeypatch.setattr(verifiers.time, "monotonic", lambda: clock[0])

    async def run() -> None:
        await verifier.verify(issuer.token(audience=AUDIENCE))
        issuer.rotate()
        # the new key: fetched again at once
        await asyncio.gather(*(verifier.verify(issuer.token(audience=AUDIENCE)) for _ in range(4)))
        assert issuer.fetches["/jwks"] == 2
        # tokens naming keys nobody publishes: refused without a fetch within the interval
        stranger = Issuer(issuer.url)
        for _ in range(5):
            with pytest.raises(InvalidToken, match="does not publish"):
                await verifier.verify(stranger.token(audience=AUDIENCE))
        assert issuer.fetches["/jwks"] == 2
        issuer.rotate()
        with pytest.raises(InvalidToken):  # a real rotation inside the interval waits for it
            await verifier.verify(issuer.token(audience=AUDIENCE))
        clock[0] += verifiers.REFETCH_INTERVAL_SECONDS
        await verifier.verify(issuer.token(audience=AUDIENCE))
        assert issuer.fetches["/jwks"] == 3

    asyncio.run(run())
    assert issuer.fetches["/.well-known/oauth-authorization-server"] == 0


def test_an_unreachable_issuer_is_unavailable_not_invalid() -> None:
    verifier = JwtVerifier(JwtRules("http://127.0.0.1:9", AUDIENCE))
    with pytest.raises(VerifierUnavailable, match="no metadata"):
        asyncio.run(verifier.verify(Issuer("http://127.0.0.1:9").token(audience=AUDIENCE)))


def test_metadata_of_another_issuer_is_not_used(issuer: Issuer) -> None:
    issuer.claimed_issuer = "https://evil.example"
    verifier = JwtVerifier(JwtRules(issuer.url, AUDIENCE))
    with pytest.raises(VerifierUnavailable, match="not metadata of"):
        asyncio.run(verifier.verify(issuer.token(audience=AUDIENCE)))


def test_where_metadata_is_looked_for() -> None:
    assert discovery_urls("https://as.example/tenant1") == [
        "https://as.example/.well-known/oauth-authorization-server/tenant1",
        "https://as.example/.well-known/openid-configuration/tenant1",
        "https://as.example/tenant1/.well-known/openid-configuration",
    ]
    assert discovery_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]


def test_only_https_or_loopback_urls_are_fetched() -> None:
    assert check_fetch_url("https://as.example/jwks", "x")
    assert check_fetch_url("http://127.0.0.1:8/jwks", "x")
    assert check_fetch_url("http://[::1]:8/jwks", "x")
    for url in ("http://as.example/jwks", "file:///etc/passwd", "ftp://as.example/", "https:///x"):
        with pytest.raises(ValueError, match="https"):
            check_fetch_url(url, "x")


def introspection(issuer: Issuer, secret: str = "rs-secret") -> IntrospectionVerifier:
    return IntrospectionVerifier(
        issuer.url + "/introspect",
        audience=AUDIENCE,
        issuer=issuer.url,
        client_id="rs-client",
        client_secret=secret,
    )


def test_opaque_tokens_are_introspected(issuer: Issuer) -> None:
    now = int(time.time())
    good: dict[str, Any] = {
        "active": True,
        "sub": "dora",
        "client_id": "c",
        "scope": "notes:read",
        "aud": AUDIENCE,
        "iss": issuer.url,
        "exp": now + 60,
    }
    issuer.opaque = {
        "good": good,
        "inactive": {**good, "active": False},
        "elsewhere": {**good, "aud": "https://other.example"},
        "expired": {**good, "exp": now - 600},
        "foreign": {**good, "iss": "https://evil.example"},
    }
    verifier = BearerVerifier(JwtVerifier(JwtRules(issuer.url, AUDIENCE)), introspection(issuer))
    info = asyncio.run(verifier.verify("good"))
    assert (info.subject, info.scopes) == ("dora", {"notes:read"})
    expected = "Basic " + base64.b64encode(b"rs-client:rs-secret").decode()
    assert issuer.introspection_auth == expected
    for token in ("inactive", "elsewhere", "expired", "foreign", "unknown"):
        with pytest.raises(InvalidToken):
            asyncio.run(verifier.verify(token))
    # a JWT is still checked locally
    asyncio.run(verifier.verify(issuer.token(audience=AUDIENCE)))
    assert issuer.fetches["/introspect"] == 6
    # the endpoint refusing the server's credentials: unavailable, not the client's fault
    with pytest.raises(VerifierUnavailable, match="HTTP 401"):
        asyncio.run(introspection(issuer, "wrong").verify("good"))


def test_without_introspection_an_opaque_token_is_invalid(issuer: Issuer) -> None:
    verifier = BearerVerifier(JwtVerifier(JwtRules(issuer.url, AUDIENCE)), None)
    with pytest.raises(InvalidToken, match="not a JWT"):
        asyncio.run(verifier.verify("opaque"))


def test_an_accepted_token_is_remembered_until_it_expires(
    issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier = JwtVerifier(JwtRules(issuer.url, AUDIENCE), jwks_url=issuer.url + "/jwks")
    token = issuer.token(audience=AUDIENCE, expires_in=20)
    checked: list[str] = []
    real = verifiers.verify_jwt
    monkeypatch.setattr(verifiers, "verify_jwt", lambda *a: checked.append(a[0]) or real(*a))

    async def run() -> None:
        for _ in range(3):
            await verifier.verify(token)
        assert checked == [token]  # checked once, then remembered
        later = time.time() + 20 + verifiers.DEFAULT_LEEWAY_SECONDS + 1
        monkeypatch.setattr(verifiers.time, "time", lambda: later)
        await verifier.verify(token)  # past its exp: checked again (PyJWT's clock decides)
        assert checked == [token, token]

    asyncio.run(run())
