"""``assert_contract``: one contract test of an implementation in a project's own tests.

    from mcpgen.testing import assert_contract

    def test_contract() -> None:
        assert_contract("tools.yaml", MyImplementation, examples=25, seed=0)

It runs ``mcpgen test`` in process and fails with the text report when there is a
finding. The seed is fixed by default (0) so that the test is repeatable.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .output import render_text
from .runner import Options, Report
from .session import TargetChoice, run_contract_test

__all__ = ["assert_contract"]


def assert_contract(
    spec: str | Path,
    impl: type | str,
    *,
    examples: int = 25,
    seed: int = 0,
    tools: Sequence[str] = (),
    allow_destructive: bool = False,
    timeout: float = 30.0,
) -> Report:
    """Test ``impl`` (a class or ``"module:Class"``) against ``spec``; raise AssertionError
    with the report on any finding, return the report otherwise. A usage problem (a
    missing spec, a stale package) raises ``UsageFailure``."""
    options = Options(
        examples=examples, seed=seed, allow_destructive=allow_destructive, timeout=timeout
    )
    report = run_contract_test(Path(spec), TargetChoice(impl=impl), options, tools=tools)
    if report.findings:
        raise AssertionError("\n".join(render_text(report, str(spec))))
    return report
