"""Tests of the line transports: child processes over stdio (sync and async) and
in-process servers over pipes."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import BinaryIO

import pytest

from mcpgen_runtime._errors import ServerExited
from mcpgen_runtime.transport.aio import AsyncInMemoryTransport, AsyncStdioTransport
from mcpgen_runtime.transport.lines import LineSplitter, LineTooLong
from mcpgen_runtime.transport.sync import InMemoryTransport, StdioTransport

PY = sys.executable


def script(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


# An echo server: each stdin line comes back on stdout; exits on EOF.
ECHO = script(
    """
    import sys
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    """
)


class Collector:
    """on_line/on_close callbacks that tests can wait on."""

    def __init__(self) -> None:
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.closed = threading.Event()

    def on_line(self, line: bytes) -> None:
        self.lines.put(line)

    def on_close(self) -> None:
        assert not self.closed.is_set(), "on_close called twice"
        self.closed.set()

    def next(self, timeout: float = 5.0) -> bytes:
        return self.lines.get(timeout=timeout)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# --------------------------------------------------------------------------- splitter


def test_line_splitter_joins_chunks_and_keeps_partial_tails() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a"') == []
    assert splitter.feed(b":1}\n{") == [b'{"a":1}']
    assert splitter.feed(b"}\n\n[") == [b"{}", b""]
    assert splitter.feed(b"]\n") == [b"[]"]


def test_line_splitter_cuts_an_endless_line_when_bounded() -> None:
    splitter = LineSplitter(max_line=10)
    assert splitter.feed(b"x" * 6) == []
    assert splitter.feed(b"x" * 6) == [b"x" * 12]
    assert splitter.feed(b"y\n") == [b"y"]


def test_strict_line_splitter_refuses_a_line_over_the_bound() -> None:
    # a line growing across chunks: refused once it passes the bound, nothing kept
    splitter = LineSplitter(max_line=10, strict=True)
    assert splitter.feed(b"x" * 10) == []
    with pytest.raises(LineTooLong) as caught:
        splitter.feed(b"x")
    assert caught.value.before == []
    # a long line complete inside one chunk: the lines before it are handed back
    splitter = LineSplitter(max_line=10, strict=True)
    with pytest.raises(LineTooLong) as caught:
        splitter.feed(b"ok\n" + b"y" * 11 + b"\nlater\n")
    assert caught.value.before == [b"ok"]
    # exactly the bound is a line; a joined line over it is not
    splitter = LineSplitter(max_line=10, strict=True)
    assert splitter.feed(b"z" * 10 + b"\n" + b"a" * 6) == [b"z" * 10]
    with pytest.raises(LineTooLong):
        splitter.feed(b"a" * 5 + b"\n")


# --------------------------------------------------------------------------- sync stdio


def test_stdio_round_trips_lines_and_stops_cleanly() -> None:
    fds = open_fds()
    transport = StdioTransport(ECHO)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    assert transport.is_running
    big = b'{"x":"' + b"y" * 300_000 + b'"}\n'  # larger than any pipe buffer
    transport.send(b'{"n":1}\n')
    transport.send(big)
    assert got.next() == b'{"n":1}'
    assert got.next() == big[:-1]
    transport.stop()
    assert got.closed.is_set()
    assert transport.returncode == 0 and not transport.is_running
    transport.stop()  # idempotent
    assert open_fds() == fds


def test_stdio_env_replaces_the_environment_but_the_program_is_still_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(PY) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("MCPGEN_PARENT_ONLY", "1")
    command = [
        os.path.basename(PY),
        "-c",
        "import os, json; print(json.dumps([dict(os.environ), os.getcwd()]))",
    ]
    transport = StdioTransport(command, env={"ONLY_THIS": "yes"}, cwd=tmp_path)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    env, cwd = json.loads(got.next())
    transport.stop()
    assert env.get("ONLY_THIS") == "yes"
    assert "MCPGEN_PARENT_ONLY" not in env and "PATH" not in env
    assert os.path.samefile(cwd, tmp_path)


def test_stdio_env_none_inherits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPGEN_INHERITED", "1")
    transport = StdioTransport(script("import os; print(os.environ.get('MCPGEN_INHERITED'))"))
    got = Collector()
    transport.start(got.on_line, got.on_close)
    assert got.next() == b"1"
    transport.stop()


def test_stdio_missing_program_is_server_exited() -> None:
    transport = StdioTransport(["/nonexistent/mcp-server"])
    with pytest.raises(ServerExited, match="cannot start"):
        transport.start(Collector().on_line, Collector().on_close)
    transport.stop()


def test_stdio_exit_at_start_reports_code_and_stderr() -> None:
    transport = StdioTransport(script("import sys; sys.stderr.write('no API key\\n'); sys.exit(3)"))
    got = Collector()
    started = time.monotonic()
    transport.start(got.on_line, got.on_close)
    assert got.closed.wait(5)
    assert time.monotonic() - started < 3
    error = transport.exit_error()
    assert error.returncode == 3
    assert "no API key" in error.stderr_tail and "no API key" in str(error)
    with pytest.raises(ServerExited):
        transport.send(b"{}\n")
    transport.stop()


def test_stdio_stderr_flood_never_blocks_and_the_tail_is_bounded() -> None:
    # 8 MiB of stderr (with and without newlines) before and between answers.
    flood = script(
        """
        import sys
        sys.stderr.write(("e" * 1000 + "\\n") * 4096)
        sys.stderr.write("z" * (4 << 20))
        sys.stderr.write("\\nlast words\\n")
        sys.stderr.flush()
        for line in sys.stdin.buffer:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        """
    )
    transport = StdioTransport(flood)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    transport.send(b"ping\n")
    assert got.next(timeout=10) == b"ping"
    transport.stop()
    tail = transport.stderr_tail()
    assert tail.endswith("last words")
    assert len(tail) < 300 * 4200


def test_stdio_stop_escalates_to_sigterm() -> None:
    stubborn = script("import time, sys\nsys.stdin.read()\ntime.sleep(60)")
    transport = StdioTransport(stubborn)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    started = time.monotonic()
    transport.stop()
    assert 1.5 < time.monotonic() - started < 4
    assert transport.returncode == -signal.SIGTERM
    assert got.closed.is_set()


def test_stdio_stop_escalates_to_sigkill() -> None:
    stubborn = script(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
        "time.sleep(60)"
    )
    transport = StdioTransport(stubborn)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    assert got.next() == b"ready"
    started = time.monotonic()
    transport.stop()
    assert 3.5 < time.monotonic() - started < 6
    assert transport.returncode == -signal.SIGKILL


def test_stdio_stop_is_not_held_up_by_a_grandchild_keeping_the_pipes() -> None:
    # The server exits on EOF, but a grandchild it started inherits stdout/stderr.
    leaky = script(
        """
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        print(child.pid, flush=True)
        sys.stdin.read()
        """
    )
    fds = open_fds()
    transport = StdioTransport(leaky)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    grandchild = int(got.next())
    try:
        started = time.monotonic()
        transport.stop()
        assert time.monotonic() - started < 4
        assert transport.returncode == 0
        assert got.closed.is_set()
        assert open_fds() == fds
    finally:
        os.kill(grandchild, signal.SIGKILL)


# --------------------------------------------------------------------------- sync in-memory


def echo_serve(reader: BinaryIO, writer: BinaryIO) -> None:
    for raw in reader:
        writer.write(raw.upper())
        writer.flush()


def test_in_memory_round_trip_and_stop() -> None:
    fds = open_fds()
    transport = InMemoryTransport(echo_serve)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    transport.send(b"hello\n")
    transport.send(b"w" * 200_000 + b"\n")
    assert got.next() == b"HELLO"
    assert got.next() == b"W" * 200_000
    assert transport.is_running
    transport.stop()
    assert got.closed.is_set() and transport.returncode == 0
    assert open_fds() == fds


def test_in_memory_server_crash_is_server_exited_with_traceback() -> None:
    def crashing(reader: BinaryIO, writer: BinaryIO) -> None:
        reader.readline()
        raise RuntimeError("handler exploded")

    transport = InMemoryTransport(crashing)
    got = Collector()
    transport.start(got.on_line, got.on_close)
    transport.send(b"x\n")
    assert got.closed.wait(5)
    error = transport.exit_error()
    assert error.returncode == 1 and "handler exploded" in error.stderr_tail
    with pytest.raises(ServerExited):
        transport.send(b"x\n")
    transport.stop()


# --------------------------------------------------------------------------- async


def test_async_stdio_round_trip_and_stop() -> None:
    async def main() -> None:
        transport = AsyncStdioTransport(ECHO)
        got = Collector()
        await transport.start(got.on_line, got.on_close)
        await transport.send(b'{"n":1}\n')
        transport.send_nowait(b"b" * 300_000 + b"\n")
        await transport.send(b"end\n")
        for _ in range(100):
            if got.lines.qsize() == 3:
                break
            await asyncio.sleep(0.02)
        assert [got.next() for _ in range(3)] == [b'{"n":1}', b"b" * 300_000, b"end"]
        await transport.stop()
        assert got.closed.is_set() and transport.returncode == 0
        await transport.stop()

    fds = open_fds()
    asyncio.run(main())
    assert open_fds() == fds


def test_async_stdio_exit_at_start_reports_code_and_stderr() -> None:
    async def main() -> None:
        transport = AsyncStdioTransport(
            script("import sys; sys.stderr.write('bad config\\n'); sys.exit(4)")
        )
        got = Collector()
        await transport.start(got.on_line, got.on_close)
        for _ in range(250):
            if got.closed.is_set():
                break
            await asyncio.sleep(0.02)
        error = transport.exit_error()
        assert error.returncode == 4 and "bad config" in error.stderr_tail
        with pytest.raises(ServerExited):
            await transport.send(b"{}\n")
        await transport.stop()

    asyncio.run(main())


def test_async_stdio_stop_escalates_to_sigterm() -> None:
    async def main() -> None:
        transport = AsyncStdioTransport(
            script("import time, sys\nsys.stdin.read()\ntime.sleep(60)")
        )
        got = Collector()
        await transport.start(got.on_line, got.on_close)
        started = time.monotonic()
        await transport.stop()
        assert 1.5 < time.monotonic() - started < 4
        assert transport.returncode == -signal.SIGTERM

    asyncio.run(main())


def test_async_stdio_missing_program_is_server_exited() -> None:
    async def main() -> None:
        transport = AsyncStdioTransport(["/nonexistent/mcp-server"])
        with pytest.raises(ServerExited, match="cannot start"):
            await transport.start(Collector().on_line, Collector().on_close)
        await transport.stop()

    asyncio.run(main())


def test_async_in_memory_round_trip_and_stop() -> None:
    async def main() -> None:
        transport = AsyncInMemoryTransport(echo_serve)
        got = Collector()
        await transport.start(got.on_line, got.on_close)
        await transport.send(b"hello\n")
        for _ in range(250):
            if got.lines.qsize():
                break
            await asyncio.sleep(0.01)
        assert got.next() == b"HELLO"
        await transport.stop()
        assert got.closed.is_set() and transport.returncode == 0

    fds = open_fds()
    asyncio.run(main())
    assert open_fds() == fds
