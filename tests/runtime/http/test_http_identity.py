"""Who a request's requestor is (``_http_identity``): an authenticated ``scope["user"]``,
else the configured proxy header when it is sent exactly once, else no one."""

from __future__ import annotations

from typing import Any

from starlette.authentication import BaseUser, SimpleUser, UnauthenticatedUser

from mcpgen_runtime.http.identity import requestor_identity


def scope(*headers: tuple[str, str], user: Any = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "type": "http",
        "headers": [(k.encode(), v.encode()) for k, v in headers],
    }
    if user is not None:
        found["user"] = user
    return found


def test_the_proxy_header_only_when_configured_and_unambiguous() -> None:
    assert requestor_identity(scope(("x-mcp-user", "alice"))) is None  # not configured
    assert requestor_identity(scope(("x-mcp-user", "alice")), "X-Mcp-User") == "alice"
    assert requestor_identity(scope(("x-mcp-user", " ")), "X-Mcp-User") is None
    assert requestor_identity(scope(), "X-Mcp-User") is None
    twice = scope(("x-mcp-user", "alice"), ("x-mcp-user", "mallory"))
    assert requestor_identity(twice, "X-Mcp-User") is None


def test_an_authenticated_scope_user_wins() -> None:
    both = scope(("x-mcp-user", "alice"), user=SimpleUser("bob"))
    assert requestor_identity(both, "X-Mcp-User") == "bob"
    assert requestor_identity(scope(user=SimpleUser("bob"))) == "bob"
    # not authenticated, or not a user of the convention: no identity from it
    assert (
        requestor_identity(scope(("x-mcp-user", "alice"), user=UnauthenticatedUser()), "x-mcp-user")
        == "alice"
    )
    assert requestor_identity(scope(user=BaseUser())) is None
    assert requestor_identity(scope(user="bob")) is None
