"""What a client makes of a ``CallToolResult``: ``isError`` raised as ``ToolError``, the
value converted to the tool's declared ``returns`` type (``convert_result``) or checked
against its output schema and built into its model (``ResultConverter``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

from .._errors import (
    ResultMismatch,
    ToolError,
)
from ..protocol.constants import META_RESERVED_PREFIX
from ..protocol.structured import needs_wrapper, unwrap_value

T = TypeVar("T")


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


def checked_tool_result(result: dict[str, Any]) -> dict[str, Any]:
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
        kept = {k: v for k, v in meta.items() if not k.startswith(META_RESERVED_PREFIX)}
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
        from ..schema.validator import ValidationFailed

        value = self._value(tool, result)
        try:
            self._validator(tool)(value)
        except ValidationFailed as exc:
            first = exc.problems[0]
            raise ResultMismatch(
                f"the result of tool '{tool}' does not fit its output schema: {exc.describe(3)}",
                tool=tool,
                path=first.path,
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
                tool=tool,
                path=path,
            ) from None

    def _value(self, tool: str, result: Mapping[str, Any]) -> Any:
        """The structured value of ``result``: its ``structuredContent`` (before
        2025-06-18: its JSON text), unwrapped where an earlier revision wrapped a value
        of any type (``protocol.structured``; a 2026-07-28 result has ``resultType``)."""
        wrapped = "resultType" not in result and needs_wrapper(self._schemas.get(tool))
        if "structuredContent" in result:
            value = result["structuredContent"]
        else:
            value = convert_result(result, "object", tool)  # the wrapper, before 2025-06-18
        if not wrapped:
            return value
        ok, inner = unwrap_value(value)
        if not ok:
            raise ResultMismatch(
                f"the result of tool '{tool}' is not the {{\"result\": …}} wrapper its "
                "revision sends for a value that is not an object",
                tool=tool,
            )
        return inner

    def _validator(self, tool: str) -> Callable[[Any], Any]:
        validator = self._validators.get(tool)
        if validator is None:
            from ..schema.validator import compile_schema

            schema = self._schemas.get(tool)
            validator = compile_schema(schema) if schema is not None else _accept
            self._validators[tool] = validator
        return validator


def _accept(value: Any) -> Any:
    return value


class StructuredValue(Generic[T]):
    """``StructuredValue[GetForecastOutput](GetForecastOutput)``: builds the Python
    value of a structured result whose output schema is not an object one (a list of
    models, a string, a union…), what a model's ``model_validate`` is for an object.
    Only for generated code. The pydantic adapter of each type is made once, on its
    first result."""

    __slots__ = ("_type",)

    def __init__(self, python_type: Any) -> None:
        self._type = python_type

    def __call__(self, value: Any) -> T:
        adapter = _ADAPTERS.get(self._type)
        if adapter is None:
            from pydantic import TypeAdapter

            adapter = _ADAPTERS[self._type] = TypeAdapter(self._type)
        return cast("T", adapter.validate_python(value))


_ADAPTERS: dict[Any, Any] = {}  # python type → its pydantic TypeAdapter


def _render_path(path: Sequence[Any]) -> str:
    """``("rows", 1, "day")`` → ``rows[1].day``, as the validator writes paths."""
    from ..schema.validator import Problem

    return Problem(tuple(path), "").render().removesuffix(": ") if path else ""
