"""The effects of the client's protocol flows (``client.flows``): what a flow
yields, and the primitives a session driver performs.

What a flow may yield: ``Request`` (a request whose result the flow reads; a
JSON-RPC error, a timeout or a closed session is thrown into the flow), ``Exchange``
(a request that is never cancelled, answering the ``Outcome`` with its result or
error), ``Usable`` (raise if the session cannot be used), ``Connected`` (whether
requests can still be sent) and ``CancelNowait`` (a ``tasks/cancel`` nobody waits
for), besides the primitives. ``client.flows.lowered`` turns those into the
primitives a driver performs: ``Prepare`` (register a request, answered with its
``Pending``), ``Await`` (send it and wait for its ``Outcome``), ``Write``,
``WriteNowait``, ``Sleep``, ``Now``, ``ProgressDone``, ``ProgressDrop``, ``AskInput``,
``Start`` and ``Close``.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from .core import ProgressFunction
from .task_state import TaskState

if TYPE_CHECKING:
    from ..contract.compare import Change
    from .core import Handshake

    #: What ``flows.connect`` agreed: the handshake and the contract warnings.
    Connection = tuple[Handshake, list[Change]]

T = TypeVar("T")

COMPLETE = frozenset({"complete"})  # what a request other than tasks/* may answer


# -- what a flow yields ----------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """Send a request; the flow receives its result (``resultType`` checked against
    ``allowed``) or has the error thrown in. ``timeout`` None: the session's."""

    method: str
    params: Mapping[str, Any] | None
    timeout: float | None = None
    allowed: frozenset[str] = COMPLETE


@dataclass(frozen=True)
class Exchange:
    """Send a request that is never cancelled; receive the ``Outcome`` (result or
    error); a timeout is thrown in."""

    method: str
    params: Mapping[str, Any]
    label: str
    timeout: float


@dataclass(frozen=True)
class Usable:
    """Raise unless the session can still send (closed → ``RuntimeError``)."""


@dataclass(frozen=True)
class Connected:
    """Receive whether the session is open and its server alive."""


@dataclass(frozen=True)
class CancelNowait:
    """Send ``tasks/cancel`` for ``state`` and forget it (its waiter was cancelled)."""

    state: TaskState


# -- what a driver performs ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prepare:
    """Register a request with the session's ``ClientCore`` and a fresh waiter;
    receive its ``Pending``. ``progress`` (a callback: its progress is routed to it)
    and ``tasks``: see ``ClientCore.request``."""

    method: str
    params: Mapping[str, Any] | None
    progress: ProgressFunction | None = None
    tasks: bool = True


@dataclass(frozen=True, slots=True)
class Pending:
    """A registered request: its id (also its progress token), line and waiter."""

    id: int
    line: bytes
    waiter: Any


class Liveness:
    """Progress as a sign of life: each progress notification of a call starts its
    ``limit`` anew, up to ``longest`` seconds in all (MCP lets a client reset its
    timeout on progress, with a maximum). The reader counts the notifications
    (``touch``); the shell, which owns the clock, waits in slices of ``slice(limit)``
    and restarts the limit when the count has moved (``Window``)."""

    __slots__ = ("longest", "progress")

    def __init__(self, longest: float) -> None:
        self.longest = longest
        self.progress = 0

    def touch(self) -> None:
        self.progress += 1


class Window:
    """A shell's wait under ``Liveness``, on the shell's clock: ``left(now)`` is how long
    to wait next (at most a slice), 0 or less when the time is up."""

    __slots__ = ("last", "limit", "liveness", "seen", "started")

    def __init__(self, liveness: Liveness, limit: float, now: float) -> None:
        self.liveness, self.limit = liveness, limit
        self.started = self.last = now
        self.seen = liveness.progress

    def left(self, now: float) -> float:
        if self.liveness.progress != self.seen:  # progress since the last look: alive
            self.seen, self.last = self.liveness.progress, now
        end = min(self.last + self.limit, self.started + self.liveness.longest)
        # noticed within a tenth of the limit (at least 50 ms): a slice, not the whole wait
        return min(end - now, max(self.limit / 10, 0.05))


@dataclass(frozen=True, slots=True)
class Await:
    """Send ``pending`` and receive its ``Outcome`` within ``limit`` seconds, else
    ``Timeout`` is thrown in (after ``notifications/cancelled`` when
    ``cancellable``: ``initialize`` and a probe never are). With ``liveness`` the limit
    starts anew on each progress notification, up to ``liveness.longest``."""

    pending: Pending
    label: str
    limit: float
    cancellable: bool = True
    liveness: Liveness | None = None


@dataclass(frozen=True, slots=True)
class Write:
    """Write a line (a notification); a gone server raises."""

    line: bytes


@dataclass(frozen=True, slots=True)
class WriteNowait:
    """Write a line nobody waits for; a gone server is ignored."""

    line: bytes


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True, slots=True)
class Now:
    """Read the driver's monotonic clock (seconds). The flows never read a clock
    themselves: deadlines are computed from what this answers (a test's fake clock)."""


@dataclass(frozen=True)
class ProgressDone:
    """Stop routing a progress token; the async session lets its callbacks finish."""

    token: Any


@dataclass(frozen=True, slots=True)
class ProgressDrop:
    """Stop routing a progress token; the async session cancels its callbacks."""

    token: Any


@dataclass(frozen=True, slots=True)
class AskInput:
    """Answer an ``input_required`` result's ``inputRequests`` with the session's
    ``on_input`` (``client.asking``); receive the ``inputResponses``."""

    requests: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Start:
    """Start the transport, wired to the session's reader callbacks; once it has
    started, the driver counts the session as connected."""


@dataclass(frozen=True, slots=True)
class Close:
    """Close the session (stop the server)."""


Primitive = (
    AskInput
    | Prepare
    | Await
    | Write
    | WriteNowait
    | Sleep
    | Now
    | ProgressDone
    | ProgressDrop
    | Start
    | Close
)
Effect = Request | Exchange | Usable | Connected | CancelNowait | Primitive
Flow = Generator[Effect, Any, T]
