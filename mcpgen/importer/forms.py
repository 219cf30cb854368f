"""``mcpgen import``: how a listed tool becomes a spec entry. Root ``$defs`` equal
across tools become one shared type (``DefClasses``, ``TypeHoister``); each tool
takes the first form that publishes its listed definition (``ToolEntry``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from mcpgen_runtime.protocol.constants import META_SCOPES
from mcpgen_runtime.protocol.param_headers import HEADER_KEY

from ..names import MODELS_PY_NAMES

# Root keywords of an input schema that only annotate it (a `parameters` form that
# would drop one is not taken: the listed schema is kept instead).
_ROOT_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples"})
_PARAMETER_ROOT = frozenset({"type", "properties", "required", "additionalProperties"})
_DEF_REF = re.compile(r"^#/(\$defs|definitions)/([^/]+)$")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_DefKey = tuple[int, str, str]  # (tool index, "$defs" | "definitions", name)


class DefClasses:
    """The root ``$defs`` of every tool, grouped into classes of equal definitions.

    Two definitions are equal when they have the same name and the same content once
    each reference to another local definition is read as that definition's class: a
    fixed point (partition refinement), so definitions that refer to each other and
    are repeated in every tool collapse into one class each. The name is part of the
    identity so that a shared type keeps the name the server published."""

    def __init__(self, schemas: Sequence[Any]) -> None:
        self.defs: dict[_DefKey, Any] = {}
        for index, schema in enumerate(schemas):
            if not isinstance(schema, dict):
                continue
            for container in ("$defs", "definitions"):
                if isinstance(schema.get(container), dict):
                    for name, value in schema[container].items():
                        self.defs[(index, container, name)] = value
        self.of: dict[_DefKey, int] = {}
        classes = -1
        while True:
            signatures: dict[tuple[int, str], int] = {}
            new_of: dict[_DefKey, int] = {}
            for key, value in self.defs.items():
                sig = (self.of.get(key, 0), key[2] + "\0" + canon(self._marked(value, key[0])))
                new_of[key] = signatures.setdefault(sig, len(signatures))
            self.of = new_of
            if len(signatures) == classes:
                break
            classes = len(signatures)

    def target(self, tool: int, ref: str) -> _DefKey | None:
        match = _DEF_REF.match(ref)
        if not match:
            return None
        key = (tool, match.group(1), match.group(2).replace("~1", "/").replace("~0", "~"))
        return key if key in self.defs else None

    def _marked(self, node: Any, tool: int) -> Any:
        """``node`` with each local reference replaced by its target's current class."""
        if isinstance(node, list):
            return [self._marked(item, tool) for item in node]
        if not isinstance(node, dict):
            return node
        result: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                target = self.target(tool, value)
                result[key] = value if target is None else f"\0class {self.of.get(target, 0)}"
            elif key in _VALUE_KEYWORDS:
                result[key] = value
            else:
                result[key] = self._marked(value, tool)
        return result


_VALUE_KEYWORDS = frozenset({"enum", "const", "default", "examples"})  # values, not schemas


class TypeHoister:
    """Root ``$defs`` as shared ``types``: one type per class of equal definitions,
    named as the server named it unless that name is taken (then renamed, which the
    faithfulness check sees: such a tool keeps its own ``$defs``)."""

    def __init__(self, classes: DefClasses, tool_stems: set[str]) -> None:
        self.classes = classes
        self.types: dict[str, Any] = {}
        self._class_names = {
            f"{stem}{suffix}" for stem in tool_stems for suffix in ("Args", "Output")
        }
        self._names: dict[int, str] = {}  # class → type name

    def hoist(self, tool: int, schema: Any, problems: list[str], where: str) -> Any:
        """``schema`` without root ``$defs``, its ``#/$defs/X`` references renamed to types."""
        if not isinstance(schema, dict):
            return schema
        for key, value in self.classes.defs.items():
            if key[0] == tool:
                name = self._name(self.classes.of[key], key[2])
                if name not in self.types:
                    self.types[name] = None  # claimed first: a definition may refer to itself
                    self.types[name] = self._rewrite(value, tool, problems, where)
        body = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
        return self._rewrite(body, tool, problems, where)

    def _name(self, cls: int, wanted: str) -> str:
        if cls in self._names:
            return self._names[cls]
        base = re.sub(r"[^0-9A-Za-z_]+", "_", wanted).strip("_") or "Type"
        if base[0].isdigit():
            base = "_" + base
        if base in self._class_names or base in MODELS_PY_NAMES:  # a class that exists, or a
            base += "Type"  # name models.py needs (a tool's …Args/…Output, str, list, ...)
        taken = set(self._names.values())
        candidate, counter = base, 2
        while candidate in taken:
            candidate, counter = f"{base}{counter}", counter + 1
        self._names[cls] = candidate
        return candidate

    def _rewrite(self, node: Any, tool: int, problems: list[str], where: str) -> Any:
        if isinstance(node, list):
            return [self._rewrite(item, tool, problems, where) for item in node]
        if not isinstance(node, dict):
            return node
        result: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                target = self.classes.target(tool, value)
                if target is None:
                    problems.append(
                        f"{where}: $ref {value!r} is not a root $defs entry; a spec cannot hold it"
                    )
                    result[key] = value
                else:
                    result[key] = f"#/types/{self._name(self.classes.of[target], target[2])}"
            elif key in _VALUE_KEYWORDS:
                result[key] = value
            else:
                result[key] = self._rewrite(value, tool, problems, where)
        return result


def canon(value: Any) -> str:

    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- one tool


class ToolEntry:
    """One listed tool, split into the parts of a spec entry."""

    def __init__(self, index: int, raw: Mapping[str, Any], classes: DefClasses) -> None:
        self.index = index
        self.raw = dict(raw)
        self.name = str_or_none(raw.get("name")) or ""
        self.problems: list[str] = []
        # Checked once with a hoister of its own: a reference a spec cannot hold is a
        # problem whichever form the tool is written in.
        probe = TypeHoister(classes, set())
        hoisted = probe.hoist(2 * index, raw.get("inputSchema"), self.problems, "inputSchema")
        if isinstance(raw.get("outputSchema"), dict):
            probe.hoist(2 * index + 1, raw["outputSchema"], self.problems, "outputSchema")
        if not isinstance(hoisted, dict) or hoisted.get("type") != "object":
            self.problems.append("inputSchema is not an object schema (type: object)")

    def entry(self, level: int, hoist: TypeHoister) -> dict[str, Any]:
        """The spec entry; ``level`` 0: ``parameters`` with shared types, 1:
        ``input_schema`` with shared types, 2: both schemas exactly as listed."""
        raw = self.raw
        result: dict[str, Any] = {"name": self.name}
        annotations = _mapping(raw.get("annotations"))
        title = str_or_none(raw.get("title"))
        annotation_title = str_or_none(annotations.get("title"))
        if title is not None:
            result["title"] = title
            if annotation_title != title:  # the spec mirrors a title unless told otherwise
                result["annotation_title"] = (
                    annotation_title if annotation_title is not None else False
                )
        elif annotation_title is not None:
            result["annotation_title"] = annotation_title
        if isinstance(raw.get("description"), str):
            result["description"] = raw["description"]
        if level == 2:
            input_schema = raw.get("inputSchema")
            output_schema = raw.get("outputSchema")
        else:
            input_schema = hoist.hoist(2 * self.index, raw.get("inputSchema"), [], "inputSchema")
            output_schema = (
                hoist.hoist(2 * self.index + 1, raw["outputSchema"], [], "outputSchema")
                if isinstance(raw.get("outputSchema"), dict)
                else None
            )
        parameters = _as_parameters(input_schema) if level == 0 else None
        if parameters is not None:
            result["parameters"] = parameters
        else:
            result["input_schema"] = input_schema
        if isinstance(output_schema, dict):
            result["output_schema"] = output_schema
        else:
            # No output schema: the server may answer any content and structuredContent;
            # `result` hands all of it to the caller (a `string` would keep the text only).
            result["returns"] = "result"
        result.update(_hint_keys(annotations))
        execution = _mapping(raw.get("execution"))
        if execution.get("taskSupport") in ("forbidden", "optional", "required"):
            result["task_support"] = execution["taskSupport"]  # `forbidden` written out is listed
        icons = [_icon(icon) for icon in raw.get("icons") or [] if _is_icon(icon)]
        if icons:
            result["icons"] = icons
        if isinstance(raw.get("_meta"), dict):
            meta = dict(raw["_meta"])
            scopes = meta.get(META_SCOPES)
            if isinstance(scopes, list) and all(isinstance(s, str) for s in scopes):
                # mcpgen's own key: the contract's `scopes`, which publishes it again
                result["scopes"] = meta.pop(META_SCOPES)
            if meta or "scopes" not in result:  # an empty _meta as listed stays
                result["meta"] = meta
        return result


_HINTS = (
    ("readOnlyHint", "read_only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open_world"),
)


def _hint_keys(annotations: dict[str, Any]) -> dict[str, Any]:
    """The spec's ``hints`` (the four MCP hints that are booleans) and ``annotations``
    (every other member but the title, such as chrome-devtools-mcp's ``category``,
    carried as listed), each only when there is something to say."""
    hints = {
        spec_key: annotations[wire_key]
        for wire_key, spec_key in _HINTS
        if isinstance(annotations.get(wire_key), bool)
    }
    wire = {wire_key for wire_key, _ in _HINTS} | {"title"}
    extra = {key: value for key, value in annotations.items() if key not in wire}
    return {key: value for key, value in (("hints", hints), ("annotations", extra)) if value}


def _as_parameters(schema: Any) -> list[dict[str, Any]] | None:
    """The ``parameters`` list for an input schema, or None when it has no such form."""
    if not isinstance(schema, dict):
        return None
    extra = set(schema) - _PARAMETER_ROOT - _ROOT_ANNOTATIONS
    if extra or schema.get("additionalProperties", True) not in (True, False):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    if any(not isinstance(name, str) or name not in properties for name in required):
        return None
    parameters: list[dict[str, Any]] = []
    for name, prop in properties.items():
        if not isinstance(prop, dict) or "name" in prop or "required" in prop or "header" in prop:
            return None  # `name`/`required`/`header` would mean the parameter's, not the schema's
        if HEADER_KEY in prop and not isinstance(prop[HEADER_KEY], str):
            return None
        if "description" in prop and not isinstance(prop["description"], str):
            return None
        is_required = name in required
        if is_required and "default" in prop:
            return None  # the spec reads a default as "optional"
        # x-mcp-header is written as the parameter's `header:`, in its place
        parameter = {
            "name": name,
            **{"header" if k == HEADER_KEY else k: v for k, v in prop.items()},
        }
        if not is_required and "default" not in prop:
            parameter["required"] = False
        parameters.append(parameter)
    return parameters


def _is_icon(icon: Any) -> bool:
    return isinstance(icon, dict) and isinstance(icon.get("src"), str)


def _icon(icon: Mapping[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"src": icon["src"]}
    if isinstance(icon.get("mimeType"), str):
        result["mime_type"] = icon["mimeType"]
    sizes = icon.get("sizes")
    if isinstance(sizes, list) and all(isinstance(size, str) for size in sizes):
        result["sizes"] = sizes
    if icon.get("theme") in ("light", "dark"):
        result["theme"] = icon["theme"]
    return result
