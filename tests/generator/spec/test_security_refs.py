"""No check of mcpgen retrieves a reference, and patterns cost bounded time.

A spec (or a server being imported) is untrusted input. Before, checking a
parameter's ``default`` built a jsonschema validator with the library's default
registry, which fetched ``http://`` and read ``file://`` references (even those the
bundler had refused), echoed the files' contents in diagnostics, read ``/dev/zero``
without end and hung on a FIFO; ``pattern`` ran on Python's backtracking ``re``.
"""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.importer import ImportFailed, spec_from_tools
from mcpgen.spec.load import load_contract

SPEC = """\
mcpgen: 1
package: refs_mcp
output: out
server: {{name: refs, version: 1.0.0}}
tools:
  - name: t
    description: d
    parameters:
{parameters}
"""


class _Listener(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string", "const": "fetched"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that records every request it gets."""
    hits: list[str] = []
    handler = type("Handler", (_Listener,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def write(folder: Path, parameters: str) -> Path:
    spec = folder / "tools.yaml"
    spec.write_text(SPEC.format(parameters=parameters), encoding="utf-8")
    return spec


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def hostile_parameters(base: str) -> list[str]:
    """Parameters whose default check would follow ``base`` (remote or file)."""
    return [
        f'      - {{name: a, default: "x", $ref: "{base}/a.json"}}',
        f'      - {{name: b, default: ["x"], type: array, items: {{$ref: "{base}/b.json"}}}}',
        (
            f'      - {{name: c, default: {{k: "x"}}, type: object, '
            f'properties: {{k: {{$ref: "{base}/c.json#/x"}}}}}}'
        ),
        f'      - {{name: d, default: "x", allOf: [{{$ref: "{base}/d.json"}}]}}',
    ]


def test_default_checks_never_fetch_a_url(tmp_path: Path, listener: tuple[str, list[str]]) -> None:
    base, hits = listener
    spec = write(tmp_path, "\n".join(hostile_parameters(base)))
    code, output = run("validate", str(spec))
    assert code == 1 and "never network references" in output
    code, output = run("build", str(spec))
    assert code == 1
    code, output = run("diff", str(spec), str(spec))
    assert code != 0
    assert hits == [], f"mcpgen fetched {hits}"


def test_import_never_fetches_a_server_supplied_url(listener: tuple[str, list[str]]) -> None:
    base, hits = listener
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"{base}/a.json", "default": "x"},
                "b": {"type": "array", "items": {"$ref": f"{base}/b.json"}, "default": ["x"]},
            },
        },
    }
    with pytest.raises(ImportFailed):
        spec_from_tools([tool], server_info={"name": "evil", "version": "1"})
    assert hits == []


def test_files_outside_the_tree_are_neither_read_nor_echoed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "string", "const": "TOP-SECRET-TOKEN"}', encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    parameters = [
        f'      - {{name: a, default: "x", $ref: "file://{secret}"}}',
        '      - {name: b, default: "x", $ref: "../secret.json"}',
        f'      - {{name: c, default: "x", $ref: "{secret}"}}',
    ]
    spec = write(project, "\n".join(parameters))
    result = load_contract(spec)
    assert result.contract is None
    shown = "\n".join(d.message for d in result.diagnostics)
    assert "TOP-SECRET-TOKEN" not in shown
    assert "outside the spec's directory tree" in shown


@pytest.mark.parametrize("target", ["file:///dev/zero", "file://{fifo}", "file:///dev/stdin"])
def test_devices_and_fifos_are_never_opened(tmp_path: Path, target: str) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    spec = write(tmp_path, f'      - {{name: a, default: "x", $ref: "{target.format(fifo=fifo)}"}}')
    result = load_contract(spec)  # before: read /dev/zero until memory ran out, or hung
    assert result.contract is None
    assert any("never network references" in d.message for d in result.diagnostics)


@pytest.mark.parametrize("keyword", ["$dynamicRef", "$recursiveRef"])
def test_dynamic_references_are_refused_at_their_line(tmp_path: Path, keyword: str) -> None:
    spec = write(
        tmp_path,
        f'      - name: a\n        type: array\n        items: {{{keyword}: "#meta"}}',
    )
    result = load_contract(spec)
    assert result.contract is None
    found = [d for d in result.diagnostics if keyword in d.message]
    assert found and (found[0].line, found[0].path) == (
        11,
        f"tools[0].parameters[0].items.{keyword}",
    )


def test_import_refuses_dynamic_references() -> None:
    tool = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"a": {"$dynamicRef": "#node"}}},
    }
    with pytest.raises(ImportFailed, match=r"\$dynamicRef"):
        spec_from_tools([tool], server_info={"name": "evil", "version": "1"})


HOSTILE_PATTERN = "^([a-z]+)+$"
HOSTILE_TEXT = "a" * 40 + "!"


def test_a_backtracking_pattern_in_a_default_check_is_bounded(tmp_path: Path) -> None:
    # Before: Python's re took minutes on this default (2**40 ways to split the a's).
    spec = write(
        tmp_path,
        f'      - {{name: a, type: string, pattern: "{HOSTILE_PATTERN}", '
        f'default: "{HOSTILE_TEXT}"}}',
    )
    result = load_contract(spec)
    assert result.contract is None
    assert any("fails its own schema" in d.message for d in result.diagnostics)


def test_a_backtracking_pattern_from_a_server_is_bounded() -> None:
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "pattern": HOSTILE_PATTERN, "default": HOSTILE_TEXT}
            },
        },
    }
    with pytest.raises(ImportFailed, match="fails its own schema"):
        spec_from_tools([tool], server_info={"name": "slow", "version": "1"})
