"""``mcpgen import``: start a live MCP server, list its tools, write a spec for them.

The spec reproduces the server's contract wire-faithfully: a server generated from it
lists the same definitions (name, title, description, schemas, annotations, icons,
execution, ``_meta``), so a client generated from it connects to the original with no
contract warnings. Each tool takes the first form that publishes its listed
definition: ``parameters`` (when the derived input schema is the listed one), then
``input_schema`` with shared ``types``, then both schemas as listed with their own
``$defs``. Root ``$defs`` equal across tools (same name, same content up to what their
references point to) become one shared type. A tool without an output schema gets
``returns: result`` (the whole result: every content block, ``structuredContent``).
The result is checked before it is returned: the spec loads, and the descriptors it
publishes are compatible with what the server listed (``runtime/_compat``); what
still differs (a member the spec format has no key for) is said above the tool.
"""

from __future__ import annotations

import keyword
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mcpgen_runtime._compat import Change, Severity, compare_tools

from .names import MODELS_PY_NAMES, class_name, shadowed_module
from .printable import escape_line, needs_escape
from .schemas import descriptor
from .spec.load import load_spec_text

__all__ = ["ImportFailed", "ImportedSpec", "import_server", "spec_from_tools"]

# Root keywords of an input schema that only annotate it (a `parameters` form that
# would drop one is not taken: the listed schema is kept instead).
_ROOT_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples"})
_PARAMETER_ROOT = frozenset({"type", "properties", "required", "additionalProperties"})
_TYPE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PACKAGE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DEF_REF = re.compile(r"^#/(\$defs|definitions)/([^/]+)$")


class ImportFailed(Exception):
    """The server's tools cannot be written as a spec; the message says why."""


@dataclass
class ImportedSpec:
    """The spec text and what an importer should know about it."""

    text: str
    package: str
    tools: int
    notes: dict[str, list[str]] = field(default_factory=dict)  # tool → how it differs


def import_server(
    command: Sequence[str],
    *,
    package: str | None = None,
    name: str | None = None,
    version: str | None = None,
    exact: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 30.0,
    spec_dir: Path = Path("."),
) -> ImportedSpec:
    """Run ``command`` as a stdio MCP server and return a spec for its tools.

    The listing is taken in the newest era the server speaks. When that is 2026-07-28
    and the server also speaks the handshake era, it is asked there too, for what only
    that era lists (``execution.taskSupport``; 2026-07-28 moved tasks to an extension)."""
    from mcpgen_runtime._errors import McpError

    try:
        raw, info, instructions, protocol = _listing(command, "auto", env, cwd, timeout)
    except (McpError, OSError) as exc:
        raise ImportFailed(f"cannot list the tools of `{shlex.join(command)}`: {exc}") from exc
    eras = f"tools listed over {protocol}"
    if protocol == "2026-07-28":
        try:
            legacy, _, _, legacy_protocol = _listing(command, "legacy", env, cwd, timeout)
        except (McpError, OSError):
            eras += " (the server speaks no handshake era)"
        else:
            executions = {
                tool.get("name"): tool["execution"] for tool in legacy if "execution" in tool
            }
            for tool in raw:
                if tool.get("name") in executions and "execution" not in tool:
                    tool["execution"] = executions[tool.get("name")]
            eras += f"; execution (task support) from {legacy_protocol}"
    return spec_from_tools(
        raw,
        server_info=info,
        instructions=instructions,
        source=shlex.join(command),
        protocol_version=protocol,
        package=package,
        name=name,
        version=version,
        exact=exact,
        spec_dir=spec_dir,
        eras=eras,
    )


def _listing(
    command: Sequence[str],
    protocol: Any,
    env: Mapping[str, str] | None,
    cwd: str | Path | None,
    timeout: float,
) -> tuple[list[dict[str, Any]], dict[str, Any], str | None, str]:
    from mcpgen_runtime._client import Session

    with Session.stdio(
        list(command), env=env, cwd=cwd, verify="off", timeout=timeout, server_id="import",
        protocol=protocol,
    ) as session:
        raw = [dict(tool.raw) for tool in session.list_tools()]
        return raw, dict(session.server_info), session.instructions, session.protocol_version


def spec_from_tools(
    tools: Sequence[Mapping[str, Any]],
    *,
    server_info: Mapping[str, Any],
    instructions: str | None = None,
    source: str = "",
    protocol_version: str = "",
    package: str | None = None,
    name: str | None = None,
    version: str | None = None,
    exact: bool = False,
    spec_dir: Path = Path("."),
    eras: str = "",
) -> ImportedSpec:
    """A spec for ``tools`` (raw ``tools/list`` definitions); see the module docstring."""
    server_name = name or _text(server_info.get("name")) or "server"
    package = package or _package_name(server_name)
    if not _PACKAGE_NAME.match(package) or keyword.iskeyword(package):
        raise ImportFailed(f"{package!r} is not a Python package name; pass --package")
    shadowed = shadowed_module(package)
    if shadowed is not None:
        raise ImportFailed(f"package {package!r} would shadow {shadowed} of that name; "
                           "pass another --package")
    if version is not None and not version:
        raise ImportFailed("--version must not be empty")
    # Input schema of tool i at 2i, its output schema at 2i + 1: one set of types.
    classes = _DefClasses(
        [schema for tool in tools for schema in (tool.get("inputSchema"), tool.get("outputSchema"))]
    )
    stems = {class_name(_text(t.get("name")) or "") for t in tools}
    entries = [_ToolEntry(index, tool, classes) for index, tool in enumerate(tools)]
    problems = [f"tool {entry.name!r}: {p}" for entry in entries for p in entry.problems]
    if problems:
        raise ImportFailed(
            "cannot write a spec for these tools:\n  " + "\n  ".join(map(escape_line, problems))
        )
    # A spec needs a non-empty version string; a server may send none, "" or a non-string.
    listed_version = _text(server_info.get("version"))
    spec_version = version or listed_version or "0"
    server: dict[str, Any] = {"name": server_name, "version": spec_version}
    if isinstance(server_info.get("title"), str):
        server["title"] = server_info["title"]
    if instructions:
        server["instructions"] = instructions
    header = _header(source, server_info, protocol_version, eras=eras, name=name,
                     version=version, placeholder=spec_version == "0" and listed_version != "0")
    # Each tool takes the first form whose published descriptor is the listed one:
    # `parameters` (shared types), `input_schema` (shared types), both schemas as listed.
    levels = {entry.name: 1 if exact else 0 for entry in entries}
    names = [entry.name for entry in entries]
    while True:  # each round raises a level, up to 2 per tool: it ends
        spec = _render(header, package, server, entries, levels, stems, classes, {})
        # A tool kept as listed publishes its own $defs names: a shared type of one of
        # those names would be published under it too, so its tools keep theirs as well.
        local = {name for e in entries if levels[e.name] == 2 for name in _def_names(e.raw)}
        clash = [e.name for e in entries
                 if levels[e.name] < _last_level(e.raw) and local & _def_names(e.raw)]
        if clash:
            levels.update(dict.fromkeys(clash, 2))
            continue
        contract = _load(spec, spec_dir, names)
        published = {tool.name: descriptor(tool) for tool in contract.tools}
        retry = [
            entry.name
            for entry in entries
            if levels[entry.name] < _last_level(entry.raw)
            and not _same(published[entry.name], entry.raw)
        ]
        if not retry:
            break
        for tool_name in retry:
            levels[tool_name] += 1
    for entry in entries:
        changes = _breaking(published[entry.name], entry.raw)
        if changes:
            reasons = ", ".join(escape_line(f"{c.rule} {c.path}") for c in changes)
            raise ImportFailed(f"tool {entry.name!r} cannot be reproduced by a spec: {reasons}")
    notes = {entry.name: _notes(entry.raw, published[entry.name]) for entry in entries}
    text = _render(header, package, server, entries, levels, stems, classes, notes)
    _load(text, spec_dir, names)  # comments only: still the same spec
    return ImportedSpec(text, package, len(entries), {k: v for k, v in notes.items() if v})


def _def_names(tool: Mapping[str, Any]) -> set[str]:
    return {
        name
        for key in ("inputSchema", "outputSchema")
        if isinstance(tool.get(key), dict) and isinstance(tool[key].get("$defs"), dict)
        for name in tool[key]["$defs"]
    }


def _last_level(tool: Mapping[str, Any]) -> int:
    """2 (schemas as listed), or 1 for a schema with draft-7 ``definitions``, a local
    container a spec does not keep: such a tool keeps shared types, its refs renamed
    (and said in a comment)."""
    uses = any(
        isinstance(tool.get(key), dict) and "definitions" in tool[key]
        for key in ("inputSchema", "outputSchema")
    )
    return 1 if uses else 2


def _same(published: Mapping[str, Any], listed: Mapping[str, Any]) -> bool:
    """The spec publishes exactly the listed definition (the order of input properties,
    the positional order, included)."""
    def order(tool: Mapping[str, Any]) -> list[str]:
        schema = tool.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        return list(props) if isinstance(props, dict) else []

    return _canon(published) == _canon(dict(listed)) and order(published) == order(listed)


def _breaking(contract_tool: Mapping[str, Any], live_tool: Mapping[str, Any]) -> list[Change]:
    """What a spec may not change: what a generated client (OLD = contract) would
    refuse the live tool (NEW) for on connect, and any description. The refusal
    names them all (it named the refusing ones only, so a description the spec
    cannot hold, such as null, left the reason empty)."""
    return [
        change
        for change in compare_tools([contract_tool], [live_tool])
        if (change.severity is Severity.BREAKING and change.rule != "PARAM_ORDER_CHANGED")
        or change.rule in ("DESCRIPTION_CHANGED", "PARAM_DESCRIPTION_CHANGED")
    ]


def _breaks(contract_tool: Mapping[str, Any], live_tool: Mapping[str, Any]) -> bool:
    return bool(_breaking(contract_tool, live_tool))


def _notes(live: Mapping[str, Any], published: Mapping[str, Any]) -> list[str]:
    """How the spec's descriptor differs from the live one (OLD = live, NEW = spec)."""
    return [f"{c.message} ({c.rule})" for c in compare_tools([live], [published])]


def _load(text: str, spec_dir: Path, names: Sequence[str]) -> Any:
    loaded = load_spec_text(text, "tools.yaml", spec_dir=spec_dir)
    if loaded.contract is None:
        # one escaped line per problem: keys and names come from the server
        details = "\n  ".join(escape_line(_where(d.path, names) + d.message) for d in loaded.errors)
        raise ImportFailed(f"the server's tools do not make a valid spec:\n  {details}")
    return loaded.contract


def _where(path: str, names: Sequence[str]) -> str:
    """``tools[3].name: `` → ``tool 'x' (tools[3].name): ``, so the server's tool is named."""
    match = re.match(r"tools\[(\d+)\]", path)
    if match and int(match.group(1)) < len(names):
        return f"tool {names[int(match.group(1))]!r} ({path}): "
    return f"{path}: " if path else ""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _package_name(server_name: str) -> str:
    """``mcp-servers/everything`` → ``mcp_servers_everything``; a name that would shadow
    the standard library or a run-time dependency gets ``_mcp``: ``json`` → ``json_mcp``."""
    text = re.sub(r"[^0-9A-Za-z]+", "_", server_name).strip("_").lower() or "server"
    if text[0].isdigit():
        text = "_" + text
    if keyword.iskeyword(text):
        return text + "_"
    return text + "_mcp" if shadowed_module(text) is not None else text


def _header(
    source: str,
    info: Mapping[str, Any],
    protocol: str,
    *,
    eras: str = "",
    name: str | None = None,
    version: str | None = None,
    placeholder: bool = False,
) -> list[str]:
    lines = ["Imported by `mcpgen import` from a live MCP server: this is its contract."]
    if source:
        lines.append(f"Source: {source}")
    who = " ".join(str(info[key]) for key in ("name", "version") if key in info)
    if who:
        lines.append(f"Server: {who}" + (f" (protocol {protocol})" if protocol else ""))
    if eras:
        lines.append(f"Era: {eras}")
    if name is not None:
        lines.append(f"server.name {name!r} given by --name (the server sent "
                     f"{info.get('name')!r})")
    if version is not None:
        lines.append(f"server.version {version!r} given by --version (the server sent "
                     f"{info.get('version')!r})")
    elif placeholder:
        lines.append(f"server.version '0' stands for the server's {info.get('version')!r}, which "
                     "a spec cannot hold (pass --version to choose one)")
    lines.append("Build it with `mcpgen build`; compare a later import with `mcpgen diff`.")
    lines.append("Each tool publishes exactly the definition the server listed; `parameters` is")
    lines.append("used where it derives the listed input schema, else `input_schema`.")
    return lines


# --------------------------------------------------------------------------- $defs → types


_DefKey = tuple[int, str, str]  # (tool index, "$defs" | "definitions", name)


class _DefClasses:
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
                sig = (self.of.get(key, 0), key[2] + "\0" + _canon(self._marked(value, key[0])))
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


class _TypeHoister:
    """Root ``$defs`` as shared ``types``: one type per class of equal definitions,
    named as the server named it unless that name is taken (then renamed, which the
    faithfulness check sees: such a tool keeps its own ``$defs``)."""

    def __init__(self, classes: _DefClasses, tool_stems: set[str]) -> None:
        self.classes = classes
        self.types: dict[str, Any] = {}
        self._class_names = {f"{stem}{suffix}" for stem in tool_stems for suffix in ("Args", "Output")}
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
            base += "Type"  # name models.py needs (a tool's …Args/…Output, Any, str, ...)
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


def _canon(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- one tool


class _ToolEntry:
    """One listed tool, split into the parts of a spec entry."""

    def __init__(self, index: int, raw: Mapping[str, Any], classes: _DefClasses) -> None:
        self.index = index
        self.raw = dict(raw)
        self.name = _text(raw.get("name")) or ""
        self.problems: list[str] = []
        # Checked once with a hoister of its own: a reference a spec cannot hold is a
        # problem whichever form the tool is written in.
        probe = _TypeHoister(classes, set())
        hoisted = probe.hoist(2 * index, raw.get("inputSchema"), self.problems, "inputSchema")
        if isinstance(raw.get("outputSchema"), dict):
            probe.hoist(2 * index + 1, raw["outputSchema"], self.problems, "outputSchema")
        if not isinstance(hoisted, dict) or hoisted.get("type") != "object":
            self.problems.append("inputSchema is not an object schema (type: object)")

    def entry(self, level: int, hoist: _TypeHoister) -> dict[str, Any]:
        """The spec entry; ``level`` 0: ``parameters`` with shared types, 1:
        ``input_schema`` with shared types, 2: both schemas exactly as listed."""
        raw = self.raw
        result: dict[str, Any] = {"name": self.name}
        annotations = _mapping(raw.get("annotations"))
        title = _text(raw.get("title"))
        annotation_title = _text(annotations.get("title"))
        if title is not None:
            result["title"] = title
            if annotation_title != title:  # the spec mirrors a title unless told otherwise
                result["annotation_title"] = annotation_title if annotation_title is not None else False
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
        hints = {
            spec_key: annotations[wire_key]
            for wire_key, spec_key in _HINTS
            if isinstance(annotations.get(wire_key), bool)
        }
        if hints:
            result["hints"] = hints
        execution = _mapping(raw.get("execution"))
        if execution.get("taskSupport") in ("forbidden", "optional", "required"):
            result["task_support"] = execution["taskSupport"]  # `forbidden` written out is listed
        icons = [_icon(icon) for icon in raw.get("icons") or [] if _is_icon(icon)]
        if icons:
            result["icons"] = icons
        if isinstance(raw.get("_meta"), dict):
            result["meta"] = raw["_meta"]
        return result


_HINTS = (
    ("readOnlyHint", "read_only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open_world"),
)


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
        if not isinstance(prop, dict) or "name" in prop or "required" in prop:
            return None  # `name`/`required` would mean the parameter's, not the schema's
        if "description" in prop and not isinstance(prop["description"], str):
            return None
        is_required = name in required
        if is_required and "default" in prop:
            return None  # the spec reads a default as "optional"
        parameter = {"name": name, **prop}
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


# --------------------------------------------------------------------------- YAML


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings as literal blocks, keys in their given order.

    A string holding a control, line-break (other than ``\\n``) or bidi character is
    written double-quoted, every non-ASCII character of it escaped: PyYAML would
    otherwise write bidi overrides (and U+2028 in some styles) raw, which an editor or
    a terminal shows as something other than the value. The value is the same."""

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if not needs_escape(text.replace("\n", "")):
            super().write_double_quoted(text, split)
            return
        saved, self.allow_unicode = self.allow_unicode, False
        try:
            super().write_double_quoted(text, split)
        finally:
            self.allow_unicode = saved

    def ignore_aliases(self, data: Any) -> bool:
        # A value met twice is written twice: no anchors, which would also collide
        # between the parts of a spec that are dumped one by one.
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if needs_escape(value.replace("\n", "")):
        style: str | None = '"'
    else:
        style = "|" if "\n" in value.strip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    # Short lists of scalars (required, enum, type unions) read best on one line.
    flow = len(value) <= 12 and all(
        isinstance(item, (int, float, bool))
        or (isinstance(item, str) and len(item) < 40 and "\n" not in item)
        for item in value
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


def _dump(value: Any) -> str:
    return yaml.dump(
        value,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )


def _render(
    header: list[str],
    package: str,
    server: Mapping[str, Any],
    entries: Sequence[_ToolEntry],
    levels: Mapping[str, int],
    stems: set[str],
    classes: _DefClasses,
    notes: Mapping[str, list[str]],
) -> str:
    # Types are named afresh for the tools that share them: one kept as listed does not
    # claim a name.
    hoist = _TypeHoister(classes, stems)
    tool_parts = [entry.entry(levels[entry.name], hoist) for entry in entries]
    types = hoist.types
    # Every comment line is one escaped line: a line break YAML recognises in a server's
    # name (\n, \r, NEL, U+2028, U+2029) would otherwise start a line of the spec.
    parts = ["".join(f"# {escape_line(line)}\n" for line in header)]
    parts.append(_dump({"mcpgen": 1, "package": package, "server": dict(server)}))
    if types:
        parts.append(_dump({"types": types}))
    parts.append("tools:\n" if entries else "tools: []\n")
    for entry, part in zip(entries, tool_parts, strict=True):
        for note in notes.get(entry.name, []):
            parts.append(f"# differs from the live listing: {escape_line(note)}\n")
        parts.append(_dump([part]))
    return "".join(parts)
