"""``mcpgen test``: contract testing of an implementation or a live server (the work is
in ``mcpgen.testing``)."""

from __future__ import annotations

import contextlib
import json
import random
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..testing.check_names import CHECKS
from .common import (
    AUTH_TOKEN,
    FORMAT,
    HEADER,
    chosen_format,
    echo,
    echo_error,
    project_config,
    request_headers,
    specs_or_config,
    with_token,
)

if TYPE_CHECKING:
    from ..testing.session import TargetChoice

# `--skip-check` choices: every check but drift (a listing is either the contract's or not)
SKIPPABLE_CHECKS = tuple(check for check in CHECKS if check != "drift")


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
@HEADER
@AUTH_TOKEN
@click.option(
    "--auth-token-without-scopes",
    envvar="MCPGEN_AUTH_TOKEN_WITHOUT_SCOPES",
    metavar="TOKEN",
    help="With --url: a token the server accepts that lacks the scoped tools' scopes; "
    "the unauthorized_accepted check expects 403 insufficient_scope for it "
    "(default: $MCPGEN_AUTH_TOKEN_WITHOUT_SCOPES).",
)
@click.option(
    "--auth-token-invalid",
    "invalid_tokens",
    multiple=True,
    metavar="TOKEN",
    help="With --url: a token the server must refuse (expired, for another audience, "
    "signed by another key; repeat); the unauthorized_accepted check expects 401 "
    'error="invalid_token" for it.',
)
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
    "--budget",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Time for the whole run, shared evenly among the tools; what is found in it is "
    "reported, marked incomplete if a tool was cut short.",
)
@click.option(
    "--skip-check",
    "skip_checks",
    multiple=True,
    type=click.Choice(SKIPPABLE_CHECKS),
    help="Report no finding of this check (repeat); e.g. error_as_success for a server "
    "whose successful answers legitimately start with 'Error:'.",
)
@click.option(
    "--junit", type=click.Path(dir_okay=False, path_type=Path), help="Write a JUnit XML report."
)
@click.option(
    "--replay", metavar="JSON", help="Call --tool once with these arguments (a reproduce line)."
)
@FORMAT
def test(
    spec: Path | None,
    impl: str | None,
    url: str | None,
    headers: tuple[str, ...],
    auth_token: str | None,
    auth_token_without_scopes: str | None,
    invalid_tokens: tuple[str, ...],
    examples: int,
    seed: int | None,
    tools: tuple[str, ...],
    timeout: float,
    allow_destructive: bool,
    budget: float | None,
    skip_checks: tuple[str, ...],
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
    from ..testing.session import UsageFailure, run_contract_test
    from ..testing.targets import UNSET

    command: tuple[str, ...] = click.get_current_context().meta.get("mcpgen.command", ())
    config = project_config()
    fmt = chosen_format(output_format, config)
    spec = spec if spec is not None else specs_or_config((), config)[0]
    choice = _target_choice(
        impl, url, headers, command, auth_token, auth_token_without_scopes, invalid_tokens
    )
    arguments: Any = UNSET if replay is None else _replay_arguments(replay)
    _hypothesis_home_in_a_temporary_folder()
    options = Options(
        examples=examples,
        seed=seed if seed is not None else random.randrange(2**31),
        allow_destructive=allow_destructive,
        timeout=timeout,
        skip_checks=frozenset(skip_checks),
        budget=budget,
    )
    try:
        with _stopped_by_signals(options.stop) as stopped_by:
            report = run_contract_test(
                spec,
                choice,
                options,
                tools=tools,
                replay_arguments=arguments,
                progress=_progress if sys.stderr.isatty() else None,
            )
    except UsageFailure as exc:
        echo_error(f"mcpgen test: {exc}")
        sys.exit(2)
    _emit(report, fmt, spec, junit)
    _exit(report, stopped_by)


def _target_choice(
    impl: str | None,
    url: str | None,
    headers: tuple[str, ...],
    command: tuple[str, ...],
    token: str | None,
    token_without_scopes: str | None,
    invalid_tokens: tuple[str, ...],
) -> TargetChoice:
    """The target the options name; ``token_without_scopes`` and ``invalid_tokens``:
    the tokens of ``unauthorized_accepted``."""
    from ..testing.session import TargetChoice

    if sum(bool(x) for x in (impl, url, command)) > 1:
        raise click.UsageError("give one target: --impl, --url or -- COMMAND")
    if (token_without_scopes is not None or invalid_tokens) and url is None:
        raise click.UsageError("--auth-token-without-scopes and --auth-token-invalid need --url")
    return TargetChoice(
        impl=impl,
        url=url,
        headers=with_token(request_headers(headers, url), token, url),
        command=command,
        token_without_scopes=token_without_scopes,
        invalid_tokens=invalid_tokens,
    )


def _exit(report: Any, stopped_by: list[int]) -> None:
    if report.incomplete:
        echo_error(f"mcpgen test: incomplete: {report.incomplete}")
    if stopped_by:  # the shell's convention for a process ended by a signal
        sys.exit(128 + stopped_by[0])
    sys.exit(1 if report.findings else 0)


@contextlib.contextmanager
def _stopped_by_signals(stop: Any) -> Iterator[list[int]]:
    """SIGINT, SIGTERM and SIGHUP end the run (``runner.StopRequest``) with the report
    of what was found so far, marked incomplete, and the server under test stopped: the
    target closes on the way out, ending the server's whole process group. A second
    signal is not caught. Yields the signal that stopped the run, if one did."""
    caught: list[int] = []
    wanted = [
        signal.SIGINT,
        signal.SIGTERM,
        *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []),
    ]

    def on_signal(signum: int, frame: Any) -> None:
        for number in wanted:
            signal.signal(number, signal.SIG_DFL)
        caught.append(signum)
        stop.request(f"stopped by {signal.Signals(signum).name}")

    if threading.current_thread() is not threading.main_thread():
        yield caught  # signals reach the main thread only: nothing to install here
        return
    previous = {number: signal.signal(number, on_signal) for number in wanted}
    try:
        yield caught
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _replay_arguments(replay: str) -> dict[str, Any]:
    try:
        arguments = json.loads(replay)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--replay") from None
    if not isinstance(arguments, dict):
        raise click.BadParameter("tool arguments are a JSON object", param_hint="--replay")
    return arguments


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


def _progress(outcome: Any) -> None:
    echo(f"  tested {outcome.name}: {outcome.calls} calls, {outcome.result}", err=True)


def _emit(report: Any, fmt: str, spec: Path, junit: Path | None) -> None:
    from ..testing.output import render_github, render_json, render_junit, render_text

    if junit is not None:
        try:
            junit.write_bytes(render_junit(report, str(spec)))
        except OSError as exc:
            echo_error(f"mcpgen test: cannot write {junit}: {exc.strerror}")
            sys.exit(2)
    if fmt == "json":
        click.echo(render_json(report))
    elif fmt == "github":
        for line in render_github(report, str(spec), report.lines):
            echo(line)
    else:
        for line in render_text(report, str(spec)):
            echo(line)
