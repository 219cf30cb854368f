"""The HTTP transport's options and limits: standard library only.

``_main`` reads these to build ``HttpOptions`` from the command line without importing
``http.server`` (which needs the optional uvicorn), so neither the server's start nor a
type checker of a generated package ever reaches for it unless HTTP is served.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..server.stdio import DEFAULT_DRAIN_SECONDS
from ..tasks.table import DEFAULT_LEASE_SECONDS as _DEFAULT_LEASE_SECONDS
from ..tasks.table import DEFAULT_MAX_TASKS, DEFAULT_MAX_TASKS_PER_WORKER

__all__ = [
    "AUTH_INSTALL_HINT",
    "BODY_TIMEOUT_SECONDS",
    "DEFAULT_DRAIN_SECONDS",
    "DEFAULT_HEALTH_PATH",
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_TASKS",
    "DEFAULT_MAX_TASKS_PER_WORKER",
    "DEFAULT_PATH",
    "DEFAULT_PORT",
    "DEFAULT_READY_PATH",
    "HEADER_TIMEOUT_SECONDS",
    "INSTALL_HINT",
    "MAX_CHECK_THREADS",
    "MAX_CONNECTIONS",
    "MAX_REQUEST_ID_CHARS",
    "MAX_SYNC_THREADS",
    "RETRY_AFTER_DRAINING_SECONDS",
    "SHUTDOWN_GRACE_SECONDS",
    "WORKER_ENV",
    "WRITE_TIMEOUT_SECONDS",
    "HttpOptions",
    "HttpUnavailable",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_PATH = "/mcp"
# Probes for a load balancer or an orchestrator (GET or HEAD, JSON, no Host/Origin check,
# never MCP traffic): the process serves; it is ready for traffic (the task store answers).
DEFAULT_HEALTH_PATH = "/healthz"
DEFAULT_READY_PATH = "/readyz"
# Largest request body accepted; the same default as a stdio frame.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
# Sync handlers running in the background at once per process (those with a
# timeout, a ctx or a task; 64; --max-concurrent-calls); further calls wait for a
# slot, within their tool's timeout. Plain sync handlers run inline (http.calls).
MAX_SYNC_THREADS = 64
# Argument checks and result conversions running at once per process (8): they
# are CPU work, so more threads would not finish them sooner; further calls wait.
MAX_CHECK_THREADS = 8
# Seconds a client has to send a complete request head (10 s; --header-timeout):
# a real client sends it in one packet. See http.guard.
HEADER_TIMEOUT_SECONDS = 10.0
# Seconds a client has, once the head is in, for the complete body (60 s;
# --body-timeout): 16 MiB, the largest body, at ~280 KiB/s.
BODY_TIMEOUT_SECONDS = 60.0
# Seconds a client has to take an answer the server could not hand to the OS at once
# (60 s; --write-timeout): while the connection's send buffer is over its high-water
# mark, or bytes of a finished answer are still unsent; past it the connection is
# aborted. 16 MiB, the largest answer echoing the largest body, at ~280 KiB/s.
WRITE_TIMEOUT_SECONDS = 60.0
# The longest JSON-RPC request id (string) answered; a longer one gets -32600: the
# id is echoed in the answer, so it would make any answer as large as the request.
MAX_REQUEST_ID_CHARS = 4096
# Connections open at once per process (256; --max-connections); each may hold a
# request body of up to --max-message-bytes while it is read.
MAX_CONNECTIONS = 256
# How long in-flight requests may still finish once uvicorn's shutdown begins (after
# a drain, or at once on SIGINT); past it they are cancelled.
SHUTDOWN_GRACE_SECONDS = 5
# On SIGTERM, how long in-flight calls, SSE streams and running tasks may take to finish
# while readiness is false and new requests are refused: DEFAULT_DRAIN_SECONDS (30 s,
# --drain-timeout), the stdio server's too.
# Retry-After of a request refused while draining: another instance answers it.
RETRY_AFTER_DRAINING_SECONDS = 1

# The uvicorn factory for --workers > 1 reads its configuration from here.
WORKER_ENV = "MCPGEN_HTTP_WORKER"

AUTH_INSTALL_HINT = (
    "checking JWT access tokens needs PyJWT with cryptography: pip install 'mcpgen-runtime[auth]'"
)

INSTALL_HINT = (
    "the HTTP transport needs uvicorn: pip install 'mcpgen-runtime[http]' (or: pip install uvicorn)"
)


class HttpUnavailable(RuntimeError):
    """HTTP cannot be served: the optional uvicorn is missing."""


# How long a worker's lease on its running tasks lasts without renewal: the tasks
# part owns the number (its stores use it), the HTTP options default to it.
DEFAULT_LEASE_SECONDS = _DEFAULT_LEASE_SECONDS


@dataclass(frozen=True)
class HttpOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    health_path: str = DEFAULT_HEALTH_PATH
    ready_path: str = DEFAULT_READY_PATH
    workers: int = 1
    json_response: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    log_level: str = "info"
    max_sync_threads: int = MAX_SYNC_THREADS
    # connection limits (see http.guard): seconds for a request head, then its
    # body, then for the client to take a stalled answer; connections open at once
    header_timeout: float = HEADER_TIMEOUT_SECONDS
    body_timeout: float = BODY_TIMEOUT_SECONDS
    write_timeout: float = WRITE_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS
    # Host values and Origin values accepted beyond the address a request reached
    # (entries "name:port", "name:*"; origins "scheme://name[:port|:*]"); see http.guard
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    # where tasks live ("memory" or a redis:// URL, see tasks.factory) and the lease
    # of a worker on the tasks it runs (seconds)
    task_store: str = "memory"
    task_lease: float = DEFAULT_LEASE_SECONDS
    # the store's key prefix (None: mcpgen:<server name>:), and its caps on live
    # tasks: created by this process, and by all the workers sharing the store
    task_key_prefix: str | None = None
    max_tasks_per_worker: int = DEFAULT_MAX_TASKS_PER_WORKER
    max_tasks: int = DEFAULT_MAX_TASKS
    # a header an authenticating proxy sets to the requestor's identity (None: off);
    # tasks are bound to it (see http.identity)
    identity_header: str | None = None
    # the HTTP/1.1 parser: "auto" (httptools when installed, else h11), "h11", "httptools"
    http_parser: str = "auto"
    # requests per requestor ("N/s" or "N/m", ratelimit.bucket; None: no limit) and how
    # many at once (None: N), counted in the task store
    rate_limit: str | None = None
    rate_burst: int | None = None
    # on SIGTERM, seconds for what is in flight to finish (see http.drain)
    drain_timeout: float = DEFAULT_DRAIN_SECONDS
    # OAuth 2.1 resource server (see http.oauth): on when auth_issuer is set. Tokens must
    # name auth_audience (default resource_url); JWTs are checked against the issuer's
    # JWKS (auth_jwks_url, else its metadata's jwks_uri), opaque tokens introspected
    # at auth_introspection_url with this server's client credentials.
    auth_issuer: str | None = None
    auth_audience: str | None = None
    resource_url: str | None = None
    auth_jwks_url: str | None = None
    auth_introspection_url: str | None = None
    auth_client_id: str | None = None
    auth_client_secret: str | None = field(default=None, repr=False)
    # tools/list shows a token only the tools its scopes permit (False: every tool)
    auth_filter_listing: bool = True

    @property
    def auth_enabled(self) -> bool:
        return self.auth_issuer is not None

    # observability (telemetry/): the request log's format ("off", "text", "json"), a
    # service name for the OTEL_* set-up of each --workers process (None: no set-up
    # there), and tool arguments and results on spans (opt-in)
    log_format: str = "off"
    otel_service: str | None = None
    capture_content: bool = False
    # the key sealing a 2026-07-28 asking call's requestState (None: the app's own);
    # with --workers and no key given, one random key of this run, shared by its workers
    request_state_key: str | None = None
