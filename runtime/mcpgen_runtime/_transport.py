"""I/O shells that move newline-delimited JSON lines between a client and a server:
a child process over stdio (sync and async) or a server running in this process.

Transports know nothing of JSON-RPC. Each delivers every line the server writes to
an ``on_line`` callback and calls ``on_close`` once when the server side is gone,
so the session can fail its pending requests at once instead of letting them hang.

A stdio transport bounds what one line may cost: a line longer than
``max_message_bytes`` is never buffered beyond that size. It ends the exchange
(``exit_error()`` is then a ``ProtocolError`` naming the limit, ``on_close``
fires at once) and the transport stops the server itself, reading and
discarding its output meanwhile so that a child blocked on a full pipe can die.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import shutil
import signal
import subprocess
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, BinaryIO, Protocol

from ._errors import McpError, ProtocolError, ServerExited

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "AsyncInMemoryTransport",
    "AsyncStdioTransport",
    "AsyncTransport",
    "InMemoryTransport",
    "ServeFunction",
    "StdioTransport",
    "Transport",
]

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

_CHUNK = 1 << 16
_STDERR_LINES = 200  # lines of the server's stderr kept for error messages
_STDERR_LINE_MAX = 4096  # bytes kept of one stderr line (a newline-less flood is cut)
_CLOSE_GRACE = 2.0  # seconds after closing stdin before SIGTERM, then before SIGKILL
_EXIT_SETTLE = 1.0  # seconds to wait for the exit code once stdout hit EOF
_READER_DRAIN = 0.25  # seconds readers get to finish once the child is reaped
_POSIX = os.name == "posix"


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


# --------------------------------------------------------------------------- helpers


class _LineTooLong(Exception):
    """A line passed the splitter's bound; ``before`` holds the complete lines
    that preceded it in the same chunk (still to be delivered, in order)."""

    def __init__(self, before: list[bytes]) -> None:
        super().__init__("line too long")
        self.before = before


class _LineSplitter:
    """Cuts a byte stream into lines; ``max_line`` bounds a line that never ends.

    ``strict=False`` cuts an over-long line into pieces of about ``max_line``
    bytes (stderr: only the tail is kept anyway); ``strict=True`` raises
    ``_LineTooLong`` as soon as a line has more than ``max_line`` bytes, before
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
                    raise _LineTooLong([])
                return [self._flush()]
            return []
        lines = chunk.split(b"\n")
        if self._parts:
            if self._strict and limit is not None and self._size + len(lines[0]) > limit:
                self._discard()
                raise _LineTooLong([])
            self._parts.append(lines[0])
            lines[0] = b"".join(self._parts)
            self._parts.clear()
            self._size = 0
        tail = lines.pop()
        if self._strict and limit is not None:
            for index, line in enumerate(lines):
                if len(line) > limit:
                    raise _LineTooLong(lines[:index])
            if len(tail) > limit:
                raise _LineTooLong(lines)
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


def _read_lines(
    fd: int,
    wake_fd: int | None,
    on_line: LineCallback,
    max_line: int | None,
    on_too_long: Callable[[], None] | None = None,
) -> None:
    """Deliver each line read from ``fd`` until EOF, or until ``wake_fd`` turns
    readable (stop() uses it to free a thread whose pipe a grandchild keeps open).

    With ``on_too_long``, a line over ``max_line`` bytes calls it once; from then
    on everything read is discarded (the pipe keeps draining until EOF)."""
    splitter: _LineSplitter | None = _LineSplitter(max_line, strict=on_too_long is not None)
    poller = None
    if wake_fd is not None and hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(wake_fd, select.POLLIN)
    while True:
        if poller is not None and any(ready == wake_fd for ready, _ in poller.poll()):
            return
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:
            return
        if not chunk:
            return
        if splitter is None:
            continue  # discarding after an over-long line
        try:
            lines = splitter.feed(chunk)
        except _LineTooLong as exc:
            for line in exc.before:
                on_line(line)
            splitter = None
            assert on_too_long is not None
            on_too_long()
            continue
        for line in lines:
            on_line(line)


def _check_limit(max_message_bytes: int) -> int:
    if isinstance(max_message_bytes, bool) or not isinstance(max_message_bytes, int) or (
        max_message_bytes < 1
    ):
        raise ValueError(f"max_message_bytes must be a positive integer, not {max_message_bytes!r}")
    return max_message_bytes


def _too_long_error(limit: int) -> ProtocolError:
    return ProtocolError(
        f"the server sent a message larger than {limit} bytes (the client's max_message_bytes); "
        "the session is closed and the server was stopped",
        reason="message_too_large",
        data={"limit": limit},
    )


def _join_all(threads: Sequence[threading.Thread], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _write_all(fd: int, line: bytes) -> None:
    written = os.write(fd, line)
    if written < len(line):  # pipes rarely split a write; be correct when they do
        view = memoryview(line)[written:]
        while view:
            view = view[os.write(fd, view) :]


def _close_fd(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def _argv(command: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
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
            line if len(line) <= _STDERR_LINE_MAX else line[:_STDERR_LINE_MAX] + b"..."
        )

    def text(self) -> str:
        return b"\n".join(self._lines).decode("utf-8", errors="replace").strip()


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "the server closed its output"
    if returncode < 0 and _POSIX:
        try:
            return f"the server was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            pass
    return f"the server exited with code {returncode}"


# --------------------------------------------------------------------------- sync stdio


class StdioTransport:
    """Runs the server as a child process and exchanges lines over its stdin/stdout.

    ``env=None`` inherits our environment; a mapping replaces it entirely (see
    ``_argv`` for how the program is still found without PATH). The child's
    stderr is drained continuously by its own thread into a bounded tail, so a
    chatty server never blocks and its last words reach ``ServerExited``.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.command = list(command)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.max_message_bytes = _check_limit(max_message_bytes)
        self._proc: subprocess.Popen[bytes] | None = None
        self._stdin_fd: int | None = None
        self._send_lock = threading.Lock()
        self._stop_lock = threading.Lock()
        self._stopped = False
        self._stop_done = threading.Event()
        self._stderr = _StderrTail()
        self._wake_r: int | None = None
        self._wake_w: int | None = None
        self._threads: list[threading.Thread] = []
        self._closed = threading.Event()
        self._failure: ProtocolError | None = None  # set when a line broke the limit
        self._close_lock = threading.Lock()
        self._close_reported = False

    def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        argv = _argv(self.command, self.env)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                bufsize=0,
                # Own process group: stop() signals the server and whatever it
                # spawned (npx, uv run, shell wrappers) together.
                start_new_session=_POSIX,
            )
        except OSError as exc:
            self._closed.set()
            raise ServerExited(f"cannot start the server {argv!r}: {exc}", returncode=None) from exc
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._stdin_fd = proc.stdin.fileno()
        if _POSIX:
            self._wake_r, self._wake_w = os.pipe()
        stderr_thread = threading.Thread(
            target=_read_lines,
            args=(proc.stderr.fileno(), self._wake_r, self._stderr.append, _STDERR_LINE_MAX),
            name=f"mcpgen-stderr-{proc.pid}",
            daemon=True,
        )
        stdout_thread = threading.Thread(
            target=self._read_stdout,
            args=(proc.stdout.fileno(), on_line, on_close, stderr_thread),
            name=f"mcpgen-stdout-{proc.pid}",
            daemon=True,
        )
        self._threads = [stdout_thread, stderr_thread]
        stderr_thread.start()
        stdout_thread.start()

    def _report_close(self, on_close: CloseCallback) -> None:
        with self._close_lock:
            if self._close_reported:
                return
            self._close_reported = True
        on_close()

    def _too_long(self, on_close: CloseCallback) -> None:
        """A line broke the limit: fail the session now and stop the server (on a
        thread of its own, while this reader keeps draining the pipe)."""
        self._failure = _too_long_error(self.max_message_bytes)
        logger.info("%s", self._failure)
        self._report_close(on_close)
        stopper = threading.Thread(target=self.stop, name="mcpgen-stop-oversized", daemon=True)
        self._threads.append(stopper)
        stopper.start()

    def _read_stdout(
        self,
        fd: int,
        on_line: LineCallback,
        on_close: CloseCallback,
        stderr_thread: threading.Thread,
    ) -> None:
        try:
            _read_lines(
                fd, self._wake_r, on_line, self.max_message_bytes, lambda: self._too_long(on_close)
            )
            # EOF: let the child finish dying so the error carries its exit code
            # and the stderr tail holds its last words.
            assert self._proc is not None
            try:
                self._proc.wait(timeout=_EXIT_SETTLE)
            except subprocess.TimeoutExpired:
                pass
            stderr_thread.join(timeout=_EXIT_SETTLE / 2)
        except Exception:  # a callback bug must not leave callers hanging
            logger.exception("the stdout reader of the MCP server failed")
        finally:
            self._closed.set()
            self._report_close(on_close)

    def send(self, line: bytes) -> None:
        """Write one line (a complete message ending in ``\\n``)."""
        try:
            # Writes from several threads must not interleave inside a line, and
            # the fd is read under the lock so stop() cannot close it under us.
            with self._send_lock:
                fd = self._stdin_fd
                if fd is None or self._closed.is_set():
                    raise self.exit_error()
                _write_all(fd, line)
        except OSError:
            self._closed.wait(_EXIT_SETTLE)
            raise self.exit_error() from None

    @property
    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def stderr_tail(self) -> str:
        return self._stderr.text()

    def exit_error(self) -> McpError:
        if self._failure is not None:
            return self._failure
        returncode = self.returncode
        return ServerExited(
            _describe_exit(returncode), returncode=returncode, stderr_tail=self.stderr_tail()
        )

    def stop(self) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL; reap; join threads; close fds.

        Idempotent; a second caller waits until the first one has finished (the
        transport may have begun stopping by itself, after an over-long line)."""
        with self._stop_lock:
            first = not self._stopped
            self._stopped = True
        if not first:
            if threading.current_thread() not in self._threads:
                self._stop_done.wait()
            return
        try:
            self._stop()
        finally:
            self._stop_done.set()

    def _stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        # A sender stuck on a full pipe holds the lock; then stdin closes after the kill.
        if self._send_lock.acquire(timeout=0.1):
            try:
                self._close_stdin(proc)
            finally:
                self._send_lock.release()
        try:
            proc.wait(timeout=_CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=_CLOSE_GRACE)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL if _POSIX else signal.SIGTERM)
                proc.wait()
        with self._send_lock:
            self._close_stdin(proc)
        if self._join_threads():
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        else:  # never close an fd a live thread reads: the number could be reused
            logger.warning("a reader of the MCP server did not stop; leaving its pipes open")

    def _close_stdin(self, proc: subprocess.Popen[bytes]) -> None:
        self._stdin_fd = None
        if proc.stdin is not None and not proc.stdin.closed:
            try:
                proc.stdin.close()
            except OSError:
                pass

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        if proc.poll() is not None:
            return
        try:
            if _POSIX:
                os.killpg(proc.pid, sig)
            else:
                proc.terminate()
        except (ProcessLookupError, PermissionError):
            pass

    def _join_threads(self) -> bool:
        """Join the reader threads; True when none is left running."""
        others = [thread for thread in self._threads if thread is not threading.current_thread()]
        # The child is reaped: the readers only have the pipes' last bytes to take.
        _join_all(others, _READER_DRAIN)
        # Still blocked: a grandchild holds the pipes open. Wake the readers instead.
        if any(thread.is_alive() for thread in others) and self._wake_w is not None:
            os.write(self._wake_w, b"x")
            _join_all(others, _EXIT_SETTLE)
        if any(thread.is_alive() for thread in others):
            return False
        _close_fd(self._wake_r)
        _close_fd(self._wake_w)
        self._wake_r = self._wake_w = None
        return True


# --------------------------------------------------------------------------- sync in-memory


class _ServerThread:
    """Runs a ``serve`` function on two pipe ends in a daemon thread; records a
    crash as the in-memory stand-in for a process's exit code and stderr."""

    def __init__(self, serve: ServeFunction, server_in: int, server_out: int) -> None:
        self.returncode: int | None = None
        self.failure = ""
        self._serve = serve
        self._thread = threading.Thread(
            target=self._run,
            args=(server_in, server_out),
            name="mcpgen-in-memory-server",
            daemon=True,
        )
        self._thread.start()

    def _run(self, server_in: int, server_out: int) -> None:
        try:
            # Closing our end of the output pipe is the client reader's EOF.
            with open(server_in, "rb") as reader, open(server_out, "wb") as writer:
                self._serve_streams(reader, writer)
        except OSError:
            pass  # the final flush failed: the client closed its end first

    def _serve_streams(self, reader: BinaryIO, writer: BinaryIO) -> None:
        try:
            self._serve(reader, writer)
            self.returncode = 0
        except BaseException:
            self.failure = traceback.format_exc()
            self.returncode = 1
            logger.exception("the in-memory MCP server failed")

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    async def join_async(self, timeout: float) -> bool:
        """``join`` without blocking the event loop (and without an executor thread)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._thread.is_alive() and loop.time() < deadline:
            await asyncio.sleep(0.005)
        return not self._thread.is_alive()


class InMemoryTransport:
    """The analogue of httpx's ``MockTransport``: connects a session to a server
    running in this process (``serve``) over two OS pipes, with no subprocess, so
    users test their tools end to end at the speed of a function call."""

    def __init__(self, serve: ServeFunction) -> None:
        self.serve = serve
        self._server: _ServerThread | None = None
        self._to_server: int | None = None
        self._from_server: int | None = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._closed = threading.Event()
        self._stopped = False

    def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        server_in, self._to_server = os.pipe()
        self._from_server, server_out = os.pipe()
        self._server = _ServerThread(self.serve, server_in, server_out)
        self._reader = threading.Thread(
            target=self._read,
            args=(self._from_server, on_line, on_close),
            name="mcpgen-in-memory-reader",
            daemon=True,
        )
        self._reader.start()

    def _read(self, fd: int, on_line: LineCallback, on_close: CloseCallback) -> None:
        try:
            _read_lines(fd, None, on_line, None)
            if self._server is not None:
                self._server.join(_EXIT_SETTLE)
        except Exception:
            logger.exception("the reader of the in-memory MCP server failed")
        finally:
            self._closed.set()
            on_close()

    def send(self, line: bytes) -> None:
        try:
            with self._send_lock:
                fd = self._to_server
                if fd is None or self._closed.is_set():
                    raise self.exit_error()
                _write_all(fd, line)
        except OSError:
            self._closed.wait(_EXIT_SETTLE)
            raise self.exit_error() from None

    @property
    def is_running(self) -> bool:
        return self._server is not None and self._server.returncode is None

    @property
    def returncode(self) -> int | None:
        return None if self._server is None else self._server.returncode

    def stderr_tail(self) -> str:
        return "" if self._server is None else self._server.failure.strip()

    def exit_error(self) -> ServerExited:
        returncode = self.returncode
        message = "the in-memory server stopped" if returncode == 0 else _describe_exit(returncode)
        return ServerExited(message, returncode=returncode, stderr_tail=self.stderr_tail())

    def stop(self) -> None:
        """Close the client→server pipe (EOF for the server) and join both threads."""
        if self._stopped:
            return
        self._stopped = True
        with self._send_lock:
            _close_fd(self._to_server)
            self._to_server = None
        if self._server is not None and not self._server.join(_CLOSE_GRACE):
            logger.warning("the in-memory MCP server ignored EOF; leaving its daemon thread")
        if self._reader is not None:
            self._reader.join(_CLOSE_GRACE)
        if self._reader is None or not self._reader.is_alive():
            _close_fd(self._from_server)
            self._from_server = None


# --------------------------------------------------------------------------- async


async def _pump(
    reader: asyncio.StreamReader,
    on_line: LineCallback,
    max_line: int | None,
    on_too_long: Callable[[], None] | None = None,
) -> None:
    """``_read_lines`` for asyncio: the same bound, the same discarding after it."""
    splitter: _LineSplitter | None = _LineSplitter(max_line, strict=on_too_long is not None)
    while True:
        chunk = await reader.read(_CHUNK)
        if not chunk:
            return
        if splitter is None:
            continue
        try:
            lines = splitter.feed(chunk)
        except _LineTooLong as exc:
            for line in exc.before:
                on_line(line)
            splitter = None
            assert on_too_long is not None
            on_too_long()
            continue
        for line in lines:
            on_line(line)


class _AsyncLines:
    """The async plumbing both async transports share: a reader task feeding
    ``on_line`` and a writer with flow control."""

    #: The longest line read; ``None``: unbounded (a server in this process).
    max_message_bytes: int | None = None

    def __init__(self) -> None:
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()
        self._failure: ProtocolError | None = None  # set when a line broke the limit
        self._close_reported = False
        self._stopping: asyncio.Future[None] | None = None  # set once stop() began
        self._stop_task: asyncio.Task[None] | None = None

    def _start_reader(
        self, reader: asyncio.StreamReader, on_line: LineCallback, on_close: CloseCallback
    ) -> None:
        self._reader_task = asyncio.get_running_loop().create_task(
            self._read(reader, on_line, on_close), name="mcpgen-async-reader"
        )

    async def _read(
        self, reader: asyncio.StreamReader, on_line: LineCallback, on_close: CloseCallback
    ) -> None:
        limit = self.max_message_bytes
        try:
            too_long = None if limit is None else (lambda: self._too_long(limit, on_close))
            await _pump(reader, on_line, limit, too_long)
            await self._settle()
        except (Exception, asyncio.CancelledError) as exc:
            if not isinstance(exc, asyncio.CancelledError):
                logger.exception("the reader of the MCP server failed")
        finally:
            self._closed.set()
            self._report_close(on_close)

    def _report_close(self, on_close: CloseCallback) -> None:
        if not self._close_reported:
            self._close_reported = True
            on_close()

    def _too_long(self, limit: int, on_close: CloseCallback) -> None:
        """A line broke the limit: fail the session now and stop the server in a
        task of its own, while the reader keeps draining the pipe."""
        self._failure = _too_long_error(limit)
        logger.info("%s", self._failure)
        self._report_close(on_close)
        self._stop_task = asyncio.get_running_loop().create_task(
            self.stop(), name="mcpgen-stop-oversized"
        )

    async def stop(self) -> None:
        """Stop the server side; idempotent, and a second caller waits for the first."""
        if self._stopping is not None:
            if self._stop_task is not asyncio.current_task():
                await asyncio.shield(self._stopping)
            return
        self._stopping = asyncio.get_running_loop().create_future()
        try:
            await self._stop()
        finally:
            self._stopping.set_result(None)

    async def _stop(self) -> None:
        raise NotImplementedError

    async def _settle(self) -> None:
        """After EOF: wait for the exit status and last stderr (subclass hook)."""

    def send_nowait(self, line: bytes) -> None:
        """Queue one line without waiting for the pipe (for replies sent from callbacks)."""
        writer = self._writer
        if writer is None or self._closed.is_set() or writer.is_closing():
            raise self.exit_error()
        writer.write(line)

    async def send(self, line: bytes) -> None:
        self.send_nowait(line)
        writer = self._writer
        assert writer is not None
        try:
            await writer.drain()
        except (ConnectionError, OSError):
            try:
                await asyncio.wait_for(self._closed.wait(), _EXIT_SETTLE)
            except TimeoutError:
                pass
            raise self.exit_error() from None

    def exit_error(self) -> McpError:
        if self._failure is not None:
            return self._failure
        return self._exit_error()

    def _exit_error(self) -> ServerExited:
        raise NotImplementedError

    async def _close_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is None:
            return
        writer.close()
        try:
            await writer.wait_closed()
        except (ConnectionError, OSError):
            pass
        except NotImplementedError:
            pass  # a bare pipe protocol (in-memory) has no close waiter; close() suffices

    async def _join_reader(self, timeout: float) -> None:
        task = self._reader_task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except TimeoutError:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass


class AsyncStdioTransport(_AsyncLines):
    """``StdioTransport`` on asyncio subprocess pipes: a reader task, a stderr
    drain task and the same close/SIGTERM/SIGKILL escalation."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        super().__init__()
        self.command = list(command)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.max_message_bytes = _check_limit(max_message_bytes)
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr = _StderrTail()
        self._stderr_task: asyncio.Task[None] | None = None

    async def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        argv = _argv(self.command, self.env)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=_POSIX,
            )
        except OSError as exc:
            self._closed.set()
            raise ServerExited(f"cannot start the server {argv!r}: {exc}", returncode=None) from exc
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._writer = proc.stdin
        loop = asyncio.get_running_loop()
        self._stderr_task = loop.create_task(
            _pump(proc.stderr, self._stderr.append, _STDERR_LINE_MAX), name="mcpgen-async-stderr"
        )
        self._start_reader(proc.stdout, on_line, on_close)

    async def _settle(self) -> None:
        assert self._proc is not None
        try:
            await asyncio.wait_for(self._proc.wait(), _EXIT_SETTLE)
            if self._stderr_task is not None:
                await asyncio.wait_for(asyncio.shield(self._stderr_task), _EXIT_SETTLE / 2)
        except TimeoutError:
            pass

    @property
    def is_running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.returncode

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def stderr_tail(self) -> str:
        return self._stderr.text()

    def _exit_error(self) -> ServerExited:
        returncode = self.returncode
        return ServerExited(
            _describe_exit(returncode), returncode=returncode, stderr_tail=self.stderr_tail()
        )

    async def _stop(self) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL; reap; end both tasks."""
        proc = self._proc
        if proc is None:
            return
        try:
            await self._close_writer()
            await self._reap(proc)
        except BaseException:
            # Cancelled mid-shutdown: never leave the child running.
            self._signal(proc, signal.SIGKILL if _POSIX else signal.SIGTERM)
            raise
        finally:
            await self._finish_tasks()
            # The subprocess transport warns when garbage-collected unclosed.
            transport: Any = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()

    async def _reap(self, proc: asyncio.subprocess.Process) -> None:
        try:
            await asyncio.wait_for(proc.wait(), _CLOSE_GRACE)
            return
        except TimeoutError:
            self._signal(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), _CLOSE_GRACE)
        except TimeoutError:
            self._signal(proc, signal.SIGKILL if _POSIX else signal.SIGTERM)
            await proc.wait()

    async def _finish_tasks(self) -> None:
        await self._join_reader(_EXIT_SETTLE)
        task = self._stderr_task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(task, _EXIT_SETTLE)
            except (TimeoutError, asyncio.CancelledError):
                pass

    @staticmethod
    def _signal(proc: asyncio.subprocess.Process, sig: int) -> None:
        if proc.returncode is not None:
            return
        try:
            if _POSIX:
                os.killpg(proc.pid, sig)
            else:
                proc.terminate()
        except (ProcessLookupError, PermissionError):
            pass


class AsyncInMemoryTransport(_AsyncLines):
    """``InMemoryTransport`` for asyncio: the server still runs ``serve`` in a
    daemon thread; this side reads and writes the pipes through the event loop."""

    def __init__(self, serve: ServeFunction) -> None:
        super().__init__()
        self.serve = serve
        self._server: _ServerThread | None = None

    async def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        loop = asyncio.get_running_loop()
        server_in, to_server = os.pipe()
        from_server, server_out = os.pipe()
        self._server = _ServerThread(self.serve, server_in, server_out)
        reader = asyncio.StreamReader(limit=_CHUNK)
        read_file: IO[bytes] = os.fdopen(from_server, "rb", buffering=0)
        write_file: IO[bytes] = os.fdopen(to_server, "wb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), read_file)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, write_file
        )
        self._writer = asyncio.StreamWriter(transport, protocol, None, loop)
        self._start_reader(reader, on_line, on_close)

    async def _settle(self) -> None:
        server = self._server
        if server is not None:
            await server.join_async(_EXIT_SETTLE)

    @property
    def is_running(self) -> bool:
        return self._server is not None and self._server.returncode is None

    @property
    def returncode(self) -> int | None:
        return None if self._server is None else self._server.returncode

    def stderr_tail(self) -> str:
        return "" if self._server is None else self._server.failure.strip()

    def _exit_error(self) -> ServerExited:
        returncode = self.returncode
        message = "the in-memory server stopped" if returncode == 0 else _describe_exit(returncode)
        return ServerExited(message, returncode=returncode, stderr_tail=self.stderr_tail())

    async def _stop(self) -> None:
        """Close the client→server pipe and wait for the server thread and reader."""
        await self._close_writer()
        server = self._server
        if server is not None and not await server.join_async(_CLOSE_GRACE):
            logger.warning("the in-memory MCP server ignored EOF; leaving its daemon thread")
        await self._join_reader(_CLOSE_GRACE)
