"""The ``mcpgen`` command line: thin wrappers over build, validate, schema, init, diff."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from . import __version__
from .printable import escape_lines

if TYPE_CHECKING:
    from .build import BuildResult

__all__ = ["main"]


# Every line the CLI prints goes through _echo: text from a spec or a server (names,
# keys, paths, messages) has its control, line-break and bidi characters escaped, so
# it cannot move the cursor, retitle the terminal or fake another line of output.


def _echo(text: str, *, nl: bool = True, err: bool = False, fg: str | None = None) -> None:
    click.secho(escape_lines(text), nl=nl, err=err, fg=fg, color=None)  # colour only on a tty


def _echo_error(text: str) -> None:
    _echo(text, err=True, fg="red")


def _echo_warning(text: str) -> None:
    _echo(text, err=True, fg="yellow")


def _write_user_file(target: Path, text: str, *, force: bool) -> None:
    """Write a file the user named (``init``, ``import -o``), or exit.

    A symlink at ``target`` is refused (exit 2), even with --force, and never
    followed: a dangling one planted in a shared folder would otherwise make the
    write create its target wherever it points. The bytes go through a temporary
    file beside ``target`` and a rename (safeio.replace_file), so a link planted
    between this check and the write is replaced, not followed, either way.
    """
    from .safeio import replace_file

    _check_user_target(target, force=force)
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_file(target, text.encode("utf-8"))


def _check_user_target(target: Path, *, force: bool) -> None:
    """Exit 2 when ``target`` is a symlink, 1 when it exists and --force is not given."""
    if target.is_symlink():
        _echo_error(f"{target} is a symbolic link; mcpgen does not write through one "
                    "(remove it or choose another path)")
        sys.exit(2)
    if target.exists() and not force:
        _echo_error(f"{target} exists; pass --force to overwrite it")
        sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcpgen")
def main() -> None:
    """Compile YAML contracts of MCP tools into typed Python packages."""


@main.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(path_type=Path),
    help="Output directory (one spec), used as typed: trusted, it may be anywhere, and the "
    "spec's own output: is then ignored.",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff when output is stale.")
@click.option("--force", is_flag=True, help="Write into a directory mcpgen did not create.")
@click.option("--allow-outside-refs", is_flag=True, help="Follow $ref files outside the spec's tree.")
@click.option(
    "--allow-outside-output", is_flag=True,
    help="Accept a spec's output: that is absolute or leaves the spec's tree (refused by default).",
)
def build(
    specs: tuple[Path, ...],
    output: Path | None,
    check: bool,
    force: bool,
    allow_outside_refs: bool,
    allow_outside_output: bool,
) -> None:
    """Generate the package for each SPEC."""
    from .build import build_spec
    from .progress import BuildProgress

    if output is not None and len(specs) > 1:
        raise click.UsageError("--output applies to one spec at a time")
    progress = BuildProgress(len(specs))
    for spec in specs:
        progress.begin(spec)
        result = build_spec(
            spec, output=output, check=check, force=force, allow_outside_refs=allow_outside_refs,
            allow_outside_output=allow_outside_output,
        )
        if result.diagnostics or result.diffs:
            progress.interrupt()
        for diagnostic in result.diagnostics:
            (_echo_warning if diagnostic.level == "warning" else _echo_error)(str(diagnostic))
        for diff in result.diffs:
            _echo(diff, nl=not diff.endswith("\n"))
        progress.finish(_build_summary(spec, result), status=result.status, ok=result.ok)
    progress.close()
    sys.exit(1 if progress.failed else 0)


def _build_summary(spec: Path, result: BuildResult) -> str:
    """One line per spec, the same on a terminal and in a pipe."""
    timing = f"({result.seconds:.2f}s)"
    if result.status == "invalid":
        errors = sum(1 for d in result.diagnostics if d.level == "error")
        return f"{spec}: invalid, {errors} error(s) {timing}"
    if result.status == "refused":
        return f"{spec}: {result.message}"
    if result.status == "stale":
        return f"{spec}: stale, {len(result.diffs)} file(s) differ from {result.output} {timing}"
    if result.status == "fresh":
        return f"{spec}: up to date ({result.output}) {timing}"
    if result.status == "unchanged":
        return f"{spec}: unchanged ({result.output}) {timing}"
    assert result.report is not None
    return (
        f"{spec}: wrote {len(result.report.written)} file(s), removed "
        f"{len(result.report.removed)} → {result.output} {timing}"
    )


@main.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate(specs: tuple[Path, ...]) -> None:
    """Report every problem in each SPEC as file:line:col; exit 1 on any error."""
    from .spec.load import load_contract

    failed = False
    for spec in specs:
        result = load_contract(spec)
        for diagnostic in result.diagnostics:
            (_echo_warning if diagnostic.level == "warning" else _echo_error)(str(diagnostic))
        if result.errors:
            failed = True
        else:
            tools = len(result.contract.tools) if result.contract else 0
            _echo(f"{spec}: valid ({tools} tool(s))")
    sys.exit(1 if failed else 0)


@main.command()
@click.option("--path", "show_path", is_flag=True, help="Print the path of the schema file instead.")
def schema(show_path: bool) -> None:
    """Print the JSON Schema of the spec format (for editor completion)."""
    from .spec.format import SPEC_FORMAT_SCHEMA, schema_file

    if show_path:
        _echo(str(schema_file()))
    else:
        _echo(json.dumps(SPEC_FORMAT_SCHEMA, indent=2))


@main.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing tools.yaml.")
def init(directory: Path, force: bool) -> None:
    """Write a commented starter tools.yaml into DIRECTORY."""
    from .starter import STARTER_SPEC

    target = directory / "tools.yaml"
    _write_user_file(target, STARTER_SPEC, force=force)
    _echo(f"wrote {target}; next: mcpgen build {target}")


@main.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--against",
    metavar="GIT_REF",
    help="Compare SPEC with itself as committed at GIT_REF (its schema files included).",
)
@click.option(
    "--category",
    type=click.Choice(["source", "call", "behavior"]),
    default="behavior",
    show_default=True,
    help="Fail on breaking changes of this category or a stricter one "
    "(source ⊃ call ⊃ behavior; behavior = every breaking change).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text: grouped per tool; json: one document; github: workflow annotations.",
)
@click.option("--ignore", "ignored", multiple=True, metavar="RULE", help="Leave out a rule (repeat).")
@click.option("--allow-outside-refs", is_flag=True, help="Follow $ref files outside the spec's tree.")
def diff(
    specs: tuple[Path, ...],
    against: str | None,
    category: str,
    output_format: str,
    ignored: tuple[str, ...],
    allow_outside_refs: bool,
) -> None:
    """Classify every contract change from OLD to NEW: `mcpgen diff OLD NEW`, or
    `mcpgen diff SPEC --against GIT_REF`. Exit 1 on a breaking change at --category,
    2 when a spec cannot be read."""
    import tempfile

    from .diff import (
        ALL_RULES,
        DiffFailed,
        diff_against_git,
        diff_files,
        render_github,
        render_json,
        render_text,
    )
    from .runtime._compat import Category

    expected = 1 if against is not None else 2
    if len(specs) != expected:
        usage = "SPEC --against GIT_REF" if against is not None else "OLD NEW"
        raise click.UsageError(f"expected {usage}, got {len(specs)} spec path(s)")
    unknown = [rule for rule in ignored if rule not in ALL_RULES]
    if unknown:
        raise click.BadParameter(f"unknown rule(s): {', '.join(unknown)}", param_hint="--ignore")
    try:
        if against is not None:
            with tempfile.TemporaryDirectory(prefix="mcpgen-diff-") as scratch:
                report = diff_against_git(
                    specs[0], against, Path(scratch), allow_outside_refs=allow_outside_refs
                )
        else:
            report = diff_files(specs[0], specs[1], allow_outside_refs=allow_outside_refs)
    except DiffFailed as exc:
        for diagnostic in exc.diagnostics:
            _echo_error(str(diagnostic))
        _echo_error(f"mcpgen diff: {exc}")
        sys.exit(2)
    report = report.ignoring(ignored)
    level = Category[category.upper()]
    if output_format == "json":
        click.echo(render_json(report, level))  # escaped as JSON by render_json
    elif output_format == "github":
        for line in render_github(report, level):
            _echo(line)
    else:
        for line in render_text(report, level, color=True):
            # escaped by render_text before its colour codes; click strips the colours
            # when stdout is not a terminal
            click.echo(line)
    sys.exit(1 if report.failing(level) else 0)


@main.command(
    "import",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("tools.yaml"),
    show_default=True, help="Where to write the spec ('-' for stdout).",
)
@click.option("--package", help="Import name of the generated package (default: from the server name).")
@click.option("--name", help="server.name in the spec (names the classes; default: serverInfo.name).")
@click.option(
    "--version", "server_version",
    help="server.version in the spec (default: serverInfo.version, or \"0\" when it is empty).",
)
@click.option(
    "--exact", is_flag=True,
    help="Keep every inputSchema as listed (input_schema:) instead of writing parameters.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds per request.")
def import_(
    command: tuple[str, ...],
    output: Path,
    package: str | None,
    name: str | None,
    server_version: str | None,
    exact: bool,
    force: bool,
    timeout: float,
) -> None:
    """Start the MCP server `COMMAND…` over stdio, list its tools and write a spec
    that reproduces its contract: `mcpgen import -o tools.yaml -- uvx mcp-server-time`."""
    from .importer import ImportFailed, import_server

    to_stdout = str(output) == "-"
    if not to_stdout:
        _check_user_target(output, force=force)  # before the server runs
    spec_dir = Path.cwd() if to_stdout else (output.parent if str(output.parent) else Path("."))
    try:
        spec = import_server(
            command, package=package, name=name, version=server_version, exact=exact,
            timeout=timeout, spec_dir=spec_dir,
        )
    except ImportFailed as exc:
        _echo_error(f"mcpgen import: {exc}")
        sys.exit(1)
    if to_stdout:
        _echo(spec.text, nl=False)  # a no-op on the emitter's output; never raw
        return
    _write_user_file(output, spec.text, force=force)
    differing = len(spec.notes)
    detail = f"; {differing} publish a slightly different form (see the comments)" if differing else ""
    _echo(f"wrote {output}: {spec.tools} tool(s), package {spec.package}{detail}")
    _echo(f"next: mcpgen build {output}")
