"""Streamable HTTP: the same tool table served by mcpgen's own ASGI application.

``python -m <package> --transport http`` serves ``app.HttpApp`` with
uvicorn: stateless Streamable HTTP (any worker answers any request; the one
``Mcp-Session-Id`` handed out, to a client that declared elicitation, is a sealed
token of that declaration, not server state: ``server.asking``), both the handshake revisions and 2026-07-28, over the same sans-I/O
server core as stdio (``server.core``), so the tool list, every answer and the
error mapping of ``server.tools`` are the stdio server's. Tasks live in a
``tasks.store.TaskStore`` (this process's, or a Redis shared by every worker).

The modules: ``app`` (the HTTP side of a request: methods, headers, body,
status codes), ``exchange`` (one JSON-RPC request through the core, its
answer as JSON or SSE), ``calls`` (which calls run inline and which on the
bounded pools), ``tasks`` (task calls and ``tasks/*``), ``guard``
(connection deadlines and cap, Host/Origin rules) and ``config`` (the
options, standard library only).

uvicorn is an optional extra (``pip install 'mcpgen-runtime[http]'``). This module
imports only the standard library at import time; uvicorn is imported when HTTP
is actually served, and a missing one is reported as ``HttpUnavailable`` with
the install command.

SIGTERM drains (``drain``: readiness false, new requests 503, in-flight work finishes
within ``--drain-timeout``), in each worker under ``--workers``; the process then
exits with 0.

``--workers N``: N uvicorn processes; each binds its own listening socket with
``SO_REUSEPORT`` where the platform has it, so the kernel spreads new
connections evenly over the workers (one shared socket would let the busiest
worker take most keep-alive connections). Elsewhere they share one socket.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import logging
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..auth.tokens import TokenVerifier
from ..server.tools import App
from ..tasks.factory import open_task_store
from ..telemetry.logs import configure_logging
from ..telemetry.server import ServerTelemetry
from ..telemetry.setup import configure_from_environment

if TYPE_CHECKING:
    from ..tasks.store import TaskStore
    from .app import HttpApp
    from .oauth import OAuthGate
    from .ratelimit import RateGate

__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_PATH",
    "DEFAULT_PORT",
    "HEADER_TIMEOUT_SECONDS",
    "MAX_CHECK_THREADS",
    "MAX_CONNECTIONS",
    "MAX_SYNC_THREADS",
    "WRITE_TIMEOUT_SECONDS",
    "HttpOptions",
    "HttpUnavailable",
    "bearer_verifier",
    "build_asgi_app",
    "serve_http",
    "worker_app",
]

from .config import (  # re-exported: the names callers know from here
    AUTH_INSTALL_HINT,
    BODY_TIMEOUT_SECONDS,
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_PATH,
    DEFAULT_PORT,
    HEADER_TIMEOUT_SECONDS,
    INSTALL_HINT,
    MAX_CHECK_THREADS,
    MAX_CONNECTIONS,
    MAX_SYNC_THREADS,
    SHUTDOWN_GRACE_SECONDS,
    WORKER_ENV,
    WRITE_TIMEOUT_SECONDS,
    HttpOptions,
    HttpUnavailable,
)


def _require_uvicorn() -> None:
    try:
        importlib.import_module("uvicorn")
    except ImportError as exc:
        raise HttpUnavailable(f"{INSTALL_HINT} ({exc})") from None


_DEFAULT_OPTIONS = HttpOptions()


def build_asgi_app(
    app: App,
    options: HttpOptions = _DEFAULT_OPTIONS,
    *,
    token_verifier: TokenVerifier | None = None,
    drain_on_sigterm: bool = False,
) -> HttpApp:
    """The ASGI application serving ``app`` statelessly at ``options.path``; with
    ``drain_on_sigterm`` (``serve_http``), SIGTERM drains it (``http.drain``).

    With ``options.auth_issuer`` set, an OAuth 2.1 resource server (``http.oauth``):
    tokens are checked by ``token_verifier`` when given (any object of the
    ``auth.tokens.TokenVerifier`` protocol), else by the JWT/introspection verifiers
    ``options`` describe."""
    from .app import HttpApp
    from .calls import Calls
    from .exchange import Exchange
    from .guard import RebindingRules
    from .task_layer import TaskLayer

    store = _task_store(app, options)
    calls = Calls.create(MAX_CHECK_THREADS, options.max_sync_threads)
    telemetry = ServerTelemetry.start("tcp", options.capture_content or None)
    # an in-process store serves tasks only when this one process answers everything
    served = bool(app.task_tools) and (store.shared or options.workers <= 1)
    tasks = None
    if served:
        tasks = TaskLayer(
            app,
            store,
            calls,
            max_running=options.max_sync_threads,
            identity_header=options.identity_header,
            telemetry=telemetry,
        )
    served_app = app if served else without_tasks(app)
    gate = _oauth_gate(served_app, options, token_verifier)
    exchange = Exchange(
        served_app,
        calls,
        tasks,
        json_only=options.json_response,
        gate=gate,
        telemetry=telemetry,
        identity_header=options.identity_header,
        store=store,
    )
    return HttpApp(
        exchange,
        path=options.path,
        max_body_bytes=options.max_body_bytes,
        rebinding=RebindingRules(options.allowed_hosts, options.allowed_origins),
        tasks=tasks,
        store=store,
        health_path=options.health_path,
        ready_path=options.ready_path,
        rate=_rate_gate(options, store),
        drain_timeout=options.drain_timeout if drain_on_sigterm else None,
        oauth=gate,
    )


def _task_store(app: App, options: HttpOptions) -> TaskStore:
    """The task store of ``options`` (in process, or Redis), keys under the server's
    name; first, ``app`` takes the key that seals requestState (shared by the workers
    that share the store)."""
    if options.request_state_key is not None:
        app.use_state_key(options.request_state_key)
    name = str(app.server_info.get("name", "")) or "default"
    return open_task_store(
        options.task_store,
        key_prefix=options.task_key_prefix or f"mcpgen:{name}:",
        lease_seconds=options.task_lease,
        max_tasks_per_worker=options.max_tasks_per_worker,
        max_tasks=options.max_tasks,
    )


def _rate_gate(options: HttpOptions, store: TaskStore) -> RateGate | None:
    """The gate of ``--rate-limit`` (None without one), counting in ``store``."""
    if options.rate_limit is None:
        return None
    from ..ratelimit.bucket import RateLimit
    from .ratelimit import RateGate

    limit = RateLimit.parse(options.rate_limit, options.rate_burst)
    return RateGate(limit, store, options.identity_header)


def _oauth_gate(
    app: App, options: HttpOptions, token_verifier: TokenVerifier | None
) -> OAuthGate | None:
    """The authorization of ``options`` (None when it has no ``auth_issuer``)."""
    if options.auth_issuer is None:
        if token_verifier is not None:
            raise ValueError("a token verifier needs auth_issuer (the metadata names it)")
        return None
    from .oauth import OAuthGate

    resource = options.resource_url
    if not resource:
        raise ValueError("--auth-issuer needs --resource-url (this server's canonical URL)")
    verifier = token_verifier or bearer_verifier(
        options, audience=options.auth_audience or resource
    )
    return OAuthGate(
        app,
        verifier,
        resource=resource,
        authorization_servers=(options.auth_issuer,),
        endpoint_path=options.path,
        filter_listing=options.auth_filter_listing,
    )


def bearer_verifier(options: HttpOptions, *, audience: str) -> TokenVerifier:
    """The JWT (and, with an introspection URL, introspection) verifier of ``options``."""
    try:  # PyJWT (the auth extra) is loaded only here, when a server checks tokens
        from ..auth.jwt import JwtRules
        from .verifiers import BearerVerifier, IntrospectionVerifier, JwtVerifier
    except ImportError as exc:
        raise HttpUnavailable(f"{AUTH_INSTALL_HINT} ({exc})") from None
    issuer = options.auth_issuer
    assert issuer is not None
    introspection = None
    if options.auth_introspection_url:
        introspection = IntrospectionVerifier(
            options.auth_introspection_url,
            audience=audience,
            issuer=issuer,
            client_id=options.auth_client_id,
            client_secret=options.auth_client_secret,
        )
    jwt = JwtVerifier(JwtRules(issuer, audience), jwks_url=options.auth_jwks_url)
    return BearerVerifier(jwt, introspection)


def without_tasks(app: App) -> App:
    """``app`` as a server that serves no tasks publishes it: no ``execution`` in any
    descriptor, every tool ``forbidden`` (a ``required`` one runs as a plain call)."""
    import dataclasses

    tools = {
        name: dataclasses.replace(
            tool,
            binding=dataclasses.replace(tool.binding, task_support="forbidden"),
            descriptor={k: v for k, v in tool.descriptor.items() if k != "execution"},
        )
        for name, tool in app.tools.items()
    }
    return app.derived(tools)


def _guard_connections(options: HttpOptions) -> type:
    """Set this process's connection limits; the uvicorn ``http`` protocol that applies
    them: httptools (C) when installed, unless ``--http-parser h11``; else h11."""
    from .guard import ConnectionLimits, set_limits

    set_limits(
        ConnectionLimits(
            header_timeout=options.header_timeout,
            body_timeout=options.body_timeout,
            write_timeout=options.write_timeout,
            max_connections=options.max_connections,
        )
    )
    protocol: type
    if options.http_parser != "h11" and importlib.util.find_spec("httptools") is not None:
        from .guard_fast import GuardedHttpToolsProtocol as protocol
    elif options.http_parser == "httptools":
        raise HttpUnavailable(
            "--http-parser httptools: httptools is not installed "
            "(pip install 'mcpgen-runtime[http]' installs it where it builds)"
        )
    else:
        from .guard import GuardedH11Protocol as protocol
    return protocol


@dataclass(frozen=True)
class _WorkerConfig:
    """What a worker process needs to rebuild the app (JSON in ``WORKER_ENV``)."""

    base_class: str  # module:qualname
    build_app: str  # module:qualname
    impl: str  # module:Class
    options: dict[str, Any]


def serve_http(
    app: App,
    options: HttpOptions,
    *,
    impl: str | None = None,
    base_class: type | None = None,
    build_app: Callable[[Any], App] | None = None,
    token_verifier: TokenVerifier | None = None,
) -> None:
    """Serve ``app`` over Streamable HTTP until interrupted (``token_verifier``: see
    ``build_asgi_app``; one process only). With ``options.workers > 1`` uvicorn starts
    that many processes, each with a listening socket of its own in one ``SO_REUSEPORT``
    group on Linux (one shared socket elsewhere); each rebuilds the app from ``impl``,
    ``base_class`` and ``build_app`` (which must therefore be importable by name)."""
    _require_uvicorn()
    import uvicorn

    common = _uvicorn_options(options)
    _configure_logging(options)
    if token_verifier is not None and options.workers > 1:
        raise ValueError("a token verifier object serves one process: use --workers 1")
    # with workers: fail here, not in every worker
    asgi_app = build_asgi_app(
        app, options, token_verifier=token_verifier, drain_on_sigterm=options.workers <= 1
    )
    _say_how_to_allow_origins(options)
    if options.workers <= 1:
        _run_to_exit_zero(lambda: uvicorn.run(asgi_app, **common))
        return
    if impl is None or base_class is None or build_app is None:
        raise ValueError("--workers needs the implementation, base class and build_app by name")
    config = _WorkerConfig(
        base_class=_reference(base_class),
        build_app=_reference(build_app),
        impl=impl,
        options=asdict(options),
    )
    os.environ[WORKER_ENV] = json.dumps(asdict(config))
    if not _REUSE_PORT:
        uvicorn.run(f"{__name__}:worker_app", factory=True, workers=options.workers, **common)
        return
    from uvicorn.supervisors import Multiprocess

    server_config = uvicorn.Config(
        f"{__name__}:worker_app", factory=True, workers=options.workers, **common
    )
    reserved = _reserve_port(options.host, options.port)
    try:
        before_0_51: dict[str, Any] = {}  # uvicorn before 0.51 takes what each worker runs
        if "target" in inspect.signature(Multiprocess).parameters:
            before_0_51["target"] = uvicorn.Server(config=server_config).run
        Multiprocess(server_config, sockets=[reserved], **before_0_51).run()
    finally:
        reserved.close()


def _run_to_exit_zero(serve: Callable[[], None]) -> None:
    """Run ``serve`` with SIGTERM ending the process with status 0. uvicorn raises a
    signal it shut down for again once it has put back the handler it found (its
    ``capture_signals``): with the default handler there, the process would die of
    SIGTERM (status 143) after a clean drain. Here that second delivery, or a SIGTERM
    before uvicorn has taken the signal, is a ``SystemExit(0)``."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        serve()  # no signal is handled here (uvicorn's own handlers need the main thread)
        return

    def exit_zero(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    previous = signal.signal(signal.SIGTERM, exit_zero)
    try:
        serve()
    finally:
        signal.signal(signal.SIGTERM, previous)


def _say_how_to_allow_origins(options: HttpOptions) -> None:
    from .guard import origin_note

    note = origin_note(options.host, options.port, options.allowed_origins)
    if note is not None:
        logging.getLogger("uvicorn.error").warning("%s", note)


# Linux balances new connections over the listening sockets of one SO_REUSEPORT group
# (other systems either lack it or hand every connection to one socket).
_REUSE_PORT = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


class _PerWorkerSocket(socket.socket):
    """The parent's hold on the port: bound with ``SO_REUSEPORT``, never listening
    (so the kernel hands it no connection). Pickled into each worker process
    (uvicorn passes its sockets to spawned workers), it arrives as a listening
    socket of the worker's own on the same address: one accept queue per worker."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_listening_socket, (self.family, self.getsockname()))


def _reserve_port(host: str, port: int) -> _PerWorkerSocket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = _PerWorkerSocket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise HttpUnavailable(f"cannot listen on {host}:{port}: {exc}") from None
    logging.getLogger("uvicorn.error").info(
        "Uvicorn running on http://%s:%d (Press CTRL+C to quit)", host, sock.getsockname()[1]
    )
    sock.set_inheritable(True)
    return sock


def _listening_socket(family: int, address: tuple[Any, ...]) -> socket.socket:
    """In a worker: a socket of its own in the port's ``SO_REUSEPORT`` group."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    return sock


def worker_app() -> HttpApp:
    """uvicorn factory run in each worker process (configuration from ``WORKER_ENV``)."""
    from .._impl import load_implementation

    raw = os.environ.get(WORKER_ENV)
    if not raw:
        raise RuntimeError(f"{WORKER_ENV} is not set: worker_app is started by serve_http")
    config = _WorkerConfig(**json.loads(raw))
    base_class = _resolve(config.base_class)
    build_app: Callable[[Any], App] = _resolve(config.build_app)
    impl = load_implementation(config.impl, base_class)
    options = HttpOptions(**config.options)  # JSON: the allow-lists arrive as lists
    # a spawned process: its own logging and OpenTelemetry set-up, as the parent had
    _configure_logging(options)
    if options.otel_service is not None:
        configure_from_environment(options.otel_service)
    _guard_connections(options)
    return build_asgi_app(build_app(impl), options, drain_on_sigterm=True)


def _uvicorn_options(options: HttpOptions) -> dict[str, Any]:
    """What uvicorn is run with, in one process or in each worker."""
    common: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "log_level": options.log_level,
        "access_log": False,  # the request log is ours (telemetry.logs)
        "lifespan": "on",
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_SECONDS,
        # the class, not its import string (which uvicorn takes only since 0.36): a
        # --workers process (spawned, not forked) unpickles it by reference, importing it
        "http": _guard_connections(options),
    }
    if options.log_format == "json":  # uvicorn's lines as JSON too: it installs no formatter
        common["log_config"] = None
    return common


def _configure_logging(options: HttpOptions) -> None:
    """The request log and diagnostics in ``options.log_format``; under ``json``,
    uvicorn's loggers too (uvicorn then installs no formatter of its own)."""
    configure_logging(options.log_format, ("uvicorn",) if options.log_format == "json" else ())


def _reference(obj: Any) -> str:
    ref = f"{obj.__module__}:{obj.__qualname__}"
    if _resolve(ref) is not obj:
        raise ValueError(f"{ref} cannot be imported by name, so --workers cannot use it")
    return ref


def _resolve(ref: str) -> Any:
    module_name, _, qualname = ref.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target
