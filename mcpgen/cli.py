"""The ``mcpgen`` command line: thin wrappers over build, validate, schema, init, diff."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from . import __version__
from .printable import escape_lines

if TYPE_CHECKING:
    from .build import BuildResult, RuntimeMode
    from .project import ProjectConfig

__all__ = ["main"]


# Every line the CLI prints goes through _echo: text from a spec or a server (names,
# keys, paths, messages) has its control, line-break and bidi characters escaped, so
# it cannot move the cursor, retitle the terminal or fake another line of output.


def _echo(text: str, *, nl: bool = True, err: bool = False, fg: str | None = None) -> None:
    from .report import color_choice

    # NO_COLOR wins, then FORCE_COLOR, else colour only on a terminal
    click.secho(escape_lines(text), nl=nl, err=err, fg=fg, color=color_choice())


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


_FORMAT = click.option(
    "--format", "output_format", type=click.Choice(["text", "json", "github"]), default=None,
    help="text (default, or [tool.mcpgen] format): for people; json: one document; "
    "github: workflow annotations.",
)


def _project() -> ProjectConfig | None:
    """[tool.mcpgen] of the nearest pyproject.toml, or exit 2 when it is malformed."""
    from .project import ConfigError, find_config

    try:
        return find_config()
    except ConfigError as exc:
        _echo_error(f"mcpgen: {exc}")
        sys.exit(2)


def _specs_or_config(specs: tuple[Path, ...], config: ProjectConfig | None) -> tuple[Path, ...]:
    """The SPECs typed, else [tool.mcpgen] specs, else ./tools.yaml when it exists."""
    if specs:
        return specs
    if config is not None and config.specs:
        return tuple(entry.path for entry in config.specs)
    if Path("tools.yaml").is_file():
        return (Path("tools.yaml"),)
    raise click.UsageError(
        "no SPEC given, no [tool.mcpgen] specs in a pyproject.toml here or above, "
        "and no ./tools.yaml (mcpgen init writes a project)"
    )


def _unreadable(spec: Path) -> bool:
    """Exit-code 2 material: the spec path names no file at all (an I/O problem, not a
    finding about a spec)."""
    return not spec.is_file()


@main.command()
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(path_type=Path),
    help="Output directory (one spec), used as typed: trusted, it may be anywhere, and the "
    "spec's own output: is then ignored.",
)
@click.option("--check", is_flag=True, default=None,
              help="Write nothing; exit 1 with a diff when output is stale.")
@click.option("--force", is_flag=True, help="Write into a directory mcpgen did not create.")
@click.option("--allow-outside-refs", is_flag=True, default=None,
              help="Follow $ref files outside the spec's tree.")
@click.option(
    "--allow-outside-output", is_flag=True, default=None,
    help="Accept a spec's output: that is absolute or leaves the spec's tree (refused by default).",
)
@_FORMAT
@click.option(
    "--runtime", type=click.Choice(["installed", "vendored"]), default="installed",
    show_default=True,
    help="installed: the package imports mcpgen-runtime (the build prints the requirement); "
    "vendored: a copy of the runtime goes into the package as _runtime.",
)
def build(
    specs: tuple[Path, ...],
    output: Path | None,
    check: bool | None,
    force: bool,
    allow_outside_refs: bool | None,
    allow_outside_output: bool | None,
    output_format: str | None,
    runtime: RuntimeMode,
) -> None:
    """Generate the package for each SPEC (default: [tool.mcpgen] specs, else ./tools.yaml).

    Exit 0 when every package is written or up to date, 1 on an invalid spec, a stale
    package (--check) or a refused output directory, 2 on a usage or I/O error."""
    from .build import build_spec
    from .progress import BuildProgress
    from .report import count_levels, diagnostic_github, diagnostic_json, dumps, plural

    config = _project()
    specs = _specs_or_config(specs, config)
    check = check if check is not None else bool(config and config.check)
    refs = allow_outside_refs if allow_outside_refs is not None else bool(
        config and config.allow_outside_refs)
    outside = allow_outside_output if allow_outside_output is not None else bool(
        config and config.allow_outside_output)
    fmt = output_format or (config.format if config and config.format else "text")
    if output is not None and len(specs) > 1:
        raise click.UsageError("--output applies to one spec at a time")
    missing = [spec for spec in specs if _unreadable(spec)]
    if missing:
        from .spec.load import load_contract

        for spec in missing:  # the loader's own words: missing, a FIFO, a device…
            for diagnostic in load_contract(spec).diagnostics:
                _echo_error(str(diagnostic))
        sys.exit(2)
    text = fmt == "text"
    progress = BuildProgress(len(specs), interactive=None if text else False)
    documents: list[dict[str, object]] = []
    problems = 0
    for spec in specs:
        if text:
            progress.begin(spec)
        target = output if output is not None else (config.output_for(spec) if config else None)
        result = build_spec(
            spec, output=target, check=check, force=force, allow_outside_refs=refs,
            allow_outside_output=outside, runtime=runtime,
        )
        errors, _ = count_levels(result.diagnostics)
        problems += errors + len(result.diffs)
        fix = _fix_hint(spec, result.status, check)
        if fmt == "json":
            documents.append({
                "spec": str(spec), "status": result.status, "ok": result.ok,
                "output": None if result.output is None else str(result.output),
                "diagnostics": [diagnostic_json(d) for d in result.diagnostics],
                "diffs": result.diffs, "message": result.message, "fix": fix,
            })
            progress.failed += 0 if result.ok else 1
            continue
        if fmt == "github":
            for diagnostic in result.diagnostics:
                _echo(diagnostic_github(diagnostic))
            for diff in result.diffs:  # the job log shows what differs
                _echo(diff, nl=not diff.endswith("\n"))
            if not result.ok and result.status != "invalid":
                from .report import github_command

                _echo(github_command(
                    "error", f"{_build_summary(spec, result)}" + (f"; fix: {fix}" if fix else ""),
                    file=str(spec), line=1, title="mcpgen build"))
            progress.failed += 0 if result.ok else 1
            continue
        if result.diagnostics or result.diffs:
            progress.interrupt()
        for diagnostic in result.diagnostics:
            (_echo_warning if diagnostic.level == "warning" else _echo_error)(str(diagnostic))
        for diff in result.diffs:
            _echo(diff, nl=not diff.endswith("\n"))
        summary = _build_summary(spec, result) + (f"; fix: {fix}" if fix else "")
        progress.finish(summary, status=result.status, ok=result.ok)
    if text:
        progress.close()
    failed = progress.failed
    if fmt == "json":
        click.echo(dumps({"specs": documents,
                          "summary": {"specs": len(specs), "failed": failed, "problems": problems}}))
    elif failed:
        _echo_error(f"{plural(failed, 'spec')} of {len(specs)} failed")
    sys.exit(1 if failed else 0)


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
@click.option("--allow-outside-refs", is_flag=True, default=None,
              help="Follow $ref files outside the spec's tree (as build does with the flag).")
@click.option("--allow-outside-output", is_flag=True, default=None,
              help="Accept an output: outside the spec's tree (as build does with the flag).")
@_FORMAT
def validate(
    specs: tuple[Path, ...], allow_outside_refs: bool | None, allow_outside_output: bool | None,
    output_format: str | None,
) -> None:
    """Report every problem in each SPEC as file:line:col (default: [tool.mcpgen] specs,
    else ./tools.yaml). Exit 0 valid, 1 on any error, 2 on a usage or I/O error."""
    from .report import count_levels, diagnostic_github, diagnostic_json, dumps, plural
    from .spec.load import load_contract

    config = _project()
    specs = _specs_or_config(specs, config)
    refs = allow_outside_refs if allow_outside_refs is not None else bool(
        config and config.allow_outside_refs)
    outside = allow_outside_output if allow_outside_output is not None else bool(
        config and config.allow_outside_output)
    fmt = output_format or (config.format if config and config.format else "text")
    io_failed = False
    errors = warnings = 0
    documents: list[dict[str, object]] = []
    for spec in specs:
        if _unreadable(spec):
            io_failed = True
        result = load_contract(spec, allow_outside_refs=refs, allow_outside_output=outside)
        spec_errors, spec_warnings = count_levels(result.diagnostics)
        errors, warnings = errors + spec_errors, warnings + spec_warnings
        tools = len(result.contract.tools) if result.contract else 0
        if fmt == "json":
            documents.append({"spec": str(spec), "valid": not result.errors, "tools": tools,
                              "diagnostics": [diagnostic_json(d) for d in result.diagnostics]})
            continue
        for diagnostic in result.diagnostics:
            if fmt == "github":
                _echo(diagnostic_github(diagnostic))
            else:
                (_echo_warning if diagnostic.level == "warning" else _echo_error)(str(diagnostic))
        if not result.errors and fmt == "text":
            _echo(f"{spec}: valid ({tools} tool(s))")
    if fmt == "json":
        click.echo(dumps({"specs": documents,
                          "summary": {"specs": len(specs), "errors": errors, "warnings": warnings}}))
    elif errors or warnings:
        closing = f"{plural(errors, 'error')}, {plural(warnings, 'warning')} in {plural(len(specs), 'spec')}"
        (_echo_error if errors else _echo_warning)(closing)
    sys.exit(2 if io_failed else 1 if errors else 0)


@main.command()
@click.option("--path", "show_path", is_flag=True,
              help="Print the path of the schema file shipped with mcpgen instead.")
@click.option("--write", "write_to", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the schema to this file (e.g. beside the spec, for its modeline).")
def schema(show_path: bool, write_to: Path | None) -> None:
    """Print the JSON Schema of the spec format (for editor completion).

    A spec's modeline then points at the written file, relative to the spec:
    `# yaml-language-server: $schema=.mcpgen/mcpgen-1.schema.json`."""
    from .spec.format import EDITOR_SCHEMA, schema_file

    if write_to is not None:
        _write_user_file(write_to, json.dumps(EDITOR_SCHEMA, indent=2) + "\n", force=True)
        _echo(f"wrote {write_to}")
    elif show_path:
        _echo(str(schema_file()))
    else:
        _echo(json.dumps(EDITOR_SCHEMA, indent=2))


@main.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", help="Server name (default: from the folder name); the package is NAME_mcp.")
def init(directory: Path, name: str | None) -> None:
    """Scaffold a project in DIRECTORY: tools.yaml, an implementation, a test,
    [tool.mcpgen] in pyproject.toml, a pre-commit config, .gitignore lines.

    Refuses (exit 1, nothing written) when any of those files exists, except that
    [tool.mcpgen] is appended to a pyproject.toml without one and .gitignore lines
    are added to an existing .gitignore."""
    from .spec.format import EDITOR_SCHEMA
    from .starter import scaffold, server_name_for

    directory = directory.absolute()
    if name is not None and not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise click.BadParameter("lower-case letters, digits and _, starting with a letter",
                                 param_hint="--name")
    project = scaffold(name or server_name_for(directory.name),
                       json.dumps(EDITOR_SCHEMA, indent=2) + "\n")
    pyproject = directory / "pyproject.toml"
    for rel in [*project.files, "pyproject.toml", ".gitignore"]:
        if (directory / rel).is_symlink():
            _check_user_target(directory / rel, force=True)  # exits 2: never written through
    taken = [rel for rel in project.files if (directory / rel).exists() or (directory / rel).is_symlink()]
    if pyproject.is_file() and "[tool.mcpgen]" in pyproject.read_text(encoding="utf-8"):
        taken.append("pyproject.toml ([tool.mcpgen])")
    if taken:
        _echo_error(f"mcpgen init: {directory} already has {', '.join(taken)}; nothing was "
                    "written (init never overwrites: move them away or pick another folder)")
        sys.exit(1)
    for rel, text in project.files.items():
        _write_user_file(directory / rel, text, force=False)
    if pyproject.is_file():
        existing = pyproject.read_text(encoding="utf-8")
        _write_user_file(pyproject, existing.rstrip("\n") + "\n\n" + project.pyproject_table,
                         force=True)
    else:
        _write_user_file(pyproject, project.pyproject_table, force=False)
    gitignore = directory / ".gitignore"
    present = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.is_file() else []
    added = [line for line in project.gitignore_lines if line not in present]
    if added:
        body = "\n".join(present) + ("\n" if present else "") + "\n".join(added) + "\n"
        _write_user_file(gitignore, body, force=True)
    where = "" if directory == Path.cwd() else f"cd {directory}\n  "
    _echo(f"wrote {', '.join([*project.files, 'pyproject.toml', '.gitignore'])} in {directory}\n"
          f"next:\n  {where}mcpgen build\n  python -m {project.package}"
          f"        # serves over stdio\n  python -m pytest")


@main.command()
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--against",
    metavar="GIT_REF",
    help="Compare SPEC with itself as committed at GIT_REF (its schema files included).",
)
@click.option(
    "--category",
    type=click.Choice(["source", "call", "behavior"]),
    default=None,
    help="Fail on breaking changes of this category or a stricter one "
    "(source ⊃ call ⊃ behavior; behavior = every breaking change; the default, "
    "or [tool.mcpgen] diff-category).",
)
@_FORMAT
@click.option("--ignore", "ignored", multiple=True, metavar="RULE", help="Leave out a rule (repeat).")
@click.option("--allow-outside-refs", is_flag=True, default=None,
              help="Follow $ref files outside the spec's tree.")
def diff(
    specs: tuple[Path, ...],
    against: str | None,
    category: str | None,
    output_format: str | None,
    ignored: tuple[str, ...],
    allow_outside_refs: bool | None,
) -> None:
    """Classify every contract change from OLD to NEW: `mcpgen diff OLD NEW`, or
    `mcpgen diff SPEC --against GIT_REF`. With no SPEC, each [tool.mcpgen] spec (else
    ./tools.yaml) against GIT_REF (default HEAD). Exit 0 nothing breaking at
    --category, 1 on a breaking change, 2 when a spec cannot be read or git fails."""
    import tempfile

    from mcpgen_runtime._compat import Category

    from .diff import (
        ALL_RULES,
        DiffFailed,
        DiffReport,
        diff_against_git,
        diff_files,
        render_github,
        render_json,
        render_text,
    )
    from .report import color_choice

    config = _project()
    category = category or (config.diff_category if config and config.diff_category else "behavior")
    fmt = output_format or (config.format if config and config.format else "text")
    refs = allow_outside_refs if allow_outside_refs is not None else bool(
        config and config.allow_outside_refs)
    pairs: list[tuple[Path, ...]]
    if not specs:
        against = against or "HEAD"
        pairs = [(spec,) for spec in _specs_or_config(specs, config)]
    else:
        expected = 1 if against is not None else 2
        if len(specs) != expected:
            usage = "SPEC --against GIT_REF" if against is not None else "OLD NEW"
            raise click.UsageError(f"expected {usage}, got {len(specs)} spec path(s)")
        pairs = [specs]
    unknown = [rule for rule in ignored if rule not in ALL_RULES]
    if unknown:
        raise click.BadParameter(f"unknown rule(s): {', '.join(unknown)}", param_hint="--ignore")
    level = Category[category.upper()]
    failed = False
    for pair in pairs:
        report: DiffReport
        try:
            if against is not None:
                with tempfile.TemporaryDirectory(prefix="mcpgen-diff-") as scratch:
                    report = diff_against_git(
                        pair[0], against, Path(scratch), allow_outside_refs=refs
                    )
            else:
                report = diff_files(pair[0], pair[1], allow_outside_refs=refs)
        except DiffFailed as exc:
            for diagnostic in exc.diagnostics:
                _echo_error(str(diagnostic))
            _echo_error(f"mcpgen diff: {exc}")
            sys.exit(2)
        report = report.ignoring(ignored)
        if fmt == "json":
            click.echo(render_json(report, level))  # escaped as JSON by render_json
        elif fmt == "github":
            for line in render_github(report, level):
                _echo(line)
        else:
            for line in render_text(report, level, color=True):
                # escaped by render_text before its colour codes; click strips the colours
                # when stdout is not a terminal (or under NO_COLOR)
                click.echo(line, color=color_choice())
        failed = failed or bool(report.failing(level))
    sys.exit(1 if failed else 0)


@main.command("config")
@click.argument("host", type=click.Choice(["claude-desktop", "vscode", "cursor", "json"]))
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option("--name", help="Server name in the host (default: the spec's server.name).")
@click.option("--write", is_flag=True,
              help="Merge the entry into the host's file (other entries are kept).")
@click.option("--path", "host_file", type=click.Path(dir_okay=False, path_type=Path),
              help="The host file to --write (default: the host's usual file).")
@click.option("--python", "python", type=click.Path(dir_okay=False, path_type=Path),
              help="The interpreter the host runs (default: the one running mcpgen); "
              "it needs pydantic and the implementation's dependencies.")
def config_(host: str, spec: Path | None, name: str | None, write: bool,
            host_file: Path | None, python: Path | None) -> None:
    """Print (or --write) the MCP host entry that starts SPEC's server: this
    interpreter, `-m PACKAGE` and a PYTHONPATH with the package's folder.
    SPEC defaults to the one [tool.mcpgen] spec, else ./tools.yaml."""
    from .build import output_dir
    from .hosts import HostError, default_path, merge_entry, server_entry, wrap
    from .spec.load import load_contract

    project = _project()
    specs = (spec,) if spec is not None else _specs_or_config((), project)
    if len(specs) != 1:
        raise click.UsageError("several specs are configured: name the one to add")
    (chosen,) = specs
    if _unreadable(chosen):
        _echo_error(f"{chosen}: cannot read spec")
        sys.exit(2)
    loaded = load_contract(chosen, allow_outside_refs=True, allow_outside_output=True)
    if loaded.contract is None:
        for diagnostic in loaded.diagnostics:
            _echo_error(str(diagnostic))
        _echo_error(f"mcpgen config: {chosen} is not valid (mcpgen validate {chosen})")
        sys.exit(1)
    contract = loaded.contract
    configured = project.output_for(chosen) if project else None
    package_dir = output_dir(chosen, contract.output, contract.package, configured)
    if not (package_dir / "__init__.py").is_file():
        _echo_warning(f"note: {package_dir} holds no built package yet; run mcpgen build {chosen}")
    label = name or contract.server.name
    interpreter = str(python.absolute()) if python is not None else None
    entry = server_entry(host, contract.package, package_dir, chosen.parent, interpreter)
    if not write:
        click.echo(json.dumps(wrap(host, label, entry), indent=2, ensure_ascii=False))
        return
    target = host_file or default_path(host)
    if target is None:
        raise click.UsageError("the json host has no usual file: give --path FILE")
    try:
        text, replaced = merge_entry(host, target, label, entry)
    except HostError as exc:
        _echo_error(f"mcpgen config: {exc}")
        sys.exit(2)
    _write_user_file(target, text, force=True)
    _echo(f"{'replaced' if replaced else 'added'} server '{label}' in {target}")


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
