"""Streamable HTTP: the same tool table served through the official ``mcp`` SDK.

``python -m <package> --transport http`` builds an SDK low-level ``Server`` whose
``tools/list`` and ``tools/call`` handlers are thin adapters over this runtime's
``App``: the published descriptors come from ``App`` (per revision, exactly as
the stdio server sends them) and every call runs the runtime's own path
(``ToolRuntime.check_arguments`` → the handler → ``CallOutcome``), so the error
mapping of DESIGN §3 holds on both transports. The SDK contributes the HTTP
machinery only: Streamable HTTP in *stateless* mode (no ``Mcp-Session-Id``, a
fresh connection per POST, both the handshake revisions and 2026-07-28), so any
number of worker processes behind a load balancer serve one contract.

The SDK is an optional extra (``pip install 'mcpgen[http]'``). This module
imports only the standard library at import time; the SDK, anyio and uvicorn
are imported when HTTP is actually served, and a missing SDK is reported as
``HttpUnavailable`` with the install command.

Calls: async handlers run on the server's event loop; sync handlers run on a
daemon thread each (at most ``MAX_SYNC_THREADS`` at once), so a slow one never
stalls other requests and a hung one never keeps the process alive at
shutdown. A tool ``timeout`` bounds the call on either path.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ._errors import ToolError
from ._tools import App, CallOutcome, ToolRuntime, for_revision
from ._versions import LATEST_HANDSHAKE, MODERN_VERSIONS, TOOL_FIELDS

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp_types import CallToolRequestParams, PaginatedRequestParams
    from starlette.applications import Starlette

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PATH",
    "DEFAULT_PORT",
    "MAX_SYNC_THREADS",
    "HttpOptions",
    "HttpUnavailable",
    "build_asgi_app",
    "build_sdk_server",
    "serve_http",
    "worker_app",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_PATH = "/mcp"
# Largest request body accepted; the same default as a stdio frame.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
# Sync handlers running at once per process; further calls wait for a slot.
MAX_SYNC_THREADS = 64
# How long in-flight requests may still finish once shutdown begins.
SHUTDOWN_GRACE_SECONDS = 5

# The uvicorn factory for --workers > 1 reads its configuration from here.
WORKER_ENV = "MCPGEN_HTTP_WORKER"

INSTALL_HINT = (
    "the HTTP transport needs the official MCP SDK: pip install 'mcpgen[http]' "
    "(or: pip install 'mcp>=2.3,<3')"
)


class HttpUnavailable(RuntimeError):
    """HTTP cannot be served: the optional ``mcp`` SDK is missing, or it would
    publish this contract differently than the contract says."""


@dataclass(frozen=True)
class HttpOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    workers: int = 1
    json_response: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    log_level: str = "info"


def _require_sdk() -> None:
    try:
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("uvicorn")
    except ImportError as exc:
        raise HttpUnavailable(f"{INSTALL_HINT} ({exc})") from None


# -- the SDK server ----------------------------------------------------------------


def build_sdk_server(app: App) -> Server[Any]:
    """An SDK low-level ``Server`` serving ``app``'s tools through ``app``'s call path."""
    _require_sdk()
    from mcp.server.caching import CacheHint
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types import (
        INTERNAL_ERROR,
        INVALID_PARAMS,
        CallToolRequestParams,
        PaginatedRequestParams,
    )

    info = app.server_info
    # tools/list bodies per revision, parsed once from the payloads the stdio server sends
    listings: dict[str, list[dict[str, Any]]] = {
        version: json.loads(payload)["tools"] for version, payload in app.list_payloads.items()
    }
    _check_sdk_keeps_listings(listings)
    sync_slots = _SyncSlots(MAX_SYNC_THREADS)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams
    ) -> dict[str, Any]:
        if params.cursor is not None:
            # one page holds every tool, so no cursor this server issued can exist
            raise MCPError(code=INVALID_PARAMS, message="Invalid params: unknown cursor")
        version = ctx.protocol_version if ctx.protocol_version in TOOL_FIELDS else LATEST_HANDSHAKE
        # a fresh list each time: the SDK's serialiser must never alias the cache
        return _complete({"tools": list(listings[version])}, ctx.protocol_version)

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> dict[str, Any]:
        tool = app.tools.get(params.name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        outcome = await run_call(tool, params.arguments or {}, sync_slots)
        if outcome.result is None:
            raise MCPError(code=INTERNAL_ERROR, message=outcome.internal_error or "Internal error")
        return _complete(for_revision(outcome.result, ctx.protocol_version), ctx.protocol_version)

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
    return server


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


async def run_call(
    tool: ToolRuntime, arguments: Mapping[str, Any], sync_slots: _SyncSlots | None = None
) -> CallOutcome:
    """One ``tools/call`` through the runtime: validate, run (bounded by the tool's
    timeout), convert. Bad arguments and ``ToolError`` become ``isError`` results."""
    try:
        args = tool.check_arguments(arguments)
    except ToolError as exc:
        return CallOutcome({"content": list(exc.content), "isError": True})
    timeout = tool.binding.timeout
    if tool.binding.is_async:
        if timeout is None:
            return await tool.call_async(args)
        try:
            return await asyncio.wait_for(tool.call_async(args), timeout)
        except TimeoutError:
            return CallOutcome(tool.timed_out())
    slots = sync_slots or _SyncSlots(1)
    async with slots.semaphore:
        call = _in_daemon_thread(tool.call_sync, args)
        try:
            # shield: on timeout the thread cannot be stopped; it finishes on its
            # own and its result is dropped
            return await asyncio.wait_for(asyncio.shield(call), timeout)
        except TimeoutError:
            return CallOutcome(tool.timed_out())


class _SyncSlots:
    """A per-server bound on concurrently running sync handlers (created lazily:
    the semaphore belongs to the event loop that first uses it)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._semaphore: asyncio.Semaphore | None = None

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.size)
        return self._semaphore


def _in_daemon_thread(fn: Callable[[Any], CallOutcome], arg: Any) -> asyncio.Future[CallOutcome]:
    """Run ``fn(arg)`` on a new daemon thread; a future on the running loop.

    Not ``asyncio.to_thread``/anyio: their pools are joined at interpreter exit,
    so one hung handler would keep a stopped server from exiting."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[CallOutcome] = loop.create_future()

    def settle(value: CallOutcome | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            assert value is not None
            future.set_result(value)

    def work() -> None:
        try:
            value = fn(arg)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiter
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            try:
                loop.call_soon_threadsafe(settle, value, None)
            except RuntimeError:
                pass  # the loop closed while the handler ran: nobody is waiting

    threading.Thread(target=work, name="mcpgen-http-tool", daemon=True).start()
    return future


# -- ASGI and serving ----------------------------------------------------------------


def build_asgi_app(app: App, options: HttpOptions = HttpOptions()) -> Starlette:
    """The Starlette app serving ``app`` statelessly at ``options.path``."""
    server = build_sdk_server(app)
    return server.streamable_http_app(
        streamable_http_path=options.path,
        stateless_http=True,
        json_response=options.json_response,
        max_request_body_size=options.max_body_bytes,
        # DNS-rebinding protection (Host/Origin checks) when bound to loopback
        host=options.host,
    )


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
    from ._main import load_implementation

    raw = os.environ.get(WORKER_ENV)
    if not raw:
        raise RuntimeError(f"{WORKER_ENV} is not set: worker_app is started by serve_http")
    config = _WorkerConfig(**json.loads(raw))
    base_class = _resolve(config.base_class)
    build_app: Callable[[Any], App] = _resolve(config.build_app)
    impl = load_implementation(config.impl, base_class)
    return build_asgi_app(build_app(impl), HttpOptions(**config.options))


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
