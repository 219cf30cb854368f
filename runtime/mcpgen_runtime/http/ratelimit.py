"""Per-caller rate limits over HTTP (``--rate-limit N/s --rate-burst B``).

Each request to the MCP path takes a token from its caller's bucket
(``identity.caller``: the requestor, else the client address) before its body is
read; one over the limit gets 429 with ``Retry-After`` (whole seconds, rounded up)
and a JSON-RPC error (``RATE_LIMITED``, -31001, id null: the body is not read, with
``data.retryAfterMs``). The buckets live in the task store (``TaskStore.take_token``):
with Redis, one script per request, so every worker counts one caller's requests
together and exactly; in memory, per process (with ``--workers N`` and no Redis, a
caller may get N times the rate). Probes and any other path are never counted.

A store that cannot be reached admits the request (a limit must not take the
service down with Redis) and says so on stderr once per outage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.constants import RATE_LIMITED
from ..protocol.jsonrpc import error_response
from ..ratelimit.bucket import RateLimit, over_limit, retry_after_header
from ..tasks.store import TaskStore, TaskStoreUnavailable
from ..telemetry.logs import diagnostics
from .identity import caller

__all__ = ["RateGate", "Refusal"]

_LOG = diagnostics("tasks")  # the task store that keeps the buckets failed


class Refusal:
    """A request refused before its body is read: status, Retry-After, JSON-RPC frame,
    and whether the connection closes after it (a draining server's do: the client's
    next connection may reach another instance)."""

    __slots__ = ("close", "frame", "retry_after", "status")

    def __init__(self, status: int, retry_after: int, frame: bytes, *, close: bool = False) -> None:
        self.status = status
        self.retry_after = retry_after
        self.frame = frame
        self.close = close


class RateGate:
    """The rate limit of one server process, its buckets in ``store``."""

    def __init__(self, limit: RateLimit, store: TaskStore, identity_header: str | None) -> None:
        self.limit = limit
        self.store = store
        self.identity_header = identity_header
        self._store_down = False

    async def refusal(
        self, scope: Mapping[str, Any], requestor: str | None = None
    ) -> Refusal | None:
        """None: the request may go on (its token taken); else its 429. ``requestor``:
        the verified token's (authorization on), else the scope's (``identity.caller``)."""
        key = "id:" + requestor if requestor else caller(scope, self.identity_header)
        try:
            wait = await self.store.take_token(key, self.limit)
        except TaskStoreUnavailable as exc:
            if not self._store_down:
                self._store_down = True
                _LOG.warning("rate limit not applied: %s", exc)
            return None
        self._store_down = False
        if not wait:
            return None
        frame = error_response(None, RATE_LIMITED, *over_limit(self.limit, wait))
        return Refusal(429, retry_after_header(wait), frame)
