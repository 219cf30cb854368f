"""Values cross the wire as they are: a real generated server over stdio, its typed client.

The contract is tests/fixtures/wire/tools.yaml. Pinned here:
- explicit null versus absent: ``milestone=None`` reaches a named handler as a
  present ``None``, a left-out argument stays absent (before: ``None`` was not sent);
- numbers stay exact both ways: 3 stays 3 (not 3.0), 9007199254740993 stays exact;
  a non-finite number (NaN, 1e400) is no JSON number and is refused as an argument;
- formats are asserted on arguments (before: ``due_on: "next week"`` was accepted);
- coercion only from plain literals, never where the string already fits.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import RawServer, import_package, initialize_request

from mcpgen.build import build_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "fixtures" / "wire" / "tools.yaml"

IMPL = """
from typing import Any

from wire_mcp.server import WireServer


class Impl(WireServer):
    def update_issue(self, args: Any) -> dict[str, Any]:
        return dict(args)

    def set_milestone(self, number: int, milestone: Any, priority: int) -> list[Any]:
        return [number, milestone, priority]

    def echo_number(self, value: float) -> float:
        return value

    def echo_integer(self, value: int) -> int:
        return value

    def measure(self, args: Any) -> dict[str, Any]:
        return {"values": list(args["values"]), "count": len(args["values"])}

    def coerce_probe(self, args: Any) -> dict[str, Any]:
        return {name: [value, type(value).__name__] for name, value in args.items()}

    def due_date(self, args: Any) -> dict[str, Any]:
        return {"due_on": "2028-02-29" if args["mode"] == "leap_day" else "2027-02-29"}
"""


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("wire") / "gen"
    result = build_spec(SPEC, output=where / "wire_mcp")
    assert result.ok, result.message
    (where / "wire_impl.py").write_text(IMPL, encoding="utf-8")
    return where


@pytest.fixture(scope="module")
def package(gen: Path) -> Iterator[Any]:
    with import_package(gen, "wire_mcp") as module:
        yield module


@pytest.fixture(scope="module")
def client(gen: Path, package: Any) -> Iterator[Any]:
    env = {**os.environ, "PYTHONPATH": str(gen)}
    command = [sys.executable, "-m", "wire_mcp", "--impl", "wire_impl:Impl"]
    with package.WireClient.stdio(command, env=env) as connected:
        yield connected


@pytest.fixture(scope="module")
def raw(gen: Path) -> Iterator[RawServer]:
    server = RawServer("wire_mcp", "wire_impl:Impl", pythonpath=[gen])
    server.send(initialize_request("2025-11-25"))
    assert "result" in server.recv()
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield server
    server.close()


def call_line(raw: RawServer, line: str) -> dict[str, Any]:
    """Send one hand-written tools/call frame; the parsed response."""
    raw.send(line.encode() + b"\n")
    return raw.recv()


# ------------------------------------------------------------- null versus absent


def test_explicit_null_reaches_the_handler_and_absent_stays_absent(client: Any) -> None:
    assert client.update_issue(7) == {"number": 7}
    assert client.update_issue(7, milestone=None) == {"number": 7, "milestone": None}
    assert client.update_issue(7, milestone=3, priority=2) == {
        "number": 7, "milestone": 3, "priority": 2,
    }  # fmt: skip


def test_positional_handlers_keep_defaults_for_absent_arguments(client: Any) -> None:
    # A positional handler cannot tell absent from null: both arrive as None, and an
    # absent argument with a default arrives as that default.
    assert client.set_milestone(7) == [7, None, 3]
    assert client.set_milestone(7, None, 5) == [7, None, 5]
    assert client.set_milestone(7, 2) == [7, 2, 3]


def test_a_left_out_default_is_not_sent(client: Any) -> None:
    # The server applies the default (positional above); a named handler sees what came.
    assert "priority" not in client.update_issue(7)


def test_the_wire_carries_null_and_leaves_out_the_rest(client: Any) -> None:
    sent: list[dict[str, Any]] = []
    session = client.session
    original = session.call_tool

    def spy(name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        sent.append(json.loads(json.dumps(arguments)))
        return original(name, arguments, **kwargs)

    session.call_tool = spy
    try:
        client.update_issue(1)
        client.update_issue(2, milestone=None, title="t")
    finally:
        session.call_tool = original
    assert sent == [{"number": 1}, {"number": 2, "milestone": None, "title": "t"}]


# ------------------------------------------------------------------------ numbers


@pytest.mark.parametrize("value", [3, -0, 9007199254740993, 2**70, 2.5, 3.0, 1e300, -1.5e-300])
def test_numbers_round_trip_exactly(client: Any, value: float) -> None:
    back = client.echo_number(value)
    assert back == value and type(back) is type(value)
    assert json.dumps(back) == json.dumps(value)


def test_integers_round_trip_exactly(client: Any) -> None:
    for value in (3, 9007199254740993, -(2**64) - 1):
        back = client.echo_integer(value)
        assert back == value and type(back) is int


def test_structured_numbers_keep_their_json_form(client: Any) -> None:
    values = [3, 9007199254740993, 2.5, 3.0]
    result = client.session.call_tool("measure", {"values": values})
    assert result["structuredContent"] == {"values": values, "count": 4}
    assert [type(v) for v in result["structuredContent"]["values"]] == [int, int, float, float]
    assert result["content"][0]["text"] == '{"values":[3,9007199254740993,2.5,3.0],"count":4}'


def test_the_number_text_on_the_wire_is_exact(raw: RawServer) -> None:
    line = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo_number",'
        '"arguments":{"value":9007199254740993}}}'
    )
    answer = call_line(raw, line)
    assert answer["result"]["content"][0]["text"] == "9007199254740993"
    raw_line = raw.raw_lines[-1].decode()
    assert '"text":"9007199254740993"' in raw_line


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_refused_as_arguments(raw: RawServer, literal: str) -> None:
    # Not JSON numbers (NaN, Infinity) or beyond a double (1e400, read as infinity):
    # before, the handler got nan/inf and its answer failed to encode (-32603).
    line = (
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo_number",'
        f'"arguments":{{"value":{literal}}}}}}}'
    )
    answer = call_line(raw, line)
    result = answer["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "value: expected a finite number" in text, text


# ------------------------------------------------------------------------ formats


def test_formats_are_checked_on_arguments(client: Any, package: Any) -> None:
    with pytest.raises(package.ToolError) as info:
        client.update_issue(7, due_on="next week", url="not a uri")
    message = str(info.value)
    assert "due_on: expected a date as YYYY-MM-DD (RFC 3339 full-date), got 'next week'" in message
    assert "url: expected an absolute URI with a scheme" in message
    assert client.update_issue(7, due_on="2026-12-02", url="https://example.com/i/7") == {
        "number": 7, "due_on": "2026-12-02", "url": "https://example.com/i/7",
    }  # fmt: skip


def test_formats_are_checked_on_results(client: Any, package: Any) -> None:
    sent = client.session.call_tool("due_date", {"mode": "leap_day"})
    assert sent["structuredContent"] == {"due_on": "2028-02-29"}
    # A result that fails its format is the server's bug and never sent as a success
    # (how it is reported is the server core's: an error result or a JSON-RPC error).
    with pytest.raises((package.ToolError, package.ProtocolError)):
        client.session.call_tool("due_date", {"mode": "no_such_day"})


# ----------------------------------------------------------------------- coercion


@pytest.mark.parametrize(
    ("arguments", "received"),
    [
        ({"count": "42"}, {"count": [42, "int"]}),
        ({"ratio": "9007199254740993"}, {"ratio": [9007199254740993, "int"]}),
        ({"ratio": "2.5"}, {"ratio": [2.5, "float"]}),
        ({"flag": "true"}, {"flag": [True, "bool"]}),
        ({"code": "12"}, {"code": ["12", "str"]}),  # the string branch takes it
        ({"code": "123"}, {"code": [123, "int"]}),  # no branch takes the string
        ({"level": "2"}, {"level": [2, "int"]}),
    ],
)
def test_coercion_from_plain_literals(
    client: Any, arguments: dict[str, Any], received: dict[str, Any]
) -> None:
    result = client.session.call_tool("coerce_probe", arguments)
    assert json.loads(result["content"][0]["text"]) == received


@pytest.mark.parametrize(
    "arguments",
    [
        {"count": "1e3"},
        {"count": "1e300"},
        {"count": "0123"},
        {"code": "0123"},
        {"level": "2.0"},
        {"flag": "True"},
        {"count": " 7"},
    ],
)
def test_coercion_refuses_what_is_not_plainly_the_value(
    client: Any, package: Any, arguments: dict[str, Any]
) -> None:
    with pytest.raises(package.ToolError, match="Invalid arguments for tool 'coerce_probe'"):
        client.session.call_tool("coerce_probe", arguments)


@pytest.mark.parametrize("text", ["NaN", "Infinity", "1e400"])
def test_the_client_refuses_a_non_finite_number_result(package: Any, text: str) -> None:
    # A foreign server's answer for a `returns: number` tool (a generated server cannot
    # send one): before, the client returned nan or inf.
    from mcpgen_runtime import ProtocolError, convert_result

    result = {"content": [{"type": "text", "text": text}], "isError": False}
    with pytest.raises(ProtocolError, match="not a JSON number"):
        convert_result(result, "number")
    assert convert_result({"content": [{"type": "text", "text": "3"}]}, "number") == 3
