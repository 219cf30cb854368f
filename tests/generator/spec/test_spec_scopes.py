"""The contract's ``scopes`` (server-wide and per tool): validated at their line and
column, folded into each tool (server's first), published in the descriptor's
``_meta`` under mcpgen's own key, and known to the editor schema."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mcpgen.descriptors import descriptor
from mcpgen.spec.format import EDITOR_SCHEMA
from mcpgen.spec.load import load_contract

HEAD = """
mcpgen: 1
package: notes_mcp
server:
  name: notes
  version: 1.0.0
"""


def load(tmp_path: Path, text: str) -> tuple[object, list[str]]:
    spec = tmp_path / "tools.yaml"
    spec.write_text(textwrap.dedent(text), encoding="utf-8")
    result = load_contract(spec)
    return result.contract, [str(d) for d in result.diagnostics]


def test_scopes_are_folded_and_published(tmp_path: Path) -> None:
    contract, problems = load(
        tmp_path,
        HEAD
        + """  scopes: [notes:base]
tools:
  - name: read_note
  - name: write_note
    scopes: [notes:write, notes:base, "https://api.example/notes.write"]
    meta: {team: notes}
""",
    )
    assert problems == []
    read, write = contract.tools  # type: ignore[attr-defined]
    assert read.scopes == ("notes:base",)
    assert write.scopes == ("notes:base", "notes:write", "https://api.example/notes.write")
    assert descriptor(read)["_meta"] == {"io.mcpgen/scopes": ["notes:base"]}
    assert descriptor(write)["_meta"] == {
        "team": "notes",
        "io.mcpgen/scopes": ["notes:base", "notes:write", "https://api.example/notes.write"],
    }


def test_a_tool_without_scopes_publishes_no_meta(tmp_path: Path) -> None:
    contract, _ = load(tmp_path, HEAD + "tools:\n  - name: ping\n")
    assert "_meta" not in descriptor(contract.tools[0])  # type: ignore[attr-defined]


def test_bad_scopes_are_errors_at_their_position(tmp_path: Path) -> None:
    _, problems = load(
        tmp_path,
        HEAD
        + """  scopes: ["", notes:base]
tools:
  - name: a
    scopes: ["two words", 'say"hi', 'back\\\\slash', notes:a, notes:a, 7]
  - name: b
    scopes: notes:read
  - name: c
    scopes: [x]
    meta: {io.mcpgen/scopes: [y]}
""",
    )
    text = "\n".join(problems)
    assert "tools.yaml:7:12: server.scopes[0]: '' is not an OAuth scope" in text
    assert "tools.yaml:10:13: tools[0].scopes: " in text and "has non-unique elements" in text
    assert "tools.yaml:10:14: tools[0].scopes[0]: 'two words' is not an OAuth scope" in text
    assert "tools.yaml:10:27: tools[0].scopes[1]: 'say\"hi' is not an OAuth scope" in text
    assert "tools.yaml:10:37: tools[0].scopes[2]: " in text
    assert "tools.yaml:10:70: tools[0].scopes[5]: expected a string, got int 7" in text
    assert "tools.yaml:12:13: tools[1].scopes: expected a list, got 'notes:read'" in text
    assert (
        "tools.yaml:15:30: tools[2].meta.io.mcpgen/scopes: io.mcpgen/scopes is set with "
        "'scopes', not here" in text
    )
    assert len(problems) == 8


def test_the_editor_schema_knows_the_key() -> None:
    tool = EDITOR_SCHEMA["properties"]["tools"]["items"]["properties"]
    server = EDITOR_SCHEMA["properties"]["server"]["properties"]
    for where in (tool, server):
        assert where["scopes"]["type"] == "array"
        assert where["scopes"]["items"]["pattern"]


def write(tmp_path: Path, name: str, server_scopes: str, tool_scopes: str) -> Path:
    spec = tmp_path / name
    spec.write_text(
        textwrap.dedent(HEAD)
        + server_scopes
        + "tools:\n  - name: read_note\n"
        + tool_scopes
        + "    meta: {team: notes}\n  - name: ping\n",
        encoding="utf-8",
    )
    return spec


def changes(old: Path, new: Path) -> list[tuple[str, str, str, int]]:
    from mcpgen.diff import diff_files

    report = diff_files(old, new)
    return [(c.change.tool, c.change.rule, c.change.severity.value, c.line) for c in report.changes]


def test_diff_a_scope_added_is_breaking_removed_compatible(tmp_path: Path) -> None:
    plain = write(tmp_path, "plain.yaml", "", "")
    scoped = write(tmp_path, "scoped.yaml", "", "    scopes: [notes:read]\n")
    wide = write(tmp_path, "wide.yaml", "  scopes: [notes:base]\n", "    scopes: [notes:read]\n")
    assert changes(plain, scoped) == [("read_note", "SCOPE_ADDED", "breaking", 9)]
    assert changes(scoped, plain) == [("read_note", "SCOPE_REMOVED", "compatible", 8)]
    # a server-wide scope reaches every tool; the rest of _meta is unchanged
    assert sorted(changes(scoped, wide)) == [
        ("ping", "SCOPE_ADDED", "breaking", 7),  # server.scopes
        ("read_note", "SCOPE_ADDED", "breaking", 10),
    ]
    assert changes(wide, wide) == []


def test_the_diff_command_exits_1_on_an_added_scope(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mcpgen.cli import main

    plain = write(tmp_path, "plain.yaml", "", "")
    scoped = write(tmp_path, "scoped.yaml", "", "    scopes: [notes:read]\n")
    added = CliRunner().invoke(main, ["diff", str(plain), str(scoped)])
    assert added.exit_code == 1, added.output
    assert "SCOPE_ADDED" in added.output and "notes:read" in added.output
    removed = CliRunner().invoke(main, ["diff", str(scoped), str(plain)])
    assert removed.exit_code == 0, removed.output


def test_docs_show_each_tools_scopes(tmp_path: Path) -> None:
    from mcpgen.docs import render_docs

    contract, _ = load(
        tmp_path,
        HEAD
        + """  scopes: [notes:base]
tools:
  - name: read_note
    scopes: [notes:read]
  - name: ping
""",
    )
    page = render_docs(contract)  # type: ignore[arg-type]
    read = page[page.index('id="read_note"') : page.index('id="ping"')]
    assert '<dt>Scopes</dt><dd><code class="scope">notes:base</code> ' in read
    assert '<code class="scope">notes:read</code>' in read
    ping = page[page.index('id="ping"') :]
    assert '<code class="scope">notes:base</code>' in ping
    assert '<code class="scope">notes:read</code>' not in ping
