"""``mcpgen diff`` (classify contract changes) and ``mcpgen import`` (write a spec
from a live server).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from mcpgen_runtime.contract.compare import Category

    from ..diff import DiffReport

from .common import (
    ALLOW_OUTSIDE_REFS,
    AUTH_TOKEN,
    FORMAT,
    HEADER,
    check_user_target,
    chosen_format,
    echo,
    echo_error,
    project_config,
    request_headers,
    setting,
    specs_or_config,
    with_token,
    write_user_file,
)


@click.command()
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
@FORMAT
@click.option(
    "--ignore", "ignored", multiple=True, metavar="RULE", help="Leave out a rule (repeat)."
)
@ALLOW_OUTSIDE_REFS
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
    from mcpgen_runtime.contract.compare import Category

    from ..diff import ALL_RULES

    config = project_config()
    category = category or (config.diff_category if config and config.diff_category else "behavior")
    fmt = chosen_format(output_format, config)
    refs = setting(allow_outside_refs, config, "allow_outside_refs")
    pairs: list[tuple[Path, ...]]
    if not specs:
        against = against or "HEAD"
        pairs = [(spec,) for spec in specs_or_config(specs, config)]
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
        report = _diff_report(pair, against, refs).ignoring(ignored)
        _echo_report(report, fmt, level)
        failed = failed or bool(report.failing(level))
    sys.exit(1 if failed else 0)


def _diff_report(pair: tuple[Path, ...], against: str | None, refs: bool) -> DiffReport:
    """The report of one comparison; exits 2 when a spec cannot be read or git fails."""
    import tempfile

    from ..diff import DiffFailed, diff_against_git, diff_files

    try:
        if against is not None:
            with tempfile.TemporaryDirectory(prefix="mcpgen-diff-") as scratch:
                return diff_against_git(pair[0], against, Path(scratch), allow_outside_refs=refs)
        return diff_files(pair[0], pair[1], allow_outside_refs=refs)
    except DiffFailed as exc:
        for diagnostic in exc.diagnostics:
            echo_error(str(diagnostic))
        echo_error(f"mcpgen diff: {exc}")
        sys.exit(2)


def _echo_report(report: DiffReport, fmt: str, level: Category) -> None:
    from ..diff import render_github, render_json, render_text
    from ..report import color_choice

    if fmt == "json":
        click.echo(render_json(report, level))  # escaped as JSON by render_json
    elif fmt == "github":
        for line in render_github(report, level):
            echo(line)
    else:
        for line in render_text(report, level, color=True):
            # escaped by render_text before its colour codes; click strips the colours
            # when stdout is not a terminal (or under NO_COLOR)
            click.echo(line, color=color_choice())


@click.command(
    "import",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="Import from the Streamable HTTP endpoint at URL instead.")
@HEADER
@AUTH_TOKEN
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("tools.yaml"),
    show_default=True,
    help="Where to write the spec ('-' for stdout).",
)
@click.option(
    "--package", help="Import name of the generated package (default: from the server name)."
)
@click.option(
    "--name", help="server.name in the spec (names the classes; default: serverInfo.name)."
)
@click.option(
    "--version",
    "server_version",
    help='server.version in the spec (default: serverInfo.version, or "0" when it is empty).',
)
@click.option(
    "--exact",
    is_flag=True,
    help="Keep every inputSchema as listed (input_schema:) instead of writing parameters.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds per request.")
def import_(
    command: tuple[str, ...],
    url: str | None,
    headers: tuple[str, ...],
    auth_token: str | None,
    output: Path,
    package: str | None,
    name: str | None,
    server_version: str | None,
    exact: bool,
    force: bool,
    timeout: float,
) -> None:
    """Start the MCP server `COMMAND…` over stdio (or call the one at `--url`), list its
    tools and write a spec that reproduces its contract:
    `mcpgen import -o tools.yaml -- uvx mcp-server-time`,
    `mcpgen import --url http://127.0.0.1:8000/mcp --header 'Authorization: Bearer T'`."""
    from ..importer import ImportFailed, import_server

    if bool(command) == (url is not None):
        raise click.UsageError("give one server: -- COMMAND… or --url URL")
    header_pairs = with_token(request_headers(headers, url), auth_token, url)

    to_stdout = str(output) == "-"
    if not to_stdout:
        check_user_target(output, force=force)  # before the server runs
    spec_dir = Path.cwd() if to_stdout else (output.parent if str(output.parent) else Path("."))
    try:
        spec = import_server(
            command,
            url=url,
            headers=dict(header_pairs),
            package=package,
            name=name,
            version=server_version,
            exact=exact,
            timeout=timeout,
            spec_dir=spec_dir,
        )
    except ImportFailed as exc:
        echo_error(f"mcpgen import: {exc}")
        sys.exit(1)
    if to_stdout:
        echo(spec.text, nl=False)  # a no-op on the emitter's output; never raw
        return
    write_user_file(output, spec.text, force=force)
    differing = len(spec.notes)
    detail = (
        f"; {differing} publish a slightly different form (see the comments)" if differing else ""
    )
    echo(f"wrote {output}: {spec.tools} tool(s), package {spec.package}{detail}")
    echo(f"next: mcpgen build {output}")
