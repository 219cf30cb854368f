"""Results of any JSON type (SEP-2106), end to end: a contract whose output schemas
are an array of a shared type, a string, an integer, a union, a nullable number and
(beside them) an object, generated, checked with ``mypy --strict``, served over stdio
and Streamable HTTP and called on 2025-06-18, 2025-11-25 and 2026-07-28 by the
generated typed clients (the same Python values on every revision), the official
Python SDK client and the TypeScript SDK v2 client; and the wire itself: the value at
2026-07-28, the marked ``{"result": …}`` wrapper before it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_npm_tools import npm_tools
from fixtures.http_server import HttpServer, http_server
from helpers import RawServer, build_package, import_package, mypy_strict

import mcpgen_runtime.client.core as client_core
from mcpgen_runtime.protocol.structured import WRAP_META_KEY

REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
SPEC = """\
    mcpgen: 1
    package: anyres_mcp
    server: {name: anyres, version: 1.0.0}
    types:
      Day:
        type: object
        properties: {date: {type: string}, high_c: {type: number}}
        required: [date, high_c]
    tools:
      - name: days
        parameters:
          - {name: n, type: integer, minimum: 0, maximum: 10}
        output_schema: {type: array, items: {$ref: "#/types/Day"}}
      - name: greeting
        parameters:
          - {name: who, type: string}
        output_schema: {type: string, minLength: 1}
      - name: count
        parameters:
          - {name: n, type: integer}
        output_schema: {type: integer, maximum: 100}
      - name: either
        parameters:
          - {name: n, type: integer}
        output_schema:
          anyOf: [{type: string}, {type: array, items: {type: integer}}]
      - name: maybe
        parameters:
          - {name: n, type: number}
        output_schema: {type: [number, "null"]}
      - name: obj
        parameters:
          - {name: n, type: integer}
        output_schema:
          type: object
          properties: {result: {type: integer}}
          required: [result]
"""
IMPL = """\
from typing import Any

from anyres_mcp import AnyresServer
from anyres_mcp.models import (
    CountArgs, CountOutput, Day, DaysArgs, DaysOutput, EitherArgs, EitherOutput,
    GreetingArgs, GreetingOutput, MaybeArgs, MaybeOutput, ObjArgs, ObjOutput,
)


class Impl(AnyresServer):
    def days(self, args: DaysArgs) -> DaysOutput:
        return [Day(date=f"2026-12-0{i + 1}", high_c=i + 0.5) for i in range(args["n"])]

    def greeting(self, args: GreetingArgs) -> GreetingOutput:
        return "" if args["who"] == "nobody" else "hello " + args["who"]

    def count(self, args: CountArgs) -> CountOutput:
        return args["n"] * 2

    def either(self, args: EitherArgs) -> EitherOutput:
        return "odd" if args["n"] % 2 else list(range(args["n"]))

    def maybe(self, args: MaybeArgs) -> MaybeOutput:
        return None if args["n"] < 0 else args["n"] / 2

    def obj(self, args: ObjArgs) -> ObjOutput | dict[str, Any]:
        return {"result": args["n"]}
"""
USER = """\
from anyres_mcp import AnyresClient
from anyres_mcp.models import Day


def use(client: AnyresClient) -> None:
    days: list[Day] = client.days(2)
    text: str = client.greeting("x")
    number: int = client.count(1)
    either: str | list[int] = client.either(1)
    maybe: float | None = client.maybe(1)
    print(days, text, number, either, maybe, client.obj(1).result)
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = build_package(SPEC, tmp_path_factory.mktemp("anyres"), "anyres_mcp")
    (gen / "anyres_impl.py").write_text(IMPL, encoding="utf-8")
    (gen / "anyres_user.py").write_text(USER, encoding="utf-8")
    return gen


@pytest.fixture(scope="module")
def server(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    logs = tmp_path_factory.mktemp("logs")
    extra = ("--impl", "anyres_impl:Impl")
    with http_server("anyres_mcp", *extra, pythonpath=[package], cwd=package, log_dir=logs) as s:
        yield s


def test_the_generated_code_and_its_users_are_mypy_strict_clean(package: Path) -> None:
    done = mypy_strict("anyres_mcp", "anyres_impl.py", "anyres_user.py", cwd=package)
    assert done.returncode == 0, done.stdout + done.stderr


def _calls(client: Any) -> list[Any]:
    return [
        client.days(2),
        client.greeting("you"),
        client.count(21),
        client.either(3),
        client.either(2),
        client.maybe(-1),
        client.maybe(3),
        client.obj(5).result,
    ]


def _expected(module: Any) -> list[Any]:
    day = module.models.Day
    return [
        [day(date="2026-12-01", high_c=0.5), day(date="2026-12-02", high_c=1.5)],
        "hello you",
        42,
        "odd",
        [0, 1],
        None,
        1.5,
        5,
    ]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typed_client_returns_the_same_values_on_every_revision(
    package: Path,
    server: HttpServer,
    monkeypatch: pytest.MonkeyPatch,
    revision: str,
    transport: str,
) -> None:
    """The handshake revision the client asks for is its newest one; lowering it makes
    the client (and so the server) speak 2025-06-18."""
    modern = revision == "2026-07-28"
    if not modern:
        monkeypatch.setattr(client_core, "LATEST_HANDSHAKE", revision)
    protocol = "modern" if modern else "legacy"
    with import_package(package, "anyres_mcp") as module:
        if transport == "stdio":
            command = [sys.executable, "-m", "anyres_mcp", "--impl", "anyres_impl:Impl"]
            env = {"PYTHONPATH": str(package)}
            opened = module.AnyresClient.stdio(command, env=env, protocol=protocol)
        else:
            opened = module.AnyresClient.http(server.url, protocol=protocol)
        with opened as client:
            assert client.session.protocol_version == revision
            # listed in the tool's own form whichever revision listed it
            listed = {tool.name: tool for tool in client.list_tools()}
            contract = {tool["name"]: tool for tool in module.contract.TOOLS}
            assert listed["days"].output_schema == contract["days"]["outputSchema"]
            assert listed["days"].meta is None
            assert listed["days"].fingerprint == module.contract.FINGERPRINTS["days"]
            assert _calls(client) == _expected(module)
            with pytest.raises(module.ToolError, match="does not match the tool's output schema"):
                client.greeting("nobody")  # "" breaks minLength: checked on every revision
            with pytest.raises(module.ToolError, match="does not match the tool's output schema"):
                client.count(60)

        async def call() -> Any:
            opened = module.AsyncAnyresClient.http(server.url, protocol=protocol)
            async with opened as client:
                return await client.days(1)

        if transport == "http":
            assert asyncio.run(call()) == _expected(module)[0][:1]


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _stdio_wire(package: Path, revision: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the days tool as listed, the result of days(1)) over raw stdio at ``revision``."""
    raw = RawServer("anyres_mcp", "anyres_impl:Impl", pythonpath=[package], cwd=package)
    meta: dict[str, Any] = {}
    if revision == "2026-07-28":
        meta = {"_meta": ENVELOPE}
    else:
        raw.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": revision, "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "0"}}})  # fmt: skip
        assert raw.recv()["result"]["protocolVersion"] == revision
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {**meta}})
    tools = {t["name"]: t for t in raw.recv()["result"]["tools"]}
    call = {"name": "days", "arguments": {"n": 1}, **meta}
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    result = raw.recv()["result"]
    raw.close()
    return tools["days"], result


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_wire_of_each_revision(package: Path, revision: str) -> None:
    listed, result = _stdio_wire(package, revision)
    day = {"date": "2026-12-01", "high_c": 0.5}
    days = {"type": "array", "items": {"$ref": "#/$defs/Day"}}
    defs = {"Day": {"type": "object", "properties": {"date": {"type": "string"},
                                                     "high_c": {"type": "number"}},
                    "required": ["date", "high_c"]}}  # fmt: skip
    if revision == "2026-07-28":
        assert listed["outputSchema"] == {**days, "$defs": defs}
        assert "_meta" not in listed
        assert result["structuredContent"] == [day]
        assert json.loads(result["content"][0]["text"]) == [day]
    else:
        assert listed["outputSchema"] == {
            "type": "object",
            "properties": {"result": days},
            "required": ["result"],
            "$defs": defs,
        }
        assert listed["_meta"] == {WRAP_META_KEY: "result"}
        assert result["structuredContent"] == {"result": [day]}
        assert json.loads(result["content"][0]["text"]) == {"result": [day]}


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_the_official_python_sdk_client(server: HttpServer, mode: str) -> None:
    """The SDK validates structuredContent against the listed outputSchema: the value
    itself at 2026-07-28, the wrapper on the handshake revision it picks."""
    from mcp import Client

    async def main() -> list[Any]:
        async with Client(server.url, mode=mode, read_timeout_seconds=20) as client:
            await client.list_tools()
            found = []
            for name, args in (("days", {"n": 1}), ("either", {"n": 3}), ("maybe", {"n": -2})):
                result = await client.call_tool(name, args)
                assert not result.is_error
                found.append(result.structured_content)
            return found

    found = asyncio.run(main())
    values = [[{"date": "2026-12-01", "high_c": 0.5}], "odd", None]
    if mode == "legacy":
        values = [{"result": value} for value in values]
    assert found == values


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_the_typescript_sdk_client(server: HttpServer, mode: str) -> None:
    """The TypeScript SDK v2 client validates structuredContent against the listed
    outputSchema (Ajv) before it returns a result."""
    tools = npm_tools("@modelcontextprotocol/client")
    script = Path(__file__).resolve().parents[2] / "fixtures" / "ts_http_client.mjs"
    calls = [["days", {"n": 2}], ["greeting", {"who": "ts"}], ["either", {"n": 4}]]
    plan = {"url": server.url, "mode": mode, "calls": calls}
    run = subprocess.run(
        [tools.node, str(script), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    found = [call["result"]["structuredContent"] for call in json.loads(run.stdout)["calls"]]
    values: list[Any] = [
        [{"date": "2026-12-01", "high_c": 0.5}, {"date": "2026-12-02", "high_c": 1.5}],
        "hello ts",
        [0, 1, 2, 3],
    ]
    if mode == "legacy":
        values = [{"result": value} for value in values]
    assert found == values


# -- mcpgen test's output_schema check ------------------------------------------------


def test_the_output_schema_check_reads_each_revisions_form() -> None:
    from mcpgen.testing.checks import ToolUnderTest, check_valid
    from mcpgen.testing.targets import Reply

    tool = ToolUnderTest("days", {"name": "days", "outputSchema": {"type": "array"}})

    def finding(result: dict[str, Any]) -> str | None:
        found = check_valid(tool, {}, Reply(result={"content": [], **result}))
        return None if found is None else found.message

    assert finding({"structuredContent": [1], "resultType": "complete"}) is None
    assert finding({"structuredContent": {"result": [1]}}) is None  # the handshake wrapper
    assert "does not match" in str(finding({"structuredContent": 1, "resultType": "complete"}))
    assert "does not match" in str(finding({"structuredContent": {"result": 1}}))
    assert "wrapper" in str(finding({"structuredContent": [1]}))


CHECKED = """\
from typing import Any

from anyres_impl import Impl


class Correct(Impl):  # without the traps the typed-client test springs
    def greeting(self, args: Any) -> Any:
        return "hello " + args["who"]

    def count(self, args: Any) -> Any:
        return max(-100, min(100, args["n"] * 2))


class Buggy(Correct):
    def either(self, args: Any) -> Any:
        return 7  # neither a string nor a list of integers
"""


def test_mcpgen_test_on_results_of_any_type(package: Path) -> None:
    """In process: a correct implementation has no finding; one whose union result
    is of neither type is found under output_schema."""
    (package / "anyres_checked.py").write_text(CHECKED, encoding="utf-8")
    spec = package.parent / "spec_anyres_mcp" / "tools.yaml"
    for impl, findings in (("anyres_checked:Correct", set()), ("anyres_checked:Buggy", {"either"})):
        done = subprocess.run(
            [sys.executable, "-c", "from mcpgen.cli import main; main()", "test", str(spec),
             "--impl", impl, "--examples", "15", "--seed", "1", "--format", "json"],
            cwd=package, capture_output=True, text=True, timeout=240, check=False,
            env={**__import__("os").environ, "PYTHONPATH": str(package)},
        )  # fmt: skip
        assert done.returncode == (1 if findings else 0), done.stdout + done.stderr
        document = json.loads(done.stdout)
        assert {f["tool"] for f in document["findings"]} == findings
        assert {f["check"] for f in document["findings"]} <= {"output_schema"}


def test_import_keeps_the_tools_own_output_schema(server: HttpServer, tmp_path: Path) -> None:
    """Listed as is (2026-07-28, what ``mcpgen import`` asks first) or wrapped
    (2025-11-25), a result of any type imports as the tool's own output schema, and
    the spec builds back into the same contract."""
    from click.testing import CliRunner

    from mcpgen.cli import main
    from mcpgen.importer import spec_from_tools
    from mcpgen.spec.load import load_contract, load_spec_text

    out = tmp_path / "tools.yaml"
    run = CliRunner().invoke(main, ["import", "--url", server.url, "-o", str(out)])
    assert run.exit_code == 0, run.output
    imported = load_contract(out).contract
    assert imported is not None
    modern = {tool.name: tool.output_schema for tool in imported.tools}
    assert modern["days"] is not None and modern["days"]["type"] == "array"

    async def legacy_listing() -> list[dict[str, Any]]:
        from mcp import Client

        async with Client(server.url, mode="legacy", read_timeout_seconds=20) as client:
            listed = await client.list_tools()
            return [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]

    wrapped = asyncio.run(legacy_listing())
    assert wrapped[0]["_meta"] == {WRAP_META_KEY: "result"}
    spec = spec_from_tools(wrapped, server_info={"name": "anyres", "version": "1.0.0"})
    loaded = load_spec_text(spec.text, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is not None
    assert {tool.name: tool.output_schema for tool in loaded.contract.tools} == modern
