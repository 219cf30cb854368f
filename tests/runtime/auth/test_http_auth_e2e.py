"""End to end: tokens of the real authorization server the tests start
(tests/oauth_server.py, Authlib) accepted by a generated server that found the keys
through the issuer's RFC 8414 metadata; a key rotation at the authorization server
picked up (a token signed with the new key makes the server fetch the JWKS again)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from test_http_auth import ALL, call, package, serve, text_of

pytest.importorskip("authlib", reason="the tests' authorization server needs Authlib")

__all__ = ["package"]  # the fixture, shared with test_http_auth


def client_credentials(server: Any, resource: str, scope: str) -> str:
    response = httpx2.post(
        server.token_endpoint,
        data={"grant_type": "client_credentials", "scope": scope, "resource": resource},
        auth=("m2m", "s3cret"),
    )
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


def test_the_authorization_servers_tokens_and_its_key_rotation(
    package: tuple[Path, Path], authorization_server: Any
) -> None:
    authorization_server.register_client("m2m", "s3cret", scopes=ALL.split())
    issuer = SimpleNamespace(url=authorization_server.issuer)
    with serve(package, issuer) as server:  # type: ignore[arg-type]
        token = client_credentials(authorization_server, server.url, ALL)
        bearer = {"authorization": f"Bearer {token}"}
        for era in ("legacy", "modern"):
            assert text_of(call(server.url, "read_note", {"id": "1"}, era=era, headers=bearer)) == (
                "note 1"
            )
        # the scopes the client asked for, no more: a 403 naming what write_note needs
        narrow = client_credentials(authorization_server, server.url, "notes:base notes:read")
        refused = call(
            server.url,
            "write_note",
            {"id": "1", "text": "x"},
            era="modern",
            headers={"authorization": f"Bearer {narrow}"},
        )
        assert refused.status_code == 403
        assert 'scope="notes:base notes:write notes:admin"' in refused.headers["www-authenticate"]
        # a token for another resource at the same authorization server
        other = client_credentials(authorization_server, "http://127.0.0.1:9/mcp", ALL)
        assert (
            call(
                server.url,
                "read_note",
                {"id": "1"},
                era="legacy",
                headers={"authorization": f"Bearer {other}"},
            ).status_code
            == 401
        )
        # rotation: the new key is not in the set the server holds; it fetches the set again
        authorization_server.rotate_key()
        rotated = client_credentials(authorization_server, server.url, ALL)
        assert rotated.split(".")[0] != token.split(".")[0]  # another kid in the header
        headers = {"authorization": f"Bearer {rotated}"}
        assert text_of(
            call(server.url, "read_note", {"id": "2"}, era="legacy", headers=headers)
        ) == ("note 2")
        # a minted token that names a key the authorization server never published
        forged = authorization_server.mint(scopes=ALL.split(), audience=server.url)
        head = forged.split(".")
        assert (
            call(
                server.url,
                "read_note",
                {"id": "3"},
                era="legacy",
                headers={"authorization": f"Bearer {head[0]}.{head[1]}.{head[2][::-1]}"},
            ).status_code
            == 401
        )
