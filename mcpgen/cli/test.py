"""``mcpgen test``: contract testing of an implementation or a live server (the work is
in ``mcpgen.testing``)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import click

from .common import (
    _FORMAT,
    _HEADER,
    _echo,
    _echo_error,
    _format,
    _headers,
    _project,
    _specs_or_config,
)


class _SplitAtDashes(click.Command):
    """Everything after the first ``--`` is the server's command line, untouched: so
    ``mcpgen test -- node server.js`` (no SPEC) cannot take ``node`` for the spec."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta["mcpgen.command"] = tuple(args[cut + 1 :])
            args = args[:cut]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- COMMAND…]"]


@click.command("test", cls=_SplitAtDashes)
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option(
    "--impl",
    metavar="MODULE:CLASS",
    help="Test this implementation in process (default: the spec's server.implementation).",
)
@click.option("--url", help="Test the Streamable HTTP endpoint at URL.")
@_HEADER
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Calls per tool and phase (0: drift only).",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed of the random phase (default: random, "
    "printed in the report); the same seed gives the same report.",
)
@click.option(
    "--tool", "tools", multiple=True, metavar="NAME", help="Test only this tool (repeat)."
)
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds a call may take when its tool sets no timeout.",
)
@click.option("--allow-destructive", is_flag=True, help="Also call tools with destructiveHint.")
@click.option(
    "--junit", type=click.Path(dir_okay=False, path_type=Path), help="Write a JUnit XML report."
)
@click.option(
    "--replay", metavar="JSON", help="Call --tool once with these arguments (a reproduce line)."
)
@_FORMAT
def test(
    spec: Path | None,
    impl: str | None,
    url: str | None,
    headers: tuple[str, ...],
    examples: int,
    seed: int | None,
    tools: tuple[str, ...],
    timeout: float,
    allow_destructive: bool,
    junit: Path | None,
    replay: str | None,
    output_format: str | None,
) -> None:
    """Check an implementation or a live server against the contract SPEC: generated
    arguments (boundary, random, invalid), each finding shrunk with a reproduce line.
    `mcpgen test tools.yaml --impl my_impl:Impl`, `mcpgen test tools.yaml -- node server.js`,
    `mcpgen test tools.yaml --url http://127.0.0.1:8000/mcp [--header 'K: V']`. Exit 0 no finding, 1 findings,
    2 usage or I/O (a missing spec, an unknown --tool, a server that does not start)."""
    from ..testing.runner import Options
    from ..testing.session import TargetChoice, UsageFailure, run_contract_test
    from ..testing.targets import UNSET

    command: tuple[str, ...] = click.get_current_context().meta.get("mcpgen.command", ())
    config = _project()
    fmt = _format(output_format, config)
    spec = spec if spec is not None else _specs_or_config((), config)[0]
    if sum(bool(x) for x in (impl, url, command)) > 1:
        raise click.UsageError("give one target: --impl, --url or -- COMMAND")
    header_pairs = _headers(headers, url)
    arguments: Any = UNSET
    if replay is not None:
        try:
            arguments = json.loads(replay)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--replay") from None
        if not isinstance(arguments, dict):
            raise click.BadParameter("tool arguments are a JSON object", param_hint="--replay")
    _hypothesis_home_in_a_temporary_folder()
    options = Options(
        examples=examples,
        seed=seed if seed is not None else random.randrange(2**31),
        allow_destructive=allow_destructive,
        timeout=timeout,
    )
    try:
        report = run_contract_test(
            spec,
            TargetChoice(impl=impl, url=url, headers=header_pairs, command=command),
            options,
            tools=tools,
            replay_arguments=arguments,
            progress=_progress if fmt == "text" and _tty() else None,
        )
    except UsageFailure as exc:
        _echo_error(f"mcpgen test: {exc}")
        sys.exit(2)
    _emit(report, fmt, spec, junit)
    sys.exit(1 if report.findings else 0)


def _hypothesis_home_in_a_temporary_folder() -> None:
    """Hypothesis keeps a cache (``.hypothesis/``) in the working folder; ``mcpgen test``
    writes nothing beside the user's files, so it goes to a folder removed at exit."""
    import atexit
    import shutil
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir

    home = tempfile.mkdtemp(prefix="mcpgen-test-hypothesis-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    set_hypothesis_home_dir(home)


def _tty() -> bool:
    return sys.stderr.isatty() and sys.stdout.isatty()


def _progress(outcome: Any) -> None:
    _echo(f"  tested {outcome.name}: {outcome.calls} calls, {outcome.result}", err=True)


def _emit(report: Any, fmt: str, spec: Path, junit: Path | None) -> None:
    from ..testing.output import render_github, render_json, render_junit, render_text

    if junit is not None:
        try:
            junit.write_bytes(render_junit(report, str(spec)))
        except OSError as exc:
            _echo_error(f"mcpgen test: cannot write {junit}: {exc.strerror}")
            sys.exit(2)
    if fmt == "json":
        click.echo(render_json(report))
    elif fmt == "github":
        for line in render_github(report, str(spec), report.lines):
            _echo(line)
    else:
        for line in render_text(report, str(spec)):
            _echo(line)
