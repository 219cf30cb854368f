"""Render a whole generated package from a contract, in memory.

``render_package`` returns every file (relative POSIX path → bytes), formatted
with black and stable across runs; writing them is ``write.py``'s job.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

import jinja2

from mcpgen_runtime._version import requirement
from mcpgen_runtime.protocol.fingerprint import canonical_json as canonical
from mcpgen_runtime.protocol.fingerprint import tool_fingerprint
from mcpgen_runtime.protocol.structured import needs_wrapper

from .. import __version__, ir
from ..paths import RUNTIME_DIR, templates_dir
from ..schemas import descriptor
from .escape import PySource, py_literal
from .layout import UNIT, Layout, UnitCache, literal_node
from .localnames import local_type_names, model_imports, types_named_in
from .models import render_models
from .typemap import RETURN_ANNOTATIONS, TypeMap
from .typesource import rename_types, resolve_helpers

__all__ = ["RuntimeMode", "render_package", "runtime_sources"]

LINE_LENGTH = 100

# "installed": generated code imports the mcpgen-runtime distribution (the default);
# "vendored": a copy of the runtime goes into the package as ``_runtime``.
RuntimeMode = Literal["installed", "vendored"]
RUNTIME_IMPORT = "mcpgen_runtime"
VENDORED_IMPORT = "._runtime"


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # Python source: spec strings go through the `py` filter
    )
    env.filters["py"] = py_literal
    return env


@dataclass(frozen=True)
class _ToolView:
    """What the templates need of a tool, with all escaping already done."""

    name: str
    py_name: str
    class_name: str
    callback: str
    returns: str
    is_async: bool
    timeout: float | None
    task_support: str
    doc: str
    client_doc: str  # doc, plus the defaults the server applies to left-out arguments
    handler_params: str
    handler_param_list: tuple[str, ...]
    handler_returns: str
    client_params: str
    client_param_list: tuple[str, ...]  # after self, before the progress callback
    client_returns: str
    required_args: str
    required_pairs: tuple[str, ...]
    optional_params: tuple[ir.Parameter, ...]
    wire_params: str
    wire_param_values: tuple[str, ...]
    defaults: str
    default_values: tuple[Any, ...]
    args_var: str
    result_var: str
    # client-side extras: progress callbacks and task handles
    kw_sep: str  # ", *" unless the parameters already end in keyword-only ones
    progress_kw: str  # the keyword-only progress callback parameter's name
    start_name: str  # start_<tool>: only for tools with task_support optional|required
    start_doc: str
    converter: str  # module-level function turning a CallToolResult into the return value
    # what builds a structured result's value: the model's model_validate, or for an
    # output schema that is not an object one a StructuredValue of the …Output alias
    output_build: str = ""


def _handler_signature(tool: ir.Tool, kinds: dict[str, str]) -> tuple[tuple[str, ...], str]:
    """The handler's parameters and return annotation, by the tool's callback style."""
    if tool.callback == "positional":
        handler_list = tuple(
            # a null default reaches the handler as None
            f"{p.py_name}: "
            f"{_optional(kinds[p.name], p.required or (p.has_default and p.default is not None))}"
            for p in tool.parameters
        )
        return handler_list, RETURN_ANNOTATIONS[tool.returns]
    handler_returns = (
        f"{tool.class_name}Output | dict[str, Any]"
        if tool.callback == "structured" and not needs_wrapper(tool.output_schema)
        else f"{tool.class_name}Output"
        if tool.callback == "structured"
        else RETURN_ANNOTATIONS[tool.returns]
    )
    return (f"args: {tool.class_name}Args",), handler_returns


def _client_signature(tool: ir.Tool, kinds: dict[str, str]) -> tuple[list[str], bool]:
    """The client method's parameters, and whether a ``*`` already made the rest keyword-only."""
    client_parts: list[str] = []
    keyword_only = False
    seen_optional = False
    for p in tool.parameters:
        if p.required and seen_optional and not keyword_only:
            client_parts.append("*")  # a required argument after an optional one
            keyword_only = True
        if p.required:
            client_parts.append(f"{p.py_name}: {kinds[p.name]}")
        else:
            # Left out, an optional argument is not sent (its default is the server's
            # to apply); None is sent as null, and typed only where the schema admits it.
            seen_optional = True
            client_parts.append(f"{p.py_name}: {kinds[p.name]} | Unset = UNSET")
    return client_parts, keyword_only


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


def _tool_view(
    tool: ir.Tool, typemap: TypeMap, layout: Layout, renames: dict[str, str]
) -> _ToolView:
    # signatures name the models.py types the argument schemas map to (imported by
    # name, or under a local name: ``renames``), so helper markers resolve to their
    # plain names here
    kinds = {
        param.name: resolve_helpers(
            rename_types(typemap.parameter(tool, param), renames), frozenset()
        )[0]
        for param in tool.parameters
    }
    handler_list, handler_returns = _handler_signature(tool, kinds)
    client_parts, keyword_only = _client_signature(tool, kinds)
    locals_taken = {p.py_name for p in tool.parameters}
    sent = [p for p in tool.parameters if p.required]
    text, method_text, start_text = _tool_texts(tool)
    return _ToolView(
        name=tool.name,
        py_name=tool.py_name,
        class_name=tool.class_name,
        callback=tool.callback,
        returns=tool.returns,
        is_async=tool.is_async,
        timeout=tool.timeout,
        task_support=tool.task_support,
        doc=layout.docstring(text, 2),
        client_doc=layout.docstring(method_text, 2),
        handler_params="".join(f", {part}" for part in handler_list),
        handler_param_list=handler_list,
        handler_returns=handler_returns,
        client_params="".join(f", {part}" for part in client_parts),
        client_param_list=tuple(client_parts),
        client_returns=(
            f"{tool.class_name}Output"
            if tool.callback == "structured"
            else RETURN_ANNOTATIONS[tool.returns]
        ),
        required_args="{" + ", ".join(f"{py_literal(p.name)}: {p.py_name}" for p in sent) + "}",
        required_pairs=tuple(f"{py_literal(p.name)}: {p.py_name}" for p in sent),
        optional_params=tuple(p for p in tool.parameters if not p.required),
        wire_params=_tuple(p.name for p in tool.parameters),
        wire_param_values=tuple(p.name for p in tool.parameters),
        defaults=_tuple(p.default if p.has_default else None for p in tool.parameters),
        default_values=tuple(p.default if p.has_default else None for p in tool.parameters),
        args_var="arguments" if "arguments" not in locals_taken else "arguments_",
        result_var="result" if "result" not in locals_taken else "result_",
        kw_sep="" if keyword_only else ", *",
        progress_kw="on_progress" if "on_progress" not in locals_taken else "on_progress_",
        start_name=f"start_{tool.py_name}",
        start_doc=layout.docstring(start_text, 2),
        converter=f"_{tool.py_name}_result",
        output_build=(
            f"StructuredValue[{tool.class_name}Output]({tool.class_name}Output)"
            if tool.output_schema is not None and needs_wrapper(tool.output_schema)
            else f"{tool.class_name}Output.model_validate"
        ),
    )


def _client_names(tools: list[_ToolView]) -> list[_ToolView]:
    """Give ``start_<tool>`` a trailing ``_`` where another client method has its name."""
    taken = {t.py_name for t in tools} | {"close", "list_tools", "session", "stdio", "in_memory"}
    views = []
    for view in tools:
        name = view.start_name
        if view.task_support != "forbidden":
            while name in taken:
                name += "_"
            taken.add(name)
        views.append(dataclasses.replace(view, start_name=name))
    return views


def _tuple(values: Any) -> str:
    items = [py_literal(value) for value in values]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _optional(kind: str, present: bool) -> str:
    if present or kind in ("Any", "None") or kind.endswith("| None"):
        return kind
    return f"{kind} | None"


_DOC_DEPTH = {"sync_client": 1, "async_client": 1}  # class docstrings; the rest: modules


def _docstrings(contract: ir.Contract, layout: Layout) -> dict[str, str]:
    """Every docstring that mentions a spec string, escaped in one place."""
    name, package = contract.server.name, contract.package
    prefix = contract.server.class_prefix
    texts = {
        "server_module": (
            f"Server stubs for the {name!r} contract.\n\n"
            f"Subclass ``{prefix}Server``, implement one method per tool, then run it with\n"
            f"``serve(MyImplementation())`` or ``python -m {package} --impl module:Class``.\n"
            "Arguments arrive validated against the published input schema and coerced\n"
            '(``"3"`` → ``3``); raise ``ToolError("…")`` to send the caller a message.\n'
        ),
        "contract_module": (
            f"The {name!r} contract as published: descriptors, fingerprints, spec hash.\n\n"
            "``TOOLS`` holds each tool's ``tools/list`` entry in the 2025-11-25 shape (the\n"
            "runtime strips fields older revisions do not define). ``FINGERPRINTS`` maps a\n"
            "tool name to the sha256 of its canonical JSON without ``execution``.\n"
        ),
        "models_module": (
            f"Types of the {name!r} contract.\n\n"
            "Output models and shared ``types`` are pydantic v2 models (an optional field\n"
            "left out is ``MISSING``, never ``None``); ``…Args`` and ``…Dict`` are TypedDicts\n"
            "of validated JSON argument values, keyed by wire names. Types only: bounds,\n"
            "patterns and formats are checked by the runtime's validator, on both sides.\n"
        ),
        "package_module": f"Generated MCP server and client package for the {name!r} contract.",
        "main_module": (
            f"Run the {name!r} server: ``python -m {package} [--impl module:Class] "
            "[--transport stdio|http]``."
        ),
        "client_module": (
            f"Typed clients for the {name!r} contract.\n\n"
            f"``{prefix}Client`` (sync) and ``Async{prefix}Client`` mirror each other method\n"
            "for method. Each tool is a method with the positional handler's signature; an\n"
            "optional argument left out (``UNSET``) is not sent, ``None`` is sent as null\n"
            "where the schema admits null, and a keyword-only\n"
            "``on_progress(progress, total, message)`` receives the call's progress\n"
            "notifications. A tool whose contract allows tasks also has ``start_<tool>``,\n"
            "which returns a ``TaskHandle`` (``status()``, ``result()``, ``cancel()``).\n\n"
            'On connect the client picks the protocol era (``protocol="auto"`` probes with\n'
            "``server/discover`` and falls back to ``initialize``) and compares the server's\n"
            'tools with the contract it was generated from (``verify="strict"`` raises\n'
            "``ContractMismatch`` on a breaking difference).\n"
        ),
        "sync_client": f"Client for the {name!r} server: ``with {prefix}Client.stdio([...]) as c``.",
        "async_client": (
            f"Async client for the {name!r} server: "
            f"``async with Async{prefix}Client.stdio([...]) as c``."
        ),
    }
    return {key: layout.docstring(text, _DOC_DEPTH.get(key, 0)) for key, text in texts.items()}


def _typing_import(tools: list[_ToolView]) -> str:
    text = " ".join(t.handler_params + t.handler_returns for t in tools)
    names = ["TYPE_CHECKING", "Any"] + (["Literal"] if "Literal[" in text else [])
    return f"from typing import {', '.join(names)}"


def header(contract: ir.Contract) -> str:
    name = "".join(ch if ch.isprintable() else "?" for ch in contract.spec_name)
    # line 1 of every file: a spec named `coding=latin-1.yaml` must not be read as a
    # PEP 263 coding cookie, which would change how Python decodes the whole file
    name = re.sub(r"(coding)([:=])", r"\1 \2", name)
    return f"# Generated by mcpgen {__version__} from {name}. Do not edit: change the spec and rebuild."


def _server_info(server: ir.Server) -> dict[str, Any]:
    """``serverInfo`` as the generated server reports it at initialize."""
    info: dict[str, Any] = {"name": server.name, "version": server.version}
    if server.title is not None:
        info["title"] = server.title
    return info


def render_package(
    contract: ir.Contract, runtime: RuntimeMode = "installed", cache: UnitCache | None = None
) -> dict[str, bytes]:
    """Every file of the generated package, black-clean and ready to write. ``cache``
    holds black's output for units that need black (see ``layout``), by content."""
    env = _environment()
    layout = Layout(cache)
    descriptors = [descriptor(tool) for tool in contract.tools]
    prefix = contract.server.class_prefix
    typemap = TypeMap.for_contract(contract)
    renames = local_type_names(contract, typemap)
    tools = _client_names([_tool_view(tool, typemap, layout, renames) for tool in contract.tools])
    signatures = " ".join(t.handler_params + t.client_params for t in tools)
    signature_types = types_named_in(signatures, typemap, renames)
    own = {f"{t.class_name}Args" for t in contract.tools if t.callback != "positional"}
    own |= {f"{t.class_name}Output" for t in contract.tools if t.callback == "structured"}
    imports = model_imports(own | signature_types, renames)
    shared = _shared_defs(descriptors)
    context = {
        "docs": _docstrings(contract, layout),
        "typing_import": _typing_import,
        "header": header(contract),
        "runtime": RUNTIME_IMPORT if runtime == "installed" else VENDORED_IMPORT,
        "mcpgen_version": __version__,
        "requirement": requirement(__version__),
        "package": contract.package,
        "server": contract.server,
        "server_class": f"{prefix}Server",
        "client_class": f"{prefix}Client",
        "async_client_class": f"Async{prefix}Client",
        "server_doc": layout.docstring(
            f"Implement one method per tool of the {contract.server.name} contract.", 1
        ),
        "tools": tools,
        "descriptors": descriptors,
        "shared_defs": shared,
        "statement": functools.partial(_statement, layout),
        "tools_value": (tools_value := _share_repeats(_with_shared_defs(descriptors, shared)))[0],
        "shared_schemas": tools_value[1],
        "fingerprints": {d["name"]: tool_fingerprint(d) for d in descriptors},
        "server_info": _server_info(contract.server),
        "spec_sha256": contract.spec_sha256,
        "model_imports": imports,
        "output_models": sorted(
            f"{t.class_name}Output" for t in contract.tools if t.callback == "structured"
        ),
        "annotation_models": model_imports(signature_types, renames),
        "value_outputs": any(t.output_build.startswith("StructuredValue") for t in tools),
        "task_tools": [t for t in tools if t.task_support != "forbidden"],
        "models_body": render_models(contract, typemap, layout),
        "layout": layout,
        "U0": UNIT + "0",
        "U1": UNIT + "1",
    }
    files = _render_templates(env, context, layout)
    if runtime == "vendored":
        for name, source in runtime_sources(f"{contract.package}._runtime").items():
            files[f"_runtime/{name}"] = (header(contract) + "\n" + source).encode()
    return dict(sorted(files.items()))


def _render_templates(
    env: jinja2.Environment, context: dict[str, Any], layout: Layout
) -> dict[str, bytes]:
    """The package's own files: one template each, laid out, plus ``py.typed``."""
    files: dict[str, bytes] = {}
    for template in (
        "__init__.py",
        "__main__.py",
        "client.py",
        "contract.py",
        "models.py",
        "server.py",
    ):
        source = env.get_template(f"{template}.jinja").render(context)
        text = layout.finish(source)
        if template == "models.py":
            # black used to reject invalid code on the way; now models.py, where names
            # and annotations come from the spec's schemas, is compiled (~4% of a build)
            compile(text, "models.py", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        files[template] = text.encode()
    files["py.typed"] = b""
    return files


def _statement(layout: Layout, target: str, value: Any) -> str:
    """``target = value`` for a data value, laid out as black keeps it."""
    return layout.block(literal_node(value, f"{target} = "), 0)


def _shared_defs(descriptors: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``$defs`` entries that two or more published schemas hold identically: each
    schema must carry its own (the wire format has no sharing), but contract.py can
    write such an entry once and put the same object in each."""
    seen: dict[str, list[bytes]] = {}
    values: dict[str, Any] = {}
    for tool in descriptors:
        for key in ("inputSchema", "outputSchema"):
            for name, schema in (tool.get(key) or {}).get("$defs", {}).items():
                seen.setdefault(name, []).append(canonical(schema))
                values.setdefault(name, schema)
    return {
        name: values[name]
        for name, forms in seen.items()
        if len(forms) > 1 and len(set(forms)) == 1
    }


def _with_shared_defs(
    descriptors: list[dict[str, Any]], shared: dict[str, Any]
) -> list[dict[str, Any]]:
    """``descriptors`` with each shared ``$defs`` entry written as ``_DEFS["Name"]``."""

    def schema(value: Any) -> Any:
        defs = value.get("$defs") if isinstance(value, dict) else None
        if not isinstance(defs, dict):
            return value
        named = {
            name: PySource(f"_DEFS[{py_literal(name)}]") if name in shared else body
            for name, body in defs.items()
        }
        return {**value, "$defs": named}

    return [
        {
            key: schema(value) if key in ("inputSchema", "outputSchema") else value
            for key, value in tool.items()
        }
        for tool in descriptors
    ]


SHARED_SCHEMA_MIN_CHARS = 200
"""A subschema (object or array) of at least this much JSON text (200 characters) that
the published schemas hold more than once is written once in contract.py, as
``_SHARED[i]``, and that object goes into each schema (the wire still carries it whole)."""


def _share_repeats(tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Any]]:
    """``tools`` with each repeated large subschema of their input and output schemas
    written as ``_SHARED[i]``, and the list of those subschemas (in order of first use).
    Repeats are found by their JSON text in written key order, so that every schema
    publishes exactly what it did."""
    import json

    def key(node: Any) -> str | None:
        if not isinstance(node, (dict, list)) or not node:
            return None
        text = json.dumps(node, ensure_ascii=False)
        return text if len(text) >= SHARED_SCHEMA_MIN_CHARS else None

    counts: dict[str, int] = {}
    stack: list[Any] = [t.get(k) for t in tools for k in ("inputSchema", "outputSchema")]
    while stack:
        node = stack.pop()
        found = key(node)
        if found is None:
            continue
        counts[found] = counts.get(found, 0) + 1
        stack.extend(node.values() if isinstance(node, dict) else node)
    index: dict[str, int] = {}
    shared: list[Any] = []

    def replace(node: Any) -> Any:
        found = key(node)
        if found is None:
            return node
        if counts.get(found, 0) > 1:
            if found not in index:
                index[found] = len(shared)
                shared.append(node)
            return PySource(f"_SHARED[{index[found]}]")
        if isinstance(node, dict):
            return {k: replace(v) for k, v in node.items()}
        return [replace(v) for v in node]

    out = [
        {k: replace(v) if k in ("inputSchema", "outputSchema") else v for k, v in tool.items()}
        for tool in tools
    ]
    return out, shared


def runtime_sources(import_name: str = RUNTIME_IMPORT) -> dict[str, str]:
    """The runtime's modules, for a vendored copy imported as ``import_name``.

    The runtime imports itself relatively; any absolute ``mcpgen_runtime`` left (in
    docstrings, say) is rewritten so the copy never reaches for the distribution.
    """
    word = re.compile(rf"\b{RUNTIME_IMPORT}\b")
    return {
        path.relative_to(RUNTIME_DIR).as_posix(): word.sub(
            import_name, path.read_text(encoding="utf-8")
        )
        for path in sorted(RUNTIME_DIR.rglob("*.py"))
    }
