"""Interop over Streamable HTTP with servers nobody here wrote: the official Python
SDK's ``MCPServer`` (stateful and stateless) and the official TypeScript SDK's
``StreamableHTTPServerTransport`` (stateful and stateless). Each is listed, imported
with ``mcpgen import --url``, built, and called through the generated typed client
(``Client.http``, strict contract check), sync and async.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fixtures.http_server import free_port
from helpers import import_package

from mcpgen.build import build_spec
from mcpgen.cli import main

pytest.importorskip("mcp", reason="the http extra (mcp SDK) is not installed")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@contextlib.contextmanager
def _listening(command: list[str], port: int, log: Path) -> Iterator[str]:
    """Run a server on 127.0.0.1:``port`` until the block ends; its URL."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=FIXTURES,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server exited:\n{log.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"not listening:\n{log.read_text()}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _command(peer: str, port: int) -> list[str]:
    if peer.startswith("python-sdk"):
        extra = ["--stateless"] if peer.endswith("stateless") else []
        return [sys.executable, str(FIXTURES / "sdk_http_server.py"), str(port), *extra]
    from fixtures.http_npm_tools import npm_tools

    node = npm_tools("@modelcontextprotocol/sdk").node
    return [node, str(FIXTURES / "ts_http_server.mjs"), str(port), peer.split("-")[-1]]


PEERS = ["python-sdk-stateful", "python-sdk-stateless", "ts-sdk-stateful", "ts-sdk-stateless"]


@pytest.fixture(scope="module", params=PEERS)
def peer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, Any]]:
    """(peer, URL, the package generated from its imported spec)."""
    name: str = request.param
    folder = tmp_path_factory.mktemp(name)
    port = free_port()
    with _listening(_command(name, port), port, folder / "server.log") as url:
        spec = folder / "tools.yaml"
        package = "peer_" + name.replace("-", "_")
        result = CliRunner().invoke(
            main,
            ["import", "--url", url, "--header", "X-Test: interop"]
            + ["-o", str(spec), "--package", package],
        )
        assert result.exit_code == 0, result.output
        assert result.output.startswith(f"wrote {spec}: ")
        assert f"# Source: {url}\n" in spec.read_text()
        built = build_spec(spec, output=folder / "gen" / package)
        assert built.ok, [str(d) for d in built.diagnostics]
        with import_package(folder / "gen", package) as module:
            yield name, url, module


def _classes(package: Any) -> tuple[Any, Any]:
    names = [n for n in package.__all__ if n.endswith("Client")]
    sync = next(n for n in names if not n.startswith("Async"))
    return getattr(package, sync), getattr(package, "Async" + sync)


def test_the_typed_client_calls_the_peer(peer: tuple[str, str, Any]) -> None:
    name, url, package = peer
    client_class, _ = _classes(package)
    with client_class.http(url, verify="strict") as client:
        # stateless TypeScript servers speak the handshake era; the Python SDK 2026-07-28
        expected = "2026-07-28" if name.startswith("python") else "2025-11-25"
        assert client.session.protocol_version == expected
        assert [tool.name for tool in client.list_tools()] == ["add", "shout", "count"]
        total = client.add(2, 40)
        assert type(total).__name__ == "AddOutput" and total.sum == 42
        shouted = client.shout("hello")
        if name.startswith("python"):  # MCPServer wraps a str return as {"result": …}
            assert type(shouted).__name__ == "ShoutOutput" and shouted.result == "HELLO"
        else:  # no output schema: `returns: result`, the whole result
            assert shouted["content"] == [{"type": "text", "text": "HELLO"}]


def test_the_async_typed_client_calls_the_peer_in_each_era(peer: tuple[str, str, Any]) -> None:
    name, url, package = peer
    _, async_class = _classes(package)

    async def main(protocol: str) -> list[int]:
        async with async_class.http(url, protocol=protocol) as client:
            sums = await asyncio.gather(*(client.add(i, 1) for i in range(8)))
            return [s.sum for s in sums]

    assert asyncio.run(main("legacy")) == list(range(1, 9))
    if name.startswith("python"):
        assert asyncio.run(main("modern")) == list(range(1, 9))


def test_progress_arrives_before_the_result(peer: tuple[str, str, Any]) -> None:
    _, url, package = peer
    client_class, _ = _classes(package)
    seen: list[Any] = []
    with client_class.http(url) as client:
        client.count(3, on_progress=lambda *p: seen.append(p))
    assert [p[0] for p in seen] == [1, 2, 3]
