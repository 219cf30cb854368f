"""``mcpgen import`` against real servers, end to end (issue 12): import → build →
``mypy --strict`` → strict connect with zero contract warnings → typed calls equal to
the official SDK client's → a server generated from the import re-lists exactly the
original's ``tools/list``, in every era both speak.

Servers: ``mcp-server-time`` and ``mcp-server-git`` (PyPI, dev extra); from npm
(``make npm-tools``) ``server-everything``, ``server-filesystem`` (on a temporary
directory), ``server-memory`` and ``server-sequential-thinking``; and two fixture
servers, one written with FastMCP (``MCPServer``) from the ``mcp`` package and one
with the TypeScript SDK (tests/fixtures/import/). One import and one build per server
(module-scoped); one mypy run over all generated packages.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import import_package

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen_runtime import Session

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
NPM = ROOT / "node_modules" / "@modelcontextprotocol"
FIXTURES = ROOT / "tests" / "fixtures" / "import"
SDK_CLIENT = ROOT / "tests" / "fixtures" / "ts_sdk_client.mjs"
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
TREE = {
    "label": "a",
    "owner": {"name": "ann"},
    "children": [{"label": "b", "owner": {"name": "bob"}}, {"label": "c"}],
}

SERVERS = ["time", "git", "everything", "filesystem", "memory", "sequential", "fastmcp", "ts"]


@dataclass
class Server:
    name: str
    command: list[str]
    env: dict[str, str] | None
    calls: list[tuple[str, dict[str, Any]]]  # (wire name, arguments)


def _npm(package: str, *args: str) -> list[str]:
    manifest = NPM / package / "package.json"
    node = shutil.which("node")
    if node is None or not manifest.is_file():
        pytest.skip(
            f"node or the npm package @modelcontextprotocol/{package} is missing (make npm-tools)"
        )
    entry = next(iter(json.loads(manifest.read_text())["bin"].values()))
    return [node, str(NPM / package / entry), *args]


def _pypi(script: str) -> str:
    if not (BIN / script).exists():
        pytest.skip(f"{script} is not installed (pip install -e '.[dev]')")
    return str(BIN / script)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("import_real")
    repo = root / "repo"
    repo.mkdir()
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
    (root / "files").mkdir()
    (root / "files" / "note.txt").write_text("one\ntwo\n")
    return root


def _server(name: str, root: Path) -> Server:
    files = str(root / "files")
    if name == "time":
        return Server(
            name,
            [_pypi("mcp-server-time")],
            None,
            [
                (
                    "convert_time",
                    {
                        "source_timezone": "Europe/Paris",
                        "time": "12:00",
                        "target_timezone": "Asia/Tokyo",
                    },
                )
            ],
        )
    if name == "git":
        repo = str(root / "repo")
        return Server(
            name,
            [_pypi("mcp-server-git"), "--repository", repo],
            None,
            [("git_status", {"repo_path": repo}), ("git_log", {"repo_path": repo, "max_count": 1})],
        )
    if name == "everything":
        return Server(
            name,
            _npm("server-everything", "stdio"),
            None,
            [
                ("echo", {"message": "héllo"}),
                ("get-sum", {"a": 2, "b": 3}),
                ("get-structured-content", {"location": "New York"}),
            ],
        )
    if name == "filesystem":
        return Server(
            name,
            _npm("server-filesystem", files),
            None,
            [
                ("list_allowed_directories", {}),
                ("read_text_file", {"path": f"{files}/note.txt", "head": 1}),
            ],
        )
    if name == "memory":
        env = {**os.environ, "MEMORY_FILE_PATH": str(root / "memory.jsonl")}
        return Server(name, _npm("server-memory"), env, [("read_graph", {})])
    if name == "sequential":
        return Server(
            name,
            _npm("server-sequential-thinking"),
            None,
            [
                (
                    "sequentialthinking",
                    {
                        "thought": "first",
                        "nextThoughtNeeded": False,
                        "thoughtNumber": 1,
                        "totalThoughts": 1,
                    },
                )
            ],
        )
    if name == "fastmcp":
        return Server(
            name,
            [sys.executable, str(FIXTURES / "fastmcp_server.py")],
            None,
            [
                ("greet", {"name": "Ann"}),
                ("search", {"query": "q", "tag": "t"}),
                ("midpoint", {"a": {"x": 0, "y": 0}, "b": {"x": 2, "y": 4}}),
            ],
        )
    node = shutil.which("node")
    if node is None or not (NPM / "sdk" / "package.json").is_file():
        pytest.skip("node or the npm package @modelcontextprotocol/sdk is missing (make npm-tools)")
    return Server(
        name,
        [node, str(FIXTURES / "ts_sdk_server.mjs")],
        None,
        [
            ("snapshot", {"caption": "c"}),
            ("stats", {"words": ["a", "bcd"]}),
            ("count_nodes", {"root": TREE}),
            ("owners", {"root": TREE}),
        ],
    )


@dataclass
class Imported:
    server: Server
    spec: Path
    gen: Path
    package: str
    output: str
    eras: list[str]  # the eras the server speaks: "legacy", "modern"


@pytest.fixture(scope="module")
def imported(workdir: Path) -> Callable[[str], Imported]:
    """Import and build a server once per module, on first use."""
    done: dict[str, Imported] = {}

    def get(name: str) -> Imported:
        if name not in done:
            server = _server(name, workdir)
            folder = workdir / f"import_{name}"
            folder.mkdir()
            spec = folder / "tools.yaml"
            package = f"real_{name}"
            old_env = dict(os.environ)
            if server.env is not None:
                os.environ.update(server.env)  # the import starts the server with ours
            try:
                result = CliRunner().invoke(
                    main, ["import", "-o", str(spec), "--package", package, "--", *server.command]
                )
            finally:
                os.environ.clear()
                os.environ.update(old_env)
            assert result.exit_code == 0, result.output
            built = build_spec(spec, output=folder / "gen" / package)
            assert built.ok, [str(d) for d in built.diagnostics]
            done[name] = Imported(
                server, spec, folder / "gen", package, result.output, _eras(server)
            )
        return done[name]

    return get


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest, imported: Callable[[str], Imported]) -> Iterator[Any]:
    item = imported(request.param)
    with import_package(item.gen, item.package) as module:
        yield item, module


def _client_class(package: Any) -> Any:
    return next(
        getattr(package, a)
        for a in package.__all__
        if a.endswith("Client") and not a.startswith("Async")
    )


def test_a_fresh_import_has_no_differs_comments(server: Any) -> None:
    item, _ = server
    text = item.spec.read_text()
    assert "# differs" not in text and "slightly different" not in item.output


def test_strict_connect_gives_zero_contract_warnings(server: Any) -> None:
    item, module = server
    with _client_class(module).stdio(
        item.server.command, env=item.server.env, verify="strict"
    ) as client:
        assert client.session.contract_warnings == []
    for era in item.eras:  # each era the server speaks
        with _client_class(module).stdio(
            item.server.command, env=item.server.env, verify="strict", protocol=era
        ) as client:
            assert client.session.contract_warnings == [], era


def _eras(server: Server) -> list[str]:
    from mcpgen_runtime._errors import McpError

    spoken = []
    for era in ("legacy", "modern"):
        with (
            contextlib.suppress(McpError),
            Session.stdio(  # McpError: this era is not spoken
                server.command, env=server.env, verify="off", protocol=era
            ),
        ):
            spoken.append(era)
    return spoken


def _plain(value: Any) -> Any:
    """A typed method's value as JSON (a model dumped as it came)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return value


def test_typed_calls_equal_the_official_sdk_clients(server: Any) -> None:
    item, module = server
    srv = item.server
    plan = {
        "command": srv.command[0],
        "args": srv.command[1:],
        "env": srv.env or dict(os.environ),
        "calls": [[tool, args] for tool, args in srv.calls],
    }
    sdk = json.loads(
        subprocess.run(
            ["node", str(SDK_CLIENT), json.dumps(plan)],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )
    outputs = {tool["name"]: "outputSchema" in tool for tool in module.contract.TOOLS}
    with _client_class(module).stdio(srv.command, env=srv.env, verify="strict") as client:
        for (tool, args), expected in zip(srv.calls, sdk["calls"], strict=True):
            assert "result" in expected, expected
            method = getattr(client, tool.replace("-", "_").replace(".", "_"))
            got = _plain(method(**{k.replace("-", "_"): v for k, v in args.items()}))
            want = expected["result"]
            if outputs[tool]:
                assert got == want["structuredContent"], tool
            else:  # returns: result — everything the server sent
                assert got == {k: v for k, v in want.items() if k != "isError"}, tool


_IMPL = """
import sys
import {package} as pkg
cls = next(getattr(pkg, a) for a in pkg.__all__ if a.endswith("Server"))
def stub(self, *args, **kwargs):
    raise NotImplementedError
Impl = type("Impl", (cls,), {{name: stub for name in cls.__abstractmethods__}})
pkg.serve(Impl())
"""


def test_a_server_generated_from_the_import_relists_the_original(server: Any) -> None:
    item, _ = server
    srv = item.server
    generated = [sys.executable, "-c", textwrap.dedent(_IMPL.format(package=item.package))]
    env = {**(srv.env or os.environ), "PYTHONPATH": str(item.gen)}
    assert item.eras
    for era in item.eras:
        with Session.stdio(srv.command, env=srv.env, verify="off", protocol=era) as session:
            original = [tool.raw for tool in session.list_tools()]
        with Session.stdio(generated, env=env, verify="off", protocol=era) as session:
            relisted = [tool.raw for tool in session.list_tools()]
        assert [t["name"] for t in relisted] == [t["name"] for t in original], era
        for got, want in zip(relisted, original, strict=True):
            assert got == want, (era, want["name"])
            assert list(got["inputSchema"].get("properties", {})) == list(
                want["inputSchema"].get("properties", {})
            )


def test_generated_packages_pass_mypy_strict(imported: Callable[[str], Imported]) -> None:
    items = [imported(name) for name in SERVERS]
    env = {**os.environ, "MYPYPATH": os.pathsep.join(str(i.gen) for i in items)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            *[arg for i in items for arg in ("-p", i.package)],
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
