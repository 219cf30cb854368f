"""``mcpgen import``: live servers → spec → build → the generated client against the
same server (``verify="strict"``), plus the spec writer on synthetic tool lists.

Live servers: ``mcp-server-time`` and ``mcp-server-git`` from PyPI (the dev extra) and
``@modelcontextprotocol/server-everything`` from npm (``make npm-tools``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from helpers import import_package

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.descriptors import descriptor
from mcpgen.importer import ImportFailed, spec_from_tools
from mcpgen.spec.load import load_spec_text
from mcpgen_runtime import Session
from mcpgen_runtime.contract.compare import Severity, compare_tools
from mcpgen_runtime.protocol.fingerprint import tool_fingerprint

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything"


def _everything_command() -> list[str] | None:
    manifest = EVERYTHING / "package.json"
    node = shutil.which("node")
    if node is None or not manifest.is_file():
        return None
    entry = json.loads(manifest.read_text())["bin"]["mcp-server-everything"]
    return [node, str(EVERYTHING / entry), "stdio"]


def _require(path: Path) -> str:
    if not path.exists():
        pytest.skip(f"{path.name} is not installed (pip install -e '.[dev]')")
    return str(path)


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("gitrepo")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    (repo / "README.md").write_text("hello\n")
    subprocess.run(["git", "add", "README.md"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "first commit"], cwd=repo, check=True, env=env)
    return repo


def _servers(git_repo: Path) -> dict[str, list[str]]:
    servers = {
        "time": [_require(BIN / "mcp-server-time")],
        "git": [_require(BIN / "mcp-server-git"), "--repository", str(git_repo)],
    }
    command = _everything_command()
    if command is None:
        pytest.skip(
            "node or the npm package @modelcontextprotocol/server-everything is missing "
            "(make npm-tools)"
        )
    servers["everything"] = command
    return servers


@pytest.fixture(scope="module", params=["time", "git", "everything"])
def imported(
    request: pytest.FixtureRequest, git_repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[str], Path, Any]]:
    """(server, command, spec path, generated package module) for each live server."""
    name: str = request.param
    command = _servers(git_repo)[name]
    folder = tmp_path_factory.mktemp(f"import_{name}")
    spec = folder / "tools.yaml"
    result = CliRunner().invoke(
        main, ["import", "-o", str(spec), "--package", f"imported_{name}", "--", *command]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {spec}: ")
    built = build_spec(spec, output=folder / "gen" / f"imported_{name}")
    assert built.ok, [str(d) for d in built.diagnostics]
    with import_package(folder / "gen", f"imported_{name}") as package:
        yield name, command, spec, package


def _client_class(package: Any) -> Any:
    return next(
        getattr(package, attr)
        for attr in package.__all__
        if attr.endswith("Client") and not attr.startswith("Async")
    )


def test_the_generated_client_verifies_strictly_and_lists_the_same_tools(
    imported: tuple[str, list[str], Path, Any],
) -> None:
    _, command, _, package = imported
    contract = package.contract.TOOLS
    with Session.stdio(command, verify="off") as raw_session:
        live = [tool.raw for tool in raw_session.list_tools()]
    # Nothing a generated client would refuse, the reorder rule included.
    assert not [c for c in compare_tools(contract, live) if c.severity is Severity.BREAKING]
    with _client_class(package).stdio(command, verify="strict") as client:
        listed = client.list_tools()
    assert [tool.name for tool in listed] == [tool["name"] for tool in contract]
    assert [tool["name"] for tool in live] == [tool["name"] for tool in contract]


def test_a_typed_method_calls_the_live_server(
    imported: tuple[str, list[str], Path, Any], git_repo: Path
) -> None:
    name, command, _, package = imported
    with _client_class(package).stdio(command, verify="strict") as client:
        if name == "time":
            now = client.get_current_time("Etc/UTC")
            assert type(now).__name__ == "GetCurrentTimeOutput"
            assert now.timezone == "Etc/UTC" and isinstance(now.is_dst, bool)
            converted = client.convert_time("Europe/Paris", "12:00", "Asia/Tokyo")
            assert converted.target.timezone == "Asia/Tokyo"
            assert type(converted.source).__name__ == "TimeResult"  # a hoisted shared type
        elif name == "git":
            # no output schema: `returns: result`, the whole result
            assert (
                "first commit" in client.git_log(str(git_repo), max_count=1)["content"][0]["text"]
            )
            assert "On branch main" in client.git_status(str(git_repo))["content"][0]["text"]
        else:
            text = {"type": "text", "text": "The sum of 2 and 3 is 5."}
            assert client.get_sum(2, 3) == {"content": [text]}
            assert client.echo("héllo") == {"content": [{"type": "text", "text": "Echo: héllo"}]}


def test_the_imported_spec_names_its_source_and_is_date_free(
    imported: tuple[str, list[str], Path, Any],
) -> None:
    name, command, spec, _ = imported
    text = spec.read_text()
    assert text.startswith("# Imported by `mcpgen import`")
    assert f"# Source: {' '.join(command)}" in text
    data = yaml.safe_load(text)
    assert data["package"] == f"imported_{name}"
    header = text.split("mcpgen: 1")[0]
    assert date.today().isoformat() not in header and not re.search(r"\d\d:\d\d", header)
    # Importing again writes the same bytes.
    again = spec.with_name("again.yaml")
    result = CliRunner().invoke(
        main, ["import", "-o", str(again), "--package", f"imported_{name}", "--", *command]
    )
    assert result.exit_code == 0, result.output
    assert again.read_bytes() == spec.read_bytes()


def test_an_existing_output_needs_force(imported: tuple[str, list[str], Path, Any]) -> None:
    _, command, spec, _ = imported
    result = CliRunner().invoke(main, ["import", "-o", str(spec), "--", *command])
    assert result.exit_code == 1 and "pass --force" in result.output


def test_exact_import_of_the_time_server_publishes_identical_descriptors(
    git_repo: Path, tmp_path: Path
) -> None:
    command = _servers(git_repo)["time"]
    result = CliRunner().invoke(main, ["import", "--exact", "-o", "-", "--", *command])
    assert result.exit_code == 0, result.output
    assert "input_schema:" in result.output and "parameters:" not in result.output
    loaded = load_spec_text(result.output, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is not None, loaded.diagnostics
    with Session.stdio(command, verify="off") as session:
        live = {tool.name: tool.fingerprint for tool in session.list_tools()}
    assert {t.name: tool_fingerprint(descriptor(t)) for t in loaded.contract.tools} == live


def test_a_listing_with_a_lone_surrogate_is_listed_and_refused_clearly(tmp_path: Path) -> None:
    """ "\\ud800" is valid JSON text but no UTF-8: fingerprinting such a tool raised
    UnicodeEncodeError out of Session.list_tools() (every generated client, and
    `mcpgen import` with a traceback). Found by the import fuzzer."""
    from mcpgen.importer import import_server

    listing = {
        "serverInfo": {"name": "odd", "version": "1"},
        "tools": [{"name": "t", "description": "a\ud800b", "inputSchema": {"type": "object"}}],
    }
    path = tmp_path / "listing.json"
    path.write_text(json.dumps(listing), encoding="utf-8")
    command = [sys.executable, str(ROOT / "tests" / "fixtures" / "fake_tools_server.py"), str(path)]
    with Session.stdio(command, verify="off") as session:
        (tool,) = session.list_tools()
        assert tool.description == "a\ud800b" and len(tool.fingerprint) == 64
    with pytest.raises(ImportFailed, match="do not make a valid spec"):
        import_server(command, spec_dir=tmp_path)


def test_a_server_that_cannot_start_is_reported() -> None:
    result = CliRunner().invoke(main, ["import", "-o", "-", "--", sys.executable, "-c", "pass"])
    assert result.exit_code == 1
    assert "mcpgen import: cannot list the tools of" in result.output


def test_import_url_usage_and_an_endpoint_nobody_serves() -> None:
    from fixtures.http_server import free_port

    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["import", "-o", "-", *args])
        return result.exit_code, result.output

    assert run() == (2, run()[1]) and "give one server" in run()[1]
    assert "give one server" in run("--url", "http://127.0.0.1:9/mcp", "--", "x")[1]
    assert "--header needs --url" in run("--header", "A: b", "--", "x")[1]
    assert "expected 'Name: value'" in run("--url", "http://127.0.0.1:9/mcp", "--header", "A")[1]
    assert "not an http:// or https:// URL" in run("--url", "ftp://example.com/mcp")[1]
    url = f"http://127.0.0.1:{free_port()}/mcp"
    code, output = run("--url", url)
    assert code == 1 and f"cannot list the tools of {url}: cannot reach the MCP server" in output


# --------------------------------------------------------------------------- the spec writer


INFO = {"name": "demo-server", "version": "1.0"}


def _tool(name: str, schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": schema or {"type": "object", "properties": {}}, **extra}


def _published(text: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    loaded = load_spec_text(text, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is not None, loaded.diagnostics
    return {tool.name: descriptor(tool) for tool in loaded.contract.tools}


def test_parameters_keep_order_flags_defaults_and_every_keyword(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "What to find"},
            "limit": {"type": "integer", "default": 10, "maximum": 50, "x-ui": "slider"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    spec = spec_from_tools([_tool("search", schema)], server_info=INFO, source="demo")
    data = yaml.safe_load(spec.text)
    assert data["package"] == "demo_server" and data["server"] == {
        "name": "demo-server",
        "version": "1.0",
    }
    assert data["tools"][0]["parameters"] == [
        {"name": "query", "type": "string", "minLength": 1, "description": "What to find"},
        {"name": "limit", "type": "integer", "default": 10, "maximum": 50, "x-ui": "slider"},
        {
            "name": "tags",
            "type": "array",
            "items": {"enum": ["a", "b"]},
            "uniqueItems": True,
            "required": False,
        },
    ]
    published = _published(spec.text, tmp_path)["search"]["inputSchema"]
    assert list(published["properties"]) == ["query", "limit", "tags"]
    assert published["properties"] == schema["properties"]
    assert published == schema and not spec.notes  # the derived schema is the listed one


@pytest.mark.parametrize(
    "extra",
    [{}, {"title": "searchArguments"}, {"$schema": "https://json-schema.org/draft/2020-12/schema"}],
    ids=["open-object", "root-title", "dollar-schema"],
)
def test_a_schema_parameters_would_change_is_kept_as_listed(
    extra: dict[str, Any], tmp_path: Path
) -> None:
    """`parameters` publish additionalProperties: false and no root annotations: the
    generated server rejected arguments the original accepted, and dropped `$schema`
    and the root `title`. Such a tool is written as `input_schema`, as listed."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, **extra}
    spec = spec_from_tools([_tool("t", schema)], server_info=INFO)
    entry = yaml.safe_load(spec.text)["tools"][0]
    assert "parameters" not in entry and entry["input_schema"] == schema
    assert _published(spec.text, tmp_path)["t"]["inputSchema"] == schema and not spec.notes


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "object", "allOf": [{"required": ["a"]}], "properties": {"a": {}}},
        {
            "type": "object",
            "properties": {"where": {"type": "object", "required": ["x"], "properties": {"x": {}}}},
        },
        {
            "type": "object",
            "properties": {"n": {"type": "integer", "default": 1}},
            "required": ["n"],
        },
        {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
    ],
    ids=[
        "patternProperties",
        "allOf-at-root",
        "nested-required",
        "required-with-default",
        "additionalProperties-schema",
    ],
)
def test_schemas_parameters_cannot_express_stay_input_schema(
    schema: dict[str, Any], tmp_path: Path
) -> None:
    spec = spec_from_tools([_tool("t", schema)], server_info=INFO)
    entry = yaml.safe_load(spec.text)["tools"][0]
    assert "parameters" not in entry and entry["input_schema"] == schema
    assert _published(spec.text, tmp_path)["t"]["inputSchema"] == schema


def test_defs_become_types_shared_when_identical_and_renamed_when_not(tmp_path: Path) -> None:
    point = {"type": "object", "properties": {"x": {"type": "number"}}}
    tools = [
        _tool(
            "a",
            {
                "type": "object",
                "properties": {"p": {"$ref": "#/$defs/Point"}},
                "$defs": {"Point": point},
            },
        ),
        _tool(
            "b",
            {
                "type": "object",
                "properties": {"q": {"$ref": "#/$defs/Point"}},
                "$defs": {"Point": point},
            },
        ),
        _tool(
            "c",
            {
                "type": "object",
                "properties": {"r": {"$ref": "#/definitions/Point"}},
                "definitions": {"Point": {"type": "string"}},
            },
        ),
        _tool(
            "d",
            {
                "type": "object",
                "properties": {"s": {"$ref": "#/$defs/DArgs"}},
                "$defs": {"DArgs": {"type": "integer"}},
            },
        ),
    ]
    spec = spec_from_tools(tools, server_info=INFO)
    data = yaml.safe_load(spec.text)
    # c's draft-7 `definitions` cannot stay local: a type, renamed as its name is
    # taken; d's `DArgs` would be renamed (a class of that name exists), so d keeps
    # its own $defs and publishes its refs as listed
    assert data["types"] == {"Point": point, "Point2": {"type": "string"}}
    assert data["tools"][3]["input_schema"] == tools[3]["inputSchema"]
    published = _published(spec.text, tmp_path)
    assert published["a"]["inputSchema"]["$defs"] == {"Point": point}
    assert published["c"]["inputSchema"]["properties"]["r"] == {"$ref": "#/$defs/Point2"}
    assert published["d"] == tools[3]
    for tool in tools:  # renamed definitions still mean the same
        changes = compare_tools([published[tool["name"]]], [tool])
        assert not [c for c in changes if c.severity is not Severity.COMPATIBLE]


def test_descriptor_members_map_to_spec_keys(tmp_path: Path) -> None:
    tool = _tool(
        "paint",
        {
            "type": "object",
            "properties": {"colour": {"type": "string"}},
            "required": ["colour"],
            "additionalProperties": False,
        },
        title="Paint",
        description="Paints.\n\nTwo paragraphs, \"quotes\", {{ braces }}, 'yes', ünïcode.",
        outputSchema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
        annotations={"title": "Paint", "destructiveHint": True, "readOnlyHint": False},
        execution={"taskSupport": "optional"},
        icons=[
            {
                "src": "https://example.com/p.png",
                "mimeType": "image/png",
                "sizes": ["48x48"],
                "theme": "dark",
            }
        ],
        _meta={"team": "art", "nested": {"x": [1, 2]}},
    )
    spec = spec_from_tools([tool], server_info={**INFO, "title": "Demo"}, instructions="Be nice.")
    entry = yaml.safe_load(spec.text)["tools"][0]
    assert entry["hints"] == {"read_only": False, "destructive": True}
    assert entry["task_support"] == "optional"
    assert entry["icons"] == [
        {
            "src": "https://example.com/p.png",
            "mime_type": "image/png",
            "sizes": ["48x48"],
            "theme": "dark",
        }
    ]
    assert entry["meta"] == tool["_meta"]
    assert _published(spec.text, tmp_path)["paint"] == tool  # byte-for-byte the same contract
    assert "paint" not in spec.notes
    assert "description: |" in spec.text  # multi-line text stays readable


def test_tricky_strings_round_trip(tmp_path: Path) -> None:
    values = [
        "yes",
        "null",
        "2024-01-01",
        "0x10",
        "1e3",
        "~",
        "- item",
        "# hash",
        "a: b",
        " lead",
        "trail ",
        "tab\there",
        "multi\nline\n",
        "é😀",
        "",
    ]
    schema = {
        "type": "object",
        "properties": {
            f"p{i}": {"type": "string", "default": value, "description": value}
            for i, value in enumerate(values)
        },
    }
    tool = _tool("strings", schema, description="\n".join(values))
    spec = spec_from_tools([tool], server_info=INFO, exact=True)
    assert _published(spec.text, tmp_path)["strings"] == tool


@pytest.mark.parametrize(
    "value",
    ["\x85", "x\x85", "a\nb\x85c", "a\u2028b\nc", "a\u2029", "a\r\nb\n", "\x85\n "],
)
def test_every_yaml_line_break_round_trips(value: str, tmp_path: Path) -> None:
    """NEL, LS, PS and CR are line breaks to YAML: in a single-quoted or literal
    scalar they were folded (\x85 came back as a space), the published description
    differed and the import was refused. Found by the import fuzzer."""
    schema = {
        "type": "object",
        "properties": {"p": {"type": "string", "description": value}},
        "description": value,
    }
    tool = _tool("t", schema, description=value)
    spec = spec_from_tools([tool], server_info=INFO, exact=True)
    assert _published(spec.text, tmp_path)["t"] == tool


def test_unrepresentable_python_names_fail_naming_both() -> None:
    with pytest.raises(
        ImportFailed,
        match=r"tool 'get_x' and tool 'get-x' both become Python "
        r"method 'get_x'",
    ):
        spec_from_tools([_tool("get-x"), _tool("get_x")], server_info=INFO)
    schema = {"type": "object", "properties": {"a-b": {}, "a_b": {}}}
    with pytest.raises(ImportFailed, match=r"parameters 'a-b' and 'a_b' both become Python name"):
        spec_from_tools([_tool("t", schema)], server_info=INFO)
    with pytest.raises(ImportFailed, match="which the generated client already defines"):
        spec_from_tools([_tool("list_tools")], server_info=INFO)


@pytest.mark.parametrize("description", [None, 5, ["x"]], ids=["null", "number", "list"])
def test_a_description_a_spec_cannot_hold_is_named_in_the_refusal(description: Any) -> None:
    """The refusal said only "cannot be reproduced by a spec: " (the description
    changes it counts were left out of the reason). Found by the import fuzzer."""
    with pytest.raises(
        ImportFailed,
        match=r"cannot be reproduced by a spec: "
        r"DESCRIPTION_CHANGED description",
    ):
        spec_from_tools([_tool("t", description=description)], server_info=INFO)


def test_references_a_spec_cannot_hold_fail_clearly() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}},
    }
    with pytest.raises(ImportFailed, match=r"tool 't': inputSchema: \$ref '#/properties/a'"):
        spec_from_tools([_tool("t", schema)], server_info=INFO)
    with pytest.raises(ImportFailed, match="not an object schema"):
        spec_from_tools([_tool("t", {"type": "string"})], server_info=INFO)


def test_package_and_name_options(tmp_path: Path) -> None:
    spec = spec_from_tools([_tool("t")], server_info={"name": "1 odd/name!"}, name="renamed")
    data = yaml.safe_load(spec.text)
    assert data["server"] == {"name": "renamed", "version": "0"} and data["package"] == "renamed"
    assert (
        yaml.safe_load(spec_from_tools([_tool("t")], server_info={"name": "9lives"}).text)[
            "package"
        ]
        == "_9lives"
    )
    with pytest.raises(ImportFailed, match="not a Python package name"):
        spec_from_tools([_tool("t")], server_info=INFO, package="not-valid")


@pytest.mark.parametrize("version", ["", None, 2], ids=["empty", "null", "number"])
def test_a_server_version_a_spec_cannot_hold_becomes_a_placeholder(
    version: Any, tmp_path: Path
) -> None:
    """serverInfo.version must be a string; an empty one (or none at all) would make
    ``server.version`` invalid, so the import writes "0" as for a missing version.
    (Found by the import fuzzer: an empty version refused the whole import.)"""
    spec = spec_from_tools([_tool("t")], server_info={"name": "demo", "version": version})
    assert yaml.safe_load(spec.text)["server"] == {"name": "demo", "version": "0"}
    assert _published(spec.text, tmp_path)


def test_values_shared_between_tools_are_written_out_not_aliased(tmp_path: Path) -> None:
    """A caller may pass tool definitions that share objects (not JSON off the wire):
    the spec holds no YAML anchors, which collided between the separately dumped
    parts ("found duplicate anchor"). Found by the import fuzzer."""
    shared: list[Any] = []
    schema = {"type": "object", "properties": {"a": {"const": shared, "default": shared}}}
    output = {"type": "object", "properties": {"b": {"const": shared, "default": shared}}}
    spec = spec_from_tools([_tool("t", schema), _tool("u", outputSchema=output)], server_info=INFO)
    assert "&id" not in spec.text and "*id" not in spec.text
    assert _published(spec.text, tmp_path)["t"]["inputSchema"]["properties"]["a"] == {
        "const": [],
        "default": [],
    }


def test_a_misspelt_keyword_is_reported_with_the_tool() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLenght": 3}}}
    with pytest.raises(
        ImportFailed,
        match=r"tool 'odd' \(tools\[0\]\.parameters\[0\]\.maxLenght\): "
        r"unknown JSON Schema keyword 'maxLenght' \(did you mean 'maxLength'\?\)",
    ):
        spec_from_tools([_tool("odd", schema)], server_info=INFO)


def test_openapi_keywords_import_and_are_published_unchanged(tmp_path: Path) -> None:
    """``nullable`` (OpenAPI's) is an annotation to JSON Schema: kept, not refused."""
    schema = {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}}
    spec = spec_from_tools([_tool("odd", schema)], server_info=INFO)
    assert _published(spec.text, tmp_path)["odd"]["inputSchema"] == schema


def test_no_tools_is_still_a_spec(tmp_path: Path) -> None:
    spec = spec_from_tools([], server_info=INFO)
    assert yaml.safe_load(spec.text)["tools"] == [] and spec.tools == 0
    assert _published(spec.text, tmp_path) == {}


def test_import_keeps_task_support_of_a_dual_era_server(tmp_path: Path) -> None:
    """A dual-era server (our own weather server) is imported in the handshake era,
    the only one whose listing carries ``execution.taskSupport``."""
    from mcpgen.importer import import_server

    root = Path(__file__).resolve().parents[2]
    weather = root / "examples" / "weather"
    build_spec(weather / "tools.yaml", output=tmp_path / "gen" / "weather_mcp")
    env = {"PYTHONPATH": f"{tmp_path / 'gen'}:{weather}", "PATH": "/usr/bin:/bin"}
    imported = import_server(
        [sys.executable, "-m", "weather_mcp"], env=env, cwd=weather, spec_dir=tmp_path
    )
    spec = yaml.safe_load(imported.text)
    tools = {tool["name"]: tool for tool in spec["tools"]}
    assert tools["get_forecast"]["task_support"] == "optional"
    assert "2025-11-25" in imported.text


# Tools as chrome-devtools-mcp lists them: a `category` on each tool's annotations
# and, on one, `conditions` (members MCP does not define), beside the hints.
CHROME_LIKE = [
    _tool(
        "navigate_page",
        {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
        description="Go to a URL.",
        annotations={"category": "Navigation automation", "readOnlyHint": False},
    ),
    _tool(
        "take_screenshot",
        description="A screenshot.",
        annotations={"category": "Debugging", "readOnlyHint": True},
    ),
    _tool(
        "screencast_start",
        description="Start a screencast.",
        annotations={
            "category": "Debugging",
            "readOnlyHint": False,
            "conditions": ["experimentalScreencast"],
            "title": "Screencast",
        },
    ),
]


def test_unknown_annotation_members_survive_import_build_and_relisting(tmp_path: Path) -> None:
    """Before: import kept only title and the four hints, so the generated server
    re-listed `annotations` without `category`/`conditions` and a strict connect of the
    generated client to the original gave one contract warning per tool."""
    listing = tmp_path / "listing.json"
    listing.write_text(
        json.dumps(
            {"serverInfo": {"name": "chrome-like", "version": "1.0.0"}, "tools": CHROME_LIKE}
        ),
        encoding="utf-8",
    )
    original = [
        sys.executable,
        str(ROOT / "tests" / "fixtures" / "fake_tools_server.py"),
        str(listing),
    ]
    spec = tmp_path / "tools.yaml"
    result = CliRunner().invoke(
        main, ["import", "-o", str(spec), "--package", "chrome_like", "--", *original]
    )
    assert result.exit_code == 0, result.output
    entries = {t["name"]: t for t in yaml.safe_load(spec.read_text())["tools"]}
    assert entries["screencast_start"]["annotations"] == {
        "category": "Debugging",
        "conditions": ["experimentalScreencast"],
    }
    assert entries["take_screenshot"]["hints"] == {"read_only": True}
    gen = tmp_path / "gen"
    built = build_spec(spec, output=gen / "chrome_like")
    assert built.ok, [str(d) for d in built.diagnostics]
    # the generated server, over stdio, lists what the original does
    impl = (
        "import chrome_like as pkg\nclass Impl(pkg.ChromeLikeServer):\n"
        + "".join(
            f"    def {n}(self, *a, **k): return {{'content': []}}\n"
            for n in ("navigate_page", "take_screenshot", "screencast_start")
        )
        + "pkg.serve(Impl())\n"
    )
    generated = [sys.executable, "-c", impl]
    env = {"PYTHONPATH": str(gen), "PATH": "/usr/bin:/bin"}
    with Session.stdio(generated, env=env, verify="off") as session:
        relisted = [tool.raw for tool in session.list_tools()]
    assert relisted == CHROME_LIKE
    with (
        import_package(gen, "chrome_like") as package,
        package.ChromeLikeClient.stdio(original, verify="strict") as client,
    ):
        assert client.session.contract_warnings == []
        assert [t.name for t in client.list_tools()] == [t["name"] for t in CHROME_LIKE]


def test_diff_reports_an_unknown_annotation_member_at_the_spec_key(tmp_path: Path) -> None:
    spec = spec_from_tools(CHROME_LIKE, server_info={"name": "chrome-like", "version": "1"})
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(spec.text, encoding="utf-8")
    new.write_text(
        spec.text.replace("category: Debugging", "category: Performance", 1), encoding="utf-8"
    )
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "json"])
    assert result.exit_code == 0, result.output  # compatible: nothing breaks
    (change,) = json.loads(result.output)["changes"]
    line = next(
        i
        for i, text in enumerate(new.read_text().splitlines(), 1)
        if "category: Performance" in text
    )
    assert change["rule"] == "UNKNOWN_FIELD_CHANGED" and change["severity"] == "compatible"
    assert change["path"] == "annotations.category"
    assert change["message"] == 'annotations.category "Debugging" -> "Performance"'
    assert (
        change["line"] < line
        and new.read_text().splitlines()[change["line"] - 1].strip() == "annotations:"
    )


def test_a_spec_sets_hints_and_title_with_their_own_keys_not_annotations(tmp_path: Path) -> None:
    text = yaml.safe_dump(
        {
            "mcpgen": 1,
            "package": "a_mcp",
            "server": INFO,
            "tools": [
                {"name": "t", "annotations": {"readOnlyHint": True, "title": "T", "category": "c"}}
            ],
        }
    )
    loaded = load_spec_text(text, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is None
    assert sorted(d.message for d in loaded.errors) == [
        "annotations.readOnlyHint is set with hints.read_only, not here",
        "annotations.title is set with annotation_title, not here",
    ]
