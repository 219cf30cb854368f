"""The tool table: what a server knows about each tool, built once at start-up.

Generated code describes each tool with a ``Binding`` (callback shape, positional
order, defaults, declared return type); ``App.build`` joins the bindings with the
published descriptors and an implementation and pre-serialises every ``tools/list``
payload, so a call does no reflection. It compiles no schema: each validator is
compiled by its tool's first call (``FirstUse``) and reused after that.

Error mapping, decided here and nowhere else (HTTP and stdio alike):

==========================================  =========================================
what happened                               what the caller gets
==========================================  =========================================
arguments fail the input schema             result, ``isError: true``, what to fix
handler raises ``ToolError(msg)``           result, ``isError: true``, ``msg``
handler raises anything else                result, ``isError: true``, names the tool
                                            only; traceback on stderr
handler exceeds the tool's ``timeout``      result, ``isError: true``
a structured result fails the output        result, ``isError: true``, names the tool
schema (or is no object, or no JSON)        and says its result was invalid; the
                                            detail on stderr (the value never sent)
a value does not fit the declared           JSON-RPC error -32603, detail on stderr
``returns`` type, or is no JSON
==========================================  =========================================

A structured result that breaks its schema is a tool error, as the official SDK's
server reports it: a peer that lists and calls tools keeps working, and a model
reading the result learns that this tool failed, not that the connection did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import ToolError
from ..protocol.constants import META_SERVER_INFO
from ..protocol.jsonrpc import dumps
from ..protocol.param_headers import HeaderParam, header_params
from ..protocol.revisions import MODERN_VERSIONS, STRUCTURED_CONTENT_VERSIONS, TOOL_FIELDS
from ..protocol.structured import descriptor_for_revision, needs_wrapper, plain_value, wrap_value
from ..schema.validator import ValidationFailed, compile_schema
from ..telemetry.logs import diagnostics
from .asking import InputRequired
from .context import Cancelled, Context
from .sealing import StateSeal

__all__ = [
    "App",
    "Binding",
    "CallOutcome",
    "InternalError",
    "InvalidResult",
    "Returned",
    "ToolRuntime",
]

_LOG = diagnostics("server")  # a handler's traceback, a result that does not fit


# Cache hints for 2026-07-28 list results: the tool list is fixed for the life of
# the process and holds no user data; five minutes bounds staleness across deploys.
LIST_TTL_MS = 300_000
LIST_CACHE_SCOPE = "public"


@dataclass(frozen=True)
class Binding:
    """How one tool's handler is called; emitted by the generator into server.py."""

    name: str  # wire name
    method: str  # handler method name on the implementation
    callback: str  # positional | named | structured
    params: tuple[str, ...] = ()  # wire names, in positional order
    defaults: tuple[Any, ...] = ()  # positional defaults (None when the spec gives none)
    returns: str = "string"
    is_async: bool = False
    timeout: float | None = None
    task_support: str = "forbidden"


class InternalError(Exception):
    """The server itself misbehaved (bad result): answered with -32603."""


class InvalidResult(InternalError):
    """A structured handler's result does not fit its output schema (or JSON):
    answered with an ``isError`` result naming the tool. ``reason`` is what the
    caller reads (no part of the value); the exception's text goes to stderr."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass
class CallOutcome:
    """A finished call: a ``CallToolResult`` in 2025-11-25 shape, an internal
    error, nothing at all because the call was cancelled, or (2026-07-28) the
    ``input_required`` result of a handler that asked its caller."""

    result: dict[str, Any] | None = None
    internal_error: str | None = None
    cancelled: bool = False
    input_required: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Returned:
    """What a handler returned, before ``ToolRuntime.finish`` converts it."""

    value: Any


@dataclass
class ToolRuntime:
    binding: Binding
    descriptor: dict[str, Any]
    handler: Callable[..., Any]
    validate_input: Callable[[Any], Any]
    validate_output: Callable[[Any], Any] | None
    wants_context: bool = False  # the handler declares a `ctx` parameter
    # the arguments a 2026-07-28 HTTP call mirrors into Mcp-Param-* headers
    header_params: tuple[HeaderParam, ...] = ()
    wraps: bool = False  # the output schema is not an object one (protocol.structured)
    _convert: Callable[[Any], dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self._convert = (
            self._structured
            if self.binding.callback == "structured"
            else _RETURNS[self.binding.returns]
        )

    @property
    def name(self) -> str:
        return self.binding.name

    # -- the call path --------------------------------------------------------

    def check_arguments(self, arguments: Mapping[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
        """Validate and coerce; return what the handler is called with.

        Raises ``ToolError`` with a message a model can act on.
        """
        try:
            args = self.validate_input(arguments)
        except ValidationFailed as exc:
            raise ToolError(f"Invalid arguments for tool '{self.name}': {exc.describe()}") from None
        if self.binding.callback == "positional":
            return tuple(
                args.get(param, default)
                for param, default in zip(self.binding.params, self.binding.defaults, strict=True)
            )
        # named and structured shapes get a dict of exactly what the client sent
        return dict(args)

    def call_sync(
        self, call_args: tuple[Any, ...] | dict[str, Any], ctx: Context | None = None
    ) -> CallOutcome:
        try:
            value = self._call(call_args, ctx)
        except ToolError as exc:
            return CallOutcome(_error_result(exc))
        except Cancelled:
            return CallOutcome(cancelled=True)
        except Exception:  # noqa: BLE001 - every failure becomes an error result
            return CallOutcome(self.handler_failed())
        except InputRequired as asked:
            return CallOutcome(input_required=asked.result)
        except BaseException as exc:  # KeyboardInterrupt-like from a handler: keep serving
            if isinstance(exc, SystemExit):  # sys.exit() in a sync handler stops the server
                raise
            # A CancelledError or GeneratorExit out of a sync call cancels nothing of
            # ours: like any failure it is the tool's (it used to end the server).
            return CallOutcome(self.handler_failed())
        return self.finish(value)

    async def call_async(
        self, call_args: tuple[Any, ...] | dict[str, Any], ctx: Context | None = None
    ) -> CallOutcome:
        step = await self.await_handler(call_args, ctx)
        return step if isinstance(step, CallOutcome) else self.finish(step.value)

    async def await_handler(
        self, call_args: tuple[Any, ...] | dict[str, Any], ctx: Context | None = None
    ) -> CallOutcome | Returned:
        """Run an async handler: its failure as a ``CallOutcome``, or the value it
        returned, still to be converted by ``finish`` (which checks an output
        schema: the HTTP shell runs that off the event loop)."""
        try:
            pending = self._call(call_args, ctx)
            value = await pending if hasattr(pending, "__await__") else pending
        except ToolError as exc:
            return CallOutcome(_error_result(exc))
        except Cancelled:
            return CallOutcome(cancelled=True)
        except Exception:  # noqa: BLE001
            return CallOutcome(self.handler_failed())
        except InputRequired as asked:
            return CallOutcome(input_required=asked.result)
        except BaseException as exc:
            if _cancelled_from_outside(exc):
                raise
            # The handler's own CancelledError (say, from awaiting a task it cancelled)
            # used to leave the request unanswered; SystemExit killed the loop thread.
            return CallOutcome(self.handler_failed())
        return Returned(value)

    def _call(self, call_args: tuple[Any, ...] | dict[str, Any], ctx: Context | None) -> Any:
        if self.wants_context:
            context = ctx if ctx is not None else Context.NONE
            if isinstance(call_args, tuple):
                return self.handler(*call_args, ctx=context)
            return self.handler(call_args, ctx=context)
        return self.handler(*call_args) if isinstance(call_args, tuple) else self.handler(call_args)

    def finish(self, value: Any) -> CallOutcome:
        try:
            return CallOutcome(self._convert(value))
        except InvalidResult as exc:
            _LOG.warning("tool '%s': %s", self.name, exc)
            return CallOutcome(
                _text_error(f"Tool '{self.name}' produced an invalid result: {exc.reason}.")
            )
        except InternalError as exc:
            _LOG.error("tool '%s': %s", self.name, exc)
            return CallOutcome(internal_error=f"Internal error in tool '{self.name}'")

    def handler_failed(self, error: BaseException | None = None) -> dict[str, Any]:
        """The result for a handler that raised: the tool's name only; the
        exception and its traceback go to stderr, never to the caller."""
        _LOG.error("tool '%s' raised:", self.name, exc_info=True if error is None else error)
        return _text_error(f"Tool '{self.name}' failed with an internal error.")

    def timed_out(self) -> dict[str, Any]:
        return _text_error(f"Tool '{self.name}' timed out after {self.binding.timeout:g} s.")

    # -- result conversion ----------------------------------------------------

    def _structured(self, value: Any) -> dict[str, Any]:
        try:
            value = plain_value(value)
        except RecursionError:
            raise InvalidResult(
                "it cannot be sent as JSON", "result is not JSON-serialisable: nested too deeply"
            ) from None
        if not self.wraps and not isinstance(value, dict):
            raise InvalidResult(
                "it is not an object",
                f"returned {type(value).__name__}, expected the output model or a dict",
            )
        assert self.validate_output is not None
        try:
            self.validate_output(value)
        except ValidationFailed as exc:
            raise InvalidResult(
                "it does not match the tool's output schema",
                f"result does not match the output schema: {exc.describe()}",
            ) from None
        try:
            text = _to_json(value)
        except InternalError as exc:
            raise InvalidResult("it cannot be sent as JSON", str(exc)) from None
        result = {
            "content": [{"type": "text", "text": text}],
            "structuredContent": value,
            "isError": False,
        }
        if self.wraps:  # for_revision wraps it for the revisions before 2026-07-28
            result[WRAPS] = True
        return result


def _to_json(value: Any) -> str:
    try:
        return dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise InternalError(f"result is not JSON-serialisable: {exc}") from None


def _text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _text_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _error_result(exc: ToolError) -> dict[str, Any]:
    return {"content": list(exc.content), "isError": True}


def _returns(kinds: tuple[type, ...], label: str) -> Callable[[Any], dict[str, Any]]:
    def convert(value: Any) -> dict[str, Any]:
        # bool is an int in Python but not an integer or number in JSON
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise InternalError(f"returned {type(value).__name__}, declared returns: {label}")
        return _text_result(_to_json(value))

    return convert


def _returns_string(value: Any) -> dict[str, Any]:
    if not isinstance(value, str):
        raise InternalError(f"returned {type(value).__name__}, declared returns: string")
    return _text_result(value)


def _returns_content(value: Any) -> dict[str, Any]:
    if not isinstance(value, list) or not all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in value
    ):
        raise InternalError(
            "declared returns: content, but the value is not a list of content blocks"
        )
    _to_json(value)
    return {"content": value, "isError": False}


_RESULT_MEMBERS = frozenset({"content", "structuredContent", "_meta"})


def _returns_result(value: Any) -> dict[str, Any]:
    """``returns: result``: the handler's ``CallToolResult`` is sent as it is (content
    blocks, ``structuredContent`` with no output schema to check it, ``_meta``)."""
    if not isinstance(value, dict) or not set(value) <= _RESULT_MEMBERS | {"isError"}:
        raise InternalError(
            "declared returns: result, but the value is not a dict of content, "
            "structuredContent and _meta"
        )
    if value.get("isError", False) is not False:
        raise InternalError("declared returns: result; raise ToolError to report an error")
    content = value.get("content", [])
    if not isinstance(content, list) or not all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in content
    ):
        raise InternalError(
            "declared returns: result, but its content is not a list of content blocks"
        )
    if "structuredContent" in value and not isinstance(value["structuredContent"], dict):
        raise InternalError("declared returns: result, but its structuredContent is not an object")
    if "_meta" in value and not isinstance(value["_meta"], dict):
        raise InternalError("declared returns: result, but its _meta is not an object")
    _to_json(value)
    return {**value, "content": content, "isError": False}


_RETURNS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "string": _returns_string,
    "integer": _returns((int,), "integer"),
    "number": _returns((int, float), "number"),
    "boolean": _returns((bool,), "boolean"),
    "object": _returns((dict,), "object"),
    "array": _returns((list, tuple), "array"),
    "content": _returns_content,
    "result": _returns_result,
}


def _cancelled_from_outside(exc: BaseException) -> bool:
    """A cancellation of the running task (the client cancelled, a timeout, shutdown)
    passes through a handler boundary; nothing else does."""
    import asyncio

    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


# A call result's mark (never sent) that its structured value is of a tool whose
# output schema is not an object one: wrapped for the revisions before 2026-07-28.
WRAPS = "mcpgen.wraps"


def for_revision(result: dict[str, Any], version: str) -> dict[str, Any]:
    """``result`` as ``version`` defines it: a structured value of any type wrapped
    before 2026-07-28 (``protocol.structured``), no ``structuredContent`` before
    2025-06-18."""
    if WRAPS in result:
        result = {key: value for key, value in result.items() if key != WRAPS}
        if version not in MODERN_VERSIONS and "structuredContent" in result:
            wrapper = wrap_value(result["structuredContent"])
            text = {"type": "text", "text": _to_json(wrapper)}
            result = {**result, "structuredContent": wrapper, "content": [text]}
    if "structuredContent" in result and version not in STRUCTURED_CONTENT_VERSIONS:
        return {key: value for key, value in result.items() if key != "structuredContent"}
    return result


class App:
    """An implementation bound to its contract: the server's whole tool table."""

    def __init__(
        self,
        tools: dict[str, ToolRuntime],
        *,
        server_info: Mapping[str, Any],
        instructions: str | None,
        list_cache_scope: str = LIST_CACHE_SCOPE,
        state_seal: StateSeal | None = None,
    ) -> None:
        """``list_cache_scope``: the 2026-07-28 ``cacheScope`` of ``tools/list``:
        ``private`` where the listing varies by the caller's authorization.
        ``state_seal``: the request-state seal (by default keyed from the
        environment, else at random)."""
        self.tools = tools
        self.server_info = dict(server_info)
        self.instructions = instructions
        # seals a 2026-07-28 asking call's requestState; the command line may set the key
        self.state_seal = state_seal or StateSeal.from_environment()
        self.task_tools = frozenset(
            name for name, tool in tools.items() if tool.binding.task_support != "forbidden"
        )
        # tools/list bodies, serialised once per revision
        self.list_payloads: dict[str, str] = {
            version: dumps(
                {"tools": [_filter_descriptor(t.descriptor, version) for t in tools.values()]}
            )
            for version in TOOL_FIELDS
        }
        modern = MODERN_VERSIONS[0]
        self.modern_list_payload = dumps(
            {
                "resultType": "complete",
                "tools": [_filter_descriptor(t.descriptor, modern) for t in tools.values()],
                "ttlMs": LIST_TTL_MS,
                "cacheScope": list_cache_scope,
                "_meta": {META_SERVER_INFO: dict(self.server_info)},
            }
        )

    def use_state_key(self, key: str | bytes) -> None:
        """Seal 2026-07-28 ``requestState`` with ``key`` (shared by every worker)."""
        self.state_seal = StateSeal(key)

    def derived(self, tools: dict[str, ToolRuntime], *, list_cache_scope: str | None = None) -> App:
        """An App serving ``tools`` (a subset or variant of this one's) with this
        one's server info, instructions and request-state seal."""
        return App(
            tools,
            server_info=self.server_info,
            instructions=self.instructions,
            list_cache_scope=list_cache_scope or LIST_CACHE_SCOPE,
            state_seal=self.state_seal,
        )

    @classmethod
    def build(
        cls,
        impl: object,
        descriptors: Sequence[Mapping[str, Any]],
        bindings: Sequence[Binding],
        *,
        server_info: Mapping[str, Any],
        instructions: str | None = None,
    ) -> App:
        """Bind ``impl``; refuse it when methods are missing (naming every one)."""
        missing = sorted(
            b.method
            for b in bindings
            if not callable(getattr(impl, b.method, None))
            or getattr(getattr(impl, b.method), "__isabstractmethod__", False)
        )
        if missing:
            raise TypeError(
                f"{type(impl).__name__} does not implement "
                f"{', '.join(missing)} (required by the contract)"
            )
        by_name = {d["name"]: d for d in descriptors}
        tools: dict[str, ToolRuntime] = {}
        for binding in bindings:
            descriptor = dict(by_name[binding.name])
            output = descriptor.get("outputSchema")
            handler = getattr(impl, binding.method)
            tools[binding.name] = ToolRuntime(
                binding=binding,
                descriptor=descriptor,
                handler=handler,
                validate_input=FirstUse(descriptor["inputSchema"], coerce=True),
                validate_output=FirstUse(output) if output is not None else None,
                wants_context=_declares_context(handler),
                header_params=header_params(descriptor["inputSchema"]),
                wraps=output is not None and needs_wrapper(output),
            )
        return cls(tools, server_info=server_info, instructions=instructions)


class FirstUse:
    """A validator compiled on its first call.

    Start-up (until ``initialize`` is answered) compiles no schema: each tool's
    validators are compiled by that tool's first call (a few milliseconds, once), and a
    server whose clients call two of its fifty tools never compiles the other 48. The
    schemas were checked when the package was generated, so compiling later moves no
    error a user could meet from start-up to a call. Two threads calling a fresh tool
    at once may both compile it; either result is the same validator.
    """

    __slots__ = ("_coerce", "_compiled", "_schema")

    def __init__(self, schema: Mapping[str, Any] | bool, *, coerce: bool = False) -> None:
        self._schema = schema
        self._coerce = coerce
        self._compiled: Callable[[Any], Any] | None = None

    def __call__(self, value: Any) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = compile_schema(self._schema, coerce=self._coerce)
        return compiled(value)


def _declares_context(handler: Callable[..., Any]) -> bool:
    import inspect  # once per tool at start-up, never per call

    try:
        return "ctx" in inspect.signature(handler).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no signature to read
        return False


def _filter_descriptor(descriptor: Mapping[str, Any], version: str) -> dict[str, Any]:
    """``descriptor`` as ``version`` lists it: its fields only, an output schema of
    any type wrapped before 2026-07-28."""
    fields = TOOL_FIELDS[version]
    shaped = (
        descriptor_for_revision(descriptor, version) if "outputSchema" in fields else descriptor
    )
    return {key: value for key, value in shaped.items() if key in fields}
