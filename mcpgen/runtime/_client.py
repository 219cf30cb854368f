"""The sessions generated clients call: ``Session`` (threads) and ``AsyncSession``
(asyncio) pick the protocol era (a ``server/discover`` probe, falling back to the
``initialize`` handshake), check the server's tools against the contract and make
``tools/list``/``tools/call`` requests over any line transport. Tool calls that
run as tasks on the server are followed through ``TaskHandle``/``AsyncTaskHandle``.

Both are thin shells around ``ClientCore``; they differ only in how a caller
waits for its response (a lock vs. a future).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import os
import shlex
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, TypeVar, overload

from ._client_core import (
    TASKS_EXTENSION,
    ClientCore,
    Discover,
    Era,
    Notification,
    Outcome,
    ProtocolChoice,
    Reply,
    Response,
    SendLine,
    Step,
    error_from_response,
)
from ._errors import (
    ContractMismatch,
    McpError,
    ProtocolError,
    ResultMismatch,
    ServerExited,
    Timeout,
    ToolError,
)
from ._fingerprint import tool_fingerprint
from ._transport import (
    DEFAULT_MAX_MESSAGE_BYTES,
    AsyncInMemoryTransport,
    AsyncStdioTransport,
    AsyncTransport,
    InMemoryTransport,
    ServeFunction,
    StdioTransport,
    Transport,
)
from ._versions import STRUCTURED_CONTENT_VERSIONS, TOOL_FIELDS

if TYPE_CHECKING:
    from ._compat import Change

__all__ = [
    "AsyncProgressCallback",
    "AsyncSession",
    "AsyncTaskHandle",
    "ListedTool",
    "NotificationHandler",
    "ProgressCallback",
    "ProtocolChoice",
    "ResultConverter",
    "Session",
    "TaskHandle",
    "TaskStatus",
    "Verify",
    "convert_result",
]

logger = logging.getLogger("mcpgen.client")

Verify = Literal["strict", "warn", "off"]
NotificationHandler = Callable[[Notification], None]
#: Called with (progress, total, message) for each ``notifications/progress`` of a
#: request made with ``on_progress=``; it runs on the session's reader thread.
ProgressCallback = Callable[[float, float | None, str | None], None]
#: The async session also accepts a coroutine function; it runs as a task on the
#: loop and the call returns only once the callbacks of its progress have finished.
AsyncProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]

T = TypeVar("T")

_MAX_WAIT = threading.TIMEOUT_MAX
_NO_LIMIT = float("inf")
DEFAULT_PROBE_TIMEOUT = 5.0  # seconds a server/discover probe waits before falling back
DEFAULT_TASK_TTL_MS = 10 * 60 * 1000  # the ttl a 2025-11-25 task-augmented call asks for
_DEFAULT_POLL_MS = 1000  # a modern task that names no pollIntervalMs is polled this often
_POLL_BOUNDS = (0.01, 30.0)  # seconds: a hint outside these is clamped
_CANCEL_TIMEOUT = 5.0  # seconds a best-effort tasks/cancel waits for its ack
_CALL_RESULT_TYPES = frozenset({"complete", "task"})
_TASK_GET_RESULT_TYPES = frozenset({"complete", "task"})  # the SEP's examples show "task"


# --------------------------------------------------------------------------- listed tools


@dataclass(frozen=True, slots=True)
class ListedTool:
    """A tool as a server listed it, with the fields a client reads pulled out.

    ``annotations`` are hints from the server (read-only, destructive, …): they
    are untrusted unless the server is, and must never drive a policy decision
    (auto-approval, sandboxing) by themselves. ``server_id`` is the name the
    *caller* gave this server, never the server's self-reported ``serverInfo``
    name, so two servers cannot pass for one another.
    """

    raw: dict[str, Any]
    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    execution: dict[str, Any] | None
    meta: dict[str, Any] | None
    server_id: str
    fingerprint: str
    display_name: str

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any], server_id: str) -> ListedTool:
        """Read one listed definition; optional fields of the wrong type are dropped,
        a definition without a string ``name`` or an object ``inputSchema`` is refused."""
        if not isinstance(raw, Mapping):
            raise ProtocolError("a listed tool is not an object", reason="invalid_tool", data=raw)
        name = raw.get("name")
        if not isinstance(name, str):
            raise ProtocolError(
                f"a listed tool has no string name: {name!r}", reason="invalid_tool", data=raw
            )
        input_schema = raw.get("inputSchema")
        if not isinstance(input_schema, dict):
            raise ProtocolError(
                f"tool {name!r} has no object inputSchema", reason="invalid_tool", data=raw
            )
        raw = dict(raw) if not isinstance(raw, dict) else raw
        title = _str_or_none(raw.get("title"))
        annotations = _dict_or_none(raw.get("annotations")) or {}
        hint_title = _str_or_none(annotations.get("title"))
        return cls(
            raw=raw,
            name=name,
            title=title,
            description=_str_or_none(raw.get("description")),
            input_schema=input_schema,
            output_schema=_dict_or_none(raw.get("outputSchema")),
            annotations=annotations,
            execution=_dict_or_none(raw.get("execution")),
            meta=_dict_or_none(raw.get("_meta")),
            server_id=server_id,
            fingerprint=tool_fingerprint(raw),
            display_name=title or hint_title or name,
        )

    def __hash__(self) -> int:
        # The dict fields are unhashable; these three identify a listed tool.
        return hash((self.server_id, self.name, self.fingerprint))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


# --------------------------------------------------------------------------- results


def _text_of(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return texts[0] if len(texts) == 1 else "\n".join(texts)


def _checked_tool_result(result: dict[str, Any]) -> dict[str, Any]:
    """Raise ``ToolError`` for an ``isError`` result, else return it unchanged."""
    if result.get("isError") is True:
        content = result.get("content")
        blocks = (
            [block for block in content if isinstance(block, dict)]
            if isinstance(content, list)
            else []
        )
        raise ToolError(_text_of(blocks) or "the tool reported an error", content=blocks)
    return result


_JSON_CHECKS: dict[str, Callable[[Any], bool]] = {
    "integer": lambda value: type(value) is int,
    # What the JSON held (3 stays int 3); NaN and infinities, which Python's decoder
    # reads from the non-JSON NaN/Infinity or an overflowing 1e400, are no numbers.
    "number": lambda value: type(value) is int or (type(value) is float and math.isfinite(value)),
    "boolean": lambda value: type(value) is bool,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
}


def convert_result(result: Mapping[str, Any], returns: str, tool: str = "") -> Any:
    """The value a generated method returns for a ``CallToolResult``.

    ``returns`` is the tool's declared type: ``string`` (the text blocks joined),
    ``integer``/``number``/``boolean``/``object``/``array`` (the text parsed as
    JSON and type-checked), ``content`` (the content blocks as they came) or
    ``result`` (the whole result as it came, without ``isError``).
    A value that is not of that type raises ``ResultMismatch`` naming ``tool``.
    """
    content = result.get("content")
    if returns == "result":
        return _whole_result(result)
    if returns == "content":
        return list(content) if isinstance(content, list) else []
    text = _text_of(content)
    if returns == "string":
        return text
    check = _JSON_CHECKS.get(returns)
    if check is None:
        raise ValueError(f"unknown return type {returns!r}")
    if not text and "structuredContent" in result:
        value = result["structuredContent"]  # a server that sent no text twin
    else:
        try:
            value = json.loads(text)
        except ValueError:
            value = _NOT_JSON
    if value is _NOT_JSON or not check(value):
        raise ResultMismatch(
            f"the result of tool '{tool}' is not a JSON {returns}: {text[:200]!r}", tool=tool
        )
    return value


_NOT_JSON = object()


def _whole_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """``returns: result``: the result as the tool sent it (other blocks, structured
    content, its own ``_meta``), without what the protocol era adds around it
    (``isError``, always false here; 2026-07-28's ``resultType`` and the reserved
    ``io.modelcontextprotocol/`` ``_meta`` keys), so both eras give the same value."""
    value = {k: v for k, v in result.items() if k not in ("isError", "resultType")}
    meta = value.get("_meta")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")}
        if kept:
            value["_meta"] = kept
        else:
            del value["_meta"]
    return value


class ResultConverter:
    """Turns ``CallToolResult``s into what the typed client methods return, checking
    each against the contract the client was generated from.

    A structured result is first checked against the tool's output schema in the
    contract with the runtime's validator (so client and server apply the same
    rules), then built into its ``…Output`` model; whatever does not fit raises
    ``ResultMismatch`` naming the tool and the field, never pydantic's own error.
    Validators are compiled on a tool's first result.
    """

    def __init__(self, contract: Sequence[Mapping[str, Any]]) -> None:
        self._schemas = {
            tool["name"]: tool["outputSchema"] for tool in contract if "outputSchema" in tool
        }
        self._validators: dict[str, Callable[[Any], Any]] = {}

    def structured(self, tool: str, result: Mapping[str, Any], build: Callable[[Any], T]) -> T:
        """The model ``build`` makes of the result's ``structuredContent`` (before
        2025-06-18 a result carries only its JSON text, which is used instead)."""
        from ._jsonschema import ValidationFailed

        if "structuredContent" in result:
            value = result["structuredContent"]
        else:
            value = convert_result(result, "object", tool)
        try:
            self._validator(tool)(value)
        except ValidationFailed as exc:
            first = exc.problems[0]
            raise ResultMismatch(
                f"the result of tool '{tool}' does not fit its output schema: {exc.describe(3)}",
                tool=tool, path=first.path,
            ) from None
        try:
            return build(value)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            listed = getattr(exc, "errors", None)
            errors: list[dict[str, Any]] = listed() if callable(listed) else []
            path = tuple(errors[0].get("loc", ())) if errors else ()
            problem = errors[0].get("msg", str(exc)) if errors else str(exc)
            where = _render_path(path)
            raise ResultMismatch(
                f"the result of tool '{tool}' does not fit its model: "
                f"{where + ': ' if where else ''}{problem}",
                tool=tool, path=path,
            ) from None

    def _validator(self, tool: str) -> Callable[[Any], Any]:
        validator = self._validators.get(tool)
        if validator is None:
            from ._jsonschema import compile_schema

            schema = self._schemas.get(tool)
            validator = compile_schema(schema) if schema is not None else _accept
            self._validators[tool] = validator
        return validator


def _accept(value: Any) -> Any:
    return value


def _render_path(path: Sequence[Any]) -> str:
    """``("rows", 1, "day")`` → ``rows[1].day``, as the validator writes paths."""
    from ._jsonschema import Problem

    return Problem(tuple(path), "").render().removesuffix(": ") if path else ""


# --------------------------------------------------------------------------- contract


def _project(descriptor: Mapping[str, Any], fields: frozenset[str] | None) -> dict[str, Any]:
    if fields is None:
        return dict(descriptor)
    return {key: value for key, value in descriptor.items() if key in fields}


def _check_contract(
    contract: Sequence[Mapping[str, Any]],
    tools: Sequence[ListedTool],
    protocol_version: str,
    verify: Verify,
) -> list[Change]:
    """Compare the server's tools with the contract; raise or log breaking changes
    and return the ones the caller should see as warnings."""
    # Imported here: only sessions that verify pay for the comparison rules.
    from ._compat import Severity, compare_tools

    # Both sides are cut to the fields the negotiated revision defines, so a
    # 2024-11-05 server is not blamed for omitting outputSchema it cannot send.
    fields = TOOL_FIELDS.get(protocol_version)
    expected = [_project(tool, fields) for tool in contract]
    actual = [_project(tool.raw, fields) for tool in tools]
    names = {tool.get("name") for tool in contract}
    # A tool only the server has is not ours to judge.
    changes = [change for change in compare_tools(expected, actual) if change.tool in names]
    # A reordered parameter list breaks code generated from the contract, not this
    # client: it sends arguments by name. So a reorder is a warning here, never fatal.
    reordered = [change for change in changes if change.rule == "PARAM_ORDER_CHANGED"]
    breaking = [
        change
        for change in changes
        if change.severity == Severity.BREAKING and change.rule != "PARAM_ORDER_CHANGED"
    ]
    if reordered:
        logger.warning(
            "the server's parameter order differs from the contract (calls by name are "
            "unaffected): %s",
            "; ".join(f"tool {change.tool!r}: {change.message}" for change in reordered),
        )
    if breaking:
        message = "the server's tools break the contract:\n" + "\n".join(
            f"  tool {change.tool!r}: {change.message} ({change.rule})" for change in breaking
        )
        if verify == "strict":
            raise ContractMismatch(message, changes=breaking)
        logger.warning("%s", message)
    _say_unchecked_results(contract, tools, protocol_version)
    # With verify="warn" the breaking changes stay in the list: they were logged
    # and the caller chose to go on, so they are warnings now.
    return changes


def _say_unchecked_results(
    contract: Sequence[Mapping[str, Any]], tools: Sequence[ListedTool], protocol_version: str
) -> None:
    """Before 2025-06-18 a server lists no output schemas and sends no structured
    content: whether its results fit the contract's output schemas cannot be checked
    on connect. Said here, so a later ``ResultMismatch`` is no surprise."""
    if protocol_version in STRUCTURED_CONTENT_VERSIONS:
        return
    listed = {tool.name for tool in tools}
    unchecked = [
        str(tool["name"]) for tool in contract if "outputSchema" in tool and tool.get("name") in listed
    ]
    if unchecked:
        logger.warning(
            "the server speaks %s, which has no output schemas: the result shape of %s "
            "cannot be checked on connect (a result that does not fit raises ResultMismatch)",
            protocol_version,
            ", ".join(f"tool {name!r}" for name in unchecked),
        )


def _tools_page(
    result: Mapping[str, Any], server_id: str, seen: set[str]
) -> tuple[list[ListedTool], str | None]:
    tools = result.get("tools")
    if not isinstance(tools, list):
        raise ProtocolError("tools/list result has no tools array", reason="invalid_result")
    listed = [ListedTool.from_raw(raw, server_id) for raw in tools]
    cursor = result.get("nextCursor")
    if cursor is None:
        return listed, None
    if not isinstance(cursor, str) or cursor in seen:
        raise ProtocolError(
            f"tools/list returned a bad or repeated cursor {cursor!r}", reason="invalid_cursor"
        )
    seen.add(cursor)
    return listed, cursor


def _argv(command: str | Sequence[str]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [os.fspath(c) for c in command]


# --------------------------------------------------------------------------- tasks


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
            status_message=_str_or_none(task.get("statusMessage")),
            created_at=_str_or_none(task.get("createdAt")),
            last_updated_at=_str_or_none(task.get("lastUpdatedAt")),
            ttl_ms=_int_or_none(task.get("ttlMs", task.get("ttl"))),
            poll_interval_ms=_int_or_none(task.get("pollIntervalMs", task.get("pollInterval"))),
            raw=dict(task),
        )


def _int_or_none(value: Any) -> int | None:
    return value if type(value) is int else None


class _TaskState:
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
        return _checked_tool_result(self.final)


def _poll_seconds(status: TaskStatus) -> float:
    milliseconds = status.poll_interval_ms
    seconds = (milliseconds if milliseconds is not None else _DEFAULT_POLL_MS) / 1000
    return min(max(seconds, _POLL_BOUNDS[0]), _POLL_BOUNDS[1])


def _remaining(deadline: float | None) -> float:
    return _NO_LIMIT if deadline is None else deadline - time.monotonic()


def _requires_tasks(error: Mapping[str, Any]) -> bool:
    """A 2026 ``-32021`` naming the tasks extension: the tool runs only as a task."""
    data = error.get("data")
    required = data.get("requiredCapabilities") if isinstance(data, dict) else None
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return (
        error.get("code") == -32021
        and isinstance(extensions, dict)
        and (TASKS_EXTENSION in extensions)
    )


def _progress_args(params: Mapping[str, Any]) -> tuple[float, float | None, str | None] | None:
    progress, total, message = params.get("progress"), params.get("total"), params.get("message")
    if not isinstance(progress, (int, float)) or isinstance(progress, bool):
        return None
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        total = None
    return progress, total, message if isinstance(message, str) else None


class TaskHandle(Generic[T]):
    """A tool call running as a task on the server (sync).

    ``status()`` asks the server for the task's state, ``result()`` waits until
    it ends and returns what the plain method would have returned (``ToolError``
    for an ``isError`` result, ``ProtocolError`` for a JSON-RPC error or a
    cancelled task), ``cancel()`` asks the server to stop it. When the server ran
    the call directly instead (no task support), ``task_id`` is None and the
    handle is already done.
    """

    __slots__ = ("_convert", "_session", "_state")

    def __init__(
        self, session: Session, state: _TaskState, convert: Callable[[dict[str, Any]], T]
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

    def status(self) -> TaskStatus:
        """The task's current state, fetched with ``tasks/get``."""
        return self._session._task_status(self._state)

    def result(self, timeout: float | None = None, *, cancel_on_timeout: bool = True) -> T:
        """Wait until the task ends and return its converted result; ``timeout``
        seconds (None: no limit) then ``Timeout``, after cancelling the task
        unless ``cancel_on_timeout=False``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        outcome = self._session._task_outcome(self._state, deadline, cancel_on_timeout, timeout)
        return self._convert(outcome)

    def cancel(self) -> TaskStatus:
        """Ask the server to cancel the task (``tasks/cancel``) and return its state
        after the request (a task that already ended keeps its final state)."""
        return self._session._task_cancel(self._state)

    def __repr__(self) -> str:
        last = self.last_status
        return (
            f"<TaskHandle {self.tool!r} task_id={self.task_id!r} status={last and last.status!r}>"
        )


class AsyncTaskHandle(Generic[T]):
    """The asyncio twin of ``TaskHandle``."""

    __slots__ = ("_convert", "_session", "_state")

    def __init__(
        self, session: AsyncSession, state: _TaskState, convert: Callable[[dict[str, Any]], T]
    ) -> None:
        self._session = session
        self._state = state
        self._convert = convert

    @property
    def task_id(self) -> str | None:
        """See ``TaskHandle.task_id``."""
        return self._state.task_id

    @property
    def tool(self) -> str:
        """See ``TaskHandle.tool``."""
        return self._state.tool

    @property
    def last_status(self) -> TaskStatus | None:
        """See ``TaskHandle.last_status``."""
        state = self._state
        return state.local_status() if state.task_id is None else state.last

    async def status(self) -> TaskStatus:
        """See ``TaskHandle.status``."""
        return await self._session._task_status(self._state)

    async def result(self, timeout: float | None = None, *, cancel_on_timeout: bool = True) -> T:
        """See ``TaskHandle.result``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        outcome = await self._session._task_outcome(
            self._state, deadline, cancel_on_timeout, timeout
        )
        return self._convert(outcome)

    async def cancel(self) -> TaskStatus:
        """See ``TaskHandle.cancel``."""
        return await self._session._task_cancel(self._state)

    def __repr__(self) -> str:
        last = self.last_status
        return (
            f"<AsyncTaskHandle {self.tool!r} task_id={self.task_id!r} "
            f"status={last and last.status!r}>"
        )


def _identity(result: dict[str, Any]) -> dict[str, Any]:
    return result


# --------------------------------------------------------------------------- sync session


class _Waiter:
    """A one-shot future: the caller blocks on ``lock`` until the reader fills a
    field and releases it (a bare lock is the cheapest cross-thread wake-up)."""

    __slots__ = ("error", "failure", "lock", "result")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.failure: BaseException | None = None


class _SessionState:
    """Fields and read-only views both sessions share."""

    def __init__(
        self,
        *,
        contract: Sequence[Mapping[str, Any]],
        verify: Verify,
        timeout: float,
        server_id: str,
        on_notification: NotificationHandler | None,
        protocol: ProtocolChoice,
        probe_timeout: float,
    ) -> None:
        if verify not in ("strict", "warn", "off"):
            raise ValueError(f"verify must be 'strict', 'warn' or 'off', not {verify!r}")
        if protocol not in ("auto", "legacy", "modern"):
            raise ValueError(f"protocol must be 'auto', 'legacy' or 'modern', not {protocol!r}")
        self.contract = list(contract)
        self.verify: Verify = verify
        self.timeout = timeout
        self.server_id = server_id
        self.on_notification = on_notification
        self.protocol: ProtocolChoice = protocol
        self.probe_timeout = probe_timeout
        self.task_ttl_ms = DEFAULT_TASK_TTL_MS
        self.protocol_version = ""
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.contract_warnings: list[Change] = []
        self._progress: dict[Any, Callable[[float, float | None, str | None], object]] = {}
        self._connected = False
        self._closed = False

    @property
    def era(self) -> Era | None:
        """``"modern"`` (2026-07-28, stateless) or ``"legacy"`` (the initialize
        handshake) once connected; decided once per session, i.e. per server process."""
        return self._era_core().era

    def _era_core(self) -> ClientCore[Any]:
        raise NotImplementedError

    def _adopt_handshake(self, core: ClientCore[Any]) -> None:
        handshake = core.handshake
        assert handshake is not None
        self.protocol_version = handshake.protocol_version
        self.server_info = handshake.server_info
        self.server_capabilities = handshake.capabilities
        self.instructions = handshake.instructions

    def _probe_limit(self, step: Discover) -> float:
        return min(self.timeout, self.probe_timeout) if step.probe else self.timeout

    def _legacy_tasks(self) -> bool:
        """Whether this handshake-era server takes task-augmented ``tools/call``."""
        if self.protocol_version != "2025-11-25":
            return False
        tasks = self.server_capabilities.get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return isinstance(tools, dict) and "call" in tools

    def _call_params(
        self, name: str, arguments: Mapping[str, Any], legacy_task: bool
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "name": name,
            "arguments": arguments if type(arguments) is dict else dict(arguments),
        }
        if legacy_task:
            params["task"] = {"ttl": self.task_ttl_ms}
        return params

    def _started(
        self, name: str, result: dict[str, Any], legacy_task: bool, token: int | None
    ) -> _TaskState | None:
        """The task a ``tools/call`` result created, or None for a direct result."""
        core = self._era_core()
        kind = core.result_type(result, f"tools/call {name!r}", _CALL_RESULT_TYPES)
        if kind == "task":
            state = _TaskState(name, "modern", created=TaskStatus.from_wire(result), token=token)
        elif legacy_task and isinstance(result.get("task"), dict) and "content" not in result:
            state = _TaskState(
                name, "legacy", created=TaskStatus.from_wire(result["task"]), token=token
            )
        else:
            return None
        if state.last is not None and state.last.terminal and state.era == "modern":
            state.absorb(result)  # created already ended: a modern result carries it
        return state

    def _notify(self, event: Notification) -> None:
        if event.method == "notifications/progress":
            callback = self._progress.get(event.params.get("progressToken"))
            arguments = _progress_args(event.params)
            if callback is not None and arguments is not None:
                self._run_progress(event.params.get("progressToken"), callback, arguments)
        if self.on_notification is None:
            logger.debug("notification from %s: %s", self.server_id, event.method)
            return
        try:
            self.on_notification(event)
        except Exception:
            logger.exception("the notification handler failed on %s", event.method)

    def _run_progress(
        self,
        token: Any,
        callback: Callable[[float, float | None, str | None], object],
        arguments: tuple[float, float | None, str | None],
    ) -> None:
        try:
            callback(*arguments)
        except Exception:
            logger.exception("the progress callback failed")

    def _check_usable(self) -> None:
        # Using a session outside its lifetime is a bug in the caller, not an MCP error.
        if self._closed:
            raise RuntimeError("the session is closed")
        if not self._connected:
            raise RuntimeError("the session is not connected; call connect() or use `with`")


class Session(_SessionState):
    """A synchronous MCP client session.

    A reader thread parses what the server writes and wakes the waiting caller,
    so several threads may call tools on one session at once.

    ``protocol="auto"`` (default) probes with ``server/discover`` and speaks the
    2026-07-28 stateless revision to a server that answers it, else falls back to
    the ``initialize`` handshake (PROTOCOL.md §4.5); a probe waits at most
    ``min(timeout, probe_timeout)`` seconds. ``"legacy"`` and ``"modern"`` skip
    the probe and speak that era only.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str,
        client_info: Mapping[str, Any] | None = None,
        on_notification: NotificationHandler | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    ) -> None:
        super().__init__(
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            on_notification=on_notification,
            protocol=protocol,
            probe_timeout=probe_timeout,
        )
        self.transport = transport
        self._core: ClientCore[_Waiter] = ClientCore(client_info)
        self._gone = False  # set once the server side ended; no new request may wait

    def _era_core(self) -> ClientCore[Any]:
        return self._core

    @classmethod
    def stdio(
        cls,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> Session:
        """A session with a server run as a child process (a ``str`` command is
        split with ``shlex``); ``server_id`` defaults to the command line.

        ``env=None`` inherits this process's environment; a mapping *replaces* it,
        as with ``subprocess`` (merge ``os.environ`` yourself to extend it). When
        that mapping has no ``PATH``, the program is still looked up on ours.

        ``max_message_bytes`` bounds one line from the server (16 MiB by default,
        the server's own default): a longer one is never buffered whole; it fails
        every pending and later call with ``ProtocolError`` (``reason``
        ``"message_too_large"``) and the server is stopped.
        """
        argv = _argv(command)
        return cls(
            StdioTransport(argv, env=env, cwd=cwd, max_message_bytes=max_message_bytes),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id if server_id is not None else shlex.join(argv),
            protocol=protocol,
            probe_timeout=probe_timeout,
        )

    @classmethod
    def in_memory(
        cls,
        serve: ServeFunction,
        *,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str = "in-memory",
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    ) -> Session:
        """A session with a server running in this process (see ``InMemoryTransport``)."""
        return cls(
            InMemoryTransport(serve),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            protocol=protocol,
            probe_timeout=probe_timeout,
        )

    # -- lifecycle --------------------------------------------------------------------

    def connect(self) -> None:
        """Start the transport, agree on the protocol era, then check the contract;
        on any failure the server is stopped before the error propagates."""
        if self._connected or self._closed:
            if self._closed:
                raise RuntimeError("a closed session cannot be reconnected")
            return
        self.transport.start(self._on_line, self._on_close)
        self._connected = True
        try:
            self._open()
            if self.verify != "off":
                self.contract_warnings = _check_contract(
                    self.contract, self.list_tools(), self.protocol_version, self.verify
                )
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        # ClientCore.negotiate decides; this loop only runs the steps it yields.
        steps: Generator[Step, Outcome | None, None] = self._core.negotiate(self.protocol)
        outcome: Outcome | None = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration:
                break
            outcome = self._run_step(step)
        self._adopt_handshake(self._core)

    def _run_step(self, step: Step) -> Outcome | None:
        if isinstance(step, SendLine):
            self.transport.send(step.line)
            return None
        waiter = _Waiter()
        if isinstance(step, Discover):
            request_id, line = self._core.discover_request(waiter, step.version)
            try:
                # A probe is never cancelled: a handshake-era server must see nothing
                # but the probe and the initialize that follows it.
                return self._exchange(
                    request_id,
                    line,
                    waiter,
                    "server/discover",
                    self._probe_limit(step),
                    cancellable=not step.probe,
                )
            except Timeout:
                if not step.probe:
                    raise
                logger.info("%s: no answer to server/discover; trying initialize", self.server_id)
                return Outcome()
        request_id, line = self._core.initialize_request(waiter)
        return self._exchange(
            request_id, line, waiter, "initialize", self.timeout, cancellable=False
        )

    def close(self) -> None:
        """Stop the server (close stdin, wait, terminate, kill); idempotent."""
        if self._closed:
            return
        self._closed = True
        self.transport.stop()

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- requests ----------------------------------------------------------------------

    def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send any request and return its result object (JSON-RPC error → ``ProtocolError``).
        On a 2026-07-28 connection the ``_meta`` envelope is added and the result
        must be ``resultType: "complete"``."""
        return self._request(method, params, timeout)

    def _request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        timeout: float | None,
        allowed: frozenset[str] = frozenset({"complete"}),
    ) -> dict[str, Any]:
        self._check_usable()
        waiter = _Waiter()
        request_id, line = self._core.request(method, params, waiter)
        result = self._wait(request_id, line, waiter, method, timeout)
        self._core.result_type(result, method, allowed)
        return result

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification."""
        self._check_usable()
        self.transport.send(self._core.notification(method, params))

    def list_tools(self) -> list[ListedTool]:
        """Every tool the server lists, following ``nextCursor`` pages."""
        seen: set[str] = set()
        tools, cursor = _tools_page(self.request("tools/list"), self.server_id, seen)
        while cursor is not None:
            page, cursor = _tools_page(
                self.request("tools/list", {"cursor": cursor}), self.server_id, seen
            )
            tools.extend(page)
        return tools

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        task: bool = False,
    ) -> dict[str, Any]:
        """Call a tool and return its ``CallToolResult``; ``isError`` → ``ToolError``,
        JSON-RPC error → ``ProtocolError``, no answer in time → cancel + ``Timeout``.

        ``on_progress`` receives the call's ``notifications/progress``. ``task=True``
        (for a tool whose contract requires tasks) runs it as a task where the
        server supports tasks and waits for its result. A server-made task is
        followed the same way; ``timeout`` bounds the whole wait and a task still
        running then is cancelled with ``tasks/cancel``.
        """
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        started = self._start_call(name, arguments, limit, on_progress, task)
        if isinstance(started, _TaskState):
            return self._task_outcome(started, deadline, True, limit)
        return _checked_tool_result(started)

    @overload
    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[dict[str, Any]]: ...

    @overload
    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], T],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[T]: ...

    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[Any]:
        """Start a tool call as a task and return its handle at once; its
        ``result()`` passes the checked ``CallToolResult`` through ``convert``.

        2025-11-25: the call carries ``task: {ttl}`` when the server declares
        task-augmented ``tools/call``. 2026-07-28: the request declares the tasks
        extension and the server decides. A server that answers directly (no task)
        gives a handle that is already done (``task_id`` None); ``timeout`` bounds
        only the call that creates the task.
        """
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        started = self._start_call(name, arguments, limit, on_progress, True)
        if not isinstance(started, _TaskState):
            started = _TaskState(name, self._core.era or "legacy", final=started)
        return TaskHandle(self, started, convert or _identity)

    def _start_call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        limit: float,
        on_progress: ProgressCallback | None,
        as_task: bool,
    ) -> dict[str, Any] | _TaskState:
        """Send ``tools/call``: the raw direct result, or the state of the task it made."""
        legacy_task = as_task and self._legacy_tasks()
        label = f"tools/call {name!r}"
        waiter = _Waiter()
        request_id, line = self._core.request(
            "tools/call",
            self._call_params(name, arguments, legacy_task),
            waiter,
            progress=on_progress is not None,
            tasks=as_task,
        )
        token = request_id if on_progress is not None else None
        if on_progress is not None:
            self._progress[request_id] = on_progress
        state: _TaskState | None = None
        try:
            outcome = self._exchange(request_id, line, waiter, label, limit)
            if outcome.error is not None:
                if not as_task and _requires_tasks(outcome.error):
                    # the server runs this tool only as a task: go along with it
                    return self._start_call(name, arguments, limit, on_progress, True)
                raise error_from_response(outcome.error, label)
            assert outcome.result is not None
            state = self._started(name, outcome.result, legacy_task, token)
            return outcome.result if state is None else state
        finally:
            if state is None or state.settled:
                self._progress.pop(request_id, None)

    # -- tasks ------------------------------------------------------------------------

    def _task_status(self, state: _TaskState) -> TaskStatus:
        if state.task_id is None:
            return state.local_status()
        body = self._request("tasks/get", {"taskId": state.task_id}, None, _TASK_GET_RESULT_TYPES)
        status = state.absorb(body)
        if status.terminal and state.era == "modern":
            self._progress.pop(state.token, None)
        return status

    def _task_outcome(
        self,
        state: _TaskState,
        deadline: float | None,
        cancel_on_timeout: bool,
        limit: float | None,
    ) -> dict[str, Any]:
        """Wait for the task to end: the checked result, or its error raised; after
        ``limit`` seconds (the deadline), cancel it unless told not to and raise
        ``Timeout``. A settled task answers from memory, even on a closed session."""
        if not state.settled:
            self._check_usable()
            try:
                if state.era == "legacy":
                    self._legacy_outcome(state, deadline)
                else:
                    self._poll_outcome(state, deadline)
            except Timeout:
                if cancel_on_timeout:
                    self._cancel_quietly(state)
                if limit is None:
                    raise  # a tasks/* request went unanswered
                raise Timeout(f"{state.label}: no result within {limit:g}s") from None
        self._progress.pop(state.token, None)
        return state.outcome()

    def _legacy_outcome(self, state: _TaskState, deadline: float | None) -> None:
        # 2025-11-25: tasks/result blocks until the task ends. It is abandoned, not
        # cancelled, on timeout: tasks are stopped with tasks/cancel only.
        assert state.task_id is not None
        waiter = _Waiter()
        request_id, line = self._core.request("tasks/result", {"taskId": state.task_id}, waiter)
        outcome = self._exchange(
            request_id, line, waiter, state.label, _remaining(deadline), cancellable=False
        )
        if outcome.result is not None:
            state.final = outcome.result
            return
        assert outcome.error is not None
        try:
            self._task_status(state)  # a cancelled task reads as cancelled, in both eras
        except McpError:
            pass
        if state.failure is None:
            state.failure = error_from_response(outcome.error, state.label)

    def _poll_outcome(self, state: _TaskState, deadline: float | None) -> None:
        # 2026-07-28: no tasks/result; poll tasks/get at the server's pollIntervalMs.
        while True:
            remaining = _remaining(deadline)
            if remaining <= 0:
                raise Timeout(f"{state.label}: the task did not end in time")
            status = self._task_status_within(state, remaining)
            if status.terminal:
                return
            if status.status == "input_required":
                state.failure = ProtocolError(
                    f"{state.label}: the task asks for input, which this client cannot give",
                    reason="input_required",
                    data=status.raw,
                )
                return
            time.sleep(min(_poll_seconds(status), max(_remaining(deadline), 0.0)))

    def _task_status_within(self, state: _TaskState, remaining: float) -> TaskStatus:
        assert state.task_id is not None
        body = self._request(
            "tasks/get",
            {"taskId": state.task_id},
            min(self.timeout, remaining),
            _TASK_GET_RESULT_TYPES,
        )
        return state.absorb(body)

    def _task_cancel(self, state: _TaskState) -> TaskStatus:
        if state.task_id is None:
            return state.local_status()
        try:
            body = self._request(
                "tasks/cancel", {"taskId": state.task_id}, None, _TASK_GET_RESULT_TYPES
            )
        except ProtocolError as exc:
            if exc.code != -32602:
                raise
            return self._task_status(state)  # 2025-11-25: the task already ended
        if "taskId" in body and "status" in body:
            status = state.absorb(body)  # 2025-11-25 answers with the task
        else:
            status = self._task_status(state)  # 2026 answers with an ack
        if status.terminal:
            self._progress.pop(state.token, None)
        return status

    def _cancel_quietly(self, state: _TaskState) -> None:
        if state.task_id is None or self._gone or self._closed:
            return
        try:
            self._request(
                "tasks/cancel", {"taskId": state.task_id}, _CANCEL_TIMEOUT, _TASK_GET_RESULT_TYPES
            )
        except McpError as exc:
            logger.info("%s: tasks/cancel failed: %s", state.label, exc)
        self._progress.pop(state.token, None)

    # -- waiting ----------------------------------------------------------------------

    def _wait(
        self,
        request_id: int,
        line: bytes,
        waiter: _Waiter,
        label: str,
        timeout: float | None,
        *,
        cancellable: bool = True,
    ) -> dict[str, Any]:
        limit = self.timeout if timeout is None else timeout
        outcome = self._exchange(request_id, line, waiter, label, limit, cancellable=cancellable)
        if outcome.error is not None:
            raise error_from_response(outcome.error, label)
        assert outcome.result is not None
        return outcome.result

    def _exchange(
        self,
        request_id: int,
        line: bytes,
        waiter: _Waiter,
        label: str,
        limit: float,
        *,
        cancellable: bool = True,
    ) -> Outcome:
        """Send a registered request and wait ``limit`` seconds for its response."""
        if self._gone:
            # The reader already failed everything pending; this one came after.
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            self.transport.send(line)
        except BaseException:
            self._core.forget(request_id)
            raise
        try:
            answered = waiter.lock.acquire(True, min(max(limit, 0.0), _MAX_WAIT))
        except BaseException:  # KeyboardInterrupt while blocked: do not leave it pending
            self._abandon(request_id, "the caller was interrupted", cancellable)
            raise
        if not answered:
            if self._core.forget(request_id) is None:
                waiter.lock.acquire()  # the response won the race; it is being delivered
            else:
                self._abandon(request_id, f"timed out after {limit:g}s", cancellable)
                raise Timeout(f"{label}: no answer within {limit:g}s")
        if waiter.failure is not None:
            raise waiter.failure
        return Outcome(waiter.result, waiter.error)

    def _abandon(self, request_id: int, reason: str, cancellable: bool) -> None:
        line = self._core.cancel(request_id, reason)
        if cancellable:  # initialize MUST NOT be cancelled
            try:
                self.transport.send(line)
            except ServerExited:
                pass

    # -- reader-thread callbacks ----------------------------------------------------------

    def _on_line(self, line: bytes) -> None:
        for event in self._core.receive(line):
            if isinstance(event, Response):
                waiter = event.waiter
                waiter.result = event.result
                waiter.error = event.error
                waiter.lock.release()
            elif isinstance(event, Reply):
                try:
                    self.transport.send(event.line)
                except ServerExited:
                    pass
            else:
                self._notify(event)

    def _on_close(self) -> None:
        self._gone = True
        for waiter in self._core.fail_all():
            waiter.failure = self.transport.exit_error()
            waiter.lock.release()


# --------------------------------------------------------------------------- async session


class AsyncSession(_SessionState):
    """The asyncio twin of ``Session``, method for method."""

    def __init__(
        self,
        transport: AsyncTransport,
        *,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str,
        client_info: Mapping[str, Any] | None = None,
        on_notification: NotificationHandler | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    ) -> None:
        super().__init__(
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            on_notification=on_notification,
            protocol=protocol,
            probe_timeout=probe_timeout,
        )
        self.transport = transport
        self._core: ClientCore[asyncio.Future[Response[Any]]] = ClientCore(client_info)
        self._gone = False
        # async progress callbacks still running, by progress token
        self._progress_tasks: dict[Any, set[asyncio.Task[Any]]] = {}

    def _era_core(self) -> ClientCore[Any]:
        return self._core

    @classmethod
    def stdio(
        cls,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> AsyncSession:
        """See ``Session.stdio``."""
        argv = _argv(command)
        return cls(
            AsyncStdioTransport(argv, env=env, cwd=cwd, max_message_bytes=max_message_bytes),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id if server_id is not None else shlex.join(argv),
            protocol=protocol,
            probe_timeout=probe_timeout,
        )

    @classmethod
    def in_memory(
        cls,
        serve: ServeFunction,
        *,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str = "in-memory",
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    ) -> AsyncSession:
        """See ``Session.in_memory``."""
        return cls(
            AsyncInMemoryTransport(serve),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            protocol=protocol,
            probe_timeout=probe_timeout,
        )

    async def connect(self) -> None:
        """See ``Session.connect``."""
        if self._connected or self._closed:
            if self._closed:
                raise RuntimeError("a closed session cannot be reconnected")
            return
        await self.transport.start(self._on_line, self._on_close)
        self._connected = True
        try:
            await self._open()
            if self.verify != "off":
                self.contract_warnings = _check_contract(
                    self.contract, await self.list_tools(), self.protocol_version, self.verify
                )
        except BaseException:
            await self.close()
            raise

    async def _open(self) -> None:
        # See Session._open.
        steps: Generator[Step, Outcome | None, None] = self._core.negotiate(self.protocol)
        outcome: Outcome | None = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration:
                break
            outcome = await self._run_step(step)
        self._adopt_handshake(self._core)

    async def _run_step(self, step: Step) -> Outcome | None:
        if isinstance(step, SendLine):
            await self.transport.send(step.line)
            return None
        future = self._new_future()
        if isinstance(step, Discover):
            request_id, line = self._core.discover_request(future, step.version)
            try:
                return await self._exchange(
                    request_id,
                    line,
                    future,
                    "server/discover",
                    self._probe_limit(step),
                    cancellable=not step.probe,
                )
            except Timeout:
                if not step.probe:
                    raise
                logger.info("%s: no answer to server/discover; trying initialize", self.server_id)
                return Outcome()
        request_id, line = self._core.initialize_request(future)
        return await self._exchange(
            request_id, line, future, "initialize", self.timeout, cancellable=False
        )

    async def close(self) -> None:
        """See ``Session.close``."""
        if self._closed:
            return
        self._closed = True
        await self.transport.stop()

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """See ``Session.request``."""
        return await self._request(method, params, timeout)

    async def _request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        timeout: float | None,
        allowed: frozenset[str] = frozenset({"complete"}),
    ) -> dict[str, Any]:
        self._check_usable()
        future = self._new_future()
        request_id, line = self._core.request(method, params, future)
        result = await self._wait(request_id, line, future, method, timeout)
        self._core.result_type(result, method, allowed)
        return result

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """See ``Session.notify``."""
        self._check_usable()
        await self.transport.send(self._core.notification(method, params))

    async def list_tools(self) -> list[ListedTool]:
        """See ``Session.list_tools``."""
        seen: set[str] = set()
        tools, cursor = _tools_page(await self.request("tools/list"), self.server_id, seen)
        while cursor is not None:
            page, cursor = _tools_page(
                await self.request("tools/list", {"cursor": cursor}), self.server_id, seen
            )
            tools.extend(page)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
        task: bool = False,
    ) -> dict[str, Any]:
        """See ``Session.call_tool``; ``on_progress`` may also be a coroutine function."""
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        started = await self._start_call(name, arguments, limit, on_progress, task)
        if isinstance(started, _TaskState):
            return await self._task_outcome(started, deadline, True, limit)
        return _checked_tool_result(started)

    @overload
    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
    ) -> AsyncTaskHandle[dict[str, Any]]: ...

    @overload
    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], T],
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
    ) -> AsyncTaskHandle[T]: ...

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        convert: Callable[[dict[str, Any]], Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: AsyncProgressCallback | None = None,
    ) -> AsyncTaskHandle[Any]:
        """See ``Session.start_tool``."""
        self._check_usable()
        limit = self.timeout if timeout is None else timeout
        started = await self._start_call(name, arguments, limit, on_progress, True)
        if not isinstance(started, _TaskState):
            started = _TaskState(name, self._core.era or "legacy", final=started)
        return AsyncTaskHandle(self, started, convert or _identity)

    async def _start_call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        limit: float,
        on_progress: AsyncProgressCallback | None,
        as_task: bool,
    ) -> dict[str, Any] | _TaskState:
        """See ``Session._start_call``."""
        legacy_task = as_task and self._legacy_tasks()
        label = f"tools/call {name!r}"
        future = self._new_future()
        request_id, line = self._core.request(
            "tools/call",
            self._call_params(name, arguments, legacy_task),
            future,
            progress=on_progress is not None,
            tasks=as_task,
        )
        token = request_id if on_progress is not None else None
        if on_progress is not None:
            self._progress[request_id] = on_progress
        try:
            outcome = await self._exchange(request_id, line, future, label, limit)
            if outcome.error is not None:
                if not as_task and _requires_tasks(outcome.error):
                    self._progress_drop(request_id)
                    return await self._start_call(name, arguments, limit, on_progress, True)
                raise error_from_response(outcome.error, label)
            assert outcome.result is not None
            state = self._started(name, outcome.result, legacy_task, token)
        except BaseException:
            self._progress_drop(request_id)
            raise
        if state is None or state.settled:
            await self._progress_done(request_id)
        return outcome.result if state is None else state

    # -- progress -----------------------------------------------------------------------

    def _run_progress(
        self,
        token: Any,
        callback: Callable[[float, float | None, str | None], object],
        arguments: tuple[float, float | None, str | None],
    ) -> None:
        try:
            outcome = callback(*arguments)
        except Exception:
            logger.exception("the progress callback failed")
            return
        if inspect.isawaitable(outcome):
            task = asyncio.ensure_future(outcome)
            running = self._progress_tasks.setdefault(token, set())
            running.add(task)
            task.add_done_callback(_progress_task_done)
            task.add_done_callback(running.discard)

    async def _progress_done(self, token: Any) -> None:
        """Stop routing ``token``'s progress and let its running callbacks finish."""
        if token is None:
            return
        self._progress.pop(token, None)
        running = self._progress_tasks.pop(token, None)
        if running:
            await asyncio.gather(*running, return_exceptions=True)

    def _progress_drop(self, token: Any) -> None:
        """Stop routing ``token``'s progress and cancel its running callbacks (the
        call failed or was cancelled: nobody waits for them)."""
        if token is None:
            return
        self._progress.pop(token, None)
        for task in self._progress_tasks.pop(token, ()):
            task.cancel()

    # -- tasks ------------------------------------------------------------------------

    async def _task_status(self, state: _TaskState) -> TaskStatus:
        if state.task_id is None:
            return state.local_status()
        body = await self._request(
            "tasks/get", {"taskId": state.task_id}, None, _TASK_GET_RESULT_TYPES
        )
        status = state.absorb(body)
        if status.terminal and state.era == "modern":
            await self._progress_done(state.token)
        return status

    async def _task_outcome(
        self,
        state: _TaskState,
        deadline: float | None,
        cancel_on_timeout: bool,
        limit: float | None,
    ) -> dict[str, Any]:
        """See ``Session._task_outcome``; a waiter cancelled by its caller cancels
        the task too (unless told not to), without waiting for the ack."""
        if not state.settled:
            self._check_usable()
            try:
                if state.era == "legacy":
                    await self._legacy_outcome(state, deadline)
                else:
                    await self._poll_outcome(state, deadline)
            except Timeout:
                if cancel_on_timeout:
                    await self._cancel_quietly(state)
                if limit is None:
                    raise
                raise Timeout(f"{state.label}: no result within {limit:g}s") from None
            except asyncio.CancelledError:
                if cancel_on_timeout:
                    self._cancel_nowait(state)
                raise
        await self._progress_done(state.token)
        return state.outcome()

    async def _legacy_outcome(self, state: _TaskState, deadline: float | None) -> None:
        assert state.task_id is not None
        future = self._new_future()
        request_id, line = self._core.request("tasks/result", {"taskId": state.task_id}, future)
        outcome = await self._exchange(
            request_id, line, future, state.label, _remaining(deadline), cancellable=False
        )
        if outcome.result is not None:
            state.final = outcome.result
            return
        assert outcome.error is not None
        try:
            await self._task_status(state)
        except McpError:
            pass
        if state.failure is None:
            state.failure = error_from_response(outcome.error, state.label)

    async def _poll_outcome(self, state: _TaskState, deadline: float | None) -> None:
        assert state.task_id is not None
        while True:
            remaining = _remaining(deadline)
            if remaining <= 0:
                raise Timeout(f"{state.label}: the task did not end in time")
            body = await self._request(
                "tasks/get",
                {"taskId": state.task_id},
                min(self.timeout, remaining),
                _TASK_GET_RESULT_TYPES,
            )
            status = state.absorb(body)
            if status.terminal:
                return
            if status.status == "input_required":
                state.failure = ProtocolError(
                    f"{state.label}: the task asks for input, which this client cannot give",
                    reason="input_required",
                    data=status.raw,
                )
                return
            await asyncio.sleep(min(_poll_seconds(status), max(_remaining(deadline), 0.0)))

    async def _task_cancel(self, state: _TaskState) -> TaskStatus:
        if state.task_id is None:
            return state.local_status()
        try:
            body = await self._request(
                "tasks/cancel", {"taskId": state.task_id}, None, _TASK_GET_RESULT_TYPES
            )
        except ProtocolError as exc:
            if exc.code != -32602:
                raise
            return await self._task_status(state)
        if "taskId" in body and "status" in body:
            status = state.absorb(body)
        else:
            status = await self._task_status(state)
        if status.terminal:
            await self._progress_done(state.token)
        return status

    async def _cancel_quietly(self, state: _TaskState) -> None:
        if state.task_id is None or self._gone or self._closed:
            return
        try:
            await self._request(
                "tasks/cancel", {"taskId": state.task_id}, _CANCEL_TIMEOUT, _TASK_GET_RESULT_TYPES
            )
        except McpError as exc:
            logger.info("%s: tasks/cancel failed: %s", state.label, exc)
        await self._progress_done(state.token)

    def _cancel_nowait(self, state: _TaskState) -> None:
        """Send ``tasks/cancel`` and forget it (from a cancelled coroutine)."""
        self._progress_drop(state.token)
        if state.task_id is None or self._gone or self._closed:
            return
        request_id, line = self._core.request(
            "tasks/cancel", {"taskId": state.task_id}, self._new_future()
        )
        self._core.forget(request_id)  # its ack, if any, is dropped as late
        try:
            self.transport.send_nowait(line)
        except ServerExited:
            pass

    # -- waiting ----------------------------------------------------------------------

    def _new_future(self) -> asyncio.Future[Response[Any]]:
        return asyncio.get_running_loop().create_future()

    async def _wait(
        self,
        request_id: int,
        line: bytes,
        future: asyncio.Future[Response[Any]],
        label: str,
        timeout: float | None,
        *,
        cancellable: bool = True,
    ) -> dict[str, Any]:
        limit = self.timeout if timeout is None else timeout
        outcome = await self._exchange(
            request_id, line, future, label, limit, cancellable=cancellable
        )
        if outcome.error is not None:
            raise error_from_response(outcome.error, label)
        assert outcome.result is not None
        return outcome.result

    async def _exchange(
        self,
        request_id: int,
        line: bytes,
        future: asyncio.Future[Response[Any]],
        label: str,
        limit: float,
        *,
        cancellable: bool = True,
    ) -> Outcome:
        """See ``Session._exchange``."""
        if self._gone:
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            await self.transport.send(line)
        except BaseException:
            self._core.forget(request_id)
            raise
        try:
            async with asyncio.timeout(None if limit == _NO_LIMIT else max(limit, 0.0)):
                response = await future
        except TimeoutError:
            self._abandon(request_id, f"timed out after {limit:g}s", cancellable)
            raise Timeout(f"{label}: no answer within {limit:g}s") from None
        except asyncio.CancelledError:
            self._abandon(request_id, "the caller was cancelled", cancellable)
            raise
        return Outcome(response.result, response.error)

    def _abandon(self, request_id: int, reason: str, cancellable: bool) -> None:
        line = self._core.cancel(request_id, reason)
        if cancellable and not self._gone:
            try:
                self.transport.send_nowait(line)
            except ServerExited:
                pass

    def _on_line(self, line: bytes) -> None:
        for event in self._core.receive(line):
            if isinstance(event, Response):
                future = event.waiter
                if not future.done():
                    future.set_result(event)
            elif isinstance(event, Reply):
                try:
                    self.transport.send_nowait(event.line)
                except ServerExited:
                    pass
            else:
                self._notify(event)

    def _on_close(self) -> None:
        self._gone = True
        for future in self._core.fail_all():
            if not future.done():
                future.set_exception(self.transport.exit_error())


def _progress_task_done(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("the progress callback failed", exc_info=task.exception())
