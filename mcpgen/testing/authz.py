"""``unauthorized_accepted``: a live server must refuse a scoped tool's call that
comes without a token, or with a token lacking the tool's scopes.

Run with ``--url`` only (authorization is an HTTP matter; stdio takes its
credentials from the environment). For every tool of the contract that names scopes
(its own or the server's), through the runtime's client session, the one every
other check uses:

- no ``Authorization`` header: the answer must be 401 with a ``Bearer`` challenge
  naming the resource metadata (RFC 9728); the session may be refused as soon as it
  connects, since without a token nothing is served;
- with ``--auth-token-without-scopes``, a token the server accepts that holds none of
  the tool's scopes: 403 with ``error="insufficient_scope"`` and a ``scope`` naming
  every scope the tool needs;
- with ``--auth-token-invalid`` (repeatable), a token the server must refuse (expired,
  for another audience, signed by another key): 401 with ``error="invalid_token"``.

Anything else is a finding: a result (the call reached the tool), a JSON-RPC error,
another status, a challenge that does not say what it must. A destructive tool is
called only with ``--allow-destructive``, as in the other checks. Tokens are sent,
never printed: findings quote the server's challenge, not the request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mcpgen_runtime import AuthRequired, McpError, Session

from .. import ir
from .checks import Finding
from .examples import ExampleError, example_arguments

__all__ = ["CHECK", "authorization_findings"]

CHECK = "unauthorized_accepted"


def authorization_findings(
    url: str,
    headers: Mapping[str, str],
    tools: Sequence[ir.Tool],
    *,
    token_without_scopes: str | None,
    invalid_tokens: Sequence[str] = (),
    allow_destructive: bool,
    timeout: float,
) -> list[Finding]:
    """Every ``unauthorized_accepted`` finding of ``tools`` at ``url`` (``headers``:
    the user's own, the ``Authorization`` one left out of the probes)."""
    plain = {k: v for k, v in headers.items() if k.lower() != "authorization"}
    probes = [("no token", plain, 401)]
    if token_without_scopes is not None:
        scoped_out = {**plain, "Authorization": f"Bearer {token_without_scopes}"}
        probes.append(("a token without its scopes", scoped_out, 403))
    for number, token in enumerate(invalid_tokens, 1):
        refused = {**plain, "Authorization": f"Bearer {token}"}
        probes.append((f"--auth-token-invalid #{number}", refused, 401))
    findings = []
    for tool in tools:
        if not tool.scopes or (tool.hints.destructive and not allow_destructive):
            continue
        arguments = _arguments(tool)
        for what, sent, status in probes:
            problem = _probe(url, sent, tool, arguments, status, timeout)
            if problem is not None:
                message = f"{tool.name} called with {what}: {problem}"
                findings.append(Finding(tool.name, CHECK, arguments, message, phase="auth"))
    return findings


def _arguments(tool: ir.Tool) -> dict[str, Any]:
    try:
        return example_arguments(tool.input_schema)
    except ExampleError:
        return {}  # refused before its arguments are looked at, or a finding either way


def _probe(
    url: str,
    headers: Mapping[str, str],
    tool: ir.Tool,
    arguments: dict[str, Any],
    status: int,
    timeout: float,
) -> str | None:
    """What is wrong with how the server answered one call (None: refused as it must)."""
    try:
        with Session.http(url, headers=headers, verify="off", timeout=timeout) as session:
            session.call_tool(tool.name, arguments)
    except AuthRequired as refused:
        return _challenge_problem(refused, status, tool, "Authorization" in headers)
    except McpError as exc:
        return f"expected HTTP {status}, got {type(exc).__name__}: {exc}"
    return f"the server ran the call (expected HTTP {status})"


def _challenge_problem(
    refused: AuthRequired, status: int, tool: ir.Tool, token_sent: bool
) -> str | None:
    challenge = refused.www_authenticate or ""
    said = f"HTTP {refused.status} with WWW-Authenticate {challenge!r}"
    if refused.status != status:
        return f"expected HTTP {status}, got {said}"
    if not challenge.lower().startswith("bearer") or "resource_metadata=" not in challenge:
        return f"a {status} must carry a Bearer challenge naming resource_metadata; got {said}"
    if status == 401 and token_sent and 'error="invalid_token"' not in challenge:
        return f'a refused token must get error="invalid_token"; got {said}'
    if status == 403:
        if 'error="insufficient_scope"' not in challenge:
            return f'a 403 must say error="insufficient_scope"; got {said}'
        named = _param(challenge, "scope").split()
        lacking = [scope for scope in tool.scopes if scope not in named]
        if lacking:
            return f"the 403's scope does not name {' '.join(lacking)}; got {said}"
    return None


_PARAM = re.compile(r'([A-Za-z_]+)="((?:[^"\\]|\\.)*)"')


def _param(challenge: str, name: str) -> str:
    """The value of the quoted parameter ``name`` of a challenge ('' when absent)."""
    for key, value in _PARAM.findall(challenge):
        if key == name:
            return str(value)
    return ""
