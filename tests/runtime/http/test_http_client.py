"""The generated typed clients over Streamable HTTP (``Client.http``), against a
generated server run with ``--transport http``: both eras, sync and async, structured
results, a task, progress before the result, cancellation, a timeout covering the
whole call, an error result. The errors of a server that is not there or not MCP are
in tests/runtime/transport/test_http_transport.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fixtures.http_server import HttpServer, http_server
from helpers import build_package, import_package

pytest.importorskip("httpx2", reason="the http extra (httpx2) is not installed")

SPEC = """
mcpgen: 1
package: httpcall_mcp
server: {name: httpcall, version: "1.0.0", implementation: "httpcall_impl:Impl"}
tools:
  - name: add
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    output_schema: {type: object, properties: {sum: {type: integer}}, required: [sum]}
  - name: count
    async: true
    parameters: [{name: steps, type: integer}]
    returns: integer
  - name: hold
    task_support: optional
    parameters: [{name: seconds, type: number}]
    returns: string
  - name: batch_job
    task_support: required
    parameters: [{name: n, type: integer}]
    returns: integer
  - name: cancellations
    description: How many holds saw their cancellation so far.
    parameters: []
    returns: integer
"""

IMPL = """
import asyncio, time
from httpcall_mcp import Context, HttpcallServer, ToolError
from httpcall_mcp.models import AddArgs, AddOutput

CANCELLED = []

class Impl(HttpcallServer):
    def add(self, args: AddArgs) -> AddOutput:
        return AddOutput(sum=args["a"] + args["b"])

    async def count(self, steps: int, *, ctx: Context = Context.NONE) -> int:
        for step in range(1, steps + 1):
            ctx.report_progress(step, steps, f"step {step}")
            await asyncio.sleep(0.01)
        return steps

    def hold(self, seconds: float, *, ctx: Context = Context.NONE) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not ctx.cancelled:
            time.sleep(0.01)
        if ctx.cancelled:
            CANCELLED.append(seconds)
        return "cancelled" if ctx.cancelled else f"held {seconds}"

    def batch_job(self, n: int) -> int:
        if n < 0:
            raise ToolError("n must not be negative")
        time.sleep(0.05)
        return n * 2

    def cancellations(self) -> int:
        return len(CANCELLED)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("http_client")
    gen = build_package(SPEC, root, "httpcall_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "httpcall_impl.py").write_text(IMPL, encoding="utf-8")
    return gen, impl


@pytest.fixture(scope="module")
def server(built: tuple[Path, Path]) -> Iterator[HttpServer]:
    gen, impl = built
    with http_server("httpcall_mcp", pythonpath=[gen, impl], cwd=impl, log_dir=impl.parent) as srv:
        yield srv


@pytest.fixture(scope="module")
def pkg(built: tuple[Path, Path]) -> Iterator[ModuleType]:
    with import_package(built[0], "httpcall_mcp") as module:
        yield module


ERAS = [("legacy", "2025-11-25"), ("modern", "2026-07-28"), ("auto", "2026-07-28")]


@pytest.mark.parametrize(("protocol", "version"), ERAS)
def test_the_sync_client_over_http(
    pkg: ModuleType, server: HttpServer, protocol: str, version: str
) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    with pkg.HttpcallClient.http(server.url, protocol=protocol) as client:
        assert client.session.protocol_version == version
        assert [tool.name for tool in client.list_tools()] == [
            "add",
            "count",
            "hold",
            "batch_job",
            "cancellations",
        ]
        total = client.add(2, 3)
        assert type(total).__name__ == "AddOutput" and total.sum == 5
        assert client.count(3, on_progress=lambda *p: progress.append(p)) == 3
        # every notification of the answer reached the callback before the result
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert client.batch_job(21) == 42  # task_support required: run as a task
        job = client.start_batch_job(5)
        assert job.task_id is not None and job.result(timeout=10) == 10
        with pytest.raises(pkg.ToolError, match="n must not be negative"):
            client.batch_job(-1)


@pytest.mark.parametrize(("protocol", "version"), ERAS)
def test_the_async_client_over_http(
    pkg: ModuleType, server: HttpServer, protocol: str, version: str
) -> None:
    async def main() -> None:
        progress: list[Any] = []
        async with pkg.AsyncHttpcallClient.http(server.url, protocol=protocol) as client:
            assert client.session.protocol_version == version
            sums = await asyncio.gather(*(client.add(i, i) for i in range(16)))
            assert [s.sum for s in sums] == [2 * i for i in range(16)]
            assert await client.count(2, on_progress=lambda *p: progress.append(p)) == 2
            assert progress == [(1, 2, "step 1"), (2, 2, "step 2")]
            job = await client.start_batch_job(4)
            assert (await job.status()).status in ("working", "completed")
            assert await job.result(timeout=10) == 8
            with pytest.raises(pkg.ToolError, match="n must not be negative"):
                await client.batch_job(-1)

    asyncio.run(main())


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_a_timeout_covers_the_whole_call_and_cancels_it(
    pkg: ModuleType, server: HttpServer, protocol: str
) -> None:
    with pkg.HttpcallClient.http(server.url, protocol=protocol, timeout=0.5) as client:
        before = client.cancellations()
        started = time.monotonic()
        with pytest.raises(pkg.Timeout) as caught:
            client.hold(30)
        assert time.monotonic() - started < 2.0
        assert server.url in str(caught.value) and "no answer within 0.5s" in str(caught.value)
        assert client.add(1, 1).sum == 2  # the session goes on
        deadline = time.monotonic() + 5
        while client.cancellations() == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.cancellations() == before + 1  # and the server stopped the call


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_cancelling_an_async_call_and_a_task(
    pkg: ModuleType, server: HttpServer, protocol: str
) -> None:
    async def main() -> None:
        async with pkg.AsyncHttpcallClient.http(
            server.url, timeout=10, protocol=protocol
        ) as client:
            before = await client.cancellations()
            call = asyncio.ensure_future(client.hold(30))
            await asyncio.sleep(0.3)
            started = time.monotonic()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert time.monotonic() - started < 1.0
            # the server saw it: its handler stopped early (a stateless server reads
            # the closed connection as the cancellation)
            deadline = time.monotonic() + 5
            while await client.cancellations() == before and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert await client.cancellations() == before + 1
            job = await client.start_hold(30)
            assert job.task_id is not None
            status = await job.cancel()
            assert status.status == "cancelled"
            assert (await client.add(2, 2)).sum == 4

    asyncio.run(main())


def test_headers_reach_the_server_and_close_ends_the_session(
    pkg: ModuleType, server: HttpServer
) -> None:
    # mcpgen's server is stateless: no Mcp-Session-Id, so close() sends no DELETE
    with pkg.HttpcallClient.http(
        server.url, headers={"X-Team": "billing"}, protocol="legacy"
    ) as client:
        assert client.session.transport.url == server.url
        assert client.add(1, 2).sum == 3
    with pytest.raises(RuntimeError, match="closed"):
        client.add(1, 2)
