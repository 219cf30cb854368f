"""Access tokens checked without I/O (``auth.jwt``, ``auth.scopes``, ``auth.challenge``):
keys generated here, tokens signed with PyJWT, and every crafted attack refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from fixtures.jwks_issuer import Issuer

from mcpgen_runtime.auth.challenge import (
    bearer_challenge,
    metadata_paths,
    metadata_url,
    protected_resource_metadata,
)
from mcpgen_runtime.auth.jwt import JwtRules, KeySet, UnknownKey, verify_jwt
from mcpgen_runtime.auth.scopes import ScopeTable, tool_scopes
from mcpgen_runtime.auth.tokens import AuthInfo, InvalidToken, scopes_of

ISSUER = "https://issuer.example"
AUDIENCE = "https://mcp.example/mcp"
RULES = JwtRules(ISSUER, AUDIENCE)


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer(ISSUER)


def keys(issuer: Issuer) -> KeySet:
    return KeySet(issuer.jwks())


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    head = b64(json.dumps(header).encode())
    body = b64(json.dumps(claims).encode())
    return f"{head}.{body}.{b64(signature)}"


def good_claims(issuer: Issuer) -> dict[str, Any]:
    token = issuer.token(audience=AUDIENCE, scope="notes:read")
    claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return claims


@pytest.mark.parametrize("alg", ["RS256", "PS384", "ES256", "EdDSA"])
def test_every_asymmetric_family_is_accepted(alg: str) -> None:
    issuer = Issuer(ISSUER)
    kid = issuer.add_key(alg)
    token = issuer.token(audience=AUDIENCE, scope="notes:read notes:write", kid=kid, sub="bob")
    info = verify_jwt(token, keys(issuer), RULES)
    assert info.subject == "bob"
    assert info.client_id == "test-client"
    assert info.scopes == {"notes:read", "notes:write"}
    assert info.claims["iss"] == ISSUER
    assert info.expires_at is not None and info.expires_at > time.time()


def test_an_audience_list_naming_this_resource_is_accepted(issuer: Issuer) -> None:
    token = issuer.token(audience=["https://other.example", AUDIENCE])
    assert verify_jwt(token, keys(issuer), RULES).subject == "alice"


def test_alg_none_is_refused(issuer: Issuer) -> None:
    token = forged({"alg": "none", "kid": issuer.current}, good_claims(issuer))
    with pytest.raises(InvalidToken, match="algorithm is not accepted"):
        verify_jwt(token, keys(issuer), RULES)
    # also without a kid, and spelled otherwise
    for alg in ("None", "NONE"):
        with pytest.raises(InvalidToken):
            verify_jwt(forged({"alg": alg}, good_claims(issuer)), keys(issuer), RULES)


def test_hmac_signed_with_the_public_key_is_refused(issuer: Issuer) -> None:
    """The algorithm-confusion attack: HS256 keyed with the issuer's public key."""
    jwk = next(k for k in issuer.jwks()["keys"] if k["kid"] == issuer.current)
    public_pem = jwt.PyJWK(jwk).key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    header = {"alg": "HS256", "kid": issuer.current, "typ": "JWT"}
    signing_input = (
        b64(json.dumps(header).encode()) + "." + b64(json.dumps(good_claims(issuer)).encode())
    )
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    with pytest.raises(InvalidToken, match="algorithm is not accepted"):
        verify_jwt(signing_input + "." + b64(mac), keys(issuer), RULES)


def test_an_algorithm_that_does_not_fit_the_key_is_refused(issuer: Issuer) -> None:
    claims = good_claims(issuer)
    token = forged({"alg": "ES256", "kid": issuer.current}, claims, b"x" * 64)
    with pytest.raises(InvalidToken, match="does not fit its key"):
        verify_jwt(token, keys(issuer), RULES)
    # RS256 key declared as such in the JWKS, token claiming PS256 with it
    token = forged({"alg": "PS256", "kid": issuer.current}, claims, b"x" * 256)
    with pytest.raises(InvalidToken, match="does not fit its key"):
        verify_jwt(token, keys(issuer), RULES)


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"audience": "https://other.example/mcp"}, "not meant for this resource"),
        ({"audience": None}, "lacks the aud claim"),
        ({"audience": AUDIENCE, "issuer": "https://evil.example"}, "from another issuer"),
        ({"audience": AUDIENCE, "expires_in": -120}, "has expired"),
        ({"audience": AUDIENCE, "not_before": 600}, "not valid yet"),
    ],
)
def test_claims_are_checked(issuer: Issuer, options: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidToken, match=reason):
        verify_jwt(issuer.token(**options), keys(issuer), RULES)


def test_a_small_clock_difference_is_tolerated(issuer: Issuer) -> None:
    token = issuer.token(audience=AUDIENCE, expires_in=-5, not_before=5)
    assert verify_jwt(token, keys(issuer), RULES).subject == "alice"


def test_a_token_without_exp_is_refused(issuer: Issuer) -> None:
    alg, private = issuer.keys[issuer.current]
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice"}
    token = jwt.encode(claims, private, algorithm=alg, headers={"kid": issuer.current})
    with pytest.raises(InvalidToken, match="lacks the exp claim"):
        verify_jwt(token, keys(issuer), RULES)


def test_a_bad_signature_is_refused(issuer: Issuer) -> None:
    token = issuer.token(audience=AUDIENCE)
    head, body, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["scope"] = "admin"  # a changed claim under the old signature
    with pytest.raises(InvalidToken, match="signature does not verify"):
        verify_jwt(f"{head}.{b64(json.dumps(claims).encode())}.{signature}", keys(issuer), RULES)
    # signed by another key presenting the issuer's kid
    impostor = Issuer(ISSUER)
    alg, private = impostor.keys[impostor.current]
    token = jwt.encode(good_claims(issuer), private, algorithm=alg, headers={"kid": issuer.current})
    with pytest.raises(InvalidToken, match="signature does not verify"):
        verify_jwt(token, keys(issuer), RULES)


def test_an_unknown_kid_says_so_so_that_the_keys_may_be_fetched_again() -> None:
    issuer = Issuer(ISSUER)
    old = keys(issuer)
    issuer.rotate()
    token = issuer.token(audience=AUDIENCE)
    with pytest.raises(UnknownKey):
        verify_jwt(token, old, RULES)
    assert verify_jwt(token, keys(issuer), RULES).subject == "alice"


def test_garbage_is_an_invalid_token_never_a_crash(issuer: Issuer) -> None:
    for token in ("", "a.b.c", "x" * 100, "e30.e30.", forged({"alg": "RS256"}, {}), "..."):
        with pytest.raises(InvalidToken):
            verify_jwt(token, keys(issuer), RULES)


def test_a_key_set_keeps_only_signing_keys() -> None:
    issuer = Issuer(ISSUER)
    document = issuer.jwks()
    document["keys"] += [
        {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
        {"kty": "RSA", "use": "enc"},
    ]
    assert [k["kid"] for k in KeySet(document).keys] == [issuer.current]
    with pytest.raises(ValueError, match="keys"):
        KeySet({"nokeys": []})
    # a symmetric key in the set never verifies anything
    token = forged({"alg": "HS256", "kid": "hmac"}, good_claims(issuer))
    with pytest.raises(InvalidToken):
        verify_jwt(token, KeySet(document), RULES)


def test_scopes_of_reads_scope_and_scp() -> None:
    assert scopes_of({"scope": "a b  c"}) == {"a", "b", "c"}
    assert scopes_of({"scp": ["a", "b", 3]}) == {"a", "b"}
    assert scopes_of({}) == frozenset()


def test_the_requestor_keeps_subject_and_client_apart() -> None:
    one = AuthInfo("a|b", "c", frozenset())
    two = AuthInfo("a", "b|c", frozenset())
    assert one.requestor != two.requestor
    assert AuthInfo("a", "x", frozenset()).requestor != AuthInfo("a", "y", frozenset()).requestor


def test_the_scope_table_reads_the_descriptors() -> None:
    table = ScopeTable(
        [
            {"name": "read", "_meta": {"io.mcpgen/scopes": ["notes:read"]}},
            {"name": "write", "_meta": {"io.mcpgen/scopes": ["notes:read", "notes:write"]}},
            {"name": "ping"},
        ]
    )
    assert table.supported == ("notes:read", "notes:write")
    assert table.common == ()
    assert table.missing("write", frozenset({"notes:read"})) == ("notes:write",)
    assert table.missing("write", frozenset()) == ("notes:read", "notes:write")
    assert table.needs("nope") == ()
    assert table.permitted(frozenset({"notes:read"})) == {"read", "ping"}
    assert tool_scopes({"_meta": {"io.mcpgen/scopes": "notes:read"}}) == ()
    shared = ScopeTable(
        [
            {"name": "a", "_meta": {"io.mcpgen/scopes": ["base", "x"]}},
            {"name": "b", "_meta": {"io.mcpgen/scopes": ["base"]}},
        ]
    )
    assert shared.common == ("base",)


def test_challenges_and_metadata() -> None:
    where = metadata_url("https://mcp.example/mcp")
    assert where == "https://mcp.example/.well-known/oauth-protected-resource/mcp"
    assert metadata_url("https://mcp.example") == (
        "https://mcp.example/.well-known/oauth-protected-resource"
    )
    assert bearer_challenge(where) == f'Bearer resource_metadata="{where}"'
    assert bearer_challenge(
        where, error="insufficient_scope", description="needs b", scope=["a", "b"]
    ) == (
        f'Bearer error="insufficient_scope", error_description="needs b", scope="a b", '
        f'resource_metadata="{where}"'
    )
    with pytest.raises(ValueError, match="quote"):
        bearer_challenge(where, description='say "hi"')
    assert metadata_paths("/mcp", "https://proxy.example/api/mcp") == {
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/api/mcp",
    }
    assert protected_resource_metadata("https://r", ["https://as"], ["a"]) == {
        "resource": "https://r",
        "authorization_servers": ["https://as"],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["a"],
    }
