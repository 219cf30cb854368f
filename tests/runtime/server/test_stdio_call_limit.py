"""The stdio server bounds the tool calls it runs in the background.

Calls that cannot run inline on the reading thread (task calls, async
handlers, handlers that declare ``ctx`` or have a ``timeout``) each hold a slot
until their handler has really ended: at most 64 by default
(``--max-concurrent-calls``). One more gets JSON-RPC error -31000 "Server busy"
at once, and the server keeps serving (inline calls, pings, and background
calls again once slots are free). Before the bound, 1,000 task calls made
2,001 threads. Checked on a real ``python -m`` process, its threads counted in
``/proc/<pid>/task``.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import RawServer, build_package

SPEC = """
mcpgen: 1
package: busy_mcp
server: {name: busy, version: 1.0.0}
tools:
  - name: wait_sync
    description: Waits for the test's release file (a worker thread, as a task).
    parameters: [{name: tag, type: string}]
    task_support: optional
  - name: wait_async
    description: Waits for the release file on the event loop.
    parameters: [{name: tag, type: string}]
    async: true
  - name: wait_timed
    description: Waits for the release file, past its timeout.
    parameters: [{name: tag, type: string}]
    timeout: 0.2
  - name: threads
    description: Runs inline; the server process's thread count.
    returns: integer
"""

IMPL = """
import asyncio, os, threading, time
from pathlib import Path
from busy_mcp import BusyServer

RELEASE = Path(os.environ["BUSY_RELEASE"])


class Impl(BusyServer):
    def wait_sync(self, tag: str) -> str:
        while not RELEASE.exists():
            time.sleep(0.01)
        return tag

    async def wait_async(self, tag: str) -> str:
        while not RELEASE.exists():
            await asyncio.sleep(0.01)
        return tag

    def wait_timed(self, tag: str) -> str:
        while not RELEASE.exists():
            time.sleep(0.01)
        return tag

    def threads(self) -> int:
        return threading.active_count()
"""

SERVER_BUSY = -31000
DEFAULT_LIMIT = 64


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("stdio_busy")
    gen = build_package(SPEC, root, "busy_mcp")
    (root / "busy_impl.py").write_text(textwrap.dedent(IMPL))
    return [gen, root]


def start(busy: list[Path], release: Path, *flags: str) -> RawServer:
    return RawServer(
        "busy_mcp",
        "busy_impl:Impl",
        pythonpath=busy,
        extra_args=flags,
        env={"BUSY_RELEASE": str(release)},
    )


def call(request_id: int, name: str, tag: str, *, task: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {"tag": tag}}
    if task:
        params["task"] = {}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def os_threads(server: RawServer) -> int:
    return len(os.listdir(f"/proc/{server.proc.pid}/task"))


def collect(
    server: RawServer, count: int, *, completed_tasks: int = 0
) -> dict[Any, dict[str, Any]]:
    """The next ``count`` responses by id, read on until ``completed_tasks``
    task status notifications saying "completed" have also arrived (other
    notifications set aside): those notifications race with the responses."""
    got: dict[Any, dict[str, Any]] = {}
    completed: set[str] = set()
    while len(got) < count or len(completed) < completed_tasks:
        frame = server.recv(timeout=30)
        if "id" in frame:
            got[frame["id"]] = frame
        elif (
            frame.get("method") == "notifications/tasks/status"
            and frame["params"]["status"] == "completed"
        ):
            completed.add(frame["params"]["taskId"])
    return got


def test_calls_beyond_the_limit_are_refused_and_the_server_keeps_serving(
    busy: list[Path], tmp_path: Path
) -> None:
    release = tmp_path / "release"
    with start(busy, release) as server:
        server.handshake()
        # 48 task calls (worker threads) and 16 async calls fill the 64 slots …
        accepted = [call(i, "wait_sync", f"t{i}", task=True) for i in range(48)]
        accepted += [call(i, "wait_async", f"a{i}") for i in range(48, DEFAULT_LIMIT)]
        # … so 20 more of every background kind are refused at once
        extra = [
            call(i, ("wait_sync", "wait_async", "wait_timed")[i % 3], f"x{i}", task=i % 3 == 0)
            for i in range(100, 120)
        ]
        for message in accepted + extra:
            server.send(message)
        answers = collect(server, 48 + len(extra))  # 48 "task created" + 20 refusals
        for i in range(48):
            assert answers[i]["result"]["task"]["status"] == "working"
        for message in extra:
            error = answers[message["id"]]["error"]
            assert error["code"] == SERVER_BUSY
            assert error["message"].startswith("Server busy: 64 tool calls are already running")
            assert error["data"] == {"limit": DEFAULT_LIMIT}
        # inline calls and pings still run; threads stay bounded by the slots
        threads = server.call("threads", {})["result"]["content"][0]["text"]
        assert int(threads) <= DEFAULT_LIMIT + 8, threads
        assert os_threads(server) <= DEFAULT_LIMIT + 8
        assert server.request("ping")["result"] == {}
        release.touch()  # the 64 finish …
        done = collect(server, DEFAULT_LIMIT - 48, completed_tasks=48)
        assert {done[i]["result"]["content"][0]["text"] for i in range(48, 64)} == {
            f"a{i}" for i in range(48, 64)
        }
        results = [
            server.request("tasks/result", {"taskId": answers[i]["result"]["task"]["taskId"]})
            for i in range(48)
        ]
        assert [r["result"]["content"][0]["text"] for r in results] == [f"t{i}" for i in range(48)]
        # … and their slots serve new calls
        assert (
            server.call("wait_async", {"tag": "again"})["result"]["content"][0]["text"] == "again"
        )
        server.close()


def test_a_handler_past_its_timeout_keeps_its_slot(busy: list[Path], tmp_path: Path) -> None:
    """The caller gets "timed out", but the thread still runs, so its slot is not
    given back until the handler returns; --max-concurrent-calls sets the bound."""
    release = tmp_path / "release"
    with start(busy, release, "--max-concurrent-calls", "2") as server:
        server.handshake()
        for i in (1, 2):
            answer = server.call("wait_timed", {"tag": str(i)})
            assert "timed out" in answer["result"]["content"][0]["text"]
        refused = server.call("wait_async", {"tag": "3"})
        assert refused["error"]["code"] == SERVER_BUSY
        assert "2 tool calls are already running" in refused["error"]["message"]
        release.touch()
        deadline = time.monotonic() + 30
        while True:  # the two threads end and give their slots back
            answer = server.call("wait_timed", {"tag": "4"})
            if "error" not in answer:
                break
            assert time.monotonic() < deadline, answer
            time.sleep(0.05)
        assert answer["result"]["content"][0]["text"] == "4"
        server.close()


def test_the_limit_must_be_positive(busy: list[Path], tmp_path: Path) -> None:
    with start(busy, tmp_path / "release", "--max-concurrent-calls", "0") as server:
        assert server.close(expect_code=None) == 2
        assert "--max-concurrent-calls" in server.stderr
