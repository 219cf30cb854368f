"""The HTTP client's authorization (``Session.http(url, auth=…)``) against real peers:
the tests' OAuth authorization server (tests/oauth_server.py) and a protected server
on the official Python SDK (tests/fixtures/sdk_protected_server.py), which answers 401
with its RFC 9728 metadata and checks each token's signature, issuer, audience and
scopes. The 403 step-up against mcpgen's own server is in test_http_auth_e2e.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx2
import pytest
from fixtures.http_server import free_port
from oauth_server import AuthorizationServer, running_authorization_server

from mcpgen_runtime import (
    AsyncSession,
    AuthorizationCode,
    AuthRequired,
    ClientCredentials,
    Session,
    Unauthorized,
)
from mcpgen_runtime.transport.http.auth import parse_challenge
from mcpgen_runtime.transport.http.discovery import check_endpoint

pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@contextlib.contextmanager
def _protected_server(issuer: str, *scopes: str, log: Path) -> Iterator[str]:
    """The SDK's protected server on a free port until the block ends; its MCP URL."""
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(FIXTURES / "sdk_protected_server.py"), str(port), issuer, *scopes],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                httpx2.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp")
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AuthorizationServer, str]]:
    """The authorization server and a server requiring ``notes:read`` that trusts it."""
    with running_authorization_server() as server:
        log = tmp_path_factory.mktemp("sdk") / "server.log"
        with _protected_server(server.issuer, "notes:read", log=log) as url:
            yield server, url


@pytest.fixture
def auth_server(peers: tuple[AuthorizationServer, str]) -> Iterator[AuthorizationServer]:
    server = peers[0]
    server.token_requests.clear()
    server.requests.clear()
    server.token_lifetime = 3600
    yield server


def _add(session: Session) -> Any:
    return session.call_tool("add", {"a": 2, "b": 3})["structuredContent"]["result"]


def _browser(
    rewrite: Callable[[str], str] = lambda location: location,
) -> tuple[Callable[[str], None], list[str]]:
    """An ``open_url`` that plays the person's browser: it loads the authorization URL
    (the test server approves at once), and follows its redirect to the client's
    loopback listener after ``rewrite`` (a mix-up attacker's chance)."""
    seen: list[str] = []

    def open_url(url: str) -> None:
        seen.append(url)
        answer = httpx2.get(url)
        assert answer.status_code == 302, answer.text
        httpx2.get(rewrite(answer.headers["location"]))

    return open_url, seen


def test_client_credentials_discover_obtain_and_call(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.register_client("svc", "svc-secret", scopes=["notes:read", "notes:write"])
    grant = ClientCredentials("svc", "svc-secret", issuer=auth_server.issuer)
    with Session.http(url, auth=grant, timeout=20) as session:
        assert _add(session) == 5
    [asked] = auth_server.token_requests
    assert asked["grant_type"] == "client_credentials"
    assert asked["resource"] == url  # RFC 8707: the token is for this server only
    assert asked["scope"] == "notes:read"  # the server's scopes_supported, nothing more
    assert ("GET", "/.well-known/oauth-authorization-server") in auth_server.requests
    with Session.http(url, auth=grant, timeout=20) as session:  # the token is kept
        assert _add(session) == 5
    assert len(auth_server.token_requests) == 1


def test_async_session_and_configured_scopes(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.register_client("svc2", "pw", scopes=["notes:read", "notes:write"])
    grant = ClientCredentials("svc2", "pw", scopes=["notes:read", "notes:write"])

    async def main() -> Any:
        async with AsyncSession.http(url, auth=grant, timeout=20) as session:
            return await session.call_tool("add", {"a": 1, "b": 1})

    assert asyncio.run(main())["structuredContent"]["result"] == 2
    assert auth_server.token_requests[0]["scope"] == "notes:read notes:write"


def test_a_token_or_a_function_returning_one(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    good = auth_server.mint(scopes=["notes:read"], audience=url)
    with Session.http(url, auth=good, timeout=20) as session:
        assert _add(session) == 5
    handed: list[str] = []
    tokens = [auth_server.mint(scopes=["notes:read"], audience=url, expires_in=-60), good]

    def fresh() -> str:  # first an expired token; asked again after the 401
        handed.append(tokens[len(handed)])
        return handed[-1]

    with Session.http(url, auth=fresh, timeout=20) as session:
        assert _add(session) == 5
    assert handed == tokens

    async def async_fresh() -> str:
        return good

    with Session.http(url, auth=async_fresh, timeout=20) as session:
        assert _add(session) == 5


def test_a_token_for_another_server_is_unauthorized(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    other = auth_server.mint(scopes=["notes:read"], audience="http://127.0.0.1:1/mcp")
    with pytest.raises(Unauthorized) as caught, Session.http(url, auth=other, timeout=20):
        pass
    assert isinstance(caught.value, AuthRequired) and caught.value.status == 401
    assert caught.value.error == "invalid_token"
    assert "resource_metadata=" in caught.value.www_authenticate


def test_authorization_code_with_pkce_through_the_loopback_redirect(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.register_client("cli", redirect_uris=["http://127.0.0.1/callback"])
    open_url, seen = _browser()
    grant = AuthorizationCode("cli", open_url=open_url, timeout=20)
    with Session.http(url, auth=grant, timeout=30) as session:
        assert _add(session) == 5
    [authorize] = seen
    query = parse_qs(urlsplit(authorize).query)
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [url]
    assert urlsplit(query["redirect_uri"][0]).hostname == "127.0.0.1"
    [exchange] = auth_server.token_requests
    assert exchange["grant_type"] == "authorization_code" and exchange["resource"] == url
    assert len(exchange["code_verifier"]) >= 43
    token = grant.tokens[url]
    assert token["refresh_token"] and token["scope"] == "notes:read"


def test_the_person_authorizes_at_connect_not_within_a_call_limit(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.register_client("slow", redirect_uris=["http://127.0.0.1/callback"])
    follow, _ = _browser()

    def slow_person(authorization_url: str) -> None:
        time.sleep(2.5)  # longer than the probe and initialize may take together below
        follow(authorization_url)

    grant = AuthorizationCode("slow", open_url=slow_person, timeout=20)
    with Session.http(url, auth=grant, timeout=1.0) as session:
        assert _add(session) == 5
    assert [r["grant_type"] for r in auth_server.token_requests] == ["authorization_code"]


def test_a_client_without_an_id_registers_itself_once(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    open_url, seen = _browser()
    grant = AuthorizationCode(open_url=open_url, timeout=20, client_name="notes cli")
    with Session.http(url, auth=grant, timeout=30) as session:
        assert _add(session) == 5
    [registration] = grant.registrations.values()
    assert registration["token_endpoint_auth_method"] == "none"  # a public client
    assert "client_secret" not in registration
    assert auth_server.clients[registration["client_id"]].client_secret is None
    grant.tokens.clear()  # a new authorization reuses the registration
    with Session.http(url, auth=grant, timeout=30) as session:
        assert _add(session) == 5
    assert auth_server.requests.count(("POST", "/register")) == 1 and len(seen) == 2


def test_tokens_are_renewed_before_they_expire(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.token_lifetime = 2  # seconds; renewed within the last quarter of a life
    auth_server.register_client("cli2", redirect_uris=["http://127.0.0.1/callback"])
    auth_server.register_client("svc3", "pw", scopes=["notes:read"])
    open_url, seen = _browser()
    code = AuthorizationCode("cli2", open_url=open_url, timeout=20)
    machine = ClientCredentials("svc3", "pw")
    with (
        Session.http(url, auth=code, timeout=30) as person,
        Session.http(url, auth=machine, timeout=30) as service,
    ):
        assert _add(person) == 5 and _add(service) == 5
        time.sleep(1.7)
        assert _add(person) == 5 and _add(service) == 5
    grants = [asked["grant_type"] for asked in auth_server.token_requests]
    # renewed at least once each (more when the machine is slow: every renewal counts)
    assert grants.count("authorization_code") == 1 and grants.count("refresh_token") >= 1
    assert grants.count("client_credentials") >= 2, grants
    assert len(seen) == 1  # the refresh token spared the person a second authorization
    refresh = next(a for a in auth_server.token_requests if a["grant_type"] == "refresh_token")
    assert refresh["resource"] == url


def test_a_new_session_renews_a_kept_token_through_well_known_discovery(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.token_lifetime = 2
    auth_server.register_client("cli4", redirect_uris=["http://127.0.0.1/callback"])
    open_url, seen = _browser()
    grant = AuthorizationCode("cli4", open_url=open_url, timeout=20)
    with Session.http(url, auth=grant, timeout=30) as session:
        assert _add(session) == 5
    time.sleep(1.7)  # the kept token is in its last quarter now
    auth_server.requests.clear()
    with Session.http(url, auth=grant, timeout=30) as session:  # no 401 to start from
        assert _add(session) == 5
    assert len(seen) == 1 and auth_server.token_requests[-1]["grant_type"] == "refresh_token"
    assert ("GET", "/.well-known/oauth-authorization-server") in auth_server.requests


@pytest.mark.parametrize("attack", ["another issuer", "no issuer"])
def test_an_authorization_response_from_another_issuer_is_refused(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer, attack: str
) -> None:
    url = peers[1]
    auth_server.register_client("cli3", redirect_uris=["http://127.0.0.1/callback"])

    def mix_up(location: str) -> str:
        parts = urlsplit(location)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if attack == "another issuer":
            query["iss"] = "https://attacker.example"
        else:
            del query["iss"]
        return urlunsplit(parts._replace(query=urlencode(query)))

    open_url, _ = _browser(mix_up)
    grant = AuthorizationCode("cli3", open_url=open_url, timeout=20)
    with pytest.raises(Unauthorized) as caught, Session.http(url, auth=grant, timeout=30):
        pass
    assert caught.value.error == "invalid_issuer"
    assert "RFC 9207" in str(caught.value)
    assert auth_server.token_requests == []  # the code never reached the token endpoint


def test_a_scope_the_authorization_server_denies_is_a_clear_error(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.register_client("weak", "pw", scopes=["notes:list"], strict_scopes=True)
    with (
        pytest.raises(Unauthorized) as caught,
        Session.http(url, auth=ClientCredentials("weak", "pw"), timeout=20),
    ):
        pass
    assert caught.value.error == "invalid_scope"
    message = str(caught.value)
    assert auth_server.issuer in message and "'weak'" in message and "notes:read" in message


def test_wrong_client_secret_is_reported_without_the_secret(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    auth_server.register_client("svc4", "right", scopes=["notes:read"])
    grant = ClientCredentials("svc4", "wrong-secret-value")
    with pytest.raises(Unauthorized) as caught, Session.http(url, auth=grant, timeout=20):
        pass
    assert caught.value.error == "invalid_client"
    assert "wrong-secret-value" not in str(caught.value) and "wrong-secret" not in repr(grant)


def test_an_issuer_the_server_does_not_name_gets_no_secret(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    grant = ClientCredentials("svc", "pw", issuer="https://login.example")
    with pytest.raises(Unauthorized) as caught, Session.http(url, auth=grant, timeout=20):
        pass
    assert caught.value.error == "discovery_failed" and "login.example" in str(caught.value)
    assert auth_server.token_requests == []


def test_auth_and_an_authorization_header_do_not_mix() -> None:
    with pytest.raises(ValueError, match="either auth= or an Authorization header"):
        Session.http("http://127.0.0.1:9/mcp", auth="tok", headers={"Authorization": "x"})
    with pytest.raises(TypeError, match="auth= takes"):
        Session.http("http://127.0.0.1:9/mcp", auth=42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/m"',
            ("insufficient_scope", ("a", "b"), "https://x/m"),
        ),
        (
            'Basic realm="r", Bearer realm="m", scope="notes:read", error=invalid_token',
            ("invalid_token", ("notes:read",), ""),
        ),
        ('Bearer error="a\\"b", scope="x x"', ('a"b', ("x",), "")),
        ('DPoP algs="ES256", Bearer resource_metadata="u"', ("", (), "u")),
        ('Basic realm="only basic"', ("", (), "")),
        ("Bearer", ("", (), "")),
        ("garbage ===", ("", (), "")),
    ],
)
def test_bearer_challenges_are_read_among_others(header: str, expected: tuple[Any, ...]) -> None:
    challenge = parse_challenge(403, header)
    assert (challenge.error, challenge.scopes, challenge.resource_metadata) == expected


def test_oauth_endpoints_are_https_or_on_the_loopback_interface() -> None:
    # the server's loopback test (protocol.addresses): a trailing dot, IPv4-mapped too
    for url in (
        "https://as.example/token",
        "http://127.0.0.1:9/token",
        "http://[::1]:9/token",
        "http://localhost:9/token",
        "http://localhost.:9/token",
        "http://[::ffff:127.0.0.1]:9/token",
    ):
        check_endpoint(url, "https://mcp.example/mcp")
    for url in (
        "http://as.example/token",
        "http://10.0.0.1/token",
        "ftp://127.0.0.1/",
        "https:///x",
    ):
        with pytest.raises(Unauthorized, match="https"):
            check_endpoint(url, "https://mcp.example/mcp")


def test_the_loopback_listener_ignores_other_paths() -> None:
    from mcpgen_runtime.transport.http.loopback import LoopbackRedirect

    async def main() -> str:
        async with LoopbackRedirect(0, "/cb") as redirect:
            got = await asyncio.to_thread(
                httpx2.get, f"http://127.0.0.1:{redirect.port}/favicon.ico"
            )
            assert got.status_code == 404
            done = await asyncio.to_thread(httpx2.get, redirect.uri + "?code=c&state=s")
            assert done.status_code == 200 and "close this window" in done.text
            return await redirect.target()

    assert asyncio.run(main()) == "/cb?code=c&state=s"


def test_closing_ends_the_session_with_the_token(
    peers: tuple[AuthorizationServer, str], auth_server: AuthorizationServer
) -> None:
    url = peers[1]
    token = auth_server.mint(scopes=["notes:read"], audience=url)
    with Session.http(url, auth=token, timeout=20, protocol="legacy") as session:
        assert _add(session) == 5
        session_id = session.transport._inner.peer.session_id  # what the server handed out
    assert session_id
    headers = {
        "authorization": f"Bearer {token}",
        "mcp-session-id": session_id,
        "mcp-protocol-version": "2025-11-25",
        "accept": "application/json, text/event-stream",
    }
    after = httpx2.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=headers)
    assert after.status_code == 404  # the DELETE (with the token) ended it
