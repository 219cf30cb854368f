"""What ``ServerConnection.receive`` returns for a shell to do: ``SendFrame`` a frame,
``Invoke`` a tool (then report it with ``complete``), ``Cancel`` an invocation. A
connection whose tasks live in a store the shell holds (``tasks_outside``: HTTP)
also asks the shell to ``CreateTask``, ``FetchTask`` or ``ListTasks`` and is told
the outcome (``task_created``, ``task_fetched``, ``task_page``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.jsonrpc import error_response
from ..tasks.table import Task
from .context import Context
from .tools import ToolRuntime

__all__ = [
    "Action",
    "Cancel",
    "CreateTask",
    "FetchTask",
    "Invoke",
    "ListTasks",
    "SendFrame",
    "error_frame",
    "refusal",
    "runs_inline",
]


class SendFrame:
    """A frame to write. ``code``: the JSON-RPC error code of an error frame (None: a
    result or a notification). ``status``: the HTTP status a stateless transport
    answers with (``ServerConnection.receive_stateless`` sets it; 200 otherwise).
    ``session``: the ``Mcp-Session-Id`` a stateless transport hands out with it (an
    ``initialize`` answer, see ``server.asking``), else None."""

    __slots__ = ("code", "data", "session", "status")

    def __init__(self, data: bytes, code: int | None = None) -> None:
        self.data = data
        self.code = code
        self.status = 200
        self.session: str | None = None


def error_frame(request_id: Any, code: int, message: str, data: Any = None) -> SendFrame:
    """A JSON-RPC error answering ``request_id``, its code kept beside its bytes."""
    return SendFrame(error_response(request_id, code, message, data), code)


def refusal(request_id: Any, code: int, message: str, data: Any = None) -> list[Action]:
    """The one action that answers a request with a JSON-RPC error."""
    return [error_frame(request_id, code, message, data)]


class Invoke:
    """Run ``tool`` with ``args`` (already validated), then report to ``complete``."""

    __slots__ = ("args", "cancelled", "checked", "context", "future", "holds_slot", "modern",
                 "request_id", "task", "tool", "version")  # fmt: skip

    def __init__(
        self,
        request_id: Any,
        tool: ToolRuntime,
        args: tuple[Any, ...] | dict[str, Any],
        version: str,
        *,
        modern: bool = False,
        context: Context | None = None,
        task: Task | None = None,
    ) -> None:
        self.request_id = request_id
        self.tool = tool
        self.args = args
        self.version = version
        self.modern = modern
        self.context = context
        self.task = task
        self.cancelled = False
        self.future: Any = None  # the shell's handle, for Cancel
        self.holds_slot = False  # counts against max_concurrent_calls until released
        # False: ``args`` are the raw arguments, still to be checked by the shell
        # (``ServerConnection(defer_checks=True)``) with ``tool.check_arguments``
        self.checked = True

    def cancel(self) -> Cancel:
        """Mark the call cancelled (a handler with ``ctx`` sees ``ctx.cancelled``);
        the ``Cancel`` that tells the shell to stop it."""
        self.cancelled = True
        if self.context is not None:
            self.context.cancel()
        return Cancel(self)

    @property
    def runs_inline(self) -> bool:
        """Cheap enough to run on the reading thread: nothing can interrupt it anyway."""
        return runs_inline(self.tool, self.task is not None)


def runs_inline(tool: ToolRuntime, as_task: bool) -> bool:
    binding = tool.binding
    return not (binding.is_async or binding.timeout is not None or as_task or tool.wants_context)


class Cancel:
    __slots__ = ("invoke",)

    def __init__(self, invoke: Invoke) -> None:
        self.invoke = invoke


class CreateTask:
    """A ``tools/call`` runs as a task whose store the shell holds: create it
    (``tool``'s name, ``era``, ``ttl``, owned by ``owner``), then hand it to
    ``ServerConnection.task_created``, which answers with its handle and gives the
    ``Invoke`` to run. ``args`` are unchecked when ``checked`` is False (the shell
    checks them with ``tool.check_arguments``; a ``ToolError`` is answered by
    ``ServerConnection.invalid_arguments``)."""

    __slots__ = ("args", "checked", "era", "owner", "request_id", "tool", "ttl", "version")

    def __init__(
        self,
        request_id: Any,
        tool: ToolRuntime,
        args: tuple[Any, ...] | dict[str, Any],
        version: str,
        *,
        era: str,
        ttl: object,
        owner: str | None,
        checked: bool,
    ) -> None:
        self.request_id = request_id
        self.tool = tool
        self.args = args
        self.version = version
        self.era = era
        self.ttl = ttl
        self.owner = owner
        self.checked = checked


class FetchTask:
    """A ``tasks/*`` request names a task the shell's store holds: read it (for
    ``tasks/cancel`` and ``tasks/result``, once ``ServerConnection.may_see`` allows,
    cancel it or wait for it), then hand it (or None) to ``task_fetched``."""

    __slots__ = ("method", "params", "request_id", "task_id")

    def __init__(
        self, request_id: Any, method: str, task_id: str, params: Mapping[str, Any]
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.task_id = task_id
        self.params = params


class ListTasks:
    """``tasks/list`` on a connection whose tasks the shell's store holds: one page of
    ``owner``'s tasks of ``era`` after ``cursor`` (already known to be well formed),
    answered by ``ServerConnection.task_page``."""

    __slots__ = ("cursor", "era", "owner", "request_id")

    def __init__(self, request_id: Any, era: str, owner: str | None, cursor: object) -> None:
        self.request_id = request_id
        self.era = era
        self.owner = owner
        self.cursor = cursor


Action = SendFrame | Invoke | Cancel | CreateTask | FetchTask | ListTasks
