"""What ``ServerConnection.receive`` returns for a shell to do: ``SendFrame`` a frame,
``Invoke`` a tool (then report it with ``complete``), ``Cancel`` an invocation.
"""

from __future__ import annotations

from typing import Any

from ..protocol.jsonrpc import error_response
from ..tasks.table import Task
from .context import Context
from .tools import ToolRuntime

__all__ = ["Action", "Cancel", "Invoke", "SendFrame", "refusal", "runs_inline"]


class SendFrame:
    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def refusal(request_id: Any, code: int, message: str, data: Any = None) -> list[Action]:
    """The one action that answers a request with a JSON-RPC error."""
    return [SendFrame(error_response(request_id, code, message, data))]


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


Action = SendFrame | Invoke | Cancel
