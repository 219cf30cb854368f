"""``mcpgen import``: start a live MCP server (or call one over HTTP), list its tools,
write a spec for them.

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
publishes are compatible with what the server listed (``mcpgen_runtime.contract``); what
still differs (a member the spec format has no key for) is said above the tool.

The forms and shared types are in ``forms``; the YAML text in ``yaml_text``.
"""

from __future__ import annotations

import keyword
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpgen_runtime.contract.compare import Change, Severity, compare_tools
from mcpgen_runtime.protocol.structured import unwrap_descriptor

from ..descriptors import descriptor
from ..names import class_name, shadowed_module
from ..printable import escape_line
from ..spec.load import load_spec_text
from .forms import DefClasses, ToolEntry, canon, str_or_none
from .yaml_text import render_yaml

__all__ = ["ImportFailed", "ImportedSpec", "import_server", "spec_from_tools"]

_PACKAGE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
    command: Sequence[str] = (),
    *,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    package: str | None = None,
    name: str | None = None,
    version: str | None = None,
    exact: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 30.0,
    spec_dir: Path = Path("."),
) -> ImportedSpec:
    """Run ``command`` as a stdio MCP server, or call the Streamable HTTP endpoint
    ``url`` (with ``headers``), and return a spec for its tools.

    The listing is taken in the newest era the server speaks. When that is 2026-07-28
    and the server also speaks the handshake era, it is asked there too, for what only
    that era lists (``execution.taskSupport``; 2026-07-28 moved tasks to an extension)."""
    from mcpgen_runtime._errors import McpError

    server = _Server(tuple(command), url, dict(headers or {}), env, cwd, timeout)
    try:
        raw, info, instructions, protocol = server.listing("auto")
    except (McpError, OSError) as exc:
        raise ImportFailed(f"cannot list the tools of {server.label}: {exc}") from exc
    eras = f"tools listed over {protocol}"
    if protocol == "2026-07-28":
        try:
            legacy, _, _, legacy_protocol = server.listing("legacy")
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
        source=url if url is not None else shlex.join(command),
        protocol_version=protocol,
        package=package,
        name=name,
        version=version,
        exact=exact,
        spec_dir=spec_dir,
        eras=eras,
    )


@dataclass(frozen=True)
class _Server:
    """Where the tools come from: a stdio command, or an HTTP endpoint (``url``)."""

    command: tuple[str, ...]
    url: str | None
    headers: dict[str, str]
    env: Mapping[str, str] | None
    cwd: str | Path | None
    timeout: float

    @property
    def label(self) -> str:
        return self.url if self.url is not None else f"`{shlex.join(self.command)}`"

    def listing(
        self, protocol: Any
    ) -> tuple[list[dict[str, Any]], dict[str, Any], str | None, str]:
        """The raw tools, server info, instructions and protocol version, through the
        runtime's client (the one generated packages use)."""
        from mcpgen_runtime import Session

        options: dict[str, Any] = {
            "verify": "off",
            "timeout": self.timeout,
            "server_id": "import",
            "protocol": protocol,
        }
        if self.url is not None:
            session = Session.http(self.url, headers=self.headers, **options)
        else:
            session = Session.stdio(list(self.command), env=self.env, cwd=self.cwd, **options)
        with session:
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
    tools = [unwrap_descriptor(tool) for tool in tools]  # a wrapper: the schema it wraps
    server_name = name or str_or_none(server_info.get("name")) or "server"
    package = _checked_package(package or _package_name(server_name), version)
    # Input schema of tool i at 2i, its output schema at 2i + 1: one set of types.
    classes = DefClasses(
        [schema for tool in tools for schema in (tool.get("inputSchema"), tool.get("outputSchema"))]
    )
    stems = {class_name(str_or_none(t.get("name")) or "") for t in tools}
    entries = [ToolEntry(index, tool, classes) for index, tool in enumerate(tools)]
    problems = [f"tool {entry.name!r}: {p}" for entry in entries for p in entry.problems]
    if problems:
        raise ImportFailed(
            "cannot write a spec for these tools:\n  " + "\n  ".join(map(escape_line, problems))
        )
    # A spec needs a non-empty version string; a server may send none, "" or a non-string.
    listed_version = str_or_none(server_info.get("version"))
    spec_version = version or listed_version or "0"
    server: dict[str, Any] = {"name": server_name, "version": spec_version}
    if isinstance(server_info.get("title"), str):
        server["title"] = server_info["title"]
    if instructions:
        server["instructions"] = instructions
    header = _header(
        source,
        server_info,
        protocol_version,
        eras=eras,
        name=name,
        version=version,
        placeholder=spec_version == "0" and listed_version != "0",
    )

    def render(levels: Mapping[str, int], notes: Mapping[str, list[str]]) -> str:
        return render_yaml(header, package, server, entries, levels, stems, classes, notes)

    levels, published = _choose_forms(entries, render, exact, spec_dir)
    for entry in entries:
        changes = _breaking(published[entry.name], entry.raw)
        if changes:
            reasons = ", ".join(escape_line(f"{c.rule} {c.path}") for c in changes)
            raise ImportFailed(f"tool {entry.name!r} cannot be reproduced by a spec: {reasons}")
    notes = {entry.name: _notes(entry.raw, published[entry.name]) for entry in entries}
    text = render(levels, notes)
    _load(text, spec_dir, [entry.name for entry in entries])  # comments only: the same spec
    return ImportedSpec(text, package, len(entries), {k: v for k, v in notes.items() if v})


def _checked_package(package: str, version: str | None) -> str:
    if not _PACKAGE_NAME.match(package) or keyword.iskeyword(package):
        raise ImportFailed(f"{package!r} is not a Python package name; pass --package")
    shadowed = shadowed_module(package)
    if shadowed is not None:
        raise ImportFailed(
            f"package {package!r} would shadow {shadowed} of that name; pass another --package"
        )
    if version is not None and not version:
        raise ImportFailed("--version must not be empty")
    return package


def _choose_forms(
    entries: Sequence[ToolEntry],
    render: Callable[[Mapping[str, int], Mapping[str, list[str]]], str],
    exact: bool,
    spec_dir: Path,
) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    """The form level of each tool (0 ``parameters``, 1 ``input_schema`` with shared
    types, 2 both schemas as listed): the first whose published descriptor is the
    listed one. Returns the levels and what the spec then publishes, per tool."""
    levels = {entry.name: 1 if exact else 0 for entry in entries}
    names = [entry.name for entry in entries]
    while True:  # each round raises a level, up to 2 per tool: it ends
        spec = render(levels, {})
        # A tool kept as listed publishes its own $defs names: a shared type of one of
        # those names would be published under it too, so its tools keep theirs as well.
        local = {name for e in entries if levels[e.name] == 2 for name in _def_names(e.raw)}
        clash = [
            e.name
            for e in entries
            if levels[e.name] < _last_level(e.raw) and local & _def_names(e.raw)
        ]
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
            return levels, published
        for tool_name in retry:
            levels[tool_name] += 1


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

    return canon(published) == canon(dict(listed)) and order(published) == order(listed)


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
        lines.append(f"server.name {name!r} given by --name (the server sent {info.get('name')!r})")
    if version is not None:
        lines.append(
            f"server.version {version!r} given by --version (the server sent "
            f"{info.get('version')!r})"
        )
    elif placeholder:
        lines.append(
            f"server.version '0' stands for the server's {info.get('version')!r}, which "
            "a spec cannot hold (pass --version to choose one)"
        )
    lines.append("Build it with `mcpgen build`; compare a later import with `mcpgen diff`.")
    lines.append("Each tool publishes exactly the definition the server listed; `parameters` is")
    lines.append("used where it derives the listed input schema, else `input_schema`.")
    return lines
