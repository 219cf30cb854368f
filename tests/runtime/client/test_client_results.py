"""The typed clients never leak a raw pydantic error: a result that does not fit the
contract raises ``ResultMismatch`` (a ``ProtocolError``) naming the tool and the field.

The generated clients (sync and async) talk over real pipes to a stub server
(tests/fixtures/client_result_stub.py) that lists the contract's own tools and
answers each call with a chosen result. A structured result is checked against
the contract's output schema with the runtime's validator (the rules the server
applies), then built into the ``…Output`` model; a ``returns:`` value is checked
against its declared JSON type.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from helpers import build_package, import_package

from mcpgen_runtime import ResultConverter
from mcpgen_runtime._errors import ProtocolError, ResultMismatch

STUB = Path(__file__).resolve().parents[2] / "fixtures" / "client_result_stub.py"

SPEC = """\
mcpgen: 1
package: results_mcp
server: {name: results, version: 0.1.0}
types:
  Issue:
    type: object
    properties:
      number: {type: integer}
      title: {type: string}
    required: [number, title]
tools:
  - name: get_issue
    parameters: [{name: number, type: integer}]
    output_schema: {$ref: "#/types/Issue"}
  - name: stats
    output_schema:
      type: object
      properties:
        rows:
          type: array
          items: {type: object, properties: {day: {type: string}}, required: [day]}
      required: [rows]
  - name: count
    returns: integer
"""

GOOD = {
    "get_issue": {
        "content": [{"type": "text", "text": '{"number": 1, "title": "t"}'}],
        "structuredContent": {"number": 1, "title": "t"},
    },
    "stats": {
        "content": [{"type": "text", "text": '{"rows": []}'}],
        "structuredContent": {"rows": []},
    },
    "count": {"content": [{"type": "text", "text": "3"}]},
}

# (tool, the result the server sends, the field path, words the message must hold)
BAD: list[tuple[str, dict[str, Any], tuple[str | int, ...], str]] = [
    (
        "get_issue",
        {"content": [], "structuredContent": {"number": 1}},
        (),
        "missing required property 'title'",
    ),
    (
        "get_issue",
        {"content": [], "structuredContent": {"number": "one", "title": "t"}},
        ("number",),
        "number: expected integer",
    ),
    (
        "stats",
        {"content": [], "structuredContent": {"rows": [{"day": "mon"}, {"day": 2}]}},
        ("rows", 1, "day"),
        "rows[1].day: expected string",
    ),
    (
        "get_issue",
        {"content": [{"type": "text", "text": "not json"}]},
        (),
        "not a JSON object",
    ),  # a revision without structuredContent: the text twin
    ("count", {"content": [{"type": "text", "text": "three"}]}, (), "not a JSON integer"),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    gen = build_package(SPEC, tmp_path_factory.mktemp("client_results"), "results_mcp")
    with import_package(gen, "results_mcp") as pkg:
        yield pkg


def _stub(package: ModuleType, tmp_path: Path, tool: str, result: dict[str, Any]) -> list[str]:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps({"tools": package.contract.TOOLS, "results": {**GOOD, tool: result}}),
        encoding="utf-8",
    )
    return [sys.executable, str(STUB), str(plan)]


def _check(
    err: Any,
    tool: str,
    path: tuple[str | int, ...],
    words: str,
    protocol_error: type[Exception] = ProtocolError,
) -> None:
    assert isinstance(err, protocol_error)
    assert err.tool == tool and err.path == path
    assert f"tool '{tool}'" in str(err) and words in str(err), str(err)
    assert err.reason == "result_mismatch"


def test_result_mismatch_is_exported(package: ModuleType) -> None:
    """From the generated package: the runtime's own class (one tree for all packages)."""
    assert "ResultMismatch" in package.__all__
    assert package.ResultMismatch is ResultMismatch
    assert issubclass(package.ResultMismatch, package.ProtocolError)


@pytest.mark.parametrize(
    ("tool", "result", "path", "words"),
    BAD,
    ids=[f"{t}-{'.'.join(map(str, p)) or w}" for t, _, p, w in BAD],
)
def test_sync_client_raises_result_mismatch(
    package: ModuleType,
    tmp_path: Path,
    tool: str,
    result: dict[str, Any],
    path: tuple[str | int, ...],
    words: str,
) -> None:
    with package.ResultsClient.stdio(_stub(package, tmp_path, tool, result)) as client:
        method = getattr(client, tool)
        with pytest.raises(package.ResultMismatch) as caught:
            method(1) if tool == "get_issue" else method()
        _check(caught.value, tool, path, words, package.ProtocolError)
        # the session is still usable
        assert client.count() == 3 if tool != "count" else client.get_issue(1).title == "t"


@pytest.mark.parametrize(
    ("tool", "result", "path", "words"),
    BAD,
    ids=[f"{t}-{'.'.join(map(str, p)) or w}" for t, _, p, w in BAD],
)
def test_async_client_raises_result_mismatch(
    package: ModuleType,
    tmp_path: Path,
    tool: str,
    result: dict[str, Any],
    path: tuple[str | int, ...],
    words: str,
) -> None:
    async def go() -> Any:
        async with package.AsyncResultsClient.stdio(
            _stub(package, tmp_path, tool, result)
        ) as client:
            method = getattr(client, tool)
            with pytest.raises(package.ResultMismatch) as caught:
                await (method(1) if tool == "get_issue" else method())
            if tool != "stats":  # the session is still usable
                assert (await client.stats()).rows == []
            else:
                assert await client.count() == 3
            return caught.value

    _check(anyio.run(go), tool, path, words, package.ProtocolError)


def test_an_older_server_is_said_unchecked_on_connect_and_misfits_raise_result_mismatch(
    package: ModuleType, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A 2024-11-05 server lists no output schemas: strict connect passed silently and
    the first result that did not fit was the first news (issue 12, memory 2025.8.4)."""
    plan = tmp_path / "plan.json"
    bad = {"content": [{"type": "text", "text": '{"number": 1}'}]}
    plan.write_text(
        json.dumps(
            {
                "tools": package.contract.TOOLS,
                "versions": ["2024-11-05"],
                "results": {**GOOD, "get_issue": bad},
            }
        ),
        encoding="utf-8",
    )
    with (
        caplog.at_level(logging.WARNING, logger="mcpgen.client"),
        package.ResultsClient.stdio(
            [sys.executable, str(STUB), str(plan)], verify="strict"
        ) as client,
    ):
        assert client.session.protocol_version == "2024-11-05"
        said = [r.getMessage() for r in caplog.records if "cannot be checked" in r.getMessage()]
        assert len(said) == 1 and "tool 'get_issue', tool 'stats'" in said[0], said
        with pytest.raises(package.ResultMismatch) as caught:
            client.get_issue(1)
        _check(
            caught.value,
            "get_issue",
            (),
            "missing required property 'title'",
            package.ProtocolError,
        )


def test_good_results_still_convert(package: ModuleType, tmp_path: Path) -> None:
    with package.ResultsClient.stdio(_stub(package, tmp_path, "count", GOOD["count"])) as client:
        assert client.get_issue(1) == package.models.Issue(number=1, title="t")
        assert client.count() == 3


def test_model_stricter_than_the_schema_is_a_result_mismatch() -> None:
    """Whatever the model refuses after the schema check passed is reported the same way,
    never as pydantic's ValidationError."""
    from pydantic import BaseModel, ConfigDict

    class Strict(BaseModel):
        model_config = ConfigDict(strict=True)
        when: int

    converter = ResultConverter(
        [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
    )
    with pytest.raises(ResultMismatch) as caught:
        converter.structured(
            "t", {"content": [], "structuredContent": {"when": "3"}}, Strict.model_validate
        )
    _check(caught.value, "t", ("when",), "when: ")
