"""The asyncio transports: the same two (child process, in-memory server) driven by
an event loop; ``_AsyncLines`` holds what they share.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from .._errors import McpError, ProtocolError, ServerExited
from .lines import (
    CHUNK,
    CLOSE_GRACE,
    DEFAULT_MAX_MESSAGE_BYTES,
    EXIT_SETTLE,
    POSIX,
    STDERR_LINE_MAX,
    ChildProcess,
    CloseCallback,
    LineCallback,
    LineFeed,
    ServeFunction,
    child_argv,
    signal_group,
    too_long_error,
)
from .sync import InMemoryStatus, ServerThread

logger = logging.getLogger("mcpgen.client")


async def _pump(
    reader: asyncio.StreamReader,
    on_line: LineCallback,
    max_line: int | None,
    on_too_long: Callable[[], None] | None = None,
) -> None:
    """``read_lines`` for asyncio: the same bound, the same discarding after it."""
    feed = LineFeed(on_line, max_line, on_too_long)
    while chunk := await reader.read(CHUNK):
        feed.feed(chunk)


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
        self._failure = too_long_error(limit)
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
                await asyncio.wait_for(self._closed.wait(), EXIT_SETTLE)
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


class AsyncStdioTransport(ChildProcess, _AsyncLines):
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
        self._configure(command, env, cwd, max_message_bytes)
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None

    async def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        argv = child_argv(self.command, self.env)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=POSIX,
            )
        except OSError as exc:
            self._closed.set()
            raise ServerExited(f"cannot start the server {argv!r}: {exc}", returncode=None) from exc
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._writer = proc.stdin
        loop = asyncio.get_running_loop()
        self._stderr_task = loop.create_task(
            _pump(proc.stderr, self._stderr.append, STDERR_LINE_MAX), name="mcpgen-async-stderr"
        )
        self._start_reader(proc.stdout, on_line, on_close)

    async def _settle(self) -> None:
        assert self._proc is not None
        try:
            await asyncio.wait_for(self._proc.wait(), EXIT_SETTLE)
            if self._stderr_task is not None:
                await asyncio.wait_for(asyncio.shield(self._stderr_task), EXIT_SETTLE / 2)
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

    def _exit_error(self) -> ServerExited:
        return self._process_exit()

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
            self._signal(proc, signal.SIGKILL if POSIX else signal.SIGTERM)
            raise
        finally:
            await self._finish_tasks()
            # The subprocess transport warns when garbage-collected unclosed.
            transport: Any = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()

    async def _reap(self, proc: asyncio.subprocess.Process) -> None:
        try:
            await asyncio.wait_for(proc.wait(), CLOSE_GRACE)
            return
        except TimeoutError:
            self._signal(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), CLOSE_GRACE)
        except TimeoutError:
            self._signal(proc, signal.SIGKILL if POSIX else signal.SIGTERM)
            await proc.wait()

    async def _finish_tasks(self) -> None:
        await self._join_reader(EXIT_SETTLE)
        task = self._stderr_task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(task, EXIT_SETTLE)
            except (TimeoutError, asyncio.CancelledError):
                pass

    @staticmethod
    def _signal(proc: asyncio.subprocess.Process, sig: int) -> None:
        if proc.returncode is None:
            signal_group(proc.pid, proc.terminate, sig)


class AsyncInMemoryTransport(InMemoryStatus, _AsyncLines):
    """``InMemoryTransport`` for asyncio: the server still runs ``serve`` in a
    daemon thread; this side reads and writes the pipes through the event loop."""

    def __init__(self, serve: ServeFunction) -> None:
        super().__init__()
        self.serve = serve
        self._server: ServerThread | None = None

    async def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        loop = asyncio.get_running_loop()
        server_in, to_server = os.pipe()
        from_server, server_out = os.pipe()
        self._server = ServerThread(self.serve, server_in, server_out)
        reader = asyncio.StreamReader(limit=CHUNK)
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
            await server.join_async(EXIT_SETTLE)

    def _exit_error(self) -> ServerExited:
        return self._server_exited()

    async def _stop(self) -> None:
        """Close the client→server pipe and wait for the server thread and reader."""
        await self._close_writer()
        server = self._server
        if server is not None and not await server.join_async(CLOSE_GRACE):
            logger.warning("the in-memory MCP server ignored EOF; leaving its daemon thread")
        await self._join_reader(CLOSE_GRACE)
