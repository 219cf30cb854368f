"""Tasks over stateless HTTP: the task calls and ``tasks/*`` of a request, against a
``TaskStore`` that every worker may share.

The HTTP shell (``exchange``) hands this layer the actions of a core
``ServerConnection`` built with ``tasks_outside``: ``CreateTask`` (a ``tools/call``
the core runs as a task), ``FetchTask`` (a ``tasks/*`` request naming a task) and
``ListTasks`` (``tasks/list``), each already past every check of the core. This
layer does what needs the store and reports back to the core, which shapes every
answer as over stdio (``task_created``, ``task_fetched``, ``task_page``): the
layer itself answers only what is its own, its worker's task limit and a store
that failed.

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

The seam for the transport: an action in, the frame to send out (its HTTP status
with it). It imports nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Mapping
from typing import Any

from .._errors import ToolError
from ..protocol.jsonrpc import INTERNAL_ERROR
from ..server.actions import CreateTask, FetchTask, Invoke, ListTasks, SendFrame, error_frame
from ..server.context import Context
from ..server.core import SERVER_BUSY, ServerConnection
from ..server.tools import App, CallOutcome, ToolRuntime
from ..tasks.store import TaskStore, TaskStoreUnavailable, scrub
from ..tasks.table import Task, TaskLimitReached
from ..telemetry.logs import diagnostics
from ..telemetry.server import ServerTelemetry
from .calls import Calls
from .identity import requestor_identity

__all__ = ["TaskLayer"]

_LOG = diagnostics("tasks")  # a store that failed (its URL's secrets masked)

SHUTDOWN_MESSAGE = "the worker running this task shut down before it finished"
# What a client is told when the task store fails (the detail goes to stderr).
STORE_FAILED_MESSAGE = "Internal error: the task store cannot be reached; retry later"
# How long a worker that shuts down spends recording that its running tasks failed (2 s).
SHUTDOWN_RECORD_SECONDS = 2.0


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
        telemetry: ServerTelemetry | None = None,
    ) -> None:
        self.app = app
        self.store = store
        self.calls = calls
        self.max_running = max_running
        self.running = 0  # task slots taken (checked and taken with no await between)
        self.identity_header = identity_header
        self.telemetry = telemetry  # a task's execution span (telemetry.server)
        self._tasks: set[asyncio.Task[None]] = set()

    def requestor(self, scope: Mapping[str, Any]) -> str | None:
        """Who sends the request of ``scope`` (``http.identity``), or None."""
        return requestor_identity(scope, self.identity_header)

    async def perform(
        self, conn: ServerConnection, action: CreateTask | FetchTask | ListTasks
    ) -> SendFrame:
        """The answer to ``action`` of ``conn``, its store work done."""
        try:
            if isinstance(action, CreateTask):
                return await self.start(conn, action)
            if isinstance(action, FetchTask):
                return await self._fetch(conn, action)
            tasks, following = await self._store(
                self.store.page(action.era, action.owner, action.cursor)
            )
            return conn.task_page(action.request_id, tasks, following)
        except _StoreFailed:
            return _store_failed(action.request_id)

    async def start(self, conn: ServerConnection, create: CreateTask) -> SendFrame:
        """Check the arguments (on the check pool), create the task in the store,
        owned by the requestor, and start it here; the answer naming it."""
        request_id = create.request_id
        if self.running >= self.max_running:
            return error_frame(
                request_id,
                SERVER_BUSY,
                f"Server busy: {self.max_running} tasks are already running "
                "on this worker (its limit); retry when one has finished",
                {"limit": self.max_running},
            )
        self.running += 1  # taken with the check: concurrent calls cannot both pass it
        launched = False
        try:
            args = create.args
            if not create.checked:
                try:
                    args = await self.calls.check(create.tool, args)
                except ToolError as exc:
                    return conn.invalid_arguments(request_id, exc)
            try:
                task: Task = await self._store(
                    self.store.create(create.tool.name, create.era, create.ttl, create.owner)
                )
            except TaskLimitReached as reached:
                return conn.task_limit_error(request_id, reached)
            handle, invoke = conn.task_created(create, task, args)
            assert isinstance(handle, SendFrame) and isinstance(invoke, Invoke)
            runner = asyncio.get_running_loop().create_task(
                self._run(task, invoke.tool, invoke.args, invoke.context)
            )
            launched = True  # the runner gives the slot back when the handler ends
            self._tasks.add(runner)
            runner.add_done_callback(self._tasks.discard)
        finally:
            if not launched:
                self.running -= 1
        return handle

    async def _store(self, call: Awaitable[Any]) -> Any:
        """Await a store call; its failure is logged (secrets masked) and raised as
        ``_StoreFailed`` (``TaskLimitReached`` passes: it is the caller's to answer)."""
        try:
            return await call
        except TaskLimitReached:
            raise
        except TaskStoreUnavailable as exc:
            _LOG.error("%s", exc)
        except Exception:  # noqa: BLE001 - a store bug or a corrupt record: log it, tell no secret
            import traceback

            _LOG.error(
                "%s", scrub(f"the task store failed:\n{traceback.format_exc()}", self.store.url)
            )
        raise _StoreFailed

    async def _run(
        self,
        task: Task,
        tool: ToolRuntime,
        args: tuple[Any, ...] | dict[str, Any],
        context: Context | None,
    ) -> None:
        telemetry = self.telemetry
        if telemetry is None:
            await self._execute(task, tool, args, context)
            return
        # this runs in the context of the call that started it: the span to link to
        observed = telemetry.task_started(tool.name, task.task_id, telemetry.current_caller())
        outcome = CallOutcome(cancelled=True)  # unless the handler ends
        try:
            outcome = await self._execute(task, tool, args, context)
        finally:
            telemetry.task_finished(observed, outcome)

    async def _execute(
        self,
        task: Task,
        tool: ToolRuntime,
        args: tuple[Any, ...] | dict[str, Any],
        context: Context | None,
    ) -> CallOutcome:
        """Run the task's handler and store its outcome; the outcome (cancelled: no
        result to store)."""
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
                return CallOutcome(cancelled=True)
            if cancelled or outcome.cancelled:
                return CallOutcome(cancelled=True)
            error = None
            if outcome.result is None:
                error = {
                    "code": INTERNAL_ERROR,
                    "message": outcome.internal_error or "Internal error",
                }
            await self._record(task.task_id, outcome.result, error)
            return outcome
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
                _LOG.warning("task %s: cannot record its outcome: %s", task_id, exc)
                await asyncio.sleep(0.2 * 2**attempt)

    # -- tasks/* --------------------------------------------------------------------

    async def _fetch(self, conn: ServerConnection, fetch: FetchTask) -> SendFrame:
        """``tasks/get|result|update|cancel``: the store's task, handed to the core,
        which answers as over stdio; visible only to its owner."""
        task: Task | None = await self._store(self.store.get(fetch.task_id))
        if task is not None and conn.may_see(task):
            # only now is the store asked to wait or to cancel: another requestor's
            # task is neither waited on nor cancelled, and answers as unknown
            if fetch.method == "tasks/cancel":
                task, _ = await self._store(self.store.cancel(fetch.task_id))
            elif fetch.method == "tasks/result":
                task = await self._store(self.store.wait(fetch.task_id))
        for action in conn.task_fetched(fetch, task):
            if isinstance(action, SendFrame):
                return action  # the answer (a tasks/cancel sends it before any other frame)
        return error_frame(fetch.request_id, INTERNAL_ERROR, "Internal error: no answer")

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


def _store_failed(request_id: Any) -> SendFrame:
    return error_frame(request_id, INTERNAL_ERROR, STORE_FAILED_MESSAGE)
