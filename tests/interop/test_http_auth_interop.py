"""Interop: the official SDKs' OAuth clients against a generated server with scoped
tools (tests/fixtures/scoped_server.py), tokens from the tests' authorization server.

- the Python SDK (mcp 2.3.0): ``ClientCredentialsOAuthProvider`` (machine to machine)
  and ``OAuthClientProvider`` (authorization code + PKCE, registering itself with RFC
  7591, the redirect driven without a browser);
- the TypeScript SDK (npm @modelcontextprotocol/sdk): ``ClientCredentialsProvider``
  (tests/fixtures/ts_oauth_client.mjs).

Each meets the server's 401, discovers the authorization server from its RFC 9728
metadata, obtains a token for this server (RFC 8707 ``resource``) and calls a scoped
tool; a token without the tool's scopes gets a 403 the SDK reports.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from fixtures.http_npm_tools import npm_tools
from fixtures.scoped_server import scoped_server
from oauth_server import AuthorizationServer

pytest.importorskip("authlib", reason="the auth extra (Authlib) is not installed")
pytest.importorskip("jwt", reason="the auth extra (PyJWT) is not installed")

from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
)
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class _Storage:
    """The SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AuthorizationServer, str]]:
    with scoped_server(tmp_path_factory.mktemp("auth_interop")) as (auth_server, url, _):
        yield auth_server, url


async def _sdk_call(url: str, provider: Any, tool: str, arguments: dict[str, Any]) -> Any:
    async with (
        httpx2.AsyncClient(auth=provider) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return await session.call_tool(tool, arguments)


def test_python_sdk_client_credentials(served: tuple[AuthorizationServer, str]) -> None:
    auth_server, url = served
    auth_server.register_client("py-m2m", "pw", scopes=["notes:base", "notes:read"])
    provider = ClientCredentialsOAuthProvider(
        url, _Storage(), "py-m2m", "pw", scope="notes:base notes:read", issuer=auth_server.issuer
    )
    result = asyncio.run(_sdk_call(url, provider, "read_note", {"id": "1"}))
    assert not result.is_error and result.content[0].text == "note 1 for py-m2m"
    asked = auth_server.token_requests[-1]
    assert asked["grant_type"] == "client_credentials" and asked["resource"] == url


def test_python_sdk_authorization_code_with_registration(
    served: tuple[AuthorizationServer, str],
) -> None:
    auth_server, url = served
    redirect: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:  # the person's browser
        answer = await asyncio.to_thread(httpx2.get, authorization_url + "&login_hint=dora")
        location = urlsplit(answer.headers["location"])
        redirect.update({k: v[0] for k, v in parse_qs(location.query).items()})

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=redirect["code"], state=redirect.get("state"), iss=redirect.get("iss")
        )

    metadata = OAuthClientMetadata(
        redirect_uris=["http://127.0.0.1:3030/callback"],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        client_name="python sdk",
        scope="notes:base notes:read notes:write",
    )
    storage = _Storage()
    provider = OAuthClientProvider(
        url, metadata, storage, redirect_handler=redirect_handler, callback_handler=callback_handler
    )
    result = asyncio.run(_sdk_call(url, provider, "write_note", {"id": "2", "text": "x"}))
    assert not result.is_error and result.content[0].text == "wrote 2"
    assert storage.client is not None and storage.client.client_id in auth_server.clients
    assert redirect["iss"] == auth_server.issuer  # RFC 9207, which the SDK checks
    assert ("POST", "/register") in auth_server.requests


def _ts_call(plan: dict[str, Any]) -> dict[str, Any]:
    node = npm_tools("@modelcontextprotocol/sdk").node
    done = subprocess.run(
        [node, str(FIXTURES / "ts_oauth_client.mjs"), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def test_typescript_sdk_client_credentials(served: tuple[AuthorizationServer, str]) -> None:
    auth_server, url = served
    auth_server.register_client("ts-m2m", "pw", scopes=["notes:base", "notes:read"])
    plan = {
        "url": url,
        "clientId": "ts-m2m",
        "clientSecret": "pw",
        "scope": "notes:base notes:read",
        "issuer": auth_server.issuer,
        "tool": "read_note",
        "arguments": {"id": "3"},
    }
    answer = _ts_call(plan)
    assert answer["result"]["content"][0]["text"] == "note 3 for ts-m2m", answer
    asked = auth_server.token_requests[-1]
    assert asked["grant_type"] == "client_credentials" and asked["resource"] == url
    # a tool beyond the token's scopes: the server's 403, which the SDK reports
    refused = _ts_call({**plan, "tool": "purge", "arguments": {}})
    assert "error" in refused and "403" in refused["error"]["message"], refused
