"""The sync and async client sessions against misbehaving servers over stdio
(tests/fixtures/robust_peer.py), beyond what tests/runtime/client/test_client.py covers:
several calls in flight when the server crashes, a server that stops answering
(the ``notifications/cancelled`` checked on the server's side, the child reaped,
even one that ignores EOF and SIGTERM), answers with wrong ids, garbage on
stdout, a stderr flood on the async side, a server that exits during the
handshake or right after it, a late answer after a timeout, a line longer than
the client's frame limit (also through ``mcpgen import``).

After each case: no thread (conftest), no child process (conftest and here) and
no file descriptor (``/proc/self/fd``) is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime import DEFAULT_MAX_MESSAGE_BYTES, AsyncSession, Session
from mcpgen_runtime._errors import ProtocolError, ServerExited, Timeout

PEER = [sys.executable, str(Path(__file__).resolve().parents[2] / "fixtures" / "robust_peer.py")]
SLACK = 5.0  # seconds added to every "quickly": the machine is shared


def peer(mode: str, log: Path | None = None) -> list[str]:
    return [*PEER, mode, *(["--log", str(log)] if log is not None else [])]


def open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


def children() -> list[int]:
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[1].decode() == me:
                found.append(int(entry))
    return found


@pytest.fixture(autouse=True)
def nothing_leaks() -> Iterator[None]:
    """No fd and no child process outlives the test (threads: see conftest)."""
    before_fds, before_children = open_fds(), set(children())
    yield
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if open_fds() == before_fds and set(children()) <= before_children:
            break
        time.sleep(0.05)
    assert open_fds() == before_fds, "file descriptors left open"
    assert set(children()) <= before_children, "child processes left behind"


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_bytes().splitlines() if line.strip()]


# --------------------------------------------------------------------------- crash


def test_crash_fails_every_call_in_flight_sync() -> None:
    with Session.stdio(peer("crash-in-flight"), verify="off", timeout=60) as session:
        barrier = threading.Barrier(5)

        def slow() -> BaseException | None:
            barrier.wait()
            try:
                session.call_tool("slow", {})
            except BaseException as exc:  # noqa: BLE001 - returned for the assertions
                return exc
            return None

        with ThreadPoolExecutor(4) as pool:
            waiting = [pool.submit(slow) for _ in range(4)]
            barrier.wait()
            time.sleep(0.3)  # the four slow calls are on the wire
            started = time.monotonic()
            with pytest.raises(ServerExited) as caught:
                session.call_tool("die", {})
            failures = [future.result(timeout=10 + SLACK) for future in waiting]
        elapsed = time.monotonic() - started
    assert elapsed < 2 + SLACK, elapsed
    assert caught.value.returncode == 9 and "dying" in caught.value.stderr_tail
    assert all(isinstance(f, ServerExited) for f in failures), failures
    assert all(f.returncode == 9 for f in failures if isinstance(f, ServerExited))


def test_crash_fails_every_call_in_flight_async() -> None:
    async def main() -> None:
        async with AsyncSession.stdio(peer("crash-in-flight"), verify="off", timeout=60) as session:
            slow = [asyncio.ensure_future(session.call_tool("slow", {})) for _ in range(4)]
            await asyncio.sleep(0.3)
            started = time.monotonic()
            with pytest.raises(ServerExited) as caught:
                await session.call_tool("die", {})
            results = await asyncio.wait_for(
                asyncio.gather(*slow, return_exceptions=True), 10 + SLACK
            )
            assert time.monotonic() - started < 2 + SLACK
            assert caught.value.returncode == 9 and "dying" in caught.value.stderr_tail
            assert all(isinstance(r, ServerExited) for r in results), results
            with pytest.raises(ServerExited):  # and every later call at once
                await session.call_tool("add", {"a": 1, "b": 2})

    asyncio.run(main())


# --------------------------------------------------------------------------- silence


def _check_cancelled(log: Path, name: str) -> None:
    messages = received(log)
    call_id = next(
        m["id"] for m in messages if m.get("method") == "tools/call" and m["params"]["name"] == name
    )
    cancels = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [call_id], messages
    assert "timed out" in cancels[0]["params"]["reason"]
    assert "id" not in cancels[0]


def test_silent_server_times_out_cancels_and_is_reaped_sync(tmp_path: Path) -> None:
    log = tmp_path / "received.jsonl"
    session = Session.stdio(peer("ok", log), verify="off")
    with session:
        started = time.monotonic()
        with pytest.raises(Timeout):
            session.call_tool("slow", {}, timeout=0.5)
        assert time.monotonic() - started < 0.5 + SLACK
        assert session.call_tool("add", {"a": 2, "b": 3})["content"][0]["text"] == "5"
        pid = session.transport.pid  # type: ignore[attr-defined]
    assert session.transport.returncode == 0  # type: ignore[attr-defined]  # EOF was enough
    assert pid not in children()
    _check_cancelled(log, "slow")


def test_silent_server_times_out_cancels_and_is_reaped_async(tmp_path: Path) -> None:
    log = tmp_path / "received.jsonl"

    async def main() -> None:
        session = AsyncSession.stdio(peer("ok", log), verify="off")
        async with session:
            with pytest.raises(Timeout):
                await session.call_tool("slow", {}, timeout=0.5)
            assert (await session.call_tool("add", {"a": 2, "b": 3}))["content"][0]["text"] == "5"
            pid = session.transport.pid  # type: ignore[attr-defined]
        assert session.transport.returncode == 0  # type: ignore[attr-defined]
        assert pid not in children()

    asyncio.run(main())
    _check_cancelled(log, "slow")


def test_stubborn_server_is_killed_on_close_sync(tmp_path: Path) -> None:
    """It ignores stdin EOF and SIGTERM: close escalates to SIGKILL (2 s + 2 s)."""
    log = tmp_path / "received.jsonl"
    session = Session.stdio(peer("stubborn", log), verify="off")
    session.connect()
    with pytest.raises(Timeout):
        session.call_tool("slow", {}, timeout=0.3)
    started = time.monotonic()
    session.close()
    elapsed = time.monotonic() - started
    assert session.transport.returncode == -9  # type: ignore[attr-defined]
    assert 3.5 < elapsed < 4 + SLACK, elapsed
    _check_cancelled(log, "slow")


def test_stubborn_server_is_killed_on_close_async(tmp_path: Path) -> None:
    log = tmp_path / "received.jsonl"

    async def main() -> None:
        session = AsyncSession.stdio(peer("stubborn", log), verify="off")
        await session.connect()
        with pytest.raises(Timeout):
            await session.call_tool("slow", {}, timeout=0.3)
        started = time.monotonic()
        await session.close()
        assert 3.5 < time.monotonic() - started < 4 + SLACK
        assert session.transport.returncode == -9  # type: ignore[attr-defined]

    asyncio.run(main())
    _check_cancelled(log, "slow")


def test_late_answer_after_a_timeout_is_dropped() -> None:
    with Session.stdio(peer("late"), verify="off") as session:
        with pytest.raises(Timeout):
            session.call_tool("slow", {}, timeout=0.3)
        time.sleep(1.2)  # the late answer arrives now and must reach no one
        assert session.call_tool("add", {"a": 1, "b": 1})["content"][0]["text"] == "2"
        with pytest.raises(Timeout):  # a second late one, while a call waits
            session.call_tool("slow", {}, timeout=0.3)
        assert session.call_tool("add", {"a": 2, "b": 2})["content"][0]["text"] == "4"


# --------------------------------------------------------------------------- bad output


def test_wrong_ids_are_never_delivered_sync() -> None:
    with Session.stdio(peer("wrong-ids"), verify="off") as session:
        for _ in range(2):
            with pytest.raises(Timeout):  # never "not yours" under the caller's id
                session.call_tool("add", {"a": 1, "b": 2}, timeout=0.5)
        assert session.request("ping") == {}


def test_wrong_ids_are_never_delivered_async() -> None:
    async def main() -> None:
        async with AsyncSession.stdio(peer("wrong-ids"), verify="off") as session:
            calls = [session.call_tool("add", {"a": i, "b": 0}, timeout=0.5) for i in range(3)]
            results = await asyncio.gather(*calls, return_exceptions=True)
            assert all(isinstance(r, Timeout) for r in results), results
            assert await session.request("ping") == {}

    asyncio.run(main())


def test_garbage_on_stdout_is_skipped_sync() -> None:
    with Session.stdio(peer("garbage"), verify="off") as session:
        for i in range(3):
            result = session.call_tool("add", {"a": i, "b": 1})
            assert result["content"][0]["text"] == str(i + 1)


def test_garbage_on_stdout_is_skipped_async() -> None:
    async def main() -> None:
        async with AsyncSession.stdio(peer("garbage"), verify="off") as session:
            results = await asyncio.gather(
                *(session.call_tool("add", {"a": i, "b": 1}) for i in range(3))
            )
            assert [r["content"][0]["text"] for r in results] == ["1", "2", "3"]

    asyncio.run(main())


FLOOD_SECONDS = 1.5  # calls go on this long while the server floods stderr


def test_stderr_flood_sync() -> None:
    with Session.stdio(peer("stderr-flood"), verify="off") as session:
        started, i = time.monotonic(), 0
        while time.monotonic() - started < FLOOD_SECONDS or i < 20:
            assert session.call_tool("add", {"a": i, "b": 0})["content"][0]["text"] == str(i)
            i += 1
        tail = session.transport.stderr_tail()  # type: ignore[attr-defined]
        assert 0 < len(tail) < 1_000_000


def test_stderr_flood_async() -> None:
    async def main() -> None:
        async with AsyncSession.stdio(peer("stderr-flood"), verify="off") as session:
            started, i = time.monotonic(), 0
            while time.monotonic() - started < FLOOD_SECONDS or i < 20:
                result = await session.call_tool("add", {"a": i, "b": 0})
                assert result["content"][0]["text"] == str(i)
                i += 1
            tail = session.transport.stderr_tail()  # type: ignore[attr-defined]
            assert 0 < len(tail) < 1_000_000

    asyncio.run(main())


# --------------------------------------------------------------------------- handshake


@pytest.mark.parametrize(
    ("mode", "code", "words"),
    [
        ("exit-in-handshake", 4, "refuses every handshake"),
        ("exit-after-init", 5, "gone right after initialize"),
    ],
)
def test_exit_during_the_handshake_sync(mode: str, code: int, words: str) -> None:
    session = Session.stdio(peer(mode), timeout=60)  # verify: tools/list follows initialize
    started = time.monotonic()
    with pytest.raises(ServerExited) as caught:
        session.connect()
    assert time.monotonic() - started < 2 + SLACK
    assert caught.value.returncode == code and words in caught.value.stderr_tail
    assert words in str(caught.value)
    assert not session.transport.is_running  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("mode", "code", "words"),
    [
        ("exit-in-handshake", 4, "refuses every handshake"),
        ("exit-after-init", 5, "gone right after initialize"),
    ],
)
def test_exit_during_the_handshake_async(mode: str, code: int, words: str) -> None:
    async def main() -> None:
        session = AsyncSession.stdio(peer(mode), timeout=60)
        started = time.monotonic()
        with pytest.raises(ServerExited) as caught:
            await session.connect()
        assert time.monotonic() - started < 2 + SLACK
        assert caught.value.returncode == code and words in caught.value.stderr_tail
        assert not session.transport.is_running  # type: ignore[attr-defined]

    asyncio.run(main())


def test_a_closed_session_fails_fast() -> None:
    session = Session.stdio(peer("ok"), verify="off")
    with session:
        pass
    with pytest.raises((ServerExited, RuntimeError)):
        session.call_tool("add", {"a": 1, "b": 2})


# --------------------------------------------------------------------------- frame limit

LIMIT = 64 * 1024  # a small limit keeps these tests fast; the default is 16 MiB


def huge(mode: str, line_bytes: int) -> list[str]:
    return [*peer(mode), "--line-bytes", str(line_bytes)]


def wait_stopped(session: Session | AsyncSession) -> None:
    """The transport stops the server by itself, before the session is closed."""
    deadline = time.monotonic() + 10 + SLACK
    while session.transport.is_running and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.02)
    assert not session.transport.is_running  # type: ignore[attr-defined]


def test_the_default_frame_limit_mirrors_the_server() -> None:
    from mcpgen_runtime.server.stdio import DEFAULT_MAX_MESSAGE_BYTES as SERVER_LIMIT

    assert DEFAULT_MAX_MESSAGE_BYTES == SERVER_LIMIT == 16 * 1024 * 1024
    assert Session.stdio(peer("ok")).transport.max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES  # type: ignore[attr-defined]
    assert AsyncSession.stdio(peer("ok")).transport.max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="max_message_bytes"):
        Session.stdio(peer("ok"), max_message_bytes=0)


def test_a_line_of_exactly_the_limit_is_delivered() -> None:
    with Session.stdio(huge("huge-line", LIMIT), verify="off", max_message_bytes=LIMIT) as session:
        result = session.call_tool("add", {"a": 1, "b": 2})
        assert result["content"][0]["text"] == "3"
        assert len(result["_meta"]["padding"]) > LIMIT - 200


def test_an_oversized_line_fails_every_call_and_stops_the_server_sync() -> None:
    session = Session.stdio(huge("huge-line", 8 << 20), verify="off", max_message_bytes=LIMIT)
    with session:
        pid = session.transport.pid  # type: ignore[attr-defined]
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(session.call_tool, "slow", {})  # never answered
            time.sleep(0.3)
            with pytest.raises(ProtocolError) as caught:
                session.call_tool("add", {"a": 1, "b": 2})
            with pytest.raises(ProtocolError):  # the call in flight fails too
                pending.result(timeout=10 + SLACK)
        assert caught.value.reason == "message_too_large"
        assert f"larger than {LIMIT} bytes" in str(caught.value)
        assert caught.value.data == {"limit": LIMIT}
        wait_stopped(session)
        with pytest.raises(ProtocolError, match="larger than"):  # and every later call
            session.call_tool("add", {"a": 1, "b": 2})
    assert pid not in children()


def test_one_byte_over_the_limit_is_refused_async() -> None:
    async def main() -> None:
        session = AsyncSession.stdio(
            huge("huge-line", LIMIT + 1), verify="off", max_message_bytes=LIMIT
        )
        async with session:
            pid = session.transport.pid  # type: ignore[attr-defined]
            pending = asyncio.ensure_future(session.call_tool("slow", {}))
            await asyncio.sleep(0.3)
            with pytest.raises(ProtocolError) as caught:
                await session.call_tool("add", {"a": 1, "b": 2})
            assert caught.value.reason == "message_too_large"
            assert f"larger than {LIMIT} bytes" in str(caught.value)
            with pytest.raises(ProtocolError):
                await asyncio.wait_for(pending, 10 + SLACK)
            deadline = time.monotonic() + 10 + SLACK
            while session.transport.is_running and time.monotonic() < deadline:  # type: ignore[attr-defined]
                await asyncio.sleep(0.02)
            assert not session.transport.is_running  # type: ignore[attr-defined]
            with pytest.raises(ProtocolError):
                await session.call_tool("add", {"a": 1, "b": 2})
        assert pid not in children()

    asyncio.run(main())


def test_an_oversized_line_during_connect_async() -> None:
    async def main() -> None:
        session = AsyncSession.stdio(huge("huge-list", 8 << 20), max_message_bytes=LIMIT)
        with pytest.raises(ProtocolError, match="larger than"):
            await session.connect()  # verify="strict" lists the tools
        assert not session.transport.is_running  # type: ignore[attr-defined]

    asyncio.run(main())


_IMPORT_WITH_PEAK = textwrap.dedent(
    """
    import resource, sys
    from mcpgen.cli import main
    try:
        main(sys.argv[1:])
    finally:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        print(f"PEAK_KIB={peak}", file=sys.stderr)
    """
)


def _import_peak(*command: str) -> tuple[subprocess.CompletedProcess[str], int]:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_WITH_PEAK, "import", "-o", "-", "--", *command],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    peak = int(proc.stderr.rsplit("PEAK_KIB=", 1)[1].split()[0])
    return proc, peak * 1024


def test_mcpgen_import_refuses_an_oversized_line_with_bounded_memory() -> None:
    """The 64 MiB tools/list line is refused at the default 16 MiB limit, and the
    importer never holds more than about that much of it."""
    baseline, base_peak = _import_peak(*peer("ok"))
    assert baseline.returncode == 0, baseline.stderr
    proc, peak = _import_peak(*huge("huge-list", 64 << 20))
    assert proc.returncode == 1, proc.stderr
    assert "larger than 16777216 bytes" in proc.stderr, proc.stderr
    assert peak - base_peak < 40 << 20, (peak, base_peak)
