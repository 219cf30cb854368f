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
from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY as _META_SCHEMAS  # type: ignore[import-untyped]

from .. import ir
from ..names import MODELS_PY_NAMES, class_name, shadowed_module
from ..names import py_identifier as _py_identifier
from ..safeio import MAX_SPEC_BYTES, UnsafeFile, outside_reason, read_regular
from ..schemas import Bundler, derive_input_schema, walk_schemas
from .errors import Diagnostic, did_you_mean, format_path
from .format import SPEC_FORMAT_SCHEMA, TOOL_NAME_PATTERN
from .keywords import JSON_TYPES, KNOWN_KEYWORDS, is_generator_directive
from .yamlpos import Path as YPath
from .yamlpos import PositionedDocument, load_yaml

__all__ = ["LoadResult", "load_contract", "load_spec_text"]

# Methods of the generated clients; a tool method of the same name would shadow them.
CLIENT_MEMBERS = frozenset(
    {"stdio", "in_memory", "connect", "close", "list_tools", "call_tool", "session", "aclose"}
)
PARAMETER_KEYS = frozenset({"name", "description", "required"})
# jsonschema's default registry fetches any http:// or file:// reference it meets.
# No check here may ever retrieve one: both validators resolve only the bundled
# meta-schemas, and user schemas are checked with the runtime's validator, which
# follows local references only.
_FORMAT_VALIDATOR = Draft202012Validator(SPEC_FORMAT_SCHEMA, registry=_META_SCHEMAS)
_META_VALIDATOR = Draft202012Validator(Draft202012Validator.META_SCHEMA, registry=_META_SCHEMAS)
# Keywords whose meaning depends on the dynamic scope at validation time: a bundled,
# published schema cannot keep that meaning, so a spec may not use them.
_DYNAMIC_KEYWORDS = frozenset({"$dynamicRef", "$recursiveRef"})
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


def load_contract(
    path: str | Path, *, allow_outside_refs: bool = False, allow_outside_output: bool = False
) -> LoadResult:
    """Load and validate the spec at ``path``; never raises for a bad spec.

    ``allow_outside_output``: accept an ``output`` that is absolute or leaves the
    spec's directory tree (refused by default: a spec, perhaps written by an imported
    server, must not choose to write anywhere on the machine)."""
    spec_path = Path(path)
    try:
        # a regular file of bounded size: a FIFO or /dev/zero named as the spec is a
        # diagnostic, never a hang
        raw = read_regular(spec_path, limit=MAX_SPEC_BYTES)
    except UnsafeFile as exc:
        return LoadResult(None, [Diagnostic(str(path), 1, 1, "", f"cannot read spec: it {exc.reason}")])
    except OSError as exc:
        return LoadResult(None, [Diagnostic(str(path), 1, 1, "", f"cannot read spec: {exc.strerror}")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LoadResult(None, [Diagnostic(str(path), 1, 1, "", f"spec is not UTF-8: {exc.reason}")])
    return load_spec_text(
        text, str(path), spec_dir=spec_path.parent, allow_outside_refs=allow_outside_refs,
        allow_outside_output=allow_outside_output,
    )


def load_spec_text(
    text: str,
    filename: str,
    *,
    spec_dir: Path,
    allow_outside_refs: bool = False,
    allow_outside_output: bool = False,
) -> LoadResult:
    doc, problems = load_yaml(text, filename)
    if problems and doc.data is None:
        return LoadResult(None, problems)
    checker = _Checker(doc, filename, spec_dir, allow_outside_refs, allow_outside_output)
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
    def __init__(self, doc: PositionedDocument, filename: str, spec_dir: Path, allow_outside: bool,
                 allow_outside_output: bool = False):
        self.doc = doc
        self.data: Any = doc.data
        self.filename = filename
        self.spec_dir = spec_dir
        self.allow_outside = allow_outside
        self.allow_outside_output = allow_outside_output
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
        self.check_package()
        self.check_output()
        types: dict[str, Any] = self.data["types"] if isinstance(self.data.get("types"), dict) else {}
        for name, schema in types.items():
            self.check_schema(schema, ("types", name))
        tools_raw: list[Any] = self.data["tools"] if isinstance(self.data.get("tools"), list) else []
        for index, tool in enumerate(tools_raw):
            if isinstance(tool, dict):
                self.check_tool_schemas(tool, ("tools", index))
        bundler = Bundler(self.spec_dir, types, allow_outside=self.allow_outside,
                          reserved=_local_def_names(tools_raw))
        bundler.bundle_types()
        built = [
            (index, self.build_tool(tool, ("tools", index), bundler, types))
            for index, tool in enumerate(tools_raw)
            if isinstance(tool, dict)
        ]
        tools = [tool for _, tool in built]
        for problem in bundler.problems:
            self.error(problem.path, problem.message)
        self.check_file_directives(bundler)
        # positions use the index in the spec, not in the list of tools that could be built
        self.check_names([(index, tool) for index, tool in built if tool is not None],
                         tools_raw, types)
        if any(d.level == "error" for d in self.diagnostics):
            return None
        for index, tool in built:
            if tool is not None:
                self.check_runtime_schemas(tool, ("tools", index))
        self.check_model_depth(bundler, built)
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

    def check_file_directives(self, bundler: Bundler) -> None:
        """Generator directives in referenced files (whose keywords are not otherwise
        checked), reported at the ``$ref`` that brought the file in."""
        for name, (file, pointer, ref_path) in bundler.file_defs.items():
            for node, sub in walk_schemas(bundler.defs.get(name), ()):
                if not isinstance(node, dict):
                    continue
                for key in node:
                    if is_generator_directive(key):
                        inner = "".join(f"/{part}" for part in sub)
                        where = f"{bundler.shown(file)}#{pointer}{inner}"
                        self.error(ref_path, _directive_message(key, where))

    def check_model_depth(
        self, bundler: Bundler, built: list[tuple[int, ir.Tool | None]]
    ) -> None:
        """Types and output schemas become pydantic models through datamodel-code-generator
        in its untrusted mode, which reads a bounded depth: deeper is an error here, with
        its position, not a refused build."""
        from ..render.models import MAX_MODEL_SCHEMA_DEPTH, json_depth

        def check(schema: Any, path: YPath, what: str) -> None:
            depth = json_depth(schema)
            if depth > MAX_MODEL_SCHEMA_DEPTH:
                self.error(path, f"{what} nests objects and arrays {depth} levels deep; a model "
                           f"is generated from at most {MAX_MODEL_SCHEMA_DEPTH}")

        for name, schema in bundler.defs.items():
            if name in bundler.file_defs:
                file, pointer, ref_path = bundler.file_defs[name]
                check(schema, ref_path, f"{bundler.shown(file)}#{pointer}")
            else:
                check(schema, ("types", name), "this type")
        for index, tool in built:
            if tool is not None and tool.output_schema is not None and tool.output_type_ref is None:
                body = {k: v for k, v in tool.output_schema.items() if k != "$defs"}
                check(body, ("tools", index, "output_schema"), "this output schema")

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

    def check_package(self) -> None:
        package = self.data.get("package")
        if not isinstance(package, str):
            return
        shadowed = shadowed_module(package)
        if shadowed is not None:
            self.error(("package",), f"'{package}' would shadow {shadowed} of that name "
                       f"(imports of '{package}' and `python -m {package}` would get one in "
                       f"place of the other); choose another name, e.g. '{package}_mcp'")

    def check_output(self) -> None:
        """``output`` stays inside the spec's directory tree (symlinks resolved): an
        imported spec once gained an ``output:`` line from a server's name, and a build
        then wrote wherever it said. ``-o DIR`` (typed by the user) and
        ``--allow-outside-output`` are the ways out."""
        declared = self.data.get("output")
        if not isinstance(declared, str) or self.allow_outside_output:
            return
        reason = outside_reason(self.spec_dir, declared)
        if reason is not None:
            self.error(("output",), f"{reason}; build inside the spec's folder, choose the "
                       "directory with `mcpgen build -o DIR`, or pass --allow-outside-output")

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
                    body = _parameter_schema(parameter)
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
                if key in _DYNAMIC_KEYWORDS:
                    self.error(sub + (key,), f"'{key}' is not supported: its target depends on "
                               "the dynamic scope, which a bundled schema cannot keep; use $ref",
                               key=True)
                    continue
                if is_generator_directive(key):
                    self.error(sub + (key,), _directive_message(key), key=True)
                    continue
                if key in KNOWN_KEYWORDS or key in PARAMETER_KEYS and sub == path or key.startswith("x-"):
                    continue
                self.error(sub + (key,), f"unknown JSON Schema keyword '{key}'"
                           f"{did_you_mean(key, KNOWN_KEYWORDS)}", key=True)
            self.check_patterns(node, sub)
            kinds = node.get("type")
            for kind, kind_path in (
                [(kinds, sub + ("type",))] if isinstance(kinds, str)
                else [(k, sub + ("type", i)) for i, k in enumerate(kinds)] if isinstance(kinds, list)
                else []
            ):
                if isinstance(kind, str) and kind not in JSON_TYPES:
                    self.error(kind_path, f"'{kind}' is not a JSON Schema type"
                               f"{did_you_mean(kind, JSON_TYPES) or ' (one of ' + ', '.join(JSON_TYPES) + ')'}")
        for error in _META_VALIDATOR.iter_errors(schema):
            if error.validator == "type" and error.absolute_path and error.absolute_path[-1] == "type":
                continue  # reported above with a suggestion
            sub = path + tuple(error.absolute_path)
            if error.validator in ("anyOf", "oneOf") and list(error.absolute_path)[-1:] == ["type"]:
                continue
            self.error(sub, f"invalid JSON Schema: {_short(error.message)}")

    def check_patterns(self, node: Mapping[str, Any], path: YPath) -> None:
        """Every regular expression compiles as the server will run it: ECMA-262,
        linear time (no lookaround or back-references), bounded program size."""
        from ..runtime._regex import EcmaRegex, RegexError

        found: list[tuple[str, YPath, bool]] = []
        if isinstance(node.get("pattern"), str):
            found.append((node["pattern"], path + ("pattern",), False))
        if isinstance(node.get("patternProperties"), dict):
            found.extend((key, path + ("patternProperties", key), True)
                         for key in node["patternProperties"] if isinstance(key, str))
        for source, where, key in found:
            try:
                EcmaRegex(source)
            except RegexError as exc:
                self.error(where, f"pattern {_short(repr(source), 80)} cannot be used: {exc}",
                           key=key)

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
            input_schema, parameters = self.tool_from_input_schema(raw, path, bundler, types)
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
                body = _parameter_schema(param)
                bundled, used = bundler.bundle(body, param_path)
                defs |= used
                has_default = "default" in param
                # a list is JSON Schema's `required` (kept in the schema), not the parameter's
                is_required = param["required"] if isinstance(param.get("required"), bool) \
                    else not has_default
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
            output_schema, bundled = self.publish_tool_schema(
                raw, path, "output_schema", bundler, types)
            ref = bundled.get("$ref") if isinstance(bundled, dict) and len(bundled) == 1 else None
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                # a bare $ref: `…Output` is an alias of the model of the type or file it names
                target = ref.removeprefix("#/$defs/")
                if target in bundler.defs and target.isidentifier():
                    output_type_ref = target

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
            annotations_title=_annotations_title(raw),
            execution_explicit="task_support" in raw,
        )

    def publish_tool_schema(
        self, raw: Mapping[str, Any], path: YPath, key: str, bundler: Bundler,
        types: Mapping[str, Any],
    ) -> tuple[dict[str, Any], Any]:
        """The published ``inputSchema``/``outputSchema`` of a hand-written schema:
        bundled, its root an object (a root ``$ref`` inlined); an error at its line
        when it cannot describe an object (then a stand-in, so later checks run).
        Also returns the schema as bundled, before its root was published."""
        schema = raw[key]
        where = path + (key,)
        problems = len(bundler.problems)
        bundled, _ = bundler.bundle(schema, where, local_defs=key == "input_schema")
        if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
            for name in schema["$defs"]:
                if name in types:
                    self.error(where + ("$defs", name), f"local definition '{name}' has the name "
                               f"of types entry '{name}'; both would be published as "
                               f"'#/$defs/{name}': rename one", key=True)
        published = bundler.publish_object(bundled)
        if published is not None:
            return published, bundled
        if len(bundler.problems) == problems:  # an unresolved $ref is reported on its own
            ref = schema.get("$ref") if isinstance(schema, dict) else None
            what, why = ("an output", "structuredContent is a JSON object") if key == "output_schema" \
                else ("an input", "tool arguments are a JSON object")
            self.error(where + ("$ref",) if isinstance(ref, str) else where,
                       f"{what} schema must describe an object (type: object), and "
                       f"{repr(ref) if isinstance(ref, str) else 'this one'} does not: {why}")
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
        """A default must pass its own schema, as the generated server would check it.

        The runtime validator does the check: the same meaning as the server's (ECMA-262
        patterns in linear time), and it follows local references only, so nothing a
        spec says can make this check fetch a URL or read a file."""
        from ..runtime._jsonschema import SchemaError, ValidationFailed, compile_schema

        if param.default is None:
            # `default: null` is what FastMCP publishes for `x: str = None`: an annotation
            # saying "optional, nothing applied". The generated server never fills it in
            # (an absent argument stays absent), so it need not pass the schema.
            return
        schema = dict(param.schema)
        schema.pop("default", None)
        if "$defs" in input_schema:
            schema["$defs"] = input_schema["$defs"]
        try:
            check = compile_schema(schema, coerce=False)
        except (SchemaError, RecursionError):
            return  # an invalid schema or a refused reference is reported elsewhere
        try:
            check(param.default)
        except ValidationFailed as exc:
            self.error(path + ("default",),
                       f"default {_short(repr(param.default), 80)} fails its own schema: "
                       f"{_short(exc.describe(1))}")

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


def _directive_message(key: str, where: str = "") -> str:
    inside = f" in {where}" if where else ""
    return (f"'{key}'{inside} is a code-generator directive: it would choose what the "
            "generated models.py imports or runs, which a spec may not do; remove it")


def _parameter_schema(parameter: Mapping[str, Any]) -> dict[str, Any]:
    """A parameter's own JSON Schema: all but ``name``, and ``required`` when it is the
    parameter's boolean (a list at the top level can only be JSON Schema's keyword)."""
    return {key: value for key, value in parameter.items()
            if key != "name" and not (key == "required" and not isinstance(value, list))}


def _local_def_names(tools: list[Any]) -> frozenset[str]:
    """The local ``$defs`` names of every hand-written ``input_schema``: published as
    written, so no bundled definition may take one of them."""
    names: set[str] = set()
    for tool in tools:
        schema = tool.get("input_schema") if isinstance(tool, dict) else None
        if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
            names.update(str(name) for name in schema["$defs"])
    return frozenset(names)


def _annotations_title(raw: Mapping[str, Any]) -> str | None:
    """What ``annotations.title`` publishes: ``annotation_title`` when given (false:
    nothing), else the tool's ``title`` (DESIGN: a title is published in both)."""
    if "annotation_title" in raw:
        value = raw["annotation_title"]
        return value if isinstance(value, str) else None
    title = raw.get("title")
    return title if isinstance(title, str) else None


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
