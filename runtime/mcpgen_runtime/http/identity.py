"""Who sends an HTTP request: the identity a task is bound to (its owner).

A stateless HTTP server cannot tell its clients apart by connection, so it
binds tasks to an identity only when the deployment supplies one. Two hooks,
both off unless used (without either, every requestor is anonymous: tasks are
reachable only by their unguessable ids, and ``tasks/list`` is not offered):

- ``scope["user"]``, the ASGI convention of Starlette's ``AuthenticationMiddleware``
  (which the ``mcp`` SDK's bearer-token authentication also uses): when the object
  there says ``is_authenticated``, its ``identity`` string is the requestor. Wrap
  the app of ``build_asgi_app`` in such a middleware.
- a request header set by an authenticating proxy in front of the server
  (``--identity-header NAME``): its value is the requestor. Safe only when every
  request reaches the server through that proxy and the proxy sets the header
  itself, never passing on one a client sent. A header sent more than once is
  ambiguous and counts as no identity.

``scope["user"]`` wins when both give an identity. Standard library only: any ASGI
server or app of this runtime asks the same function.

``caller`` is whom a request counts against for a rate limit: the requestor when
there is one (so an authenticated subject is limited wherever it connects from),
else the client's address (uvicorn rewrites it from ``X-Forwarded-For`` only for a
proxy it trusts: ``--forwarded-allow-ips``, by default 127.0.0.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["caller", "requestor_identity"]


def requestor_identity(scope: Mapping[str, Any], header: str | None = None) -> str | None:
    """The identity of the requestor of the ASGI request ``scope``, or None."""
    user = scope.get("user")
    if user is not None:
        try:
            identity = user.identity if user.is_authenticated is True else None
        except (AttributeError, NotImplementedError):
            identity = None  # not a user object of the convention
        if isinstance(identity, str) and identity:
            return identity
    if header:
        name = header.lower().encode("latin-1")
        values = [value for key, value in scope.get("headers", ()) if key.lower() == name]
        if len(values) == 1:
            text = values[0].decode("latin-1").strip()
            return text or None
    return None


def caller(scope: Mapping[str, Any], header: str | None = None) -> str:
    """Whom the request of ``scope`` counts against: ``id:<requestor>`` (the identity
    of ``requestor_identity``), else ``addr:<client address>``."""
    identity = requestor_identity(scope, header)
    if identity is not None:
        return "id:" + identity
    client = scope.get("client")
    return "addr:" + (str(client[0]) if client else "unknown")
