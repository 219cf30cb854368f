"""What the sync and async sessions share: callback types and ``SessionState`` (era, progress routing, notifications,
the parts of a call that do not wait).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import threading
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from .._errors import McpError
from ..contract.check import Verify
from ..telemetry.client import ClientTelemetry
from ..transport.http.wire import HttpPeer
from ..transport.lines import DEFAULT_MAX_MESSAGE_BYTES, ServeFunction
from .asking import decided, declined, question_of
from .core import (
    Asked,
    ClientCore,
    Era,
    Notification,
    ProgressFunction,
    ProtocolChoice,
    Reply,
    Response,
)

if TYPE_CHECKING:
    from ..contract.compare import Change
    from ..transport.http.auth import HttpAuth
    from .effects import Connection

logger = logging.getLogger("mcpgen.client")


NotificationHandler = Callable[[Notification], None]


#: Called with (progress, total, message) for each ``notifications/progress`` of a
#: request made with ``on_progress=``; it runs on the session's reader thread.
ProgressCallback = Callable[[float, float | None, str | None], None]


#: The async session also accepts a coroutine function; it runs as a task on the
#: loop and the call returns only once the callbacks of its progress have finished.
AsyncProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]

Progress = tuple[float, float | None, str | None]  # progress, total, message


T = TypeVar("T")


MAX_WAIT = threading.TIMEOUT_MAX


DEFAULT_PROBE_TIMEOUT = 5.0  # seconds a server/discover probe waits before falling back


DEFAULT_TASK_TTL_MS = 10 * 60 * 1000  # the ttl a 2025-11-25 task-augmented call asks for


def _argv(command: str | Sequence[str]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [os.fspath(c) for c in command]


def _progress_args(params: Mapping[str, Any]) -> Progress | None:
    progress, total, message = params.get("progress"), params.get("total"), params.get("message")
    if not isinstance(progress, (int, float)) or isinstance(progress, bool):
        return None
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        total = None
    return progress, total, message if isinstance(message, str) else None


def identity(result: dict[str, Any]) -> dict[str, Any]:
    return result


TR = TypeVar("TR")  # the transport a session drives
W = TypeVar("W")  # what a caller waits on: a lock (sync) or a future (async)


class SessionState(Generic[TR, W]):
    """Fields, read-only views and constructors both sessions share; the protocol
    flows (``client.flows``) read this state and return what they learn, the sessions
    record it (``_adopt``) and the drivers do the I/O."""

    def __init__(
        self,
        transport: TR,
        *,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str,
        client_info: Mapping[str, Any] | None = None,
        on_notification: NotificationHandler | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        on_input: Callable[[str, dict[str, Any]], Any] | None = None,
    ) -> None:
        if verify not in ("strict", "warn", "off"):
            raise ValueError(f"verify must be 'strict', 'warn' or 'off', not {verify!r}")
        if protocol not in ("auto", "legacy", "modern"):
            raise ValueError(f"protocol must be 'auto', 'legacy' or 'modern', not {protocol!r}")
        self.transport = transport
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
        self._core: ClientCore[W] = ClientCore(client_info)
        # answers tools that ask (client.asking); given, elicitation is declared
        self.on_input = on_input
        self._core.asks = on_input is not None
        # the async session's coroutine progress callbacks still running, by token
        self._progress_tasks: dict[Any, set[asyncio.Task[Any]]] = {}
        self._asking: set[asyncio.Task[Any]] = set()  # the async session's on_input tasks
        # what a Timeout adds to its message: where the server is (HTTP)
        self._timeout_hint = ""
        # spans and metrics (telemetry.client), from connect on; None: nothing records
        self._telemetry: ClientTelemetry | None = None
        # network.transport, server.address, server.port of the telemetry
        self._network: tuple[str, str | None, int | None] = ("pipe", None, None)

    @classmethod
    def _stdio_transport(cls, argv: list[str], **options: Any) -> TR:
        """The driver's stdio transport (options: ``env``, ``cwd``, ``max_message_bytes``)."""
        raise NotImplementedError

    @classmethod
    def _in_memory_transport(cls, serve: ServeFunction) -> TR:
        raise NotImplementedError

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
        on_input: Callable[[str, dict[str, Any]], Any] | None = None,
    ) -> Self:
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
            cls._stdio_transport(argv, env=env, cwd=cwd, max_message_bytes=max_message_bytes),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id if server_id is not None else shlex.join(argv),
            protocol=protocol,
            probe_timeout=probe_timeout,
            on_input=on_input,
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
        on_input: Callable[[str, dict[str, Any]], Any] | None = None,
    ) -> Self:
        """A session with a server running in this process (see ``InMemoryTransport``)."""
        return cls(
            cls._in_memory_transport(serve),
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id,
            protocol=protocol,
            probe_timeout=probe_timeout,
            on_input=on_input,
        )

    @classmethod
    def _http_transport(cls, url: str, **options: Any) -> Any:
        """The driver's HTTP transport (options: ``headers``, ``connect_timeout``,
        ``max_message_bytes``, ``auth``); it reports a request it cannot answer to ``on_failure``."""
        raise NotImplementedError

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: HttpAuth | None = None,
        contract: Sequence[Mapping[str, Any]] = (),
        verify: Verify = "strict",
        timeout: float = 30.0,
        server_id: str | None = None,
        protocol: ProtocolChoice = "auto",
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        on_input: Callable[[str, dict[str, Any]], Any] | None = None,
    ) -> Self:
        """A session with a Streamable HTTP endpoint (``http://host:port/mcp``);
        ``server_id`` defaults to the URL. Needs the ``http`` extra (httpx2).

        ``headers`` go with every request. ``auth``: a bearer token, a function
        returning one (called again once when the server answers 401), or
        ``ClientCredentials``/``AuthorizationCode`` to obtain OAuth tokens from the
        server's authorization server (discovered from its 401; needs the ``auth``
        extra); a 401 or 403 the client cannot get past raises ``Unauthorized`` or
        ``Forbidden``. ``timeout`` bounds each call as a whole, however slowly its answer
        arrives (and connecting). Redirects are followed only to the same origin.
        ``max_message_bytes`` bounds one message of an answer: a longer one fails
        that call with ``ProtocolError`` (``reason`` ``"message_too_large"``).
        """
        transport = cls._http_transport(
            url,
            headers=headers,
            connect_timeout=timeout,
            max_message_bytes=max_message_bytes,
            auth=auth,
        )
        session = cls(
            transport,
            contract=contract,
            verify=verify,
            timeout=timeout,
            server_id=server_id if server_id is not None else url,
            protocol=protocol,
            probe_timeout=probe_timeout,
            on_input=on_input,
        )
        transport.on_failure = session._on_failure
        session._mirror_headers(session.contract)
        where = urllib.parse.urlsplit(url)
        session._network = ("tcp", where.hostname, where.port)
        session._timeout_hint = (
            f" from {url} (check that the server is up; a slow tool needs a larger timeout)"
        )
        return session

    @property
    def stray_lines(self) -> tuple[int, bytes]:
        """Lines the server wrote that were no JSON-RPC message (logged and skipped; the
        stdio transport forbids them): how many, and the first, cut to 200 bytes."""
        return self._core.stray_lines, self._core.first_stray_line

    @property
    def core(self) -> ClientCore[W]:
        """The sans-I/O protocol state under this session (``ClientCore``: the
        connection's life, pending requests, progress callbacks, handshake), as
        ``client.flows`` reads it; not needed to call tools."""
        return self._core

    @property
    def era(self) -> Era | None:
        """``"modern"`` (2026-07-28, stateless) or ``"legacy"`` (the initialize
        handshake) once connected; decided once per session, i.e. per server process."""
        return self._core.era

    def _start_telemetry(self) -> None:
        """Connecting: record from now on, if a provider does (``telemetry.client``)."""
        self._telemetry = ClientTelemetry.start(*self._network)

    def _stop_telemetry(self) -> None:
        """Closed: the session's duration, once."""
        telemetry, self._telemetry = self._telemetry, None
        if telemetry is not None:
            telemetry.session_ended(self.protocol_version)

    def _mirror_headers(self, tools: Iterable[Mapping[str, Any]]) -> None:
        """Over HTTP, have calls of ``tools`` (descriptors: the contract's, then each
        listing's, which wins) send their ``x-mcp-header`` arguments as headers."""
        peer = getattr(self.transport, "peer", None)
        if isinstance(peer, HttpPeer):
            peer.learn_tools(tools)

    def _adopt(self, connection: Connection | None) -> None:
        """Record what ``flows.connect`` agreed (None: the session was connected)."""
        if connection is None:
            return
        handshake, self.contract_warnings = connection
        self.protocol_version = handshake.protocol_version
        self.server_info = handshake.server_info
        self.server_capabilities = handshake.capabilities
        self.instructions = handshake.instructions

    def _notify(self, event: Notification) -> None:
        if event.method == "notifications/progress":
            callback = self._core.progress_callbacks.get(event.params.get("progressToken"))
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

    def _run_progress(self, token: Any, callback: ProgressFunction, arguments: Progress) -> object:
        """Call a progress callback; what it returns (None if it failed, logged)."""
        try:
            return callback(*arguments)
        except Exception:
            logger.exception("the progress callback failed")
            return None

    def _progress_drop(self, token: Any) -> None:
        """Stop routing ``token``'s progress (the call failed or was cancelled)."""
        if token is not None:
            self._core.progress_callbacks.pop(token, None)

    # -- the reader's callbacks (the transport calls them; the drivers wake waiters) ----

    def _on_line(self, line: bytes) -> None:
        for event in self._core.receive(line):
            if isinstance(event, Response):
                self._deliver(event)
            elif isinstance(event, Reply):
                self._send_quietly(event.line)
            elif isinstance(event, Asked):
                self._answer_asked(event)
            else:
                self._notify(event)

    def _on_close(self) -> None:
        for waiter in self._core.lost():
            self._fail(waiter, None)

    def _on_failure(self, request_id: int, error: Callable[[], McpError]) -> None:
        """One request cannot be answered (an HTTP transport's POST failed or ended
        without its response): fail its caller, if it still waits, with ``error()``."""
        waiter = self._core.forget(request_id)
        if waiter is not None:
            self._fail(waiter, error())

    def _deliver(self, response: Response[W]) -> None:
        """Wake the caller waiting for ``response``."""
        raise NotImplementedError

    # -- asking (client.asking) ----------------------------------------------------------

    def _question(self, request: object) -> tuple[str, dict[str, Any]] | None:
        """The (message, schema) of one of an ``input_required`` result's requests,
        when it is an elicitation ``on_input`` can answer."""
        if self.on_input is None or not isinstance(request, Mapping):
            return None
        if request.get("method") != "elicitation/create":
            return None
        return question_of(request.get("params"))

    def _ask(self, question: tuple[str, dict[str, Any]] | None) -> dict[str, Any]:
        """``on_input``'s answer to ``question`` (sync callbacks), checked."""
        if question is None or self.on_input is None:
            return declined()
        message, schema = question
        try:
            returned = self.on_input(message, schema)
        except Exception:
            logger.exception("on_input failed; declining")
            return declined()
        return decided(returned, schema)

    def _answer_asked(self, event: Asked) -> None:
        """Answer an ``elicitation/create`` without blocking the reader."""
        raise NotImplementedError

    def _fail(self, waiter: W, error: McpError | None) -> None:
        """Wake a caller with ``error``, or (None) ``transport.exit_error()`` when
        its server is gone."""
        raise NotImplementedError

    def _send_quietly(self, line: bytes) -> None:
        """Write a line nobody waits for; a gone server is ignored."""
        raise NotImplementedError


#: A session of either kind, as the flows see it.
AnySession = SessionState[Any, Any]
