"""models.py: pydantic models from datamodel-code-generator, plus argument TypedDicts.

datamodel-code-generator runs once, as a library, over one combined schema
whose ``$defs`` hold every ``types`` entry and every tool output schema, so a
shared type is one class however many tools use it. The argument TypedDicts
are written here: they describe JSON values keyed by wire names, which a
model generator has no notion of.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Iterable
from typing import Any

from .. import ir
from ..runtime._regex import translate
from .annotations import annotation
from .escape import py_docstring, py_str

__all__ = ["MAX_MODEL_SCHEMA_DEPTH", "ModelGenerationRefused", "json_depth", "render_models"]

_ROOT = "McpgenCombinedRoot"  # a throwaway name for the root model DCG insists on

MAX_MODEL_SCHEMA_DEPTH = 98
"""Deepest nesting (JSON objects and arrays; the schema itself is level 1) of a type or
an output schema that models.py is generated from: datamodel-code-generator's untrusted
mode reads at most 100 levels of the combined document, whose root and ``$defs`` take
two. The loader reports a deeper schema with its position."""


def render_models(contract: ir.Contract) -> str:
    """The body of models.py (imports included), before black."""
    combined = _combined_schema(contract)
    imports: dict[str, set[str]] = {
        "typing": {"Any", "Literal", "TypedDict"},
        "typing_extensions": set(),
    }
    body = ""
    if combined["$defs"]:
        generated = _run_datamodel_codegen(combined)
        dcg_imports, body = _split_imports(generated)
        for module, names in dcg_imports.items():
            imports.setdefault(module, set()).update(names)
    sections = [body.strip()] if body.strip() else []
    aliases = [
        f"{tool.class_name}Output = {tool.output_type_ref}"
        for tool in contract.tools
        if tool.output_type_ref is not None
    ]
    if aliases:
        sections.append("\n".join(aliases))
    args = [_args_typeddict(tool, contract.types) for tool in contract.tools]
    if any("Required[" in text for text in args):
        imports["typing"].add("Required")
    sections.extend(args)
    imports.pop("__future__", None)
    text = "\n".join(sections)
    for module, names in imports.items():
        imports[module] = {n for n in names if re.search(rf"\b{re.escape(n.split(' as ')[-1])}\b", text)}
    header = ["from __future__ import annotations", ""]
    header += [_import_line(module, names) for module, names in sorted(imports.items()) if names]
    return "\n".join(header) + "\n\n\n" + "\n\n\n".join(sections) + "\n"


def _combined_schema(contract: ir.Contract) -> dict[str, Any]:
    defs: dict[str, Any] = dict(contract.types)
    for tool in contract.tools:
        if tool.output_schema is not None and tool.output_type_ref is None:
            # the tool's own $defs are copies of entries already at the root
            defs[f"{tool.class_name}Output"] = {
                key: value for key, value in tool.output_schema.items() if key != "$defs"
            }
    return {"$defs": _rust_patterns(defs)}


def _rust_patterns(node: Any) -> Any:
    """``node`` with every ``pattern`` (and ``patternProperties`` key) in the syntax of
    the regex engine pydantic checks it with, translated from ECMA-262 exactly as the
    server's validator translates it: models and server accept the same strings
    (``\\d`` stays ASCII digits, ``$`` the end of the text)."""
    if isinstance(node, list):
        return [_rust_patterns(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern" and isinstance(value, str):
            result[key] = translate(value)
        elif key == "patternProperties" and isinstance(value, dict):
            result[key] = {translate(k): _rust_patterns(v) for k, v in value.items()}
        elif key in ("enum", "const", "default", "examples"):
            result[key] = value  # values, not schemas
        else:
            result[key] = _rust_patterns(value)
    return result


class ModelGenerationRefused(Exception):
    """datamodel-code-generator refused the combined schema (in its untrusted mode: a
    directive naming code to import, a schema nested too deeply); the message says why."""


def _run_datamodel_codegen(schema: dict[str, Any]) -> str:
    # datamodel-code-generator is imported inside _generate: a no-op build never pays for it.
    with warnings.catch_warnings():
        # notices about datamodel-code-generator's own future defaults, not about the spec
        warnings.simplefilter("ignore", FutureWarning)
        output = _generate(schema)
    assert isinstance(output, str)
    return _drop_class(output, _ROOT)


def _generate(schema: dict[str, Any]) -> object:
    from datamodel_code_generator import Error, generate
    from datamodel_code_generator.enums import DataModelType, InputFileType
    from datamodel_code_generator.format import Formatter, PythonVersion

    # The spec is untrusted input to the generator: in this mode it reads nothing but
    # the schema given and refuses every keyword whose value models.py would import or
    # evaluate (x-python-import, x-python-type, customTypePath, customBasePath). The
    # loader refuses those already, with positions; this holds even if one slips by.
    # An older generator would drop an unknown option silently, hence the check.
    if not _has_untrusted_mode():
        raise ModelGenerationRefused(
            "the installed datamodel-code-generator has no untrusted-input mode; "
            "upgrade it (pip install -U datamodel-code-generator)"
        )
    try:
        return generate(
            json.dumps(schema, sort_keys=False),
            untrusted_input=True,
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            target_python_version=PythonVersion.PY_311,
            class_name=_ROOT,
            disable_timestamp=True,
            use_schema_description=True,
            use_field_description=True,
            use_standard_collections=True,
            use_union_operator=True,
            field_constraints=True,
            use_double_quotes=True,
            enum_field_as_literal="all",  # type: ignore[arg-type]  # parsed by pydantic
            formatters=[Formatter.BLACK],
        )
    except Error as exc:
        raise ModelGenerationRefused(f"datamodel-code-generator (untrusted input): {exc}") from None


def json_depth(value: Any) -> int:
    """Levels of nested objects and arrays in ``value`` (a scalar is 0, ``{}`` is 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def _has_untrusted_mode() -> bool:
    try:
        from datamodel_code_generator.config import GenerateConfig
    except ImportError:
        return False
    return "untrusted_input" in GenerateConfig.model_fields


def _drop_class(source: str, name: str) -> str:
    tree = ast.parse(source)
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            assert node.end_lineno is not None
            del lines[node.lineno - 1 : node.end_lineno]
            break
    return "\n".join(lines)


def _split_imports(source: str) -> tuple[dict[str, set[str]], str]:
    """Imports of ``source`` by module, and the rest of it (comments dropped)."""
    tree = ast.parse(source)
    imports: dict[str, set[str]] = {}
    lines = source.splitlines()
    last = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names = imports.setdefault(node.module, set())
            for alias in node.names:
                names.add(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}")
            last = node.end_lineno or node.lineno
        elif isinstance(node, ast.Import):
            raise ValueError("unexpected plain import in datamodel-code-generator output")
        else:
            break
    body = [line for line in lines[last:] if not line.startswith("#   filename:")]
    return imports, "\n".join(body)


def _import_line(module: str, names: Iterable[str]) -> str:
    return f"from {module} import {', '.join(sorted(names, key=lambda n: (n.lower(), n)))}"


def _args_typeddict(tool: ir.Tool, defs: dict[str, Any]) -> str:
    name = f"{tool.class_name}Args"
    doc = py_docstring(f"Arguments of tool {tool.name!r}, keyed by wire name.")
    fields = [
        (param.name, annotation(param.schema, defs), param.required) for param in tool.parameters
    ]
    if all(wire.isidentifier() and not _is_keyword(wire) for wire, _, _ in fields):
        lines = [f"class {name}(TypedDict, total=False):", f"    {doc}", ""]
        for wire, kind, required in fields:
            lines.append(f"    {wire}: {_field(kind, required)}")
        return "\n".join(lines)
    # Wire names such as "max-results" cannot be class attributes.
    entries = ", ".join(f"{py_str(wire)}: {_field(kind, required)}" for wire, kind, required in fields)
    return f"{name} = TypedDict({py_str(name)}, {{{entries}}}, total=False)\n{name}.__doc__ = {doc}"


def _field(kind: str, required: bool) -> str:
    return f"Required[{kind}]" if required else kind


def _is_keyword(name: str) -> bool:
    import keyword

    return keyword.iskeyword(name)
