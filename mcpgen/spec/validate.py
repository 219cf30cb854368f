"""Spec checks: the format schema, every embedded JSON Schema, patterns, defaults,
what the generated server and models will be able to compile, and where the output goes.

``Reporter`` turns a path in the spec into a diagnostic with file:line:col;
``SpecChecks`` holds the checks, which report and never stop at the first problem.
Lowering the checked spec to the IR is ``lower.py``'s job; ``load.py`` runs both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import jsonschema
from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY as _META_SCHEMAS  # type: ignore[import-untyped]

from mcpgen_runtime.protocol.param_headers import HEADER_KEY

from .. import __version__, ir
from ..keywords import (
    JSON_TYPES,
    KNOWN_KEYWORDS,
    MAX_MODEL_SCHEMA_DEPTH,
    is_generator_directive,
    json_depth,
    walk_schemas,
)
from ..names import shadowed_module
from ..safeio import outside_reason
from .bundle import Bundler
from .errors import Diagnostic, did_you_mean, format_path
from .format import SPEC_FORMAT_SCHEMA
from .yamlpos import Path as YPath
from .yamlpos import PositionedDocument

__all__ = ["Reporter", "SpecChecks", "parameter_schema"]

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

# Keywords of vocabularies beside JSON Schema's met in copied schemas: OpenAPI's
# (`nullable`, `discriminator`, `example`, `xml`, `externalDocs`). Annotations to JSON
# Schema, published unchanged without a word (`example` is no typo of `examples`).
FOREIGN_ANNOTATIONS = frozenset({"nullable", "discriminator", "example", "xml", "externalDocs"})
# Keywords of earlier drafts that 2020-12 spells otherwise, outside a schema that
# declares its draft (then they are rewritten: see dialect.py).
_OLD_KEYWORDS = {
    "additionalItems": "is draft 2019-09 and earlier: in 2020-12 `prefixItems` holds the "
    "positions and `items` the rest; declare the draft with $schema "
    "(e.g. http://json-schema.org/draft-07/schema#) to have it rewritten",
    "$recursiveAnchor": "is draft 2019-09's; it is not supported (use $ref)",
}

# Meta-schema validation is most of a spec's load time (~1 ms a schema), and specs
# repeat schemas (the same parameter in many tools): a schema found valid is known by
# its content, so its copies are not validated again. Only valid ones are kept: an
# invalid copy is validated again, for its own diagnostics at its own place.
_META_VALID: set[str] = set()
MAX_META_VALID = 20_000
"""Most schema contents remembered as valid (20,000; then the set starts again)."""


def _content_key(schema: Any) -> str | None:
    """The schema's JSON text with sorted keys (1 and 1.0 and true stay apart), or
    None when it is not plain JSON (then it is always validated)."""
    try:
        return json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


class Reporter:
    """The spec being loaded and the diagnostics found in it so far."""

    def __init__(
        self,
        doc: PositionedDocument,
        filename: str,
        spec_dir: Path,
        allow_outside: bool,
        allow_outside_output: bool = False,
    ):
        self.doc = doc
        self.data: Any = doc.data
        self.filename = filename
        self.spec_dir = spec_dir
        self.allow_outside = allow_outside
        self.allow_outside_output = allow_outside_output
        self.diagnostics: list[Diagnostic] = []

    def error(self, path: YPath, message: str, *, key: bool = False) -> None:
        self._report(path, message, key=key, level="error")

    def warning(self, path: YPath, message: str) -> None:
        self._report(path, message, key=False, level="warning")

    def _report(self, path: YPath, message: str, *, key: bool, level: str) -> None:
        pos = self.doc.position(path, key=key)
        self.diagnostics.append(
            Diagnostic(self.filename, pos.line, pos.column, format_path(path), message, level)  # type: ignore[arg-type]
        )


class SpecChecks(Reporter):
    """Every check of a spec that is not the building of the IR itself."""

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

    def check_model_depth(self, bundler: Bundler, built: list[tuple[int, ir.Tool | None]]) -> None:
        """Types and output schemas get Python types from a mapping that recurses once per
        level, so their depth is bounded: deeper is an error here, with its position, not
        a failed build."""

        def check(schema: Any, path: YPath, what: str) -> None:
            depth = json_depth(schema)
            if depth > MAX_MODEL_SCHEMA_DEPTH:
                self.error(
                    path,
                    f"{what} nests objects and arrays {depth} levels deep; a model "
                    f"is generated from at most {MAX_MODEL_SCHEMA_DEPTH}",
                )

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
        from mcpgen_runtime.schema.validator import SchemaError, compile_schema

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
            self.error(
                ("package",),
                f"'{package}' would shadow {shadowed} of that name "
                f"(imports of '{package}' and `python -m {package}` would get one in "
                f"place of the other); choose another name, e.g. '{package}_mcp'",
            )

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
            self.error(
                ("output",),
                f"{reason}; build inside the spec's folder, choose the "
                "directory with `mcpgen build -o DIR`, or pass --allow-outside-output",
            )

    def check_type_schemas(self, defs: Mapping[str, Any], types: Mapping[str, Any]) -> None:
        """Every ``types`` entry becomes a model even when no tool uses it: one that no
        schema compiler can build (a ``$ref`` loop that never reaches a schema) is an
        error here, not a models.py the model generator fails on."""
        from mcpgen_runtime.schema.validator import SchemaError, compile_schema

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
                    self.error(
                        path + (key,),
                        f"unknown key '{key}'{did_you_mean(key, allowed)}"
                        f"; expected one of: {', '.join(allowed)}",
                        key=True,
                    )
        elif validator == "required":
            missing = re.findall(r"^'([^']+)' is a required property", error.message)
            key = missing[0] if missing else error.message
            if isinstance(instance, dict) and _misspelt_as(key, instance, schema):
                return  # the unknown key's own diagnostic says "did you mean '<key>'?"
            self.error(path, f"missing required key '{key}'")
        elif validator == "type":
            hint = (
                " (quote it)"
                if schema["type"] == "string" and isinstance(instance, (int, float, bool))
                else ""
            )
            self.error(path, f"expected {_a(schema['type'])}, got {_describe(instance)}{hint}")
        elif validator == "enum":
            choices = cast(list[str], schema["enum"])
            hint = did_you_mean(str(instance), choices)
            self.error(
                path, f"{_describe(instance)} is not one of {', '.join(map(repr, choices))}{hint}"
            )
        elif validator == "const" and path == ("mcpgen",) and _newer_format(instance):
            self.error(
                path,
                f"this spec is written in format version {instance}; this mcpgen "
                f"({__version__}) reads version {schema['const']}: upgrade mcpgen "
                "(pip install --upgrade mcpgen)",
            )
        elif validator == "const":
            self.error(path, f"expected {schema['const']!r}, got {_describe(instance)}")
        elif validator == "pattern":
            self.error(path, self.pattern_message(path, instance))
        elif validator in ("maxLength", "minLength") and isinstance(instance, str):
            limit = "at most" if validator == "maxLength" else "at least"
            self.error(path, f"{len(instance)} characters; {limit} {schema[validator]} here")
        elif validator == "propertyNames":
            self.error(path, f"{error.message}")
        else:
            self.error(path, error.message)

    def pattern_message(self, path: YPath, instance: Any) -> str:
        last = path[-1] if path else ""
        if path[:2] == ("server", "environment"):
            return f"{instance!r} is not an environment variable name (A-Z a-z 0-9 _)"
        if len(path) >= 2 and path[-2] == "scopes":
            return (
                f"{instance!r} is not an OAuth scope: printable ASCII without spaces, "
                "quotes or backslashes (notes:read)"
            )
        if last == "name" and isinstance(instance, str) and len(instance) > 128:
            return (
                f"tool name is {len(instance)} characters long; a tool name has at most 128 "
                "(A-Z a-z 0-9 _ - .)"
            )
        if last == "name":
            return (
                f"{instance!r} is not a valid tool name: use 1-128 characters of A-Z a-z 0-9 _ - ."
            )
        if last == "package":
            return f"{instance!r} is not a Python package name"
        if last == "implementation":
            return f"{instance!r} must look like 'module.path:ClassName'"
        if last == "registry_name":
            return (
                f"{instance!r} is not an MCP Registry name: a reverse-DNS namespace, '/', "
                "then the server (io.github.you/weather; A-Z a-z 0-9 . - _)"
            )
        return f"{instance!r} does not match the expected form"

    def check_tool_schemas(self, tool: Mapping[str, Any], path: YPath) -> None:
        parameters = tool.get("parameters")
        if isinstance(parameters, list):
            for index, parameter in enumerate(parameters):
                if isinstance(parameter, dict):
                    body = parameter_schema(parameter)
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
                    self.error(
                        sub + (key,),
                        f"'{key}' is not supported: its target depends on "
                        "the dynamic scope, which a bundled schema cannot keep; use $ref",
                        key=True,
                    )
                    continue
                if is_generator_directive(key):
                    self.error(sub + (key,), _directive_message(key), key=True)
                    continue
                if (
                    key in KNOWN_KEYWORDS
                    or key in PARAMETER_KEYS
                    and sub == path
                    or key.startswith("x-")
                    or key in FOREIGN_ANNOTATIONS
                ):
                    continue
                self.unknown_keyword(key, sub + (key,))
            self.check_patterns(node, sub)
            self.check_types(node, sub)
        key = _content_key(schema)
        if key is not None and key in _META_VALID:
            return
        found = False
        for error in _META_VALIDATOR.iter_errors(schema):
            found = True
            if (
                error.validator == "type"
                and error.absolute_path
                and error.absolute_path[-1] == "type"
            ):
                continue  # reported above with a suggestion
            sub = path + tuple(error.absolute_path)
            if error.validator in ("anyOf", "oneOf") and list(error.absolute_path)[-1:] == ["type"]:
                continue
            self.error(sub, f"invalid JSON Schema: {_short(error.message)}")
        if key is not None and not found:
            if len(_META_VALID) >= MAX_META_VALID:
                _META_VALID.clear()
            _META_VALID.add(key)

    def check_types(self, node: Mapping[str, Any], sub: YPath) -> None:
        """Each ``type`` value is a JSON Schema type (else an error with a suggestion)."""
        kinds = node.get("type")
        for kind, kind_path in (
            [(kinds, sub + ("type",))]
            if isinstance(kinds, str)
            else [(k, sub + ("type", i)) for i, k in enumerate(kinds)]
            if isinstance(kinds, list)
            else []
        ):
            if isinstance(kind, str) and kind not in JSON_TYPES:
                self.error(
                    kind_path,
                    f"'{kind}' is not a JSON Schema type"
                    f"{did_you_mean(kind, JSON_TYPES) or ' (one of ' + ', '.join(JSON_TYPES) + ')'}",
                )

    def unknown_keyword(self, key: str, path: YPath) -> None:
        """JSON Schema reads a keyword it does not know as an annotation, and so does
        mcpgen (published unchanged, never checked), with a warning; a near miss of a
        known keyword (``typ``, ``propertys``) is a typo, an error with its suggestion."""
        if key in _OLD_KEYWORDS:
            self.error(path, f"'{key}' {_OLD_KEYWORDS[key]}", key=True)
            return
        suggestion = did_you_mean(key, KNOWN_KEYWORDS)
        if suggestion:
            self.error(path, f"unknown JSON Schema keyword '{key}'{suggestion}", key=True)
        else:
            self.warning(
                path,
                f"unknown keyword '{key}' is kept as an annotation: "
                "published unchanged, not checked",
            )

    def check_patterns(self, node: Mapping[str, Any], path: YPath) -> None:
        """Every regular expression compiles as the server will run it: ECMA-262,
        linear time (no lookaround or back-references), bounded program size."""
        from mcpgen_runtime.schema.regex import EcmaRegex, RegexError

        found: list[tuple[str, YPath, bool]] = []
        if isinstance(node.get("pattern"), str):
            found.append((node["pattern"], path + ("pattern",), False))
        if isinstance(node.get("patternProperties"), dict):
            found.extend(
                (key, path + ("patternProperties", key), True)
                for key in node["patternProperties"]
                if isinstance(key, str)
            )
        for source, where, key in found:
            try:
                EcmaRegex(source)
            except RegexError as exc:
                self.error(
                    where, f"pattern {_short(repr(source), 80)} cannot be used: {exc}", key=key
                )

    def check_default(
        self, param: ir.Parameter, input_schema: Mapping[str, Any], path: YPath
    ) -> None:
        """A default must pass its own schema, as the generated server would check it.

        The runtime validator does the check: the same meaning as the server's (ECMA-262
        patterns in linear time), and it follows local references only, so nothing a
        spec says can make this check fetch a URL or read a file."""
        from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

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
            self.error(
                path + ("default",),
                f"default {_short(repr(param.default), 80)} fails its own schema: "
                f"{_short(exc.describe(1))}",
            )


def _misspelt_as(key: str, instance: Mapping[str, Any], schema: Any) -> bool:
    """Is a key of ``instance`` that the schema does not allow a misspelling of the missing
    ``key``? Then one typo is one diagnostic (the unknown key, with its suggestion)."""
    allowed = set(cast(Mapping[str, Any], schema).get("properties", {}))
    unknown = [name for name in instance if isinstance(name, str) and name not in allowed]
    return any(did_you_mean(name, allowed) == f" (did you mean '{key}'?)" for name in unknown)


def _newer_format(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


def _directive_message(key: str, where: str = "") -> str:
    inside = f" in {where}" if where else ""
    return (
        f"'{key}'{inside} is a code-generator directive: it would choose what the "
        "generated models.py imports or runs, which a spec may not do; remove it"
    )


def parameter_schema(parameter: Mapping[str, Any]) -> dict[str, Any]:
    """A parameter's own JSON Schema: all but ``name``, ``required`` when it is the
    parameter's boolean (a list at the top level can only be JSON Schema's keyword), and
    ``header`` published as ``x-mcp-header``."""
    return {
        HEADER_KEY if key == "header" else key: value
        for key, value in parameter.items()
        if key != "name" and not (key == "required" and not isinstance(value, list))
    }


def _a(kind: Any) -> str:
    names = {
        "object": "a mapping",
        "array": "a list",
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "null": "null",
    }
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
