"""The task requests of a server connection (``tasks/get|result|list|update|cancel``
in both eras) and whether a ``tools/call`` runs as a task: ``TaskMethods``, a part
of ``ServerConnection`` kept apart because it is a job of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.constants import (
    INVALID_PARAMS,
    META_RELATED_TASK,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    TASKS_EXTENSION,
)
from ..protocol.jsonrpc import encode, error_response, result_response
from ..tasks.table import Task, TaskTable
from .actions import Action, Cancel, Invoke, SendFrame
from .tools import App, ToolRuntime

__all__ = ["TASKS_VERSION", "TaskMethods"]

TASKS_VERSION = "2025-11-25"  # the one handshake revision with core tasks


class TaskMethods:
    """The task half of ``ServerConnection``, which provides the state below."""

    app: App
    era: str | None
    version: str | None
    tasks: TaskTable
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

    def _task_mode(
        self, request_id: Any, tool: ToolRuntime, params: Mapping[str, Any]
    ) -> tuple[bool, SendFrame | None]:
        """Whether this call runs as a task, or the error refusing it."""
        support = tool.binding.task_support
        if self._is_modern:
            declared = self._modern_extension(TASKS_EXTENSION)
            if support == "required" and not declared:
                return False, SendFrame(error_response(
                    request_id, MISSING_CAPABILITY,
                    f"Tool '{tool.name}' runs only as a task: declare the {TASKS_EXTENSION} extension",
                    {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}))
            # server-directed: a declaring client gets a task for every task-capable tool
            return declared and support != "forbidden", None
        if self.version != TASKS_VERSION or not self.app.task_tools:
            return False, None  # no tasks capability declared: `task` is ignored
        wants = isinstance(params.get("task"), dict)
        if wants and support == "forbidden":
            return False, SendFrame(error_response(
                request_id, METHOD_NOT_FOUND, f"Tool '{tool.name}' does not support task execution"))
        if not wants and support == "required":
            return False, SendFrame(error_response(
                request_id, METHOD_NOT_FOUND, f"Tool '{tool.name}' requires task augmentation"))
        return wants, None

    def _task_methods_allowed(self, request_id: Any) -> SendFrame | None:
        if self._is_modern:
            if not self._modern_extension(TASKS_EXTENSION):
                return SendFrame(error_response(
                    request_id, MISSING_CAPABILITY, f"tasks/* needs the {TASKS_EXTENSION} extension",
                    {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}))
            return None
        if self.version != TASKS_VERSION or not self.app.task_tools:
            return SendFrame(error_response(request_id, METHOD_NOT_FOUND, "Method not found"))
        return None

    def _find_task(self, request_id: Any, params: Mapping[str, Any]) -> tuple[Task | None, SendFrame | None]:
        refused = self._task_methods_allowed(request_id)
        if refused is not None:
            return None, refused
        task = self.tasks.get(params.get("taskId"))
        if task is None or task.era != self.era:
            return None, SendFrame(error_response(
                request_id, INVALID_PARAMS, f"Invalid params: unknown task {params.get('taskId')!r}"))
        return task, None

    def _tasks_get(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refusal = self._find_task(request_id, params)
        if task is None:
            return [refusal] if refusal else []
        body = task.wire()
        if self._is_modern:
            if task.status == "completed" and task.result is not None:
                body["result"] = self._call_result(task.result)
            elif task.status == "failed" and task.error is not None:
                body["error"] = task.error
        return [self._result(request_id, body)]

    def _tasks_result(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refusal = self._find_task(request_id, params)
        if task is None:
            return [refusal] if refusal else []
        if not task.terminal:
            task.waiters.append(request_id)  # answered when the task ends
            return []
        return [SendFrame(self._task_outcome_frame(task, request_id))]

    def _tasks_list(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        refused = self._task_methods_allowed(request_id)
        if refused is not None:
            return [refused]
        if params.get("cursor") is not None:
            return [SendFrame(error_response(request_id, INVALID_PARAMS, "Invalid params: unknown cursor"))]
        tasks = [task.wire() for task in self.tasks.all() if task.era == self.era]
        return [SendFrame(result_response(request_id, {"tasks": tasks}))]

    def _tasks_update(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refusal = self._find_task(request_id, params)
        if task is None:
            return [refusal] if refusal else []
        # No tool of a generated server asks for input, so there is nothing to route.
        return [self._result(request_id, {})]

    def _tasks_cancel(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        task, refusal = self._find_task(request_id, params)
        if task is None:
            return [refusal] if refusal else []
        if task.terminal:
            if self._is_modern:
                return [self._result(request_id, {})]  # cooperative: an ack, whatever the state
            return [SendFrame(error_response(
                request_id, INVALID_PARAMS, f"Invalid params: task {task.task_id!r} is already {task.status}"))]
        self.tasks.cancel(task)
        actions: list[Action] = []
        invoke = self._task_invokes.pop(task.task_id, None)
        if invoke is not None:
            invoke.cancelled = True
            if invoke.context is not None:
                invoke.context.cancel()
            actions.append(Cancel(invoke))
        reply = self._result(request_id, {} if self._is_modern else task.wire())
        actions.append(reply)
        actions.extend(SendFrame(frame) for frame in self._task_ended(task))
        return actions

    def _task_outcome_frame(self, task: Task, request_id: Any) -> bytes:
        related = {META_RELATED_TASK: {"taskId": task.task_id}}
        if task.status == "cancelled":
            return error_response(request_id, INVALID_PARAMS,
                                  f"Task {task.task_id!r} was cancelled", {"taskId": task.task_id})
        if task.error is not None:
            return encode({"jsonrpc": "2.0", "id": request_id, "error": task.error})
        assert task.result is not None
        result = self._call_result(task.result)
        return result_response(request_id, {**result, "_meta": {**result.get("_meta", {}), **related}})

    def _task_ended(self, task: Task) -> list[bytes]:
        """Frames owed when a task reaches a terminal state."""
        frames: list[bytes] = []
        if task.era == "legacy":
            frames.append(encode({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                                  "params": task.wire()}))
        for waiter in task.waiters:
            frames.append(self._task_outcome_frame(task, waiter))
        task.waiters.clear()
        return frames
