"""``server.json`` for the MCP Registry, from the contract (``mcpgen build --emit``).

The file follows the registry's published schema (``SCHEMA_URL``): the name is the
spec's ``server.registry_name``, the description ``server.description``, the title
and version the spec's; one PyPI package (the ``[project] name`` of the nearest
``pyproject.toml``) run over stdio, with the environment variables a stdio run
reads (the runtime's own and the spec's ``server.environment``, secrets marked
``isSecret``); one ``streamable-http`` remote per URL given (``--remote-url`` or
``[tool.mcpgen] remote-urls``). Top-level keys mcpgen does not write (``repository``,
``websiteUrl``, ``icons``, ``_meta``) are kept from the file on disk.

The checks that stop a publish are made here, with nothing sent anywhere: the
registry finds ``mcp-name: <name>`` in the package's README on PyPI (the line is
checked in the README ``pyproject.toml`` declares), and a ``Dockerfile`` beside the
spec carries the same name in its ``io.modelcontextprotocol.server.name`` label.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import ir
from .safeio import read_regular, replace_file
from .spec.errors import Diagnostic

__all__ = [
    "OWNED_KEYS",
    "RUNTIME_VARIABLES",
    "SCHEMA_URL",
    "SERVER_JSON",
    "Distribution",
    "Emitted",
    "emit_server_json",
    "find_distribution",
    "server_json",
]

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SERVER_JSON = "server.json"
OCI_LABEL = "io.modelcontextprotocol.server.name"
# The top-level keys mcpgen writes; any other key of the file on disk is the user's.
OWNED_KEYS = ("$schema", "name", "title", "description", "version", "packages", "remotes")
_MAX_FILE_BYTES = 1024 * 1024
_REMOTE_URL = re.compile(r"^https?://[^\s]+$")  # the registry's pattern for a remote's url
# What the registry refuses as a version: a range (^1.2, ~1.2, >=1.2, 1.x, 1.*)
_VERSION_RANGE = re.compile(r"[\^~<>=*]|(^|\.)[xX](\.|$)")

RUNTIME_VARIABLES: tuple[ir.EnvironmentVariable, ...] = (
    ir.EnvironmentVariable(
        "MCPGEN_MAX_MESSAGE_BYTES",
        "Largest JSON-RPC message the server reads, in bytes (default 16 MiB).",
    ),
)
"""What a generated server reads from its environment when run over stdio, as the
registry's package entry runs it. Over HTTP it also reads ``MCPGEN_TASK_STORE`` (a
secret: a Redis URL may hold a password), ``MCPGEN_TASK_LEASE`` and
``MCPGEN_TASK_KEY_PREFIX``; those belong to whoever runs the remote, not to a
registry client, so they are not listed (README, "Deploying")."""

Status = Literal["written", "unchanged", "fresh", "stale", "failed"]


@dataclass(frozen=True)
class Distribution:
    """What ``pyproject.toml`` says of the distribution PyPI serves."""

    file: Path | None = None
    name: str | None = None
    version: str | None = None  # a static [project] version
    readme: Path | None = None  # the README file PyPI shows
    readme_text: str | None = None  # an inline readme (readme = {text = ...})


@dataclass
class Emitted:
    """One spec's ``server.json``: written, up to date, stale (``--check``) or not made."""

    path: Path
    status: Status
    diagnostics: list[Diagnostic] = field(default_factory=list)
    diff: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("written", "unchanged", "fresh") and not any(
            d.level == "error" for d in self.diagnostics
        )


def find_distribution(start: Path) -> Distribution:
    """The nearest ``pyproject.toml`` with a ``[project]`` table, from ``start`` upward
    to the repository root (a folder holding ``.git``); empty when there is none."""
    folder = start.resolve()
    for candidate in (folder, *folder.parents):
        file = candidate / "pyproject.toml"
        if file.is_file():
            found = _distribution(file)
            if found is not None:
                return found
        if (candidate / ".git").exists():
            break
    return Distribution()


def _distribution(file: Path) -> Distribution | None:
    try:
        data = tomllib.loads(read_regular(file, limit=_MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    project = data.get("project")
    if not isinstance(project, dict):
        return None
    name, version, readme = project.get("name"), project.get("version"), project.get("readme")
    readme_file: Path | None = None
    readme_text: str | None = None
    if isinstance(readme, str):
        readme_file = file.parent / readme
    elif isinstance(readme, dict) and isinstance(readme.get("file"), str):
        readme_file = file.parent / readme["file"]
    elif isinstance(readme, dict) and isinstance(readme.get("text"), str):
        readme_text = readme["text"]
    return Distribution(
        file=file,
        name=name if isinstance(name, str) else None,
        version=version if isinstance(version, str) else None,
        readme=readme_file,
        readme_text=readme_text,
    )


def _variable(variable: ir.EnvironmentVariable) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": variable.name}
    if variable.description:
        entry["description"] = variable.description
    if variable.required:
        entry["isRequired"] = True
    if variable.secret:
        entry["isSecret"] = True
    if variable.default is not None:
        entry["default"] = variable.default
    return entry


def server_json(
    contract: ir.Contract, distribution: str, remote_urls: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The registry's ``server.json`` of ``contract`` (its owned keys, in their order)."""
    server = contract.server
    declared = {variable.name for variable in server.environment}
    variables = [
        *server.environment,
        *(v for v in RUNTIME_VARIABLES if v.name not in declared),
    ]
    package: dict[str, Any] = {
        "registryType": "pypi",
        "identifier": distribution,
        "version": server.version,
        "transport": {"type": "stdio"},
        "environmentVariables": [_variable(v) for v in variables],
    }
    document: dict[str, Any] = {"$schema": SCHEMA_URL, "name": server.registry_name}
    if server.title:
        document["title"] = server.title
    document["description"] = server.description
    document["version"] = server.version
    document["packages"] = [package]
    if remote_urls:
        document["remotes"] = [{"type": "streamable-http", "url": url} for url in remote_urls]
    return document


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


class _Unusable(Exception):
    """The server.json on disk cannot be read or kept."""


class _Where:
    """Positions in the spec, for diagnostics about keys server.json needs."""

    def __init__(self, spec: Path) -> None:
        from .spec.yamlpos import PositionedDocument, load_yaml

        self.spec = spec
        try:
            text = read_regular(spec, limit=16 * 1024 * 1024).decode("utf-8")
            self.doc: PositionedDocument | None = load_yaml(text, str(spec))[0]
        except (OSError, UnicodeDecodeError):
            self.doc = None

    def at(
        self, path: tuple[str | int, ...], message: str, level: Literal["error", "warning"]
    ) -> Diagnostic:
        from .spec.errors import format_path

        position = self.doc.position(path, key=True) if self.doc else None
        line, column = (position.line, position.column) if position else (1, 1)
        return Diagnostic(str(self.spec), line, column, format_path(path), message, level)


def contract_problems(
    where: _Where, contract: ir.Contract, distribution: Distribution, remote_urls: tuple[str, ...]
) -> list[Diagnostic]:
    """What keeps a valid spec from a server.json the registry accepts."""
    server = contract.server
    problems: list[Diagnostic] = []
    if server.version == "latest" or _VERSION_RANGE.search(server.version):
        problems.append(
            where.at(
                ("server", "version"),
                f"the registry takes one exact version, not {server.version!r}",
                "error",
            )
        )
    if not server.registry_name:
        problems.append(
            where.at(
                ("server",),
                "server.json needs server.registry_name, the MCP Registry name "
                "(reverse DNS: io.github.you/weather)",
                "error",
            )
        )
    if not server.description:
        problems.append(
            where.at(
                ("server",),
                "server.json needs server.description (one line, at most 100 characters)",
                "error",
            )
        )
    if server.title is not None and len(server.title) > 100:
        problems.append(
            where.at(
                ("server", "title"),
                f"the registry's title has at most 100 characters; this one has "
                f"{len(server.title)}",
                "error",
            )
        )
    problems.extend(_distribution_problems(where, contract, distribution))
    for url in remote_urls:
        if not _REMOTE_URL.match(url):
            problems.append(
                where.at(("server",), f"remote URL {url!r} is not an http(s):// URL", "error")
            )
    return problems


def _distribution_problems(
    where: _Where, contract: ir.Contract, distribution: Distribution
) -> list[Diagnostic]:
    if distribution.name is None:
        shown = (
            _shown(distribution.file)
            if distribution.file
            else "no pyproject.toml with a [project] table was found"
        )
        return [
            where.at(
                ("server",),
                f"server.json names the PyPI package: set [project] name in pyproject.toml "
                f"({shown})",
                "error",
            )
        ]
    version = contract.server.version
    if distribution.version is not None and distribution.version != version:
        return [
            where.at(
                ("server", "version"),
                f"server.version is {version} but {_shown(distribution.file)} says [project] version "
                f"{distribution.version}: the registry entry names PyPI release {version}",
                "warning",
            )
        ]
    return []


def readme_problem(
    where: _Where, name: str, distribution: Distribution, level: Literal["error", "warning"]
) -> Diagnostic | None:
    """The registry proves the PyPI package is the server's by finding ``mcp-name:
    <name>`` in its README (an HTML comment hides it on PyPI)."""
    line = f"<!-- mcp-name: {name} -->"
    pattern = re.compile(r"mcp-name:\s*" + re.escape(name) + r"(?![A-Za-z0-9._/-])")
    if distribution.readme_text is not None:
        text: str | None = distribution.readme_text
        shown = f"{_shown(distribution.file)} (readme text)"
    elif distribution.readme is not None:
        shown = _shown(distribution.readme)
        try:
            text = read_regular(distribution.readme, limit=16 * 1024 * 1024).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
    else:
        return where.at(
            ("server", "registry_name"),
            f"{_shown(distribution.file)} declares no readme; PyPI shows none and the registry "
            f'looks there for the line {line}: set [project] readme = "README.md" and add '
            "the line to it",
            level,
        )
    if text is not None and pattern.search(text):
        return None
    return where.at(
        ("server", "registry_name"),
        f"the registry verifies the PyPI package by its README: add the line {line} to "
        f"{shown} (before the release it describes)",
        level,
    )


def dockerfile_problem(where: _Where, name: str, folder: Path) -> Diagnostic | None:
    """A ``Dockerfile`` beside the spec labelled for another server name."""
    dockerfile = folder / "Dockerfile"
    try:
        text = read_regular(dockerfile, limit=_MAX_FILE_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = re.search(re.escape(OCI_LABEL) + r"""\s*=\s*["']?([^"'\s]+)""", text)
    if found is None or found.group(1) == name:
        return None
    return where.at(
        ("server", "registry_name"),
        f"{dockerfile} labels the image {OCI_LABEL}={found.group(1)}; the registry expects {name}",
        "warning",
    )


def emit_server_json(
    spec: Path,
    contract: ir.Contract,
    *,
    remote_urls: tuple[str, ...] = (),
    check: bool = False,
) -> Emitted:
    """Write (or with ``check`` compare, never writing) the ``server.json`` beside ``spec``."""
    target = spec.parent / SERVER_JSON
    distribution = find_distribution(spec.parent)
    where = _Where(spec)
    problems = contract_problems(where, contract, distribution, remote_urls)
    if any(d.level == "error" for d in problems):
        return Emitted(target, "failed", problems)
    name = contract.server.registry_name
    assert name is not None and distribution.name is not None
    for found in (
        readme_problem(where, name, distribution, "error" if check else "warning"),
        dockerfile_problem(where, name, spec.parent),
    ):
        if found is not None:
            problems.append(found)
    try:
        current = _current(target)
        extras = _extras(current)
    except _Unusable as exc:
        problems.append(where.at(("server", "registry_name"), str(exc), "error"))
        return Emitted(target, "failed", problems)
    document = {**server_json(contract, distribution.name, remote_urls), **extras}
    text = render(document)
    if text == current:
        return Emitted(target, "fresh" if check else "unchanged", problems)
    if check:
        return Emitted(target, "stale", problems, _diff(current, text, str(target)))
    replace_file(target, text.encode("utf-8"))
    return Emitted(target, "written", problems)


def _shown(path: Path | None) -> str:
    """``path`` relative to the working folder when that is shorter."""
    if path is None:
        return "pyproject.toml"
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return relative if len(relative) < len(str(path)) else str(path)


def _current(target: Path) -> str | None:
    try:
        return read_regular(target, limit=_MAX_FILE_BYTES, follow_symlinks=False).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unusable(f"{target} cannot be read ({exc}); move it away") from exc


def _extras(current: str | None) -> dict[str, Any]:
    """The top-level keys of the file on disk that mcpgen does not write."""
    if current is None:
        return {}
    try:
        data = json.loads(current)
    except json.JSONDecodeError as exc:
        raise _Unusable(
            f"{SERVER_JSON} on disk is not JSON ({exc}); fix or remove it: mcpgen keeps "
            "the keys it does not write"
        ) from exc
    if not isinstance(data, dict):
        raise _Unusable(f"{SERVER_JSON} on disk is not a JSON object; fix or remove it")
    return {key: value for key, value in data.items() if key not in OWNED_KEYS}


def _diff(old: str | None, new: str, label: str) -> str:
    if old is None:
        return f"missing: {label}\n"
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"{label} (on disk)",
            f"{label} (generated)",
        )
    )
