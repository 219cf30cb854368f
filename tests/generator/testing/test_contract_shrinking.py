"""`mcpgen test` shrinks boundary and negative findings (``mcpgen.testing.shrink``): the
in-process ``shrink_impl.Buggy`` fails only on a boundary case that carries every optional
key; ``shrink_server.py`` (a stdio server that checks no argument type or bound) accepts
a negative case. Each finding reports only the keys it needs, with the simplest values,
the same seed gives the same report, and its ``reproduce`` line replays it."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from test_contract_testing import replays, report

from mcpgen.testing.checks import Finding
from mcpgen.testing.shrink import SHRINK_CALLS, TIMEOUT_SHRINK_CALLS, shrink_finding

ARGS = ("shrink.yaml", "--examples", "40", "--seed", "7")
SERVER = ("--", sys.executable, "shrink_server.py")


@pytest.fixture(scope="module")
def boundary() -> dict[str, Any]:
    code, document = report(*ARGS, "--impl", "shrink_impl:Buggy")
    assert code == 1
    return document


def test_a_boundary_finding_keeps_only_the_keys_it_needs(boundary: dict[str, Any]) -> None:
    [finding] = boundary["findings"]
    assert (finding["check"], finding["phase"]) == ("handler_crash", "boundary")
    # unshrunk it carried title, tags and copies too, and the example owner "example"
    assert finding["arguments"] == {"pages": 50, "owner": "000", "urgent": True}
    replays(finding)
    code, correct = report(*ARGS, "--impl", "shrink_impl:Correct")
    assert code == 0 and correct["findings"] == []
    # the phases make the same calls either way: the rest is the shrinking, within budget
    extra = boundary["tools"][0]["calls"] - correct["tools"][0]["calls"]
    assert 0 < extra <= SHRINK_CALLS


def test_the_same_seed_gives_the_same_shrunk_report(boundary: dict[str, Any]) -> None:
    assert report(*ARGS, "--impl", "shrink_impl:Buggy")[1] == boundary


def test_a_negative_finding_keeps_the_broken_place_and_simplifies_the_rest() -> None:
    code, document = report(*ARGS, *SERVER)
    assert code == 1
    [finding] = document["findings"]
    assert (finding["check"], finding["phase"]) == ("invalid_accepted", "negative")
    assert "'pages' of type string" in finding["message"]
    # the wrong key as generated, the other required key at its simplest, no optional key
    assert finding["arguments"] == {"pages": "not-a-valid-value", "owner": "000"}
    replays(finding)
    assert report(*ARGS, *SERVER)[1] == document


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 1000},
        "text": {"type": "string"},
        "items": {"type": "array", "items": {"type": "integer"}},
        "flag": {"type": "boolean"},
    },
    "required": ["n"],
    "additionalProperties": False,
}


class Counting:
    """A stand-in tool: fails (under ``check``) whenever ``fails`` says so, counting calls."""

    def __init__(self, fails: Any, check: str = "handler_crash") -> None:
        self.fails, self.check, self.calls = fails, check, 0

    def __call__(self, arguments: Any) -> Finding | None:
        self.calls += 1
        if self.fails(arguments):
            return Finding("t", self.check, arguments, "failed")
        return None


def shrink(finding: Finding, tool: Counting) -> Finding:
    return shrink_finding(finding, tool, SCHEMA, lambda: tool.calls)


def test_numbers_strings_and_arrays_shrink_toward_their_simplest_failing_form() -> None:
    start = {"n": 1000, "text": "one two three", "items": [5, 900, 7], "flag": True}
    tool = Counting(lambda a: a["n"] > 300 and any(i > 100 for i in a.get("items", [])))
    found = shrink(Finding("t", "handler_crash", start, "", phase="boundary"), tool)
    assert found.arguments == {"n": 301, "items": [101]}
    assert found.phase == "boundary" and tool.calls <= SHRINK_CALLS


def test_a_step_that_fails_another_check_is_not_kept() -> None:
    start = {"n": 7, "flag": True}
    tool = Counting(lambda a: True, check="server_error")
    found = shrink(Finding("t", "handler_crash", start, ""), tool)
    assert found.arguments == start


def test_the_call_budget_holds_even_when_every_step_is_kept() -> None:
    start = {"n": 1000, "items": list(range(60)), "text": "x" * 500}
    always = Counting(lambda a: True)
    found = shrink(Finding("t", "handler_crash", start, ""), always)
    assert found.arguments == {"n": 0} and always.calls <= SHRINK_CALLS
    stubborn = Counting(lambda a: a == start)  # nothing simpler fails: every step is a call
    shrink(Finding("t", "handler_crash", start, ""), stubborn)
    assert stubborn.calls == SHRINK_CALLS
    slow = Counting(lambda a: a == start)
    shrink(Finding("t", "timeout", start, ""), slow)
    assert slow.calls == TIMEOUT_SHRINK_CALLS


def test_a_negative_case_stays_broken_in_its_one_place() -> None:
    start = {"n": 1001, "text": "abc", "flag": True}
    tool = Counting(lambda a: True, check="invalid_accepted")
    broken = Finding("t", "invalid_accepted", start, "", breaks="'n' above its maximum")
    found = shrink(broken, tool)
    assert found.arguments == {"n": 1001} and found.breaks == broken.breaks
    missing = Finding("t", "invalid_accepted", {"text": "abc"}, "", breaks="required 'n' left out")
    assert shrink(missing, tool).arguments == {}
