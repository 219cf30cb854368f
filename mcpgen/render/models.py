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

from mcpgen_runtime._regex import translate

from .. import ir
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
    combined, names = _combined_schema(contract)
    imports: dict[str, set[str]] = {
        "typing": {"Any", "Literal", "TypedDict"},
        "typing_extensions": set(),
    }
    body = ""
    if combined["$defs"]:
        generated = _run_datamodel_codegen(combined, names)
        dcg_imports, body = _split_imports(generated)
        body = _settle_names(body, dcg_imports, names, _own_names(contract))
        for module, names_imported in dcg_imports.items():
            imports.setdefault(module, set()).update(names_imported)
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
    for module, names_imported in imports.items():
        imports[module] = {
            n for n in names_imported
            if re.search(rf"\b{re.escape(n.split(' as ')[-1])}\b", text)
        }
    header = ["from __future__ import annotations", ""]
    header += [_import_line(module, names) for module, names in sorted(imports.items()) if names]
    return "\n".join(header) + "\n\n\n" + "\n\n\n".join(sections) + "\n"


def _combined_schema(contract: ir.Contract) -> tuple[dict[str, Any], dict[str, str]]:
    """One schema whose ``$defs`` are every type and every tool's own output schema,
    under placeholder names; and the class name each placeholder stands for.

    datamodel-code-generator renames what it considers odd (``_x`` → ``FieldX``,
    ``foo_bar`` → ``FooBar``, ``Any`` → ``AnyModel``) and may give an inline model a
    type's name first; placeholders it keeps as they are, and ``_settle_names``
    then gives each model its own name."""
    defs: dict[str, Any] = dict(contract.types)
    for tool in contract.tools:
        if tool.output_schema is not None and tool.output_type_ref is None:
            # the tool's own $defs are copies of entries already at the root
            defs[f"{tool.class_name}Output"] = {
                key: value for key, value in tool.output_schema.items() if key != "$defs"
            }
    prefix = "McpgenModel"
    text = json.dumps(defs).lower()
    while prefix.lower() in text:  # no inline model or field can be named like one
        prefix += "X"
    placeholders = {name: f"{prefix}{index}" for index, name in enumerate(defs)}
    renamed = {placeholders[name]: _for_dcg(schema, placeholders) for name, schema in defs.items()}
    originals = {placeholder: name for name, placeholder in placeholders.items()}
    return {"$defs": _rust_patterns(renamed)}, originals


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


# Keywords whose values are data, not schemas: a "$ref" inside them is not a reference.
_VALUE_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
# Keywords whose values map names to schemas (the map itself is not a schema).
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})


def _for_dcg(node: Any, placeholders: dict[str, str]) -> Any:
    """``node`` (a schema, or a list of them) as datamodel-code-generator gets it.

    - references to the placeholders;
    - a ``const`` that is a list, an object or a float as the equivalent one-value
      ``enum`` (for such a const DCG types an optional field ``x: list[Any] = None``,
      which mypy refuses; for the enum it writes ``list[Any] | None``);
    - ``patternProperties`` folded into ``additionalProperties`` (DCG writes
      ``dict[constr(pattern=...), X]``, which refuses every other key, loses
      ``additionalProperties`` and is a call in an annotation): the model accepts
      every key, and values of the types any pattern or ``additionalProperties``
      allows; the server, not the model, checks which key has which.
    """
    if isinstance(node, list):
        return [_for_dcg(item, placeholders) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            target = value.removeprefix("#/$defs/")
            result[key] = f"#/$defs/{placeholders[target]}" if target in placeholders else value
        elif key == "const" and (isinstance(value, (list, dict, float)) or _too_big(value)) \
                and "enum" not in node:
            result["enum"] = [value]
        elif key in _VALUE_KEYWORDS:
            result[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: _for_dcg(schema, placeholders) for name, schema in value.items()}
        else:
            result[key] = _for_dcg(value, placeholders)
    values = result.get("enum")
    if isinstance(values, list) and any(_too_big(v) for v in values):
        # not a Literal mypy can hold, nor one pydantic can check: the type instead
        del result["enum"]
        result.setdefault("type", sorted({_json_type(v) for v in values}))
    patterns = result.pop("patternProperties", None)
    if isinstance(patterns, dict) and patterns:
        extra = result.get("additionalProperties", True)
        if extra is True:  # any other key, any value: an open model, or a dict of Any
            result["additionalProperties"] = True if "properties" in result else {}
        else:
            allowed = [] if extra is False else [extra]
            result["additionalProperties"] = {"anyOf": [*allowed, *patterns.values()]}
    return result


def _too_big(value: Any) -> bool:
    """An integer beyond 64 bits: mypy refuses it in a Literal."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _own_names(contract: ir.Contract) -> set[str]:
    """Names mcpgen itself defines in models.py, besides the models."""
    own = {f"{tool.class_name}Args" for tool in contract.tools}
    own |= {f"{tool.class_name}Output" for tool in contract.tools if tool.output_type_ref}
    return own | {"Any", "Literal", "TypedDict", "Required"}


def _settle_names(
    body: str, imports: dict[str, set[str]], names: dict[str, str], own: set[str]
) -> str:
    """Rename the placeholder classes of ``body`` to the names they stand for; an
    inline model or an import holding one of those names (or one mcpgen defines in
    models.py) moves aside to a free name (imports as ``X as X_``). Only class
    definitions and names read in expressions are renamed: field names stay."""
    tree = ast.parse(body)
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    lost = sorted(set(names) - set(classes))
    if lost:
        raise RuntimeError(f"datamodel-code-generator did not keep the models {lost}")
    models = set(names.values())
    wanted = models | own
    taken = set(classes) | wanted | {n.split(" as ")[-1] for ns in imports.values() for n in ns}

    def free(name: str) -> str:
        candidate, counter = f"{name}_", 2
        while candidate in taken:
            candidate, counter = f"{name}_{counter}", counter + 1
        taken.add(candidate)
        return candidate

    renames = dict(names)
    for name in classes:
        if name not in names and name in wanted:
            renames[name] = free(name)
    for imported in imports.values():
        for entry in sorted(imported):
            original, _, alias = entry.partition(" as ")
            bound = alias or original
            if bound in models:  # the same import as mcpgen's own is no clash
                renames[bound] = free(bound)
                imported.remove(entry)
                imported.add(f"{original} as {renames[bound]}")
    return _rename(body, tree, renames)


def _rename(source: str, tree: ast.Module, renames: dict[str, str]) -> str:
    """``source`` with class definitions and loaded names renamed (AST positions are
    UTF-8 byte offsets, so the edits are made on bytes)."""
    edits: list[tuple[int, int, int, str]] = []  # line, start, end, new text
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in renames:
            start = node.col_offset + len("class ")
            edits.append((node.lineno, start, start + len(node.name.encode()), renames[node.name]))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in renames:
            assert node.end_col_offset is not None
            edits.append((node.lineno, node.col_offset, node.end_col_offset, renames[node.id]))
    lines = [line.encode() for line in source.split("\n")]
    for line, start, end, new in sorted(edits, reverse=True):
        lines[line - 1] = lines[line - 1][:start] + new.encode() + lines[line - 1][end:]
    return "\n".join(line.decode() for line in lines)


def _run_datamodel_codegen(schema: dict[str, Any], names: dict[str, str]) -> str:
    # datamodel-code-generator is imported inside _generate: a no-op build never pays for it.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        output = _generate(schema)
    for item in caught:
        if issubclass(item.category, FutureWarning):
            continue  # notices about DCG's own future defaults, not about the spec
        # its notes on the spec (a constraint a model cannot hold), with the real names
        text = re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), str(item.message))
        warnings.warn(text, item.category, stacklevel=2)
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
            # the package needs only pydantic: no EmailStr (email-validator), no ULID
            type_mappings=["email=string", "idn-email=string", "ulid=string"],
            # a field named Config is a v1 config class to pydantic (and clashes with
            # model_config): the field gets another Python name, its wire name as alias
            aliases={"Config": "Config_"},
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


# Source lines end in "\n" only: str.splitlines() would also split at U+2028, NEL,
# \x1c... inside string literals (a spec's enum values, defaults, descriptions).


def _drop_class(source: str, name: str) -> str:
    tree = ast.parse(source)
    lines = source.split("\n")
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
    lines = source.split("\n")
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
