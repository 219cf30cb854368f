"""The ``mcpgen`` command line: thin wrappers over build, validate, schema, init, diff,
config, import, docs and test. This module holds the group and build, validate and schema;
``scaffold`` (init, config), ``contract`` (diff, import), ``docs`` and ``test`` the others,
``common`` what they share."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import __version__
from .common import (
    ALLOW_OUTSIDE_REFS,
    FORMAT,
    chosen_format,
    echo,
    echo_error,
    echo_warning,
    project_config,
    setting,
    specs_or_config,
    unreadable,
    write_user_file,
)
from .contract import diff, import_
from .deploy import (
    EMIT,
    REMOTE_URL,
    check_emit_targets,
    echo_emitted,
    emit_for,
    emit_settings,
    emitted_document,
)
from .docs import docs
from .scaffold import config_, init
from .test import test

if TYPE_CHECKING:
    from ..build import BuildResult, RuntimeMode
    from ..progress import BuildProgress

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcpgen")
def main() -> None:
    """Compile YAML contracts of MCP tools into typed Python packages."""


@main.command()
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Output directory (one spec), used as typed: trusted, it may be anywhere, and the "
    "spec's own output: is then ignored.",
)
@click.option(
    "--check",
    is_flag=True,
    default=None,
    help="Write nothing; exit 1 with a diff when output is stale.",
)
@click.option("--force", is_flag=True, help="Write into a directory mcpgen did not create.")
@ALLOW_OUTSIDE_REFS
@click.option(
    "--allow-outside-output",
    is_flag=True,
    default=None,
    help="Accept a spec's output: that is absolute or leaves the spec's tree (refused by default).",
)
@FORMAT
@click.option(
    "--runtime",
    type=click.Choice(["installed", "vendored"]),
    default="installed",
    show_default=True,
    help="installed: the package imports mcpgen-runtime (the build prints the requirement); "
    "vendored: a copy of the runtime goes into the package as _runtime.",
)
@EMIT
@REMOTE_URL
def build(
    specs: tuple[Path, ...],
    output: Path | None,
    check: bool | None,
    force: bool,
    allow_outside_refs: bool | None,
    allow_outside_output: bool | None,
    output_format: str | None,
    runtime: RuntimeMode,
    emit: tuple[str, ...],
    remote_urls: tuple[str, ...],
) -> None:
    """Generate the package for each SPEC (default: [tool.mcpgen] specs, else ./tools.yaml).

    Exit 0 when every package is written or up to date, 1 on an invalid spec, a stale
    package (--check) or a refused output directory, 2 on a usage or I/O error."""
    from ..progress import BuildProgress

    config = project_config()
    specs = specs_or_config(specs, config)
    emit, remote_urls = emit_settings(emit, remote_urls, config)
    check_emit_targets(specs, emit)
    run = _BuildRun(
        check=setting(check, config, "check"),
        force=force,
        refs=setting(allow_outside_refs, config, "allow_outside_refs"),
        outside=setting(allow_outside_output, config, "allow_outside_output"),
        fmt=chosen_format(output_format, config),
        runtime=runtime,
        remote_urls=remote_urls if emit else None,
    )
    if output is not None and len(specs) > 1:
        raise click.UsageError("--output applies to one spec at a time")
    _exit_if_unreadable(specs)
    text = run.fmt == "text"
    progress = BuildProgress(len(specs), interactive=None if text else False)
    documents: list[dict[str, object]] = []
    problems = 0
    for spec in specs:
        if text:
            progress.begin(spec)
        target = output if output is not None else (config.output_for(spec) if config else None)
        problems += _build_one(spec, target, run, progress, documents)
    if text:
        progress.close()
    _finish_build(run.fmt, documents, len(specs), progress.failed, problems)


@dataclass(frozen=True)
class _BuildRun:
    """The settings of one ``mcpgen build`` run, shared by its specs."""

    check: bool
    force: bool
    refs: bool
    outside: bool
    fmt: str
    runtime: RuntimeMode
    remote_urls: tuple[str, ...] | None  # None: no server.json asked for


def _build_one(
    spec: Path,
    target: Path | None,
    run: _BuildRun,
    progress: BuildProgress,
    documents: list[dict[str, object]],
) -> int:
    """Build one spec (and its server.json), print the outcome; the problems found."""
    from ..build import build_spec
    from ..report import count_levels

    result = build_spec(
        spec,
        output=target,
        check=run.check,
        force=run.force,
        allow_outside_refs=run.refs,
        allow_outside_output=run.outside,
        runtime=run.runtime,
    )
    errors, _ = count_levels(result.diagnostics)
    problems = errors + len(result.diffs)
    fix = _fix_hint(spec, result.status, run.check)
    emitted = None
    if run.remote_urls is not None:
        emitted = emit_for(
            spec,
            result,
            run.remote_urls,
            check=run.check,
            allow_outside_refs=run.refs,
            allow_outside_output=run.outside or target is not None,
        )
    if emitted is not None:
        problems += count_levels(emitted.diagnostics)[0] + (emitted.status == "stale")
    if run.fmt == "json":
        document = _build_document(spec, result, fix)
        if emitted is not None:
            document["server_json"] = emitted_document(emitted)
        documents.append(document)
    elif run.fmt == "github":
        _echo_build_github(spec, result, fix)
    else:
        _echo_build_text(spec, result, fix, progress)
    if emitted is not None and run.fmt != "json":
        echo_emitted(emitted, run.fmt)
    # text: progress.finish counted a failed build
    failed = (not result.ok and run.fmt != "text") + (
        result.ok and not (emitted is None or emitted.ok)
    )
    progress.failed += failed
    return problems


def _finish_build(
    fmt: str, documents: list[dict[str, object]], specs: int, failed: int, problems: int
) -> None:
    """The summary of a build run (the JSON document, or a line on failures) and its exit."""
    from ..report import dumps, plural

    if fmt == "json":
        summary = {"specs": specs, "failed": failed, "problems": problems}
        click.echo(dumps({"specs": documents, "summary": summary}))
    elif failed:
        echo_error(f"{plural(failed, 'spec')} of {specs} failed")
    sys.exit(1 if failed else 0)


def _exit_if_unreadable(specs: tuple[Path, ...]) -> None:
    """Exit 2, in the loader's own words (missing, a FIFO, a device…), when a spec
    path names no file."""
    missing = [spec for spec in specs if unreadable(spec)]
    if missing:
        from ..spec.load import load_contract

        for spec in missing:
            for diagnostic in load_contract(spec).diagnostics:
                echo_error(str(diagnostic))
        sys.exit(2)


def _build_document(spec: Path, result: BuildResult, fix: str) -> dict[str, object]:
    """One spec's build in ``--format json``."""
    from ..report import diagnostic_json

    return {
        "spec": str(spec),
        "status": result.status,
        "ok": result.ok,
        "output": None if result.output is None else str(result.output),
        "diagnostics": [diagnostic_json(d) for d in result.diagnostics],
        "diffs": result.diffs,
        "message": result.message,
        "fix": fix,
    }


def _echo_build_github(spec: Path, result: BuildResult, fix: str) -> None:
    """One spec's build as workflow annotations (the diffs go to the job log)."""
    from ..report import diagnostic_github, github_command

    for diagnostic in result.diagnostics:
        echo(diagnostic_github(diagnostic))
    for text in result.diffs:  # the job log shows what differs
        echo(text, nl=not text.endswith("\n"))
    if not result.ok and result.status != "invalid":
        echo(
            github_command(
                "error",
                f"{_build_summary(spec, result)}" + (f"; fix: {fix}" if fix else ""),
                file=str(spec),
                line=1,
                title="mcpgen build",
            )
        )


def _echo_build_text(spec: Path, result: BuildResult, fix: str, progress: BuildProgress) -> None:
    """One spec's build for people: its problems, then its summary line."""
    if result.diagnostics or result.diffs:
        progress.interrupt()
    for diagnostic in result.diagnostics:
        (echo_warning if diagnostic.level == "warning" else echo_error)(str(diagnostic))
    for text in result.diffs:
        echo(text, nl=not text.endswith("\n"))
    summary = _build_summary(spec, result) + (f"; fix: {fix}" if fix else "")
    progress.finish(summary, status=result.status, ok=result.ok)


def _fix_hint(spec: Path, status: str, check: bool) -> str:
    """The command that fixes a failed build, named in its summary line."""
    if status == "stale":
        return f"mcpgen build {spec}"
    if status == "refused":
        return f"mcpgen build --force {spec} (only if that directory may be replaced)"
    return ""


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
    # Each write says what the package needs installed (nothing, when vendored).
    needs = f"; needs {result.requirement}" if result.requirement else ""
    return (
        f"{spec}: wrote {len(result.report.written)} file(s), removed "
        f"{len(result.report.removed)} → {result.output}{needs} {timing}"
    )


@main.command()
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--allow-outside-refs",
    is_flag=True,
    default=None,
    help="Follow $ref files outside the spec's tree (as build does with the flag).",
)
@click.option(
    "--allow-outside-output",
    is_flag=True,
    default=None,
    help="Accept an output: outside the spec's tree (as build does with the flag).",
)
@FORMAT
def validate(
    specs: tuple[Path, ...],
    allow_outside_refs: bool | None,
    allow_outside_output: bool | None,
    output_format: str | None,
) -> None:
    """Report every problem in each SPEC as file:line:col (default: [tool.mcpgen] specs,
    else ./tools.yaml). Exit 0 valid, 1 on any error, 2 on a usage or I/O error."""
    from ..report import count_levels, diagnostic_github, diagnostic_json, dumps, plural
    from ..spec.load import load_contract

    config = project_config()
    specs = specs_or_config(specs, config)
    refs = setting(allow_outside_refs, config, "allow_outside_refs")
    outside = setting(allow_outside_output, config, "allow_outside_output")
    fmt = chosen_format(output_format, config)
    io_failed = False
    errors = warnings = 0
    documents: list[dict[str, object]] = []
    for spec in specs:
        if unreadable(spec):
            io_failed = True
        result = load_contract(spec, allow_outside_refs=refs, allow_outside_output=outside)
        spec_errors, spec_warnings = count_levels(result.diagnostics)
        errors, warnings = errors + spec_errors, warnings + spec_warnings
        tools = len(result.contract.tools) if result.contract else 0
        if fmt == "json":
            documents.append(
                {
                    "spec": str(spec),
                    "valid": not result.errors,
                    "tools": tools,
                    "diagnostics": [diagnostic_json(d) for d in result.diagnostics],
                }
            )
            continue
        for diagnostic in result.diagnostics:
            if fmt == "github":
                echo(diagnostic_github(diagnostic))
            else:
                (echo_warning if diagnostic.level == "warning" else echo_error)(str(diagnostic))
        if not result.errors and fmt == "text":
            echo(f"{spec}: valid ({tools} tool(s))")
    if fmt == "json":
        click.echo(
            dumps(
                {
                    "specs": documents,
                    "summary": {"specs": len(specs), "errors": errors, "warnings": warnings},
                }
            )
        )
    elif errors or warnings:
        closing = f"{plural(errors, 'error')}, {plural(warnings, 'warning')} in {plural(len(specs), 'spec')}"
        (echo_error if errors else echo_warning)(closing)
    sys.exit(2 if io_failed else 1 if errors else 0)


@main.command()
@click.option(
    "--path",
    "show_path",
    is_flag=True,
    help="Print the path of the schema file shipped with mcpgen instead.",
)
@click.option(
    "--write",
    "write_to",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the schema to this file (e.g. beside the spec, for its modeline).",
)
def schema(show_path: bool, write_to: Path | None) -> None:
    """Print the JSON Schema of the spec format (for editor completion).

    A spec's modeline then points at the written file, relative to the spec:
    `# yaml-language-server: $schema=.mcpgen/mcpgen-1.schema.json`."""
    from ..spec.format import EDITOR_SCHEMA, schema_file

    if write_to is not None:
        write_user_file(write_to, json.dumps(EDITOR_SCHEMA, indent=2) + "\n", force=True)
        echo(f"wrote {write_to}")
    elif show_path:
        echo(str(schema_file()))
    else:
        echo(json.dumps(EDITOR_SCHEMA, indent=2))


# The other commands live with their own jobs; the group is here.
main.add_command(init)
main.add_command(config_)
main.add_command(diff)
main.add_command(import_)
main.add_command(docs)
main.add_command(test)
