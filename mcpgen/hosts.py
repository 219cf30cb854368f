"""MCP host configuration: the entry that starts a generated server from a host.

Hosts start stdio servers with a command, arguments and environment, from a
working folder of their own choosing, so the entry names everything
absolutely: this interpreter (it has pydantic, which the package needs),
``-m <package>`` and a PYTHONPATH holding the folder of the generated package
and the spec's folder (where ``server.implementation``'s module lives).

``merge_entry`` adds the entry to a host's JSON file and keeps every other key
and server in it.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HOSTS", "Host", "HostError", "default_path", "merge_entry", "server_entry"]


class HostError(Exception):
    """A host file mcpgen will not rewrite (not JSON, not an object)."""


@dataclass(frozen=True)
class Host:
    name: str
    servers_key: str  # the top-level key holding servers by name
    stdio_type: bool  # the host wants "type": "stdio" in each entry


HOSTS: dict[str, Host] = {
    "claude-desktop": Host("claude-desktop", "mcpServers", stdio_type=False),
    "cursor": Host("cursor", "mcpServers", stdio_type=False),
    "vscode": Host("vscode", "servers", stdio_type=True),
    "json": Host("json", "mcpServers", stdio_type=False),
}


def default_path(host: str) -> Path | None:
    """Where the host reads its servers: Claude Desktop's per-user file, Cursor's
    global ~/.cursor/mcp.json, VS Code's workspace .vscode/mcp.json; json has none."""
    home = Path.home()
    if host == "claude-desktop":
        if sys.platform == "darwin":
            return (
                home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
            )
        if sys.platform == "win32":
            return Path(os.environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json"
        return home / ".config" / "Claude" / "claude_desktop_config.json"
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if host == "vscode":
        return Path.cwd() / ".vscode" / "mcp.json"
    return None


def server_entry(
    host: str, package: str, package_dir: Path, spec_dir: Path, python: str | None = None
) -> dict[str, Any]:
    """The host's entry for one server: absolute interpreter, module, environment."""
    folders: list[str] = []
    for folder in (package_dir.resolve().parent, spec_dir.resolve()):
        if str(folder) not in folders:
            folders.append(str(folder))
    entry: dict[str, Any] = {}
    if HOSTS[host].stdio_type:
        entry["type"] = "stdio"
    entry["command"] = python or sys.executable
    entry["args"] = ["-m", package]
    entry["env"] = {"PYTHONPATH": os.pathsep.join(folders)}
    return entry


def wrap(host: str, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {HOSTS[host].servers_key: {name: entry}}


def merge_entry(host: str, path: Path, name: str, entry: dict[str, Any]) -> tuple[str, bool]:
    """The host file's new text with ``name`` set to ``entry``, and whether a server of
    that name was replaced. Every other key and server stays as it was."""
    document: Any = {}
    if path.exists() or path.is_symlink():
        document = _read_host_file(path)
        if not isinstance(document, dict):
            raise HostError(f"{path} does not hold a JSON object")
    servers = document.setdefault(HOSTS[host].servers_key, {})
    if not isinstance(servers, dict):
        raise HostError(f"{path}: '{HOSTS[host].servers_key}' is not a JSON object")
    replaced = name in servers
    servers[name] = entry
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n", replaced


MAX_HOST_FILE_BYTES = 16 * 1024 * 1024
"""Largest host file read (16 MiB; real ones are kilobytes)."""


def _read_host_file(path: Path) -> Any:
    """The JSON of a host file that is a regular file of sane size (a FIFO would block
    the read forever, a device never end it), nested no deeper than Python parses."""
    from .safeio import UnsafeFile, read_regular

    hint = "mcpgen does not rewrite it: add the entry `mcpgen config` prints by hand"
    try:
        raw = read_regular(path, limit=MAX_HOST_FILE_BYTES)
    except UnsafeFile as exc:
        raise HostError(f"{exc}; {hint}") from None
    except OSError as exc:
        raise HostError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return json.loads(raw.decode("utf-8") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HostError(f"{path} is not plain JSON ({exc}); {hint}") from exc
    except RecursionError:
        raise HostError(f"{path} is nested too deeply to read as JSON; {hint}") from None
