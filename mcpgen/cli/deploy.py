"""``mcpgen build --emit server.json``: the MCP Registry's file beside each spec,
written after the package (or compared, never written, under ``--check``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import echo, echo_error, echo_warning

if TYPE_CHECKING:
    from ..build import BuildResult
    from ..config import ProjectConfig
    from ..deploy import Emitted

EMIT = click.option(
    "--emit",
    "emit",
    multiple=True,
    type=click.Choice(["server.json"]),
    help="Also write this file beside each spec (repeatable; default: [tool.mcpgen] emit): "
    "server.json, the MCP Registry's entry. With --check it is compared, never written.",
)
REMOTE_URL = click.option(
    "--remote-url",
    "remote_urls",
    multiple=True,
    metavar="URL",
    help="server.json lists this deployed endpoint as a streamable-http remote "
    "(repeatable; default: [tool.mcpgen] remote-urls).",
)


def emit_settings(
    emit: tuple[str, ...], remote_urls: tuple[str, ...], config: ProjectConfig | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The files to emit and the remote URLs: as typed, else ``[tool.mcpgen]``'s."""
    files = emit or (config.emit if config else ())
    urls = remote_urls or (config.remote_urls if config else ())
    if urls and not files:
        raise click.UsageError("--remote-url only goes into server.json: add --emit server.json")
    return files, urls


def check_emit_targets(specs: tuple[Path, ...], files: tuple[str, ...]) -> None:
    """One server.json a folder: two specs beside each other cannot both have one."""
    if not files:
        return
    folders = [spec.parent.resolve() for spec in specs]
    if len(set(folders)) != len(folders):
        raise click.UsageError(
            "--emit server.json writes beside each spec, and two of these specs share a "
            "folder: emit for one spec at a time"
        )


def emit_for(
    spec: Path,
    result: BuildResult,
    remote_urls: tuple[str, ...],
    *,
    check: bool,
    allow_outside_refs: bool,
    allow_outside_output: bool,
) -> Emitted | None:
    """server.json for a spec whose build got as far as a package (None otherwise)."""
    if result.status in ("invalid", "refused"):
        return None
    from ..deploy import emit_server_json
    from ..spec.load import load_contract

    loaded = load_contract(
        spec, allow_outside_refs=allow_outside_refs, allow_outside_output=allow_outside_output
    )
    if loaded.contract is None:  # the build said why
        return None
    return emit_server_json(spec, loaded.contract, remote_urls=remote_urls, check=check)


def emitted_document(emitted: Emitted) -> dict[str, Any]:
    from ..report import diagnostic_json

    return {
        "file": str(emitted.path),
        "status": emitted.status,
        "ok": emitted.ok,
        "diagnostics": [diagnostic_json(d) for d in emitted.diagnostics],
        "diff": emitted.diff,
    }


def echo_emitted(emitted: Emitted, fmt: str) -> None:
    """server.json's problems, diff and outcome, as text or workflow annotations."""
    from ..report import diagnostic_github, github_command

    for diagnostic in emitted.diagnostics:
        if fmt == "github":
            echo(diagnostic_github(diagnostic))
        else:
            (echo_warning if diagnostic.level == "warning" else echo_error)(str(diagnostic))
    if emitted.diff:
        echo(emitted.diff, nl=not emitted.diff.endswith("\n"))
    line = {
        "written": f"wrote {emitted.path}",
        "unchanged": f"{emitted.path}: unchanged",
        "fresh": f"{emitted.path}: up to date",
        "stale": f"{emitted.path}: stale; fix: the same mcpgen build without --check",
        "failed": f"{emitted.path}: not written",
    }[emitted.status]
    if not emitted.ok and emitted.status != "failed":
        line += "; not publishable as it is (above)"
    if fmt == "github" and not emitted.ok:
        echo(github_command("error", line, file=str(emitted.path), line=1, title="server.json"))
    elif fmt != "github":
        (echo if emitted.ok else echo_error)(line)
