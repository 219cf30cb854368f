"""``mcpgen import``: start a live MCP server, list its tools, write a spec for them.

The spec reproduces the server's contract: wire names, parameter order, every schema
keyword, output schemas, hints, task support, icons and ``_meta``.  Parameters are
written as ``parameters`` when the input schema is an object of properties (its
annotations such as a root ``title`` or ``$schema`` dropped, and
``additionalProperties: false`` added: the spec's derived form); otherwise, or with
``exact=True``, as ``input_schema``.  Root ``$defs`` become shared ``types``.
The result is checked before it is returned: the spec loads, and the descriptors it
publishes are compatible with what the server listed (``runtime/_compat``); what
still differs is said in a comment above the tool.
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

# Root keywords of an input schema that only annotate it: dropped in `parameters` form.
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
    exact: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 30.0,
    spec_dir: Path = Path("."),
) -> ImportedSpec:
    """Run ``command`` as a stdio MCP server and return a spec for its tools."""
    from mcpgen_runtime._client import Session
    from mcpgen_runtime._errors import McpError

    try:
        # The handshake era at 2025-11-25 lists the most: `execution.taskSupport`
        # exists only there (2026-07-28 moved tasks to an extension).
        with Session.stdio(
            list(command), env=env, cwd=cwd, verify="off", timeout=timeout, server_id="import",
            protocol="legacy",
        ) as session:
            raw = [dict(tool.raw) for tool in session.list_tools()]
            info = dict(session.server_info)
            instructions = session.instructions
            version = session.protocol_version
    except (McpError, OSError) as exc:
        raise ImportFailed(f"cannot list the tools of `{shlex.join(command)}`: {exc}") from exc
    return spec_from_tools(
        raw,
        server_info=info,
        instructions=instructions,
        source=shlex.join(command),
        protocol_version=version,
        package=package,
        name=name,
        exact=exact,
        spec_dir=spec_dir,
    )


def spec_from_tools(
    tools: Sequence[Mapping[str, Any]],
    *,
    server_info: Mapping[str, Any],
    instructions: str | None = None,
    source: str = "",
    protocol_version: str = "",
    package: str | None = None,
    name: str | None = None,
    exact: bool = False,
    spec_dir: Path = Path("."),
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
    hoist = _TypeHoister({class_name(_text(t.get("name")) or "") for t in tools})
    entries = [_ToolEntry(tool, hoist) for tool in tools]
    problems = [f"tool {entry.name!r}: {p}" for entry in entries for p in entry.problems]
    if problems:
        raise ImportFailed(
            "cannot write a spec for these tools:\n  " + "\n  ".join(map(escape_line, problems))
        )
    # A spec needs a non-empty version string; a server may send none, "" or a non-string.
    version = _text(server_info.get("version")) or "0"
    server: dict[str, Any] = {"name": server_name, "version": version}
    if isinstance(server_info.get("title"), str):
        server["title"] = server_info["title"]
    if instructions:
        server["instructions"] = instructions
    header = _header(source, server_info, protocol_version)
    parameters_ok = {entry.name: not exact for entry in entries}
    names = [entry.name for entry in entries]
    for _attempt in range(2):
        spec = _render(header, package, server, hoist.types, entries, parameters_ok, notes={})
        contract = _load(spec, spec_dir, names)
        published = {tool.name: descriptor(tool) for tool in contract.tools}
        retry = [
            entry.name
            for entry in entries
            if parameters_ok[entry.name] and _breaks(published[entry.name], entry.raw)
        ]
        if not retry:
            break
        parameters_ok.update(dict.fromkeys(retry, False))  # fall back to the exact input_schema
    for entry in entries:
        changes = _breaking(published[entry.name], entry.raw)
        if changes:
            reasons = ", ".join(escape_line(f"{c.rule} {c.path}") for c in changes)
            raise ImportFailed(f"tool {entry.name!r} cannot be reproduced by a spec: {reasons}")
    notes = {entry.name: _notes(entry.raw, published[entry.name]) for entry in entries}
    text = _render(header, package, server, hoist.types, entries, parameters_ok, notes)
    _load(text, spec_dir, names)  # comments only: still the same spec
    return ImportedSpec(text, package, len(entries), {k: v for k, v in notes.items() if v})


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


def _header(source: str, info: Mapping[str, Any], version: str) -> list[str]:
    lines = ["Imported by `mcpgen import` from a live MCP server: this is its contract."]
    if source:
        lines.append(f"Source: {source}")
    who = " ".join(str(info[key]) for key in ("name", "version") if key in info)
    if who:
        lines.append(f"Server: {who}" + (f" (protocol {version})" if version else ""))
    lines.append("Build it with `mcpgen build`; compare a later import with `mcpgen diff`.")
    lines.append("`parameters` publish additionalProperties: false and no root annotations")
    lines.append("(title, $schema); `mcpgen import --exact` keeps input schemas as listed.")
    return lines


# --------------------------------------------------------------------------- $defs → types


class _TypeHoister:
    """Collects the root ``$defs`` of every schema as shared ``types``; an identical
    definition seen in several tools becomes one type."""

    def __init__(self, tool_stems: set[str]) -> None:
        self.types: dict[str, Any] = {}
        self._classes = {f"{stem}{suffix}" for stem in tool_stems for suffix in ("Args", "Output")}
        self._claimed: set[str] = set()

    def hoist(self, schema: Any, problems: list[str], where: str) -> Any:
        """``schema`` without root ``$defs``, its ``#/$defs/X`` references renamed to types."""
        if not isinstance(schema, dict):
            return schema
        defs: dict[tuple[str, str], Any] = {}
        for container in ("$defs", "definitions"):
            if isinstance(schema.get(container), dict):
                defs.update({(container, name): value for name, value in schema[container].items()})
        # Name every definition first (a definition may reference another).
        names: dict[tuple[str, str], str] = {}
        for key, value in defs.items():
            names[key] = self._name_for(key[1], value)
        for key, value in defs.items():
            rewritten = self._rewrite(value, names, problems, where)
            self.types.setdefault(names[key], rewritten)
        body = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
        return self._rewrite(body, names, problems, where)

    def _name_for(self, wanted: str, value: Any) -> str:
        base = re.sub(r"[^0-9A-Za-z_]+", "_", wanted).strip("_") or "Type"
        if base[0].isdigit():
            base = "_" + base
        if base in self._classes or base in MODELS_PY_NAMES:  # a class that exists, or a
            base += "Type"  # name models.py needs (a tool's …Args/…Output, Any, str, ...)
        candidate, counter = base, 2
        while candidate in self._claimed:
            # The same definition met again (another tool) is the same type, if it is
            # self-contained: refs to other local defs could mean different things.
            if (
                candidate in self.types
                and not _has_local_refs(value)
                and _canon(self.types[candidate]) == _canon(value)
            ):
                return candidate
            candidate, counter = f"{base}{counter}", counter + 1
        self._claimed.add(candidate)
        return candidate

    def _rewrite(
        self, node: Any, names: Mapping[tuple[str, str], str], problems: list[str], where: str
    ) -> Any:
        if isinstance(node, list):
            return [self._rewrite(item, names, problems, where) for item in node]
        if not isinstance(node, dict):
            return node
        result: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                result[key] = self._ref(value, names, problems, where)
            elif key in ("enum", "const", "default", "examples"):
                result[key] = value  # values, not schemas: never rewritten
            else:
                result[key] = self._rewrite(value, names, problems, where)
        return result

    def _ref(
        self, ref: str, names: Mapping[tuple[str, str], str], problems: list[str], where: str
    ) -> str:
        match = _DEF_REF.match(ref)
        if match:
            key = (match.group(1), match.group(2).replace("~1", "/").replace("~0", "~"))
            if key in names:
                return f"#/types/{names[key]}"
        problems.append(f"{where}: $ref {ref!r} is not a root $defs entry; a spec cannot hold it")
        return ref


def _has_local_refs(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            (k == "$ref" and isinstance(v, str) and v.startswith("#")) or _has_local_refs(v)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_has_local_refs(v) for v in value)
    return False


def _canon(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- one tool


class _ToolEntry:
    """One listed tool, split into the parts of a spec entry."""

    def __init__(self, raw: Mapping[str, Any], hoist: _TypeHoister) -> None:
        self.raw = dict(raw)
        self.name = _text(raw.get("name")) or ""
        self.problems: list[str] = []
        input_schema = raw.get("inputSchema")
        self.input_schema = hoist.hoist(input_schema, self.problems, "inputSchema")
        self.output_schema = (
            hoist.hoist(raw["outputSchema"], self.problems, "outputSchema")
            if isinstance(raw.get("outputSchema"), dict)
            else None
        )
        if not isinstance(self.input_schema, dict) or self.input_schema.get("type") != "object":
            self.problems.append("inputSchema is not an object schema (type: object)")
        self.parameters = _as_parameters(self.input_schema) if not self.problems else None

    def entry(self, use_parameters: bool) -> dict[str, Any]:
        raw = self.raw
        result: dict[str, Any] = {"name": self.name}
        annotations = _mapping(raw.get("annotations"))
        title = _text(raw.get("title")) or _text(annotations.get("title"))
        if title is not None:
            result["title"] = title
        if isinstance(raw.get("description"), str):
            result["description"] = raw["description"]
        if use_parameters and self.parameters is not None:
            result["parameters"] = self.parameters
        else:
            result["input_schema"] = self.input_schema
        if self.output_schema is not None:
            result["output_schema"] = self.output_schema
        hints = {
            spec_key: annotations[wire_key]
            for wire_key, spec_key in _HINTS
            if isinstance(annotations.get(wire_key), bool)
        }
        if hints:
            result["hints"] = hints
        execution = _mapping(raw.get("execution"))
        if execution.get("taskSupport") in ("optional", "required"):
            result["task_support"] = execution["taskSupport"]
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


def _as_parameters(schema: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The ``parameters`` list for an input schema, or None when it has no such form."""
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
    types: Mapping[str, Any],
    entries: Sequence[_ToolEntry],
    parameters_ok: Mapping[str, bool],
    notes: Mapping[str, list[str]],
) -> str:
    # Every comment line is one escaped line: a line break YAML recognises in a server's
    # name (\n, \r, NEL, U+2028, U+2029) would otherwise start a line of the spec.
    parts = ["".join(f"# {escape_line(line)}\n" for line in header)]
    parts.append(_dump({"mcpgen": 1, "package": package, "server": dict(server)}))
    if types:
        parts.append(_dump({"types": dict(types)}))
    parts.append("tools:\n" if entries else "tools: []\n")
    for entry in entries:
        for note in notes.get(entry.name, []):
            parts.append(f"# differs from the live listing: {escape_line(note)}\n")
        parts.append(_dump([entry.entry(parameters_ok[entry.name])]))
    return "".join(parts)

