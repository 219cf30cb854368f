"""Render a whole generated package from a contract, in memory.

``render_package`` returns every file (relative POSIX path → bytes), formatted
with black and stable across runs; writing them is ``write.py``'s job.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Any, Literal

import jinja2

from mcpgen_runtime._version import requirement
from mcpgen_runtime.protocol.fingerprint import canonical_json as canonical
from mcpgen_runtime.protocol.fingerprint import tool_fingerprint

from .. import __version__, ir
from ..descriptors import descriptor
from ..paths import RUNTIME_DIR, templates_dir
from .escape import PySource, py_literal
from .fileimports import PACKAGE_RUNTIME_NAMES, file_imports
from .imports import export_order
from .layout import Layout, literal_node
from .localnames import local_type_names
from .models import render_models
from .signatures import ArgumentTypes, client_names, tool_view
from .typemap import TypeMap

__all__ = ["RuntimeMode", "render_package", "runtime_sources"]

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
            f"Run the {name!r} server:\n\n"
            f"``python -m {package} [--impl module:Class] [--transport stdio|http]``\n"
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
        "sync_client": (
            f"Client for the {name!r} server:\n``with {prefix}Client.stdio([...]) as c``.\n"
        ),
        "async_client": (
            f"Async client for the {name!r} server:\n"
            f"``async with Async{prefix}Client.stdio([...]) as c``.\n"
        ),
    }
    return {key: layout.docstring(text, _DOC_DEPTH.get(key, 0)) for key, text in texts.items()}


def header(contract: ir.Contract) -> str:
    name = "".join(ch if ch.isprintable() else "?" for ch in contract.spec_name)
    # line 1 of every file: a spec named `coding=latin-1.yaml` must not be read as a
    # PEP 263 coding cookie, which would change how Python decodes the whole file
    name = re.sub(r"(coding)([:=])", r"\1 \2", name)
    return f"# Generated by mcpgen {__version__} from {name}. Do not edit: change the spec and rebuild."


# Line 2 of each generated module. A line that carries a spec's text or names (a
# description, a default, a long tool name, a fingerprint keyed by one) is as long as
# that text, and black, the formatter of record, leaves it so; every other line fits
# in LINE_LENGTH (black --check holds it), so line length is the one rule of ruff's
# defaults generated code opts out of (docs/architecture.md, "Generated code and linters").
LINT_DIRECTIVE = "# ruff: noqa: E501"


def _server_info(server: ir.Server) -> dict[str, Any]:
    """``serverInfo`` as the generated server reports it at initialize."""
    info: dict[str, Any] = {"name": server.name, "version": server.version}
    if server.title is not None:
        info["title"] = server.title
    return info


def render_package(contract: ir.Contract, runtime: RuntimeMode = "installed") -> dict[str, bytes]:
    """Every file of the generated package, black-clean and ready to write."""
    env = _environment()
    layout = Layout()
    layout.safe.add(header(contract))  # a comment: black leaves it as long as it is
    descriptors = [descriptor(tool) for tool in contract.tools]
    prefix = contract.server.class_prefix
    typemap = TypeMap.for_contract(contract)
    renames = local_type_names(contract, typemap)
    types = ArgumentTypes(typemap, renames)
    tools = client_names([tool_view(tool, types, layout) for tool in contract.tools])
    runtime_module = RUNTIME_IMPORT if runtime == "installed" else VENDORED_IMPORT
    shared = _shared_defs(descriptors)
    context = {
        "docs": _docstrings(contract, layout),
        "imports": file_imports(tools, runtime_module, renames, prefix),
        "header": header(contract) + "\n" + LINT_DIRECTIVE,
        "runtime": runtime_module,
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
        "task_tools": [t for t in tools if t.task_support != "forbidden"],
        "models_body": render_models(contract, typemap, layout),
        "layout": layout,
        "exports": export_order,
        "package_exports": [
            f"Async{prefix}Client",
            f"{prefix}Client",
            f"{prefix}Server",
            "serve",
            *PACKAGE_RUNTIME_NAMES,
        ],
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
