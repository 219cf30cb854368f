"""Project configuration: ``[tool.mcpgen]`` in the nearest ``pyproject.toml``.

Found from the working folder upward, so ``mcpgen build``, ``build --check``,
``validate``, ``diff --against`` and the pre-commit hooks need no arguments in
a configured project. Command-line arguments and flags always win over it.

    [tool.mcpgen]
    specs = ["tools.yaml", {path = "billing/tools.yaml", output = "src/billing_mcp"}]
    allow-outside-refs = false
    allow-outside-output = false
    check = false              # true: a bare `mcpgen build` only checks (CI-only projects)
    diff-category = "behavior" # default of `mcpgen diff --category`
    format = "text"            # default of --format (text | json | github)
    docs-output = "site/api"   # where `mcpgen docs` writes index.html (default of -o)
    docs-against = "origin/main"  # default of `mcpgen docs --against` (a spec file or git ref)
    emit = ["server.json"]     # also write these beside each spec on `mcpgen build` (--emit)
    remote-urls = ["https://mcp.example.com/mcp"]  # server.json's remotes (--remote-url)

Paths are relative to the folder of ``pyproject.toml``.  A spec's ``output`` here
is the user's own setting, so it is trusted like ``-o`` (it may be anywhere).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "ProjectConfig", "SpecEntry", "find_config", "load_config"]

_KEYS = frozenset(
    {
        "specs",
        "allow-outside-refs",
        "allow-outside-output",
        "check",
        "diff-category",
        "format",
        "docs-output",
        "docs-against",
        "emit",
        "remote-urls",
    }
)
_CATEGORIES = ("source", "call", "behavior")
_FORMATS = ("text", "json", "github")
EMITTABLE = ("server.json",)


class ConfigError(Exception):
    """``[tool.mcpgen]`` is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class SpecEntry:
    path: Path
    output: Path | None = None


@dataclass(frozen=True)
class ProjectConfig:
    file: Path
    specs: tuple[SpecEntry, ...] = ()
    allow_outside_refs: bool = False
    allow_outside_output: bool = False
    check: bool = False
    diff_category: str | None = None
    format: str | None = None
    docs_output: Path | None = None
    docs_against: str | None = None
    emit: tuple[str, ...] = ()
    remote_urls: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        return self.file.parent

    def output_for(self, spec: Path) -> Path | None:
        """The configured output of ``spec`` (compared by resolved path), if any."""
        wanted = spec.resolve()
        for entry in self.specs:
            if entry.path.resolve() == wanted:
                return entry.output
        return None


def find_config(start: Path | None = None) -> ProjectConfig | None:
    """The ``[tool.mcpgen]`` of the nearest ``pyproject.toml`` holding one, from
    ``start`` (default: the working folder) upward; None when there is none.

    A ``pyproject.toml`` without the table does not stop the search: a monorepo's
    sub-project may configure mcpgen at the top only. The search stops, as git's
    ``safe.directory`` does, where a file there could be someone else's: after the
    repository root (a folder holding ``.git``), and before a folder or a
    ``pyproject.toml`` another user owns (the table can move outputs and set
    ``allow-outside-refs``, so a shared ``/tmp`` or a parent folder must not).
    """
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        if not _owned_by_us(candidate):
            return None
        file = candidate / "pyproject.toml"
        if file.is_file() and _owned_by_us(file):
            config = load_config(file)
            if config is not None:
                return config
        if (candidate / ".git").exists():
            return None
    return None


def _owned_by_us(path: Path) -> bool:
    """Is ``path`` owned by the user running mcpgen (always true where the OS has no
    owners mcpgen can compare, as on Windows)?"""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:
        return True
    try:
        return bool(path.stat().st_uid == geteuid())
    except OSError:
        return False


def load_config(file: Path) -> ProjectConfig | None:
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from exc
    table = data.get("tool", {}).get("mcpgen") if isinstance(data.get("tool"), dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{file}: [tool.mcpgen] must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{file}: [tool.mcpgen] has unknown key(s) {', '.join(unknown)}; "
            f"expected: {', '.join(sorted(_KEYS))}"
        )
    root = file.parent
    return ProjectConfig(
        file=file,
        specs=tuple(_spec_entry(file, root, item) for item in _list(file, table, "specs")),
        allow_outside_refs=_bool(file, table, "allow-outside-refs"),
        allow_outside_output=_bool(file, table, "allow-outside-output"),
        check=_bool(file, table, "check"),
        diff_category=_choice(file, table, "diff-category", _CATEGORIES),
        format=_choice(file, table, "format", _FORMATS),
        docs_output=_path(file, root, table, "docs-output"),
        docs_against=_string(file, table, "docs-against"),
        emit=tuple(_strings(file, table, "emit", EMITTABLE)),
        remote_urls=tuple(_strings(file, table, "remote-urls", None)),
    )


def _spec_entry(file: Path, root: Path, item: object) -> SpecEntry:
    if isinstance(item, str):
        return SpecEntry(_relative(root, item))
    if (
        isinstance(item, dict)
        and isinstance(item.get("path"), str)
        and set(item) <= {"path", "output"}
    ):
        output = item.get("output")
        if output is not None and not isinstance(output, str):
            raise ConfigError(f"{file}: [tool.mcpgen] specs: output must be a string")
        return SpecEntry(_relative(root, item["path"]), _relative(root, output) if output else None)
    raise ConfigError(
        f"{file}: [tool.mcpgen] specs: each entry is a path or {{path = ..., output = ...}}, "
        f"got {item!r}"
    )


def _relative(root: Path, text: str) -> Path:
    """``root / text``, shown relative to the working folder when that is shorter."""
    path = root / text
    try:
        shown = Path(os.path.relpath(path))
    except ValueError:  # another drive (Windows)
        return path
    return shown if len(str(shown)) < len(str(path)) else path


def _list(file: Path, table: dict[str, Any], key: str) -> list[Any]:
    value = table.get(key, [])
    if not isinstance(value, list):
        raise ConfigError(f"{file}: [tool.mcpgen] {key} must be a list")
    return value


def _strings(
    file: Path, table: dict[str, Any], key: str, choices: tuple[str, ...] | None
) -> list[str]:
    values = _list(file, table, key)
    for value in values:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{file}: [tool.mcpgen] {key} must be a list of strings")
        if choices is not None and value not in choices:
            raise ConfigError(
                f"{file}: [tool.mcpgen] {key}: {value!r} is not one of {', '.join(choices)}"
            )
    return values


def _bool(file: Path, table: dict[str, Any], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{file}: [tool.mcpgen] {key} must be true or false")
    return value


def _string(file: Path, table: dict[str, Any], key: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigError(f"{file}: [tool.mcpgen] {key} must be a non-empty string")
    return value


def _path(file: Path, root: Path, table: dict[str, Any], key: str) -> Path | None:
    value = _string(file, table, key)
    return None if value is None else _relative(root, value)


def _choice(file: Path, table: dict[str, Any], key: str, choices: tuple[str, ...]) -> str | None:
    value = table.get(key)
    if value is not None and value not in choices:
        raise ConfigError(f"{file}: [tool.mcpgen] {key} must be one of {', '.join(choices)}")
    return value
