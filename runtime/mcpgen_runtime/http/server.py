"""Streamable HTTP: the same tool table served through the official ``mcp`` SDK.

``python -m <package> --transport http`` builds an SDK low-level ``Server`` whose
``tools/list`` and ``tools/call`` handlers are thin adapters over this runtime's
``App``: the published descriptors come from ``App`` (per revision, exactly as
the stdio server sends them) and every call runs the runtime's own path
(``ToolRuntime.check_arguments`` → the handler → ``CallOutcome``), so the error
mapping of ``server.tools`` holds on both transports. The SDK contributes the HTTP
machinery only: Streamable HTTP in *stateless* mode (no ``Mcp-Session-Id``, a
fresh connection per POST, both the handshake revisions and 2026-07-28), so any
number of worker processes behind a load balancer serve one contract.

What the SDK would answer differently from stdio, ``http.tasks.TaskLayer`` (an
SDK middleware) hands to the runtime's sans-I/O core: ``initialize``,
``server/discover``, task-augmented calls and ``tasks/*``, the tasks kept in a
``tasks.store.TaskStore`` (this process's, or a Redis shared by every worker).

The SDK is an optional extra (``pip install 'mcpgen-runtime[http]'``). This module
imports only the standard library at import time; the SDK, anyio and uvicorn
are imported when HTTP is actually served, and a missing SDK is reported as
``HttpUnavailable`` with the install command.

Calls (``http.calls``): nothing that can be slow runs on the event loop. Argument checking and
the conversion of an async handler's result (an output schema check) run on
daemon threads (at most ``MAX_CHECK_THREADS`` at once), so one request with a
huge or pathological argument never delays pings or other requests; async
handlers themselves run on the loop; sync handlers run on a daemon thread each
(at most ``MAX_SYNC_THREADS`` at once, ``--max-concurrent-calls``). A thread
holds its slot until it really ends, also past a timeout or a disconnect, so
the number of threads stays bounded. A tool ``timeout`` bounds the call on
either path, the wait for a slot included. Daemon threads, not a pool that is
joined at exit: a hung handler never keeps a stopped server alive.

Handlers that declare ``ctx`` get a ``Context`` as over stdio. Its progress and
log notifications go out through the SDK on the call's own response stream
(SSE), in the order the handler sent them and all before the result; with
``--json-response`` the SDK has no room for them and drops them. Progress
follows the request's ``_meta.progressToken``. Log level: at 2026-07-28 the
request's ``io.modelcontextprotocol/logLevel`` ``_meta`` key (absent: no logs),
as over stdio. At the handshake revisions a stateless server has no session to
remember a ``logging/setLevel`` in (each POST is its own connection, possibly
on another worker), so ``logging/setLevel`` is accepted (it is what announces
the ``logging`` capability) but cannot filter later calls: every level is sent,
as the SDK does at those revisions, unless the call itself carries the
``_meta`` log-level key. Cancellation (the client closing the response stream,
or a ``notifications/cancelled`` the SDK can match) cancels an async handler and
sets ``ctx.cancelled`` for a sync one, as does a timeout.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.revisions import LATEST_HANDSHAKE, MODERN_VERSIONS, TOOL_FIELDS
from ..server.tools import App, for_revision
from ..tasks.factory import open_task_store
from ..tasks.store import TaskStore
from .calls import _call_with_context, _run_handler, _Threads, _ThreadSlots, run_call

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp_types import CallToolRequestParams, PaginatedRequestParams, SetLevelRequestParams
    from starlette.applications import Starlette

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
    "HttpOptions",
    "HttpUnavailable",
    "build_asgi_app",
    "build_sdk_server",
    "serve_http",
    "worker_app",
]

from .config import (  # re-exported: the names callers know from here
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
    HttpOptions,
    HttpUnavailable,
)


def _require_sdk() -> None:
    try:
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("uvicorn")
    except ImportError as exc:
        raise HttpUnavailable(f"{INSTALL_HINT} ({exc})") from None


# -- the SDK server ----------------------------------------------------------------


def build_sdk_server(
    app: App,
    *,
    max_sync_threads: int = MAX_SYNC_THREADS,
    task_store: TaskStore | None = None,
    tasks_served: bool = True,
    identity_header: str | None = None,
) -> Server[Any]:
    """An SDK low-level ``Server`` serving ``app``'s tools through ``app``'s call path;
    ``initialize``, ``server/discover``, task calls and ``tasks/*`` are answered by the
    runtime's core (``http.tasks.TaskLayer``) against ``task_store`` (default: in
    this process). ``tasks_served=False``: no tasks are published or run.
    ``identity_header``: the header that names the requestor (``http.identity``)."""
    _require_sdk()
    from mcp.server.caching import CacheHint
    from mcp.server.lowlevel import Server
    from mcp_types import CallToolRequestParams, PaginatedRequestParams, SetLevelRequestParams

    info = app.server_info
    threads = _Threads(checks=_ThreadSlots(MAX_CHECK_THREADS), handlers=_ThreadSlots(max_sync_threads))
    list_tools, call_tool = _tool_handlers(app, _published_listings(app, tasks_served), threads)

    def input_schema(name: str) -> Mapping[str, Any] | None:
        tool = app.tools.get(name)
        return None if tool is None else tool.descriptor["inputSchema"]

    server: Server[Any] = Server(
        str(info.get("name", "")),
        version=str(info.get("version", "")),
        title=info.get("title"),
        description=info.get("description"),
        website_url=info.get("websiteUrl"),
        instructions=app.instructions,
        get_tool_input_schema=input_schema,
        # 2026-07-28 list results need ttlMs/cacheScope: the SDK's defaults, stated
        cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")},
    )
    # add_request_handler takes plain-dict results, so the descriptors go out as
    # published rather than rebuilt through the SDK's Tool model.
    server.add_request_handler("tools/list", PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", CallToolRequestParams, call_tool)
    # Handshake revisions only (the SDK refuses the method at 2026-07-28). Registering
    # it announces the `logging` capability, as the stdio server does; stateless, the
    # level cannot outlive this POST (see the module docstring).
    server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    from .tasks import TaskLayer

    server.middleware.append(TaskLayer(
        app, task_store if task_store is not None else open_task_store("memory"), threads,
        served=tasks_served, max_running=max_sync_threads, run_handler=_run_handler,
        identity_header=identity_header,
    ))
    return server


def _published_listings(app: App, tasks_served: bool) -> dict[str, list[dict[str, Any]]]:
    """``tools/list`` bodies per revision, parsed once from the payloads the stdio
    server sends (checked to survive the SDK unchanged)."""
    listings: dict[str, list[dict[str, Any]]] = {
        version: json.loads(payload)["tools"] for version, payload in app.list_payloads.items()
    }
    if not tasks_served:  # `execution` promises tasks: published only when they are served
        listings = {v: [{k: x for k, x in t.items() if k != "execution"} for t in tools]
                    for v, tools in listings.items()}
    _check_sdk_keeps_listings(listings)
    return listings


def _tool_handlers(
    app: App, listings: Mapping[str, list[dict[str, Any]]], threads: _Threads
) -> tuple[
    Callable[[ServerRequestContext[Any], PaginatedRequestParams], Awaitable[dict[str, Any]]],
    Callable[[ServerRequestContext[Any], CallToolRequestParams], Awaitable[dict[str, Any]]],
]:
    """The SDK handlers of ``tools/list`` and ``tools/call``: adapters over ``app``."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

    logger_name = str(app.server_info.get("name", ""))

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams
    ) -> dict[str, Any]:
        if params.cursor is not None:
            # one page holds every tool, so no cursor this server issued can exist
            raise MCPError(code=INVALID_PARAMS, message="Invalid params: unknown cursor")
        version = ctx.protocol_version if ctx.protocol_version in TOOL_FIELDS else LATEST_HANDSHAKE
        # a fresh list each time: the SDK's serialiser must never alias the cache
        return _complete({"tools": list(listings[version])}, ctx.protocol_version)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> dict[str, Any]:
        tool = app.tools.get(params.name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        arguments = params.arguments or {}
        if tool.wants_context:
            outcome = await _call_with_context(tool, arguments, threads, ctx, logger_name)
        else:
            outcome = await run_call(tool, arguments, threads)
        if outcome.result is None:
            raise MCPError(code=INTERNAL_ERROR, message=outcome.internal_error or "Internal error")
        return _complete(for_revision(outcome.result, ctx.protocol_version), ctx.protocol_version)

    return list_tools, call_tool


async def set_level(
    ctx: ServerRequestContext[Any], params: SetLevelRequestParams
) -> dict[str, Any]:
    """``logging/setLevel``: the SDK has validated the level; there is nowhere to keep it."""
    return {}


def _check_sdk_keeps_listings(listings: Mapping[str, list[dict[str, Any]]]) -> None:
    """Refuse to serve a contract whose descriptors the SDK would change.

    The SDK re-validates every ``tools/list`` result against its model of the
    negotiated revision and sends the re-serialised form. For a contract's
    descriptors that is the same JSON (keys may be reordered), except in corner
    cases such as a ``null``-valued keyword at the root of a schema, which its
    serialiser drops. Then HTTP would publish another contract than stdio (and
    than ``contract.FINGERPRINTS``): better a clear error at start-up.
    """
    from mcp_types import methods
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    for version, tools in listings.items():
        if version not in (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS):
            continue  # this SDK never serves that revision
        result: dict[str, Any] = _complete({"tools": tools}, version)
        if version in MODERN_VERSIONS:
            result.update(ttlMs=0, cacheScope="private")
        try:
            sent = methods.serialize_server_result("tools/list", version, result)["tools"]
        except (KeyError, ValueError) as exc:  # includes pydantic's ValidationError
            raise HttpUnavailable(
                f"the mcp SDK cannot publish this contract's tools at {version}: {exc}"
            ) from None
        for ours, theirs in zip(tools, sent, strict=True):
            if ours != theirs:
                raise HttpUnavailable(
                    f"tool {ours.get('name')!r}: the mcp SDK would publish a different descriptor "
                    f"at {version} than the contract's; ours: {json.dumps(ours, sort_keys=True)}; "
                    f"the SDK's: {json.dumps(theirs, sort_keys=True)}"
                )


def _complete(result: dict[str, Any], version: str) -> dict[str, Any]:
    """2026-07-28 results carry ``resultType`` (the SDK adds it only to typed results)."""
    if version in MODERN_VERSIONS:
        return {**result, "resultType": "complete"}
    return result


# -- ASGI and serving ----------------------------------------------------------------


_DEFAULT_OPTIONS = HttpOptions()


def build_asgi_app(app: App, options: HttpOptions = _DEFAULT_OPTIONS) -> Starlette:
    """The Starlette app serving ``app`` statelessly at ``options.path``."""
    name = str(app.server_info.get("name", "")) or "default"
    store = open_task_store(
        options.task_store, key_prefix=options.task_key_prefix or f"mcpgen:{name}:",
        lease_seconds=options.task_lease, max_tasks_per_worker=options.max_tasks_per_worker,
        max_tasks=options.max_tasks,
    )
    # an in-process store serves tasks only when this one process answers everything
    served = store.shared or options.workers <= 1
    server = build_sdk_server(
        app, max_sync_threads=options.max_sync_threads, task_store=store, tasks_served=served,
        identity_header=options.identity_header,
    )
    from .guard import GetStreamRefusal, rebinding_protection

    asgi = server.streamable_http_app(
        streamable_http_path=options.path,
        stateless_http=True,
        json_response=options.json_response,
        max_request_body_size=options.max_body_bytes,
        # DNS-rebinding protection (Host/Origin checks) on any loopback address; the
        # SDK alone would check only 127.0.0.1, localhost and ::1
        transport_security=rebinding_protection(options.host, options.port),
        host=options.host,
    )
    _shut_down_tasks_with(asgi, server)
    asgi.add_middleware(GetStreamRefusal, path=options.path)
    return asgi


def _shut_down_tasks_with(asgi: Starlette, server: Server[Any]) -> None:
    """Wrap the app's lifespan so that its shutdown first fails this process's
    running tasks (``TaskLayer.shutdown``), while the store can still record it."""
    from .tasks import TaskLayer

    layers = [m for m in server.middleware if isinstance(m, TaskLayer)]
    inner = asgi.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with inner(app) as state:
            try:
                yield state
            finally:
                for layer in layers:
                    await layer.shutdown()

    asgi.router.lifespan_context = lifespan


def _guard_connections(options: HttpOptions) -> str:
    """Set this process's connection limits; the uvicorn ``http`` protocol that applies them."""
    from .guard import ConnectionLimits, GuardedH11Protocol

    GuardedH11Protocol.limits = ConnectionLimits(
        header_timeout=options.header_timeout,
        body_timeout=options.body_timeout,
        max_connections=options.max_connections,
    )
    return f"{GuardedH11Protocol.__module__}:{GuardedH11Protocol.__qualname__}"


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
) -> None:
    """Serve ``app`` over Streamable HTTP until interrupted.

    With ``options.workers > 1`` uvicorn starts that many processes sharing one
    socket; each rebuilds the app from ``impl``, ``base_class`` and ``build_app``
    (which must therefore be importable by name).
    """
    _require_sdk()
    import uvicorn

    common: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "log_level": options.log_level,
        "access_log": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_SECONDS,
        # by name, so that --workers processes (spawned, not forked) import it too
        "http": _guard_connections(options),
    }
    asgi_app = build_asgi_app(app, options)  # with workers: fail here, not in every worker
    if options.workers <= 1:
        uvicorn.run(asgi_app, **common)
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
    uvicorn.run(f"{__name__}:worker_app", factory=True, workers=options.workers, **common)


def worker_app() -> Starlette:
    """uvicorn factory run in each worker process (configuration from ``WORKER_ENV``)."""
    from .._impl import load_implementation

    raw = os.environ.get(WORKER_ENV)
    if not raw:
        raise RuntimeError(f"{WORKER_ENV} is not set: worker_app is started by serve_http")
    config = _WorkerConfig(**json.loads(raw))
    base_class = _resolve(config.base_class)
    build_app: Callable[[Any], App] = _resolve(config.build_app)
    impl = load_implementation(config.impl, base_class)
    options = HttpOptions(**config.options)
    _guard_connections(options)
    return build_asgi_app(build_app(impl), options)


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
