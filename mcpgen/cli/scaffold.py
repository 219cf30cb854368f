"""``mcpgen init`` (scaffold a project) and ``mcpgen config`` (the MCP host entry
that starts a built server).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from .common import (
    check_user_target,
    echo,
    echo_error,
    echo_warning,
    project_config,
    specs_or_config,
    unreadable,
    write_user_file,
)


@click.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--name", help="Server name (default: from the folder name); the package is NAME_mcp."
)
@click.option(
    "--dockerfile",
    is_flag=True,
    help="Also write a Dockerfile: the server over HTTP as a non-root user, with a health "
    "check and the MCP Registry's label.",
)
@click.option(
    "--registry-name",
    metavar="NAMESPACE/NAME",
    help="The MCP Registry name (reverse DNS: io.github.you/notes), set as "
    "server.registry_name and in the Dockerfile's label.",
)
def init(directory: Path, name: str | None, dockerfile: bool, registry_name: str | None) -> None:
    """Scaffold a project in DIRECTORY: tools.yaml, an implementation, a test,
    [tool.mcpgen] in pyproject.toml, a pre-commit config, .gitignore lines (and a
    Dockerfile with --dockerfile).

    Refuses (exit 1, nothing written) when any of those files exists, except that
    [tool.mcpgen] is appended to a pyproject.toml without one and .gitignore lines
    are added to an existing .gitignore."""
    from ..spec.format import EDITOR_SCHEMA
    from ..starter import scaffold, server_name_for

    directory = directory.absolute()
    if name is not None and not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise click.BadParameter(
            "lower-case letters, digits and _, starting with a letter", param_hint="--name"
        )
    project = scaffold(
        name or server_name_for(directory.name),
        json.dumps(EDITOR_SCHEMA, indent=2) + "\n",
        registry_name=_registry_name(registry_name),
        dockerfile_requirement=_http_requirement() if dockerfile else None,
    )
    pyproject = directory / "pyproject.toml"
    for rel in [*project.files, "pyproject.toml", ".gitignore"]:
        # exits 2 on a symlink at the file or on a folder below DIRECTORY: never written through
        check_user_target(directory / rel, force=True, base=directory)
    taken = [
        rel for rel in project.files if (directory / rel).exists() or (directory / rel).is_symlink()
    ]
    if pyproject.is_file() and "[tool.mcpgen]" in pyproject.read_text(encoding="utf-8"):
        taken.append("pyproject.toml ([tool.mcpgen])")
    if taken:
        echo_error(
            f"mcpgen init: {directory} already has {', '.join(taken)}; nothing was "
            "written (init never overwrites: move them away or pick another folder)"
        )
        sys.exit(1)
    for rel, text in project.files.items():
        write_user_file(directory / rel, text, force=False, base=directory)
    if pyproject.is_file():
        existing = pyproject.read_text(encoding="utf-8")
        write_user_file(
            pyproject, existing.rstrip("\n") + "\n\n" + project.pyproject_table, force=True
        )
    else:
        write_user_file(pyproject, project.pyproject_table, force=False)
    gitignore = directory / ".gitignore"
    present = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.is_file() else []
    added = [line for line in project.gitignore_lines if line not in present]
    if added:
        body = "\n".join(present) + ("\n" if present else "") + "\n".join(added) + "\n"
        write_user_file(gitignore, body, force=True)
    where = "" if directory == Path.cwd() else f"cd {directory}\n  "
    echo(
        f"wrote {', '.join([*project.files, 'pyproject.toml', '.gitignore'])} in {directory}\n"
        f"next:\n  {where}mcpgen build\n  python -m {project.package}"
        f"        # serves over stdio\n  python -m pytest"
    )


def _registry_name(given: str | None) -> str | None:
    from ..spec.format import REGISTRY_NAME_PATTERN

    if given is not None and not re.fullmatch(REGISTRY_NAME_PATTERN, given):
        raise click.BadParameter(
            "a reverse-DNS namespace, '/', then the server: io.github.you/notes",
            param_hint="--registry-name",
        )
    return given


def _http_requirement() -> str:
    """What the Dockerfile's image installs: the runtime this mcpgen's code needs, with
    its HTTP extra."""
    from mcpgen_runtime import requirement

    from .. import __version__

    return requirement(__version__, "http")


@click.command("config")
@click.argument("host", type=click.Choice(["claude-desktop", "vscode", "cursor", "json"]))
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option("--name", help="Server name in the host (default: the spec's server.name).")
@click.option(
    "--write", is_flag=True, help="Merge the entry into the host's file (other entries are kept)."
)
@click.option(
    "--path",
    "host_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The host file to --write (default: the host's usual file).",
)
@click.option(
    "--python",
    "python",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The interpreter the host runs (default: the one running mcpgen); "
    "it needs pydantic and the implementation's dependencies.",
)
def config_(
    host: str,
    spec: Path | None,
    name: str | None,
    write: bool,
    host_file: Path | None,
    python: Path | None,
) -> None:
    """Print (or --write) the MCP host entry that starts SPEC's server: this
    interpreter, `-m PACKAGE` and a PYTHONPATH with the package's folder.
    SPEC defaults to the one [tool.mcpgen] spec, else ./tools.yaml."""
    from ..build import output_dir
    from ..hosts import HostError, default_path, merge_entry, server_entry, wrap
    from ..spec.load import load_contract

    project = project_config()
    specs = (spec,) if spec is not None else specs_or_config((), project)
    if len(specs) != 1:
        raise click.UsageError("several specs are configured: name the one to add")
    (chosen,) = specs
    if unreadable(chosen):
        echo_error(f"{chosen}: cannot read spec")
        sys.exit(2)
    configured = project.output_for(chosen) if project else None
    # the spec's `output:` passes the check `build` makes (a folder outside the spec's
    # tree would go first on the host's PYTHONPATH); [tool.mcpgen] settings are the user's
    outside = configured is not None or bool(project and project.allow_outside_output)
    loaded = load_contract(chosen, allow_outside_refs=True, allow_outside_output=outside)
    if loaded.contract is None:
        for diagnostic in loaded.diagnostics:
            echo_error(str(diagnostic))
        echo_error(f"mcpgen config: {chosen} is not valid (mcpgen validate {chosen})")
        sys.exit(1)
    contract = loaded.contract
    package_dir = output_dir(chosen, contract.output, contract.package, configured)
    if not (package_dir / "__init__.py").is_file():
        echo_warning(f"note: {package_dir} holds no built package yet; run mcpgen build {chosen}")
    label = name or contract.server.name
    interpreter = str(python.absolute()) if python is not None else None
    entry = server_entry(host, contract.package, package_dir, chosen.parent, interpreter)
    if not write:
        click.echo(json.dumps(wrap(host, label, entry), indent=2, ensure_ascii=False))
        return
    target = host_file or default_path(host)
    if target is None:
        raise click.UsageError("the json host has no usual file: give --path FILE")
    # A per-user host file (Claude Desktop's, Cursor's) is not the project's: only a
    # link at the file itself is refused there (a linked ~/.config is common). A
    # workspace file or a --path is checked from the working folder down.
    base = target.parent if host_file is None and host != "vscode" else None
    check_user_target(target, force=True, base=base)  # before reading it
    try:
        text, replaced = merge_entry(host, target, label, entry)
    except HostError as exc:
        echo_error(f"mcpgen config: {exc}")
        sys.exit(2)
    write_user_file(target, text, force=True, base=base)
    echo(f"{'replaced' if replaced else 'added'} server '{label}' in {target}")
