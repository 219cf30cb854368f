"""The sessions generated clients call: ``Session`` (threads) and ``AsyncSession``
(asyncio) run the handshake, check the server's tools against the contract and
make ``tools/list``/``tools/call`` requests over any line transport.

Both are thin shells around ``ClientCore``; they differ only in how a caller
waits for its response (a lock vs. a future).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from ._client_core import (
    ClientCore,
    Notification,
    Reply,
    Response,
    error_from_response,
)
from ._errors import ContractMismatch, ProtocolError, ServerExited, Timeout, ToolError
from ._fingerprint import tool_fingerprint
from ._transport import (
    AsyncInMemoryTransport,
    AsyncStdioTransport,
    AsyncTransport,
    InMemoryTransport,
    ServeFunction,
    StdioTransport,
    Transport,
)
from ._versions import TOOL_FIELDS

if TYPE_CHECKING:
    from ._compat import Change

__all__ = [
    "AsyncSession",
    "ListedTool",
    "NotificationHandler",
    "Session",
    "Verify",
    "convert_result",
]

logger = logging.getLogger("mcpgen.client")

Verify = Literal["strict", "warn", "off"]
NotificationHandler = Callable[[Notification], None]

_MAX_WAIT = threading.TIMEOUT_MAX


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
    "number": lambda value: type(value) in (int, float),
    "boolean": lambda value: type(value) is bool,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
}


def convert_result(result: Mapping[str, Any], returns: str) -> Any:
    """The value a generated method returns for a ``CallToolResult``.

    ``returns`` is the tool's declared type: ``string`` (the text blocks joined),
    ``integer``/``number``/``boolean``/``object``/``array`` (the text parsed as
    JSON and type-checked) or ``content`` (the content blocks as they came).
    """
    content = result.get("content")
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
            raise ProtocolError(
                f"the tool result is not a JSON {returns}: {text[:200]!r}", reason="bad_result"
            ) from None
    if not check(value):
        raise ProtocolError(
            f"the tool result is not a JSON {returns}: {text[:200]!r}", reason="bad_result"
        )
    return value


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
    # With verify="warn" the breaking changes stay in the list: they were logged
    # and the caller chose to go on, so they are warnings now.
    return changes


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
    ) -> None:
        if verify not in ("strict", "warn", "off"):
            raise ValueError(f"verify must be 'strict', 'warn' or 'off', not {verify!r}")
        self.contract = list(contract)
        self.verify: Verify = verify
        self.timeout = timeout
        self.server_id = server_id
        self.on_notification = on_notification
        self.protocol_version = ""
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.contract_warnings: list[Change] = []
        self._connected = False
        self._closed = False

    def _adopt_handshake(self, core: ClientCore[Any]) -> None:
        handshake = core.handshake
        assert handshake is not None
        self.protocol_version = handshake.protocol_version
        self.server_info = handshake.server_info
        self.server_capabilities = handshake.capabilities
        self.instructions = handshake.instructions

    def _notify(self, event: Notification) -> None:
        if self.on_notification is None:
            logger.debug("notification from %s: %s", self.server_id, event.method)
            return
        try:
            self.on_notification(event)
        except Exception:
            logger.exception("the notification handler failed on %s", event.method)

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
    ) -> None:
        super().__init__(
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            on_notification=on_notification,
        )
        self.transport = transport
        self._core: ClientCore[_Waiter] = ClientCore(client_info)
        self._gone = False  # set once the server side ended; no new request may wait

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
    ) -> Session:
        """A session with a server run as a child process (a ``str`` command is
        split with ``shlex``); ``server_id`` defaults to the command line.

        ``env=None`` inherits this process's environment; a mapping *replaces* it,
        as with ``subprocess`` (merge ``os.environ`` yourself to extend it). When
        that mapping has no ``PATH``, the program is still looked up on ours.
        """
        argv = _argv(command)
        return cls(
            StdioTransport(argv, env=env, cwd=cwd),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id if server_id is not None else shlex.join(argv),
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
    ) -> Session:
        """A session with a server running in this process (see ``InMemoryTransport``)."""
        return cls(
            InMemoryTransport(serve),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
        )

    # -- lifecycle --------------------------------------------------------------------

    def connect(self) -> None:
        """Start the transport, run the handshake, then check the contract; on any
        failure the server is stopped before the error propagates."""
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
        # Era seam: a 2026-07-28 ``server/discover`` probe goes here, before the
        # fallback to the initialize handshake (PROTOCOL.md §4.5).
        waiter = _Waiter()
        request_id, line = self._core.initialize_request(waiter)
        result = self._wait(request_id, line, waiter, "initialize", None, cancellable=False)
        self.transport.send(self._core.accept_initialize(result))
        self._adopt_handshake(self._core)

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
        """Send any request and return its result object (JSON-RPC error → ``ProtocolError``)."""
        self._check_usable()
        waiter = _Waiter()
        request_id, line = self._core.request(method, params, waiter)
        return self._wait(request_id, line, waiter, method, timeout)

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
        self, name: str, arguments: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Call a tool and return its ``CallToolResult``; ``isError`` → ``ToolError``,
        JSON-RPC error → ``ProtocolError``, no answer in time → cancel + ``Timeout``."""
        self._check_usable()
        waiter = _Waiter()
        request_id, line = self._core.request(
            "tools/call",
            {"name": name, "arguments": arguments if type(arguments) is dict else dict(arguments)},
            waiter,
        )
        result = self._wait(request_id, line, waiter, f"tools/call {name!r}", timeout)
        return _checked_tool_result(result)

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
        if self._gone:
            # The reader already failed everything pending; this one came after.
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            self.transport.send(line)
        except BaseException:
            self._core.forget(request_id)
            raise
        limit = self.timeout if timeout is None else timeout
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
        if waiter.error is not None:
            raise error_from_response(waiter.error, label)
        assert waiter.result is not None
        return waiter.result

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
    ) -> None:
        super().__init__(
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            on_notification=on_notification,
        )
        self.transport = transport
        self._core: ClientCore[asyncio.Future[Response[Any]]] = ClientCore(client_info)
        self._gone = False

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
    ) -> AsyncSession:
        """See ``Session.stdio``."""
        argv = _argv(command)
        return cls(
            AsyncStdioTransport(argv, env=env, cwd=cwd),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id if server_id is not None else shlex.join(argv),
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
    ) -> AsyncSession:
        """See ``Session.in_memory``."""
        return cls(
            AsyncInMemoryTransport(serve),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
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
        # Era seam: see Session._open.
        future = self._new_future()
        request_id, line = self._core.initialize_request(future)
        result = await self._wait(request_id, line, future, "initialize", None, cancellable=False)
        await self.transport.send(self._core.accept_initialize(result))
        self._adopt_handshake(self._core)

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
        self._check_usable()
        future = self._new_future()
        request_id, line = self._core.request(method, params, future)
        return await self._wait(request_id, line, future, method, timeout)

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
        self, name: str, arguments: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """See ``Session.call_tool``."""
        self._check_usable()
        future = self._new_future()
        request_id, line = self._core.request(
            "tools/call",
            {"name": name, "arguments": arguments if type(arguments) is dict else dict(arguments)},
            future,
        )
        result = await self._wait(request_id, line, future, f"tools/call {name!r}", timeout)
        return _checked_tool_result(result)

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
        if self._gone:
            self._core.forget(request_id)
            raise self.transport.exit_error()
        try:
            await self.transport.send(line)
        except BaseException:
            self._core.forget(request_id)
            raise
        limit = self.timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(limit):
                response = await future
        except TimeoutError:
            self._abandon(request_id, f"timed out after {limit:g}s", cancellable)
            raise Timeout(f"{label}: no answer within {limit:g}s") from None
        except asyncio.CancelledError:
            self._abandon(request_id, "the caller was cancelled", cancellable)
            raise
        if response.error is not None:
            raise error_from_response(response.error, label)
        assert response.result is not None
        return response.result

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
