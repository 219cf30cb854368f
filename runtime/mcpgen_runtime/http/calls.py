"""The HTTP call path: how one ``Invoke`` of the server core runs on the event loop.

The rule is the stdio server's (``server.actions.runs_inline``): a sync handler
with no ``timeout``, no ``ctx`` and no task runs inline, its argument check
included, exactly as the stdio server runs it on its reading thread: no thread
hop, no task, nothing allocated beyond the call. Every other call keeps the loop
free: its argument check (the core defers it, ``defer_checks``) and an async
handler's result conversion run on the bounded check pool, a sync handler on the
bounded handler pool, an async handler on the loop; the tool's ``timeout`` bounds
the handler, the wait for a pool slot included.

Pools, not a thread per call: ``DaemonPool`` keeps at most ``size`` daemon threads
and reuses idle ones (a thread idle for ``IDLE_SECONDS`` ends). A slot is held until its work really ends, also past a
timeout or a client that hung up, so the thread count stays bounded whatever
clients do; daemon threads, not ``concurrent.futures``, whose workers are joined
at interpreter exit: one hung handler never keeps a stopped server alive.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .._errors import ToolError
from ..server.actions import Invoke
from ..server.context import Context
from ..server.tools import CallOutcome, ToolRuntime

__all__ = ["Calls", "DaemonPool", "run_invoke"]

_T = TypeVar("_T")

# A pool thread with nothing to do for this long ends (a later call starts one again).
IDLE_SECONDS = 2.0


class DaemonPool:
    """At most ``size`` daemon threads running blocking work for the event loop,
    started on demand and reused while work is queued. ``run`` waits for a free
    slot first (an ``asyncio.Semaphore``, created for the loop that first uses it)."""

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name
        self._semaphore: asyncio.Semaphore | None = None
        self._work: collections.deque[Callable[[], None]] = collections.deque()
        self._ready = threading.Condition(threading.Lock())
        self._idle = 0  # threads waiting for work
        self.threads = 0  # threads started (they never end: daemon)

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.size)
        return self._semaphore

    async def run(self, fn: Callable[[], _T]) -> _T:
        """``fn()`` on a pool thread once a slot is free, in the caller's context (as
        ``asyncio.to_thread``: a request's span stays current in its handler); the slot
        is given back when ``fn`` ends, whether or not anyone still waits for its result."""
        semaphore = self.semaphore
        await semaphore.acquire()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        context = contextvars.copy_context()

        def settle(ok: bool, value: Any) -> None:
            semaphore.release()
            if future.done():
                return  # the waiter gave up (timeout, cancellation)
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

        def work() -> None:
            try:
                outcome: tuple[bool, Any] = (True, context.run(fn))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                outcome = (False, exc)
            try:
                loop.call_soon_threadsafe(settle, *outcome)
            except RuntimeError:
                pass  # the loop closed while the work ran: nobody is waiting

        self._submit(work)
        return await future

    def _submit(self, work: Callable[[], None]) -> None:
        with self._ready:
            self._work.append(work)
            if self._idle:
                self._ready.notify()
                return
            self.threads += 1  # the semaphore bounds this by `size`
        threading.Thread(target=self._serve, name=self.name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            with self._ready:
                while not self._work:
                    self._idle += 1
                    woken = self._ready.wait(IDLE_SECONDS)
                    self._idle -= 1
                    if not woken and not self._work:
                        self.threads -= 1  # idle for a while: a burst's threads do not linger
                        return
                work = self._work.popleft()
            work()


@dataclass(frozen=True)
class Calls:
    """The two pools of one server: argument checks and result conversions (short
    CPU work), and sync handlers that run in the background (which may block long)."""

    checks: DaemonPool
    handlers: DaemonPool

    @classmethod
    def create(cls, max_checks: int, max_handlers: int) -> Calls:
        return cls(
            DaemonPool(max_checks, "mcpgen-http-check"),
            DaemonPool(max_handlers, "mcpgen-http-handler"),
        )

    async def run_handler(
        self, tool: ToolRuntime, args: tuple[Any, ...] | dict[str, Any], context: Context | None
    ) -> CallOutcome:
        """A background handler: a sync one on the handler pool (past a timeout or a
        disconnect it finishes on its own, ``ctx.cancelled`` set, its result dropped),
        an async one on the loop with its result converted on the check pool."""
        if not tool.binding.is_async:
            try:
                return await self.handlers.run(lambda: tool.call_sync(args, context))
            except SystemExit as exc:  # sys.exit() in a handler: its failure, not the server's
                return CallOutcome(tool.handler_failed(exc))
        step = await tool.await_handler(args, context)
        if isinstance(step, CallOutcome):
            return step
        return await self.checks.run(lambda: tool.finish(step.value))

    async def run_bounded(
        self, tool: ToolRuntime, args: tuple[Any, ...] | dict[str, Any], context: Context | None
    ) -> CallOutcome:
        """``run_handler`` bounded by the tool's ``timeout``, which cancels its ``ctx``."""
        try:
            return await asyncio.wait_for(
                self.run_handler(tool, args, context), tool.binding.timeout
            )
        except TimeoutError:
            if context is not None:
                context.cancel()
            return CallOutcome(tool.timed_out())

    async def check(self, tool: ToolRuntime, arguments: Any) -> tuple[Any, ...] | dict[str, Any]:
        """``tool.check_arguments`` on the check pool (raises ``ToolError``)."""
        return await self.checks.run(lambda: tool.check_arguments(arguments))


async def run_invoke(invoke: Invoke, calls: Calls) -> CallOutcome:
    """A background ``Invoke`` (not inline): check its arguments if the core left
    them unchecked, then run the handler bounded by the tool's timeout; a timeout
    cancels its ``ctx``. Bad arguments and ``ToolError`` become ``isError`` results."""
    tool = invoke.tool
    args = invoke.args
    if not invoke.checked:
        try:
            args = await calls.check(tool, args)
        except ToolError as exc:
            return CallOutcome({"content": list(exc.content), "isError": True})
    return await calls.run_bounded(tool, args, invoke.context)
