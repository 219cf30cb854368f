"""Lowering a checked spec to the IR: tools with their published schemas bundled,
parameters, callbacks and Python names decided (and their collisions reported).
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from mcpgen_runtime.protocol.constants import META_SCOPES
from mcpgen_runtime.protocol.param_headers import HEADER_KEY, Where, header_problems

from .. import ir
from ..descriptors import derive_input_schema
from ..keywords import local_ref_names
from ..names import MODELS_PY_NAMES, class_name
from ..names import py_identifier as _py_identifier
from .bundle import Bundler
from .format import TOOL_NAME_PATTERN
from .validate import SpecChecks, parameter_schema
from .yamlpos import Path as YPath

__all__ = ["CLIENT_MEMBERS", "Lowering", "local_def_names", "unhide_type_names"]

# Methods of the generated clients; a tool method of the same name would shadow them.
CLIENT_MEMBERS = frozenset(
    {"stdio", "in_memory", "connect", "close", "list_tools", "call_tool", "session", "aclose"}
)
_NAME_RE = re.compile(TOOL_NAME_PATTERN)


class Lowering(SpecChecks):
    """Builds ``ir.Tool``s from the raw spec, reporting what cannot be built."""

    def build_tool(
        self, raw: Mapping[str, Any], path: YPath, bundler: Bundler, types: Mapping[str, Any]
    ) -> ir.Tool | None:
        name = raw.get("name")
        if not isinstance(name, str):
            return None
        if len(name) > 64 and _NAME_RE.match(name):
            self.warning(
                path + ("name",),
                f"tool name is {len(name)} characters long; some clients refuse names over 64",
            )
        if "parameters" in raw and "input_schema" in raw:
            self.error(
                path + ("input_schema",), "give either 'parameters' or 'input_schema', not both"
            )
        if "input_schema" in raw:
            input_schema, parameters = self.tool_from_input_schema(raw, path, bundler, types)
        else:
            input_schema, parameters = self.declared_parameters(raw, path, bundler)
        self.check_headers(raw, path, input_schema)
        for index, param in enumerate(parameters):
            if param.has_default:
                self.check_default(
                    param, input_schema, self.param_path(raw, path, index, param.name)
                )
        output_schema, output_type_ref = self.output(raw, path, bundler, types)
        callback = self.callback(raw, path, output_schema, parameters)
        hints = raw.get("hints", {}) if isinstance(raw.get("hints"), dict) else {}
        timeout = raw.get("timeout")
        return ir.Tool(
            name=name,
            py_name=_python_name(name),
            class_name=class_name(name),
            title=raw.get("title"),
            description=raw.get("description"),
            parameters=tuple(parameters),
            input_schema=input_schema,
            output_schema=output_schema,
            output_type_ref=output_type_ref,
            callback=callback,
            returns=raw.get("returns", "string"),
            hints=ir.Hints(
                hints.get("read_only"),
                hints.get("destructive"),
                hints.get("idempotent"),
                hints.get("open_world"),
            ),
            task_support=raw.get("task_support", "forbidden"),
            icons=_icons(raw),
            is_async=bool(raw.get("async", False)),
            timeout=float(timeout) if isinstance(timeout, (int, float)) else None,
            meta=raw.get("meta"),
            annotations=self.annotations(raw, path),
            line=self.doc.position(path).line,
            annotations_title=_annotations_title(raw),
            execution_explicit="task_support" in raw,
            scopes=self.scopes(raw, path),
        )

    def scopes(self, raw: Mapping[str, Any], path: YPath) -> tuple[str, ...]:
        """A tool's scopes: the server's, then its own (each once). Its ``meta`` may not
        set the key they are published under (two ways to say one thing)."""
        meta = raw.get("meta")
        if isinstance(meta, dict) and META_SCOPES in meta:
            self.error(
                path + ("meta", META_SCOPES), f"{META_SCOPES} is set with 'scopes', not here"
            )
        server = self.data.get("server")
        found: list[str] = []
        for source in (
            server.get("scopes") if isinstance(server, dict) else None,
            raw.get("scopes"),
        ):
            if isinstance(source, list):
                found += [s for s in source if isinstance(s, str) and s not in found]
        return tuple(found)

    def check_headers(self, raw: Mapping[str, Any], path: YPath, schema: Mapping[str, Any]) -> None:
        """Every ``x-mcp-header`` (a parameter's ``header``) the 2026-07-28 rules refuse,
        at its line: an official HTTP client would drop the tool."""
        listed = raw.get("parameters")
        raw_params: list[Any] = listed if isinstance(listed, list) else []
        for index, param in enumerate(raw_params):
            if isinstance(param, dict) and HEADER_KEY in param:
                self.error(
                    path + ("parameters", index, HEADER_KEY),
                    f"write the header name as 'header: {param[HEADER_KEY]}' (published as "
                    f"{HEADER_KEY})",
                    key=True,
                )
        for where, why in header_problems(schema):
            self.error(_header_path(raw_params, "input_schema" in raw, path, where), why)

    def annotations(self, raw: Mapping[str, Any], path: YPath) -> dict[str, Any] | None:
        """The spec's ``annotations``: members published beside title and the hints,
        which have keys of their own (two ways to set one would be one too many)."""
        extra = raw.get("annotations")
        if not isinstance(extra, dict) or not extra:
            return None
        for key in extra:
            if key in _OWN_ANNOTATIONS:
                self.error(
                    path + ("annotations", key),
                    f"annotations.{key} is set with {_OWN_ANNOTATIONS[key]}, not here",
                )
        return {key: value for key, value in extra.items() if key not in _OWN_ANNOTATIONS}

    def declared_parameters(
        self, raw: Mapping[str, Any], path: YPath, bundler: Bundler
    ) -> tuple[dict[str, Any], list[ir.Parameter]]:
        """The input schema and parameters of a tool declared with ``parameters``."""
        parameters: list[ir.Parameter] = []
        defs: set[str] = set()
        properties: dict[str, Any] = {}
        required: list[str] = []
        raw_params: list[Any] = raw["parameters"] if isinstance(raw.get("parameters"), list) else []
        seen: dict[str, int] = {}
        for index, param in enumerate(raw_params):
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                continue
            param_path = path + ("parameters", index)
            pname = param["name"]
            if pname in seen:
                self.error(
                    param_path + ("name",),
                    f"duplicate parameter '{pname}' (also parameters[{seen[pname]}])",
                )
                continue
            seen[pname] = index
            body = parameter_schema(param)
            bundled, used = bundler.bundle(body, param_path)
            defs |= used
            has_default = "default" in param
            # a list is JSON Schema's `required` (kept in the schema), not the parameter's
            is_required = (
                param["required"] if isinstance(param.get("required"), bool) else not has_default
            )
            if is_required is True and has_default:
                self.error(
                    param_path + ("required",), "a parameter with a default cannot be required"
                )
            properties[pname] = bundled
            if is_required:
                required.append(pname)
            parameters.append(
                ir.Parameter(
                    pname,
                    _python_name(pname),
                    bundled,
                    bool(is_required),
                    has_default,
                    param.get("default"),
                )
            )
        input_schema = bundler.with_defs(derive_input_schema(properties, required), frozenset(defs))
        return input_schema, parameters

    def output(
        self, raw: Mapping[str, Any], path: YPath, bundler: Bundler, types: Mapping[str, Any]
    ) -> tuple[dict[str, Any] | None, str | None]:
        """The published output schema, and the type its ``…Output`` model aliases."""
        output_schema: dict[str, Any] | None = None
        output_type_ref: str | None = None
        if "output_schema" in raw:
            output_schema, bundled = self.publish_tool_schema(
                raw, path, "output_schema", bundler, types
            )
            ref = bundled.get("$ref") if isinstance(bundled, dict) and len(bundled) == 1 else None
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                # a bare $ref: `…Output` is an alias of the model of the type or file it names
                target = ref.removeprefix("#/$defs/")
                if target in bundler.defs and target.isidentifier():
                    output_type_ref = target
        return output_schema, output_type_ref

    def callback(
        self,
        raw: Mapping[str, Any],
        path: YPath,
        output_schema: dict[str, Any] | None,
        parameters: list[ir.Parameter],
    ) -> Any:
        """The handler shape: declared, or implied by the output schema and parameters."""
        any_optional = any(not p.required for p in parameters)
        default_callback = (
            "structured"
            if output_schema is not None
            else ("named" if any_optional else "positional")
        )
        callback = raw.get("callback", default_callback)
        if output_schema is not None and callback != "structured":
            self.error(
                path + ("callback",),
                f"a tool with an output_schema must use the structured "
                f"callback (its result is validated against the schema), not '{callback}'",
            )
        if callback == "structured" and output_schema is None and "callback" in raw:
            self.error(path + ("callback",), "the structured callback needs an output_schema")
        if "returns" in raw and callback == "structured":
            self.error(
                path + ("returns",),
                "'returns' applies to positional and named tools; "
                "a structured tool returns its output model",
            )
        return callback

    def publish_tool_schema(
        self,
        raw: Mapping[str, Any],
        path: YPath,
        key: str,
        bundler: Bundler,
        types: Mapping[str, Any],
    ) -> tuple[dict[str, Any], Any]:
        """The published ``inputSchema``/``outputSchema`` of a hand-written schema:
        bundled, its root an object (a root ``$ref`` inlined); an error at its line
        when it cannot describe an object (then a stand-in, so later checks run).
        Also returns the schema as bundled, before its root was published."""
        schema = raw[key]
        where = path + (key,)
        problems = len(bundler.problems)
        bundled, _ = bundler.bundle(schema, where, local_defs=key == "input_schema", whole=True)
        if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
            for name in schema["$defs"]:
                if name in types:
                    self.error(
                        where + ("$defs", name),
                        f"local definition '{name}' has the name "
                        f"of types entry '{name}'; both would be published as "
                        f"'#/$defs/{name}': rename one",
                        key=True,
                    )
        published = bundler.publish_object(bundled)
        if published is not None:
            return published, bundled
        if key == "output_schema" and isinstance(bundled, dict):
            # any JSON Schema (SEP-2106): published as written, with what it references
            used = {name for name in local_ref_names(bundled) if name in bundler.defs}
            return bundler.with_defs(bundled, bundler.closure(used)), bundled
        if len(bundler.problems) == problems:  # an unresolved $ref is reported on its own
            ref = schema.get("$ref") if isinstance(schema, dict) else None
            what, why = (
                ("an output", "structuredContent is a JSON object")
                if key == "output_schema"
                else ("an input", "tool arguments are a JSON object")
            )
            self.error(
                where + ("$ref",) if isinstance(ref, str) else where,
                f"{what} schema must describe an object (type: object), and "
                f"{repr(ref) if isinstance(ref, str) else 'this one'} does not: {why}",
            )
        return {"type": "object"}, bundled

    def tool_from_input_schema(
        self, raw: Mapping[str, Any], path: YPath, bundler: Bundler, types: Mapping[str, Any]
    ) -> tuple[dict[str, Any], list[ir.Parameter]]:
        published, _ = self.publish_tool_schema(raw, path, "input_schema", bundler, types)
        properties = published.get("properties", {})
        required = published.get("required", [])
        parameters = []
        for pname, prop in properties.items() if isinstance(properties, dict) else []:
            has_default = isinstance(prop, dict) and "default" in prop
            parameters.append(
                ir.Parameter(
                    pname,
                    _python_name(pname),
                    prop if isinstance(prop, dict) else {},
                    pname in required,
                    has_default,
                    prop.get("default") if isinstance(prop, dict) else None,
                )
            )
        return published, parameters

    def param_path(self, raw: Mapping[str, Any], path: YPath, index: int, name: str) -> YPath:
        if "input_schema" in raw:
            return path + ("input_schema", "properties", name)
        return path + ("parameters", index)

    def check_names(
        self, tools: list[tuple[int, ir.Tool]], tools_raw: list[Any], types: Mapping[str, Any]
    ) -> None:
        by_name: dict[str, int] = {}
        by_py: dict[str, str] = {}
        by_class: dict[str, str] = {name: f"type '{name}'" for name in types}
        for name in types:
            if name in MODELS_PY_NAMES:
                self.error(
                    ("types", name),
                    f"type name '{name}' cannot be a model class: it is "
                    "a Python keyword or a name that the generated models.py uses; rename it",
                )
        for index, tool in tools:
            path: YPath = ("tools", index, "name")
            if tool.name in by_name:
                self.error(
                    path, f"duplicate tool name '{tool.name}' (also tools[{by_name[tool.name]}])"
                )
                continue
            by_name[tool.name] = index
            py_clash = tool.py_name in by_py
            if py_clash:
                self.error(
                    path,
                    f"tool '{tool.name}' and {by_py[tool.py_name]} both become "
                    f"Python method '{tool.py_name}'",
                )
            by_py[tool.py_name] = f"tool '{tool.name}'"
            if tool.py_name in CLIENT_MEMBERS or tool.py_name.startswith("start_"):
                self.error(
                    path,
                    f"tool '{tool.name}' would become method '{tool.py_name}', which "
                    "the generated client already defines",
                )
            # `…Output` exists only with an output schema; a method clash already said it all.
            for suffix in ("Args", "Output") if tool.output_schema is not None else ("Args",):
                generated = tool.class_name + suffix
                if generated in by_class and not py_clash:
                    self.error(
                        path,
                        f"tool '{tool.name}' generates class '{generated}', which "
                        f"collides with {by_class[generated]}",
                    )
                by_class[generated] = f"tool '{tool.name}'"
            self.check_param_names(index, tool, tools_raw[index])

    def check_param_names(self, index: int, tool: ir.Tool, raw: Mapping[str, Any]) -> None:
        """No two parameters of one tool may become the same Python name."""
        seen: dict[str, str] = {}
        listed = raw.get("parameters")
        raw_params: list[Any] = listed if isinstance(listed, list) else []
        for param in tool.parameters:
            raw_index = next(
                (
                    i
                    for i, p in enumerate(raw_params)
                    if isinstance(p, dict) and p.get("name") == param.name
                ),
                0,
            )
            if param.py_name in seen:
                self.error(
                    self.param_path(raw, ("tools", index), raw_index, param.name)
                    + (("name",) if "input_schema" not in raw else ()),
                    f"parameters '{seen[param.py_name]}' and '{param.name}' both become "
                    f"Python name '{param.py_name}'",
                )
            seen[param.py_name] = param.name


def _icons(raw: Mapping[str, Any]) -> tuple[ir.Icon, ...]:
    """A tool's well-formed ``icons`` entries (the checks report the others)."""
    listed = raw.get("icons")
    return tuple(
        ir.Icon(
            src=i["src"],
            mime_type=i.get("mime_type"),
            sizes=tuple(i["sizes"]) if isinstance(i.get("sizes"), list) else None,
            theme=i.get("theme"),
        )
        for i in (listed if isinstance(listed, list) else [])
        if isinstance(i, dict) and isinstance(i.get("src"), str)
    )


def local_def_names(tools: list[Any]) -> frozenset[str]:
    """The local ``$defs`` names of every hand-written ``input_schema``: published as
    written, so no bundled definition may take one of them."""
    names: set[str] = set()
    for tool in tools:
        schema = tool.get("input_schema") if isinstance(tool, dict) else None
        if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
            names.update(str(name) for name in schema["$defs"])
    return frozenset(names)


def _header_path(raw_params: list[Any], hand_written: bool, path: YPath, where: Where) -> YPath:
    """The spec position of a problem at ``where`` in a tool's published input schema."""
    if hand_written:
        return path + ("input_schema", *where)
    if len(where) >= 2 and where[0] == "properties":
        for index, param in enumerate(raw_params):
            if isinstance(param, dict) and param.get("name") == where[1]:
                rest = where[2:]
                return path + (
                    "parameters",
                    index,
                    *(("header",) if rest == (HEADER_KEY,) else rest),
                )
    return path + ("parameters",)


def _python_name(name: str) -> str:
    """``py_identifier`` of the NFKC form: Python reads identifiers NFKC-normalized,
    so ``ﬁx`` *is* ``fix`` and ``ｓｅｌｆ`` *is* ``self`` in generated code; deciding
    the name on the normalized form keeps the collision and reserved-name checks true."""
    return _py_identifier(unicodedata.normalize("NFKC", name))


def unhide_type_names(
    built: list[tuple[int, ir.Tool | None]], types: Mapping[str, Any]
) -> list[tuple[int, ir.Tool | None]]:
    """Tools whose method or parameter names would hide a name the generated server
    and client import from models.py (a parameter ``address`` beside a type
    ``address``: the annotation ``address`` would mean the parameter) get a trailing
    ``_``, as names that hide builtins do; wire names are unchanged."""
    hidden = set(types) | {f"{name}Dict" for name in types}
    for _, tool in built:
        if tool is not None:
            hidden |= {f"{tool.class_name}Args", f"{tool.class_name}Output"}

    def free(name: str, taken: set[str]) -> str:
        while name in hidden or name in taken:
            name += "_"
        return name

    result: list[tuple[int, ir.Tool | None]] = []
    for index, tool in built:
        if tool is not None and (
            tool.py_name in hidden or any(p.py_name in hidden for p in tool.parameters)
        ):
            own = {p.py_name for p in tool.parameters}
            parameters = []
            for param in tool.parameters:
                if param.py_name in hidden:
                    param = dataclasses.replace(param, py_name=free(param.py_name, own))
                    own.add(param.py_name)
                parameters.append(param)
            tool = dataclasses.replace(
                tool, py_name=free(tool.py_name, set()), parameters=tuple(parameters)
            )
        result.append((index, tool))
    return result


# the annotations members the spec sets through keys of its own
_OWN_ANNOTATIONS = {
    "title": "annotation_title", "readOnlyHint": "hints.read_only",
    "destructiveHint": "hints.destructive", "idempotentHint": "hints.idempotent",
    "openWorldHint": "hints.open_world",
}  # fmt: skip


def _annotations_title(raw: Mapping[str, Any]) -> str | None:
    """What ``annotations.title`` publishes: ``annotation_title`` when given (false:
    nothing), else the tool's ``title`` (a title is published in both by default)."""
    if "annotation_title" in raw:
        value = raw["annotation_title"]
        return value if isinstance(value, str) else None
    title = raw.get("title")
    return title if isinstance(title, str) else None
