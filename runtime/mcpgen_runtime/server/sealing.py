"""Sealed tokens a stateless server hands its clients, and reads back on any worker.

Two kinds, both HMAC-SHA256 over canonical JSON claims under one server key
(``--request-state-key`` / ``MCPGEN_REQUEST_STATE_KEY``; else a random key of this
server run, shared by its ``--workers`` and by nothing else), each with an expiry:

- a 2026-07-28 asking call's ``requestState`` (``server.asking``): bound to the tool, a
  digest of its arguments and of the requestor (``binding_of``), holding the caller's
  answers so far; ten minutes;
- the handshake-era ``Mcp-Session-Id`` handed to an HTTP client that declared
  elicitation at ``initialize`` (``session_token``), holding only that declaration,
  so that a later request on any worker knows it may be asked; a day.

They are signed, not encrypted: they hold nothing but what the client itself sent.
``StateSeal.open`` refuses (``StateRefused``) a token that is malformed, altered,
sealed under another key, expired, minted in the future or minted for another call.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "MIN_KEY_BYTES",
    "SESSION_TTL_SECONDS",
    "STATE_KEY_ENV",
    "STATE_TTL_SECONDS",
    "StateRefused",
    "StateSeal",
    "binding_of",
    "question_digest",
    "session_capabilities",
    "session_token",
]

# Seconds a sealed requestState stays good (the caller's user answers within it).
STATE_TTL_SECONDS = 600.0
# Seconds the Mcp-Session-Id a stateless HTTP server hands a handshake-era client that
# declared elicitation stays good (it carries that declaration; nothing is stored).
SESSION_TTL_SECONDS = 24 * 3600.0
STATE_KEY_ENV = "MCPGEN_REQUEST_STATE_KEY"
MIN_KEY_BYTES = 32
_SKEW = 60.0  # seconds a state may seem minted in the future (clocks of two machines)
_PREFIX = "v1."
_LABEL = b"mcpgen/request-state/v1"


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(value: Any) -> str:
    return _b64(hashlib.sha256(_canonical(value)).digest()[:16])


def question_digest(message: str, schema: Mapping[str, Any]) -> str:
    """What identifies one question: its message and schema."""
    return _digest([message, schema])


class StateRefused(Exception):
    """A ``requestState`` that this server did not mint for this call, or too old;
    the text is the reason, for the server's log (the caller reads a fixed one)."""


class StateSeal:
    """Seals and opens ``requestState`` (HMAC-SHA256, expiry, binding claims)."""

    def __init__(
        self,
        key: str | bytes | None = None,
        *,
        ttl: float = STATE_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ephemeral = key is None
        secret = os.urandom(MIN_KEY_BYTES) if key is None else key
        raw = secret.encode() if isinstance(secret, str) else bytes(secret)
        if len(raw) < MIN_KEY_BYTES:
            raise ValueError(
                f"the request-state key must be at least {MIN_KEY_BYTES} bytes of secret "
                f"randomness (it is {len(raw)}); make one with: "
                'python -c "import secrets; print(secrets.token_hex(32))"'
            )
        self._key = hmac.new(raw, _LABEL, hashlib.sha256).digest()
        self.ttl = ttl
        self.clock = clock

    @classmethod
    def from_environment(cls) -> StateSeal:
        """Keyed by ``MCPGEN_REQUEST_STATE_KEY`` when set, else by a random key."""
        return cls(os.environ.get(STATE_KEY_ENV) or None)

    def seal(self, claims: Mapping[str, Any], *, ttl: float | None = None) -> str:
        now = self.clock()
        life = self.ttl if ttl is None else ttl
        payload = _canonical({**claims, "iat": now, "exp": now + life})
        tag = hmac.new(self._key, payload, hashlib.sha256).digest()
        return f"{_PREFIX}{_b64(payload)}.{_b64(tag)}"

    def open(self, token: object, binding: Mapping[str, Any]) -> dict[str, Any]:
        """The claims of ``token`` once checked: ours, unaltered, unexpired and
        minted for ``binding`` (tool, arguments, requestor); else ``StateRefused``."""
        if not isinstance(token, str) or not token.startswith(_PREFIX) or token.count(".") != 2:
            raise StateRefused("malformed")
        body, _, tag = token[len(_PREFIX) :].partition(".")
        try:
            payload, given = _unb64(body), _unb64(tag)
        except (binascii.Error, ValueError):
            raise StateRefused("malformed") from None
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()
        if not hmac.compare_digest(given, expected):
            raise StateRefused("bad seal (altered, or sealed with another key)")
        try:
            claims = json.loads(payload)
        except ValueError:
            raise StateRefused("malformed") from None
        if not isinstance(claims, dict):
            raise StateRefused("malformed")
        now = self.clock()
        if not (isinstance(claims.get("exp"), float | int) and now < claims["exp"]):
            raise StateRefused("expired")
        if not (isinstance(claims.get("iat"), float | int) and claims["iat"] <= now + _SKEW):
            raise StateRefused("minted in the future")
        if any(claims.get(key) != value for key, value in binding.items()):
            raise StateRefused("minted for another call")
        return claims


def session_token(seal: StateSeal, elicitation: object) -> str:
    """The ``Mcp-Session-Id`` carrying a handshake-era client's elicitation capability."""
    return seal.seal({"k": "session", "e": elicitation}, ttl=SESSION_TTL_SECONDS)


def session_capabilities(seal: StateSeal, token: str) -> dict[str, Any]:
    """The capabilities a session token carries ({} when it is not a good one: the
    calls of that client then decline to ask, as for a client without the capability)."""
    try:
        claims = seal.open(token, {"k": "session"})
    except StateRefused:
        return {}
    return {"elicitation": claims.get("e")}


def binding_of(tool: str, arguments: Mapping[str, Any], requestor: str | None) -> dict[str, Any]:
    """What a state is bound to: the tool, its arguments and who called it."""
    return {
        "t": tool,
        "a": _digest(arguments),
        "p": None if requestor is None else _digest(requestor),
    }
