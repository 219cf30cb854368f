"""The sessions generated clients call: ``Session`` (threads) and ``AsyncSession``
(asyncio) pick the protocol era (a ``server/discover`` probe, falling back to the
``initialize`` handshake), check the server's tools against the contract and make
``tools/list``/``tools/call`` requests over any line transport. Tool calls that
run as tasks on the server are followed through ``TaskHandle``/``AsyncTaskHandle``.

Both are thin shells around ``ClientCore``; they differ only in how a caller
waits for its response (a lock vs. a future).

The code lives in ``client.base`` (shared state), ``client.sync`` and ``client.aio``
(the sessions and their task handles), ``client.flows`` (the protocol flows both run),
``client.listing``, ``client.tasks`` and ``client.results``; this module is where
callers import it from.
"""

from __future__ import annotations

from ..contract.check import Verify
from .aio import AsyncSession, AsyncTaskHandle
from .base import (
    DEFAULT_PROBE_TIMEOUT,
    DEFAULT_TASK_TTL_MS,
    AsyncProgressCallback,
    NotificationHandler,
    ProgressCallback,
)
from .core import ProtocolChoice
from .listing import ListedTool
from .results import ResultConverter, convert_result
from .sync import Session, TaskHandle
from .tasks import TaskStatus, _TaskState

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "DEFAULT_TASK_TTL_MS",
    "AsyncProgressCallback",
    "AsyncSession",
    "AsyncTaskHandle",
    "ListedTool",
    "NotificationHandler",
    "ProgressCallback",
    "ProtocolChoice",
    "ResultConverter",
    "Session",
    "TaskHandle",
    "TaskStatus",
    "Verify",
    "_TaskState",
    "convert_result",
]
