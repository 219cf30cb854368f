"""JWT access tokens checked against a key set, with PyJWT: no I/O.

``JwtRules`` says what a token must be (issuer, audience, clock leeway); ``KeySet``
holds the issuer's signing keys (a JWKS document, fetched by the HTTP shell,
``http.verifiers``); ``verify_jwt`` checks one token against both and returns its
``AuthInfo``, or raises ``InvalidToken`` — ``UnknownKey`` when the token names a key
the set lacks, so that the shell may fetch the set again (the issuer rotated its keys).

What is refused, whatever the token's header says:
- ``alg: none`` and every HMAC algorithm: only the asymmetric families (RS, PS, ES,
  EdDSA) are accepted, so a token "signed" with the public key as an HMAC secret
  cannot pass;
- a key whose type or declared ``alg`` does not fit the token's algorithm;
- a wrong ``iss``, an ``aud`` that does not name this resource, an ``exp`` in the past
  or a ``nbf``/``iat`` in the future (beyond ``leeway`` seconds), a missing ``exp``,
  ``iss`` or ``aud``.

Needs the ``auth`` extra (``pip install 'mcpgen-runtime[auth]'``: PyJWT with
cryptography); loaded only when a server verifies JWTs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jwt

from .tokens import AuthInfo, InvalidToken, scopes_of

__all__ = ["ALGORITHMS", "DEFAULT_LEEWAY_SECONDS", "JwtRules", "KeySet", "UnknownKey", "verify_jwt"]

# The signature algorithms accepted, with the key type each needs.
ALGORITHMS: Mapping[str, str] = {
    **{f"{family}{bits}": "RSA" for family in ("RS", "PS") for bits in (256, 384, 512)},
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
    "EdDSA": "OKP",
}
# Clock difference tolerated between the issuer and this server.
DEFAULT_LEEWAY_SECONDS = 30.0


class UnknownKey(InvalidToken):
    """The token names a key (``kid``) the key set does not hold."""


@dataclass(frozen=True)
class JwtRules:
    issuer: str
    audience: str
    leeway: float = DEFAULT_LEEWAY_SECONDS


class KeySet:
    """The signing keys of a JWKS document, by ``kid``: keys of the accepted types
    meant for signatures (``use`` absent or ``sig``); others are skipped, not fatal."""

    def __init__(self, document: Any) -> None:
        keys = document.get("keys") if isinstance(document, Mapping) else None
        if not isinstance(keys, list):
            raise ValueError("a JWKS document is an object with a 'keys' array")  # noqa: TRY004
        self.keys: list[Mapping[str, Any]] = [
            key
            for key in keys
            if isinstance(key, Mapping)
            and key.get("kty") in ("RSA", "EC", "OKP")
            and key.get("use", "sig") == "sig"
        ]
        # each key loaded once per algorithm (loading an RSA key costs more than a check)
        self._loaded: dict[tuple[int, str], Any] = {}

    def public_key(self, jwk: Mapping[str, Any], alg: str) -> Any:
        """``jwk`` (one of ``keys``) as the public key object PyJWT checks ``alg`` with."""
        slot = (id(jwk), alg)
        key = self._loaded.get(slot)
        if key is None:
            key = self._loaded[slot] = jwt.PyJWK(dict(jwk), algorithm=alg).key
        return key

    def find(self, kid: str | None) -> Mapping[str, Any]:
        if kid is None:
            if len(self.keys) == 1:
                return self.keys[0]
            raise InvalidToken("the token names no key (kid) and the issuer has several")
        for key in self.keys:
            if key.get("kid") == kid:
                return key
        raise UnknownKey("the token is signed with a key the issuer does not publish")


def looks_like_jwt(token: str) -> bool:
    """Three dot-separated base64url parts: a JWS compact serialisation."""
    return token.count(".") == 2


def verify_jwt(token: str, keys: KeySet, rules: JwtRules) -> AuthInfo:
    """The ``AuthInfo`` of a valid ``token``; ``InvalidToken`` (``UnknownKey``) otherwise."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise InvalidToken("the token is not a well-formed JWT") from None
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in ALGORITHMS:
        raise InvalidToken(f"the token's algorithm is not accepted ({_safe(alg)})")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise InvalidToken("the token's kid is not a string")
    jwk = keys.find(kid)
    if jwk.get("kty") != ALGORITHMS[alg] or jwk.get("alg", alg) != alg:
        raise InvalidToken("the token's algorithm does not fit its key")
    try:
        key = keys.public_key(jwk, alg)
        claims = jwt.decode(
            token,
            key,
            algorithms=[alg],
            audience=rules.audience,
            issuer=rules.issuer,
            leeway=rules.leeway,
            options={"require": ["exp", "iss", "aud"]},
        )
    except jwt.ExpiredSignatureError:
        raise InvalidToken("the token has expired") from None
    except jwt.ImmatureSignatureError:
        raise InvalidToken("the token is not valid yet") from None
    except jwt.InvalidAudienceError:
        raise InvalidToken("the token is not meant for this resource (aud)") from None
    except jwt.InvalidIssuerError:
        raise InvalidToken("the token is from another issuer (iss)") from None
    except jwt.MissingRequiredClaimError as exc:
        raise InvalidToken(f"the token lacks the {exc.claim} claim") from None
    except jwt.InvalidSignatureError:
        raise InvalidToken("the token's signature does not verify") from None
    except (jwt.PyJWTError, ValueError, TypeError):
        raise InvalidToken("the token cannot be verified") from None
    return info_of(claims)


def info_of(claims: Mapping[str, Any]) -> AuthInfo:
    """What accepted claims grant (JWT or introspection: the same claim names)."""
    subject = claims.get("sub")
    client = claims.get("client_id", claims.get("azp"))
    expires = claims.get("exp")
    return AuthInfo(
        subject=subject if isinstance(subject, str) else None,
        client_id=client if isinstance(client, str) else None,
        scopes=scopes_of(claims),
        claims=dict(claims),
        expires_at=float(expires) if isinstance(expires, int | float) else None,
    )


def _safe(value: Any) -> str:
    """A header value fit for an error description: short, no quotes or controls."""
    text = str(value)[:20]
    return "".join(ch if ch.isalnum() or ch in "-_." else "?" for ch in text)
