"""The authorization server the auth tests start (tests/oauth_server.py) behaves like a
real one: what the resource-server and client tests rely on is checked here once."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2 as httpx
import pytest
from joserfc import jwt
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet

RESOURCE = "http://127.0.0.1:9/mcp"
REDIRECT = "http://127.0.0.1:5555/callback"


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _claims(server: Any, token: str) -> dict[str, Any]:
    keys = KeySet.import_key_set(httpx.get(server.jwks_uri).json())
    return dict(jwt.decode(token, keys).claims)


def _authorize(server: Any, challenge: str, **extra: str) -> httpx.Response:
    params = {
        "response_type": "code",
        "client_id": "cli",
        "redirect_uri": REDIRECT,
        "scope": "notes:read",
        "state": "st8",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        **extra,
    }
    return httpx.get(server.authorization_endpoint, params=params)


def test_metadata_is_served_at_both_discovery_paths(authorization_server: Any) -> None:
    for path in ("oauth-authorization-server", "openid-configuration"):
        meta = httpx.get(f"{authorization_server.issuer}/.well-known/{path}").json()
        assert meta["issuer"] == authorization_server.issuer
        assert meta["token_endpoint"] == authorization_server.token_endpoint
        assert meta["code_challenge_methods_supported"] == ["S256"]
        assert meta["authorization_response_iss_parameter_supported"] is True


def test_client_credentials_token_names_the_resource_and_granted_scopes(
    authorization_server: Any,
) -> None:
    authorization_server.register_client("m2m", "s3cret", scopes=["notes:read"])
    asked = {"grant_type": "client_credentials", "scope": "notes:read notes:write"}
    response = httpx.post(
        authorization_server.token_endpoint,
        data={**asked, "resource": RESOURCE},
        auth=("m2m", "s3cret"),
    )
    assert response.status_code == 200, response.text
    claims = _claims(authorization_server, response.json()["access_token"])
    assert claims["aud"] == RESOURCE
    assert claims["scope"] == "notes:read"  # notes:write is not this client's to have
    assert (claims["iss"], claims["sub"], claims["client_id"]) == (
        authorization_server.issuer,
        "m2m",
        "m2m",
    )
    wrong = httpx.post(authorization_server.token_endpoint, data=asked, auth=("m2m", "nope"))
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"


def test_strict_client_is_refused_a_scope_it_lacks(authorization_server: Any) -> None:
    authorization_server.register_client("m2m", "s", scopes=["a"], strict_scopes=True)
    data = {"grant_type": "client_credentials", "scope": "a b"}
    response = httpx.post(authorization_server.token_endpoint, data=data, auth=("m2m", "s"))
    assert response.status_code == 400 and response.json()["error"] == "invalid_scope"


def test_authorization_code_with_pkce_then_refresh(authorization_server: Any) -> None:
    authorization_server.register_client("cli", redirect_uris=["http://127.0.0.1/callback"])
    _, challenge = _pkce()
    redirect = _authorize(authorization_server, challenge)
    assert redirect.status_code == 302
    location = urlsplit(redirect.headers["location"])
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert location.netloc == "127.0.0.1:5555"  # any loopback port (RFC 8252 §7.3)
    assert query["state"] == "st8" and query["iss"] == authorization_server.issuer
    exchange = {
        "grant_type": "authorization_code",
        "code": query["code"],
        "client_id": "cli",
        "redirect_uri": REDIRECT,
    }
    bad = httpx.post(
        authorization_server.token_endpoint, data={**exchange, "code_verifier": "x" * 50}
    )
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_grant"
    verifier2, challenge2 = _pkce()
    query = parse_qs(
        urlsplit(_authorize(authorization_server, challenge2).headers["location"]).query
    )
    exchange["code"] = query["code"][0]
    token = httpx.post(
        authorization_server.token_endpoint, data={**exchange, "code_verifier": verifier2}
    ).json()
    claims = _claims(authorization_server, token["access_token"])
    assert (claims["sub"], claims["aud"], claims["scope"]) == ("alice", RESOURCE, "notes:read")
    refresh = {"grant_type": "refresh_token", "client_id": "cli"}
    first = httpx.post(
        authorization_server.token_endpoint,
        data={**refresh, "refresh_token": token["refresh_token"]},
    )
    assert first.status_code == 200
    assert _claims(authorization_server, first.json()["access_token"])["aud"] == RESOURCE
    again = httpx.post(
        authorization_server.token_endpoint,
        data={**refresh, "refresh_token": token["refresh_token"]},
    )
    assert again.json()["error"] == "invalid_grant"  # refresh tokens rotate


def test_authorization_without_pkce_is_refused(authorization_server: Any) -> None:
    authorization_server.register_client("cli")
    redirect = _authorize(authorization_server, "", code_challenge_method="")
    query = parse_qs(urlsplit(redirect.headers["location"]).query)
    assert query["error"] == ["invalid_request"]
    assert query["iss"] == [authorization_server.issuer]


def test_unregistered_redirect_is_not_followed(authorization_server: Any) -> None:
    authorization_server.register_client("cli", redirect_uris=["http://127.0.0.1/callback"])
    _, challenge = _pkce()
    response = _authorize(authorization_server, challenge, redirect_uri="http://evil.test/cb")
    assert response.status_code == 400 and "location" not in response.headers


def test_rotation_signs_with_a_new_kid_and_keeps_the_old_key_published(
    authorization_server: Any,
) -> None:
    before = authorization_server.mint(scopes=["a"], audience=RESOURCE)
    kid = authorization_server.rotate_key()
    after = authorization_server.mint(scopes=["a"], audience=RESOURCE)
    assert jwt.decode(after, authorization_server.signing_key).header["kid"] == kid
    published = {key["kid"] for key in httpx.get(authorization_server.jwks_uri).json()["keys"]}
    assert kid in published and len(published) == 2
    assert _claims(authorization_server, before)["scope"] == "a"
    with pytest.raises(BadSignatureError):
        jwt.decode(before, authorization_server.signing_key)


def test_dynamic_registration_and_introspection(authorization_server: Any) -> None:
    registered = httpx.post(
        authorization_server.registration_endpoint,
        json={
            "redirect_uris": ["http://127.0.0.1/cb"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        },
    )
    assert registered.status_code == 201 and "client_secret" not in registered.json()
    assert registered.json()["client_id"] in authorization_server.clients
    authorization_server.register_client("rs", "rs-secret")
    token = authorization_server.mint(subject="bob", scopes=["a", "b"], audience=RESOURCE)
    answer = httpx.post(
        authorization_server.introspection_endpoint, data={"token": token}, auth=("rs", "rs-secret")
    ).json()
    assert answer["active"] is True and answer["sub"] == "bob" and answer["scope"] == "a b"
    expired = authorization_server.mint(expires_in=-10)
    answer = httpx.post(
        authorization_server.introspection_endpoint,
        data={"token": expired},
        auth=("rs", "rs-secret"),
    ).json()
    assert answer == {"active": False}
