"""The sync transports: a server as a child process over its stdin/stdout
(``StdioTransport``) or as a thread of this process (``InMemoryTransport``); reader
threads deliver lines to the session's callback.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import threading
import traceback
from collections.abc import Mapping, Sequence
from typing import BinaryIO

from .._errors import McpError, ServerExited
from .lines import (
    CLOSE_GRACE,
    DEFAULT_MAX_MESSAGE_BYTES,
    EXIT_SETTLE,
    POSIX,
    READER_DRAIN,
    STDERR_LINE_MAX,
    ChildProcess,
    CloseCallback,
    LineCallback,
    ServeFunction,
    child_argv,
    close_fd,
    describe_exit,
    join_all,
    read_lines,
    signal_group,
    too_long_error,
    write_all,
)

logger = logging.getLogger("mcpgen.client")


class _PipeSender:
    """The sync transports' write side: one lock, so lines from several threads
    never interleave, and a gone peer read as ``exit_error()``."""

    _write_fd: int | None
    _send_lock: threading.Lock
    _closed: threading.Event

    def exit_error(self) -> McpError:
        raise NotImplementedError

    def send(self, line: bytes) -> None:
        """Write one line (a complete message ending in ``\\n``)."""
        try:
            # The fd is read under the lock so stop() cannot close it under us.
            with self._send_lock:
                fd = self._write_fd
                if fd is None or self._closed.is_set():
                    raise self.exit_error()
                write_all(fd, line)
        except OSError:
            self._closed.wait(EXIT_SETTLE)
            raise self.exit_error() from None


class StdioTransport(ChildProcess, _PipeSender):
    """Runs the server as a child process and exchanges lines over its stdin/stdout.

    ``env=None`` inherits our environment; a mapping replaces it entirely (see
    ``child_argv`` for how the program is still found without PATH). The child's
    stderr is drained continuously by its own thread into a bounded tail, so a
    chatty server never blocks and its last words reach ``ServerExited``.
    """

    max_message_bytes: int

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._configure(command, env, cwd, max_message_bytes)
        self._proc: subprocess.Popen[bytes] | None = None
        self._write_fd: int | None = None  # the child's stdin
        self._send_lock = threading.Lock()
        self._stop_lock = threading.Lock()
        self._stopped = False
        self._stop_done = threading.Event()
        self._wake_r: int | None = None
        self._wake_w: int | None = None
        self._threads: list[threading.Thread] = []
        self._closed = threading.Event()
        self._close_lock = threading.Lock()
        self._close_reported = False

    def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        argv = child_argv(self.command, self.env)
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
                start_new_session=POSIX,
            )
        except OSError as exc:
            self._closed.set()
            raise ServerExited(f"cannot start the server {argv!r}: {exc}", returncode=None) from exc
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._write_fd = proc.stdin.fileno()
        if POSIX:
            self._wake_r, self._wake_w = os.pipe()
        stderr_thread = threading.Thread(
            target=read_lines,
            args=(proc.stderr.fileno(), self._wake_r, self._stderr.append, STDERR_LINE_MAX),
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
        self._failure = too_long_error(self.max_message_bytes)
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
            read_lines(
                fd, self._wake_r, on_line, self.max_message_bytes, lambda: self._too_long(on_close)
            )
            # EOF: let the child finish dying so the error carries its exit code
            # and the stderr tail holds its last words.
            assert self._proc is not None
            try:
                self._proc.wait(timeout=EXIT_SETTLE)
            except subprocess.TimeoutExpired:
                pass
            stderr_thread.join(timeout=EXIT_SETTLE / 2)
        except Exception:  # a callback bug must not leave callers hanging
            logger.exception("the stdout reader of the MCP server failed")
        finally:
            self._closed.set()
            self._report_close(on_close)

    @property
    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def exit_error(self) -> McpError:
        return self._failure if self._failure is not None else self._process_exit()

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
            proc.wait(timeout=CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=CLOSE_GRACE)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL if POSIX else signal.SIGTERM)
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
        self._write_fd = None
        if proc.stdin is not None and not proc.stdin.closed:
            try:
                proc.stdin.close()
            except OSError:
                pass

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        if proc.poll() is None:
            signal_group(proc.pid, proc.terminate, sig)

    def _join_threads(self) -> bool:
        """Join the reader threads; True when none is left running."""
        others = [thread for thread in self._threads if thread is not threading.current_thread()]
        # The child is reaped: the readers only have the pipes' last bytes to take.
        join_all(others, READER_DRAIN)
        # Still blocked: a grandchild holds the pipes open. Wake the readers instead.
        if any(thread.is_alive() for thread in others) and self._wake_w is not None:
            os.write(self._wake_w, b"x")
            join_all(others, EXIT_SETTLE)
        if any(thread.is_alive() for thread in others):
            return False
        close_fd(self._wake_r)
        close_fd(self._wake_w)
        self._wake_r = self._wake_w = None
        return True


class ServerThread:
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


class InMemoryStatus:
    """What both in-memory transports (sync and asyncio) report of their server
    thread: whether it runs, its exit code (0, or 1 after a crash) and the crash's
    traceback in place of a process's stderr."""

    _server: ServerThread | None

    @property
    def is_running(self) -> bool:
        return self._server is not None and self._server.returncode is None

    @property
    def returncode(self) -> int | None:
        return None if self._server is None else self._server.returncode

    def stderr_tail(self) -> str:
        return "" if self._server is None else self._server.failure.strip()

    def _server_exited(self) -> ServerExited:
        returncode = self.returncode
        message = "the in-memory server stopped" if returncode == 0 else describe_exit(returncode)
        return ServerExited(message, returncode=returncode, stderr_tail=self.stderr_tail())


class InMemoryTransport(InMemoryStatus, _PipeSender):
    """The analogue of httpx's ``MockTransport``: connects a session to a server
    running in this process (``serve``) over two OS pipes, with no subprocess, so
    users test their tools end to end at the speed of a function call."""

    def __init__(self, serve: ServeFunction) -> None:
        self.serve = serve
        self._server: ServerThread | None = None
        self._write_fd: int | None = None  # the client→server pipe
        self._from_server: int | None = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._closed = threading.Event()
        self._stopped = False

    def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        server_in, self._write_fd = os.pipe()
        self._from_server, server_out = os.pipe()
        self._server = ServerThread(self.serve, server_in, server_out)
        self._reader = threading.Thread(
            target=self._read,
            args=(self._from_server, on_line, on_close),
            name="mcpgen-in-memory-reader",
            daemon=True,
        )
        self._reader.start()

    def _read(self, fd: int, on_line: LineCallback, on_close: CloseCallback) -> None:
        try:
            read_lines(fd, None, on_line, None)
            if self._server is not None:
                self._server.join(EXIT_SETTLE)
        except Exception:
            logger.exception("the reader of the in-memory MCP server failed")
        finally:
            self._closed.set()
            on_close()

    def exit_error(self) -> ServerExited:
        return self._server_exited()

    def stop(self) -> None:
        """Close the client→server pipe (EOF for the server) and join both threads."""
        if self._stopped:
            return
        self._stopped = True
        with self._send_lock:
            close_fd(self._write_fd)
            self._write_fd = None
        if self._server is not None and not self._server.join(CLOSE_GRACE):
            logger.warning("the in-memory MCP server ignored EOF; leaving its daemon thread")
        if self._reader is not None:
            self._reader.join(CLOSE_GRACE)
        if self._reader is None or not self._reader.is_alive():
            close_fd(self._from_server)
            self._from_server = None
