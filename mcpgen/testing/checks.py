"""The checks: what a reply to valid or invalid arguments must look like, each a named
finding.

==================  ==========================================================
check               a finding when
==================  ==========================================================
output_schema       a successful result's ``structuredContent`` does not match the
                    contract's ``outputSchema`` (formats asserted as the runtime does),
                    or a ``returns`` value is not of its type; in process also an
                    output the runtime refused as invalid
handler_crash       in process: the handler raised something other than ``ToolError``
server_error        valid arguments answered with a JSON-RPC error, a malformed result,
                    an mcpgen server's internal-error, invalid-result or
                    invalid-arguments text, or the server went away; invalid
                    arguments answered with a JSON-RPC error other than -32602
invalid_accepted    arguments that break the input schema got a successful result
not_idempotent      a tool with ``idempotentHint`` (and ``readOnlyHint`` false: MCP gives
                    the hint meaning only then) and an output schema answered the same
                    call twice with different ``structuredContent`` (see ``repeats``)
timeout             no answer within the tool's ``timeout`` (else ``--timeout``)
error_as_success    a successful result (``isError`` false) whose only content is one
                    text that reads as an error report (``looks_like_an_error``), for a
                    tool with no output schema to check it against; off with
                    ``--skip-check error_as_success``
drift               the server lists something other than the contract (see ``drift``)
stdout_noise        a stdio server wrote lines on stdout that are no JSON-RPC message
                    (once per server, as tool ``(server)``; ``session.stdout_noise``)
==================  ==========================================================

Any other result with ``isError: true`` for valid arguments is no finding: a tool may refuse
(``ToolError``), and the contract cannot say when.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpgen_runtime.protocol.constants import INVALID_PARAMS
from mcpgen_runtime.protocol.structured import needs_wrapper, plain_value, unwrap_value
from mcpgen_runtime.schema.validator import ValidationFailed, compile_schema

from .check_names import CHECKS, SERVER
from .targets import UNSET, Reply

__all__ = [
    "CHECKS",
    "SERVER",
    "Finding",
    "ToolUnderTest",
    "check_invalid",
    "check_valid",
    "difference",
    "structured",
]

# what an mcpgen server answers when a handler failed or returned a bad value
_INTERNAL = re.compile(r"^Tool '.*' failed with an internal error\.$", re.DOTALL)
_INVALID_RESULT = re.compile(r"^Tool '.*' produced an invalid result: (.*)\.$", re.DOTALL)
_REFUSED = re.compile(r"^Invalid arguments for tool '.*': ", re.DOTALL)
_TIMED_OUT = re.compile(r"^Tool '.*' timed out after .* s\.$", re.DOTALL)
# error_as_success: a text that starts as an exception does, and nothing looser. A bare
# "Error: …" counts only when what follows is an exception's own words: a tool may well
# answer "Error: Operation failed" on purpose (server-everything's annotated-message demo
# does), and a text that merely mentions an error ("0 errors found", "Error rate: 2%")
# never matches; a server's own words for failure ("Failed to …") vary too much to read.
_ERROR_TEXT = re.compile(
    r"""\A\s*(?:
        Traceback\ \(most\ recent\ call\ last\):        # a Python traceback
      | [A-Za-z_][\w.]*(?:Error|Exception):\s           # ValueError: …, x.y.OperationalError: …
      | Exception:\s
      | Error\ (?:executing|calling|invoking)\ tool\b  # what SDK wrappers say
      | '[^']*'\ object\ has\ no\ attribute\ '        # an AttributeError's text alone
      | \w+Error\ at\ .+:\d+                           # a JavaScript stack line
      | (?i:error):\s.*?(?:                             # "Error: " + an exception's words
            '\w+'\ object\ (?:has\ no\ attribute|is\ not)
          | \[Errno\ \d+\]
          | \b[A-Z]\w*(?:Error|Exception)\b
          | \bis\ not\ a\ function\b
          | \bCannot\ read\ propert(?:y|ies)\ of\ (?:undefined|null)\b
        )
    )""",
    re.VERBOSE | re.DOTALL,
)
_RETURN_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


@dataclass
class Finding:
    tool: str
    check: str
    arguments: Any
    message: str
    reproduce: str = ""
    phase: str = ""
    # a negative finding: what its arguments break, in words (kept while it is shrunk)
    breaks: str = field(default="", repr=False)


@dataclass
class ToolUnderTest:
    """One contract tool, as the checks need it."""

    name: str
    descriptor: dict[str, Any]
    returns: str = "string"
    timeout: float | None = None
    line: int = 0
    in_process: bool = False
    _output: Callable[[Any], Any] | None = field(default=None, repr=False)

    @property
    def repeats(self) -> bool:
        """Whether a successful valid call is made a second time and compared.

        MCP's ``idempotentHint`` says that calling again with the same arguments has no
        further effect on the environment, and means something only when ``readOnlyHint``
        is false; what a client can see of that is the answer, and the contract fixes an
        answer only through its output schema. So: the hint, not read-only, an output
        schema; and only the two ``structuredContent`` values are compared (never error
        results, never free text, which may carry a time or a temporary file's name).
        """
        annotations = self.descriptor.get("annotations", {})
        return (
            annotations.get("idempotentHint") is True
            and annotations.get("readOnlyHint") is not True
            and isinstance(self.descriptor.get("outputSchema"), dict)
        )

    @property
    def needs_task(self) -> bool:
        return bool(self.descriptor.get("execution", {}).get("taskSupport") == "required")

    @property
    def destructive(self) -> bool:
        return self.descriptor.get("annotations", {}).get("destructiveHint") is True

    def output_problem(self, value: Any) -> str | None:
        schema = self.descriptor.get("outputSchema")
        if schema is None:
            return None
        if self._output is None:
            self._output = compile_schema(schema)
        try:
            self._output(value)
        except ValidationFailed as exc:
            return exc.describe()
        return None


def _text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else ""
    return ""


def check_valid(tool: ToolUnderTest, arguments: Any, reply: Reply) -> Finding | None:
    """The finding for a reply to arguments the contract accepts, if any."""

    def found(check: str, message: str) -> Finding:
        return Finding(tool.name, check, arguments, message)

    lost = _no_answer(tool, arguments, reply)
    if lost is not None:
        return lost
    if reply.error is not None:
        wrong = _wrong_return(tool, reply)
        if wrong is not None:
            return found("output_schema", wrong)
        return found(
            "server_error",
            f"valid arguments answered with JSON-RPC error "
            f"{reply.error.get('code')}: {reply.error.get('message')}",
        )
    result = reply.result or {}
    if not isinstance(result.get("content", []), list) or "malformed" in result:
        return found("server_error", "the result is not a CallToolResult")
    if result.get("isError") is True:
        return _error_result(tool, arguments, result, reply)
    return _success(tool, arguments, result)


def _no_answer(tool: ToolUnderTest, arguments: Any, reply: Reply) -> Finding | None:
    """The finding for a call that got no answer: timed out, crashed, server gone."""
    if reply.timed_out:
        message = "no answer, and no progress, within the time limit"
        if reply.progress:
            message += (
                f" (it reported progress {reply.progress} time(s), each of which restarted the"
                " limit, then fell silent or ran past the longest wait progress allows)"
            )
        return Finding(tool.name, "timeout", arguments, message)
    if reply.crash is not None:
        return Finding(tool.name, "handler_crash", arguments, f"the handler raised {reply.crash}")
    if reply.gone is not None:
        return Finding(tool.name, "server_error", arguments, f"the server went away: {reply.gone}")
    return None


def _error_result(
    tool: ToolUnderTest, arguments: Any, result: dict[str, Any], reply: Reply
) -> Finding | None:
    text = _text(result)
    if _TIMED_OUT.match(text):
        return Finding(tool.name, "timeout", arguments, text)
    invalid = _INVALID_RESULT.match(text)
    if invalid and tool.in_process:
        detail = (
            tool.output_problem(plain_value(reply.returned))
            if reply.returned is not UNSET
            else None
        )
        return Finding(
            tool.name,
            "output_schema",
            arguments,
            f"the server refused the handler's result: {invalid.group(1)}"
            + (f": {detail}" if detail else ""),
        )
    if invalid or _INTERNAL.match(text):
        return Finding(tool.name, "server_error", arguments, f"valid arguments answered: {text}")
    if _REFUSED.match(text):  # an mcpgen server reading its schema otherwise than the contract
        return Finding(
            tool.name,
            "server_error",
            arguments,
            f"arguments the contract accepts were refused: {text}",
        )
    return None


def _wrong_return(tool: ToolUnderTest, reply: Reply) -> str | None:
    """In process: the handler's value is not of its declared ``returns`` type."""
    kinds = _RETURN_TYPES.get(tool.returns) or ((str,) if tool.returns == "string" else None)
    if not tool.in_process or kinds is None or reply.returned is UNSET:
        return None
    value = reply.returned
    if _is_of(value, kinds):
        return None
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return f"the handler returned {shown}, but the tool declares returns: {tool.returns}"


def _is_of(value: Any, kinds: tuple[type, ...]) -> bool:
    """``isinstance``, except that a bool is no integer or number (as in JSON)."""
    return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def _success(tool: ToolUnderTest, arguments: Any, result: dict[str, Any]) -> Finding | None:
    if "outputSchema" in tool.descriptor:
        if "structuredContent" not in result:
            return Finding(
                tool.name,
                "output_schema",
                arguments,
                "the result has no structuredContent, but the tool has an outputSchema",
            )
        value = result["structuredContent"]
        if "resultType" not in result and needs_wrapper(tool.descriptor["outputSchema"]):
            # a handshake-era result of a schema that is not an object one: the wrapper
            wrapped, value = unwrap_value(value)
            if not wrapped:
                return Finding(
                    tool.name,
                    "output_schema",
                    arguments,
                    'structuredContent is not the {"result": …} wrapper a revision before '
                    "2026-07-28 carries a value of this outputSchema in",
                )
        problem = tool.output_problem(value)
        if problem is not None:
            return Finding(
                tool.name,
                "output_schema",
                arguments,
                f"structuredContent does not match the outputSchema: {problem}",
            )
        return None
    kinds = _RETURN_TYPES.get(tool.returns)
    if kinds is None:
        return _error_text(tool, arguments, result)
    try:
        value = json.loads(_text(result))
    except ValueError:
        value = UNSET
    if value is UNSET or not _is_of(value, kinds):
        return Finding(
            tool.name,
            "output_schema",
            arguments,
            f"the result text is no JSON value of the declared type (returns: {tool.returns})",
        )
    return None


def looks_like_an_error(result: dict[str, Any]) -> str | None:
    """The text of a result whose only content is one text block that reads as an error
    report or an exception (``error_as_success``), else None."""
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], dict):
        return None
    text = content[0].get("text")
    if content[0].get("type") != "text" or not isinstance(text, str):
        return None
    return text if _ERROR_TEXT.match(text) else None


def _error_text(tool: ToolUnderTest, arguments: Any, result: dict[str, Any]) -> Finding | None:
    text = looks_like_an_error(result)
    if text is None:
        return None
    shown = text.strip().splitlines()[0][:120]
    return Finding(
        tool.name,
        "error_as_success",
        arguments,
        f"valid arguments got a successful result (isError false) whose only text reads as an "
        f"error: {shown!r}; a tool that failed should say so with isError true",
    )


def check_invalid(tool: ToolUnderTest, arguments: Any, breaks: str, reply: Reply) -> Finding | None:
    """The finding for a reply to arguments that break the input schema, if any."""
    lost = _no_answer(tool, arguments, reply)
    if lost is not None:
        return lost
    if reply.error is not None:
        if reply.error.get("code") == INVALID_PARAMS:
            return None
        return Finding(
            tool.name,
            "server_error",
            arguments,
            f"invalid arguments ({breaks}) answered with JSON-RPC error "
            f"{reply.error.get('code')}: {reply.error.get('message')} "
            "(expected an isError result or -32602)",
        )
    if (reply.result or {}).get("isError") is True:
        return None
    return Finding(
        tool.name,
        "invalid_accepted",
        arguments,
        f"arguments that break the input schema ({breaks}) got a successful result",
    )


def structured(reply: Reply) -> Any:
    """A successful reply's ``structuredContent``; ``UNSET`` for anything else (an error
    result, a JSON-RPC error, no structured value): what ``not_idempotent`` compares."""
    result = reply.result
    if not isinstance(result, dict) or result.get("isError") is True:
        return UNSET
    return result.get("structuredContent", UNSET)


def _answer(reply: Reply) -> Any:
    value = structured(reply)
    if value is not UNSET:
        return value
    result = reply.result or {}
    return {"isError": result.get("isError", False), "content": result.get("content")}


def difference(first: Reply, second: Reply, width: int = 160) -> str:
    """Where two answers part, shown from a little before the first differing character."""
    one, two = (json.dumps(_answer(r), ensure_ascii=False, sort_keys=True) for r in (first, second))
    start = next(
        (i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b),
        min(len(one), len(two)),
    )
    start = max(0, start - 20)

    def cut(text: str) -> str:
        part = text[start : start + width // 2]
        return ("…" if start else "") + part + ("…" if start + width // 2 < len(text) else "")

    return f"first {cut(one)} then {cut(two)}"
