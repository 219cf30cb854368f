"""The command line of a generated package.

``python -m <package> [--impl module:Class] [--transport stdio|http] [--host H]
[--port N] [--workers N] [--path /mcp] [--health-path P] [--ready-path P] [--json-response] [--header-timeout S]
[--body-timeout S] [--write-timeout S] [--max-connections N] [--allowed-host HOST]...
[--allowed-origin ORIGIN]... [--max-message-bytes N]
[--max-concurrent-calls N] [--task-store memory|redis://HOST:PORT/DB] [--task-lease S]
[--task-key-prefix P] [--max-tasks-per-worker N] [--max-tasks N] [--identity-header NAME]
[--http-parser auto|h11|httptools] [--rate-limit N/s|N/m] [--rate-burst B]
[--drain-timeout S] [--auth-issuer URL --resource-url URL
[--auth-audience URI] [--auth-jwks-url URL] [--auth-introspection-url URL]
[--auth-list-all-tools]] [--log-format off|text|json] [--trace-content]
[--request-state-key KEY]``

stdio is served by this runtime alone; http by its own ASGI app on the optional
uvicorn (``http.server``, imported only when asked for).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ._impl import load_implementation
from .http import config as http_config
from .ratelimit.bucket import RateLimit
from .server.sealing import STATE_KEY_ENV
from .server.stdio import run_stdio
from .server.tools import App
from .telemetry.options import (
    Observability,
    add_observability_arguments,
    set_up_observability,
)
from .telemetry.server import ServerTelemetry

__all__ = ["load_implementation", "main"]

# Imported by name, only when HTTP is served: a static import would make every type
# check of a generated package follow http.server into the optional uvicorn.
_HTTP_MODULE = ".http.server"


def main(
    argv: Sequence[str] | None = None,
    *,
    prog: str,
    base_class: type,
    build_app: Callable[[Any], App],
    default_impl: str | None,
    server_info: Mapping[str, Any],
) -> int:
    parser = _parser(prog, default_impl, server_info)
    args = parser.parse_args(argv)
    _check_arguments(parser, args)
    observability = set_up_observability(
        args, str(server_info.get("name") or prog), in_workers=(args.workers or 1) > 1
    )
    try:
        # On stdio, stdout is the protocol stream: what the implementation prints or
        # logs while it is imported and constructed goes to stderr, as in handlers.
        with _stdout_to_stderr() if args.transport == "stdio" else contextlib.nullcontext():
            impl = load_implementation(args.impl, base_class)
            app = build_app(impl)
        if args.request_state_key:  # $MCPGEN_REQUEST_STATE_KEY: the App's own already
            app.use_state_key(args.request_state_key)
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if args.transport == "http":
        return _serve_http(
            prog, app, args, observability, base_class=base_class, build_app=build_app
        )
    run_stdio(
        app,
        max_message_bytes=args.max_message_bytes,
        max_concurrent_calls=args.max_concurrent_calls,
        rate_limit=_rate_limit(args),
        drain_timeout=args.drain_timeout,
        telemetry=ServerTelemetry.start("pipe", observability.capture_content),
    )
    return 0


def _parser(
    prog: str, default_impl: str | None, server_info: Mapping[str, Any]
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=f"Serve the {server_info.get('name')} MCP tools over stdio or Streamable HTTP.",
    )
    parser.add_argument(
        "--impl",
        default=default_impl,
        metavar="MODULE:CLASS",
        help="the implementation class (default: server.implementation from the spec)",
    )
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (newline-delimited JSON-RPC on stdin/stdout, the default) or http "
        "(stateless Streamable HTTP on uvicorn: pip install 'mcpgen-runtime[http]')",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=None,
        help="largest frame (stdio) or request body (http) accepted (default 16 MiB)",
    )
    parser.add_argument(
        "--max-concurrent-calls",
        type=_positive_int,
        default=None,
        metavar="N",
        help="tool calls running at once in the background (default 64): over stdio, task, "
        "async, ctx and timeout calls, and more are refused with error -31000 'Server busy'; "
        "over http, background sync handlers (timeout, ctx), and more wait for a slot, and "
        "tasks beyond it are refused",
    )
    _add_service_arguments(parser)
    parser.add_argument(
        "--request-state-key",
        default=None,
        metavar="KEY",
        help="secret (32+ bytes) sealing the requestState of 2026-07-28 tools that ask for "
        f"input; every worker and machine serving one endpoint needs the same (default: "
        f"${STATE_KEY_ENV}, else a random key of this run: its --workers share it, a restart "
        "or another machine does not)",
    )
    _add_http_arguments(parser)
    add_observability_arguments(parser)
    return parser


def _add_service_arguments(parser: argparse.ArgumentParser) -> None:
    """What both transports take: the per-caller rate limit and the drain on SIGTERM."""
    parser.add_argument(
        "--rate-limit",
        type=_rate_text,
        default=None,
        metavar="N/s|N/m",
        help="requests each caller may send (token bucket; off by default): over http per "
        "requestor (the authenticated identity, else the client address), answered 429 with "
        "Retry-After and shared through a Redis task store; over stdio per process, answered "
        "with error -31001",
    )
    parser.add_argument(
        "--rate-burst",
        type=_positive_int,
        default=None,
        metavar="B",
        help="requests a caller may send at once (default: N of --rate-limit)",
    )
    parser.add_argument(
        "--drain-timeout",
        type=_positive_float,
        default=http_config.DEFAULT_DRAIN_SECONDS,
        metavar="SECONDS",
        help="on SIGTERM, how long calls in flight may take to finish before the process "
        f"exits (default {http_config.DEFAULT_DRAIN_SECONDS:g}); over http readiness turns "
        "false and new requests get 503 meanwhile",
    )


def _add_http_arguments(parser: argparse.ArgumentParser) -> None:
    http = parser.add_argument_group("http transport")
    http.add_argument(
        "--host",
        default=None,
        help="address to bind (default 127.0.0.1); requests that reach a loopback address "
        "must name a loopback host (else 421) and come from no page or a loopback page "
        "(else 403); on any other address a request with an Origin header other than that "
        "address gets 403 unless --allowed-origin lists it",
    )
    http.add_argument("--port", type=_port, default=None, help="TCP port (default 8000)")
    http.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="worker processes sharing the port (default 1); the server is stateless, "
        "so any worker answers any request",
    )
    http.add_argument("--path", default=None, help="endpoint path (default /mcp)")
    http.add_argument(
        "--health-path",
        default=None,
        help="liveness probe: GET answers 200 while the process serves (default /healthz)",
    )
    http.add_argument(
        "--ready-path",
        default=None,
        help="readiness probe: GET answers 200, or 503 while the task store does not "
        "answer (default /readyz)",
    )
    http.add_argument(
        "--json-response",
        action="store_true",
        help="answer every POST with application/json, never an SSE stream (a ctx handler's "
        "progress and logs are then dropped); by default a call streams (SSE) only when its "
        "request asks for progress or logs and its handler can send them",
    )
    _add_limit_arguments(http)
    http.add_argument(
        "--http-parser",
        choices=["auto", "h11", "httptools"],
        default=None,
        help="the HTTP/1.1 parser: httptools (C, installed with the http extra where it "
        "builds) or h11 (pure Python); default auto: httptools when installed",
    )
    _add_origin_arguments(http)
    _add_store_arguments(http)
    _add_task_arguments(http)
    _add_auth_arguments(parser)


def _add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    auth = parser.add_argument_group(
        "authorization (http): an OAuth 2.1 resource server, on with --auth-issuer "
        "(pip install 'mcpgen-runtime[auth]')"
    )
    auth.add_argument(
        "--auth-issuer",
        default=None,
        metavar="URL",
        help="the authorization server whose tokens are accepted; its RFC 8414 (or OpenID) "
        "metadata names its keys (default: $MCPGEN_AUTH_ISSUER)",
    )
    auth.add_argument(
        "--resource-url",
        default=None,
        metavar="URL",
        help="this server's canonical URL (https://mcp.example.com/mcp), named in the "
        "metadata and challenges (default: $MCPGEN_RESOURCE_URL)",
    )
    auth.add_argument(
        "--auth-audience",
        default=None,
        metavar="URI",
        help="the audience (aud) tokens must name (default: $MCPGEN_AUTH_AUDIENCE, else "
        "--resource-url)",
    )
    auth.add_argument(
        "--auth-jwks-url",
        default=None,
        metavar="URL",
        help="the issuer's JWKS, when its metadata does not name it (default: "
        "$MCPGEN_AUTH_JWKS_URL, else the metadata's jwks_uri)",
    )
    auth.add_argument(
        "--auth-introspection-url",
        default=None,
        metavar="URL",
        help="RFC 7662 endpoint for opaque tokens (default: $MCPGEN_AUTH_INTROSPECTION_URL); "
        "this server's client credentials: --auth-client-id (or $MCPGEN_AUTH_CLIENT_ID) and "
        "$MCPGEN_AUTH_CLIENT_SECRET",
    )
    auth.add_argument(
        "--auth-client-id",
        default=None,
        metavar="ID",
        help="this server's client id at the introspection endpoint (default: "
        "$MCPGEN_AUTH_CLIENT_ID); its secret is read from $MCPGEN_AUTH_CLIENT_SECRET only",
    )
    auth.add_argument(
        "--auth-list-all-tools",
        action="store_true",
        help="tools/list shows every tool to every token (default: only those its scopes permit)",
    )


def _add_limit_arguments(http: argparse._ArgumentGroup) -> None:
    http.add_argument(
        "--header-timeout",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="time a client has to send a complete request head (default 10); "
        "a late one gets 408 and the connection is closed",
    )
    http.add_argument(
        "--body-timeout",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="time a client has, once the head is in, to send the complete body (default 60)",
    )
    http.add_argument(
        "--write-timeout",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="time a client that stops reading has to take an answer the server could not "
        "send at once (default 60); then the connection is aborted",
    )
    http.add_argument(
        "--max-connections",
        type=_positive_int,
        default=None,
        metavar="N",
        help="connections open at once per process (default 256); more get 503 at once",
    )


def _add_origin_arguments(http: argparse._ArgumentGroup) -> None:
    http.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="HOST[:PORT|:*]",
        help="a Host header value accepted on every address (repeatable); once given, "
        "requests reaching a non-loopback address must name one of these hosts (or the "
        "address itself), else 421",
    )
    http.add_argument(
        "--allowed-origin",
        action="append",
        default=None,
        metavar="SCHEME://HOST[:PORT|:*]",
        help="a browser page origin accepted on every address (repeatable); by default "
        "only loopback pages on a loopback address, and the address itself elsewhere",
    )


def _add_store_arguments(http: argparse._ArgumentGroup) -> None:
    http.add_argument(
        "--task-store",
        default=None,
        metavar="URL",
        help="where tasks live: 'memory' (this process; the default) or redis://HOST:PORT/DB, "
        "shared by every worker that names it (default: $MCPGEN_TASK_STORE, else memory)",
    )
    http.add_argument(
        "--task-lease",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="with a Redis task store: a worker that has not renewed its lease for this long "
        "is taken for dead and its running tasks fail (default: $MCPGEN_TASK_LEASE, else 15)",
    )


def _add_task_arguments(http: argparse._ArgumentGroup) -> None:
    http.add_argument(
        "--task-key-prefix",
        default=None,
        metavar="PREFIX",
        help="with a Redis task store: the prefix of its keys; deployments that must not see "
        "each other's tasks need different ones (default: $MCPGEN_TASK_KEY_PREFIX, else "
        "mcpgen:<server name>:)",
    )
    http.add_argument(
        "--max-tasks-per-worker",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"live tasks (running, or kept for their TTL) this process holds at once "
        f"(default {http_config.DEFAULT_MAX_TASKS_PER_WORKER}); one more is refused with -31000",
    )
    http.add_argument(
        "--max-tasks",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"live tasks all the workers sharing a Redis task store hold at once "
        f"(default {http_config.DEFAULT_MAX_TASKS}); one more is refused with -31000",
    )
    http.add_argument(
        "--identity-header",
        default=None,
        metavar="NAME",
        help="bind tasks to the requestor this header names, as set by an authenticating "
        "proxy (off by default; only safe when every request passes that proxy)",
    )


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What argparse cannot check alone (exits with a usage error)."""
    if not args.impl:
        parser.error("no implementation: pass --impl module:Class (or set server.implementation)")
    http_flags = [
        flag
        for flag, value in (
            ("--host", args.host),
            ("--port", args.port),
            ("--workers", args.workers),
            ("--path", args.path),
            ("--health-path", args.health_path),
            ("--ready-path", args.ready_path),
            ("--json-response", args.json_response or None),
            ("--header-timeout", args.header_timeout),
            ("--body-timeout", args.body_timeout),
            ("--write-timeout", args.write_timeout),
            ("--allowed-host", args.allowed_host),
            ("--allowed-origin", args.allowed_origin),
            ("--max-connections", args.max_connections),
            ("--task-store", args.task_store),
            ("--task-lease", args.task_lease),
            ("--task-key-prefix", args.task_key_prefix),
            ("--max-tasks-per-worker", args.max_tasks_per_worker),
            ("--max-tasks", args.max_tasks),
            ("--identity-header", args.identity_header),
            ("--http-parser", args.http_parser),
            ("--auth-issuer", args.auth_issuer),
            ("--resource-url", args.resource_url),
            ("--auth-audience", args.auth_audience),
            ("--auth-jwks-url", args.auth_jwks_url),
            ("--auth-introspection-url", args.auth_introspection_url),
            ("--auth-client-id", args.auth_client_id),
            ("--auth-list-all-tools", args.auth_list_all_tools or None),
        )
        if value is not None
    ]
    if args.transport != "http" and http_flags:
        parser.error(f"{', '.join(http_flags)} need --transport http")
    if args.rate_burst is not None and args.rate_limit is None:
        parser.error("--rate-burst needs --rate-limit")
    paths = {
        "--path": args.path or http_config.DEFAULT_PATH,
        "--health-path": args.health_path or http_config.DEFAULT_HEALTH_PATH,
        "--ready-path": args.ready_path or http_config.DEFAULT_READY_PATH,
    }
    for flag, path in paths.items():
        if not path.startswith("/"):
            parser.error(f"{flag} must start with '/'")
    if len(set(paths.values())) < len(paths):
        parser.error("--path, --health-path and --ready-path must differ")


def _serve_http(
    prog: str,
    app: App,
    args: argparse.Namespace,
    observability: Observability,
    *,
    base_class: type,
    build_app: Callable[[Any], App],
) -> int:
    workers = args.workers or 1
    try:
        options = http_config.HttpOptions(
            host=args.host or http_config.DEFAULT_HOST,
            port=http_config.DEFAULT_PORT if args.port is None else args.port,
            path=args.path or http_config.DEFAULT_PATH,
            health_path=args.health_path or http_config.DEFAULT_HEALTH_PATH,
            ready_path=args.ready_path or http_config.DEFAULT_READY_PATH,
            workers=workers,
            json_response=args.json_response,
            max_body_bytes=args.max_message_bytes or http_config.DEFAULT_MAX_BODY_BYTES,
            header_timeout=args.header_timeout or http_config.HEADER_TIMEOUT_SECONDS,
            body_timeout=args.body_timeout or http_config.BODY_TIMEOUT_SECONDS,
            write_timeout=args.write_timeout or http_config.WRITE_TIMEOUT_SECONDS,
            allowed_hosts=tuple(args.allowed_host or ()),
            allowed_origins=tuple(args.allowed_origin or ()),
            max_connections=args.max_connections or http_config.MAX_CONNECTIONS,
            max_sync_threads=args.max_concurrent_calls or http_config.MAX_SYNC_THREADS,
            task_store=args.task_store or os.environ.get("MCPGEN_TASK_STORE") or "memory",
            task_lease=args.task_lease or _lease_from_environment(),
            task_key_prefix=args.task_key_prefix or os.environ.get("MCPGEN_TASK_KEY_PREFIX"),
            max_tasks_per_worker=args.max_tasks_per_worker
            or http_config.DEFAULT_MAX_TASKS_PER_WORKER,
            max_tasks=args.max_tasks or http_config.DEFAULT_MAX_TASKS,
            identity_header=args.identity_header or None,
            http_parser=args.http_parser or "auto",
            rate_limit=args.rate_limit,
            rate_burst=args.rate_burst,
            drain_timeout=args.drain_timeout,
            **_auth_options(args),
            log_format=observability.log_format,
            # each --workers process sets the SDK up for itself (this one serves nothing)
            otel_service=str(app.server_info.get("name") or prog) if workers > 1 else None,
            capture_content=observability.capture_content,
            request_state_key=_request_state_key(args, workers),
        )
        # stdlib-only at import time; uvicorn is imported inside serve_http
        serve_http: Callable[..., None] = importlib.import_module(
            _HTTP_MODULE, __package__
        ).serve_http
        serve_http(app, options, impl=args.impl, base_class=base_class, build_app=build_app)
    except http_config.HttpUnavailable as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


def _request_state_key(args: argparse.Namespace, workers: int) -> str | None:
    """The key sealing asking calls' requestState: the one given, else (workers must
    share one) a random key of this run; None: each app makes its own."""
    given = args.request_state_key or os.environ.get(STATE_KEY_ENV)
    return given or (secrets.token_hex(32) if workers > 1 else None)


def _auth_options(args: argparse.Namespace) -> dict[str, Any]:
    """The authorization settings: each flag, else its environment variable."""
    env = os.environ

    def pick(flag: str | None, name: str) -> str | None:
        return flag or env.get(name) or None

    issuer = pick(args.auth_issuer, "MCPGEN_AUTH_ISSUER")
    settings: dict[str, Any] = {
        "auth_issuer": issuer,
        "resource_url": pick(args.resource_url, "MCPGEN_RESOURCE_URL"),
        "auth_audience": pick(args.auth_audience, "MCPGEN_AUTH_AUDIENCE"),
        "auth_jwks_url": pick(args.auth_jwks_url, "MCPGEN_AUTH_JWKS_URL"),
        "auth_introspection_url": pick(
            args.auth_introspection_url, "MCPGEN_AUTH_INTROSPECTION_URL"
        ),
        "auth_client_id": pick(args.auth_client_id, "MCPGEN_AUTH_CLIENT_ID"),
        "auth_client_secret": env.get("MCPGEN_AUTH_CLIENT_SECRET") or None,
        "auth_filter_listing": not args.auth_list_all_tools,
    }
    if issuer is None:
        given = [k for k, v in settings.items() if v and k not in ("auth_filter_listing",)]
        if given or args.auth_list_all_tools:
            raise ValueError(
                "the authorization settings need --auth-issuer (or MCPGEN_AUTH_ISSUER)"
            )
    return settings


def _lease_from_environment() -> float:
    text = os.environ.get("MCPGEN_TASK_LEASE")
    if not text:
        return http_config.DEFAULT_LEASE_SECONDS
    try:
        return _positive_float(text)
    except (ValueError, argparse.ArgumentTypeError):
        raise ValueError(
            f"MCPGEN_TASK_LEASE={text!r} is not a positive number of seconds"
        ) from None


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Point fd 1 and ``sys.stdout`` at stderr for a while, then restore both."""
    sys.stdout.flush()
    saved_fd, saved_stream = os.dup(1), sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = saved_stream


def _rate_text(text: str) -> str:
    try:
        RateLimit.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _rate_limit(args: argparse.Namespace) -> RateLimit | None:
    return None if args.rate_limit is None else RateLimit.parse(args.rate_limit, args.rate_burst)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text}")
    return value
