"""A tool call that runs as a task, on the client side: ``TaskStatus`` as the server
reports it, the state a handle keeps (``TaskState``), and the timing rules of polling.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .._errors import (
    McpError,
    ProtocolError,
)
from ..protocol.constants import MISSING_CAPABILITY
from .core import (
    TASKS_EXTENSION,
    Era,
    error_from_response,
)
from .listing import str_or_none
from .results import checked_tool_result

NO_LIMIT = float("inf")
_DEFAULT_POLL_MS = 1000  # a modern task that names no pollIntervalMs is polled this often
_POLL_BOUNDS = (0.01, 30.0)  # seconds: a hint outside these is clamped


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """A task as the server last described it (``Task`` in both eras' field names).

    ``task_id`` is None for a handle whose call the server answered directly
    instead of creating a task (a server without task support runs it plainly).
    ``status`` is ``working``, ``input_required``, ``completed``, ``failed`` or
    ``cancelled``; ``raw`` holds the object as it came.
    """

    task_id: str | None
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def terminal(self) -> bool:
        """True once the task is completed, failed or cancelled."""
        return self.status in ("completed", "failed", "cancelled")

    @classmethod
    def from_wire(cls, task: Mapping[str, Any]) -> TaskStatus:
        """Read a ``Task`` (2025-11-25 ``ttl``/``pollInterval`` or 2026 ``ttlMs``/
        ``pollIntervalMs``); one without a string ``taskId`` and ``status`` is refused."""
        task_id, status = task.get("taskId"), task.get("status")
        if not isinstance(task_id, str) or not isinstance(status, str):
            raise ProtocolError(
                "a task has no string taskId and status", reason="invalid_task", data=dict(task)
            )
        return cls(
            task_id=task_id,
            status=status,
            status_message=str_or_none(task.get("statusMessage")),
            created_at=str_or_none(task.get("createdAt")),
            last_updated_at=str_or_none(task.get("lastUpdatedAt")),
            ttl_ms=_int_or_none(task.get("ttlMs", task.get("ttl"))),
            poll_interval_ms=_int_or_none(task.get("pollIntervalMs", task.get("pollInterval"))),
            raw=dict(task),
        )


def _int_or_none(value: Any) -> int | None:
    return value if type(value) is int else None


class TaskState:
    """What a handle knows of its task; the sessions update it, the handles read it.

    ``final`` is the ``CallToolResult`` once known, ``failure`` the error the
    outcome raises instead (a JSON-RPC error, a cancelled task).
    """

    __slots__ = ("era", "failure", "final", "last", "task_id", "token", "tool")

    def __init__(
        self,
        tool: str,
        era: Era,
        *,
        created: TaskStatus | None = None,
        final: dict[str, Any] | None = None,
        token: int | None = None,
    ) -> None:
        self.tool = tool
        self.era: Era = era
        self.task_id = created.task_id if created is not None else None
        self.last = created
        self.final = final
        self.failure: McpError | None = None
        self.token = token  # our progress token, registered while the task runs

    @property
    def label(self) -> str:
        return f"tools/call {self.tool!r}" + (f" (task {self.task_id})" if self.task_id else "")

    @property
    def settled(self) -> bool:
        return self.final is not None or self.failure is not None

    def local_status(self) -> TaskStatus:
        """The status of a call the server answered directly (no task)."""
        failed = self.failure is not None or (self.final or {}).get("isError") is True
        return TaskStatus(task_id=None, status="failed" if failed else "completed")

    def absorb(self, body: Mapping[str, Any]) -> TaskStatus:
        """Take in a ``tasks/get``/``tasks/cancel`` answer; in the 2026 era a terminal
        one carries the outcome too (``result`` or ``error``)."""
        status = TaskStatus.from_wire(body)
        self.last = status
        if status.status == "cancelled":
            self.failure = ProtocolError(
                f"{self.label}: the task was cancelled", reason="task_cancelled", data=status.raw
            )
        elif self.era == "modern" and status.status == "completed":
            result = body.get("result")
            if isinstance(result, dict):
                self.final = result
            else:
                self.failure = ProtocolError(
                    f"{self.label}: the completed task carries no result object",
                    reason="invalid_task",
                    data=status.raw,
                )
        elif self.era == "modern" and status.status == "failed":
            error = body.get("error")
            self.failure = (
                error_from_response(error, self.label)
                if isinstance(error, dict)
                else ProtocolError(
                    f"{self.label}: the task failed: {status.status_message or 'no reason given'}",
                    reason="task_failed",
                    data=status.raw,
                )
            )
        return status

    def outcome(self) -> dict[str, Any]:
        """The settled outcome: the checked result, or its error raised."""
        if self.failure is not None:
            raise self.failure
        assert self.final is not None
        return checked_tool_result(self.final)


def poll_seconds(status: TaskStatus) -> float:
    milliseconds = status.poll_interval_ms
    seconds = (milliseconds if milliseconds is not None else _DEFAULT_POLL_MS) / 1000
    return min(max(seconds, _POLL_BOUNDS[0]), _POLL_BOUNDS[1])


def requires_tasks(error: Mapping[str, Any]) -> bool:
    """A 2026 ``-32021`` naming the tasks extension: the tool runs only as a task."""
    data = error.get("data")
    required = data.get("requiredCapabilities") if isinstance(data, dict) else None
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return (
        error.get("code") == MISSING_CAPABILITY
        and isinstance(extensions, dict)
        and (TASKS_EXTENSION in extensions)
    )


S = TypeVar("S")  # the session a task handle belongs to
T = TypeVar("T")


class TaskHandleBase(Generic[S, T]):
    """What the sync and async task handles share: the task's identity and the last
    state seen, read without asking the server."""

    __slots__ = ("_convert", "_session", "_state")

    def __init__(
        self, session: S, state: TaskState, convert: Callable[[dict[str, Any]], T]
    ) -> None:
        self._session = session
        self._state = state
        self._convert = convert

    @property
    def task_id(self) -> str | None:
        """The server's task id (None: the server answered the call directly)."""
        return self._state.task_id

    @property
    def tool(self) -> str:
        """The wire name of the tool this task runs."""
        return self._state.tool

    @property
    def last_status(self) -> TaskStatus | None:
        """What the server said of the task last, without asking again."""
        state = self._state
        return state.local_status() if state.task_id is None else state.last

    def _deadline(self, timeout: float | None) -> float | None:
        return None if timeout is None else time.monotonic() + timeout

    def __repr__(self) -> str:
        last = self.last_status
        return (
            f"<{type(self).__name__} {self.tool!r} task_id={self.task_id!r} "
            f"status={last and last.status!r}>"
        )
