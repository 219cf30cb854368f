"""Spec front end: YAML file → every problem at once, or a frozen IR.

``load_contract`` reads a spec, checks its structure against the spec format
schema, the keywords and validity of every embedded JSON Schema, references,
names and defaults, and builds ``ir.Contract``. All problems of a file come
back together as one ``SpecError`` whose diagnostics carry file:line:col.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import jsonschema
import referencing.exceptions
from jsonschema import Draft202012Validator

from .. import ir
from ..names import MODELS_PY_NAMES, class_name
from ..names import py_identifier as _py_identifier
from ..schemas import Bundler, derive_input_schema, walk_schemas
from .errors import Diagnostic, did_you_mean, format_path
from .format import SPEC_FORMAT_SCHEMA, TOOL_NAME_PATTERN
from .keywords import JSON_TYPES, KNOWN_KEYWORDS
from .yamlpos import Path as YPath
from .yamlpos import PositionedDocument, load_yaml

__all__ = ["LoadResult", "load_contract", "load_spec_text"]

# Methods of the generated clients; a tool method of the same name would shadow them.
CLIENT_MEMBERS = frozenset(
    {"stdio", "in_memory", "connect", "close", "list_tools", "call_tool", "session", "aclose"}
)
PARAMETER_KEYS = frozenset({"name", "description", "required"})
_FORMAT_VALIDATOR = Draft202012Validator(SPEC_FORMAT_SCHEMA)
_NAME_RE = re.compile(TOOL_NAME_PATTERN)


@dataclass
class LoadResult:
    contract: ir.Contract | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "warning"]


def load_contract(path: str | Path, *, allow_outside_refs: bool = False) -> LoadResult:
    """Load and validate the spec at ``path``; never raises for a bad spec."""
    spec_path = Path(path)
    try:
        raw = spec_path.read_bytes()
    except OSError as exc:
        return LoadResult(None, [Diagnostic(str(path), 1, 1, "", f"cannot read spec: {exc.strerror}")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LoadResult(None, [Diagnostic(str(path), 1, 1, "", f"spec is not UTF-8: {exc.reason}")])
    return load_spec_text(text, str(path), spec_dir=spec_path.parent, allow_outside_refs=allow_outside_refs)


def load_spec_text(
    text: str, filename: str, *, spec_dir: Path, allow_outside_refs: bool = False
) -> LoadResult:
    doc, problems = load_yaml(text, filename)
    if problems and doc.data is None:
        return LoadResult(None, problems)
    checker = _Checker(doc, filename, spec_dir, allow_outside_refs)
    checker.diagnostics.extend(problems)
    try:
        contract = checker.run(hashlib.sha256(text.encode()).hexdigest())
    except RecursionError:  # a schema (inline or referenced) deeper than the checks can walk
        checker.error((), "the spec or a schema it references is nested too deeply to check")
        contract = None
    diagnostics = sorted(set(checker.diagnostics))
    if any(d.level == "error" for d in diagnostics):
        contract = None
    return LoadResult(contract, diagnostics)


class _Checker:
    def __init__(self, doc: PositionedDocument, filename: str, spec_dir: Path, allow_outside: bool):
        self.doc = doc
        self.data: Any = doc.data
        self.filename = filename
        self.spec_dir = spec_dir
        self.allow_outside = allow_outside
        self.diagnostics: list[Diagnostic] = []

    # -- reporting --------------------------------------------------------

    def error(self, path: YPath, message: str, *, key: bool = False) -> None:
        self._report(path, message, key=key, level="error")

    def warning(self, path: YPath, message: str) -> None:
        self._report(path, message, key=False, level="warning")

    def _report(self, path: YPath, message: str, *, key: bool, level: str) -> None:
        pos = self.doc.position(path, key=key)
        self.diagnostics.append(
            Diagnostic(self.filename, pos.line, pos.column, format_path(path), message,
                       level)  # type: ignore[arg-type]
        )

    # -- the checks, in order -------------------------------------------------

    def run(self, sha256: str) -> ir.Contract | None:
        if not isinstance(self.data, dict):
            self.error((), "a spec is a mapping with keys mcpgen, package, server, tools")
            return None
        self.check_structure()
        types: dict[str, Any] = self.data["types"] if isinstance(self.data.get("types"), dict) else {}
        for name, schema in types.items():
            self.check_schema(schema, ("types", name))
        tools_raw: list[Any] = self.data["tools"] if isinstance(self.data.get("tools"), list) else []
        for index, tool in enumerate(tools_raw):
            if isinstance(tool, dict):
                self.check_tool_schemas(tool, ("tools", index))
        bundler = Bundler(self.spec_dir, types, allow_outside=self.allow_outside)
        bundler.bundle_types()
        built = [
            (index, self.build_tool(tool, ("tools", index), bundler, types))
            for index, tool in enumerate(tools_raw)
            if isinstance(tool, dict)
        ]
        tools = [tool for _, tool in built]
        for problem in bundler.problems:
            self.error(problem.path, problem.message)
        # positions use the index in the spec, not in the list of tools that could be built
        self.check_names([(index, tool) for index, tool in built if tool is not None],
                         tools_raw, types)
        if any(d.level == "error" for d in self.diagnostics):
            return None
        for index, tool in built:
            if tool is not None:
                self.check_runtime_schemas(tool, ("tools", index))
        self.check_type_schemas(bundler.defs, types)
        if any(d.level == "error" for d in self.diagnostics):
            return None
        server = self.data["server"]
        package = self.data["package"]
        return ir.Contract(
            spec_path=self.filename,
            spec_name=Path(self.filename).name,
            spec_sha256=sha256,
            package=package,
            output=self.data.get("output", f"./{package}"),
            server=ir.Server(
                name=server["name"],
                version=str(server["version"]),
                title=server.get("title"),
                instructions=server.get("instructions"),
                implementation=server.get("implementation"),
                class_prefix=class_name(server["name"]),
            ),
            types={name: bundler.defs[name] for name in sorted(bundler.defs)},
            tools=tuple(tool for tool in tools if tool is not None),
            inputs=tuple(str(path) for path in bundler.files),
        )

    def check_runtime_schemas(self, tool: ir.Tool, path: YPath) -> None:
        """The generated server compiles every schema at start-up: one it cannot
        compile (an invalid regular expression, $dynamicRef) is a build error here,
        not a server that crashes when it starts."""
        from ..runtime._jsonschema import SchemaError, compile_schema

        for kind, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            if schema is None:
                continue
            try:
                compile_schema(schema, coerce=kind == "input")
            except SchemaError as exc:
                self.error(path, f"the {kind} schema cannot be served: {exc}")

    def check_type_schemas(self, defs: Mapping[str, Any], types: Mapping[str, Any]) -> None:
        """Every ``types`` entry becomes a model even when no tool uses it: one that no
        schema compiler can build (a ``$ref`` loop that never reaches a schema) is an
        error here, not a models.py the model generator fails on."""
        from ..runtime._jsonschema import SchemaError, compile_schema

        for name in types:
            if name not in defs:
                continue
            try:
                compile_schema({"$ref": f"#/$defs/{name}", "$defs": dict(defs)}, coerce=False)
            except SchemaError as exc:
                self.error(("types", name), f"type '{name}' cannot be modelled: {exc}")

    def check_structure(self) -> None:
        for error in _FORMAT_VALIDATOR.iter_errors(self.data):
            self.report_format_error(error)

    def report_format_error(self, error: jsonschema.ValidationError) -> None:
        path = tuple(error.absolute_path)
        validator, instance = error.validator, error.instance
        schema: Any = error.schema
        if validator == "additionalProperties" and isinstance(instance, dict):
            allowed = list(cast(Mapping[str, Any], schema).get("properties", {}))
            for key in instance:
                if key not in allowed:
                    self.error(path + (key,), f"unknown key '{key}'{did_you_mean(key, allowed)}"
                               f"; expected one of: {', '.join(allowed)}", key=True)
        elif validator == "required":
            missing = re.findall(r"^'([^']+)' is a required property", error.message)
            key = missing[0] if missing else error.message
            self.error(path, f"missing required key '{key}'")
        elif validator == "type":
            hint = " (quote it)" if schema["type"] == "string" and isinstance(
                instance, (int, float, bool)) else ""
            self.error(path, f"expected {_a(schema['type'])}, got {_describe(instance)}{hint}")
        elif validator == "enum":
            choices = cast(list[str], schema["enum"])
            hint = did_you_mean(str(instance), choices)
            self.error(path, f"{_describe(instance)} is not one of {', '.join(map(repr, choices))}{hint}")
        elif validator == "const":
            self.error(path, f"expected {schema['const']!r}, got {_describe(instance)}")
        elif validator == "pattern":
            self.error(path, self.pattern_message(path, instance))
        elif validator == "propertyNames":
            self.error(path, f"{error.message}")
        else:
            self.error(path, error.message)

    def pattern_message(self, path: YPath, instance: Any) -> str:
        last = path[-1] if path else ""
        if last == "name" and isinstance(instance, str) and len(instance) > 128:
            return (f"tool name is {len(instance)} characters long; a tool name has at most 128 "
                    "(A-Z a-z 0-9 _ - .)")
        if last == "name":
            return (f"{instance!r} is not a valid tool name: use 1-128 characters "
                    "of A-Z a-z 0-9 _ - .")
        if last == "package":
            return f"{instance!r} is not a Python package name"
        if last == "implementation":
            return f"{instance!r} must look like 'module.path:ClassName'"
        return f"{instance!r} does not match the expected form"

    def check_tool_schemas(self, tool: Mapping[str, Any], path: YPath) -> None:
        parameters = tool.get("parameters")
        if isinstance(parameters, list):
            for index, parameter in enumerate(parameters):
                if isinstance(parameter, dict):
                    body = {k: v for k, v in parameter.items() if k not in PARAMETER_KEYS}
                    self.check_schema(body, path + ("parameters", index))
        for key in ("input_schema", "output_schema"):
            if key in tool:
                self.check_schema(tool[key], path + (key,))

    def check_schema(self, schema: Any, path: YPath) -> None:
        """Keywords known (with a suggestion), ``type`` values real, 2020-12 valid."""
        for node, sub in walk_schemas(schema, path):
            if not isinstance(node, dict):
                continue
            for key in node:
                if key in KNOWN_KEYWORDS or key in PARAMETER_KEYS and sub == path or key.startswith("x-"):
                    continue
                self.error(sub + (key,), f"unknown JSON Schema keyword '{key}'"
                           f"{did_you_mean(key, KNOWN_KEYWORDS)}", key=True)
            kinds = node.get("type")
            for kind, kind_path in (
                [(kinds, sub + ("type",))] if isinstance(kinds, str)
                else [(k, sub + ("type", i)) for i, k in enumerate(kinds)] if isinstance(kinds, list)
                else []
            ):
                if isinstance(kind, str) and kind not in JSON_TYPES:
                    self.error(kind_path, f"'{kind}' is not a JSON Schema type"
                               f"{did_you_mean(kind, JSON_TYPES) or ' (one of ' + ', '.join(JSON_TYPES) + ')'}")
        for error in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
            if error.validator == "type" and error.absolute_path and error.absolute_path[-1] == "type":
                continue  # reported above with a suggestion
            sub = path + tuple(error.absolute_path)
            if error.validator in ("anyOf", "oneOf") and list(error.absolute_path)[-1:] == ["type"]:
                continue
            self.error(sub, f"invalid JSON Schema: {_short(error.message)}")

    # -- tools ------------------------------------------------------------

    def build_tool(
        self, raw: Mapping[str, Any], path: YPath, bundler: Bundler, types: Mapping[str, Any]
    ) -> ir.Tool | None:
        name = raw.get("name")
        if not isinstance(name, str):
            return None
        if len(name) > 64 and _NAME_RE.match(name):
            self.warning(path + ("name",), f"tool name is {len(name)} characters long; "
                         "some clients refuse names over 64")
        parameters: list[ir.Parameter] = []
        defs: set[str] = set()
        if "parameters" in raw and "input_schema" in raw:
            self.error(path + ("input_schema",),
                       "give either 'parameters' or 'input_schema', not both")
        if "input_schema" in raw:
            input_schema, parameters = self.tool_from_input_schema(raw, path, bundler)
        else:
            properties: dict[str, Any] = {}
            required: list[str] = []
            raw_params: list[Any] = (
                raw["parameters"] if isinstance(raw.get("parameters"), list) else []
            )
            seen: dict[str, int] = {}
            for index, param in enumerate(raw_params):
                if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                    continue
                param_path = path + ("parameters", index)
                pname = param["name"]
                if pname in seen:
                    self.error(param_path + ("name",),
                               f"duplicate parameter '{pname}' (also parameters[{seen[pname]}])")
                    continue
                seen[pname] = index
                body = {k: v for k, v in param.items() if k not in ("name", "required")}
                bundled, used = bundler.bundle(body, param_path)
                defs |= used
                has_default = "default" in param
                is_required = param.get("required", not has_default)
                if is_required is True and has_default:
                    self.error(param_path + ("required",),
                               "a parameter with a default cannot be required")
                properties[pname] = bundled
                if is_required:
                    required.append(pname)
                parameters.append(ir.Parameter(pname, _python_name(pname), bundled,
                                               bool(is_required), has_default, param.get("default")))
            input_schema = bundler.with_defs(derive_input_schema(properties, required),
                                             frozenset(defs))
        for index, param in enumerate(parameters):
            if param.has_default:
                self.check_default(param, input_schema, self.param_path(raw, path, index, param.name))

        output_schema: dict[str, Any] | None = None
        output_type_ref: str | None = None
        if "output_schema" in raw:
            bundled, used = bundler.bundle(raw["output_schema"], path + ("output_schema",))
            output_schema = bundler.with_defs(bundled, used)
            ref = raw["output_schema"].get("$ref") if isinstance(raw["output_schema"], dict) else None
            if isinstance(ref, str) and len(raw["output_schema"]) == 1:
                match = re.fullmatch(r"#/types/([A-Za-z_][A-Za-z0-9_]*)", ref)
                if match and match.group(1) in types:
                    output_type_ref = match.group(1)
            if isinstance(output_schema, dict) and output_schema.get("type") != "object" \
                    and output_type_ref is None:
                self.error(path + ("output_schema",), "an output schema must describe an object "
                           "(structuredContent is a JSON object before 2026-07-28)")

        any_optional = any(not p.required for p in parameters)
        default_callback = "structured" if output_schema is not None else (
            "named" if any_optional else "positional")
        callback = raw.get("callback", default_callback)
        if output_schema is not None and callback != "structured":
            self.error(path + ("callback",), f"a tool with an output_schema must use the structured "
                       f"callback (its result is validated against the schema), not '{callback}'")
        if callback == "structured" and output_schema is None and "callback" in raw:
            self.error(path + ("callback",), "the structured callback needs an output_schema")
        if "returns" in raw and callback == "structured":
            self.error(path + ("returns",), "'returns' applies to positional and named tools; "
                       "a structured tool returns its output model")
        hints = raw.get("hints", {}) if isinstance(raw.get("hints"), dict) else {}
        # (wrong types are reported by the format check; here they must not crash)
        icons = [
            ir.Icon(src=i["src"], mime_type=i.get("mime_type"),
                    sizes=tuple(i["sizes"]) if isinstance(i.get("sizes"), list) else None,
                    theme=i.get("theme"))
            for i in (raw["icons"] if isinstance(raw.get("icons"), list) else [])
            if isinstance(i, dict) and isinstance(i.get("src"), str)
        ]
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
            hints=ir.Hints(hints.get("read_only"), hints.get("destructive"),
                           hints.get("idempotent"), hints.get("open_world")),
            task_support=raw.get("task_support", "forbidden"),
            icons=tuple(icons),
            is_async=bool(raw.get("async", False)),
            timeout=float(timeout) if isinstance(timeout, (int, float)) else None,
            meta=raw.get("meta"),
            line=self.doc.position(path).line,
        )

    def tool_from_input_schema(
        self, raw: Mapping[str, Any], path: YPath, bundler: Bundler
    ) -> tuple[dict[str, Any], list[ir.Parameter]]:
        schema = raw["input_schema"]
        bundled, used = bundler.bundle(schema, path + ("input_schema",))
        published = bundler.with_defs(bundled, used)
        if not isinstance(published, dict) or published.get("type") != "object":
            self.error(path + ("input_schema",), "an input schema must have type: object")
            return {"type": "object"}, []
        properties = published.get("properties", {})
        required = published.get("required", [])
        parameters = []
        for pname, prop in properties.items() if isinstance(properties, dict) else []:
            has_default = isinstance(prop, dict) and "default" in prop
            parameters.append(ir.Parameter(
                pname, _python_name(pname), prop if isinstance(prop, dict) else {},
                pname in required, has_default,
                prop.get("default") if isinstance(prop, dict) else None))
        return published, parameters

    def param_path(self, raw: Mapping[str, Any], path: YPath, index: int, name: str) -> YPath:
        if "input_schema" in raw:
            return path + ("input_schema", "properties", name)
        return path + ("parameters", index)

    def check_default(self, param: ir.Parameter, input_schema: Mapping[str, Any], path: YPath) -> None:
        schema = dict(param.schema)
        schema.pop("default", None)
        if "$defs" in input_schema:
            schema["$defs"] = input_schema["$defs"]
        try:
            # An invalid schema (minimum: null, type: 5, pattern: "[") makes the
            # validator raise TypeError or re.error instead of reporting.
            Draft202012Validator.check_schema(schema)
            error = jsonschema.exceptions.best_match(
                Draft202012Validator(schema).iter_errors(param.default))
        except (jsonschema.exceptions.SchemaError, referencing.exceptions.Unresolvable,
                TypeError, re.error):
            return  # the schema itself is reported elsewhere
        if error is not None:
            self.error(path + ("default",),
                       f"default {param.default!r} fails its own schema: {_short(error.message)}")

    # -- names --------------------------------------------------------------

    def check_names(
        self, tools: list[tuple[int, ir.Tool]], tools_raw: list[Any], types: Mapping[str, Any]
    ) -> None:
        by_name: dict[str, int] = {}
        by_py: dict[str, str] = {}
        by_class: dict[str, str] = {name: f"type '{name}'" for name in types}
        for name in types:
            if name in MODELS_PY_NAMES:
                self.error(("types", name), f"type name '{name}' cannot be a model class: it is "
                           "a Python keyword or a name that the generated models.py uses; rename it")
        for index, tool in tools:
            path: YPath = ("tools", index, "name")
            if tool.name in by_name:
                self.error(path, f"duplicate tool name '{tool.name}' (also tools[{by_name[tool.name]}])")
                continue
            by_name[tool.name] = index
            py_clash = tool.py_name in by_py
            if py_clash:
                self.error(path, f"tool '{tool.name}' and {by_py[tool.py_name]} both become "
                           f"Python method '{tool.py_name}'")
            by_py[tool.py_name] = f"tool '{tool.name}'"
            if tool.py_name in CLIENT_MEMBERS or tool.py_name.startswith("start_"):
                self.error(path, f"tool '{tool.name}' would become method '{tool.py_name}', which "
                           "the generated client already defines")
            # `…Output` exists only with an output schema; a method clash already said it all.
            for suffix in ("Args", "Output") if tool.output_schema is not None else ("Args",):
                generated = tool.class_name + suffix
                if generated in by_class and not py_clash:
                    self.error(path, f"tool '{tool.name}' generates class '{generated}', which "
                               f"collides with {by_class[generated]}")
                by_class[generated] = f"tool '{tool.name}'"
            seen: dict[str, str] = {}
            raw = tools_raw[index]
            raw_params = raw.get("parameters") if isinstance(raw.get("parameters"), list) else []
            for param in tool.parameters:
                raw_index = next((i for i, p in enumerate(raw_params)
                                  if isinstance(p, dict) and p.get("name") == param.name), 0)
                if param.py_name in seen:
                    self.error(self.param_path(raw, ("tools", index), raw_index, param.name)
                               + (("name",) if "input_schema" not in raw else ()),
                               f"parameters '{seen[param.py_name]}' and '{param.name}' both become "
                               f"Python name '{param.py_name}'")
                seen[param.py_name] = param.name


def _python_name(name: str) -> str:
    """``py_identifier`` of the NFKC form: Python reads identifiers NFKC-normalized,
    so ``ﬁx`` *is* ``fix`` and ``ｓｅｌｆ`` *is* ``self`` in generated code; deciding
    the name on the normalized form keeps the collision and reserved-name checks true."""
    return _py_identifier(unicodedata.normalize("NFKC", name))


def _a(kind: Any) -> str:
    names = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
             "number": "a number", "boolean": "true or false", "null": "null"}
    if isinstance(kind, list):
        return " or ".join(names.get(str(k), str(k)) for k in kind)
    return names.get(kind, str(kind))


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(_short(value, 60))
    return f"{type(value).__name__} {value!r}"


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
