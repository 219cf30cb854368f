"""``mcpgen docs``: what the page shows per tool and type, its safety and determinism,
the changes section (the diff corpus, a git ref), the CLI and ``[tool.mcpgen]``.
The browser checks are in test_docs_browser.py, the examples in test_docs_examples.py."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.diff import diff_files
from mcpgen.docs import change_rows, render_docs
from mcpgen.docs.markdown import render_markdown
from mcpgen.spec.load import load_contract

ROOT = Path(__file__).resolve().parents[3]
WEATHER = ROOT / "examples" / "weather" / "tools.yaml"
CORPUS = yaml.safe_load(
    (ROOT / "tests" / "fixtures" / "workflow" / "diff" / "corpus.yaml").read_text(encoding="utf-8")
)["entries"]


def _page(spec: Path = WEATHER) -> str:
    contract = load_contract(spec).contract
    assert contract is not None
    return render_docs(contract)


def _section(html: str, anchor: str) -> str:
    """The HTML of the section whose id is ``anchor`` (up to the next tool section)."""
    start = html.index(f'id="{anchor}"')
    end = html.find('<section class="card', start + 1)
    return html[start : end if end != -1 else len(html)]


def _spec(folder: Path, document: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tools.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _invoke(*args: str, cwd: Path | None = None) -> Any:
    if cwd is None:
        return CliRunner().invoke(main, list(args))
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)


# ------------------------------------------------------------------- content


def test_server_and_toc() -> None:
    html = _page()
    head = _section(html, "mcpgen:server")
    for text in (
        "Weather",
        "1.4.0",
        "<code>weather</code>",
        "Use get_forecast for multi-day",
        "weather_mcp",
        "WeatherClient",
    ):
        assert text in head
    toc = html[html.index('<nav class="toc"') : html.index("</nav>")]
    for anchor in (
        "#get_forecast",
        "#current_temperature",
        "#alerts.search",
        "#report_observation",
        "#type:Day",
        "#type:Region",
    ):
        assert f'href="{anchor}"' in toc


def test_tool_section_shows_everything_the_spec_says() -> None:
    tool = _section(_page(), "get_forecast")
    assert (
        "<h3>" in tool
        and "Get forecast" in tool
        and "Forecast for a city, one entry per day." in tool
    )
    for badge in ("read-only", "non-destructive", "idempotent", "open-world", "tasks: optional"):
        assert f">{badge}</span>" in tool
    assert "<code>optional</code>: a plain call, or a task" in tool
    assert "30 s" in tool
    assert "# as a task: handle = client.start_get_forecast(…)" in tool
    # parameters: name, type, required/default, every constraint, description
    assert re.search(
        r"<code>city</code>.*?string.*?required.*?length ≥ 1.*?City name", tool, re.DOTALL
    )
    assert re.search(
        r"<code>days</code>.*?integer.*?default</span> <code>3</code>.*?"
        r"<code>1</code> ≤ value ≤ <code>14</code>",
        tool,
        re.DOTALL,
    )
    assert "one of <code>&#34;metric&#34;</code>, <code>&#34;imperial&#34;</code>" in tool
    assert "no other properties" in tool
    # the output schema, with the shared type linked
    assert (
        "structuredContent" in tool and 'array of <a class="ref" href="#type:Day">Day</a>' in tool
    )
    # the icon: its URL as text, never fetched
    assert "https://example.com/sun.png" in tool and "<img" not in tool
    assert "(not loaded: this page fetches nothing)" in tool
    assert "&#34;team&#34;: &#34;forecasting&#34;" in tool  # _meta
    assert "isError: true" not in tool  # said once, for every tool, in the header
    header = _section(_page(), "mcpgen:server")
    assert "<dt>Every tool</dt><dd>On failure: a result with <code>isError: true</code>" in header
    assert _page().count("isError: true") == 2  # the header's line and the how-to
    observe = _section(_page(), "report_observation")
    assert (
        "pattern <code>^[A-Z]{4}$</code>" in observe and "format <code>date-time</code>" in observe
    )
    assert ">not read-only</span>" in observe and ">closed-world</span>" in observe


def test_unset_hints_and_plain_returns() -> None:
    html = _page()
    plain = _section(html, "current_temperature")
    # read-only: MCP gives destructive/idempotent meaning only when readOnlyHint is false
    assert "Hints not declared, so a client assumes: open-world." in plain
    assert "a number, sent as JSON text" in plain
    assert "<code>forbidden</code>" not in plain and "Timeout" not in plain  # the defaults
    alerts = _section(html, "alerts.search")  # not read-only: every unset hint applies
    assert "assumes: not read-only, destructive, not idempotent, open-world." in alerts
    assert "async def alerts_search (named)" in alerts.split('<details class="impl">')[1]
    alerts = _section(html, "alerts.search")
    assert '<a class="ref" href="#type:Region">Region</a>' in alerts
    assert "async def alerts_search (named)" in alerts
    assert ("result = client.alerts_search(region={&#34;country&#34;: &#34;AA&#34;})") in alerts


def test_shared_type_sections_list_their_users() -> None:
    html = _page()
    day = html[html.index('id="type:Day"') :]
    assert re.search(r'Used by <a href="#get_forecast">', day)
    assert "format <code>date</code>" in day
    region = html[html.index('id="type:Region"') :]
    assert 'href="#alerts.search"' in region and "pattern <code>^[A-Z]{2}$</code>" in region


RECURSIVE = {
    "mcpgen": 1,
    "package": "tree_mcp",
    "server": {"name": "tree", "version": "1"},
    "types": {
        "Node": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/types/Node"}},
                "label": {"$ref": "#/types/Label"},
            },
            "required": ["value"],
        },
        "Label": {"type": "string", "minLength": 2},
    },
    "tools": [
        {
            "name": "walk",
            "description": "Walk a tree.",
            "parameters": [
                {"name": "root", "$ref": "#/types/Node"},
                {"name": "mode", "oneOf": [{"const": "depth"}, {"type": "integer", "minimum": 1}]},
                {
                    "name": "filter",
                    "type": "object",
                    "required": False,
                    "properties": {
                        "tags": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                        }
                    },
                },
            ],
            "output_schema": {"$ref": "#/types/Node"},
        },
        {
            "name": "local",
            "input_schema": {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/A"}},
                "required": ["a"],
                "$defs": {
                    "A": {
                        "type": "object",
                        "properties": {
                            "next": {"$ref": "#/$defs/A"},
                            "v": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                        },
                    }
                },
            },
        },
    ],
}


def test_recursive_nested_and_alternative_schemas(tmp_path: Path) -> None:
    html = _page(_spec(tmp_path, RECURSIVE))
    walk = _section(html, "walk")
    assert '<a class="ref" href="#type:Node">Node</a>' in walk  # a link, never expanded
    assert "Exactly one of:" in walk and "exactly <code>&#34;depth&#34;</code>" in walk
    assert "Each item:" in walk and "<code>k</code>" in walk  # nested tables
    assert 'is a <a class="ref" href="#type:Node">Node</a>' in walk  # the output is the type
    node = html[html.index('id="type:Node"') :]
    assert 'array of <a class="ref" href="#type:Node">Node</a>' in node  # recursion: a link back
    assert '<a class="ref" href="#type:Label">Label</a>' in node
    local = _section(html, "local")
    assert 'id="def:local:A"' in local and local.count('href="#def:local:A"') == 2
    assert "Any of:" in local


def test_markdown_is_rendered_and_sanitised() -> None:
    html = render_markdown(
        "# Head\n\n**bold** [ok](https://example.com/a) [bad](javascript:alert(1))"
        " <b onclick=x>raw</b> ![p](https://t.example/p.png)"
    )
    assert "<h4>Head</h4>" in html and "<strong>bold</strong>" in html
    assert '<a href="https://example.com/a" rel="noopener noreferrer nofollow">ok</a>' in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")
    assert "&lt;b onclick=x&gt;raw&lt;/b&gt;" in html
    assert (
        '<a href="https://t.example/p.png" rel="noopener noreferrer nofollow">[image: p]</a>'
        in html
    )


def test_page_loads_nothing_and_runs_nothing() -> None:
    html = _page()
    assert "<link" not in html and "@import" not in html
    assert not re.search(r"\bsrc=", html) and "url(" not in html
    assert "default-src 'none'" in html  # and the browser is told so
    # one script, the page's own, allowed by its hash and by nothing else
    scripts = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    assert len(scripts) == 1 and html.count("<script") == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    assert f"script-src 'sha256-{digest}';" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1).split("script-src")[1].split(";")[0]


def test_same_spec_same_bytes_in_fresh_processes(tmp_path: Path) -> None:
    digests = set()
    for seed in ("1", "2"):
        out = tmp_path / f"site{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from mcpgen.cli import main; main()",
                "docs",
                str(WEATHER),
                "-o",
                str(out),
            ],
            check=True,
            env=env,
            capture_output=True,
            cwd=tmp_path,
        )
        digests.add(hashlib.sha256((out / "index.html").read_bytes()).hexdigest())
    assert len(digests) == 1


# ------------------------------------------------------------------- changes


@pytest.mark.parametrize("entry", CORPUS, ids=[entry["id"] for entry in CORPUS])
def test_changes_section_lists_each_change_with_its_category(
    entry: dict[str, Any], tmp_path: Path
) -> None:
    folders = {}
    for side in ("old", "new"):
        for name, document in (entry.get(f"{side}_files") or {}).items():
            (tmp_path / side / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / side / name).write_text(json.dumps(document), encoding="utf-8")
        folders[side] = _spec(tmp_path / side, entry[side])
    contract = load_contract(folders["new"]).contract
    assert contract is not None
    html = render_docs(contract, folders["new"], str(folders["old"]))
    rows = re.findall(
        r'<tr class="sev-(\w+)">\n<td>.*?</td>\n<td>(.*?)</td>.*?'
        r'<code class="rule">(\w+)</code>',
        html,
        re.DOTALL,
    )
    shown = {
        (rule, severity, None if category == "–" else category) for severity, category, rule in rows
    }
    for rule, severity, category in entry["expect"]:
        assert (rule, severity, category) in shown
    order = [{"breaking": 0, "warning": 1, "compatible": 2}[severity] for severity, _, _ in rows]
    assert order == sorted(order)  # breaking first


def test_breaking_rows_strictest_category_first(tmp_path: Path) -> None:
    old = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
    new = json.loads(json.dumps(old))
    new["tools"][2]["task_support"] = "required"  # behavior, on alerts.search: sorts first
    new["tools"][0]["parameters"][1]["maximum"] = 7  # call
    del new["tools"][1]  # source
    for side, document in (("old", old), ("new", new)):
        shutil.copytree(WEATHER.parent / "schemas", tmp_path / side / "schemas")
        _spec(tmp_path / side, document)
    report = diff_files(tmp_path / "old" / "tools.yaml", tmp_path / "new" / "tools.yaml")
    summary = change_rows(report, {"get_forecast"})
    breaking = [row.category for row in summary.rows if row.severity == "breaking"]
    assert breaking[0] == "source" and breaking[-1] == "behavior" and "call" in breaking
    removed = next(row for row in summary.rows if row.rule == "TOOL_REMOVED")
    assert removed.tool == "current_temperature" and not removed.linked


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_against_a_git_ref_and_from_config(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(WEATHER.parent / "schemas", repo / "schemas")
    old = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
    spec = _spec(repo, old)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "v1")
    old["tools"][0]["parameters"][1]["maximum"] = 7
    _spec(repo, old)
    result = _invoke("docs", str(spec), "-o", str(tmp_path / "site"), "--against", "HEAD")
    assert result.exit_code == 0, result.output
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "Changes since <code>HEAD</code>" in html and "PARAM_CONSTRAINT_TIGHTENED" in html
    (repo / "pyproject.toml").write_text(
        '[tool.mcpgen]\nspecs = ["tools.yaml"]\ndocs-output = "site"\ndocs-against = "HEAD"\n',
        encoding="utf-8",
    )
    result = _invoke("docs", cwd=repo)
    assert result.exit_code == 0, result.output
    assert (repo / "site" / "index.html").read_text(encoding="utf-8") == html
    bad = _invoke("docs", str(spec), "-o", str(tmp_path / "x"), "--against", "no-such-ref")
    assert bad.exit_code == 2 and "no-such-ref" in bad.output
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------- CLI


def test_check_mode_and_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "site"
    stale = _invoke("docs", str(WEATHER), "-o", str(out), "--check")
    assert stale.exit_code == 1 and "stale" in stale.output and not out.exists()
    wrote = _invoke("docs", str(WEATHER), "-o", str(out))
    assert wrote.exit_code == 0 and "wrote" in wrote.output and "4 tool(s)" in wrote.output
    again = _invoke("docs", str(WEATHER), "-o", str(out), "--check")
    assert again.exit_code == 0 and "unchanged" in again.output


def test_usage_and_invalid_spec(tmp_path: Path) -> None:
    no_output = _invoke("docs", str(WEATHER), cwd=tmp_path)
    assert no_output.exit_code == 2 and "docs-output" in no_output.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("mcpgen: 1\npackage: x\nserver: {name: x}\ntools: []\n", encoding="utf-8")
    invalid = _invoke("docs", str(broken), "-o", str(tmp_path / "site"))
    assert invalid.exit_code == 1 and "no page written" in invalid.output
    assert not (tmp_path / "site").exists()
    missing = _invoke("docs", str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "site"))
    assert missing.exit_code == 2


def test_several_specs_get_a_folder_each_and_a_symlink_is_replaced(tmp_path: Path) -> None:
    other = _spec(tmp_path / "other", RECURSIVE)
    out = tmp_path / "site"
    (out / "tree_mcp").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    (out / "tree_mcp" / "index.html").symlink_to(victim)
    result = _invoke("docs", str(WEATHER), str(other), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert (out / "weather_mcp" / "index.html").is_file()
    assert not (out / "tree_mcp" / "index.html").is_symlink()
    assert victim.read_text(encoding="utf-8") == "keep"
    one_old_file = _invoke(
        "docs", str(WEATHER), str(other), "-o", str(out), "--against", str(WEATHER)
    )
    assert one_old_file.exit_code == 2 and "compares one SPEC" in one_old_file.output


def test_several_specs_get_a_landing_page_linking_each(tmp_path: Path) -> None:
    other = _spec(tmp_path / "other", RECURSIVE)
    out = tmp_path / "site"
    result = _invoke("docs", str(WEATHER), str(other), "-o", str(out))
    assert result.exit_code == 0, result.output
    landing = (out / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<td class="name"><a href="([^"]+)">([^<]+)</a>', landing)
    assert links == [("weather_mcp/index.html", "Weather"), ("tree_mcp/index.html", "tree")]
    for href, _ in links:
        assert (out / href).is_file()
    assert "default-src 'none'" in landing and "<script" not in landing
    assert "wrote " + str(out / "index.html") + " (2 contract(s))" in result.output
    again = _invoke("docs", str(WEATHER), str(other), "-o", str(out), "--check")
    assert again.exit_code == 0, again.output
    (out / "index.html").write_text("old", encoding="utf-8")
    stale = _invoke("docs", str(WEATHER), str(other), "-o", str(out), "--check")
    assert stale.exit_code == 1 and "index.html is stale" in stale.output


def test_bad_docs_settings_in_pyproject(tmp_path: Path) -> None:
    shutil.copy(WEATHER, tmp_path / "tools.yaml")
    shutil.copytree(WEATHER.parent / "schemas", tmp_path / "schemas")
    (tmp_path / "pyproject.toml").write_text("[tool.mcpgen]\ndocs-output = 3\n", encoding="utf-8")
    result = _invoke("docs", cwd=tmp_path)
    assert result.exit_code == 2 and "docs-output must be a non-empty string" in result.output
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mcpgen]\ndocs-output = "out"\ndocs-against = "old.yaml"\n', encoding="utf-8"
    )
    shutil.copy(WEATHER, tmp_path / "old.yaml")  # a file beside pyproject.toml: a spec, not a ref
    result = _invoke("docs", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "Changes since <code>" in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")


def test_no_parameters_and_inline_data_icons(tmp_path: Path) -> None:
    png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAcCBlCwAAAABJRU5ErkJggg=="
    spec = {
        "mcpgen": 1,
        "package": "p_mcp",
        "server": {"name": "p", "version": "1"},
        "tools": [
            {
                "name": "ping",
                "parameters": [],
                "icons": [
                    {"src": png, "mime_type": "image/png"},
                    {"src": "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="},
                ],
            }
        ],
    }
    html = _page(_spec(tmp_path, spec))
    ping = _section(html, "ping")
    assert "No parameters." in ping and "no other properties" in ping
    assert f'<img class="icon" src="{png}" alt="icon">' in ping  # inline: nothing fetched
    assert '<code class="url">data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=</code>' in ping
    assert "<p><ul" not in html and '<p class="shape">' not in html


def test_no_changes_says_so() -> None:
    contract = load_contract(WEATHER).contract
    assert contract is not None
    html = render_docs(contract, WEATHER, str(WEATHER))
    changes = _section(html, "mcpgen:changes")
    assert "No changes." in changes and ">0 breaking</span>" in changes
    assert 'class="pill changed"' not in html


def _shared_type_specs(tmp_path: Path, tools: int) -> tuple[Path, Path]:
    """OLD and NEW of a contract whose ``tools`` tools all take a shared ``Region``;
    NEW adds one enum value to it."""

    def document(regions: list[str]) -> dict[str, Any]:
        return {
            "mcpgen": 1,
            "package": "shared_mcp",
            "server": {"name": "shared", "version": "1.0.0"},
            "types": {"Region": {"enum": regions}},
            "tools": [
                {
                    "name": f"report_{index:02d}",
                    "parameters": [
                        {"name": "region", "$ref": "#/types/Region"},
                        {"name": "note", "type": "string", "required": False},
                    ],
                }
                for index in range(tools)
            ],
        }

    old = _spec(tmp_path / "old", document(["north", "south"]))
    new = _spec(tmp_path / "new", document(["north", "south", "east"]))
    return old, new


def test_a_shared_type_change_is_one_row_used_by_every_tool(tmp_path: Path) -> None:
    old, new = _shared_type_specs(tmp_path, 20)
    result = _invoke("docs", str(new), "-o", str(tmp_path / "site"), "--against", str(old))
    assert result.exit_code == 0, result.output
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    changes = html[html.index('id="mcpgen:changes"') : html.index('id="mcpgen:tools"')]
    rows = re.findall(r'<tr class="sev-(\w+)">', changes)
    assert rows == ["compatible"]  # one row for one cause, not 20
    assert "used by 20 tools</summary>" in changes and "type Region:" in changes
    assert "PARAM_ENUM_VALUE_ADDED" in changes and "types.Region.enum" in changes
    assert changes.count('<a href="#report_') == 20  # each tool listed, linked
    assert f"Changes since <code>{old}</code>" in changes  # named as the user gave it
    assert changes.index('class="note legend"') < changes.index("<table")  # legend first
    toc = html[: html.index("<main ")]
    assert toc.count('<span class="mark"') == 20  # changed tools marked in the sidebar
    tool = _section(html, "report_03")
    assert re.search(r'<tr class="changed"><td class="name"><a [^>]*><code>region</code>', tool)
    assert re.search(r'<tr><td class="name"><a [^>]*><code>note</code>', tool)  # unchanged


def test_the_same_change_in_unrelated_tools_stays_per_tool(tmp_path: Path) -> None:
    old, new = _shared_type_specs(tmp_path, 2)
    document = yaml.safe_load(new.read_text(encoding="utf-8"))
    document["types"]["Region"]["enum"] = ["north", "south"]
    document["tools"][0]["parameters"][1]["maxLength"] = 5
    document["tools"][1]["parameters"][1]["maxLength"] = 9
    new = _spec(tmp_path / "new", document)
    contract = load_contract(new).contract
    assert contract is not None
    html = render_docs(contract, new, str(old), label="v1.2.0")
    assert "Changes since <code>v1.2.0</code>" in html
    changes = _section(html, "mcpgen:changes")
    assert re.findall(r'<tr class="sev-(\w+)">', changes) == ["breaking", "breaking"]
    assert "used by" not in changes


def test_union_choices_are_named_by_title_or_by_what_tells_them_apart(tmp_path: Path) -> None:
    closing = {
        "type": "object",
        "properties": {"op": {"const": "close"}, "reason": {"type": "string"}},
        "required": ["op"],
    }
    opening = {"type": "object", "properties": {"op": {"enum": ["open"]}}, "required": ["op"]}
    titled = {"title": "By number", "type": "object", "properties": {"n": {"type": "integer"}}}
    document = {
        "mcpgen": 1,
        "package": "union_mcp",
        "server": {"name": "union", "version": "1.0.0"},
        "types": {"Issue": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        "tools": [
            {
                "name": "act",
                "parameters": [{"name": "action", "oneOf": [closing, opening]}],
            },
            {
                "name": "find",
                "parameters": [{"name": "target", "anyOf": [titled, {"$ref": "#/types/Issue"}]}],
            },
        ],
    }
    html = _page(_spec(tmp_path, document))
    act = _section(html, "act")
    assert '<p class="choice"><code>op = &#34;close&#34;</code></p>' in act
    assert '<p class="choice"><code>op = &#34;open&#34;</code></p>' in act
    find = _section(html, "find")
    assert '<p class="choice"><b>By number</b></p>' in find
    assert '<a class="ref" href="#type:Issue">Issue</a>' in find  # a $ref choice: its name


def test_no_parameters_is_one_line_and_articles_fit_the_type(tmp_path: Path) -> None:
    document = {
        "mcpgen": 1,
        "package": "art_mcp",
        "server": {"name": "art", "version": "1.0.0"},
        "types": {"Issue": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "tools": [
            {"name": "ping", "parameters": [], "returns": "result"},
            {
                "name": "get",
                "parameters": [{"name": "n", "type": "integer"}],
                "output_schema": {"$ref": "#/types/Issue"},
            },
        ],
    }
    html = _page(_spec(tmp_path, document))
    ping = _section(html, "ping")
    assert '<div class="oneline" id="ping:input"><b>Parameters:</b> <span class="none">' in ping
    assert ">Parameters</h4>" not in ping
    caller, implementer = ping.split('<details class="impl">')
    assert "passed through" not in caller and "CallToolResult" not in caller
    assert "the server passes it through unchanged" in implementer
    get = _section(html, "get")
    assert '<code>structuredContent</code> is an <a class="ref" href="#type:Issue">' in get


def test_nothing_but_the_skip_link_disappears_when_printed() -> None:
    html = _page()
    css = html[html.index("<style>") : html.index("</style>")]
    printed = css[css.index("@media print") :]
    hidden = re.findall(r"([^{}]+)\{[^}]*display: none", printed)
    assert [selector.strip() for selector in hidden] == [".skip, input.filter"]
    assert "details::details-content { content-visibility: visible;" in printed


def test_navigation_for_many_tools(tmp_path: Path) -> None:
    tools = [
        {"name": name, "description": f"Does {name}. More words that the overview leaves out."}
        for name in ("issues.create", "ping", "issues.close", "pulls.merge", "issues.list")
    ]
    tools[0]["parameters"] = [{"name": "title", "type": "string"}]
    tools[0]["hints"] = {"read_only": False, "destructive": False}
    document = {
        "mcpgen": 1,
        "package": "nav_mcp",
        "server": {"name": "nav", "version": "1.0.0"},
        "tools": tools,
    }
    html = _page(_spec(tmp_path, document))
    toc = html[html.index('<nav class="toc"') : html.index("</nav>")]
    # grouped by prefix, a group where its first tool is; a lone prefix stays alone
    assert re.findall(r'<li data-name="([^"]+)">', toc) == [
        "issues.create", "issues.close", "issues.list", "ping", "pulls.merge"
    ]  # fmt: skip
    assert '<code>issues.*</code> <span class="count">3</span>' in toc
    assert "pulls.*" not in toc
    assert '<details class="toc-list">' in toc  # folded on a phone, open beside the page
    # the sections follow the contents' order
    order = re.findall(r'<section class="card tool" id="([^"]+)">', html)
    assert order == ["issues.create", "issues.close", "issues.list", "ping", "pulls.merge"]
    overview = html[
        html.index('<table class="overview">') : html.index(
            "</table>", html.index('<table class="overview">')
        )
    ]
    assert overview.count("<tr>") == 6  # the head and one row per tool
    assert '<a href="#issues.create"><code>issues.create</code></a>' in overview
    assert "Does issues.create.</td>" in overview and "More words" not in overview
    assert '<span class="pill good">non-destructive</span>' in overview
    # each parameter can be linked to
    create = _section(html, "issues.create")
    assert (
        '<a class="param" id="issues.create:input.title" href="#issues.create:input.title">'
        "<code>title</code></a>"
    ) in create
    assert html.index('<a class="skip" href="#mcpgen:main">') < html.index("<nav")


def test_a_header_parameter_says_its_header(tmp_path: Path) -> None:
    document = {
        "mcpgen": 1,
        "package": "routed_mcp",
        "server": {"name": "routed", "version": "1.0.0"},
        "tools": [
            {
                "name": "route",
                "parameters": [
                    {"name": "region", "type": "string", "header": "Region"},
                    {"name": "query", "type": "string"},
                ],
            }
        ],
    }
    route = _section(_page(_spec(tmp_path, document)), "route")
    assert route.count("also sent as the HTTP header <code>Mcp-Param-Region</code>") == 1


def test_a_result_of_any_type_says_how_each_revision_carries_it(tmp_path: Path) -> None:
    document = {
        "mcpgen": 1,
        "package": "anyres_mcp",
        "server": {"name": "anyres", "version": "1.0.0"},
        "tools": [
            {"name": "names", "output_schema": {"type": "array", "items": {"type": "string"}}},
            {"name": "record", "output_schema": {"type": "object", "properties": {}}},
        ],
    }
    html = _page(_spec(tmp_path, document))
    names, record = _section(html, "names"), _section(html, "record")
    assert "holds this value" in names and "array of" in names
    assert "at 2026-07-28 <code>structuredContent</code> is the value itself" in names
    assert "# result: NamesOutput (a type alias)" in names
    assert "is the value itself" not in record and "(a pydantic model)" in record
