"""One contract, one meaning: every construct of tests/fixtures/fidelity, four ways.

- exact round trips through the generated server and its typed client over stdio:
  integers stay integers (3 is not 3.0) and big ones exact, explicit null and
  absent stay apart, formats, nested and recursive objects, a shared enum, a
  union and a discriminated union;
- the server's validator and the client (validator, then model) accept and refuse
  the same results, and what both accept the model gives back unchanged;
- peers list and call every tool: the official Python SDK client at every
  handshake revision and at 2026-07-28, and the TypeScript SDK client (whose
  ``callTool`` checks ``structuredContent`` with Ajv against the listed schema);
- ``mypy --strict`` on the package, its implementation and
  tests/typing/check_fidelity.py, whose ``# type: ignore[...]`` lines must fail.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fixtures.http_npm_tools import npm_tools
from helpers import import_package, mypy_strict

from mcpgen.build import build_spec
from mcpgen.names import class_name

ROOT = Path(__file__).resolve().parents[2]
FIDELITY = ROOT / "fixtures" / "fidelity"
TS_CLIENT = ROOT / "fixtures" / "ts_sdk_client.mjs"

CONTACT = {
    "email": "noreply@example.com", "site": "https://example.com/a?b=c", "born": "2000-02-29",
    "seen": "2026-12-02T10:00:00.5+01:00", "wakes": "07:30:00Z",
    "id": "123e4567-e89b-12d3-a456-426614174000", "v4": "192.0.2.1", "v6": "2001:db8::1",
}  # fmt: skip
EPIC = {"number": 1, "title": "Epic", "parent": None}
ISSUE = {
    "number": 2,
    "title": "Child",
    "priority": "high",
    "milestone": None,
    "labels": ["a"],
    "parent": EPIC,
}
SHAPES = [{"kind": "circle", "radius": 1}, {"kind": "square", "side": 2.5}]
# (tool, arguments, the structuredContent expected back)
CALLS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "numbers",
        n := {"count": 3, "ratio": 3, "scores": [1, 2.5, 9007199254740993], "big": 2**64 + 1},
        n,
    ),
    ("numbers", n := {"count": 0, "ratio": 0.1, "scores": []}, n),
    ("nulls", n := {"id": 1, "milestone": None}, n),
    ("nulls", n := {"id": 2, "note": "n"}, n),
    ("contact", {"contact": CONTACT}, CONTACT),
    ("contact", {"contact": {"email": "a@example.com"}}, {"email": "a@example.com"}),
    ("shapes", {"shapes": SHAPES}, {"shapes": SHAPES, "area": math.pi + 6.25}),
    ("file_issue", n := {"issue": ISSUE, "ref": "ABC-12", "assignee": {"login": "ann"}}, n),
    (
        "file_issue",
        n := {"issue": EPIC, "ref": 7, "assignee": {"login": "bo", "team": {"name": "core"}}},
        n,
    ),
    ("prioritize", n := {"priority": "low", "by": {"ann": 2}}, n),
]
# Arguments the server refuses (a tool error naming the argument), whoever calls.
REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("numbers", {"count": 1.5, "ratio": 1, "scores": []}, "count"),
    ("numbers", {"count": 1, "ratio": "x", "scores": []}, "ratio"),
    ("contact", {"contact": {"email": "not an address"}}, "contact.email"),
    ("contact", {"contact": {"email": "a@b.c", "born": "2027-02-29"}}, "contact.born"),
    ("contact", {"contact": {"email": "a@b.c", "site": "no scheme"}}, "contact.site"),
    ("contact", {"contact": {"email": "a@b.c", "id": "123"}}, "contact.id"),
    ("contact", {"contact": {"email": "a@b.c", "v4": "256.0.0.1"}}, "contact.v4"),
    ("contact", {"contact": {"email": "a@b.c", "v6": "1::2::3"}}, "contact.v6"),
    ("contact", {"contact": {"email": "a@b.c", "seen": "yesterday"}}, "contact.seen"),
    ("shapes", {"shapes": [{"kind": "triangle", "side": 1}]}, "shapes[0]"),
    ("shapes", {"shapes": [{"kind": "circle", "radius": 0}]}, "shapes[0]"),
    (
        "file_issue",
        {"issue": {"number": 1, "title": "t", "priority": "urgent"}, "assignee": {"login": "a"}},
        "issue.priority",
    ),
    ("file_issue", {"issue": EPIC, "ref": "abc", "assignee": {"login": "a"}}, "ref"),
    ("prioritize", {"priority": "low", "by": {"ann": "two"}}, "by.ann"),
]


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, types included: 3 and 3.0 differ, True and 1 differ."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def canonical(value: Any) -> Any:
    """``value`` with integral floats as ints: JSON Schema's data model, where 3.0 is
    the integer 3 (a model of an integer field may hand it back as 3)."""
    if isinstance(value, float) and value.is_integer() and value != 0:
        return int(value)
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    return value


def close_enough(got: dict[str, Any], want: dict[str, Any]) -> bool:
    if "area" in want:  # computed by the handler
        return math.isclose(got["area"], want["area"]) and same(
            {**got, "area": 0}, {**want, "area": 0}
        )
    return same(got, want)


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("fidelity") / "gen"
    result = build_spec(FIDELITY / "tools.yaml", output=where / "fidelity_mcp")
    assert result.ok, [str(d) for d in result.diagnostics]
    return where


@pytest.fixture(scope="module")
def package(gen: Path) -> Iterator[Any]:
    with import_package(gen, "fidelity_mcp") as module:
        yield module


def server_env(gen: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(gen), str(FIDELITY)])}


@pytest.fixture(scope="module")
def client(gen: Path, package: Any) -> Iterator[Any]:
    command = [sys.executable, "-m", "fidelity_mcp"]
    with package.FidelityClient.stdio(
        command, env=server_env(gen), cwd=FIDELITY, verify="strict"
    ) as connected:
        yield connected


# ----------------------------------------------------------------- round trips


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"), CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)]
)
def test_values_round_trip_exactly(
    client: Any, tool: str, arguments: dict[str, Any], expected: dict[str, Any]
) -> None:
    model = getattr(client, tool)(**arguments)
    # what the typed client returns, dumped back to JSON, is what was sent and echoed
    assert close_enough(model.model_dump(mode="json", by_alias=True), expected)


def test_a_single_label_domain_is_an_email_address(client: Any) -> None:
    """RFC 5321 allows ``noreply@localhost``: the server sends it and the typed client
    takes it (before, the client's EmailStr model raised on its own server's result).
    Ajv's ``email`` format is stricter (it wants a dot in the domain), so the peer
    tests use another address."""
    assert client.contact(contact={"email": "noreply@localhost"}).email == "noreply@localhost"


def test_integers_stay_integers_in_the_models(client: Any) -> None:
    out = client.numbers(count=3, ratio=3, scores=[1, 2.5], big=9007199254740993)
    assert type(out.ratio) is int and out.ratio == 3
    assert [type(s) for s in out.scores] == [int, float]
    assert out.big == 9007199254740993


def test_null_and_absent_stay_apart_in_the_models(client: Any, package: Any) -> None:
    from pydantic import MISSING

    sent_null = client.nulls(id=1, milestone=None)
    left_out = client.nulls(id=1)
    assert sent_null.milestone is None and sent_null.model_dump() == {"id": 1, "milestone": None}
    assert left_out.milestone is MISSING and left_out.model_dump() == {"id": 1}
    with pytest.raises(ValueError):  # optional, not nullable: None is no value of it
        package.models.NullsOutput.model_validate({"id": 1, "note": None})


def test_discriminated_union_picks_its_branch(client: Any, package: Any) -> None:
    out = client.shapes(shapes=SHAPES)
    assert [type(s).__name__ for s in out.shapes] == ["Circle", "Square"]
    with pytest.raises(ValueError, match="kind"):
        package.models.ShapesOutput.model_validate({"shapes": [{"kind": "hexagon"}], "area": 1})


@pytest.mark.parametrize(
    ("tool", "arguments", "where"), REFUSED, ids=[f"{c[0]}-{c[2]}" for c in REFUSED]
)
def test_the_server_refuses_what_the_schema_refuses(
    client: Any, package: Any, tool: str, arguments: dict[str, Any], where: str
) -> None:
    with pytest.raises(package.ToolError) as caught:
        getattr(client, tool)(**arguments)
    assert where in str(caught.value)


# ------------------------------------------------- server and client agree


def result_cases() -> list[tuple[str, Any, bool]]:
    """(tool, structured result, valid?) for every tool with an output schema."""
    cases = [(tool, expected, True) for tool, _, expected in CALLS]
    cases += [
        ("numbers", {"count": 3.0, "ratio": 1e300, "scores": [-0.0]}, True),
        ("numbers", {"count": 2**80 + 1, "ratio": -(2**80) - 1, "scores": [2**70 + 1]}, True),
        ("numbers", {"count": True, "ratio": 1, "scores": []}, False),
        ("numbers", {"count": "3", "ratio": 1, "scores": []}, False),
        ("numbers", {"count": 1, "ratio": 1, "scores": [None]}, False),
        ("numbers", {"count": 1, "ratio": 1}, False),
        ("nulls", {"id": 1, "note": None}, False),
        ("nulls", {"id": 1, "extra": {"any": ["thing"]}}, True),
        ("contact", {"email": "a@b.c", "born": "2000-13-01"}, False),
        ("contact", {"email": "a@b.c", "extra": 1}, False),
        ("contact", {"email": "a@b.c", "wakes": "25:00:00Z"}, False),
        ("contact", {"email": "x"}, False),
        ("shapes", {"shapes": [{"kind": "circle", "radius": 1, "side": 2}], "area": 1}, False),
        ("shapes", {"shapes": [{"kind": "square", "radius": 1}], "area": 1}, False),
        ("shapes", {"shapes": [{"kind": "square", "side": 1}], "area": 1}, True),
        ("file_issue", {"issue": {**EPIC, "parent": {"number": 0, "title": "t"}}}, False),
        ("file_issue", {"issue": {**EPIC, "parent": {**EPIC, "parent": EPIC}}}, True),
        ("file_issue", {"issue": EPIC, "ref": 0}, False),
        ("file_issue", {"issue": EPIC, "ref": "AB-1\n"}, False),
        ("file_issue", {"issue": EPIC, "ref": "AB-١٢"}, False),
        ("file_issue", {"issue": {**EPIC, "title": ""}}, False),
        ("file_issue", {"issue": EPIC, "assignee": {"team": {"name": "x"}}}, False),
        ("prioritize", {"priority": "LOW"}, False),
        ("prioritize", {"priority": "low", "by": {}}, True),
        ("prioritize", {"priority": "low", "by": {"a": 1.5}}, False),
    ]
    return cases


def test_server_and_client_accept_the_same_results(package: Any) -> None:
    """The server's check of a structured result and the typed client's (the same
    validator, then the model) agree value by value; what both accept the model
    gives back as it came."""
    from mcpgen_runtime import ResultConverter
    from mcpgen_runtime._errors import ResultMismatch
    from mcpgen_runtime.schema.validator import ValidationFailed, compile_schema

    published = {tool["name"]: tool for tool in package.contract.TOOLS}
    converter = ResultConverter(package.contract.TOOLS)
    disagreements = []
    for tool, value, valid in result_cases():
        validate = compile_schema(published[tool]["outputSchema"])
        try:
            validate(value)
            server_accepts = True
        except ValidationFailed:
            server_accepts = False
        model = getattr(package.models, f"{class_name(tool)}Output")
        try:
            built = converter.structured(tool, {"structuredContent": value}, model.model_validate)
            client_accepts = True
        except ResultMismatch:
            client_accepts = False
        if not (server_accepts is client_accepts is valid):
            disagreements.append((tool, value, valid, server_accepts, client_accepts))
        elif valid and tool != "shapes":
            dumped = built.model_dump(mode="json", by_alias=True)
            if not same(canonical(dumped), canonical(value)):
                disagreements.append((tool, value, "dumped as", dumped))
    assert disagreements == []


# ----------------------------------------------------------------------- peers


def as_doubles(value: Any) -> Any:
    """``value`` as a JavaScript peer holds it: integers beyond 2**53 are doubles."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**53:
        return float(value)
    if isinstance(value, list):
        return [as_doubles(item) for item in value]
    if isinstance(value, dict):
        return {key: as_doubles(item) for key, item in value.items()}
    return value


def check_peer_results(results: list[dict[str, Any]], *, javascript: bool = False) -> None:
    """CallToolResults (JSON) of CALLS then REFUSED, whoever the client was (a
    JavaScript client cannot hold integers beyond 2**53 exactly: compared as doubles)."""
    assert len(results) == len(CALLS) + len(REFUSED)
    for (tool, _, expected), result in zip(CALLS, results, strict=False):
        if javascript:
            result, expected = as_doubles(result), as_doubles(expected)
        assert not result.get("isError"), (tool, result)
        structured = result.get("structuredContent")
        if structured is None:  # before 2025-06-18: the JSON text only
            structured = json.loads(result["content"][0]["text"])
        assert close_enough(structured, expected), (tool, structured)
    for (tool, _, where), result in zip(REFUSED, results[len(CALLS) :], strict=True):
        assert result.get("isError") is True, (tool, result)
        assert where in result["content"][0]["text"]


async def sdk_session(gen: Path, mode: str) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "fidelity_mcp"], env=server_env(gen), cwd=FIDELITY
    )
    async with Client(params, mode=mode, read_timeout_seconds=20) as client:
        listed = await client.list_tools()
        results = [
            (await client.call_tool(name, args)).model_dump(
                by_alias=True, exclude_none=True, mode="json"
            )
            for name, args, _ in [*CALLS, *REFUSED]
        ]
        return {
            "version": client.protocol_version,
            "results": results,
            "tools": [t.name for t in listed.tools],
        }


@pytest.mark.parametrize(
    "revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
)
def test_the_official_python_sdk_client(
    gen: Path, package: Any, revision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mcp = pytest.importorskip("mcp")
    if revision == "2026-07-28":
        mode = "auto"  # the SDK probes server/discover and stays on the new era
    else:  # the SDK has no option for an older handshake: its constant is patched
        mode = "legacy"
        monkeypatch.setattr(mcp.client.session, "LATEST_HANDSHAKE_VERSION", revision)
    seen = anyio.run(sdk_session, gen, mode)
    assert seen["version"] == revision
    assert seen["tools"] == [tool["name"] for tool in package.contract.TOOLS]
    check_peer_results(seen["results"])


def test_the_typescript_sdk_client(gen: Path, package: Any) -> None:
    tools = npm_tools("@modelcontextprotocol/sdk")
    plan = {
        "command": sys.executable,
        "args": ["-m", "fidelity_mcp"],
        "env": server_env(gen),
        "cwd": str(FIDELITY),
        "calls": [[name, args] for name, args, _ in [*CALLS, *REFUSED]],
    }
    done = subprocess.run(
        [tools.node, str(TS_CLIENT), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert [t["name"] for t in seen["tools"]] == [t["name"] for t in package.contract.TOOLS]
    errors = [call["error"] for call in seen["calls"] if "error" in call]
    assert errors == []  # Ajv accepted every structuredContent against the listed schema
    check_peer_results([call["result"] for call in seen["calls"]], javascript=True)


# ----------------------------------------------------------------------- types


def test_mypy_strict_on_package_implementation_and_expectations(gen: Path) -> None:
    done = mypy_strict(
        gen / "fidelity_mcp",
        FIDELITY / "fidelity_impl.py",
        ROOT / "typing" / "check_fidelity.py",
        cwd=gen,
        mypypath=[gen, FIDELITY],
    )
    assert done.returncode == 0, done.stdout + done.stderr
