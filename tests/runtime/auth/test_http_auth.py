"""A generated server as an OAuth 2.1 resource server, over real HTTP (uvicorn, both
HTTP parsers), against an issuer whose keys and metadata a loopback socket serves
(``fixtures.jwks_issuer``): every challenge, in both protocol eras; the 403 naming
every scope a call needs; filtered listings; ``ctx.auth``; tasks isolated by the
token's subject; the RFC 9728 metadata; tokens never in a log."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer, free_port, http_server
from fixtures.jwks_issuer import Issuer, running_issuer
from helpers import build_package
from test_http_tasks import MODERN, modern_meta

pytest.importorskip("jwt", reason="the auth extra (PyJWT) is not installed")
import httpx2

PARSERS = ["httptools", "h11"]

SPEC = """
mcpgen: 1
package: authnotes_mcp
server:
  name: authnotes
  version: "1.0.0"
  implementation: "authnotes_impl:Impl"
  scopes: [notes:base]
tools:
  - name: whoami
    parameters: []
  - name: read_note
    scopes: [notes:read]
    parameters: [{name: id, type: string}]
  - name: write_note
    scopes: [notes:write, notes:admin]
    parameters: [{name: id, type: string}, {name: text, type: string}]
  - name: hold
    task_support: optional
    parameters: [{name: seconds, type: number}]
"""

IMPL = """
import json, time
from authnotes_mcp import AuthnotesServer, Context

CALLS = []

class Impl(AuthnotesServer):
    def whoami(self, *, ctx: Context = Context.NONE) -> str:
        auth = ctx.auth
        if auth is None:
            return "anonymous"
        return json.dumps({"sub": auth.subject, "client": auth.client_id,
                           "scopes": sorted(auth.scopes), "aud": auth.claims.get("aud")})

    def read_note(self, id: str) -> str:
        return f"note {id}"

    def write_note(self, id: str, text: str) -> str:
        print("WROTE", id, flush=True)  # a handler that ran: the 403 tests look for it
        return "written"

    def hold(self, seconds: float, *, ctx: Context = Context.NONE) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not ctx.cancelled:
            time.sleep(0.01)
        return f"held {seconds}"
"""

ALL = "notes:base notes:read notes:write notes:admin"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("http_auth")
    gen = build_package(SPEC, root, "authnotes_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "authnotes_impl.py").write_text(IMPL, encoding="utf-8")
    return gen, impl


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


def serve(package: tuple[Path, Path], issuer: Issuer | None, *extra: str, env: Any = None) -> Any:
    """The generated server on a port chosen here, so that its resource URL (and
    the audience its tokens must name) is known before it starts."""
    gen, impl = package
    port = free_port()
    auth = [] if issuer is None else ["--auth-issuer", issuer.url]
    resource = f"http://127.0.0.1:{port}/mcp"
    return http_server(
        "authnotes_mcp",
        *auth,
        *(["--resource-url", resource] if issuer is not None else []),
        *extra,
        pythonpath=[gen, impl],
        cwd=impl,
        log_dir=impl.parent,
        env=env,
        port=port,
    )


class Served:
    """A running server and the tokens it accepts."""

    def __init__(self, server: HttpServer, issuer: Issuer) -> None:
        self.server = server
        self.url = server.url
        self.issuer = issuer
        self.metadata = server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")

    def token(self, scope: str = ALL, **options: Any) -> str:
        options.setdefault("audience", self.url)
        return self.issuer.token(scope=scope, **options)

    def bearer(self, scope: str = ALL, **options: Any) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token(scope, **options)}"}


@pytest.fixture(scope="module", params=PARSERS)
def served(
    package: tuple[Path, Path], issuer: Issuer, request: pytest.FixtureRequest
) -> Iterator[Served]:
    with serve(package, issuer, "--http-parser", request.param) as server:
        yield Served(server, issuer)


_client = httpx2.Client(timeout=30)


def call(
    url: str, name: str, arguments: dict[str, Any], *, era: str, headers: Any = None
) -> httpx2.Response:
    """One tools/call POST, as a client of ``era`` ("legacy": 2025-11-25, or "modern")."""
    return post(url, "tools/call", {"name": name, "arguments": arguments}, era=era, headers=headers)


def post(
    url: str, method: str, params: dict[str, Any], *, era: str, headers: Any = None
) -> httpx2.Response:
    sent = {"accept": "application/json, text/event-stream", **(headers or {})}
    if era == "modern":
        params = {**params, "_meta": modern_meta(tasks=True)}
        sent.update({"mcp-protocol-version": MODERN, "mcp-method": method})
        if method == "tools/call":
            sent["mcp-name"] = params["name"]
    else:
        sent["mcp-protocol-version"] = "2025-11-25"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return _client.post(url, json=body, headers=sent)


def answer(response: httpx2.Response) -> dict[str, Any]:
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    result: dict[str, Any] = json.loads(text)
    return result


def text_of(response: httpx2.Response) -> str:
    assert response.status_code == 200, response.text
    content = answer(response)["result"]["content"]
    return str(content[0]["text"])


ERAS = ["legacy", "modern"]


@pytest.mark.parametrize("era", ERAS)
def test_no_token_gets_a_challenge_naming_the_metadata(served: Served, era: str) -> None:
    response = call(served.url, "read_note", {"id": "1"}, era=era)
    assert response.status_code == 401
    # the modern era names the tool in Mcp-Name: its scopes; else what every tool needs
    scope = "notes:base notes:read" if era == "modern" else "notes:base"
    assert response.headers["www-authenticate"] == (
        f'Bearer scope="{scope}", resource_metadata="{served.metadata}"'
    )
    # another scheme is no bearer token either
    other = call(
        served.url, "read_note", {"id": "1"}, era=era, headers={"authorization": "Basic eDp5"}
    )
    assert other.status_code == 401
    assert "error=" not in other.headers["www-authenticate"]


def _bad_tokens(served: Served) -> dict[str, str]:
    good = served.token()
    head, body, _ = good.split(".")
    alien = Issuer(served.issuer.url)
    return {
        "expired": served.token(expires_in=-600),
        "not yet valid": served.token(not_before=600),
        "wrong audience": served.token(audience="http://127.0.0.1:1/other"),
        "wrong issuer": served.token(issuer="http://127.0.0.1:1"),
        "bad signature": f"{head}.{body}.{good.split('.')[2][::-1]}",
        "unknown key": alien.token(audience=served.url, kid=alien.current, scope=ALL),
        "alg none": f"eyJhbGciOiJub25lIn0.{body}.",
        "malformed": "not-a-token",
        "not token68": "a,b",
    }


@pytest.mark.parametrize("era", ERAS)
def test_a_refused_token_gets_invalid_token(served: Served, era: str) -> None:
    for case, token in _bad_tokens(served).items():
        response = call(
            served.url,
            "read_note",
            {"id": "1"},
            era=era,
            headers={"authorization": f"Bearer {token}"},
        )
        assert response.status_code == 401, case
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith('Bearer error="invalid_token", error_description="'), case
        assert challenge.endswith(f'resource_metadata="{served.metadata}"'), case
        assert token not in response.text and token not in challenge
    assert not any(token in served.server.output for token in _bad_tokens(served).values())


@pytest.mark.parametrize("era", ERAS)
def test_a_token_lacking_a_tools_scopes_gets_403_naming_every_scope(
    served: Served, era: str
) -> None:
    headers = served.bearer("notes:base notes:read")
    response = call(served.url, "write_note", {"id": "9", "text": "x"}, era=era, headers=headers)
    assert response.status_code == 403
    assert response.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", error_description="write_note needs the scopes '
        'notes:write notes:admin", scope="notes:base notes:write notes:admin", '
        f'resource_metadata="{served.metadata}"'
    )
    # one scope short: the challenge still asks for all of them
    partial = served.bearer("notes:base notes:write")
    response = call(served.url, "write_note", {"id": "9", "text": "x"}, era=era, headers=partial)
    assert response.status_code == 403
    assert 'scope="notes:base notes:write notes:admin"' in response.headers["www-authenticate"]
    assert "needs the scope notes:admin" in response.headers["www-authenticate"]
    # decided before the handler ran
    assert "WROTE 9" not in served.server.output
    # the server-wide scope is needed by every tool
    bare = served.bearer("notes:read")
    assert call(served.url, "whoami", {}, era=era, headers=bare).status_code == 403


@pytest.mark.parametrize("era", ERAS)
def test_a_token_holding_the_scopes_is_served(served: Served, era: str) -> None:
    headers = served.bearer(ALL)
    assert (
        text_of(call(served.url, "write_note", {"id": "8", "text": "x"}, era=era, headers=headers))
        == "written"
    )
    assert "WROTE 8" in served.server.output
    reader = served.bearer("notes:base notes:read")
    assert text_of(call(served.url, "read_note", {"id": "7"}, era=era, headers=reader)) == "note 7"


@pytest.mark.parametrize("era", ERAS)
def test_the_handler_reads_ctx_auth(served: Served, era: str) -> None:
    headers = served.bearer("notes:base notes:read", sub="carol", client_id="cli-7")
    seen = json.loads(text_of(call(served.url, "whoami", {}, era=era, headers=headers)))
    assert seen == {
        "sub": "carol",
        "client": "cli-7",
        "scopes": ["notes:base", "notes:read"],
        "aud": served.url,
    }


@pytest.mark.parametrize("era", ERAS)
def test_the_listing_shows_what_the_token_permits(served: Served, era: str) -> None:
    def listed(scope: str) -> list[str]:
        response = post(served.url, "tools/list", {}, era=era, headers=served.bearer(scope))
        assert response.status_code == 200
        return [tool["name"] for tool in answer(response)["result"]["tools"]]

    assert listed(ALL) == ["whoami", "read_note", "write_note", "hold"]
    if era == "modern":  # the listing varies by authorization: no shared cache may keep it
        response = post(served.url, "tools/list", {}, era=era, headers=served.bearer(ALL))
        assert answer(response)["result"]["cacheScope"] == "private"
    assert listed("notes:base notes:read") == ["whoami", "read_note", "hold"]
    assert listed("notes:read") == []
    assert listed("notes:base notes:write notes:admin unrelated") == [
        "whoami",
        "write_note",
        "hold",
    ]


def test_the_metadata_document(served: Served) -> None:
    expected = {
        "resource": served.url,
        "authorization_servers": [served.issuer.url],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes:base", "notes:read", "notes:write", "notes:admin"],
    }
    bare = served.url.replace("/mcp", "/.well-known/oauth-protected-resource")
    for url in (served.metadata, bare):
        response = _client.get(url)  # no token, no Host rules
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.json() == expected
    assert _client.head(served.metadata).content == b""
    assert _client.post(served.metadata, json={}).status_code == 405
    # /healthz stays open too: probes are no MCP traffic
    assert _client.get(served.url.replace("/mcp", "/healthz")).status_code == 200


def test_a_token_in_the_query_string_is_refused(served: Served) -> None:
    token = served.token()
    response = _client.post(
        served.url + f"?access_token={token}",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"authorization": f"Bearer {token}", "mcp-protocol-version": "2025-11-25"},
    )
    assert response.status_code == 400
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_request"')
    assert token not in served.server.output


def test_two_authorization_headers_are_refused(served: Served) -> None:
    one, two = served.bearer()["authorization"], served.bearer()["authorization"]
    response = _client.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers=[
            ("authorization", one),
            ("authorization", two),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    )
    assert response.status_code == 400


def test_tasks_belong_to_the_tokens_subject(served: Served) -> None:
    alice = served.bearer(sub="alice")
    alice_again = served.bearer(sub="alice")  # another token of the same subject and client
    bob = served.bearer(sub="bob")
    alice_elsewhere = served.bearer(sub="alice", client_id="another-client")
    started = post(
        served.url,
        "tools/call",
        {"name": "hold", "arguments": {"seconds": 30}, "task": {}},
        era="legacy",
        headers=alice,
    )
    task_id = answer(started)["result"]["task"]["taskId"]

    def get(headers: dict[str, str]) -> dict[str, Any]:
        return answer(
            post(served.url, "tasks/get", {"taskId": task_id}, era="legacy", headers=headers)
        )

    assert get(alice_again)["result"]["status"] == "working"
    for other in (bob, alice_elsewhere):
        assert get(other)["error"]["message"] == f"Invalid params: unknown task {task_id!r}"
        listed = answer(post(served.url, "tasks/list", {}, era="legacy", headers=other))
        assert listed["result"]["tasks"] == []
    listed = answer(post(served.url, "tasks/list", {}, era="legacy", headers=alice))
    assert [task["taskId"] for task in listed["result"]["tasks"]] == [task_id]
    post(served.url, "tasks/cancel", {"taskId": task_id}, era="legacy", headers=alice)


def test_listing_can_show_every_tool(package: tuple[Path, Path], issuer: Issuer) -> None:
    with serve(package, issuer, "--auth-list-all-tools") as server:
        token = issuer.token(scope="notes:base", audience=server.url)
        response = post(
            server.url, "tools/list", {}, era="legacy", headers={"authorization": f"Bearer {token}"}
        )
        assert len(answer(response)["result"]["tools"]) == 4
        # the calls are still checked
        refused = call(
            server.url,
            "read_note",
            {"id": "1"},
            era="legacy",
            headers={"authorization": f"Bearer {token}"},
        )
        assert refused.status_code == 403


def test_the_settings_come_from_the_environment(package: tuple[Path, Path], issuer: Issuer) -> None:
    audience = "urn:example:notes"
    gen, impl = package
    port = free_port()
    env = {
        "MCPGEN_AUTH_ISSUER": issuer.url,
        "MCPGEN_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp",
        "MCPGEN_AUTH_AUDIENCE": audience,
        "MCPGEN_AUTH_JWKS_URL": issuer.url + "/jwks",
    }
    with http_server(
        "authnotes_mcp", pythonpath=[gen, impl], cwd=impl, log_dir=impl.parent, env=env, port=port
    ) as server:
        before = issuer.fetches["/.well-known/oauth-authorization-server"]
        good = {"authorization": f"Bearer {issuer.token(scope=ALL, audience=audience)}"}
        assert (
            text_of(call(server.url, "read_note", {"id": "2"}, era="legacy", headers=good))
            == "note 2"
        )
        wrong = {"authorization": f"Bearer {issuer.token(scope=ALL, audience=server.url)}"}
        assert (
            call(server.url, "read_note", {"id": "2"}, era="legacy", headers=wrong).status_code
            == 401
        )
        # the JWKS URL was given: no metadata fetched
        assert issuer.fetches["/.well-known/oauth-authorization-server"] == before


def test_without_authorization_settings_nothing_is_checked(package: tuple[Path, Path]) -> None:
    with serve(package, None) as server:
        assert (
            text_of(call(server.url, "write_note", {"id": "1", "text": "x"}, era="legacy"))
            == "written"
        )
        assert (
            _client.get(
                server.url.replace("/mcp", "/.well-known/oauth-protected-resource")
            ).status_code
            == 404
        )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--resource-url", "https://x.example/mcp"], "need --auth-issuer"),
        (["--auth-issuer", "https://as.example"], "needs --resource-url"),
        (["--auth-issuer", "http://as.example", "--resource-url", "https://x/mcp"], "https URL"),
    ],
)
def test_incomplete_authorization_settings_are_refused_at_start(
    package: tuple[Path, Path], flags: list[str], message: str
) -> None:
    gen, impl = package
    run = subprocess.run(
        [sys.executable, "-m", "authnotes_mcp", "--transport", "http", *flags],
        check=False,
        cwd=impl,
        env={"PYTHONPATH": f"{gen}:{impl}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert message in run.stderr


class _OwnVerifier:
    """A deployment's own TokenVerifier: a fixed table of opaque tokens."""

    async def verify(self, token: str) -> Any:
        from mcpgen_runtime.auth.tokens import AuthInfo, InvalidToken, VerifierUnavailable

        if token == "reader":
            return AuthInfo("dora", "kiosk", frozenset({"notes:base", "notes:read"}), {"k": 1})
        if token == "down":
            raise VerifierUnavailable("the directory does not answer")
        raise InvalidToken("not in the table")


def test_a_deployments_own_verifier_through_build_asgi_app(package: tuple[Path, Path]) -> None:
    from fixtures.asgi_client import post as asgi_post
    from fixtures.asgi_client import rpc as asgi_rpc
    from helpers import import_package

    from mcpgen_runtime.http.config import HttpOptions
    from mcpgen_runtime.http.server import build_asgi_app

    gen, impl = package
    sys.path.insert(0, str(impl))
    try:
        with import_package(gen, "authnotes_mcp") as module:
            from authnotes_impl import Impl  # type: ignore[import-not-found]

            options = HttpOptions(
                auth_issuer="https://as.example", resource_url="https://notes.example/mcp"
            )
            app = build_asgi_app(
                module.server.build_app(Impl()), options, token_verifier=_OwnVerifier()
            )
            whoami = {"name": "whoami", "arguments": {}}
            seen = asgi_rpc(app, "tools/call", whoami, authorization="Bearer reader")
            assert json.loads(seen["result"]["content"][0]["text"])["sub"] == "dora"
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": whoami})
            status, headers, text = asgi_post(app, body.encode(), {"authorization": "Bearer nope"})
            assert status == 401
            assert headers["www-authenticate"] == (
                'Bearer error="invalid_token", error_description="not in the table", '
                'scope="notes:base", resource_metadata='
                '"https://notes.example/.well-known/oauth-protected-resource/mcp"'
            )
            status, _, text = asgi_post(app, body.encode(), {"authorization": "Bearer down"})
            assert status == 503 and b"cannot be checked" in text
            with pytest.raises(ValueError, match="auth_issuer"):
                build_asgi_app(module.server.build_app(Impl()), token_verifier=_OwnVerifier())
    finally:
        sys.path.remove(str(impl))
        sys.modules.pop("authnotes_impl", None)
