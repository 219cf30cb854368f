"""What a caller hands ``Session.http(url, auth=…)`` and what a server's challenge means.

- ``ClientCredentials`` (machine to machine) and ``AuthorizationCode`` (a person at a
  terminal: PKCE, a loopback redirect) say how to obtain tokens; ``oauth`` runs them.
- ``BearerSource``: a fixed token, or a function (plain or ``async``) returning one.
- ``parse_challenge``: the ``Bearer`` challenge of a ``WWW-Authenticate`` header
  (RFC 6750 §3, RFC 9728 §5.1): ``error``, ``scope``, ``resource_metadata``.
- ``auth_error``: the ``Unauthorized``/``Forbidden`` a 401/403 answer becomes, naming
  the scopes the server demands and the token lacks.

Nothing here sends a request: the transport (``aio``) and ``oauth`` do.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..._errors import AuthRequired, Forbidden, Unauthorized

__all__ = [
    "Authenticator",
    "AuthorizationCode",
    "BearerSource",
    "Challenge",
    "ClientCredentials",
    "HttpAuth",
    "auth_error",
    "parse_challenge",
]

#: Opens the authorization URL for the person (default: ``webbrowser.open``); may be
#: ``async``. A test or an app with its own UI passes a function of its own.
UrlOpener = Callable[[str], Any]


@dataclass(eq=False)
class ClientCredentials:
    """The OAuth client credentials grant (a service calling a server, no person).

    Tokens come from the authorization server the MCP server names in its protected
    resource metadata (RFC 9728), for that server only (RFC 8707 ``resource``), and are
    kept in this object until shortly before they expire. ``scopes``: asked for on the
    first token (the server's challenge may add more). ``issuer``: the only
    authorization server this client's secret may be sent to (recommended: without it
    the secret goes to whichever server the MCP server names). ``auth_method``: how the
    secret travels to the token endpoint."""

    client_id: str
    client_secret: str = field(repr=False)
    scopes: Sequence[str] | None = None
    issuer: str | None = None
    auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False)


@dataclass(eq=False)
class AuthorizationCode:
    """The OAuth authorization code grant with PKCE (S256), for a person at a terminal.

    The client listens on ``127.0.0.1`` (``redirect_port``, 0: a free port) at
    ``redirect_path`` for the authorization server's redirect; ``open_url`` shows the
    person the authorization URL (default: the system's browser; pass a function to
    hand the URL to your own UI). ``client_id`` (and ``client_secret`` for a
    confidential client) as registered with the authorization server; without one the
    client registers itself (RFC 7591 dynamic registration, as ``client_name``) where
    the server offers it. ``issuer`` pins the authorization server. ``timeout``:
    seconds the person has. Tokens, refresh tokens and registrations are kept in this
    object, so a new session does not ask again while they last."""

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scopes: Sequence[str] | None = None
    issuer: str | None = None
    redirect_port: int = 0
    redirect_path: str = "/callback"
    open_url: UrlOpener | None = None
    timeout: float = 300.0
    client_name: str = "mcpgen client"
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False)
    registrations: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False)


#: What ``auth=`` takes: a bearer token, a function returning one (may be ``async``),
#: or an OAuth grant the client runs itself.
HttpAuth = (
    str | Callable[[], str] | Callable[[], Awaitable[str]] | ClientCredentials | AuthorizationCode
)


class Authenticator(Protocol):
    """What the transport asks of ``BearerSource`` and ``oauth.OAuthSession``."""

    async def authorization(self) -> str | None:
        """The ``Authorization`` header of the next request (None: send none)."""

    async def challenged(self, challenge: Challenge, sent: str | None, tries: set[int]) -> bool:
        """Act on a 401/403 to a request that carried ``sent``; True: send it again.
        ``tries`` (the statuses already acted on for this request) bounds the retries."""

    def refused(self, challenge: Challenge) -> AuthRequired:
        """The error a 401/403 ends in when ``challenged`` is False."""


class BearerSource:
    """A token the caller supplies: a string, or a function called before the first
    request and again (once per request) when the server answers 401 to the token it
    returned. Same interface as ``oauth.OAuthSession``."""

    def __init__(self, source: str | Callable[[], Any], url: str) -> None:
        if isinstance(source, str):
            if not _TOKEN68.fullmatch(source):
                raise ValueError("a bearer token is one line of token68 characters (RFC 6750)")
        elif not callable(source):
            raise TypeError(
                "auth= takes a token (str), a function returning one, ClientCredentials "
                f"or AuthorizationCode, not {type(source).__name__}"
            )
        self._source = source
        self._url = url
        self._token: str | None = source if isinstance(source, str) else None

    async def authorization(self) -> str | None:
        if self._token is None:
            self._token = await self._call()
        return f"Bearer {self._token}"

    async def challenged(self, challenge: Challenge, sent: str | None, tries: set[int]) -> bool:
        """A 401 asks the function for a new token, once per request."""
        if challenge.status != 401 or 401 in tries or isinstance(self._source, str):
            return False
        tries.add(401)
        if sent != f"Bearer {self._token}":
            return True  # another call has a new one already
        fresh = await self._call()
        if fresh == self._token:
            return False  # the same token again: refusing it twice helps nobody
        self._token = fresh
        return True

    def refused(self, challenge: Challenge) -> AuthRequired:
        return auth_error(self._url, challenge)

    async def _call(self) -> str:
        make = self._source
        assert callable(make)
        try:
            value = await make() if _is_async(make) else await asyncio.to_thread(make)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:  # the caller's function: reported as the call's error
            raise Unauthorized(
                f"the auth function for {self._url} failed: {exc!r}", url=self._url
            ) from exc
        if not isinstance(value, str) or not _TOKEN68.fullmatch(value):
            raise Unauthorized(
                f"the auth function for {self._url} returned {type(value).__name__}, not a "
                "bearer token (a str of token68 characters)",
                url=self._url,
            )
        return value


def _is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004 -- an object with async __call__
    )


# -- challenges ----------------------------------------------------------------------

_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(
    rf"\s*({_TOKEN})\s*=\s*(?:\"((?:[^\"\\]|\\.)*)\"|({_TOKEN}))\s*(?:,|$)", re.DOTALL
)
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|$)")


@dataclass(frozen=True)
class Challenge:
    """The ``Bearer`` challenge of a 401/403 answer (empty fields when absent)."""

    status: int
    error: str = ""
    description: str = ""
    scopes: tuple[str, ...] = ()
    resource_metadata: str = ""
    header: str = ""


def parse_challenge(status: int, header: str) -> Challenge:
    """The ``Bearer`` challenge among those of ``header`` (RFC 9110 §11.6.1 syntax);
    a header without one gives an empty ``Challenge``."""
    params = _bearer_params(header)
    return Challenge(
        status=status,
        error=params.get("error", ""),
        description=params.get("error_description", ""),
        scopes=tuple(dict.fromkeys(params.get("scope", "").split())),
        resource_metadata=params.get("resource_metadata", ""),
        header=header,
    )


def _bearer_params(header: str) -> dict[str, str]:
    position, scheme = 0, ""
    found: dict[str, str] = {}
    while position < len(header):
        param = _PARAM.match(header, position)
        if param is not None:
            if scheme == "bearer":
                value = param.group(2)
                value = re.sub(r"\\(.)", r"\1", value) if value is not None else param.group(3)
                found.setdefault(param.group(1).lower(), value)
            position = param.end()
            continue
        start = _SCHEME.match(header, position)
        if start is None:
            break  # not a challenge list we can read: keep what was read
        if scheme == "bearer":
            break
        scheme = start.group(1).lower()
        position = start.end()
        if header.startswith(",", position):
            position += 1
    return found


def auth_error(url: str, challenge: Challenge) -> AuthRequired:
    """``Forbidden`` for a 403 (naming the scopes its challenge demands),
    ``Unauthorized`` for a 401."""
    said = f" (WWW-Authenticate: {challenge.header})" if challenge.header else ""
    if challenge.status == 403:
        needs = f": the call needs scope {' '.join(challenge.scopes)}" if challenge.scopes else ""
        return Forbidden(
            f"{url} answered 403 Forbidden{needs}{said}; ask the authorization server's "
            "administrator to grant the client those scopes",
            url=url,
            www_authenticate=challenge.header,
            error=challenge.error,
            required_scopes=challenge.scopes,
            missing_scopes=challenge.scopes,  # the token's scopes are not known here
        )
    return Unauthorized(
        f"{url} answered 401 Unauthorized{said}: pass credentials with auth=… "
        "(a token, ClientCredentials or AuthorizationCode) or "
        "headers={'Authorization': 'Bearer …'} (--header 'Authorization: Bearer …' "
        "on the command line)",
        url=url,
        www_authenticate=challenge.header,
        error=challenge.error,
    )
