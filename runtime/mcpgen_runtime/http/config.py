"""The HTTP transport's options and limits: standard library only.

``_main`` reads these to build ``HttpOptions`` from the command line without importing
``http.server`` (which needs the optional ``mcp`` SDK), so neither the server's start nor a
type checker of a generated package ever reaches for the SDK unless HTTP is served.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tasks.table import DEFAULT_LEASE_SECONDS as _DEFAULT_LEASE_SECONDS
from ..tasks.table import DEFAULT_MAX_TASKS, DEFAULT_MAX_TASKS_PER_WORKER

__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_TASKS",
    "DEFAULT_MAX_TASKS_PER_WORKER",
    "DEFAULT_PATH",
    "DEFAULT_PORT",
    "HEADER_TIMEOUT_SECONDS",
    "INSTALL_HINT",
    "MAX_CHECK_THREADS",
    "MAX_CONNECTIONS",
    "MAX_SYNC_THREADS",
    "SHUTDOWN_GRACE_SECONDS",
    "WORKER_ENV",
    "HttpOptions",
    "HttpUnavailable",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_PATH = "/mcp"
# Largest request body accepted; the same default as a stdio frame.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
# Sync handlers running at once per process (64; --max-concurrent-calls); further
# calls wait for a slot, within their tool's timeout.
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
# Connections open at once per process (256; --max-connections); each may hold a
# request body of up to --max-message-bytes while it is read.
MAX_CONNECTIONS = 256
# How long in-flight requests may still finish once shutdown begins.
SHUTDOWN_GRACE_SECONDS = 5

# The uvicorn factory for --workers > 1 reads its configuration from here.
WORKER_ENV = "MCPGEN_HTTP_WORKER"

INSTALL_HINT = (
    "the HTTP transport needs the official MCP SDK: pip install 'mcpgen-runtime[http]' "
    "(or: pip install 'mcp>=2.3,<3')"
)


class HttpUnavailable(RuntimeError):
    """HTTP cannot be served: the optional ``mcp`` SDK is missing, or it would
    publish this contract differently than the contract says."""


# How long a worker's lease on its running tasks lasts without renewal: the tasks
# part owns the number (its stores use it), the HTTP options default to it.
DEFAULT_LEASE_SECONDS = _DEFAULT_LEASE_SECONDS


@dataclass(frozen=True)
class HttpOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    workers: int = 1
    json_response: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    log_level: str = "info"
    max_sync_threads: int = MAX_SYNC_THREADS
    # connection limits (see http.guard): seconds for a request head, then its
    # body; connections open at once
    header_timeout: float = HEADER_TIMEOUT_SECONDS
    body_timeout: float = BODY_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS
    # where tasks live ("memory" or a redis:// URL, see tasks.store) and the lease
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
