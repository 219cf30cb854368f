"""End to end: the generated typed client with ``auth=`` against a generated server with
scoped tools served over real HTTP as an OAuth resource server (``--auth-issuer``),
tokens from the tests' authorization server (tests/oauth_server.py): 401 → discovery →
token → call; 403 → one step-up → 200; a scope the authorization server will not
grant → ``Forbidden`` naming it; both protocol eras, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fixtures.scoped_server import PACKAGE, scoped_server
from helpers import import_package
from oauth_server import AuthorizationServer

from mcpgen_runtime import (
    AuthorizationCode,
    ClientCredentials,
    ContractMismatch,
    Forbidden,
    Unauthorized,
)

pytest.importorskip("authlib", reason="the auth extra (Authlib) is not installed")
pytest.importorskip("jwt", reason="the auth extra (PyJWT) is not installed")

ERAS = ["legacy", "modern"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str, Path]]:
    with scoped_server(tmp_path_factory.mktemp("auth_client_e2e")) as running:
        yield running


@pytest.fixture(scope="module")
def setup(served: tuple[AuthorizationServer, str, Path]) -> tuple[AuthorizationServer, str]:
    return served[0], served[1]


@pytest.fixture(scope="module")
def pkg(served: tuple[AuthorizationServer, str, Path]) -> Iterator[ModuleType]:
    with import_package(served[2], PACKAGE) as module:
        yield module


@pytest.fixture
def auth_server(setup: tuple[AuthorizationServer, str]) -> AuthorizationServer:
    setup[0].token_requests.clear()
    return setup[0]


def _scopes_asked(auth_server: AuthorizationServer) -> list[str]:
    return [asked.get("scope", "") for asked in auth_server.token_requests]


@pytest.mark.parametrize("era", ERAS)
def test_401_discovery_token_call_then_403_step_up_then_200(
    setup: tuple[AuthorizationServer, str], auth_server: AuthorizationServer, pkg: Any, era: str
) -> None:
    url = setup[1]
    client_id = f"svc-{era}"
    auth_server.register_client(client_id, "pw", scopes=["notes:base", "notes:read", "notes:write"])
    grant = ClientCredentials(client_id, "pw", scopes=["notes:base", "notes:read"])
    with pkg.ScopedClient.http(url, auth=grant, protocol=era, timeout=20) as client:
        assert client.read_note("1") == f"note 1 for {client_id}"
        assert _scopes_asked(auth_server) == ["notes:base notes:read"]
        assert client.write_note("1", "hi") == "wrote 1"  # 403 → step-up → 200
    assert _scopes_asked(auth_server) == [
        "notes:base notes:read",
        "notes:base notes:read notes:write",
    ]
    assert all(asked["resource"] == url for asked in auth_server.token_requests)


@pytest.mark.parametrize("era", ERAS)
def test_a_scope_the_authorization_server_denies_is_forbidden_naming_it(
    setup: tuple[AuthorizationServer, str], auth_server: AuthorizationServer, pkg: Any, era: str
) -> None:
    url = setup[1]
    auth_server.register_client(f"limited-{era}", "pw", scopes=["notes:base", "notes:read"])
    grant = ClientCredentials(f"limited-{era}", "pw")
    with pkg.ScopedClient.http(url, auth=grant, protocol=era, timeout=20) as client:
        assert client.read_note("2").startswith("note 2")
        with pytest.raises(Forbidden) as caught:
            client.purge()
        assert client.read_note("3").startswith("note 3")  # the session goes on
    error = caught.value
    assert error.missing_scopes == ("notes:admin",)
    assert "notes:admin" in error.required_scopes
    assert "needs scope notes:admin" in str(error) and f"'limited-{era}'" in str(error)
    # one step-up was tried (the union of scopes), not more
    assert sum("notes:admin" in scope for scope in _scopes_asked(auth_server)) == 1


def test_a_strict_authorization_server_refusing_the_step_up(
    setup: tuple[AuthorizationServer, str], auth_server: AuthorizationServer, pkg: Any
) -> None:
    url = setup[1]
    auth_server.register_client(
        "strict", "pw", scopes=["notes:base", "notes:read"], strict_scopes=True
    )
    grant = ClientCredentials("strict", "pw", scopes=["notes:base", "notes:read"])
    with (
        pkg.ScopedClient.http(url, auth=grant, timeout=20) as client,
        pytest.raises(Forbidden) as caught,
    ):
        client.write_note("1", "x")
    assert caught.value.missing_scopes == ("notes:write",)
    assert "invalid_scope" in str(caught.value)


def test_the_async_client_and_the_authorization_code_grant(
    setup: tuple[AuthorizationServer, str], auth_server: AuthorizationServer, pkg: Any
) -> None:
    import httpx2

    url = setup[1]
    auth_server.register_client("notes-cli", redirect_uris=["http://127.0.0.1/callback"])

    def browser(authorization_url: str) -> None:
        answer = httpx2.get(authorization_url + "&login_hint=carol")
        httpx2.get(answer.headers["location"])

    grant = AuthorizationCode("notes-cli", scopes=["notes:base", "notes:read"], open_url=browser)

    async def main() -> tuple[str, str]:
        async with pkg.AsyncScopedClient.http(url, auth=grant, timeout=20) as client:
            return await client.read_note("7"), await client.write_note("7", "x")

    assert asyncio.run(main()) == ("note 7 for carol", "wrote 7")
    grants = [asked["grant_type"] for asked in auth_server.token_requests]
    assert grants == ["authorization_code", "authorization_code"]  # the step-up asked again


def test_no_credentials_is_unauthorized(setup: tuple[AuthorizationServer, str], pkg: Any) -> None:
    with pytest.raises(Unauthorized) as caught, pkg.ScopedClient.http(setup[1], timeout=20):
        pass
    assert "resource_metadata=" in caught.value.www_authenticate
    assert not isinstance(caught.value, ContractMismatch)


def test_a_listing_filtered_by_scopes_is_no_contract_mismatch() -> None:
    """The client's contract check: a scoped tool missing from the listing is the
    server hiding it from this token; an unscoped one missing is a removal."""
    from mcpgen_runtime.contract.check import check_contract
    from mcpgen_runtime.protocol.constants import META_SCOPES

    def tool(name: str, scopes: list[str] | None) -> dict[str, Any]:
        descriptor: dict[str, Any] = {"name": name, "inputSchema": {"type": "object"}}
        if scopes is not None:
            descriptor["_meta"] = {META_SCOPES: scopes}
        return descriptor

    contract = [tool("read", ["r"]), tool("write", ["w"]), tool("ping", None)]
    listed = [tool("read", ["r"]), tool("ping", None)]
    assert check_contract(contract, listed, "2025-11-25", "strict") == []
    with pytest.raises(ContractMismatch, match="'ping' was removed"):
        check_contract(contract, [tool("read", ["r"])], "2025-11-25", "strict")
