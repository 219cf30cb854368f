"""The sans-I/O server core: lines in, frames and tool invocations out.

``ServerConnection.receive(line)`` parses one line from the client and returns
actions: ``SendFrame`` (a frame to write), ``Invoke`` (a tool call the shell runs,
then reports with ``complete``) or ``Cancel`` (stop a running invocation). No
threads, no I/O, no event loop: the stdio shell, the in-memory transport and
the fuzzers all drive this same object. It is not thread-safe; a shell that
completes calls on other threads serialises its calls into it.

Calls that run in the background (tasks, async handlers, handlers with ``ctx``
or a ``timeout``) each hold a slot from their ``Invoke`` until the shell reports
the handler ended (``complete``, or ``release`` after answering a handler that
still runs past its timeout). With ``max_concurrent_calls`` slots taken, one
more is refused with ``SERVER_BUSY`` (-31000) before anything runs or any task
is created; inline calls, which the shell runs one at a time, need no slot.

With a ``rate_limit`` (``--rate-limit`` on stdio: one client per connection), each
request takes a token from the connection's bucket (``ratelimit.bucket``) at the
time the shell passes in (``receive(line, now)``: the core reads no clock); one
over the limit is answered ``RATE_LIMITED`` (-31001) with ``data.retryAfterMs``.
Notifications and responses are never refused.

Both protocol eras are served, and the first request decides, once per connection.
A non-``initialize`` request carrying ``_meta["io.modelcontextprotocol/
protocolVersion"]`` opens a stateless 2026-07-28 connection; anything else
opens a handshake-era one (2024-11-05 … 2025-11-25).

A request that arrives on its own, by a stateless transport (HTTP: a fresh
connection per request), enters by ``receive_stateless``: the connection takes the
state that request implies itself (its era, revision and log level, decided in
``server.stateless``), and every frame it answers with carries its HTTP status. A
shell sets none of this state. Such a connection's tasks may live in a store the
shell holds (``tasks_outside``): then a task call comes out as ``CreateTask`` and a
``tasks/*`` request as ``FetchTask`` or ``ListTasks``, and the shell reports back
(``task_created``, ``task_fetched``, ``task_page``); the task itself is created,
answered and run as over stdio, where the connection's own table holds it.

The actions live in ``server.actions``; the ``tasks/*`` requests and whether a call
runs as a task in ``server.task_methods`` (``TaskMethods``, a base of ``ServerConnection``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .._errors import ToolError
from ..auth.tokens import AuthInfo
from ..protocol.constants import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_SERVER_INFO,
    META_VERSION,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RATE_LIMITED,
    SERVER_BUSY,
    TASKS_EXTENSION,
    UNSUPPORTED_VERSION,
)
from ..protocol.jsonrpc import error_response, result_response, result_response_raw
from ..protocol.param_headers import param_header_refusal
from ..protocol.revisions import LATEST_HANDSHAKE, MODERN_VERSIONS, negotiate_version
from ..ratelimit.bucket import RateLimit, over_limit, take
from ..tasks.table import Task, TaskLimitReached, TaskTable
from .actions import (
    Action,
    Cancel,
    CreateTask,
    FetchTask,
    Invoke,
    ListTasks,
    SendFrame,
    error_frame,
    refusal,
    runs_inline,
)
from .asking import ELICITATION_VERSIONS, LegacyAsker, ModernAsker, Outbound
from .context import LOG_LEVELS, Asker, Context
from .sealing import StateRefused, binding_of, session_capabilities, session_token
from .stateless import (
    DEFAULT_STATELESS_VERSION,
    MODERN_HTTP_STATUS,
    Routing,
    envelope_refusal,
    handshake_log_level,
    stateless_era,
)
from .task_methods import TASKS_VERSION, TaskMethods
from .tools import (
    LIST_CACHE_SCOPE,
    LIST_TTL_MS,
    WRAPS,
    App,
    CallOutcome,
    ToolRuntime,
    for_revision,
)

__all__ = [
    "SERVER_BUSY",
    "Cancel",
    "CreateTask",
    "FetchTask",
    "Invoke",
    "ListTasks",
    "Routing",
    "SendFrame",
    "ServerConnection",
]

_decode = json.JSONDecoder().decode
_BATCH_VERSION = "2025-03-26"  # the one revision whose clients may send JSON-RPC batches
_NO_ROUTING = Routing()


_Handler = Callable[[Any, Mapping[str, Any]], list[Action]]


class ServerConnection(TaskMethods):
    """One client connection (one stdio process) of a tools-only MCP server."""

    # The handler (a method's name) of each request method, per era: class-wide,
    # since the HTTP shell builds a connection for every request.
    _LEGACY_HANDLERS: Mapping[str, str] = {
        "initialize": "_initialize",
        "ping": "_ping",
        "logging/setLevel": "_set_level",
        "tools/list": "_tools_list",
        "tools/call": "_tools_call",
        "tasks/get": "_tasks_get",
        "tasks/result": "_tasks_result",
        "tasks/list": "_tasks_list",
        "tasks/cancel": "_tasks_cancel",
    }
    _MODERN_HANDLERS: Mapping[str, str] = {
        "server/discover": "_discover",
        "tools/list": "_tools_list",
        "tools/call": "_tools_call",
        "tasks/get": "_tasks_get",
        "tasks/update": "_tasks_update",
        "tasks/cancel": "_tasks_cancel",
    }

    def __init__(
        self,
        app: App,
        *,
        emit: Callable[[bytes], None] | None = None,
        tasks: TaskTable | None = None,
        max_concurrent_calls: int | None = None,
        requestor: str | None = None,
        tasks_listed: bool = True,
        defer_checks: bool = False,
        tasks_outside: bool = False,
        rate_limit: RateLimit | None = None,
        auth: AuthInfo | None = None,
        outbound: Outbound | None = None,
    ) -> None:
        self.app = app
        self.auth = auth  # the request's verified token (HTTP with authorization): ctx.auth
        # True: a call that runs in the background (not inline) comes out as an
        # ``Invoke`` whose ``args`` are still unchecked (``checked`` False); the shell
        # checks them where it likes (the HTTP shell: off its event loop)
        self.defer_checks = defer_checks
        self.emit = emit  # where handler notifications (progress, logs) go
        self.max_concurrent_calls = max_concurrent_calls  # None: no bound
        self.running_calls = 0  # background calls holding a slot
        self.era: str | None = None  # "legacy" | "modern", fixed by the first request
        self.version: str | None = None  # negotiated handshake revision
        self.log_level: str | None = None  # set by logging/setLevel (handshake era)
        self.tasks = TaskTable() if tasks is None else tasks
        # stdio: one client per process, so its tasks are its own and listable; the
        # HTTP layer says who the requestor is (see server.task_methods)
        self.requestor = requestor
        self.tasks_listed = tasks_listed
        # True: the tasks live in a store the shell holds (CreateTask, FetchTask, ListTasks)
        self.tasks_outside = tasks_outside
        self._fetched = False  # tasks_outside: the task a tasks/* request names is in the table
        self._envelope_checked = False  # receive_stateless checked the envelope and routing
        # a 2026-07-28 request's Mcp-Param-* headers (HTTP), checked by tools/call
        self._param_headers: tuple[tuple[str, str], ...] | None = None
        self.in_flight: dict[Any, Invoke] = {}  # request id → running call (not tasks)
        self._task_invokes: dict[str, Invoke] = {}
        self._meta = {META_SERVER_INFO: dict(app.server_info)}
        self._request_meta: Mapping[str, Any] = {}
        self.rate_limit = rate_limit  # None: no limit
        self._tat = 0.0  # the rate bucket's state (ratelimit.bucket.take)
        self._now = 0.0  # the shell's clock at the line being read
        # A shell's telemetry (stdio): told every message ``receive`` decoded, with the
        # actions that answer it; it reads them, never changes them
        self.observe: Callable[[Any, list[Action]], None] | None = None
        # what the client declared at initialize (handshake era); and the requests
        # this connection sent it (elicitation/create), awaiting their responses
        self.client_capabilities: Mapping[str, Any] = {}
        self._outbound = outbound  # shared by a stateless shell's connections
        self._stateless = False  # entered by receive_stateless (hands out session ids)
        self._asker: ModernAsker | None = None  # this request's round (2026-07-28)

    # -- input ------------------------------------------------------------

    def receive(self, line: bytes | str, now: float = 0.0) -> list[Action]:
        """Everything one line from the client asks for; ``now`` is the shell's clock
        (monotonic seconds), read only with a ``rate_limit``."""
        self._now = now
        if not line.strip():
            return []  # blank lines between frames are harmless
        try:
            # Decode the UTF-8 ourselves: json.loads(bytes) first sniffs for UTF-16/32.
            # The same leniency as json.loads: a stray BOM, encoded lone surrogates.
            text = line.decode("utf-8-sig", "surrogatepass") if isinstance(line, bytes) else line
            message = _decode(text)
        except RecursionError:
            return refusal(None, INVALID_REQUEST, "Invalid Request: nested too deeply")
        except (ValueError, UnicodeDecodeError):
            return refusal(None, PARSE_ERROR, "Parse error: invalid JSON")
        if isinstance(message, list):
            return self._batch(message)
        actions = self._message(message)
        if self.observe is not None:
            self.observe(message, actions)
        return actions

    def receive_stateless(
        self, message: Mapping[str, Any], routing: Routing = _NO_ROUTING
    ) -> list[Action]:
        """Everything one request that arrived on its own asks for (see the module
        docstring): ``message`` is a decoded request, ``routing`` what its transport
        said beside it (the revision it names, its routing headers). The era is
        decided here and only here (``server.stateless.stateless_era``)."""
        request_id = message.get("id")
        method = message.get("method")
        method = method if isinstance(method, str) else ""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if stateless_era(routing.version) == "modern":
            opening = method == "initialize"  # a handshake connection, whatever it carries
            refused = envelope_refusal(
                request_id, meta, routing, method, params, values=not opening
            )
            if refused is not None:
                refused.status = MODERN_HTTP_STATUS.get(refused.code or 0, 200)
                return [refused]
            if not opening:
                self.era = "modern"
                self._envelope_checked = True
                self._param_headers = routing.params
        elif method != "initialize":  # an initialize decides as the first request does
            self.era = "legacy"
            self.version = routing.version or DEFAULT_STATELESS_VERSION
            self.log_level = handshake_log_level(meta)
            if routing.session is not None:
                self.client_capabilities = session_capabilities(
                    self.app.state_seal, routing.session
                )
        self._stateless = True
        return self._with_status(self._message(message))

    def _with_status(self, actions: list[Action]) -> list[Action]:
        """``actions``, each frame carrying its HTTP status (2026-07-28 errors: by code)."""
        if self.era == "modern":
            for action in actions:
                if type(action) is SendFrame and action.code is not None:
                    action.status = MODERN_HTTP_STATUS.get(action.code, 200)
        return actions

    def _batch(self, messages: list[Any]) -> list[Action]:
        if self.version != _BATCH_VERSION:
            return refusal(
                None,
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not accepted at this protocol revision",
            )
        if not messages:
            return refusal(None, INVALID_REQUEST, "Invalid Request: empty batch")
        actions: list[Action] = []
        for message in messages:
            if isinstance(message, dict) and message.get("method") == "initialize":
                if "id" in message:  # a notification is never answered; a bad id gets null
                    request_id = message["id"] if type(message["id"]) in (str, int) else None
                    actions.append(
                        error_frame(
                            request_id,
                            INVALID_REQUEST,
                            "Invalid Request: initialize cannot be batched",
                        )
                    )
                continue
            answer = self._message(message)
            if self.observe is not None:
                self.observe(message, answer)
            actions.extend(answer)
        # Replies to a batch go out one frame each; 2025-03-26 clients match them by id.
        return actions

    def _message(self, message: Any) -> list[Action]:
        if not isinstance(message, dict):
            return refusal(None, INVALID_REQUEST, "Invalid Request: expected a JSON object")
        method = message.get("method")
        if "id" not in message:
            if isinstance(method, str):
                return self._notification(method, message.get("params"))
            return []  # never answer a notification, nor an id-less response or error
        request_id = message["id"]
        if method is None and ("result" in message or "error" in message):
            if self._outbound is not None:  # the answer to an ask, or nobody's
                self._outbound.resolve(message)
            return []  # a response is never answered
        if type(request_id) not in (str, int):
            return refusal(
                None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
            )
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return refusal(
                request_id, INVALID_REQUEST, "Invalid Request: expected jsonrpc '2.0' and a method"
            )
        if self.rate_limit is not None:
            self._tat, wait = take(self._tat, self._now, self.rate_limit)
            if wait:
                return self._rate_limited(request_id, self.rate_limit, wait)
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return refusal(request_id, INVALID_PARAMS, "Invalid params: expected an object")
        meta = params.get("_meta")
        enveloped = isinstance(meta, dict) and META_VERSION in meta
        if self.era is None:
            self.era = "modern" if enveloped and method != "initialize" else "legacy"
        if self.era == "modern":
            return self._modern_request(request_id, method, params, meta)
        if enveloped and method != "initialize":
            return refusal(
                request_id,
                INVALID_REQUEST,
                "this connection serves the handshake protocol era; "
                "requests carrying the 2026-07-28 envelope are not accepted on it",
            )
        handler = self._LEGACY_HANDLERS.get(method)
        if handler is None:
            return refusal(request_id, METHOD_NOT_FOUND, "Method not found", method)
        self._request_meta = meta if isinstance(meta, dict) else {}
        return self._handle(handler, request_id, params)

    @staticmethod
    def _rate_limited(request_id: Any, limit: RateLimit, wait: float) -> list[Action]:
        return refusal(request_id, RATE_LIMITED, *over_limit(limit, wait))

    def _modern_request(
        self, request_id: Any, method: str, params: Mapping[str, Any], meta: Any
    ) -> list[Action]:
        if method == "initialize":
            requested = params.get("protocolVersion")
            return refusal(
                request_id,
                UNSUPPORTED_VERSION,
                "connection is serving the 2026-07-28 protocol; the "
                "initialize handshake is not accepted",
                {"supported": list(MODERN_VERSIONS), "requested": requested},
            )
        if not self._envelope_checked:
            refused = envelope_refusal(request_id, meta)
            if refused is not None:
                return [refused]
        handler = self._MODERN_HANDLERS.get(method)
        if handler is None:
            return refusal(request_id, METHOD_NOT_FOUND, "Method not found", method)
        self._request_meta = meta
        return self._handle(handler, request_id, params)

    def _handle(self, handler: str, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        method: _Handler = getattr(self, handler)
        return method(request_id, params)

    def _notification(self, method: str, params: Any) -> list[Action]:
        if method != "notifications/cancelled" or not isinstance(params, dict):
            return []  # notifications/initialized and unknown notifications need nothing
        request_id = params.get("requestId")
        if type(request_id) not in (str, int):
            return []  # no request of ours has such an id (a list or an object would not hash)
        invoke = self.in_flight.get(request_id)
        if invoke is None or invoke.cancelled:
            return []  # finished, unknown or already cancelled: races are normal
        return [invoke.cancel()]

    # -- shared result shaping ------------------------------------------------------

    @property
    def _is_modern(self) -> bool:
        return self.era == "modern"

    def _result(self, request_id: Any, result: dict[str, Any]) -> SendFrame:
        if self._is_modern:
            result = {
                "resultType": "complete",
                **result,
                "_meta": {**result.get("_meta", {}), **self._meta},
            }
        return SendFrame(result_response(request_id, result))

    def _modern_extension(self, name: str) -> bool:
        capabilities = self._request_meta.get(META_CAPABILITIES)
        extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
        return isinstance(extensions, dict) and name in extensions

    # -- lifecycle ---------------------------------------------------------------

    def _initialize(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        version = negotiate_version(params.get("protocolVersion"))
        self.version = version
        capabilities_given = params.get("capabilities")
        if isinstance(capabilities_given, dict):
            self.client_capabilities = capabilities_given
        info = dict(self.app.server_info)
        if version in ("2024-11-05", "2025-03-26"):
            info.pop("title", None)
        capabilities: dict[str, Any] = {"logging": {}, "tools": {"listChanged": False}}
        if version == TASKS_VERSION and self.app.task_tools:
            listing: dict[str, Any] = {"list": {}} if self.tasks_listed else {}
            capabilities["tasks"] = {**listing, "cancel": {}, "requests": {"tools": {"call": {}}}}
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": info,
        }
        if self.app.instructions is not None:
            result["instructions"] = self.app.instructions
        frame = SendFrame(result_response(request_id, result))
        elicitation = self.client_capabilities.get("elicitation")
        if self._stateless and elicitation is not None and version in ELICITATION_VERSIONS:
            frame.session = session_token(self.app.state_seal, elicitation)
        return [frame]

    def _discover(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
        if self.app.task_tools:
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        result: dict[str, Any] = {
            "supportedVersions": list(MODERN_VERSIONS),
            "capabilities": capabilities,
            "ttlMs": LIST_TTL_MS,
            "cacheScope": LIST_CACHE_SCOPE,
        }
        if self.app.instructions is not None:
            result["instructions"] = self.app.instructions
        return [self._result(request_id, result)]

    def _ping(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        return [SendFrame(result_response(request_id, {}))]

    def _set_level(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            return refusal(
                request_id,
                INVALID_PARAMS,
                f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}",
            )
        self.log_level = level
        return [SendFrame(result_response(request_id, {}))]

    def _require_initialized(self, request_id: Any) -> list[Action] | None:
        if self.version is None and not self._is_modern:
            return refusal(request_id, INVALID_REQUEST, "Invalid Request: send initialize first")
        return None

    # -- tools ---------------------------------------------------------------------

    def _tools_list(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        refused = self._require_initialized(request_id)
        if refused:
            return refused
        if params.get("cursor") is not None:
            # one page holds every tool, so no cursor this server issued can exist
            return refusal(request_id, INVALID_PARAMS, "Invalid params: unknown cursor")
        if self._is_modern:
            return [SendFrame(result_response_raw(request_id, self.app.modern_list_payload))]
        version = self.version or LATEST_HANDSHAKE
        return [SendFrame(result_response_raw(request_id, self.app.list_payloads[version]))]

    def _tools_call(self, request_id: Any, params: Mapping[str, Any]) -> list[Action]:
        refused = self._require_initialized(request_id)
        if refused:
            return refused
        name = params.get("name")
        if not isinstance(name, str):
            return refusal(
                request_id, INVALID_PARAMS, "Invalid params: tools/call needs a string 'name'"
            )
        tool = self.app.tools.get(name)
        if tool is None:
            return refusal(request_id, INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = self._arguments(request_id, tool, params)
        if isinstance(arguments, list):
            return arguments
        as_task, refused_task = self._task_mode(request_id, tool, params)
        refused_task = refused_task or self._open_round(request_id, tool, arguments, params)
        if refused_task is not None:
            return [refused_task]
        background = not runs_inline(tool, as_task)
        if background and self._full():
            return refusal(
                request_id,
                SERVER_BUSY,
                f"Server busy: {self.max_concurrent_calls} tool calls are "
                "already running (the server's limit); retry when one has finished",
                {"limit": self.max_concurrent_calls},
            )
        # a task's arguments too: the shell of a store checks them off its event loop
        deferred = self.defer_checks and background and (not as_task or self.tasks_outside)
        if deferred:
            args: tuple[Any, ...] | dict[str, Any] = arguments
        else:
            try:
                args = tool.check_arguments(arguments)
            except ToolError as exc:
                return [self.invalid_arguments(request_id, exc)]
        version = self.version or LATEST_HANDSHAKE
        if as_task:
            task_params = params.get("task")
            create = CreateTask(
                request_id,
                tool,
                args,
                version,
                era="modern" if self._is_modern else "legacy",
                ttl=task_params.get("ttl") if isinstance(task_params, dict) else None,
                owner=self.requestor,
                checked=not deferred,
            )
            return [create] if self.tasks_outside else self._create_task(create)
        context = self._context(request_id, tool) if tool.wants_context else None
        invoke = Invoke(request_id, tool, args, version, modern=self._is_modern, context=context)
        invoke.checked = not deferred
        self.in_flight[request_id] = invoke
        self._hold(invoke, background)
        return [invoke]

    def _arguments(
        self, request_id: Any, tool: ToolRuntime, params: Mapping[str, Any]
    ) -> dict[str, Any] | list[Action]:
        """A call's arguments, or the refusal of them: not an object, or (2026-07-28
        over HTTP) ``Mcp-Param-*`` headers that disagree with them."""
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            return refusal(
                request_id, INVALID_PARAMS, "Invalid params: 'arguments' must be an object"
            )
        if self._param_headers is not None and tool.header_params:
            mismatch = param_header_refusal(tool.header_params, arguments, self._param_headers)
            if mismatch is not None:
                return refusal(request_id, HEADER_MISMATCH, mismatch)
        return arguments

    def _open_round(
        self,
        request_id: Any,
        tool: ToolRuntime,
        arguments: Mapping[str, Any],
        params: Mapping[str, Any],
    ) -> SendFrame | None:
        """A 2026-07-28 call's round (``server.asking``): the answers its sealed
        ``requestState`` records and the ``inputResponses`` it brings; a state that is
        not this server's, for this call and still good, is refused (-32602)."""
        token = params.get("requestState")
        if not self._is_modern or (token is None and not tool.wants_context):
            return None  # nothing to check, and a handler without ctx cannot ask
        seal = self.app.state_seal
        binding = binding_of(tool.name, arguments, self.requestor)
        claims = None
        if token is not None:
            try:
                claims = seal.open(token, binding)
            except StateRefused as refused:
                return error_frame(
                    request_id,
                    INVALID_PARAMS,
                    f"Invalid or expired requestState ({refused}): retry the call without it",
                    {"reason": "invalid_request_state", "detail": str(refused)},
                )
        responses = params.get("inputResponses")
        capabilities = self._request_meta.get(META_CAPABILITIES)
        can_ask = isinstance(capabilities, dict) and "elicitation" in capabilities
        self._asker = ModernAsker(
            seal, binding, claims, responses if isinstance(responses, dict) else {}, can_ask
        )
        return None

    def invalid_arguments(self, request_id: Any, error: ToolError) -> SendFrame:
        """The answer to a call whose arguments its tool refused (an ``isError`` result)."""
        return self._result(request_id, {"content": error.content, "isError": True})

    def _create_task(self, create: CreateTask) -> list[Action]:
        """A task call on a connection that holds its tasks: created in its table
        (within the table's cap), then started as ``task_created`` says."""
        try:
            task = self.tasks.create(create.tool.name, create.era, create.ttl, owner=create.owner)
        except TaskLimitReached as reached:
            return [self.task_limit_error(create.request_id, reached)]
        return self.task_created(create, task)

    def task_created(
        self,
        create: CreateTask,
        task: Task,
        args: tuple[Any, ...] | dict[str, Any] | None = None,
    ) -> list[Action]:
        """The task ``create`` asked for exists (``args``: checked by the shell, when
        ``create.checked`` was False): the frame answering the call with its handle,
        and the ``Invoke`` that runs it (a background call, holding a slot)."""
        request_id, tool = create.request_id, create.tool
        context = self._context(request_id, tool) if tool.wants_context else None
        if context is not None:
            context.task_id = task.task_id
            context.asker = None  # a task does not ask its caller (yet): ask declines
        invoke = Invoke(
            request_id,
            tool,
            create.args if args is None else args,
            create.version,
            modern=self._is_modern,
            context=context,
            task=task,
        )
        self._task_invokes[task.task_id] = invoke
        self._hold(invoke, True)
        if self._is_modern:
            created = SendFrame(
                result_response(
                    request_id, {"resultType": "task", **task.wire(), "_meta": self._meta}
                )
            )
        else:
            created = SendFrame(result_response(request_id, {"task": task.wire()}))
        return [created, invoke]

    def _full(self) -> bool:
        limit = self.max_concurrent_calls
        return limit is not None and self.running_calls >= limit

    def _hold(self, invoke: Invoke, background: bool) -> None:
        if background:
            invoke.holds_slot = True
            self.running_calls += 1

    def release(self, invoke: Invoke) -> None:
        """The handler of ``invoke`` has ended: its slot is free again. Called by
        ``complete`` unless the shell answered a handler that still runs."""
        if invoke.holds_slot:
            invoke.holds_slot = False
            self.running_calls -= 1

    def _context(self, request_id: Any, tool: ToolRuntime) -> Context:
        meta = self._request_meta
        level = meta.get(META_LOG_LEVEL) if self._is_modern else self.log_level
        token = meta.get("progressToken")
        if not isinstance(token, str | int) or isinstance(token, bool):
            token = None  # a progress token is a string or an integer; nothing else is echoed
        return Context(
            request_id=request_id,
            progress_token=token,
            emit=self.emit,
            log_level=level if isinstance(level, str) else None,
            logger=str(self.app.server_info.get("name", "")),
            progress_messages=self.version != "2024-11-05",
            auth=self.auth,
            asker=self._asker_for_call(),
        )

    def _asker_for_call(self) -> Asker | None:
        """How this call may ask its caller: the round (2026-07-28); by
        ``elicitation/create`` to a handshake-era client that declared elicitation;
        else not at all (``ask`` declines)."""
        if self._is_modern:
            return self._asker
        if self.version in ELICITATION_VERSIONS and "elicitation" in self.client_capabilities:
            if self._outbound is None:
                self._outbound = Outbound()
            return LegacyAsker(self._outbound)
        return None

    # -- output ---------------------------------------------------------------

    def _call_result(self, result: dict[str, Any]) -> dict[str, Any]:
        """A ``CallToolResult`` with only the fields this connection's revision defines."""
        if self._is_modern:
            return for_revision(result, MODERN_VERSIONS[0]) if WRAPS in result else result
        return for_revision(result, self.version or LATEST_HANDSHAKE)

    def complete(
        self, invoke: Invoke, outcome: CallOutcome, *, still_running: bool = False
    ) -> list[bytes]:
        """Frames answering a finished (or abandoned) ``Invoke``. ``still_running``:
        the handler goes on (past its timeout); the shell calls ``release`` when it ends."""
        if not still_running:
            self.release(invoke)
        task = invoke.task
        if task is None:
            self.in_flight.pop(invoke.request_id, None)
            if invoke.cancelled or outcome.cancelled:
                return []  # cancelled: the reply is suppressed
            return [self.respond(invoke, outcome)]
        self._task_invokes.pop(task.task_id, None)
        if outcome.cancelled or invoke.cancelled:
            return []
        error = None
        if outcome.result is None:
            error = {"code": INTERNAL_ERROR, "message": outcome.internal_error or "Internal error"}
        if not self.tasks.finish(task, result=outcome.result, error=error):
            return []
        return self._task_ended(task)

    def respond(self, invoke: Invoke, outcome: CallOutcome) -> bytes:
        """The response frame for a finished, non-task ``Invoke``."""
        if outcome.input_required is not None:
            asked = {"resultType": "input_required", **outcome.input_required}
            return self._result(invoke.request_id, asked).data
        if outcome.result is None:
            return error_response(
                invoke.request_id, INTERNAL_ERROR, outcome.internal_error or "Internal error"
            )
        try:
            return self._result(invoke.request_id, self._call_result(outcome.result)).data
        except (TypeError, ValueError, RecursionError):
            # a content block the handler built by hand that JSON cannot carry (or too deep)
            return error_response(
                invoke.request_id, INTERNAL_ERROR, f"Internal error in tool '{invoke.tool.name}'"
            )
