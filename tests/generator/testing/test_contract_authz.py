"""``mcpgen test --url`` checks authorization (``unauthorized_accepted``): a server
that serves a scoped tool without a token, or to a token lacking its scopes, is a
finding; a resource server that refuses both as it must (401, then 403
``insufficient_scope`` naming the scopes) passes. Tokens never reach the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.jwks_issuer import Issuer
from test_contract_testing import MCPGEN
from test_http_auth import ALL, issuer, package, serve

pytest.importorskip("jwt", reason="the auth extra (PyJWT) is not installed")

__all__ = ["issuer", "package"]  # the fixtures, shared with test_http_auth


def spec_of(package: tuple[Path, Path]) -> Path:
    gen, _ = package
    return gen.parent / "spec_authnotes_mcp" / "tools.yaml"


def mcpgen_test(package: tuple[Path, Path], *args: str, env: Any = None) -> tuple[int, Any, str]:
    import os
    import subprocess

    done = subprocess.run(
        [*MCPGEN, "test", str(spec_of(package)), "--format", "json", "--examples", "0", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout), done.stdout + done.stderr


def test_a_server_refusing_as_it_must_passes(package: tuple[Path, Path], issuer: Issuer) -> None:
    with serve(package, issuer) as server:
        token = issuer.token(scope=ALL, audience=server.url)
        none = issuer.token(scope="", audience=server.url)
        expired = issuer.token(scope=ALL, audience=server.url, expires_in=-600)
        elsewhere = issuer.token(scope=ALL, audience="https://other.example/mcp")
        code, report, text = mcpgen_test(
            package,
            "--url",
            server.url,
            "--auth-token-without-scopes",
            none,
            "--auth-token-invalid",
            expired,
            "--auth-token-invalid",
            elsewhere,
            env={"MCPGEN_AUTH_TOKEN": token},
        )
    assert code == 0, report["findings"]
    assert not any(secret in text for secret in (token, none, expired, elsewhere))


def test_a_server_without_authorization_is_a_finding_per_scoped_tool(
    package: tuple[Path, Path], issuer: Issuer
) -> None:
    with serve(package, None) as server:
        token = issuer.token(scope=ALL, audience=server.url)
        code, report, text = mcpgen_test(
            package,
            "--url",
            server.url,
            "--auth-token",
            token,
            "--auth-token-without-scopes",
            token,
            "--auth-token-invalid",
            "not-even-a-jwt",
        )
    assert code == 1
    found = {(f["tool"], f["check"]) for f in report["findings"]}
    tools = ("whoami", "read_note", "write_note", "hold")
    assert found == {(tool, "unauthorized_accepted") for tool in tools}
    messages = [f["message"] for f in report["findings"]]
    assert any("called with no token: the server ran the call" in m for m in messages)
    assert any("a token without its scopes: the server ran the call" in m for m in messages)
    assert any("--auth-token-invalid #1: the server ran the call" in m for m in messages)
    assert token not in text
    reproduce = report["findings"][0]["reproduce"]
    assert "--auth-token-without-scopes '…'" in reproduce and "Authorization: …" in reproduce


def test_a_token_holding_the_scopes_as_the_scopeless_one_is_a_finding(
    package: tuple[Path, Path], issuer: Issuer
) -> None:
    """A server whose 403 would not come: the 'scopeless' token here holds them all."""
    with serve(package, issuer) as server:
        token = issuer.token(scope=ALL, audience=server.url)
        code, report, _ = mcpgen_test(
            package,
            "--url",
            server.url,
            "--auth-token",
            token,
            "--auth-token-without-scopes",
            token,
            "--tool",
            "read_note",
        )
    assert code == 1
    [finding] = report["findings"]
    assert finding["message"] == (
        "read_note called with a token without its scopes: the server ran the call "
        "(expected HTTP 403)"
    )


def test_the_check_can_be_skipped(package: tuple[Path, Path]) -> None:
    with serve(package, None) as server:
        code, report, _ = mcpgen_test(
            package, "--url", server.url, "--skip-check", "unauthorized_accepted"
        )
    assert code == 0, report["findings"]


def test_import_takes_a_token_and_keeps_the_scopes(
    package: tuple[Path, Path], issuer: Issuer, tmp_path: Path
) -> None:
    """The round trip: the imported spec says `scopes:` (not `meta:`), and publishes
    the very descriptors the server listed."""
    import os
    import subprocess

    from mcpgen.descriptors import descriptor
    from mcpgen.spec.load import load_contract

    out = tmp_path / "imported.yaml"
    with serve(package, issuer) as server:
        token = issuer.token(scope=ALL, audience=server.url)
        done = subprocess.run(
            [*MCPGEN, "import", "--url", server.url, "-o", str(out)],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "MCPGEN_AUTH_TOKEN": token},
        )
        assert done.returncode == 0, done.stderr
        refused = subprocess.run(
            [*MCPGEN, "import", "--url", server.url, "-o", "-"],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            env={k: v for k, v in os.environ.items() if k != "MCPGEN_AUTH_TOKEN"},
        )
    assert token not in done.stdout + done.stderr
    assert refused.returncode == 1 and "401" in refused.stderr
    text = out.read_text(encoding="utf-8")
    assert "io.mcpgen/scopes" not in text
    imported = load_contract(out).contract
    assert imported is not None
    original = load_contract(spec_of(package)).contract
    assert original is not None
    assert [t.scopes for t in imported.tools] == [t.scopes for t in original.tools]
    assert [descriptor(t)["_meta"] for t in imported.tools] == [
        descriptor(t)["_meta"] for t in original.tools
    ]


def test_what_a_challenge_must_say(tmp_path: Path) -> None:
    """The verdicts on refusals that are refusals but say too little."""
    from mcpgen.spec.load import load_contract
    from mcpgen.testing.authz import _challenge_problem
    from mcpgen_runtime import AuthRequired

    contract = load_contract(spec_of_text(tmp_path)).contract
    assert contract is not None
    tool = contract.tools[0]
    meta = 'resource_metadata="https://r/.well-known/oauth-protected-resource/mcp"'

    def refused(status: int, challenge: str) -> AuthRequired:
        return AuthRequired("x", status=status, url="https://r/mcp", www_authenticate=challenge)

    assert _challenge_problem(refused(401, f"Bearer {meta}"), 401, tool, False) is None
    assert "resource_metadata" in str(_challenge_problem(refused(401, "Bearer"), 401, tool, False))
    assert "invalid_token" in str(
        _challenge_problem(refused(401, f"Bearer {meta}"), 401, tool, True)
    )
    assert "expected HTTP 403" in str(_challenge_problem(refused(401, "Bearer"), 403, tool, True))
    partial = f'Bearer error="insufficient_scope", scope="a", {meta}'
    assert "does not name b" in str(_challenge_problem(refused(403, partial), 403, tool, True))
    whole = f'Bearer error="insufficient_scope", error_description="x, y", scope="a b", {meta}'
    assert _challenge_problem(refused(403, whole), 403, tool, True) is None


def spec_of_text(tmp_path: Path) -> Path:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "mcpgen: 1\npackage: s_mcp\nserver: {name: s, version: '1', scopes: [a]}\n"
        "tools:\n  - name: t\n    scopes: [b]\n",
        encoding="utf-8",
    )
    return spec
