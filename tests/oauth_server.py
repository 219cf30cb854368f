"""A real OAuth 2.1 authorization server for the tests, offline on 127.0.0.1.

The authorization tests (the resource server's token checks, mcpgen's OAuth client,
the official SDKs' clients) need a peer that behaves like a production authorization
server: registered clients with allowed scopes, PKCE that is actually checked, JWT
access tokens signed with a key published in a JWKS, key rotation, refresh tokens.

Built on **Authlib's authorization-server components** (``authlib.oauth2``, pinned in
requirements/dev-constraints.txt), served by ``http.server`` in one thread. Authlib
does the protocol: client authentication (``client_secret_basic``/``_post``/``none``),
the authorization-code grant with PKCE (RFC 7636, S256 only here), client credentials,
refresh tokens (rotated), RFC 9068 JWT access tokens, RFC 9207 ``iss`` on authorization
responses, RFC 7591 dynamic client registration, RFC 7662 introspection. This module
only stores clients/codes/tokens in dicts and adapts HTTP requests to Authlib's.

Chosen over the npm package ``oauth2-mock-server``, which accepts any client id and
any scope (so "the AS denies a scope" cannot be staged), has no RFC 7591 registration
(the official Python SDK's client registers itself when it has no client info), and
signs with its keys in turn rather than with one current key after a rotation.

What a test gets (``running_authorization_server()`` or the ``authorization_server``
fixture): ``.issuer`` and the endpoint URLs; RFC 8414 metadata at
``/.well-known/oauth-authorization-server`` (and the OIDC path); ``.mint(...)`` for an
exact token; ``.rotate_key()``; ``.register_client(...)``; ``.token_lifetime`` (seconds,
settable); ``.subject`` (who "logs in" at ``/authorize``, which approves at once: tests
have no browser; a ``login_hint`` parameter overrides it). Tokens carry ``iss``, ``sub``,
``aud`` (the RFC 8707 ``resource`` parameter, else the client id), ``scope``,
``client_id``, ``exp``, ``iat``, ``jti``.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

from authlib.oauth2 import rfc6749, rfc7591, rfc7636, rfc7662, rfc9068, rfc9207
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import InvalidRequestError, InvalidScopeError, OAuth2Error
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

__all__ = ["AuthorizationServer", "RegisteredClient", "running_authorization_server"]

_LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
_resource: ContextVar[str | list[str] | None] = ContextVar("resource", default=None)


@dataclass
class RegisteredClient(rfc6749.ClientMixin):  # type: ignore[misc]
    """One client: ``client_secret=None`` makes it public (PKCE, no secret).
    ``scopes=None`` allows any scope; ``strict_scopes`` answers ``invalid_scope`` to a
    request for more than ``scopes`` instead of granting the allowed part (both are
    what real servers do)."""

    client_id: str
    client_secret: str | None = None
    scopes: Sequence[str] | None = None
    redirect_uris: Sequence[str] = ()
    grant_types: Sequence[str] = ("authorization_code", "refresh_token", "client_credentials")
    strict_scopes: bool = False

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        asked = (scope or "").split()
        if self.scopes is None:
            return " ".join(asked)
        if not asked:
            return " ".join(self.scopes)
        denied = [s for s in asked if s not in self.scopes]
        if denied and self.strict_scopes:
            raise InvalidScopeError(f"scope not allowed for this client: {' '.join(denied)}")
        return " ".join(s for s in asked if s in self.scopes)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        if redirect_uri in self.redirect_uris:
            return True
        # RFC 8252 §7.3: a loopback redirect matches whatever port the client bound.
        got = urlsplit(redirect_uri)
        for registered in map(urlsplit, self.redirect_uris):
            if (
                got.scheme == registered.scheme == "http"
                and got.hostname in _LOOPBACK
                and got.hostname == registered.hostname
                and got.path == registered.path
                and got.query == registered.query
            ):
                return True
        return False

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and hmac.compare_digest(
            self.client_secret.encode(), client_secret.encode()
        )

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.client_secret is None:
            return method == "none"
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class _Code(rfc6749.AuthorizationCodeMixin):  # type: ignore[misc]
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    subject: str
    resource: str | list[str] | None
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class _Token(rfc6749.TokenMixin):  # type: ignore[misc]
    client_id: str
    scope: str
    subject: str | None
    resource: str | list[str] | None
    access_token: str
    refresh_token: str | None
    issued_at: int
    expires_in: int
    revoked: bool = False  # the access token
    refresh_revoked: bool = False  # the refresh token (rotated on use)
    claims: dict[str, Any] = field(default_factory=dict)

    def check_client(self, client: RegisteredClient) -> bool:
        return self.client_id == client.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self) -> bool:
        return self.revoked


class _User:
    def __init__(self, subject: str) -> None:
        self.subject = subject

    def get_user_id(self) -> str:
        return self.subject


class _Payload(rfc6749.OAuth2Payload):  # type: ignore[misc]
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._data = dict(pairs)
        self._datalist: dict[str, list[str]] = {}
        for key, value in pairs:
            self._datalist.setdefault(key, []).append(value)

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> dict[str, list[str]]:
        return self._datalist


class _Request(rfc6749.OAuth2Request):  # type: ignore[misc]
    """An HTTP request in Authlib's terms: query for GET, form for POST."""

    def __init__(self, method: str, uri: str, headers: dict[str, str], body: bytes) -> None:
        super().__init__(method, uri, headers=headers)
        self._args = parse_qsl(urlsplit(uri).query)
        self._form = parse_qsl(body.decode()) if method == "POST" else []
        self.payload = _Payload(self._args + self._form)

    @property
    def args(self) -> dict[str, str]:
        return dict(self._args)

    @property
    def form(self) -> dict[str, str]:
        return dict(self._form)


class _JsonRequest(rfc6749.JsonRequest):  # type: ignore[misc]
    def __init__(self, method: str, uri: str, headers: dict[str, str], body: bytes) -> None:
        super().__init__(method, uri, headers)
        data = json.loads(body or b"{}")
        self.payload = type("P", (rfc6749.JsonPayload,), {"data": property(lambda _: data)})()


def _resource_of(request: rfc6749.OAuth2Request) -> str | list[str] | None:
    """RFC 8707: absolute URIs without a fragment; several make a list audience."""
    values = request.payload.datalist.get("resource", [])
    for value in values:
        parts = urlsplit(value)
        if not parts.scheme or not parts.netloc or parts.fragment:
            raise OAuth2Error("resource must be an absolute URI", error="invalid_target")
    return None if not values else values[0] if len(values) == 1 else list(values)


class _Grant:
    """Sets the token's audience from the grant's request (Authlib leaves RFC 8707 out)."""

    def generate_token(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        reset = _resource.set(self.resource())
        try:
            return super().generate_token(*args, **kwargs)  # type: ignore[misc, no-any-return]
        finally:
            _resource.reset(reset)

    def resource(self) -> str | list[str] | None:
        return _resource_of(self.request)  # type: ignore[attr-defined]


class _ClientCredentials(_Grant, grants.ClientCredentialsGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]


class _AuthorizationCode(_Grant, grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = [
        "client_secret_basic",
        "client_secret_post",
        "none",
    ]

    def save_authorization_code(self, code: str, request: rfc6749.OAuth2Request) -> None:
        data = request.payload.data
        self.server.codes[code] = _Code(
            code=code,
            client_id=request.client.client_id,
            redirect_uri=request.payload.redirect_uri,
            scope=request.client.get_allowed_scope(request.payload.scope),
            subject=request.user.subject,
            resource=_resource_of(request),
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
            expires_at=time.time() + 300,
        )

    def query_authorization_code(self, code: str, client: RegisteredClient) -> _Code | None:
        found: _Code | None = self.server.codes.get(code)
        if found and found.client_id == client.client_id and found.expires_at > time.time():
            return found
        return None

    def delete_authorization_code(self, authorization_code: _Code) -> None:
        self.server.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: _Code) -> _User:
        return _User(authorization_code.subject)

    def resource(self) -> str | list[str] | None:
        asked = _resource_of(self.request)
        granted = self.request.authorization_code.resource
        if asked is not None and granted is not None and asked != granted:
            raise OAuth2Error("resource differs from the authorization", error="invalid_target")
        return asked if asked is not None else granted


class _Refresh(_Grant, grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = [
        "client_secret_basic",
        "client_secret_post",
        "none",
    ]
    INCLUDE_NEW_REFRESH_TOKEN = True  # OAuth 2.1: rotate refresh tokens of public clients

    def authenticate_refresh_token(self, refresh_token: str) -> _Token | None:
        found: _Token | None = self.server.refresh_tokens.get(refresh_token)
        return None if found is None or found.refresh_revoked else found

    def authenticate_user(self, refresh_token: _Token) -> _User | None:
        return _User(refresh_token.subject) if refresh_token.subject else None

    def revoke_old_credential(self, refresh_token: _Token) -> None:
        refresh_token.refresh_revoked = True

    def resource(self) -> str | list[str] | None:
        asked = _resource_of(self.request)
        return asked if asked is not None else self.request.refresh_token.resource


class _TokenGenerator(rfc9068.JWTBearerTokenGenerator):  # type: ignore[misc]
    def __init__(self, server: AuthorizationServer) -> None:
        super().__init__(
            issuer=server.issuer,
            refresh_token_generator=lambda *_, **__: secrets.token_urlsafe(32),
            expires_generator=lambda *_, **__: server.token_lifetime,
        )
        self.server = server

    def get_jwks(self) -> KeySet:
        return KeySet([self.server.signing_key])

    def get_audiences(self, client: RegisteredClient, user: Any, scope: str) -> Any:
        return _resource.get() or client.client_id


class _Registration(rfc7591.ClientRegistrationEndpoint):  # type: ignore[misc]
    """Open registration (RFC 7591): what the MCP spec expects an AS to offer."""

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return self.server.metadata()

    def save_client(self, info: dict[str, Any], meta: dict[str, Any], request: Any) -> Any:
        client = self.server.register_client(
            info["client_id"],
            info.get("client_secret"),
            scopes=None,
            redirect_uris=meta.get("redirect_uris", ()),
            grant_types=meta.get("grant_types") or ("authorization_code", "refresh_token"),
        )
        return client

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        info: dict[str, Any] = super().generate_client_info(request)
        if request.payload.data.get("token_endpoint_auth_method") == "none":
            del info["client_secret"]  # a public client (PKCE) gets no secret
        return info


class _Introspection(rfc7662.IntrospectionEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]

    def query_token(self, token: str, hint: str | None) -> _Token | None:
        found: _Token | None = self.server.access_tokens.get(token)
        return found or self.server.refresh_tokens.get(token)

    def check_permission(self, token: _Token, client: RegisteredClient, request: Any) -> bool:
        return True  # any confidential client registered here may introspect

    def introspect_token(self, token: _Token) -> dict[str, Any]:
        return {
            "active": True,
            "token_type": "Bearer",
            **token.claims,
            "scope": token.scope,
            "client_id": token.client_id,
        }


class _S256Challenge(rfc7636.CodeChallenge):  # type: ignore[misc]
    """OAuth 2.1: every authorization request carries an S256 challenge."""

    SUPPORTED_CODE_CHALLENGE_METHOD: ClassVar[list[str]] = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE is required: code_challenge with method S256")
        super().validate_code_challenge(grant, redirect_uri)


@dataclass
class _Response:
    """What an endpoint answers; ``location`` is what RFC 9207's extension rewrites."""

    status: int
    body: bytes
    headers: dict[str, str]

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")

    @location.setter
    def location(self, value: str) -> None:
        self.headers["Location"] = value


class _IssuerParameter(rfc9207.IssuerParameter):  # type: ignore[misc]
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


class AuthorizationServer(rfc6749.AuthorizationServer):  # type: ignore[misc]
    """The AS: Authlib's protocol engine over in-memory stores. Start it with
    ``running_authorization_server()``; its attributes are what a test needs."""

    def __init__(self, issuer: str, *, token_lifetime: int = 3600, subject: str = "alice") -> None:
        super().__init__()
        self.issuer = issuer.rstrip("/")
        self.token_lifetime = token_lifetime
        self.subject = subject
        self.clients: dict[str, RegisteredClient] = {}
        self.codes: dict[str, _Code] = {}
        self.access_tokens: dict[str, _Token] = {}
        self.refresh_tokens: dict[str, _Token] = {}
        self.keys: list[RSAKey] = []
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request served
        self.rotate_key()
        self.register_grant(_ClientCredentials)
        self.register_grant(_AuthorizationCode, [_S256Challenge(required=True)])
        self.register_grant(_Refresh)
        self.register_token_generator("default", _TokenGenerator(self))
        self.issuer_parameter = _IssuerParameter(self.issuer)
        self.register_extension(self.issuer_parameter)
        self.register_endpoint(_Registration)
        self.register_endpoint(_Introspection)

    # -- endpoints and keys ---------------------------------------------------------
    authorization_endpoint = property(lambda self: f"{self.issuer}/authorize")
    token_endpoint = property(lambda self: f"{self.issuer}/token")
    jwks_uri = property(lambda self: f"{self.issuer}/jwks")
    registration_endpoint = property(lambda self: f"{self.issuer}/register")
    introspection_endpoint = property(lambda self: f"{self.issuer}/introspect")
    metadata_url = property(lambda self: f"{self.issuer}/.well-known/oauth-authorization-server")

    @property
    def signing_key(self) -> RSAKey:
        """The current key: the last one ``rotate_key`` made."""
        return self.keys[-1]

    def rotate_key(self) -> str:
        """Sign from now on with a new RSA key (a new ``kid``); the old keys stay in the
        JWKS, as a real AS keeps them until the tokens they signed expire. Returns the kid."""
        kid = uuid.uuid4().hex[:16]
        self.keys.append(RSAKey.generate_key(2048, {"kid": kid, "use": "sig", "alg": "RS256"}))
        return kid

    def jwks(self) -> dict[str, Any]:
        return {"keys": [key.as_dict(private=False) for key in self.keys]}

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 metadata (also served at the OIDC discovery path)."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "jwks_uri": self.jwks_uri,
            "registration_endpoint": self.registration_endpoint,
            "introspection_endpoint": self.introspection_endpoint,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "client_credentials", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "none",
            ],
            "introspection_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
            ],
            "authorization_response_iss_parameter_supported": True,
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }

    # -- what tests call ---------------------------------------------------------------
    def register_client(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        scopes: Sequence[str] | None = None,
        redirect_uris: Sequence[str] = ("http://127.0.0.1/callback",),
        grant_types: Sequence[str] = ("authorization_code", "refresh_token", "client_credentials"),
        strict_scopes: bool = False,
    ) -> RegisteredClient:
        client = RegisteredClient(
            client_id,
            client_secret,
            None if scopes is None else list(scopes),
            list(redirect_uris),
            list(grant_types),
            strict_scopes,
        )
        self.clients[client_id] = client
        return client

    def mint(
        self,
        *,
        subject: str = "alice",
        client_id: str = "test-client",
        scopes: Sequence[str] = (),
        audience: str | list[str] | None = None,
        expires_in: int = 3600,
        not_before: int | None = None,
        issuer: str | None = None,
        key: RSAKey | None = None,
        **claims: Any,
    ) -> str:
        """A JWT access token with exactly these claims, signed with the current key
        (or ``key``); known to the introspection endpoint as well."""
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": issuer or self.issuer,
            "sub": subject,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + expires_in,
            "jti": uuid.uuid4().hex,
        }
        if audience is not None:
            payload["aud"] = audience
        if not_before is not None:
            payload["nbf"] = not_before
        payload.update(claims)
        signer = key or self.signing_key
        token = jwt.encode({"alg": "RS256", "typ": "at+jwt", "kid": signer.kid}, payload, signer)
        self._remember(token, None, payload)
        return token

    def _remember(self, access: str, refresh: str | None, claims: dict[str, Any]) -> _Token:
        record = _Token(
            client_id=claims.get("client_id", ""),
            scope=claims.get("scope", ""),
            subject=claims.get("sub"),
            resource=claims.get("aud"),
            access_token=access,
            refresh_token=refresh,
            issued_at=claims["iat"],
            expires_in=claims["exp"] - claims["iat"],
            claims=claims,
        )
        self.access_tokens[access] = record
        if refresh:
            self.refresh_tokens[refresh] = record
        return record

    # -- Authlib's framework hooks ---------------------------------------------------------
    def query_client(self, client_id: str) -> RegisteredClient | None:
        return self.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: rfc6749.OAuth2Request) -> None:
        claims = jwt.decode(token["access_token"], KeySet(self.keys)).claims
        self._remember(token["access_token"], token.get("refresh_token"), claims)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def create_oauth2_request(self, request: Any) -> rfc6749.OAuth2Request:
        return request if isinstance(request, rfc6749.OAuth2Request) else _Request(*request)

    def create_json_request(self, request: Any) -> rfc6749.JsonRequest:
        return _JsonRequest(*request)

    def handle_response(self, status: int, body: Any, headers: Any) -> _Response:
        if isinstance(body, dict):
            body = json.dumps(body)
        return _Response(status, (body or "").encode(), dict(headers))

    # -- HTTP ---------------------------------------------------------------------------
    def serve(self, method: str, target: str, headers: dict[str, str], body: bytes) -> _Response:
        """One HTTP request, answered."""
        self.requests.append((method, urlsplit(target).path))
        raw = (method, self.issuer + target, headers, body)
        path = urlsplit(target).path
        if method == "GET" and path in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            return self.handle_response(
                200, self.metadata(), [("Content-Type", "application/json")]
            )
        if method == "GET" and path == "/jwks":
            return self.handle_response(200, self.jwks(), [("Content-Type", "application/json")])
        if path == "/authorize" and method in ("GET", "POST"):
            return self._authorize(raw)
        if method == "POST" and path == "/token":
            return self.create_token_response(raw)
        if method == "POST" and path == "/register":
            return self.create_endpoint_response("client_registration", raw)
        if method == "POST" and path == "/introspect":
            return self.create_endpoint_response("introspection", raw)
        return self.handle_response(
            404, {"error": "not_found"}, [("Content-Type", "application/json")]
        )

    def _authorize(self, raw: tuple[Any, ...]) -> _Response:
        """Approves at once for ``.subject`` (or the request's ``login_hint``)."""
        request = self.create_oauth2_request(raw)
        subject = request.payload.data.get("login_hint") or self.subject
        try:
            grant = self.get_consent_grant(request, end_user=_User(subject))
        except OAuth2Error as error:
            response = self.handle_error_response(request, error)
            self.issuer_parameter.add_issuer_parameter(self, response)  # RFC 9207 §2: errors too
            return response
        return self.create_authorization_response(request, grant_user=_User(subject), grant=grant)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer  # HTTP/1.0: a connection per request, no idle handler threads

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {key: value for key, value in self.headers.items()}
        try:
            with self.server.lock:
                response = self.server.authorization_server.serve(
                    self.command, self.path, headers, body
                )
        except Exception as error:  # noqa: BLE001 -- a bug here must show in the test, not hang it
            response = _Response(500, repr(error).encode(), {"Content-Type": "text/plain"})
        self.send_response(response.status)
        for key, value in response.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(response.body)

    do_GET = do_POST = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    authorization_server: AuthorizationServer
    lock: threading.Lock


@contextlib.contextmanager
def running_authorization_server(
    *, token_lifetime: int = 3600, subject: str = "alice"
) -> Iterator[AuthorizationServer]:
    """An authorization server on 127.0.0.1 (an ephemeral port) until the block ends."""
    httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
    httpd.lock = threading.Lock()
    issuer = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.authorization_server = AuthorizationServer(
        issuer, token_lifetime=token_lifetime, subject=subject
    )
    thread = threading.Thread(target=httpd.serve_forever, name="oauth-as", daemon=True)
    thread.start()
    try:
        yield httpd.authorization_server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
