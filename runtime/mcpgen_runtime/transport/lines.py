"""What every transport shares: the ``Transport``/``AsyncTransport`` protocols, line
framing with its size bound (``LineSplitter``, ``read_lines``), the stderr tail, and
the constants of starting and stopping a server process.
"""

from __future__ import annotations

import logging
import os
import select
import shutil
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import BinaryIO, Protocol

from .._errors import McpError, ProtocolError, ServerExited

logger = logging.getLogger("mcpgen.client")


LineCallback = Callable[[bytes], None]


CloseCallback = Callable[[], None]


#: Runs a complete MCP server reading lines from the first stream and writing
#: lines to the second (flushing each) until the first reaches EOF.
ServeFunction = Callable[[BinaryIO, BinaryIO], None]


#: The longest line accepted from a server: 16 MiB (16,777,216 bytes, the newline
#: not counted), the same default as the server's own frame limit. Set per
#: session with ``max_message_bytes=``.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


CHUNK = 1 << 16


_STDERR_LINES = 200  # lines of the server's stderr kept for error messages


STDERR_LINE_MAX = 4096  # bytes kept of one stderr line (a newline-less flood is cut)


CLOSE_GRACE = 2.0  # seconds after closing stdin before SIGTERM, then before SIGKILL


EXIT_SETTLE = 1.0  # seconds to wait for the exit code once stdout hit EOF


READER_DRAIN = 0.25  # seconds readers get to finish once the child is reaped


POSIX = os.name == "posix"


class Transport(Protocol):
    """What the sync session needs from a line transport."""

    def start(self, on_line: LineCallback, on_close: CloseCallback) -> None: ...
    def send(self, line: bytes) -> None: ...
    def stop(self) -> None: ...
    def exit_error(self) -> McpError: ...


class AsyncTransport(Protocol):
    """What the async session needs from a line transport."""

    async def start(self, on_line: LineCallback, on_close: CloseCallback) -> None: ...
    async def send(self, line: bytes) -> None: ...
    def send_nowait(self, line: bytes) -> None: ...
    async def stop(self) -> None: ...
    def exit_error(self) -> McpError: ...


class LineTooLong(Exception):
    """A line passed the splitter's bound; ``before`` holds the complete lines
    that preceded it in the same chunk (still to be delivered, in order)."""

    def __init__(self, before: list[bytes]) -> None:
        super().__init__("line too long")
        self.before = before


class LineSplitter:
    """Cuts a byte stream into lines; ``max_line`` bounds a line that never ends.

    ``strict=False`` cuts an over-long line into pieces of about ``max_line``
    bytes (stderr: only the tail is kept anyway); ``strict=True`` raises
    ``LineTooLong`` as soon as a line has more than ``max_line`` bytes, before
    more than ``max_line`` plus one chunk is held.
    """

    __slots__ = ("_max_line", "_parts", "_size", "_strict")

    def __init__(self, max_line: int | None = None, *, strict: bool = False) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._max_line = max_line
        self._strict = strict

    def feed(self, chunk: bytes) -> list[bytes]:
        limit = self._max_line
        if b"\n" not in chunk:
            self._parts.append(chunk)
            self._size += len(chunk)
            if limit is not None and self._size > limit:
                if self._strict:
                    self._discard()
                    raise LineTooLong([])
                return [self._flush()]
            return []
        lines = chunk.split(b"\n")
        if self._parts:
            if self._strict and limit is not None and self._size + len(lines[0]) > limit:
                self._discard()
                raise LineTooLong([])
            self._parts.append(lines[0])
            lines[0] = b"".join(self._parts)
            self._parts.clear()
            self._size = 0
        tail = lines.pop()
        if self._strict and limit is not None:
            for index, line in enumerate(lines):
                if len(line) > limit:
                    raise LineTooLong(lines[:index])
            if len(tail) > limit:
                raise LineTooLong(lines)
        if tail:
            self._parts.append(tail)
            self._size = len(tail)
        return lines

    def _discard(self) -> None:
        self._parts.clear()
        self._size = 0

    def _flush(self) -> bytes:
        line = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        return line


class LineFeed:
    """Cuts chunks into lines and delivers each to ``on_line``. With
    ``on_too_long``, a line over ``max_line`` bytes calls it once; from then on
    everything fed is discarded (the caller keeps draining the pipe until EOF).
    Every reader (thread or task, stdout or stderr) feeds one of these."""

    __slots__ = ("_on_line", "_on_too_long", "_splitter")

    def __init__(
        self,
        on_line: LineCallback,
        max_line: int | None,
        on_too_long: Callable[[], None] | None = None,
    ) -> None:
        self._on_line = on_line
        self._on_too_long = on_too_long
        self._splitter: LineSplitter | None = LineSplitter(max_line, strict=on_too_long is not None)

    def feed(self, chunk: bytes) -> None:
        splitter = self._splitter
        if splitter is None:
            return  # discarding after an over-long line
        try:
            lines = splitter.feed(chunk)
        except LineTooLong as exc:
            lines = exc.before
            self._splitter = None
        for line in lines:
            self._on_line(line)
        if self._splitter is None:
            assert self._on_too_long is not None
            self._on_too_long()


def read_lines(
    fd: int,
    wake_fd: int | None,
    on_line: LineCallback,
    max_line: int | None,
    on_too_long: Callable[[], None] | None = None,
) -> None:
    """Deliver each line read from ``fd`` until EOF, or until ``wake_fd`` turns
    readable (stop() uses it to free a thread whose pipe a grandchild keeps open);
    ``max_line`` and ``on_too_long``: see ``_LineFeed``."""
    feed = LineFeed(on_line, max_line, on_too_long)
    poller = None
    if wake_fd is not None and hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(wake_fd, select.POLLIN)
    while True:
        if poller is not None and any(ready == wake_fd for ready, _ in poller.poll()):
            return
        try:
            chunk = os.read(fd, CHUNK)
        except OSError:
            return
        if not chunk:
            return
        feed.feed(chunk)


def _check_limit(max_message_bytes: int) -> int:
    if (
        isinstance(max_message_bytes, bool)
        or not isinstance(max_message_bytes, int)
        or (max_message_bytes < 1)
    ):
        raise ValueError(f"max_message_bytes must be a positive integer, not {max_message_bytes!r}")
    return max_message_bytes


def too_long_error(limit: int) -> ProtocolError:
    return ProtocolError(
        f"the server sent a message larger than {limit} bytes (the client's max_message_bytes); "
        "the session is closed and the server was stopped",
        reason="message_too_large",
        data={"limit": limit},
    )


def join_all(threads: Sequence[threading.Thread], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def write_all(fd: int, line: bytes) -> None:
    written = os.write(fd, line)
    if written < len(line):  # pipes rarely split a write; be correct when they do
        view = memoryview(line)[written:]
        while view:
            view = view[os.write(fd, view) :]


def close_fd(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def child_argv(command: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
    """The argv to run. A given ``env`` replaces the environment (as in subprocess);
    when it holds no PATH the program is still looked up on *our* PATH, so
    ``env={"TOKEN": "…"}`` does not make ``mcp-server-time`` unfindable, while the
    child itself sees exactly ``env``."""
    argv = [os.fspath(part) for part in command]
    if not argv:
        raise ValueError("the server command is empty")
    if env is not None and "PATH" not in env and os.sep not in argv[0]:
        found = shutil.which(argv[0])
        if found is not None:
            argv[0] = found
    return argv


class _StderrTail:
    """The last lines of the server's stderr, each cut to a bounded length, so a
    server writing megabytes costs a fixed amount of memory."""

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        self._lines: deque[bytes] = deque(maxlen=_STDERR_LINES)

    def append(self, line: bytes) -> None:
        self._lines.append(
            line if len(line) <= STDERR_LINE_MAX else line[:STDERR_LINE_MAX] + b"..."
        )

    def text(self) -> str:
        return b"\n".join(self._lines).decode("utf-8", errors="replace").strip()


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "the server closed its output"
    if returncode < 0 and POSIX:
        try:
            return f"the server was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            pass
    return f"the server exited with code {returncode}"


def signal_group(pid: int, terminate: Callable[[], None], sig: int) -> None:
    """Send ``sig`` to the server's process group (POSIX: the server and whatever
    it spawned), or terminate it elsewhere; a process already gone is no error."""
    try:
        if POSIX:
            os.killpg(pid, sig)
        else:
            terminate()
    except (ProcessLookupError, PermissionError):
        pass


class ChildProcess:
    """What both stdio transports (threads and asyncio) share: the command, its
    environment and directory, the line bound, the stderr tail, and how the
    child's end reads in an error."""

    command: list[str]
    env: dict[str, str] | None
    cwd: str | os.PathLike[str] | None
    # Always an int once configured; typed as _AsyncLines declares it (None: unbounded).
    max_message_bytes: int | None
    _stderr: _StderrTail
    _failure: ProtocolError | None

    def _configure(
        self,
        command: Sequence[str],
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        max_message_bytes: int,
    ) -> None:
        self.command = list(command)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.max_message_bytes = _check_limit(max_message_bytes)
        self._stderr = _StderrTail()
        self._failure = None  # set when a line broke the limit

    @property
    def returncode(self) -> int | None:
        raise NotImplementedError

    def stderr_tail(self) -> str:
        return self._stderr.text()

    def _process_exit(self) -> ServerExited:
        returncode = self.returncode
        return ServerExited(
            describe_exit(returncode), returncode=returncode, stderr_tail=self.stderr_tail()
        )
