"""The three phases of ``mcpgen test`` against one target, tool by tool.

1. **boundary**: deterministic valid arguments at the edges (``examples.boundary_arguments``);
2. **random**: Hypothesis draws valid arguments (``strategies.valid_values``) and shrinks
   a failing call to the smallest arguments that still fail the same check;
3. **negative**: arguments wrong in one place (``negative.invalid_arguments``).

One finding per tool and check: a random-phase finding (shrunk) wins over a boundary one
of the same check. A boundary or negative finding that stands is then shrunk greedily
(``shrink``: at most ``shrink.SHRINK_CALLS`` more calls each). Each phase calls at most
``examples`` times (a tool whose answers are compared, ``ToolUnderTest.repeats``, twice
per successful valid case). The same seed gives the same calls and the same report: each
tool's Hypothesis run is seeded from the seed and the tool's name, with no database.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis.errors import HypothesisException

from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

from .checks import (
    CHECKS,
    Finding,
    ToolUnderTest,
    check_invalid,
    check_valid,
    difference,
    looks_like_an_error,
    structured,
)
from .examples import ExampleError, boundary_arguments
from .negative import invalid_arguments
from .shrink import shrink_finding
from .strategies import valid_values
from .targets import UNSET, Reply, Target

__all__ = ["Options", "Report", "RunStopped", "ToolOutcome", "replay", "run_tools"]

# Hypothesis tells bugs apart by exception type: one class per check keeps a shrink
# of one check from sliding into another.
_FOUND: dict[str, type[Exception]] = {
    check: type(f"Found_{check}", (Exception,), {}) for check in CHECKS
}


@dataclass
class Options:
    examples: int = 100
    seed: int = 0
    allow_destructive: bool = False
    timeout: float = 30.0
    skip_checks: frozenset[str] = frozenset()  # `--skip-check`: findings of these are dropped
    budget: float | None = None  # `--budget`: seconds for the whole run (see run_tools)
    stop: StopRequest = field(default_factory=lambda: StopRequest())


class StopRequest:
    """How a signal handler ends a run (``mcpgen test`` on SIGINT, SIGTERM, SIGHUP).

    ``request`` records why; a call under way is interrupted at once (``RunStopped``
    raised from the handler goes up through the blocked wait, which lets it through),
    and otherwise the next call raises it. Raising only there keeps it out of
    Hypothesis's own machinery, where an exception from a handler could land anywhere."""

    def __init__(self) -> None:
        self.reason = ""
        self.in_call = False

    def request(self, reason: str) -> None:
        self.reason = reason
        if self.in_call:
            raise RunStopped(reason)


class RunStopped(BaseException):
    """The run must end now (a signal, see ``StopRequest``): raised at a call, it goes
    through Hypothesis (which catches only ``Exception``) and the target's call, and the
    report is written with what was found so far, marked incomplete."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _ShareSpent(BaseException):
    """This tool's share of ``--budget`` is spent: on to the next tool."""


@dataclass
class ToolOutcome:
    name: str
    calls: int = 0
    result: str = "passed"  # passed | failed | skipped
    reason: str = ""
    seconds: float = 0.0  # wall time spent on the tool
    # how the calls with valid arguments were answered (`Tally`)
    tally: Tally = field(default_factory=lambda: Tally())


@dataclass
class Tally:
    """The answers to valid arguments, by kind. A run where none succeeded tested only the
    server's refusals (a time server refusing every generated zone, a git server every
    generated path): it passes, and says so."""

    succeeded: int = 0  # a result, isError false, not reading as an error
    refused: int = 0  # isError true, or a JSON-RPC error
    error_text: int = 0  # isError false, but its only text reads as an error report

    def count(self, reply: Reply) -> None:
        result = reply.result
        if reply.error is not None or (isinstance(result, dict) and result.get("isError") is True):
            self.refused += 1
        elif isinstance(result, dict):
            if looks_like_an_error(result) is None:
                self.succeeded += 1
            else:
                self.error_text += 1

    @property
    def none_succeeded(self) -> bool:
        return self.succeeded == 0 and self.refused + self.error_text > 0


@dataclass
class Report:
    seed: int
    tools: list[ToolOutcome] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # each contract tool's spec line
    incomplete: str = ""  # why the run tested less than it meant to (a signal, --budget)


class _ToolRun:
    """One tool's calls against the target, counted."""

    def __init__(
        self, tool: ToolUnderTest, target: Target, options: Options, until: float | None = None
    ) -> None:
        self.tool = tool
        self.target = target
        self.options = options
        self.calls = 0
        self.until = until  # time.monotonic() past which no call starts (--budget)
        self.tally = Tally()

    def call(self, arguments: Any) -> Reply:
        stop = self.options.stop
        if stop.reason:
            raise RunStopped(stop.reason)
        # the first call of a tool goes ahead: each tool is called at least once
        if self.calls and self.until is not None and time.monotonic() >= self.until:
            raise _ShareSpent()
        self.calls += 1
        limit = self.tool.timeout if self.tool.timeout is not None else self.options.timeout
        # a tool's own timeout is the server's to enforce: give its answer a moment
        wait = limit + 5.0 if self.tool.timeout is not None and self.tool.in_process else limit
        stop.in_call = True
        try:
            reply = self.target.call(self.tool.name, arguments, wait, task=self.tool.needs_task)
        finally:
            stop.in_call = False
        if reply.timed_out or reply.gone is not None:
            self.target.restart()  # a hung handler or a dead server must not sink later calls
        return reply

    def valid(self, arguments: Any) -> Finding | None:
        return self.kept(self._valid(arguments))

    def _valid(self, arguments: Any) -> Finding | None:
        reply = self.call(arguments)
        self.tally.count(reply)
        finding = check_valid(self.tool, arguments, reply)
        if (
            finding is None
            and self.tool.repeats
            and "not_idempotent" not in self.options.skip_checks
            and structured(reply) is not UNSET
        ):
            again = self.call(arguments)
            finding = check_valid(self.tool, arguments, again)
            second = structured(again)
            if finding is None and second is not UNSET and second != structured(reply):
                finding = Finding(
                    self.tool.name,
                    "not_idempotent",
                    arguments,
                    "the same arguments gave a different result the second time "
                    f"(the tool has idempotentHint): {difference(reply, again)}",
                )
        return finding

    def kept(self, finding: Finding | None) -> Finding | None:
        """``finding``, unless its check is one ``--skip-check`` turned off."""
        return None if finding is None or finding.check in self.options.skip_checks else finding

    def invalid(self, arguments: Any, breaks: str) -> Finding | None:
        finding = self.kept(check_invalid(self.tool, arguments, breaks, self.call(arguments)))
        if finding is not None:
            finding.breaks = breaks
        return finding

    def shrunk(self, finding: Finding) -> Finding:
        """A boundary or negative finding shrunk (``shrink``); a random one is already."""
        if finding.phase not in ("boundary", "negative"):
            return finding
        breaks = finding.breaks

        def attempt(arguments: Any) -> Finding | None:
            return self.invalid(arguments, breaks) if breaks else self.valid(arguments)

        cost = 2 if self.tool.repeats and not breaks else 1
        schema = self.tool.descriptor["inputSchema"]
        return shrink_finding(finding, attempt, schema, lambda: self.calls, cost)


def run_tools(
    tools: Sequence[ToolUnderTest],
    target: Target,
    options: Options,
    progress: Callable[[ToolOutcome], None] | None = None,
) -> Report:
    """Test every tool of ``tools`` (the caller has left out those the server lacks).

    With ``options.budget`` each tool gets an equal share of what is left when it starts
    (so a slow tool cannot starve the ones after it); a call that has started finishes.
    ``RunStopped`` (a signal) ends the run: the tool under test keeps what it found, the
    rest are skipped, and the report says why it is incomplete."""
    report = Report(options.seed)
    end = None if options.budget is None else time.monotonic() + options.budget
    for index, tool in enumerate(tools):
        if options.stop.reason:  # a signal ended the run: the tools after it go untested
            report.tools.append(ToolOutcome(tool.name, 0, "skipped", options.stop.reason))
            continue
        now = time.monotonic()
        until = None if end is None else now + (end - now) / (len(tools) - index)
        outcome, findings = _test_tool(tool, target, options, until, report)
        report.tools.append(outcome)
        report.findings.extend(findings)
        if progress is not None:
            progress(outcome)
    return report


def _test_tool(
    tool: ToolUnderTest, target: Target, options: Options, until: float | None, report: Report
) -> tuple[ToolOutcome, list[Finding]]:
    started = time.monotonic()
    outcome, findings = _tool_outcome(tool, target, options, until, report)
    outcome.seconds = time.monotonic() - started
    return outcome, findings


def _tool_outcome(
    tool: ToolUnderTest, target: Target, options: Options, until: float | None, report: Report
) -> tuple[ToolOutcome, list[Finding]]:
    outcome = ToolOutcome(tool.name)
    if tool.destructive and not options.allow_destructive:
        outcome.result, outcome.reason = "skipped", "destructive (pass --allow-destructive)"
        return outcome, []
    run = _ToolRun(tool, target, options, until)
    by_check: dict[str, Finding] = {}
    problems: list[str] = []
    try:
        _phases(run, options, by_check, problems)
    except _ShareSpent:
        problems.append(f"cut short: its share of --budget {options.budget:g} s was spent")
        report.incomplete = report.incomplete or f"--budget {options.budget:g} s ran out"
    except RunStopped as stop:
        problems.append(f"cut short: {stop.reason}")
        report.incomplete = stop.reason
    outcome.calls, outcome.tally = run.calls, run.tally
    if problems:  # kept in the report: a phase that could not run tested nothing
        outcome.reason = "; ".join(problems)
        if run.calls == 0:
            outcome.result = "skipped"
    findings = [by_check[check] for check in CHECKS if check in by_check]
    if findings:
        outcome.result = "failed"
    return outcome, findings


def _phases(
    run: _ToolRun, options: Options, by_check: dict[str, Finding], problems: list[str]
) -> None:
    """The three phases, then each finding that stands shrunk (unshrunk if the run is
    cut short meanwhile: the caller catches that)."""
    schema = run.tool.descriptor["inputSchema"]
    for phase in ("boundary", "random", "negative"):
        try:
            _phase(phase, run, schema, options, by_check)
        except (ExampleError, SchemaError) as exc:
            problems.append(f"{phase} phase: {exc}")
    for check, finding in by_check.items():
        by_check[check] = run.shrunk(finding)


def _phase(
    phase: str,
    run: _ToolRun,
    schema: dict[str, Any],
    options: Options,
    by_check: dict[str, Finding],
) -> None:
    if options.examples <= 0:
        return
    if phase == "boundary":
        for arguments in boundary_arguments(schema, options.examples):
            _keep(by_check, run.valid(arguments), "boundary")
    elif phase == "random":
        for finding in _random_phase(run, schema, options):
            by_check[finding.check] = finding  # shrunk: better than a boundary one
    else:
        for case in invalid_arguments(schema, options.examples):
            _keep(by_check, run.invalid(case.arguments, case.breaks), "negative")


def _keep(by_check: dict[str, Finding], finding: Finding | None, phase: str) -> None:
    if finding is not None and finding.check not in by_check:
        finding.phase = phase
        by_check[finding.check] = finding


def _random_phase(run: _ToolRun, schema: dict[str, Any], options: Options) -> list[Finding]:
    """Hypothesis runs until no check it has not reported yet fails (one shrunk
    finding per run: report_multiple_bugs is off so the runs stay short)."""
    done: set[str] = set()
    strategy = valid_values(schema)
    seed = (options.seed + zlib.crc32(run.tool.name.encode("utf-8"))) % 2**32
    findings: list[Finding] = []
    for _ in CHECKS:
        last: list[Finding] = []

        def probe(arguments: Any) -> None:
            finding = run.valid(arguments)
            if finding is not None and finding.check not in done:
                last.append(finding)  # noqa: B023 - run within this iteration only
                raise _FOUND[finding.check](finding.message)

        test = settings(
            max_examples=options.examples,
            database=None,
            deadline=None,
            derandomize=False,
            suppress_health_check=list(HealthCheck),
            phases=(Phase.generate, Phase.shrink),
            report_multiple_bugs=False,
            print_blob=False,
            verbosity=Verbosity.quiet,
        )(hypothesis.seed(seed)(given(strategy)(probe)))
        try:
            test()
        except tuple(_FOUND.values()):
            pass
        except HypothesisException:
            if not last:
                return findings  # nothing drawable (Unsatisfiable): the boundary phase stands
        if not last:
            break
        finding = last[-1]  # Hypothesis replays the minimal failing example last
        finding.phase = "random"
        findings.append(finding)
        done.add(finding.check)
    return findings


def replay(tool: ToolUnderTest, target: Target, arguments: Any, options: Options) -> Report:
    """One call with ``arguments`` (``--replay``): checked as valid when the contract
    accepts them, else as invalid."""
    run = _ToolRun(tool, target, options)
    validate = compile_schema(tool.descriptor["inputSchema"])
    try:
        validate(arguments)
    except ValidationFailed as exc:
        finding = run.invalid(arguments, exc.describe())
        phase = "negative"
    else:
        finding = run.valid(arguments)
        phase = "replay"
    outcome = ToolOutcome(tool.name, run.calls, "failed" if finding else "passed", tally=run.tally)
    if finding is not None:
        finding.phase = phase
    return Report(options.seed, [outcome], [finding] if finding else [])
