"""The stdio server shell around ``ServerConnection``.

The main thread reads frames and runs sync handlers inline (no thread hop on
the hot path). Async handlers run on one event loop in a helper thread and
answer as they finish; sync handlers with a ``timeout``, a ``ctx`` or a task run
on worker threads so a hung one can be abandoned. At most
``max_concurrent_calls`` such background calls run at once (64 by default,
``--max-concurrent-calls``): a worker thread keeps its slot until it ends, even
past its timeout, so threads stay bounded (about one per slot, two for a call
with a timeout); further calls are refused with "Server busy" (-31000). Writes to stdout are serialised by a lock, and
stdout is moved out of reach of handlers: ``print`` and even C-level writes to
fd 1 land on stderr, so the protocol stream carries only frames.

``--rate-limit``: the core refuses requests past the bucket (``RATE_LIMITED``,
-31001); this shell hands it the monotonic clock with each line.

SIGTERM (``run_stdio``) drains: the server stops reading (a request the client sends
after it is never read, and the client sees the stream end), the calls in flight
finish and are answered within ``drain_timeout`` (a plain sync handler, which runs
on the reading thread, always runs to its end), then the process exits with 0. The
signal interrupts a blocked read only; it never lands inside a handler.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import asyncio

from ..protocol.jsonrpc import INVALID_REQUEST, error_response
from ..ratelimit.bucket import RateLimit
from ..telemetry.logs import diagnostics
from ..telemetry.server import Observation, ServerTelemetry, TaskObservation
from .actions import Action
from .core import Cancel, Invoke, SendFrame, ServerConnection
from .tools import App, CallOutcome

__all__ = [
    "DEFAULT_DRAIN_SECONDS",
    "DEFAULT_MAX_CONCURRENT_CALLS",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "StopReading",
    "run_stdio",
    "serve_streams",
]

# A frame longer than this is refused (and skipped) instead of being buffered.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
# Background calls (tasks, async, ctx or timeout handlers) running at once (64,
# the HTTP server's bound on sync handler threads); further ones get "Server busy".
DEFAULT_MAX_CONCURRENT_CALLS = 64
# How long in-flight calls may still finish after stdin reaches EOF.
SHUTDOWN_GRACE_SECONDS = 5.0
# How long in-flight calls may still finish after SIGTERM (30 s; --drain-timeout).
DEFAULT_DRAIN_SECONDS = 30.0


class _Draining(Exception):
    """Raised by the SIGTERM handler into a blocked read: stop reading."""


class StopReading:
    """Whether the server was told to stop (SIGTERM): set by ``on_signal``, which
    interrupts the read loop only while it waits for a line. A line read at that
    instant may be dropped, which the client cannot tell from a line never read."""

    def __init__(self) -> None:
        self.requested = False
        self.reading = False

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True
        if self.reading:
            self.reading = False  # raised once: never into the code that handles it
            raise _Draining


class _Writer:
    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.broken = False

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.broken:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.broken = True  # the client went away; keep draining quietly


class _Background:
    """Lazily started helpers: an event loop thread and daemon worker threads."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.pending: set[concurrent.futures.Future[Any]] = set()
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        import asyncio  # only servers with async tools pay for importing it

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="mcpgen-async-tools", daemon=True
            )
            self._thread.start()
        return self._loop

    def submit(self, fn: Any, *args: Any) -> concurrent.futures.Future[Any]:
        """Run ``fn`` on a daemon thread. Not a ThreadPoolExecutor: its workers are
        joined at interpreter exit, so one hung handler would keep the server alive
        after stdin EOF (and a few hung ones would starve every later timed call)."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                future.set_exception(exc)

        threading.Thread(target=work, name="mcpgen-tool", daemon=True).start()
        return future

    def track(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self.pending.add(future)
        future.add_done_callback(self._untrack)

    def _untrack(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self.pending.discard(future)

    def close(self, grace: float) -> None:
        with self._lock:
            pending = list(self.pending)
        if pending:
            concurrent.futures.wait(pending, timeout=grace)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            assert self._thread is not None
            self._thread.join(timeout=grace)


def serve_streams(
    app: App,
    instream: BinaryIO,
    outstream: BinaryIO,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS,
    rate_limit: RateLimit | None = None,
    stop: StopReading | None = None,
    drain_timeout: float = DEFAULT_DRAIN_SECONDS,
    telemetry: ServerTelemetry | None = None,
) -> None:
    """Serve one client reading frames from ``instream`` until EOF, or until ``stop``
    is requested (then in-flight calls get ``drain_timeout`` seconds). ``telemetry``:
    what to record (default: ``ServerTelemetry.start`` with the installed providers)."""
    if telemetry is None:
        telemetry = ServerTelemetry.start("pipe")
    server = _Server(app, outstream, max_concurrent_calls, rate_limit)
    if telemetry is not None:
        server.observe_with(telemetry)
    stop = stop or StopReading()
    try:
        while not stop.requested:
            stop.reading = True
            try:
                if stop.requested:  # the signal came before the flag was up
                    break
                line = instream.readline(max_message_bytes + 1)
            finally:
                stop.reading = False
            if not line:
                break
            if len(line) > max_message_bytes and not line.endswith(b"\n"):
                _skip_rest_of_line(instream)
                server.writer.write(
                    error_response(
                        None,
                        INVALID_REQUEST,
                        f"Invalid Request: message larger than {max_message_bytes} bytes",
                    )
                )
                continue
            server.feed(line)
    except _Draining:
        pass
    finally:
        server.background.close(drain_timeout if stop.requested else SHUTDOWN_GRACE_SECONDS)
        if telemetry is not None:
            telemetry.session_ended(server.connection.version)


def _skip_rest_of_line(stream: BinaryIO) -> None:
    while True:
        chunk = stream.readline(1 << 20)
        if not chunk or chunk.endswith(b"\n"):
            return


class _Server:
    """Runs the actions of one ``ServerConnection``; every call into the core
    holds ``lock``, since calls complete on other threads."""

    def __init__(
        self,
        app: App,
        outstream: BinaryIO,
        max_concurrent_calls: int | None,
        rate_limit: RateLimit | None = None,
    ) -> None:
        self.writer = _Writer(outstream)
        self.lock = threading.Lock()
        self.connection = ServerConnection(
            app,
            emit=self.writer.write,
            max_concurrent_calls=max_concurrent_calls,
            rate_limit=rate_limit,
        )
        self.clock = None if rate_limit is None else time.monotonic  # the core's only clock
        self.background = _Background()
        self.telemetry: ServerTelemetry | None = None
        self.arrived = 0.0  # when the line being handled arrived (telemetry)
        self.observed: dict[Any, Observation] = {}  # request id → its running call
        self.tasks_observed: dict[str, TaskObservation] = {}  # task id → its execution

    def observe_with(self, telemetry: ServerTelemetry) -> None:
        self.telemetry = telemetry
        self.connection.observe = self.observe

    def observe(self, message: Any, actions: list[Action]) -> None:
        """The core decoded ``message`` and answers with ``actions`` (under ``lock``)."""
        telemetry = self.telemetry
        if telemetry is None or not _is_request(message):
            return
        obs = telemetry.begin(message, self.arrived)
        code, running = None, False
        for action in actions:
            if type(action) is SendFrame and code is None:
                code = action.code  # the answer's error code (None: a result)
            elif type(action) is Invoke and action.task is None:
                running = True  # ended by finish
            elif type(action) is Invoke and action.task is not None:
                caller = None if obs.span is None else obs.span.get_span_context()
                self.tasks_observed[action.task.task_id] = telemetry.task_started(
                    action.tool.name, action.task.task_id, caller
                )
        if running:
            self.observed[obs.request_id] = obs
        else:
            telemetry.end(obs, code=code, version=self.connection.version)

    def feed(self, line: bytes) -> None:
        now = 0.0 if self.clock is None else self.clock()
        if self.telemetry is not None:
            self.arrived = time.perf_counter()
        with self.lock:
            actions = self.connection.receive(line, now)
        for action in actions:
            if isinstance(action, SendFrame):
                self.writer.write(action.data)
            elif isinstance(action, Invoke):
                self.start(action)
            elif isinstance(action, Cancel):
                self.cancel(action)  # (the task-store actions come only with tasks_outside)

    def finish(self, invoke: Invoke, outcome: CallOutcome, *, still_running: bool = False) -> None:
        with self.lock:
            frames = self.connection.complete(invoke, outcome, still_running=still_running)
            if self.telemetry is not None:
                self._observe_outcome(invoke, outcome)
        for frame in frames:
            self.writer.write(frame)

    def _observe_outcome(self, invoke: Invoke, outcome: CallOutcome) -> None:
        assert self.telemetry is not None
        if invoke.cancelled:
            outcome = CallOutcome(cancelled=True)
        if invoke.task is not None:
            task = self.tasks_observed.pop(invoke.task.task_id, None)
            if task is not None:
                self.telemetry.task_finished(task, outcome)
            return
        obs = self.observed.pop(invoke.request_id, None)
        if obs is not None:
            self.telemetry.finished(obs, outcome, self.connection.version)

    def _in_span(self, invoke: Invoke) -> contextvars.Context | None:
        """A copy of this thread's context whose current span is the call's, for its
        handler to run in (None: no span to run in)."""
        if self.telemetry is None:
            return None
        obs = self.observed.get(invoke.request_id)
        span_context = None if obs is None else self.telemetry.context_of(obs)
        if span_context is None:
            return None
        from opentelemetry import context

        token = context.attach(span_context)
        try:
            return contextvars.copy_context()
        finally:
            context.detach(token)

    def release(self, invoke: Invoke) -> None:
        with self.lock:
            self.connection.release(invoke)

    def start(self, invoke: Invoke) -> None:
        tool = invoke.tool
        in_span = self._in_span(invoke) if self.telemetry is not None else None
        if invoke.runs_inline:  # the hot path: no thread hop
            if in_span is None:
                self.finish(invoke, tool.call_sync(invoke.args))
            else:
                self.finish(invoke, in_span.run(tool.call_sync, invoke.args))
            return
        if tool.binding.is_async:
            import asyncio

            schedule = asyncio.run_coroutine_threadsafe
            if in_span is None:
                future = schedule(_run_async(invoke), self.background.loop)
            else:  # the task takes the context of the thread that schedules it
                future = in_span.run(schedule, _run_async(invoke), self.background.loop)
            invoke.future = future
            self.background.track(future)
            future.add_done_callback(lambda done: self.finish(invoke, _async_outcome(invoke, done)))
            return
        if in_span is None:
            worker = self.background.submit(tool.call_sync, invoke.args, invoke.context)
        else:
            worker = self.background.submit(
                in_span.run, tool.call_sync, invoke.args, invoke.context
            )
        invoke.future = worker
        if tool.binding.timeout is None:
            # nothing to time: the worker answers when it ends (no waiting thread)
            self.background.track(worker)
            worker.add_done_callback(
                lambda done: self.finish(invoke, _worker_outcome(invoke, done))
            )
            return
        # Shutdown waits for the answer, not for a handler that already timed out.
        answered: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.background.track(answered)
        threading.Thread(
            target=self._await_worker,
            args=(invoke, worker, answered),
            name="mcpgen-wait",
            daemon=True,
        ).start()

    def _await_worker(
        self,
        invoke: Invoke,
        worker: concurrent.futures.Future[CallOutcome],
        answered: concurrent.futures.Future[None],
    ) -> None:
        try:
            done, _ = concurrent.futures.wait([worker], timeout=invoke.tool.binding.timeout)
            if done:
                self.finish(invoke, _worker_outcome(invoke, worker))
                return
            # The worker cannot be killed; it finishes in the background (a daemon
            # thread), keeping its slot, and its result is dropped. The caller gets a
            # clear error now.
            if invoke.context is not None:
                invoke.context.cancel()
            self.finish(invoke, CallOutcome(invoke.tool.timed_out()), still_running=True)
            worker.add_done_callback(lambda _: self.release(invoke))
        finally:
            answered.set_result(None)

    def cancel(self, action: Cancel) -> None:
        # Async handlers are interrupted; sync ones see ctx.cancelled (Python
        # cannot stop a thread), and the core suppresses whatever they return.
        future = action.invoke.future
        if future is not None and action.invoke.tool.binding.is_async:
            future.cancel()


async def _run_async(invoke: Invoke) -> CallOutcome:
    import asyncio

    timeout = invoke.tool.binding.timeout
    call = invoke.tool.call_async(invoke.args, invoke.context)
    if timeout is None:
        return await call
    try:
        return await asyncio.wait_for(call, timeout)
    except TimeoutError:
        return CallOutcome(invoke.tool.timed_out())


def _is_request(message: Any) -> bool:
    """A message the core answers as a request (a valid id, a string method)."""
    if type(message) is not dict:
        return False
    return type(message.get("id")) in (str, int) and isinstance(message.get("method"), str)


def _worker_outcome(invoke: Invoke, future: concurrent.futures.Future[CallOutcome]) -> CallOutcome:
    error = future.exception()
    if error is not None:  # SystemExit from the handler: reported like a failure
        return CallOutcome(invoke.tool.handler_failed(error))
    return future.result()


def _async_outcome(invoke: Invoke, future: concurrent.futures.Future[CallOutcome]) -> CallOutcome:
    if future.cancelled():
        return CallOutcome(cancelled=True)
    error = future.exception()
    if error is not None:
        return CallOutcome(invoke.tool.handler_failed(error))
    return future.result()


def run_stdio(
    app: App,
    *,
    max_message_bytes: int | None = None,
    max_concurrent_calls: int | None = None,
    rate_limit: RateLimit | None = None,
    drain_timeout: float = DEFAULT_DRAIN_SECONDS,
    telemetry: ServerTelemetry | None = None,
) -> None:
    """Serve ``app`` on this process's stdin/stdout until EOF, or SIGTERM (a drain);
    ``telemetry``: see ``serve_streams``."""
    limit = max_message_bytes or _limit_from_environment()
    protocol_out = _take_stdout()
    stop = StopReading()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, stop.on_signal)
    try:
        serve_streams(
            app,
            sys.stdin.buffer,
            protocol_out,
            max_message_bytes=limit,
            max_concurrent_calls=max_concurrent_calls or DEFAULT_MAX_CONCURRENT_CALLS,
            rate_limit=rate_limit,
            stop=stop,
            drain_timeout=drain_timeout,
            telemetry=telemetry,
        )
    except KeyboardInterrupt:
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        try:
            protocol_out.close()
        except OSError:
            pass


def _limit_from_environment() -> int:
    text = os.environ.get("MCPGEN_MAX_MESSAGE_BYTES")
    if text is None:
        return DEFAULT_MAX_MESSAGE_BYTES
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:  # a negative limit would silently lift the bound altogether
        diagnostics("server").warning(
            "ignoring MCPGEN_MAX_MESSAGE_BYTES=%r (not a positive integer); the limit is %d bytes",
            text,
            DEFAULT_MAX_MESSAGE_BYTES,
        )
        return DEFAULT_MAX_MESSAGE_BYTES
    return value


def _take_stdout() -> BinaryIO:
    """A private handle on the real stdout; fd 1 and ``sys.stdout`` now go to stderr."""
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(private, "wb")
