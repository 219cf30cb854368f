"""HTTP at parity with stdio: the sans-I/O core answers what the SDK would answer differently.

An SDK ``Server.middleware`` that sees every request before the SDK does.
The SDK keeps the HTTP machinery (Streamable HTTP, header checks, SSE) and
plain ``tools/list`` and ``tools/call``; this layer hands to the runtime's own
``ServerConnection`` what must be decided exactly as over stdio:

- ``initialize``: per-revision ``serverInfo`` (no ``title`` at 2024-11-05 and
  2025-03-26) and the ``tasks`` capability at 2025-11-25;
- ``server/discover``: the ``io.modelcontextprotocol/tasks`` extension;
- ``tools/call``: whether the call runs as a task (2025-11-25 ``task`` param,
  2026-07-28 server-directed for a declaring client), or is refused (a
  ``required`` tool called plainly, a ``forbidden`` one with ``task``);
- ``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/cancel``,
  ``tasks/update``, against the ``TaskStore`` that every worker shares.

A task runs on the worker that accepted it, in the background on its event loop
(a sync handler on a daemon thread, as for plain calls). Its ``ctx`` progress and
logs have no stream to go to once the call has been answered with the task, so
they are dropped; a cancellation sets ``ctx.cancelled`` (and cancels an async
handler). At most ``max_concurrent_calls`` tasks run at once per worker; one more
is refused with ``SERVER_BUSY`` (-31000) before any task is created, as over stdio.

Isolation: each request's requestor is its identity (``http.identity``: an
authenticated ``scope["user"]``, or the ``identity_header`` of an authenticating
proxy), or None. A task is owned by the requestor that created it; the core
answers ``tasks/*`` of another's task as for an unknown one, and the store is
asked to wait on or cancel a task only once the core has found it visible.
``tasks/list`` and ``tasks.list`` exist only for an identified requestor.

A store that cannot be reached, or fails in any other way, fails only what needs
it (task calls, ``tasks/*``) with -32603 and a generic message; the detail (with
the store URL's secrets masked) goes to stderr. Plain calls never touch it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._errors import ToolError
from ..protocol.jsonrpc import INTERNAL_ERROR
from ..protocol.revisions import MODERN_VERSIONS
from ..server.context import Context
from ..server.core import SERVER_BUSY, SendFrame, ServerConnection
from ..server.tools import App, CallOutcome, ToolRuntime
from ..tasks.store import TaskStore, TaskStoreUnavailable, scrub
from ..tasks.table import Task, TaskLimitReached, TaskTable, decode_cursor
from .identity import requestor_identity

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

__all__ = ["RunHandler", "TaskLayer"]

RunHandler = Callable[
    [ToolRuntime, "tuple[Any, ...] | dict[str, Any]", Any, Context | None],
    Awaitable[CallOutcome],
]

SHUTDOWN_MESSAGE = "the worker running this task shut down before it finished"
# What a client is told when the task store fails (the detail goes to stderr).
STORE_FAILED_MESSAGE = "Internal error: the task store cannot be reached; retry later"
# How long a worker that shuts down spends recording that its running tasks failed (2 s).
SHUTDOWN_RECORD_SECONDS = 2.0
_TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"})


class TaskLayer:
    """The SDK middleware (see the module docstring). ``served``: whether this
    server serves tasks at all (False for several processes on an in-process
    store: a task could not be found again); then it publishes none."""

    def __init__(
        self,
        app: App,
        store: TaskStore,
        threads: Any,
        *,
        served: bool,
        max_running: int,
        run_handler: RunHandler,
        identity_header: str | None = None,
    ) -> None:
        # ``threads`` (http.server's pools of check and handler threads) and ``run_handler``
        # (how http.server runs one handler in them) come from the HTTP shell, which imports
        # this module: passed in, so that the two do not import each other
        self.run_handler = run_handler
        self.app = app
        self.store = store
        self.threads = threads
        self.served = served and bool(app.task_tools)
        self.max_running = max_running
        self.running = 0  # task slots taken (checked and taken with no await between)
        self.identity_header = identity_header
        self._logger = str(app.server_info.get("name", ""))
        self._tasks: set[asyncio.Task[None]] = set()

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if ctx.request_id is None:
            return await call_next(ctx)  # a notification (the SDK runs its middleware for those too)
        if method == "initialize":
            return self._initialize(ctx)
        if method == "server/discover":
            found = self._answer(self._core(ctx), ctx, "server/discover", ctx.params or {})
            if not self.served:
                found.get("capabilities", {}).pop("extensions", None)
            return found
        if not self.served:
            return await call_next(ctx)
        if method in _TASK_METHODS:
            return await self._task_method(ctx, method)
        if method == "tools/call":
            return await self._tools_call(ctx, call_next)
        return await call_next(ctx)

    # -- the core as an oracle ------------------------------------------------

    def _core(self, ctx: ServerRequestContext[Any, Any], table: TaskTable | None = None) -> ServerConnection:
        """A core connection in the state this stateless request implies."""
        scope = getattr(ctx.request, "scope", None)
        requestor = requestor_identity(scope if isinstance(scope, Mapping) else {}, self.identity_header)
        # a table of the tasks this request reads, never one that creates tasks
        conn = ServerConnection(self.app, tasks=table or TaskTable(max_tasks=None),
                                requestor=requestor, tasks_listed=requestor is not None)
        if ctx.method != "initialize":
            if ctx.protocol_version in MODERN_VERSIONS:
                conn.era = "modern"
            else:
                conn.era = "legacy"
                conn.version = ctx.protocol_version
            meta = (ctx.params or {}).get("_meta")
            conn._request_meta = meta if isinstance(meta, dict) else {}
        return conn

    def _answer(
        self, conn: ServerConnection, ctx: ServerRequestContext[Any, Any], method: str,
        params: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Feed the request to ``conn``; its answer as a result (or raised as an error)."""
        request = {"jsonrpc": "2.0", "id": ctx.request_id, "method": method, "params": dict(params)}
        for action in conn.receive(json.dumps(request)):
            if isinstance(action, SendFrame):
                frame = json.loads(action.data)
                if frame.get("id") == ctx.request_id and "method" not in frame:
                    return _unwrap(frame)
        raise _error(INTERNAL_ERROR, "Internal error: no answer")

    def _initialize(self, ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
        result = self._answer(self._core(ctx), ctx, "initialize", ctx.params or {})
        if not self.served:
            result.get("capabilities", {}).pop("tasks", None)
        return result

    # -- tools/call --------------------------------------------------------------

    async def _tools_call(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params: Mapping[str, Any] = ctx.params or {}
        name = params.get("name")
        tool = self.app.tools.get(name) if isinstance(name, str) else None
        if tool is None or not isinstance(params.get("arguments", {}) or {}, dict):
            return await call_next(ctx)  # the SDK path answers these as it always has
        conn = self._core(ctx)
        as_task, refusal = conn._task_mode(ctx.request_id, tool, params)
        if refusal is not None:
            return _unwrap(json.loads(refusal.data))
        if not as_task:
            return await call_next(ctx)
        return await self._start_task(ctx, conn, tool, params)

    async def _start_task(
        self, ctx: ServerRequestContext[Any, Any], conn: ServerConnection, tool: ToolRuntime,
        params: Mapping[str, Any],
    ) -> dict[str, Any]:
        if self.running >= self.max_running:
            raise _error(
                SERVER_BUSY, f"Server busy: {self.max_running} tasks are already running on this "
                "worker (its limit); retry when one has finished", {"limit": self.max_running})
        self.running += 1  # taken with the check: concurrent calls cannot both pass it
        launched = False
        try:
            arguments = params.get("arguments") or {}
            try:
                args = await self.threads.checks.run(lambda: tool.check_arguments(arguments))
            except ToolError as exc:
                frame = conn._result(ctx.request_id, {"content": exc.content, "isError": True})
                return _unwrap(json.loads(frame.data))
            task = await self._create(ctx, conn, tool, params)
            context = None
            if tool.wants_context:
                context = Context(request_id=ctx.request_id, logger=self._logger, task_id=task.task_id)
            runner = asyncio.get_running_loop().create_task(self._run(task, tool, args, context))
            launched = True  # the runner gives the slot back when the handler ends
            self._tasks.add(runner)
            runner.add_done_callback(self._tasks.discard)
            if task.era == "modern":
                return {"resultType": "task", **task.wire(), "_meta": dict(conn._meta)}
            return {"task": task.wire()}
        finally:
            if not launched:
                self.running -= 1

    async def _create(
        self, ctx: ServerRequestContext[Any, Any], conn: ServerConnection, tool: ToolRuntime,
        params: Mapping[str, Any],
    ) -> Task:
        """A new task in the store, owned by this request's requestor."""
        task_params = params.get("task")
        ttl = task_params.get("ttl") if isinstance(task_params, dict) else None
        try:
            task: Task = await self._store(self.store.create(
                tool.name, conn.era or "legacy", ttl, conn.requestor))
        except TaskLimitReached as reached:
            raise _unwrap_error(conn.task_limit_error(ctx.request_id, reached)) from None
        return task

    async def _store(self, call: Awaitable[Any]) -> Any:
        """Await a store call; its failure becomes -32603 with a generic message
        (``TaskLimitReached`` passes: it is the caller's to answer)."""
        try:
            return await call
        except TaskLimitReached:
            raise
        except TaskStoreUnavailable as exc:
            print(f"mcpgen: {exc}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a store bug or a corrupt record: log it, tell no secret
            import traceback

            print(scrub(f"mcpgen: the task store failed:\n{traceback.format_exc()}", self.store.url),
                  file=sys.stderr, flush=True)
        raise _error(INTERNAL_ERROR, STORE_FAILED_MESSAGE)

    async def _run(
        self, task: Task, tool: ToolRuntime, args: tuple[Any, ...] | dict[str, Any],
        context: Context | None,
    ) -> None:
        current = asyncio.current_task()
        cancelled = False

        def stop() -> None:
            nonlocal cancelled
            cancelled = True
            if context is not None:
                context.cancel()
            if current is not None and tool.binding.is_async:
                current.cancel()

        self.store.track(task.task_id, stop)
        try:
            try:
                outcome = await asyncio.wait_for(
                    self.run_handler(tool, args, self.threads, context), tool.binding.timeout)
            except TimeoutError:
                if context is not None:
                    context.cancel()
                outcome = CallOutcome(tool.timed_out())
            except asyncio.CancelledError:
                if not cancelled:
                    # this process is shutting down and the handler dies with it: say
                    # so now rather than when the lease lapses
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await asyncio.wait_for(self.store.finish(
                            task.task_id, result=None,
                            error={"code": INTERNAL_ERROR, "message": SHUTDOWN_MESSAGE}),
                            SHUTDOWN_RECORD_SECONDS)
                    raise
                return
            if cancelled or outcome.cancelled:
                return
            error = None
            if outcome.result is None:
                error = {"code": INTERNAL_ERROR, "message": outcome.internal_error or "Internal error"}
            await self._record(task.task_id, outcome.result, error)
        finally:
            self.store.untrack(task.task_id)
            self.running -= 1

    async def _record(
        self, task_id: str, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> None:
        """Store the outcome, retrying a store that is briefly away (then the
        task expires with its TTL, never stays ``working`` past it)."""
        for attempt in range(5):
            try:
                await self.store.finish(task_id, result=result, error=error)
                return
            except TaskStoreUnavailable as exc:
                print(f"mcpgen: task {task_id}: cannot record its outcome: {exc}",
                      file=sys.stderr, flush=True)
                await asyncio.sleep(0.2 * 2**attempt)

    # -- tasks/* --------------------------------------------------------------------

    async def _task_method(self, ctx: ServerRequestContext[Any, Any], method: str) -> dict[str, Any]:
        params: Mapping[str, Any] = ctx.params or {}
        conn = self._core(ctx)
        if not conn.serves(method):  # e.g. tasks/result at 2026-07-28: the core's -32601
            return self._answer(conn, ctx, method, params)
        refused = conn._task_methods_allowed(ctx.request_id, method)
        if refused is not None:
            return _unwrap(json.loads(refused.data))
        if method == "tasks/list":
            return await self._tasks_list(ctx, conn, params.get("cursor"))
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            return self._answer(conn, ctx, method, params)  # the core's -32602
        task: Task | None = await self._store(self.store.get(task_id))
        if task is not None and conn.may_see(task):
            # only now is the store asked to wait or to cancel: another requestor's
            # task is neither waited on nor cancelled, and answers as unknown
            if method == "tasks/cancel":
                task, _ = await self._store(self.store.cancel(task_id))
            elif method == "tasks/result":
                task = await self._store(self.store.wait(task_id))
        table = TaskTable(max_tasks=None)
        if task is not None:
            # the core shapes the answer from the task as the store had it (for
            # tasks/cancel: before the cancellation, which the core then applies)
            table.add(task)
        return self._answer(self._core(ctx, table), ctx, method, params)

    async def _tasks_list(
        self, ctx: ServerRequestContext[Any, Any], conn: ServerConnection, cursor: object
    ) -> dict[str, Any]:
        """One page of the requestor's own tasks (the core has checked that there is one)."""
        if cursor is not None:
            try:
                decode_cursor(cursor)
            except ValueError:
                return _unwrap(json.loads(conn.unknown_cursor(ctx.request_id).data))
        tasks, following = await self._store(self.store.page(conn.era or "legacy", conn.requestor, cursor))
        return _unwrap(json.loads(conn.task_page(ctx.request_id, tasks, following).data))

    async def shutdown(self) -> None:
        """This process stops: its running tasks are recorded as failed (the handlers
        die with it), then the store is closed. Run by the app's lifespan: uvicorn
        ends the process on SIGTERM without cancelling leftover asyncio tasks."""
        runners = list(self._tasks)
        for runner in runners:
            runner.cancel()
        if runners:
            await asyncio.wait(runners, timeout=SHUTDOWN_RECORD_SECONDS + 1)
        await self.store.close()


def _unwrap(frame: Mapping[str, Any]) -> dict[str, Any]:
    if "error" in frame:
        error = frame["error"]
        raise _error(error["code"], error["message"], error.get("data"))
    return dict(frame["result"])


def _unwrap_error(send: SendFrame) -> Exception:
    """The error a core's error frame carries, as the SDK raises it."""
    error = json.loads(send.data)["error"]
    return _error(error["code"], error["message"], error.get("data"))


def _error(code: int, message: str, data: Any = None) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(code=code, message=message, data=data)

