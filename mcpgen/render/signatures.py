"""What server.py and client.py say of each tool: a small model the templates print.

An ``Annotation`` is a type as a signature writes it *and* the names it uses (the
models.py types, by their local names, and typing's names), so each file imports
what its own signatures name, collected as they are built (``imports.Imports``),
never found again in the rendered text. A ``Signature`` is a list of parameters and
a return annotation; ``layout`` decides how it breaks into lines. ``ToolView`` holds
what the templates need of a tool beyond the IR: the two signatures, the escaped
docstrings, and the local names a method body uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcpgen_runtime.protocol.structured import needs_wrapper

from .. import ir
from .code import Code
from .escape import py_literal
from .layout import Layout
from .typemap import RETURN_ANNOTATIONS, TypeMap

__all__ = [
    "RETURNS",
    "Annotation",
    "ArgumentTypes",
    "Param",
    "Signature",
    "ToolView",
    "client_names",
    "tool_view",
]


@dataclass(frozen=True)
class Annotation:
    """A type's text and what it names: models.py types (local names) and helpers
    (typing's or pydantic's names, ``HELPERS``)."""

    text: str
    models: frozenset[str] = frozenset()
    helpers: frozenset[str] = frozenset()

    @classmethod
    def of(cls, annotation: Code, renames: Mapping[str, str]) -> Annotation:
        """The annotation the type mapping built, models.py types under their local
        names (``renames``), helpers under their own (server.py and client.py import
        typing's as they are)."""
        models = frozenset(renames.get(name, name) for name in annotation.refs)
        return cls(annotation.text(renames), models, annotation.helpers)

    def or_none(self) -> Annotation:
        """The type, or None as well (unchanged when it already admits None)."""
        if self.text in ("Any", "None") or self.text.endswith("| None"):
            return self
        return dataclasses.replace(self, text=f"{self.text} | None")


# The handler's type of a positional or named tool's value, by its ``returns:`` kind.
RETURNS = {kind: Annotation.of(code, {}) for kind, code in RETURN_ANNOTATIONS.items()}


@dataclass(frozen=True)
class Param:
    """``name: annotation[ = default]``; a bare ``*`` when ``name`` is ``"*"``."""

    name: str
    annotation: Annotation | None = None
    default: str | None = None

    @property
    def text(self) -> str:
        if self.annotation is None:
            return self.name
        default = f" = {self.default}" if self.default is not None else ""
        return f"{self.name}: {self.annotation.text}{default}"


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    returns: Annotation

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(p.text for p in self.params)

    def annotations(self) -> Iterable[Annotation]:
        yield self.returns
        yield from (p.annotation for p in self.params if p.annotation is not None)


@dataclass(frozen=True)
class ToolView:
    """What the templates need of a tool, with all escaping already done. Anything
    else a template reads of a tool (``name``, ``py_name``, ``callback``, …) is the
    IR's (``ir.Tool``)."""

    tool: ir.Tool
    handler: Signature  # after self
    client: Signature  # after self, before the progress callback (a `*` where needed)
    doc: str
    client_doc: str  # doc, plus the defaults the server applies to left-out arguments
    start_doc: str
    start_name: str  # start_<tool>: only for tools with task_support optional|required
    args_var: str  # the method body's locals, clear of the parameters' names
    result_var: str
    progress_kw: str  # the keyword-only progress callback parameter's name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tool, name)

    @property
    def keyword_only(self) -> bool:
        """Do the client's parameters already end in keyword-only ones?"""
        return any(p.name == "*" for p in self.client.params)

    @property
    def converter(self) -> str:
        """The module-level function turning a CallToolResult into the return value."""
        return f"_{self.tool.py_name}_result"

    @property
    def required_pairs(self) -> tuple[str, ...]:
        """``"wire": py_name`` of each required argument (always sent)."""
        return tuple(
            f"{py_literal(p.name)}: {p.py_name}" for p in self.tool.parameters if p.required
        )

    def handler_params(self) -> tuple[str, ...]:
        """The handler's parameters, ``self`` first."""
        return ("self", *self.handler.texts)

    def client_params(self, progress_type: str) -> tuple[str, ...]:
        """A client method's parameters: ``self``, the arguments, then the keyword-only
        progress callback of type ``progress_type``."""
        star = () if self.keyword_only else ("*",)
        progress = f"{self.progress_kw}: {progress_type} | None = None"
        return ("self", *self.client.texts, *star, progress)

    def call_args(self) -> tuple[str, ...]:
        """``session.call_tool``'s arguments (a task-required tool asks for a task)."""
        task = ("task=True",) if self.tool.task_support == "required" else ()
        return (py_literal(self.tool.name), self.args_var, f"on_progress={self.progress_kw}", *task)

    def start_args(self) -> tuple[str, ...]:
        """``session.start_tool``'s arguments."""
        name = py_literal(self.tool.name)
        return (name, self.args_var, self.converter, f"on_progress={self.progress_kw}")

    @property
    def result_function(self) -> str:
        """What turns a CallToolResult into the return value: ``_results.structured``
        for a structured tool, else ``cast``."""
        return "_results.structured" if self.tool.callback == "structured" else "cast"

    def result_args(self, result: str) -> tuple[str, ...]:
        """``result_function``'s arguments turning ``result`` (a CallToolResult) into
        the return value."""
        name = py_literal(self.tool.name)
        if self.tool.callback == "structured":
            output = f"{self.tool.class_name}Output"
            if needs_wrapper(self.tool.output_schema):  # an alias: no model to validate
                return (name, result, f"StructuredValue[{output}]({output})")
            return (name, result, f"{output}.model_validate")
        returns = py_literal(self.tool.returns)
        converted = f"convert_result({result}, {returns}, {name})"
        return (py_literal(self.client.returns.text), converted)

    @property
    def optional_params(self) -> tuple[ir.Parameter, ...]:
        return tuple(p for p in self.tool.parameters if not p.required)

    @property
    def wire_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.tool.parameters)

    @property
    def defaults(self) -> tuple[Any, ...]:
        return tuple(p.default if p.has_default else None for p in self.tool.parameters)


class ArgumentTypes:
    """The signatures' annotations of one contract's arguments, by their local names."""

    def __init__(self, typemap: TypeMap, renames: Mapping[str, str]) -> None:
        self.typemap = typemap
        self.renames = renames

    def parameter(self, tool: ir.Tool, param: ir.Parameter) -> Annotation:
        """An argument's type, models.py types under their local names (``renames``)."""
        return Annotation.of(self.typemap.parameter(tool, param), self.renames)

    def model(self, name: str) -> Annotation:
        """A models.py class of the tool's own (``<Tool>Args``, ``<Tool>Output``)."""
        return Annotation(name, frozenset({name}))


def _handler_signature(
    tool: ir.Tool, kinds: Mapping[str, Annotation], types: ArgumentTypes
) -> Signature:
    """The handler's parameters and return annotation, by the tool's callback style."""
    if tool.callback == "positional":
        params = tuple(
            # a null default reaches the handler as None
            Param(
                p.py_name,
                kinds[p.name]
                if p.required or (p.has_default and p.default is not None)
                else kinds[p.name].or_none(),
            )
            for p in tool.parameters
        )
        return Signature(params, RETURNS[tool.returns])
    args = Param("args", types.model(f"{tool.class_name}Args"))
    if tool.callback == "structured":
        output = f"{tool.class_name}Output"
        if needs_wrapper(tool.output_schema):  # an alias of a list, a scalar, a union
            return Signature((args,), types.model(output))
        returns = Annotation(f"{output} | dict[str, Any]", frozenset({output}), frozenset({"Any"}))
        return Signature((args,), returns)
    return Signature((args,), RETURNS[tool.returns])


def _client_signature(
    tool: ir.Tool, kinds: Mapping[str, Annotation], types: ArgumentTypes
) -> Signature:
    """The client method's parameters: a ``*`` where a required argument follows an
    optional one; an optional one defaults to ``UNSET`` (left out, it is not sent: its
    default is the server's to apply; None is sent as null, typed only where the schema
    admits it)."""
    params: list[Param] = []
    keyword_only = False
    seen_optional = False
    for p in tool.parameters:
        if p.required and seen_optional and not keyword_only:
            params.append(Param("*"))
            keyword_only = True
        if p.required:
            params.append(Param(p.py_name, kinds[p.name]))
        else:
            seen_optional = True
            kind = kinds[p.name]
            params.append(
                Param(p.py_name, dataclasses.replace(kind, text=f"{kind.text} | Unset"), "UNSET")
            )
    if tool.callback == "structured":
        returns = types.model(f"{tool.class_name}Output")
    else:
        returns = RETURNS[tool.returns]
    return Signature(tuple(params), returns)


def _tool_texts(tool: ir.Tool) -> tuple[str, str, str]:
    """The tool's docstring text, the client method's (with defaults) and ``start_``'s."""
    text = tool.description or tool.title or f"Call tool {tool.name!r}."
    defaults = [p for p in tool.parameters if p.has_default and not p.required]
    method_text = text
    if defaults:
        shown = ", ".join(f"{p.py_name}={py_literal(p.default)}" for p in defaults)
        method_text += (
            f"\n\nLeft out (``UNSET``), an argument takes the server's default: {shown}.\n"
        )
    start_text = (
        f"{text}\n\nRuns as a task and returns its handle at once: ``status()`` asks for the\n"
        f"task's state, ``result()`` waits for what ``{tool.py_name}()`` returns,\n"
        "``cancel()`` stops it.\n"
    )
    return text, method_text, start_text


def tool_view(tool: ir.Tool, types: ArgumentTypes, layout: Layout) -> ToolView:
    kinds = {param.name: types.parameter(tool, param) for param in tool.parameters}
    taken = {p.py_name for p in tool.parameters}
    text, method_text, start_text = _tool_texts(tool)
    return ToolView(
        tool=tool,
        handler=_handler_signature(tool, kinds, types),
        client=_client_signature(tool, kinds, types),
        doc=layout.docstring(text, 2),
        client_doc=layout.docstring(method_text, 2),
        start_doc=layout.docstring(start_text, 2),
        start_name=f"start_{tool.py_name}",
        args_var="arguments" if "arguments" not in taken else "arguments_",
        result_var="result" if "result" not in taken else "result_",
        progress_kw="on_progress" if "on_progress" not in taken else "on_progress_",
    )


def client_names(tools: list[ToolView]) -> list[ToolView]:
    """Give ``start_<tool>`` a trailing ``_`` where another client method has its name."""
    taken = {t.tool.py_name for t in tools} | {
        "close",
        "list_tools",
        "session",
        "stdio",
        "in_memory",
    }
    views = []
    for view in tools:
        name = view.start_name
        if view.tool.task_support != "forbidden":
            while name in taken:
                name += "_"
            taken.add(name)
        views.append(dataclasses.replace(view, start_name=name))
    return views
