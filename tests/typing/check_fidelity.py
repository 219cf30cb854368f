"""Never run, only type-checked (tests/generator/render/test_type_fidelity.py runs mypy --strict on it).

How the fidelity contract types for its users: every line marked
``# type: ignore[...]`` MUST be an error (warn_unused_ignores makes a line that
stops failing an error itself).
"""

from __future__ import annotations

from fidelity_mcp import FidelityClient
from fidelity_mcp.client import UNSET
from fidelity_mcp.models import (
    Circle,
    Contact,
    FileIssueArgs,
    Issue,
    IssueDict,
    NullsOutput,
    NumbersOutput,
    Priority,
    ShapeDict,
    ShapesOutput,
)


def numbers(client: FidelityClient) -> None:
    out: NumbersOutput = client.numbers(count=3, ratio=3, scores=[1, 2.5])
    exact: int | float = out.ratio  # number is int | float: 3 stays 3
    client.numbers(count=3.5, ratio=1, scores=[])  # type: ignore[arg-type]
    client.numbers(count=1, ratio="1", scores=[])  # type: ignore[arg-type]
    print(exact)


def nulls(client: FidelityClient) -> None:
    client.nulls(1, milestone=None)  # an explicit null: the schema admits it
    client.nulls(1, milestone=UNSET)  # left out: not sent
    client.nulls(1, note=None)  # type: ignore[arg-type]
    out: NullsOutput = client.nulls(1)
    out.note.upper()  # type: ignore[union-attr]
    NullsOutput(id=1, note=None)  # type: ignore[arg-type]


def shared_types(client: FidelityClient) -> None:
    level: Priority = "high"
    client.prioritize(level, by={"ann": 1})
    client.prioritize("urgent")  # type: ignore[arg-type]
    client.prioritize("low", by={"ann": "one"})  # type: ignore[dict-item]
    issue: IssueDict = {"number": 1, "title": "t", "priority": "low", "parent": None}
    client.file_issue(issue, 7, assignee={"login": "ann"})
    client.file_issue(issue, "ABC-1", assignee={"login": "ann", "team": {"name": "x"}})
    client.file_issue(issue, 1.5, assignee={"login": "ann"})  # type: ignore[arg-type]
    client.file_issue({"number": 1}, assignee={"login": "a"})  # type: ignore[typeddict-item]
    client.file_issue(issue, assignee={"team": {"name": "x"}})  # type: ignore[typeddict-item]
    bad: IssueDict = {"number": 1, "title": "t", "priority": "urgent"}  # type: ignore[typeddict-item]
    args: FileIssueArgs = {"issue": issue, "assignee": {"login": "a"}}
    print(bad, args)


def unions(client: FidelityClient) -> None:
    shapes: list[ShapeDict] = [{"kind": "circle", "radius": 1}, {"kind": "square", "side": 2}]
    out: ShapesOutput = client.shapes(shapes)
    first = out.shapes[0]
    if isinstance(first, Circle):
        print(first.radius)
    client.shapes([{"kind": "triangle", "side": 1}])  # type: ignore[typeddict-item]
    print(first.radius)  # type: ignore[union-attr]


def models() -> None:
    contact = Contact(email="a@b.c", born="2000-02-29")  # formats are text
    contact.born.upper()  # type: ignore[union-attr]
    Issue(number=1, title="t", priority="urgent")  # type: ignore[arg-type]
    Issue(number=1, title="t", parent=Issue(number=2, title="u"), milestone=None)
