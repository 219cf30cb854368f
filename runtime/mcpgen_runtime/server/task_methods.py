"""The task requests of a server connection (``tasks/get|result|list|update|cancel``
in both eras) and whether a ``tools/call`` runs as a task: ``TaskMethods``, a part
of ``ServerConnection`` kept apart because it is a job of its own.

Isolation: a connection knows its ``requestor`` (an identity, or None when
requestors cannot be told apart). Every task it creates is owned by that
requestor; ``tasks/get|result|update|cancel`` of a task owned by someone else
get the same -32602 as an unknown task, so an id cannot even be probed.
``tasks/list`` (and the ``tasks.list`` capability) exist only where
``tasks_listed`` says the requestor is known (stdio: one client per process;
HTTP: an identity), and list only the requestor's own tasks, a page at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.constants import (
    INVALID_PARAMS,
    META_RELATED_TASK,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    SERVER_BUSY,
    TASKS_EXTENSION,
)
from ..protocol.jsonrpc import encode, error_response, result_response
from ..tasks.table import Task, TaskLimitReached, TaskTable, decode_cursor
from .actions import Action, FetchTask, Invoke, ListTasks, SendFrame, error_frame, refusal
from .tools import App, ToolRuntime

__all__ = ["TASKS_VERSION", "TaskMethods"]

TASKS_VERSION = "2025-11-25"  # the one handshake revision with core tasks


class TaskMethods:
    """The task half of ``ServerConnection``, which provides the state below."""

    app: App
    era: str | None
    version: str | None
    tasks: TaskTable
    requestor: str | None  # who sends this connection's requests (None: unknown)
    tasks_listed: bool  # whether tasks/list is offered (the requestor is told apart)
    tasks_outside: bool  # the tasks live in the shell's store (FetchTask, ListTasks)
    _fetched: bool
    _task_invokes: dict[str, Invoke]

    @property
    def _is_modern(self) -> bool:
        raise NotImplementedError

    def _modern_extension(self, name: str) -> bool:
        raise NotImplementedError

    def _result(self, request_id: Any, result: dict[str, Any]) -> SendFrame:
        raise NotImplementedError

    def _call_result(self, result: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _handle(self, handler: str, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        raise NotImplementedError

    def _with_status(self, actions: list[Action]) -> list[Action]:
        raise NotImplementedError

    def _task_mode(
        self, request_id: Any, tool: ToolRuntime, params: Mapping[str, Any]
    ) -> tuple[bool, SendFrame | None]:
        """Whether this call runs as a task, or the error refusing it."""
        support = tool.binding.task_support
        if self._is_modern:
            declared = self._modern_extension(TASKS_EXTENSION)
            if support == "required" and not declared:
                return False, error_frame(
                    request_id,
                    MISSING_CAPABILITY,
                    f"Tool '{tool.name}' runs only as a task: declare the {TASKS_EXTENSION} extension",
                    {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                )
            # server-directed: a declaring client gets a task for every task-capable tool
            return declared and support != "forbidden", None
        if self.version != TASKS_VERSION or not self.app.task_tools:
            return False, None  # no tasks capability declared: `task` is ignored
        wants = isinstance(params.get("task"), dict)
        if wants and support == "forbidden":
            return False, error_frame(
                request_id, METHOD_NOT_FOUND, f"Tool '{tool.name}' does not support task execution"
            )
        if not wants and support == "required":
            return False, error_frame(
                request_id, METHOD_NOT_FOUND, f"Tool '{tool.name}' requires task augmentation"
            )
        return wants, None

    def _task_methods_allowed(self, request_id: Any, method: str = "") -> SendFrame | None:
        if method == "tasks/list" and not self.tasks_listed:
            return error_frame(request_id, METHOD_NOT_FOUND, "Method not found", method)
        if self._is_modern:
            if not self._modern_extension(TASKS_EXTENSION):
                return error_frame(
                    request_id,
                    MISSING_CAPABILITY,
                    f"tasks/* needs the {TASKS_EXTENSION} extension",
                    {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                )
            return None
        if self.version != TASKS_VERSION or not self.app.task_tools:
            return error_frame(request_id, METHOD_NOT_FOUND, "Method not found")
        return None

    def _find_task(
        self, request_id: Any, params: Mapping[str, Any], method: str
    ) -> tuple[Task | None, Action | None]:
        """The task ``params`` names, or what to answer instead: a refusal, or (its
        tasks outside) a ``FetchTask`` for the shell, answered by ``task_fetched``."""
        refused = self._task_methods_allowed(request_id)
        if refused is not None:
            return None, refused
        task_id = params.get("taskId")
        if self.tasks_outside and not self._fetched and isinstance(task_id, str):
            return None, FetchTask(request_id, method, task_id, params)
        task = self.tasks.get(task_id)
        if task is None or not self.may_see(task):
            return None, error_frame(
                request_id, INVALID_PARAMS, f"Invalid params: unknown task {params.get('taskId')!r}"
            )
        return task, None

    def may_see(self, task: Task) -> bool:
        """Whether this connection may read, wait on or cancel ``task``: one of its
        era, owned by no one or by this connection's requestor."""
        return task.era == self.era and (task.owner is None or task.owner == self.requestor)

    def task_limit_error(self, request_id: Any, reached: TaskLimitReached) -> SendFrame:
        where = "on this worker" if reached.scope == "worker" else "in the task store"
        return error_frame(
            request_id,
            SERVER_BUSY,
            f"Server busy: {reached.limit} tasks are already live {where} "
            "(its limit); retry when one has expired",
            {"limit": reached.limit},
        )

    def _tasks_get(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refused = self._find_task(request_id, params, "tasks/get")
        if task is None:
            return [refused] if refused else []
        body = task.wire()
        if self._is_modern:
            if task.status == "completed" and task.result is not None:
                body["result"] = self._call_result(task.result)
            elif task.status == "failed" and task.error is not None:
                body["error"] = task.error
        return [self._result(request_id, body)]

    def _tasks_result(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refused = self._find_task(request_id, params, "tasks/result")
        if task is None:
            return [refused] if refused else []
        if not task.terminal:
            task.waiters.append(request_id)  # answered when the task ends
            return []
        return [SendFrame(self._task_outcome_frame(task, request_id))]

    def _tasks_list(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        refused = self._task_methods_allowed(request_id, "tasks/list")
        if refused is not None:
            return [refused]
        if self.tasks_outside:
            cursor = params.get("cursor")
            if cursor is not None:
                try:
                    decode_cursor(cursor)
                except ValueError:
                    return [self.unknown_cursor(request_id)]
            return [ListTasks(request_id, self.era or "legacy", self.requestor, cursor)]
        try:
            tasks, following = self.tasks.page(
                self.era or "legacy", self.requestor, params.get("cursor")
            )
        except ValueError:
            return [self.unknown_cursor(request_id)]
        return [self.task_page(request_id, tasks, following)]

    def task_fetched(self, fetch: FetchTask, task: Task | None) -> list[Action]:
        """The answer to the ``tasks/*`` request of ``fetch``, given the task as the
        shell's store had it (None: no such task; for ``tasks/cancel``, as it was
        before the store cancelled it: the cancellation is applied here), shaped as
        over stdio, each frame carrying its HTTP status."""
        if task is not None:
            self.tasks.add(task)
        self._fetched = True
        handler = "_" + fetch.method.replace("/", "_")  # tasks/get -> _tasks_get
        return self._with_status(self._handle(handler, fetch.request_id, fetch.params))

    def unknown_cursor(self, request_id: Any) -> SendFrame:
        return error_frame(request_id, INVALID_PARAMS, "Invalid params: unknown cursor")

    def task_page(self, request_id: Any, tasks: list[Task], following: str | None) -> SendFrame:
        """The ``tasks/list`` answer: one page, and the cursor of the next if any."""
        body: dict[str, Any] = {"tasks": [task.wire() for task in tasks]}
        if following is not None:
            body["nextCursor"] = following
        return SendFrame(result_response(request_id, body))

    def _tasks_update(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refused = self._find_task(request_id, params, "tasks/update")
        if task is None:
            return [refused] if refused else []
        # No tool of a generated server asks for input, so there is nothing to route.
        return [self._result(request_id, {})]

    def _tasks_cancel(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refused = self._find_task(request_id, params, "tasks/cancel")
        if task is None:
            return [refused] if refused else []
        if task.terminal:
            if self._is_modern:
                return [self._result(request_id, {})]  # cooperative: an ack, whatever the state
            return refusal(
                request_id,
                INVALID_PARAMS,
                f"Invalid params: task {task.task_id!r} is already {task.status}",
            )
        self.tasks.cancel(task)
        actions: list[Action] = []
        invoke = self._task_invokes.pop(task.task_id, None)
        if invoke is not None:
            actions.append(invoke.cancel())
        reply = self._result(request_id, {} if self._is_modern else task.wire())
        actions.append(reply)
        actions.extend(SendFrame(frame) for frame in self._task_ended(task))
        return actions

    def _task_outcome_frame(self, task: Task, request_id: Any) -> bytes:
        related = {META_RELATED_TASK: {"taskId": task.task_id}}
        if task.status == "cancelled":
            return error_response(
                request_id,
                INVALID_PARAMS,
                f"Task {task.task_id!r} was cancelled",
                {"taskId": task.task_id},
            )
        if task.error is not None:
            return encode({"jsonrpc": "2.0", "id": request_id, "error": task.error})
        assert task.result is not None
        result = self._call_result(task.result)
        return result_response(
            request_id, {**result, "_meta": {**result.get("_meta", {}), **related}}
        )

    def _task_ended(self, task: Task) -> list[bytes]:
        """Frames owed when a task reaches a terminal state."""
        frames: list[bytes] = []
        if task.era == "legacy":
            frames.append(
                encode(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/tasks/status",
                        "params": task.wire(),
                    }
                )
            )
        for waiter in task.waiters:
            frames.append(self._task_outcome_frame(task, waiter))
        task.waiters.clear()
        return frames
