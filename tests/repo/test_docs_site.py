"""The documentation site (mkdocs.yml, docs/): it builds with warnings as errors, every
link in it resolves, and every code block in it is tested, generated, or says why not.

The documents are the pages of docs/ and the root files the site shows (README.md as the
home page, CONTRIBUTING.md, CHANGELOG.md, SECURITY.md; docs/hooks.py). Links are checked
here as GitHub reads them, relative to the file, anchors by GitHub's slugs; the strict
build checks them again as the site reads them. Code blocks, by their info string:
``yaml``, ``json`` and ``toml`` parse (a spec passes ``mcpgen validate``, a
``[tool.mcpgen]`` table loads, a command in a YAML value resolves); ``python`` compiles
and its imports name what the package exports (the weather example and the quickstart's
project are built for it), the quickstart's implementation is what ``mcpgen init``
writes; ``sh`` and ``console`` command lines of ``mcpgen`` and of a generated package's
``python -m`` parse against the real command line, without running; ``text`` blocks are
checked against what mcpgen generates where ``GENERATED`` lists a check (blocks of the
other kinds may have one too), else carry an HTML comment ``<!-- not tested: reason -->``
and appear in ``EXCEPTIONS``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from mcpgen.cli import main as mcpgen_cli
from mcpgen.config import ConfigError, load_config
from mcpgen_runtime import ResultMismatch
from mcpgen_runtime.client.results import ResultConverter

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _hook_included() -> dict[str, str]:
    """docs/hooks.py's INCLUDED: a stand-in page of docs/ -> the root file it shows."""
    spec = importlib.util.spec_from_file_location("mcpgen_docs_hooks", DOCS / "hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.INCLUDED)


INCLUDED = _hook_included()
SITE_ROOT_FILES = tuple(INCLUDED.values())
STAND_INS = tuple(INCLUDED)

# (document, reason): every block that is not tested, with the reason its comment gives
EXCEPTIONS = {
    ("CONTRIBUTING.md", "sample output of `make demo` (examples/weather/demo.py), which the suite does not run"),
    ("docs/architecture.md", "a diagram of the pipeline, not code"),
    ("docs/http.md", "an error message of the OAuth client, shown for its wording"),
    ("docs/architecture.md", "a map of the runtime's modules; tests/repo/test_dotted_paths.py checks it names every one"),
}  # fmt: skip


def documents() -> list[Path]:
    pages = [
        p for p in sorted(DOCS.rglob("*.md")) if p.relative_to(DOCS).as_posix() not in STAND_INS
    ]
    return [*(ROOT / name for name in SITE_ROOT_FILES), *pages]


def name_of(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- the build --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_site_builds_strict_with_every_page(site: Path) -> None:
    """Strict: a warning (a broken link or anchor, a page left out of the nav) fails the
    build; every page of docs/ is in the site, the home page is the README."""
    for page in sorted(DOCS.rglob("*.md")):
        stem = page.relative_to(DOCS).with_suffix("").as_posix()
        built = site / "index.html" if stem == "index" else site / stem / "index.html"
        assert built.is_file(), stem
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Write your MCP tools once" in home
    assert 'href="spec/#the-three-callback-shapes"' in home  # docs/spec.md, for the site
    contributing = (site / "contributing" / "index.html").read_text(encoding="utf-8")
    assert "Checks every change keeps green" in contributing


def test_the_site_fetches_nothing(site: Path) -> None:
    """Offline: no web font, no analytics, no script or style from another host."""
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page
        assert not re.search(r"<(script|link)[^>]+(src|href)=\"https?://", text), page


def test_links_out_of_docs_become_text(site: Path) -> None:
    """The site publishes docs/ only: a link to another file of the repository keeps
    its text and loses its target (the link test below checks the file exists)."""
    spec = (site / "spec" / "index.html").read_text(encoding="utf-8")
    assert "The full example is examples/weather/tools.yaml" in spec
    assert "examples/weather/tools.yaml</a>" not in spec


# -- links ------------------------------------------------------------------------------

LINK = re.compile(r"!?\[([^\]\n]*)\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+).*?\1")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")


def prose_lines(text: str, *, spans: bool = False) -> Iterator[tuple[int, str]]:
    """The lines outside fenced code, with code spans blanked out unless ``spans``."""
    fence = ""
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match and (not fence or match.group("fence").startswith(fence)):
            fence = "" if fence else match.group("fence")
            continue
        if not fence:
            yield number, line if spans else CODE_SPAN.sub("", line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    return re.sub(r"[^\w\- ]", "", text.replace("`", "").lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8"), spans=True):
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            base = slug(heading.group(1))
            found.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    return found


def broken_links(path: Path) -> list[str]:
    """Every relative link of ``path`` whose file or heading anchor does not exist."""
    text = path.read_text(encoding="utf-8")
    out = []
    for number, line in prose_lines(text):
        for match in LINK.finditer(line):
            target = match.group(2)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:: not ours to check offline
            file, _, anchor = target.partition("#")
            where = (path.parent / file).resolve() if file else path
            if not where.exists():
                out.append(f"{path.name}:{number}: {target}: no such file")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                out.append(f"{path.name}:{number}: {target}: no such heading")
    return out


@pytest.mark.parametrize("path", documents(), ids=name_of)
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## The runtime: `mcpgen-runtime`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#the-runtime-mcpgen-runtime) [ok](#page) `[code](nowhere.md)`\n"
        "[gone](missing.md) [wrong](other.md#the-runtime) [self](#nope)\n"
        "```\n[in a block](nowhere.md)\n```\n"
    )
    assert broken_links(page) == [
        "page.md:4: missing.md: no such file",
        "page.md:4: other.md#the-runtime: no such heading",
        "page.md:4: #nope: no such heading",
    ]


def test_the_readme_is_a_front_door() -> None:
    """Under 200 lines: what mcpgen is, install, the quickstart, and links to the manual,
    one link to each page of docs/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    linked = {
        m.group(2).partition("#")[0] for _, line in prose_lines(readme) for m in LINK.finditer(line)
    }
    pages = {f"docs/{p.relative_to(DOCS).as_posix()}" for p in DOCS.rglob("*.md")}
    assert pages - {f"docs/{s}" for s in STAND_INS} <= linked


# -- code blocks ------------------------------------------------------------------------

UNTESTED = re.compile(r"^\s*<!-- not tested: (.+?) -->\s*$")
KINDS = ("yaml", "json", "toml", "python", "sh", "console", "text")


@dataclass(frozen=True)
class Block:
    document: str
    line: int
    info: str
    text: str
    untested: str | None  # the reason its comment gives

    @property
    def id(self) -> str:
        return f"{self.document}:{self.line}:{self.info}"


def blocks_in(path: Path) -> Iterator[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = len(opening.group("indent")), opening.group("fence")
        end = index + 1
        while not re.match(rf"^[ \t]*{re.escape(fence)}\s*$", lines[end]):
            end += 1
        before = next((line for line in reversed(lines[:index]) if line.strip()), "")
        reason = UNTESTED.match(before)
        body = "".join(line[indent:] + "\n" for line in lines[index + 1 : end])
        info = opening.group("info").strip()
        yield Block(name_of(path), index + 1, info, body, reason.group(1) if reason else None)
        index = end + 1


def all_blocks() -> list[Block]:
    return [block for path in documents() for block in blocks_in(path)]


def of_kind(*kinds: str) -> list[Block]:
    return [b for b in all_blocks() if b.info in kinds and b.untested is None]


def test_every_block_is_of_a_known_kind_and_the_exceptions_are_listed() -> None:
    blocks = all_blocks()
    assert len(blocks) > 30  # the reader reads the documents
    assert [b.id for b in blocks if b.info not in KINDS] == []
    untested = {(b.document, b.untested) for b in blocks if b.untested}
    assert untested == EXCEPTIONS
    text = [b for b in blocks if b.info == "text" and b.untested is None]
    assert [b.id for b in text if not any(matches(key, b) for key in GENERATED)] == []


@pytest.mark.parametrize("block", of_kind("yaml", "json", "toml"), ids=lambda b: b.id)
def test_data_blocks_parse(block: Block) -> None:
    {"yaml": yaml.safe_load, "json": json.loads, "toml": tomllib.loads}[block.info](block.text)


def test_the_spec_blocks_validate(tmp_path: Path) -> None:
    """A YAML block that is a spec (``mcpgen:`` at its root) passes ``mcpgen validate``;
    the schema file the spec's example names is written beside it, as its comment says."""
    specs = [b for b in of_kind("yaml") if "mcpgen" in (yaml.safe_load(b.text) or {})]
    assert specs
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "region.json").write_text('{"enum": ["north", "south"]}')
    for block in specs:
        (tmp_path / "tools.yaml").write_text(block.text, encoding="utf-8")
        done = CliRunner().invoke(mcpgen_cli, ["validate", str(tmp_path / "tools.yaml")])
        assert done.exit_code == 0, (block.id, done.output)


def test_the_tool_mcpgen_tables_load(tmp_path: Path) -> None:
    """A ``[tool.mcpgen]`` table in the docs has only keys and values mcpgen reads."""
    tables = [b for b in of_kind("toml") if "mcpgen" in tomllib.loads(b.text).get("tool", {})]
    assert tables
    for block in tables:
        (tmp_path / "pyproject.toml").write_text(block.text, encoding="utf-8")
        try:
            assert load_config(tmp_path / "pyproject.toml") is not None
        except ConfigError as exc:
            raise AssertionError(f"{block.id}: {exc}") from exc


def test_python_blocks_compile() -> None:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # `async with` as in a REPL
    for block in of_kind("python"):
        compile(block.text, block.id, "exec", flags=flags)


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packages the docs' Python imports: the weather example's and the quickstart's
    (``mcpgen init`` in a folder named notes, then ``mcpgen build``), built for real."""
    where = tmp_path_factory.mktemp("packages")
    runner = CliRunner()
    weather = ROOT / "examples" / "weather" / "tools.yaml"
    done = runner.invoke(mcpgen_cli, ["build", str(weather), "-o", str(where / "weather_mcp")])
    assert done.exit_code == 0, done.output
    done = runner.invoke(mcpgen_cli, ["init", str(where / "notes")])
    assert done.exit_code == 0, done.output
    done = runner.invoke(mcpgen_cli, ["build", str(where / "notes" / "tools.yaml")])
    assert done.exit_code == 0, done.output
    return where


def imported_names(block: Block) -> Iterator[tuple[str, str]]:
    tree = compile(
        block.text, block.id, "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield from ((node.module, alias.name) for alias in node.names)


def test_python_imports_name_what_the_packages_export(packages: Path) -> None:
    """Every ``from X import name`` of the docs finds ``name`` in X: mcpgen's, the
    runtime's, and the generated weather and notes packages (imported in a child process,
    where the built packages come first on the path)."""
    wanted = sorted({pair for block in of_kind("python") for pair in imported_names(block)})
    assert {module.split(".")[0] for module, _ in wanted} >= {"weather_mcp", "notes_mcp", "mcpgen"}
    script = (
        "import importlib, json, sys\n"
        "missing = [f'{m}.{n}' for m, n in json.loads(sys.argv[1])\n"
        "           if not hasattr(importlib.import_module(m), n)]\n"
        "print(json.dumps(missing))\n"
    )
    path = os.pathsep.join(
        [str(packages), str(packages / "notes"), os.environ.get("PYTHONPATH", "")]
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(wanted)],
        cwd=packages,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_quickstart_implementation_is_what_init_writes(packages: Path) -> None:
    """The README's implementation of the notes tools is the one ``mcpgen init`` writes
    (the newcomer test runs it and type-checks it)."""
    (quickstart,) = [b for b in of_kind("python") if b.document == "README.md"]
    assert quickstart.text in (packages / "notes" / "notes_impl.py").read_text(encoding="utf-8")


def _init_files(block: Block, packages: Path) -> None:
    for line in block.text.splitlines():
        assert (packages / "notes" / line.split()[0]).exists(), line


def _package_tree(block: Block, packages: Path) -> None:
    """A tree of what mcpgen writes (the weather package, the notes project): each
    entry is there after ``mcpgen build`` (and ``mcpgen init``)."""
    root, *files = block.text.splitlines()
    for line in files:
        assert (packages / root / line.split()[0]).exists(), line


def _source_tree(block: Block, packages: Path) -> None:
    """CONTRIBUTING.md's map of the source: every path it starts a line with exists."""
    paths = [line.split()[0] for line in block.text.splitlines() if not line.startswith(" ")]
    assert len(paths) > 10
    assert [p for p in paths if not list(ROOT.glob(p.rstrip("/")))] == []


def _test_tree(block: Block, packages: Path) -> None:
    """CONTRIBUTING.md's map of the test tree: each folder it names exists and every folder
    of tests/ holding test files is named; ``tests/runtime/<part>/`` stands for the
    folders of tests/runtime/, each named after a subpackage of the runtime."""
    named = {line.split()[0].rstrip("/") for line in block.text.splitlines() if line[:1] != " "}
    assert [n for n in named if "<" not in n and not (ROOT / n).is_dir()] == []
    tests = ROOT / "tests"
    holding = {
        path.parent.relative_to(ROOT).as_posix()
        for path in tests.rglob("test_*.py")
        if not {"fixtures", "golden"} & set(path.relative_to(tests).parts)
    }
    parts = {h for h in holding if h.startswith("tests/runtime/") and h.count("/") == 2}
    runtime = ROOT / "runtime" / "mcpgen_runtime"
    assert {h.rsplit("/", 1)[1] for h in parts} <= {p.name for p in runtime.iterdir() if p.is_dir()}
    assert sorted(holding - parts - named) == []


# the spec whose diagnostics docs/spec.md shows
MISSPELLED = """\
mcpgen: 1
package: notes_mcp
server:
  name: notes
  versoin: "1"
tools:
  - name: add
    parameters:
      - name: a
        description: the first
        type: strng
      - name: b
        type: integer
        minimum: 1
        default: 0
      - name: c
        $ref: "#/types/Nope"
"""
# the two specs docs/contract-diff.md compares
DIFF_OLD = """\
mcpgen: 1
package: demo_mcp
server: {name: demo, version: "1.0"}
tools:
  - name: add
    description: Add two numbers.
    parameters:
      - {name: a, type: integer}
      - {name: b, type: integer}
  - name: get-forecast
    hints: {read_only: true}
    parameters:
      - {name: city, type: string}
"""
DIFF_NEW = """\
mcpgen: 1
package: demo_mcp
server: {name: demo, version: "1.1"}
tools:
  - name: add
    description: Add two integers.
    parameters:
      - {name: a, type: integer}
      - {name: b, type: integer}
      - {name: c, type: integer, required: false}
  - name: get-forecast
    hints: {read_only: false}
    parameters:
      - {name: city, type: string}
      - {name: when, type: string}
"""


def _mcpgen_output(files: dict[str, str], *argv: str) -> list[str]:
    """What ``mcpgen ARGV`` prints in a folder holding ``files`` (paths as typed)."""
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        for name, text in files.items():
            Path(name).write_text(text, encoding="utf-8")
        return CliRunner().invoke(mcpgen_cli, list(argv)).output.splitlines()


def _diagnostics(block: Block, packages: Path) -> None:
    printed = _mcpgen_output({"tools.yaml": MISSPELLED}, "validate", "tools.yaml")
    assert block.text.splitlines() == printed[:-1], printed  # all but the count


def _diff_output(block: Block, packages: Path) -> None:
    files = {"old.yaml": DIFF_OLD, "new.yaml": DIFF_NEW}
    assert block.text.splitlines() == _mcpgen_output(files, "diff", "old.yaml", "new.yaml")


def _result_mismatch(block: Block, packages: Path) -> None:
    schema = {"type": "object", "properties": {"number": {"type": "integer"}}}
    converter = ResultConverter([{"name": "get_issue", "outputSchema": schema}])
    with pytest.raises(ResultMismatch) as caught:
        converter.structured("get_issue", {"structuredContent": {"number": "one"}}, dict)
    assert block.text == f"ResultMismatch: {caught.value}\n"


def _server_json(block: Block, packages: Path) -> None:
    """The weather example as a project of its own (``[project] name = "weather-mcp"``,
    a registry name and description in the spec, the README's ``mcp-name:`` line):
    ``mcpgen build --emit server.json`` writes the document the page shows."""
    weather = ROOT / "examples" / "weather"
    spec = (weather / "tools.yaml").read_text(encoding="utf-8")
    name = "io.github.example/weather"
    spec = spec.replace(
        "  title: Weather\n",
        f"  title: Weather\n  registry_name: {name}\n"
        "  description: Multi-day forecasts and current temperatures for a city.\n",
    )
    files = {
        "tools.yaml": spec,
        "weather_impl.py": (weather / "weather_impl.py").read_text(encoding="utf-8"),
        "pyproject.toml": '[project]\nname = "weather-mcp"\nversion = "1.4.0"\nreadme = "README.md"\n',
        "README.md": f"# weather\n\n<!-- mcp-name: {name} -->\n",
    }
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        Path(".git").mkdir()
        shutil.copytree(weather / "schemas", "schemas")
        for file, text in files.items():
            Path(file).write_text(text, encoding="utf-8")
        done = CliRunner().invoke(mcpgen_cli, ["build", "--emit", "server.json", "tools.yaml"])
        assert done.exit_code == 0, done.output
        assert json.loads(block.text) == json.loads(Path("server.json").read_text("utf-8"))


def _host_entry(block: Block, packages: Path) -> None:
    """What ``mcpgen config json`` prints for the quickstart's project, the interpreter
    and the folder named as on the page."""
    with contextlib.chdir(packages / "notes"):
        done = CliRunner().invoke(mcpgen_cli, ["config", "json", "tools.yaml"])
    assert done.exit_code == 0, done.output
    printed = done.output.replace(sys.executable, "/home/you/notes/.venv/bin/python")
    printed = printed.replace(str(packages / "notes"), "/home/you/notes")
    assert json.loads(block.text) == json.loads(printed)


def _precommit_config(block: Block, packages: Path) -> None:
    """The ``.pre-commit-config.yaml`` ``mcpgen init`` writes."""
    written = (packages / "notes" / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(block.text) == yaml.safe_load(written)


def _precommit_hooks(block: Block, packages: Path) -> None:
    """The hook ids a consumer's config names are the repository's own hooks."""
    ours = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    named = {hook["id"] for repo in yaml.safe_load(block.text)["repos"] for hook in repo["hooks"]}
    assert named and named <= ours
    assert {"mcpgen-check", "mcpgen-build", "mcpgen-docs"} <= ours  # the three the page names


# blocks checked against what mcpgen generates: (document, a line of the block) -> check
GENERATED: dict[tuple[str, str], Callable[[Block, Path], None]] = {
    ("README.md", "tools.yaml                     the contract: two starter tools, greet and add"): _init_files,
    ("docs/generated-package.md", "weather_mcp/"): _package_tree,
    ("docs/getting-started.md", "notes/"): _package_tree,
    ("CONTRIBUTING.md", "mcpgen/spec/      front end: YAML with positions, checks, $ref bundling, lowering to the IR"): _source_tree,
    ("CONTRIBUTING.md", "tests/interop/            official SDKs (Python, TypeScript), the Inspector, the conformance suite"): _test_tree,
    ("docs/generated-package.md", "ResultMismatch: the result of tool 'get_issue' does not fit its output schema: number: expected integer, got 'one'"): _result_mismatch,
    ("docs/spec.md", "tools.yaml:5:3: server.versoin: unknown key 'versoin' (did you mean 'version'?); expected one of: name, version, title, instructions, implementation, registry_name, scopes, description, environment"): _diagnostics,
    ("docs/contract-diff.md", "old.yaml -> new.yaml"): _diff_output,
    ("docs/deploying.md", '  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",'): _server_json,
    ("docs/getting-started.md", '  "mcpServers": {'): _host_entry,
    ("docs/workflow.md", "        entry: mcpgen build --check"): _precommit_config,
    ("docs/workflow.md", "      - id: mcpgen-check                # or mcpgen-build"): _precommit_hooks,
}  # fmt: skip


def matches(key: tuple[str, str], block: Block) -> bool:
    return block.document == key[0] and key[1] in block.text.splitlines()


def test_blocks_match_what_mcpgen_generates(packages: Path) -> None:
    """Each listed block is found once and is what mcpgen writes or prints."""
    blocks = all_blocks()
    for key, check in GENERATED.items():
        (block,) = [b for b in blocks if matches(key, b)]
        check(block, packages)


def command_lines(block: Block) -> Iterator[list[str]]:
    """The commands of a shell block, as argv lists: ``console`` blocks only the lines
    after ``$ ``, ``sh`` every line; continuations joined, comments and ``&&`` split."""
    text = block.text.replace("\\\n", " ")
    for line in text.splitlines():
        if block.info == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        command: list[str] = []
        for word in shlex.split(line, comments=True):
            if word in ("&&", "||", ";", "|"):
                yield command
                command = []
            else:
                command.append(word)
        if command:
            yield command


def mcpgen_usage_error(argv: list[str]) -> str | None:
    """Parse an ``mcpgen …`` command line against the real click commands, without
    running it: a misspelled command or option, a missing or extra argument, a bad choice."""
    if len(argv) < 2:
        return None
    command = mcpgen_cli.get_command(click.Context(mcpgen_cli), argv[1])
    if command is None:
        return f"no command {argv[1]!r}"
    try:
        with command.make_context(f"mcpgen {argv[1]}", argv[2:]):
            pass
    except click.ClickException as exc:
        return exc.format_message()
    return None


def yaml_commands(value: object) -> Iterator[str]:
    """String values of a YAML document that run mcpgen (``run:``, ``entry:``)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from yaml_commands(item)
    elif isinstance(value, list):
        for item in value:
            yield from yaml_commands(item)
    elif isinstance(value, str) and value.startswith("mcpgen "):
        yield re.sub(r"\$\{\{[^}]*\}\}", "X", value)  # a GitHub Actions expression


def test_mcpgen_command_lines_parse() -> None:
    commands = [(b.id, argv) for b in of_kind("sh", "console") for argv in command_lines(b)]
    commands += [
        (b.id, shlex.split(line))
        for b in of_kind("yaml")
        for line in yaml_commands(yaml.safe_load(b.text))
    ]
    ours = [(where, argv) for where, argv in commands if argv[0] == "mcpgen"]
    assert len(ours) > 15
    wrong = [(where, argv, mcpgen_usage_error(argv)) for where, argv in ours]
    assert [w for w in wrong if w[2]] == []


def test_a_wrong_mcpgen_command_line_is_caught() -> None:
    assert mcpgen_usage_error(["mcpgen", "buidl"]) == "no command 'buidl'"
    assert "--chek" in str(mcpgen_usage_error(["mcpgen", "build", "--chek"]))
    assert mcpgen_usage_error(["mcpgen", "diff", "--category", "sauce"])
    assert mcpgen_usage_error(["mcpgen", "build", "--check", "--format", "github"]) is None


def test_generated_package_command_lines_use_real_options(packages: Path) -> None:
    """``python -m weather_mcp …`` and ``python -m notes_mcp …`` lines name options the
    generated entry point has (read from its ``--help``)."""
    done = subprocess.run(
        [sys.executable, "-m", "weather_mcp", "--help"],
        cwd=packages,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    known = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", done.stdout))
    assert {"--transport", "--task-store", "--workers"} <= known
    used = [
        (b.id, word.split("=")[0])
        for b in of_kind("sh", "console")
        for argv in command_lines(b)
        if argv[:2] == ["python", "-m"] and argv[2] in ("weather_mcp", "notes_mcp")
        for word in argv[3:]
        if word.startswith("--")
    ]
    assert len(used) > 5
    assert [(where, option) for where, option in used if option not in known] == []
