"""How a handler's ``ctx.ask`` reaches the caller, in each protocol era.

**2026-07-28 (stateless): the handler is run again, answers replayed.** A request
may reach any worker, and a Python coroutine cannot move between processes, so
nothing is parked: the first ``ask`` whose answer is not known yet unwinds the
handler (``InputRequired``, a ``BaseException`` so that ``except Exception`` in a
handler does not swallow it) and the call is answered with an ``input_required``
result: the question in ``inputRequests`` (key ``ask-<n>``, the ask's position in
the handler's run) and a sealed ``requestState`` holding the answers given so far.
The client retries the call with ``inputResponses``; the handler runs again from
the top and each ``ask`` gets its recorded answer (matched by position and by a
digest of its message and schema: a handler that asks something else at that
position is asked anew). This is the official Python SDK's choice too (its
resolvers re-run each round, the outcomes ride ``request_state``); it needs no
shared store, so any worker holding the key resumes a call. The cost: code before
an ``ask`` runs once per round, so it must be free of side effects (or idempotent).

``requestState`` is sealed by ``server.sealing.StateSeal``: HMAC-SHA256 under the server's key
(``--request-state-key`` / ``MCPGEN_REQUEST_STATE_KEY``; else a random key of this
server run, shared by its ``--workers`` but by nothing else), bound to the tool,
a digest of its arguments and the requestor, and expiring after ``ttl`` seconds.
It is signed, not encrypted: it holds nothing but the caller's own answers. A
forged, altered, foreign or expired state is refused with -32602.

**2025-06-18 / 2025-11-25: the server asks and waits.** To a client that declared
the ``elicitation`` capability at ``initialize``, ``LegacyAsker`` sends an
``elicitation/create`` request and blocks the handler (a worker thread, or an
awaiting coroutine) until the answer (routed back by ``Outbound``), the call's
cancellation, or ``ASK_TIMEOUT_SECONDS``. A client without the capability is
never asked: ``ask`` returns ``Declined()`` at once, as it does on a connection
that cannot carry a request back (an HTTP call answered with JSON).

Stateless HTTP keeps nothing between requests, so the capabilities a client
declared at ``initialize`` travel with it: to a client that declared elicitation,
the ``initialize`` answer hands an ``Mcp-Session-Id`` that is a sealed token of
that declaration (``server.sealing.session_token``), which the client sends with every later
request; any worker holding the key reads it back. A call of such a client is
answered on an SSE stream, which carries the ``elicitation/create`` request; the
client POSTs its answer, which ``Outbound`` routes to the waiting handler.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._errors import ToolError
from ..protocol.asking import (
    ELICITATION_VERSIONS,
    Accepted,
    Answer,
    Declined,
    answer_from_wire,
    answer_to_wire,
)
from ..protocol.jsonrpc import encode
from ..schema.answers import answer_problem
from .sealing import StateSeal, question_digest

if TYPE_CHECKING:
    from .context import Context

__all__ = [
    "ASK_TIMEOUT_SECONDS",
    "ELICITATION_VERSIONS",
    "InputRequired",
    "LegacyAsker",
    "ModernAsker",
    "Outbound",
]

# Seconds a handshake-era ask waits for the caller's answer (then: Declined).
ASK_TIMEOUT_SECONDS = 300.0
# How the id of every ask this server sends begins (``Outbound``), in any process
_ASK_ID_PREFIX = "mcpgen-ask-"


class InputRequired(BaseException):
    """Unwinds a 2026-07-28 handler at an unanswered ask; ``result`` is the
    ``input_required`` result (without ``resultType``) the call is answered with."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("the caller's input is required")
        self.result = result


class ModernAsker:
    """One round of a 2026-07-28 call: answers known so far, the round's responses."""

    streams = False  # the question goes out as the call's result

    def __init__(
        self,
        seal: StateSeal,
        binding: Mapping[str, Any],
        claims: Mapping[str, Any] | None,
        responses: Mapping[str, Any],
        can_ask: bool,
    ) -> None:
        self._seal = seal
        self._binding = dict(binding)
        recorded = claims.get("answers") if claims else None
        self._answers: list[list[Any]] = list(recorded) if isinstance(recorded, list) else []
        pending = claims.get("pending") if claims else None
        self._pending = pending if isinstance(pending, str) else None
        self._responses = responses
        self._can_ask = can_ask
        self._position = 0

    def answer(
        self, message: str, schema: Mapping[str, Any], timeout: float | None, ctx: Context
    ) -> Answer:
        position, question = self._position, question_digest(message, schema)
        self._position += 1
        if not self._can_ask:
            return Declined()
        if position < len(self._answers):
            asked, wire = self._answers[position]
            if asked == question:
                answer = answer_from_wire(wire)
                assert not isinstance(answer, str)  # recorded only once checked
                return answer
            del self._answers[position:]  # the handler asks something else now
        key = f"ask-{position}"
        if position == len(self._answers) and self._pending == question and key in self._responses:
            answer = _checked(self._responses[key], schema, key)
            self._answers.append([question, answer_to_wire(answer)])
            return answer
        request = {"method": "elicitation/create",
                   "params": {"mode": "form", "message": message, "requestedSchema": dict(schema)}}  # fmt: skip
        state = self._seal.seal({**self._binding, "answers": self._answers, "pending": question})
        raise InputRequired({"inputRequests": {key: request}, "requestState": state})

    async def answer_async(
        self, message: str, schema: Mapping[str, Any], timeout: float | None, ctx: Context
    ) -> Answer:
        return self.answer(message, schema, timeout, ctx)


def _checked(wire: object, schema: Mapping[str, Any], key: str) -> Answer:
    """The caller's answer ``key``, once it fits the shape and the schema (else the
    call fails with a tool error saying why)."""
    answer = answer_from_wire(wire)
    if isinstance(answer, str):
        raise ToolError(f"the caller's answer {key} is not an elicitation result: {answer}")
    if isinstance(answer, Accepted):
        problem = answer_problem(schema, answer.value)
        if problem is not None:
            raise ToolError(
                f"the caller's answer {key} does not match the requested schema: {problem}"
            )
    return answer


class Outbound:
    """Requests this server sent its client (``elicitation/create``), awaiting the
    response the connection routes back (``resolve``). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        # ids unique across processes: an answer POSTed to another worker is not ours
        self._prefix = f"{_ASK_ID_PREFIX}{os.urandom(6).hex()}-"
        self._pending: dict[str, concurrent.futures.Future[dict[str, Any]]] = {}

    def open(self) -> tuple[str, concurrent.futures.Future[dict[str, Any]]]:
        future: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
        with self._lock:
            request_id = f"{self._prefix}{next(self._ids)}"
            self._pending[request_id] = future
        return request_id, future

    @staticmethod
    def ours(request_id: object) -> bool:
        """Whether ``request_id`` is of the form this server's asks use (some worker's)."""
        return isinstance(request_id, str) and request_id.startswith(_ASK_ID_PREFIX)

    def forget(self, request_id: str) -> None:
        with self._lock:
            self._pending.pop(request_id, None)

    def resolve(self, message: Mapping[str, Any]) -> bool:
        """Hand a response to the ask awaiting it (False: none does)."""
        request_id = message.get("id")
        with self._lock:
            future = self._pending.pop(request_id, None) if isinstance(request_id, str) else None
        if future is None or future.done():
            return False
        future.set_result(dict(message))
        return True


class LegacyAsker:
    """Asks a handshake-era client that declared elicitation, and waits. Where the
    call's answer cannot carry a request (stateless HTTP answering with JSON) it
    declines at once. ``_Question`` is the asking; each half here only waits."""

    streams = True  # the call is answered on a stream (SSE), so the request can go out

    def __init__(self, outbound: Outbound) -> None:
        self._outbound = outbound

    def answer(
        self, message: str, schema: Mapping[str, Any], timeout: float | None, ctx: Context
    ) -> Answer:
        if not ctx.can_send:
            return Declined()
        question = _Question(self._outbound, message, schema, timeout, ctx)
        try:
            response = question.future.result(question.seconds)
        except concurrent.futures.TimeoutError:
            return question.unanswered()
        except concurrent.futures.CancelledError:
            question.withdraw()
            ctx.raise_if_cancelled()
            raise
        return question.answered(response)

    async def answer_async(
        self, message: str, schema: Mapping[str, Any], timeout: float | None, ctx: Context
    ) -> Answer:
        import asyncio

        if not ctx.can_send:
            return Declined()
        question = _Question(self._outbound, message, schema, timeout, ctx)
        try:
            waiting = asyncio.wrap_future(question.future)
            response = await asyncio.wait_for(waiting, question.seconds)
        except TimeoutError:
            return question.unanswered()
        except asyncio.CancelledError:
            question.withdraw()
            raise
        return question.answered(response)


class _Question:
    """One ``elicitation/create`` sent on ``ctx`` (on creation), without the waiting:
    ``future`` gets the response, to wait for ``seconds``; then ``answered``,
    ``unanswered`` (the time ran out) or ``withdraw`` (the call was cancelled)."""

    def __init__(
        self,
        outbound: Outbound,
        message: str,
        schema: Mapping[str, Any],
        timeout: float | None,
        ctx: Context,
    ) -> None:
        self._outbound, self._schema, self._ctx = outbound, schema, ctx
        self.seconds = ASK_TIMEOUT_SECONDS if timeout is None else timeout
        self.request_id, self.future = outbound.open()
        params = {"message": message, "requestedSchema": dict(schema)}
        ctx.send_frame(
            encode({"jsonrpc": "2.0", "id": self.request_id, "method": "elicitation/create",
                    "params": params})
        )  # fmt: skip
        ctx.watch(self.future)

    def answered(self, response: Mapping[str, Any]) -> Answer:
        return _from_response(response, self._schema)

    def unanswered(self) -> Answer:
        self._abandon("no answer in time")
        return Declined()

    def withdraw(self) -> None:
        self._abandon("the tool call was cancelled")

    def _abandon(self, reason: str) -> None:
        self._outbound.forget(self.request_id)
        note = {"requestId": self.request_id, "reason": reason}
        self._ctx.send_frame(
            encode({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": note})
        )


def _from_response(response: Mapping[str, Any], schema: Mapping[str, Any]) -> Answer:
    """The answer a JSON-RPC response carries; an error response is a decline."""
    if "result" not in response:
        return Declined()
    return _checked(response["result"], schema, "to elicitation/create")
