"""The three phases of ``mcpgen test`` against one target, tool by tool.

1. **boundary**: deterministic valid arguments at the edges (``examples.boundary_arguments``);
2. **random**: Hypothesis draws valid arguments (``strategies.valid_values``) and shrinks
   a failing call to the smallest arguments that still fail the same check;
3. **negative**: arguments wrong in one place (``negative.invalid_arguments``).

One finding per tool and check: a random-phase finding (shrunk) wins over a boundary one
of the same check. A boundary or negative finding that stands is then shrunk greedily
(``shrink``: at most ``shrink.SHRINK_CALLS`` more calls each). Each phase calls at most ``examples`` times (idempotent tools call
twice per valid case). The same seed gives the same calls and the same report: each
tool's Hypothesis run is seeded from the seed and the tool's name, with no database.
"""

from __future__ import annotations

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
    same_answer,
)
from .examples import ExampleError, boundary_arguments
from .negative import invalid_arguments
from .shrink import shrink_finding
from .strategies import valid_values
from .targets import Reply, Target

__all__ = ["Options", "Report", "ToolOutcome", "replay", "run_tools"]

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


@dataclass
class ToolOutcome:
    name: str
    calls: int = 0
    result: str = "passed"  # passed | failed | skipped
    reason: str = ""


@dataclass
class Report:
    seed: int
    tools: list[ToolOutcome] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # each contract tool's spec line


class _ToolRun:
    """One tool's calls against the target, counted."""

    def __init__(self, tool: ToolUnderTest, target: Target, options: Options) -> None:
        self.tool = tool
        self.target = target
        self.options = options
        self.calls = 0

    def call(self, arguments: Any) -> Reply:
        self.calls += 1
        limit = self.tool.timeout if self.tool.timeout is not None else self.options.timeout
        # a tool's own timeout is the server's to enforce: give its answer a moment
        wait = limit + 5.0 if self.tool.timeout is not None and self.tool.in_process else limit
        reply = self.target.call(self.tool.name, arguments, wait, task=self.tool.needs_task)
        if reply.timed_out or reply.gone is not None:
            self.target.restart()  # a hung handler or a dead server must not sink later calls
        return reply

    def valid(self, arguments: Any) -> Finding | None:
        reply = self.call(arguments)
        finding = check_valid(self.tool, arguments, reply)
        if finding is None and self.tool.idempotent and reply.result is not None:
            again = self.call(arguments)
            finding = check_valid(self.tool, arguments, again)
            if finding is None and not same_answer(reply, again):
                finding = Finding(
                    self.tool.name,
                    "not_idempotent",
                    arguments,
                    "the same arguments gave a different result the second time "
                    f"(the tool has idempotentHint): {difference(reply, again)}",
                )
        return finding

    def invalid(self, arguments: Any, breaks: str) -> Finding | None:
        finding = check_invalid(self.tool, arguments, breaks, self.call(arguments))
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

        cost = 2 if self.tool.idempotent and not breaks else 1
        schema = self.tool.descriptor["inputSchema"]
        return shrink_finding(finding, attempt, schema, lambda: self.calls, cost)


def run_tools(
    tools: Sequence[ToolUnderTest],
    target: Target,
    options: Options,
    progress: Callable[[ToolOutcome], None] | None = None,
) -> Report:
    """Test every tool of ``tools`` (the caller has left out those the server lacks)."""
    report = Report(options.seed)
    for tool in tools:
        outcome, findings = _test_tool(tool, target, options)
        report.tools.append(outcome)
        report.findings.extend(findings)
        if progress is not None:
            progress(outcome)
    return report


def _test_tool(
    tool: ToolUnderTest, target: Target, options: Options
) -> tuple[ToolOutcome, list[Finding]]:
    outcome = ToolOutcome(tool.name)
    if tool.destructive and not options.allow_destructive:
        outcome.result, outcome.reason = "skipped", "destructive (pass --allow-destructive)"
        return outcome, []
    schema = tool.descriptor["inputSchema"]
    run = _ToolRun(tool, target, options)
    by_check: dict[str, Finding] = {}
    problems: list[str] = []
    for phase in ("boundary", "random", "negative"):
        try:
            _phase(phase, run, schema, options, by_check)
        except (ExampleError, SchemaError) as exc:
            problems.append(f"{phase} phase: {exc}")
    for check, finding in by_check.items():
        by_check[check] = run.shrunk(finding)
    outcome.calls = run.calls
    if problems:  # kept in the report: a phase that could not run tested nothing
        outcome.reason = "; ".join(problems)
        if run.calls == 0:
            outcome.result = "skipped"
    findings = [by_check[check] for check in CHECKS if check in by_check]
    if findings:
        outcome.result = "failed"
    return outcome, findings


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
    outcome = ToolOutcome(tool.name, run.calls, "failed" if finding else "passed")
    if finding is not None:
        finding.phase = phase
    return Report(options.seed, [outcome], [finding] if finding else [])
