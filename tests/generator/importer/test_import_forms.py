"""What `mcpgen import` writes for forms real servers use (issue 12), built and run:
FastMCP's ``x: str = None`` (``"default": null``), ``returns: result`` (every content
block, ``structuredContent`` without an output schema, ``_meta``), repeated ``$defs``
that refer to each other, ``--version``/``--name``, titles sent once, and the era a
listing is taken in."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from helpers import import_package

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.descriptors import descriptor
from mcpgen.importer import spec_from_tools
from mcpgen.spec.load import load_spec_text

ROOT = Path(__file__).resolve().parents[3]
FAKE_SERVER = ROOT / "tests" / "fixtures" / "fake_tools_server.py"
INFO = {"name": "forms", "version": "1.0"}
PIXEL = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}

GREET = {
    "name": "greet",
    "inputSchema": {
        "type": "object",
        "properties": {
            "name": {"title": "Name", "type": "string"},
            "greeting": {"default": None, "title": "Greeting", "type": "string"},
        },
        "required": ["name"],
        "title": "greetArguments",
    },
}
SNAPSHOT = {"name": "snapshot", "title": "Snapshot", "inputSchema": {"type": "object"}}
NODE_DEFS = {
    "node": {
        "type": "object",
        "properties": {
            "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            "owner": {"$ref": "#/$defs/person"},
        },
    },
    "person": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "parent": {"$ref": "#/$defs/request"}},
    },
    "request": {
        "type": "object",
        "properties": {"of": {"$ref": "#/$defs/person"}, "why": {"$ref": "#/$defs/reason"}},
    },
    "reason": {"enum": ["a", "b"]},
}

IMPL = """
import json
from forms_pkg import FormsServer

class Impl(FormsServer):
    def greet(self, args):
        # what the handler received: exactly what the client sent
        return {"content": [{"type": "text", "text": json.dumps(args, sort_keys=True)}]}

    def snapshot(self):
        return {"content": [{"type": "text", "text": "before"}, PIXEL_BLOCK,
                            {"type": "text", "text": "after"}],
                "structuredContent": {"count": 2}, "_meta": {"team": "x"}}
""".replace("PIXEL_BLOCK", repr(PIXEL))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[str], dict[str, str]]:
    folder = tmp_path_factory.mktemp("forms")
    spec = spec_from_tools([GREET, SNAPSHOT], server_info=INFO, package="forms_pkg")
    (folder / "tools.yaml").write_text(spec.text)
    result = build_spec(folder / "tools.yaml", output=folder / "gen" / "forms_pkg")
    assert result.ok, [str(d) for d in result.diagnostics]
    (folder / "impl.py").write_text(textwrap.dedent(IMPL))
    command = [sys.executable, "-m", "forms_pkg", "--impl", "impl:Impl"]
    env = {"PYTHONPATH": f"{folder / 'gen'}:{folder}", "PATH": "/usr/bin:/bin"}
    with import_package(folder / "gen", "forms_pkg") as package:
        yield package, command, env


def test_a_null_default_imports_and_the_argument_can_be_left_out(built: Any) -> None:
    """`{"type": "string", "default": null}` (FastMCP's `x: str = None`) was refused:
    "default None fails its own schema"; the import exited 1."""
    package, command, env = built
    assert package.contract.TOOLS[0] == GREET  # published as listed
    with package.FormsClient.stdio(command, env=env, verify="strict") as client:
        sent = client.greet("Ann")  # greeting left out
        assert json.loads(sent["content"][0]["text"]) == {"name": "Ann"}  # no null invented
        sent = client.greet("Ann", greeting="Hi")
        assert json.loads(sent["content"][0]["text"]) == {"greeting": "Hi", "name": "Ann"}


def test_returns_result_passes_every_block_and_structured_content(built: Any) -> None:
    """A tool without output schema imported as `returns: string`: the image and
    structuredContent were lost on the generated server and in the typed client."""
    package, command, env = built
    with package.FormsClient.stdio(command, env=env, verify="strict") as client:
        assert client.snapshot() == {
            "content": [
                {"type": "text", "text": "before"},
                PIXEL,
                {"type": "text", "text": "after"},
            ],
            "structuredContent": {"count": 2},
            "_meta": {"team": "x"},
        }


def test_a_title_sent_once_is_published_once(tmp_path: Path) -> None:
    """A spec `title` is mirrored into annotations.title: a server that sent only one
    was reproduced with both (a TITLE_CHANGED note on every tool)."""
    tools = [
        {**SNAPSHOT},
        {"name": "b", "inputSchema": {"type": "object"}, "annotations": {"title": "B"}},
        {
            "name": "c",
            "title": "C",
            "inputSchema": {"type": "object"},
            "annotations": {"title": "Other"},
        },
        {
            "name": "d",
            "title": "D",
            "inputSchema": {"type": "object"},
            "annotations": {"title": "D"},
            "execution": {"taskSupport": "forbidden"},
        },
    ]
    spec = spec_from_tools(tools, server_info=INFO)
    loaded = load_spec_text(spec.text, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is not None
    assert [descriptor(t) for t in loaded.contract.tools] == tools
    assert not spec.notes and "# differs" not in spec.text


def test_repeated_defs_that_refer_to_each_other_are_one_type_each(tmp_path: Path) -> None:
    """24 tools repeating four $defs that refer to each other imported as 96 types
    (`request12`), and their published refs were renamed even with --exact."""
    tools = [
        {
            "name": f"t{i}",
            "inputSchema": {
                "type": "object",
                "properties": {"n": {"$ref": "#/$defs/node"}},
                "$defs": NODE_DEFS,
            },
        }
        for i in range(24)
    ]
    for exact in (False, True):
        spec = spec_from_tools(tools, server_info=INFO, exact=exact)
        data = yaml.safe_load(spec.text)
        assert set(data["types"]) == {"node", "person", "request", "reason"}
        loaded = load_spec_text(spec.text, "tools.yaml", spec_dir=tmp_path)
        assert loaded.contract is not None
        assert [descriptor(t) for t in loaded.contract.tools] == tools  # refs as listed
        assert not spec.notes


def test_two_definitions_of_one_name_keep_their_own_defs(tmp_path: Path) -> None:
    one = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/X"}},
        "$defs": {"X": {"type": "string"}},
    }
    two = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/X"}},
        "$defs": {"X": {"type": "integer"}},
    }
    tools = [{"name": "a", "inputSchema": one}, {"name": "b", "inputSchema": two}]
    spec = spec_from_tools(tools, server_info=INFO, exact=True)
    loaded = load_spec_text(spec.text, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is not None
    assert [descriptor(t) for t in loaded.contract.tools] == tools
    assert "X2" not in spec.text


def _fake(tmp_path: Path, info: dict[str, Any]) -> list[str]:
    path = tmp_path / "listing.json"
    path.write_text(json.dumps({"serverInfo": info, "tools": [GREET]}))
    return [sys.executable, str(FAKE_SERVER), str(path)]


def test_version_and_name_overrides_are_said_in_the_header(tmp_path: Path) -> None:
    """An empty serverInfo.version had no override; the header did not say "0"
    stood for it."""
    command = _fake(tmp_path, {"name": "odd", "version": ""})
    run = CliRunner().invoke(main, ["import", "-o", "-", "--", *command])
    assert run.exit_code == 0, run.output
    assert yaml.safe_load(run.output)["server"] == {"name": "odd", "version": "0"}
    assert "# server.version '0' stands for the server's ''" in run.output
    run = CliRunner().invoke(
        main, ["import", "-o", "-", "--version", "2.1.0", "--name", "better", "--", *command]
    )
    assert run.exit_code == 0, run.output
    assert yaml.safe_load(run.output)["server"] == {"name": "better", "version": "2.1.0"}
    assert "# server.version '2.1.0' given by --version (the server sent '')" in run.output
    assert "# server.name 'better' given by --name (the server sent 'odd')" in run.output


def test_the_header_names_the_era_listed(tmp_path: Path) -> None:
    command = _fake(tmp_path, {"name": "odd", "version": "1"})
    run = CliRunner().invoke(main, ["import", "-o", "-", "--", *command])
    assert run.exit_code == 0, run.output
    assert "# Era: tools listed over " in run.output


def test_a_server_that_speaks_only_2026_07_28_imports_builds_and_connects(tmp_path: Path) -> None:
    """A stateless-only server refuses ``initialize``: the import takes its listing over
    2026-07-28 alone and says so, and the built client connects to it strictly."""
    path = tmp_path / "listing.json"
    tools = [
        GREET,
        {
            "name": "nodes",
            "inputSchema": {
                "type": "object",
                "properties": {"root": {"$ref": "#/$defs/node"}},
                "$defs": NODE_DEFS,
            },
        },
    ]
    path.write_text(
        json.dumps(
            {
                "serverInfo": INFO,
                "tools": tools,
                "era": "modern",
                "instructions": "modern only",
                "page_size": 1,
            }
        )
    )
    command = [sys.executable, str(FAKE_SERVER), str(path)]
    spec_file = tmp_path / "tools.yaml"
    run = CliRunner().invoke(
        main, ["import", "-o", str(spec_file), "--package", "modern_pkg", "--", *command]
    )
    assert run.exit_code == 0, run.output
    text = spec_file.read_text(encoding="utf-8")
    assert "# Era: tools listed over 2026-07-28 (the server speaks no handshake era)" in text
    loaded = load_spec_text(text, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is not None
    assert [descriptor(t) for t in loaded.contract.tools] == tools
    result = build_spec(spec_file, output=tmp_path / "gen" / "modern_pkg")
    assert result.ok, [str(d) for d in result.diagnostics]
    with (
        import_package(tmp_path / "gen", "modern_pkg") as package,
        package.FormsClient.stdio(command, verify="strict") as client,
    ):
        assert client.session.protocol_version == "2026-07-28"
        assert client.session.contract_warnings == []
        client.greet(name="x")


def test_x_mcp_header_imports_as_a_parameters_header(tmp_path: Path) -> None:
    """A listed ``x-mcp-header`` becomes the parameter's ``header:`` (in its place) and
    builds back into the descriptor the server listed; a property that already has a
    ``header`` keyword of its own keeps the hand-written ``input_schema`` form."""
    routed = {
        "name": "route",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region", "minLength": 1},
                "query": {"type": "string"},
            },
            "required": ["region", "query"],
            "additionalProperties": False,
        },
    }
    odd = {
        "name": "odd",
        "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "header": 1}}},
    }
    spec = spec_from_tools([routed, odd], server_info=INFO)
    written = yaml.safe_load(spec.text)["tools"]
    assert written[0]["parameters"][0] == {
        "name": "region",
        "type": "string",
        "header": "Region",
        "minLength": 1,
    }
    assert "input_schema" in written[1]
    loaded = load_spec_text(spec.text, "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is not None
    assert [descriptor(t) for t in loaded.contract.tools] == [routed, odd]
