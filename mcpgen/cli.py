"""The ``mcpgen`` command line: thin wrappers over build, validate, schema, init, diff."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from . import __version__

__all__ = ["main"]


def _echo_error(text: str) -> None:
    click.secho(text, fg="red", err=True, color=None)  # colour only on a terminal


def _echo_warning(text: str) -> None:
    click.secho(text, fg="yellow", err=True, color=None)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcpgen")
def main() -> None:
    """Compile YAML contracts of MCP tools into typed Python packages."""


@main.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Output directory (one spec).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff when output is stale.")
@click.option("--force", is_flag=True, help="Write into a directory mcpgen did not create.")
@click.option("--allow-outside-refs", is_flag=True, help="Follow $ref files outside the spec's tree.")
def build(
    specs: tuple[Path, ...], output: Path | None, check: bool, force: bool, allow_outside_refs: bool
) -> None:
    """Generate the package for each SPEC."""
    from .build import build_spec

    if output is not None and len(specs) > 1:
        raise click.UsageError("--output applies to one spec at a time")
    failed = False
    for spec in specs:
        result = build_spec(
            spec, output=output, check=check, force=force, allow_outside_refs=allow_outside_refs
        )
        for diagnostic in result.diagnostics:
            (_echo_warning if diagnostic.level == "warning" else _echo_error)(str(diagnostic))
        for diff in result.diffs:
            click.echo(diff, nl=not diff.endswith("\n"))
        timing = f"({result.seconds:.2f}s)"
        if result.status == "invalid":
            errors = sum(1 for d in result.diagnostics if d.level == "error")
            _echo_error(f"{spec}: invalid, {errors} error(s) {timing}")
        elif result.status == "refused":
            _echo_error(f"{spec}: {result.message}")
        elif result.status == "stale":
            _echo_error(f"{spec}: stale, {len(result.diffs)} file(s) differ from {result.output} {timing}")
        elif result.status == "fresh":
            click.echo(f"{spec}: up to date ({result.output}) {timing}")
        elif result.status == "unchanged":
            click.echo(f"{spec}: unchanged ({result.output}) {timing}")
        else:
            assert result.report is not None
            click.echo(
                f"{spec}: wrote {len(result.report.written)} file(s), removed "
                f"{len(result.report.removed)} → {result.output} {timing}"
            )
        failed |= not result.ok
    sys.exit(1 if failed else 0)


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
            click.echo(f"{spec}: valid ({tools} tool(s))")
    sys.exit(1 if failed else 0)


@main.command()
@click.option("--path", "show_path", is_flag=True, help="Print the path of the schema file instead.")
def schema(show_path: bool) -> None:
    """Print the JSON Schema of the spec format (for editor completion)."""
    from .spec.format import SPEC_FORMAT_SCHEMA, schema_file

    if show_path:
        click.echo(str(schema_file()))
    else:
        click.echo(json.dumps(SPEC_FORMAT_SCHEMA, indent=2))


@main.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing tools.yaml.")
def init(directory: Path, force: bool) -> None:
    """Write a commented starter tools.yaml into DIRECTORY."""
    from .starter import STARTER_SPEC

    target = directory / "tools.yaml"
    if target.exists() and not force:
        _echo_error(f"{target} exists; pass --force to overwrite it")
        sys.exit(1)
    directory.mkdir(parents=True, exist_ok=True)
    target.write_text(STARTER_SPEC, encoding="utf-8")
    click.echo(f"wrote {target}; next: mcpgen build {target}")
