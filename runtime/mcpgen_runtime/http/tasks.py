"""Tasks over stateless HTTP: the task calls and ``tasks/*`` of a request, against a
``TaskStore`` that every worker may share.

The HTTP shell (``exchange``) hands a request here, with the core
``ServerConnection`` in the state the request implies, when tasks are served and
the request is ``tasks/*`` or a ``tools/call`` that the core's rules
(``_task_mode``) run as a task. Everything shaped here is shaped by the core, as
over stdio: a task method's answer comes from a core connection whose task table
holds the task as the store has it; a refusal is the core's frame.

A task runs on the worker that accepted it, in the background on its event loop
(a sync handler on the handler pool, as for plain calls). Its ``ctx`` progress and
logs have no stream to go to once the call has been answered with the task, so
they are dropped; a cancellation sets ``ctx.cancelled`` (and cancels an async
handler). At most ``max_running`` tasks run at once per worker; one more is
refused with ``SERVER_BUSY`` (-31000) before any task is created, as over stdio.

Isolation: each request's requestor is its identity (``http.identity``: an
authenticated ``scope["user"]``, or the ``identity_header`` of an authenticating
proxy), or None. A task is owned by the requestor that created it; the core
answers ``tasks/*`` of another's task as for an unknown one, and the store is
asked to wait on or cancel a task only once the core has found it visible.
``tasks/list`` and ``tasks.list`` exist only for an identified requestor.

A store that cannot be reached, or fails in any other way, fails only what needs
it (task calls, ``tasks/*``) with -32603 and a generic message; the detail (with
the store URL's secrets masked) goes to stderr. Plain calls never touch it.

The seam for the transport: ``TaskRequest`` carries what this layer reads of a
request (its id, method, params and the ASGI ``scope``, whose headers and
``client`` an identity of the requestor can be taken from); the layer answers
with the frame to send. It imports nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import ToolError
from ..protocol.jsonrpc import INTERNAL_ERROR, error_response
from ..server.context import Context
from ..server.core import SERVER_BUSY, SendFrame, ServerConnection
from ..server.tools import App, ToolRuntime
from ..tasks.store import TaskStore, TaskStoreUnavailable, scrub
from ..tasks.table import Task, TaskLimitReached, TaskTable, decode_cursor
from .calls import Calls
from .identity import requestor_identity

__all__ = ["TASK_METHODS", "TaskLayer", "TaskRequest"]

SHUTDOWN_MESSAGE = "the worker running this task shut down before it finished"
# What a client is told when the task store fails (the detail goes to stderr).
STORE_FAILED_MESSAGE = "Internal error: the task store cannot be reached; retry later"
# How long a worker that shuts down spends recording that its running tasks failed (2 s).
SHUTDOWN_RECORD_SECONDS = 2.0
TASK_METHODS = frozenset(
    {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"}
)


@dataclass(frozen=True, slots=True)
class TaskRequest:
    """One JSON-RPC request as the task layer sees it."""

    request_id: str | int
    method: str
    params: Mapping[str, Any]
    scope: Mapping[str, Any]  # the ASGI scope of the HTTP request


class TaskLayer:
    """Task calls and ``tasks/*`` of one server process (see the module docstring).
    Built only when the server serves tasks (``app`` has task tools and the store is
    shared, or this is the only process)."""

    def __init__(
        self,
        app: App,
        store: TaskStore,
        calls: Calls,
        *,
        max_running: int,
        identity_header: str | None = None,
    ) -> None:
        self.app = app
        self.store = store
        self.calls = calls
        self.max_running = max_running
        self.running = 0  # task slots taken (checked and taken with no await between)
        self.identity_header = identity_header
        self._logger = str(app.server_info.get("name", ""))
        self._tasks: set[asyncio.Task[None]] = set()

    def task_call(
        self, conn: ServerConnection, request: TaskRequest
    ) -> tuple[ToolRuntime | None, bytes | None]:
        """For a ``tools/call``: the tool when it runs as a task, or the core's refusal
        frame; ``(None, None)``: a plain call (or one the core answers itself)."""
        params = request.params
        name = params.get("name")
        tool = self.app.tools.get(name) if isinstance(name, str) else None
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments if arguments is not None else {}, dict):
            return None, None
        as_task, refusal = conn._task_mode(request.request_id, tool, params)
        if refusal is not None:
            return None, refusal.data
        return (tool, None) if as_task else (None, None)

    def requestor(self, scope: Mapping[str, Any]) -> str | None:
        """Who sends the request of ``scope`` (``http.identity``), or None."""
        return requestor_identity(scope, self.identity_header)

    async def start(self, conn: ServerConnection, request: TaskRequest, tool: ToolRuntime) -> bytes:
        """Create the task in the store, owned by the requestor, and start it here;
        the answer naming it."""
        request_id = request.request_id
        if self.running >= self.max_running:
            return error_response(
                request_id,
                SERVER_BUSY,
                f"Server busy: {self.max_running} tasks are already running "
                "on this worker (its limit); retry when one has finished",
                {"limit": self.max_running},
            )
        self.running += 1  # taken with the check: concurrent calls cannot both pass it
        launched = False
        try:
            params = request.params
            try:
                args = await self.calls.check(tool, params.get("arguments") or {})
            except ToolError as exc:
                return conn._result(request_id, {"content": exc.content, "isError": True}).data
            task_params = params.get("task")
            ttl = task_params.get("ttl") if isinstance(task_params, dict) else None
            try:
                task: Task = await self._store(
                    self.store.create(tool.name, conn.era or "legacy", ttl, conn.requestor)
                )
            except TaskLimitReached as reached:
                return conn.task_limit_error(request_id, reached).data
            except _StoreFailed:
                return error_response(request_id, INTERNAL_ERROR, STORE_FAILED_MESSAGE)
            context = None
            if tool.wants_context:
                context = Context(request_id=request_id, logger=self._logger, task_id=task.task_id)
            runner = asyncio.get_running_loop().create_task(self._run(task, tool, args, context))
            launched = True  # the runner gives the slot back when the handler ends
            self._tasks.add(runner)
            runner.add_done_callback(self._tasks.discard)
        finally:
            if not launched:
                self.running -= 1
        if task.era == "modern":
            return conn._result(request_id, {"resultType": "task", **task.wire()}).data
        return conn._result(request_id, {"task": task.wire()}).data

    async def _store(self, call: Awaitable[Any]) -> Any:
        """Await a store call; its failure is logged (secrets masked) and raised as
        ``_StoreFailed`` (``TaskLimitReached`` passes: it is the caller's to answer)."""
        try:
            return await call
        except TaskLimitReached:
            raise
        except TaskStoreUnavailable as exc:
            print(f"mcpgen: {exc}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a store bug or a corrupt record: log it, tell no secret
            import traceback

            print(
                scrub(f"mcpgen: the task store failed:\n{traceback.format_exc()}", self.store.url),
                file=sys.stderr,
                flush=True,
            )
        raise _StoreFailed

    async def _run(
        self,
        task: Task,
        tool: ToolRuntime,
        args: tuple[Any, ...] | dict[str, Any],
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
                outcome = await self.calls.run_bounded(tool, args, context)
            except asyncio.CancelledError:
                if not cancelled:
                    # this process is shutting down and the handler dies with it: say
                    # so now rather than when the lease lapses
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await asyncio.wait_for(
                            self.store.finish(
                                task.task_id,
                                result=None,
                                error={"code": INTERNAL_ERROR, "message": SHUTDOWN_MESSAGE},
                            ),
                            SHUTDOWN_RECORD_SECONDS,
                        )
                    raise
                return
            if cancelled or outcome.cancelled:
                return
            error = None
            if outcome.result is None:
                error = {
                    "code": INTERNAL_ERROR,
                    "message": outcome.internal_error or "Internal error",
                }
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
                print(
                    f"mcpgen: task {task_id}: cannot record its outcome: {exc}",
                    file=sys.stderr,
                    flush=True,
                )
                await asyncio.sleep(0.2 * 2**attempt)

    # -- tasks/* --------------------------------------------------------------------

    async def task_method(self, conn: ServerConnection, request: TaskRequest) -> bytes:
        """``tasks/*``: the store's task, answered by the core as over stdio, visible
        only to its owner."""
        method, params, request_id = request.method, request.params, request.request_id
        if not conn.serves(method):  # e.g. tasks/result at 2026-07-28: the core's -32601
            return _answer(conn, TaskTable(max_tasks=None), request)
        refused = conn._task_methods_allowed(request_id, method)
        if refused is not None:
            return refused.data
        try:
            if method == "tasks/list":
                return await self._tasks_list(conn, request_id, params.get("cursor"))
            task_id = params.get("taskId")
            if not isinstance(task_id, str):
                return _answer(conn, TaskTable(max_tasks=None), request)  # the core's -32602
            task: Task | None = await self._store(self.store.get(task_id))
            if task is not None and conn.may_see(task):
                # only now is the store asked to wait or to cancel: another requestor's
                # task is neither waited on nor cancelled, and answers as unknown
                if method == "tasks/cancel":
                    task, _ = await self._store(self.store.cancel(task_id))
                elif method == "tasks/result":
                    task = await self._store(self.store.wait(task_id))
        except _StoreFailed:
            return error_response(request_id, INTERNAL_ERROR, STORE_FAILED_MESSAGE)
        table = TaskTable(max_tasks=None)
        if task is not None:
            # the core shapes the answer from the task as the store had it (for
            # tasks/cancel: before the cancellation, which the core then applies)
            table.add(task)
        return _answer(conn, table, request)

    async def _tasks_list(self, conn: ServerConnection, request_id: Any, cursor: object) -> bytes:
        """One page of the requestor's own tasks (the core has checked that there is one)."""
        if cursor is not None:
            try:
                decode_cursor(cursor)
            except ValueError:
                return conn.unknown_cursor(request_id).data
        tasks, following = await self._store(
            self.store.page(conn.era or "legacy", conn.requestor, cursor)
        )
        return conn.task_page(request_id, tasks, following).data

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


class _StoreFailed(Exception):
    """The task store failed (already logged): the client gets -32603, generic."""


def _answer(conn: ServerConnection, table: TaskTable, request: TaskRequest) -> bytes:
    """The core's answer to ``request`` with ``table`` as its tasks."""
    conn.tasks = table
    message = {
        "jsonrpc": "2.0",
        "id": request.request_id,
        "method": request.method,
        "params": dict(request.params),
    }
    for action in conn.receive_message(message):
        if isinstance(action, SendFrame):
            return action.data  # the answer (a tasks/cancel sends it before any other frame)
    return error_response(request.request_id, INTERNAL_ERROR, "Internal error: no answer")
