"""Graceful drain on SIGTERM: readiness turns false, new MCP requests are refused with
503, what is in flight finishes, then the ASGI server's own shutdown runs.

An orchestrator (Kubernetes, systemd, a load balancer's deploy) sends SIGTERM and
waits. uvicorn alone would stop accepting connections at once and give in-flight
requests 5 s; a drain instead keeps the listening socket open for
``--drain-timeout`` seconds at most:

1. ``/readyz`` answers 503 ``{"status": "draining"}`` (the load balancer stops
   sending traffic here), ``/healthz`` still 200 (the process is alive: no restart);
2. a new request to the MCP path gets 503 with ``Retry-After`` and a JSON-RPC error
   (``SHUTTING_DOWN``, -31002): a client retries it, reaching another instance;
3. requests in flight (plain calls, SSE streams, a blocked ``tasks/result``) and the
   tasks this process runs go on; the drain ends when none is left, or at the timeout;
4. then the handler the ASGI server installed for SIGTERM runs, as if the signal had
   just come: uvicorn closes the listening socket and idle connections, gives what is
   still running ``SHUTDOWN_GRACE_SECONDS`` (only work past the drain timeout), and
   runs the lifespan's shutdown, which records this process's unfinished tasks as
   failed in the store. Finished tasks stay in the store: with Redis, any other
   worker answers for them.

How it hooks in: ``install`` runs at the lifespan's start, in the main thread, after
uvicorn has put its own handler on SIGTERM (``uvicorn.Server.capture_signals``,
``Server.handle_exit``: named in ``guard.UVICORN_INTERNALS`` and checked by
tests/runtime/http/test_uvicorn_internals.py); it keeps that handler and puts the drain in
front of it. A second SIGTERM while draining changes nothing (``--workers``: the
supervisor forwards the signal each worker may also have had); SIGINT (Ctrl+C) is left
to uvicorn: it stops at once, and twice forces the exit. Under ``--workers N`` the
supervisor forwards SIGTERM to each worker and waits for them: each drains on its own.
Only ``serve_http`` asks for a drain; an app served by another ASGI server keeps that
server's signal handling.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

__all__ = ["DRAIN_POLL_SECONDS", "Drain", "Drainable"]

# How often a drain looks whether what is in flight has finished.
DRAIN_POLL_SECONDS = 0.05

_log = logging.getLogger("uvicorn.error")


class Drainable(Protocol):
    """What a drain asks of the app it drains (``app.HttpApp``)."""

    def begin_drain(self) -> None:
        """Readiness false, new MCP requests refused from now on."""

    def in_flight(self) -> int:
        """Requests being answered and tasks running here."""
        ...


class Drain:
    """The drain of one server process (see the module docstring)."""

    def __init__(self, app: Drainable, timeout: float) -> None:
        self.app = app
        self.timeout = timeout
        self._server_handler: Callable[[int, FrameType | None], Any] | int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task[None] | None = None
        self.requested = False

    def install(self) -> None:
        """Put the drain in front of the server's SIGTERM handler (at the lifespan's
        start; signals can be handled only in the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._loop = asyncio.get_running_loop()
        self._server_handler = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        # a signal handler runs between two bytecodes of whatever the loop was doing:
        # it only sets a flag and schedules the drain, as another thread would
        if self.requested or self._loop is None:
            return  # draining already
        self.requested = True
        self._loop.call_soon_threadsafe(self._start)

    def _start(self) -> None:
        self._runner = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        self.app.begin_drain()
        _log.info(
            "SIGTERM: draining (readiness false, new requests get 503) for at most %g s; "
            "%d in flight",
            self.timeout,
            self.app.in_flight(),
        )
        deadline = started + self.timeout
        while self.app.in_flight() and loop.time() < deadline:
            await asyncio.sleep(DRAIN_POLL_SECONDS)
        left = self.app.in_flight()
        if left:
            _log.warning(
                "drain timeout (%g s): %d still in flight; shutting down", self.timeout, left
            )
        else:
            _log.info("drained in %.2f s; shutting down", loop.time() - started)
        self._hand_over()

    def _hand_over(self) -> None:
        """The server's own SIGTERM handling, as if the signal had come now."""
        handler = self._server_handler
        if callable(handler):
            handler(signal.SIGTERM, None)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL if handler is None else handler)
        signal.raise_signal(signal.SIGTERM)
