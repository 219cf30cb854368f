"""Answering a tool that asks for input: the caller's ``on_input`` callback.

A session given ``on_input`` declares the ``elicitation`` capability (form mode)
and calls it with the question's message and requested schema whenever a tool
asks: for an ``elicitation/create`` request (2025-06-18, 2025-11-25) and for each
entry of an ``input_required`` result's ``inputRequests`` (2026-07-28, after which
the call is retried with ``inputResponses`` and the echoed ``requestState``, at
most ``MAX_INPUT_ROUNDS`` times). The callback returns a ``dict`` (the answer),
``Accepted(dict)``, ``Declined()``, ``Dismissed()`` or None (declined); the async
session also takes a coroutine function. An answer is checked against the
requested schema before it is sent: one that does not match is not sent, the
mismatch is logged and the server gets a decline, as it does when the callback
raises. Without ``on_input`` a session declares no elicitation, so a server does
not ask; one that asks anyway gets declines.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..protocol.asking import Accepted, Answer, Declined, Dismissed, answer_to_wire
from ..schema.answers import answer_problem

__all__ = [
    "MAX_INPUT_ROUNDS",
    "AsyncInputCallback",
    "InputCallback",
    "decided",
    "question_of",
]

logger = logging.getLogger("mcpgen.client")

# Retries of one 2026-07-28 call that keeps asking (the official SDKs' bound too).
MAX_INPUT_ROUNDS = 10

_Returned = Answer | Mapping[str, Any] | None

#: ``on_input(message, requested_schema)`` → the answer: a dict, ``Accepted``,
#: ``Declined()``, ``Dismissed()`` or None (declined).
InputCallback = Callable[[str, dict[str, Any]], _Returned]

#: The async session's: the same, or a coroutine function returning it.
AsyncInputCallback = Callable[[str, dict[str, Any]], Awaitable[_Returned] | _Returned]


def question_of(request: object) -> tuple[str, dict[str, Any]] | None:
    """(message, requested schema) of an elicitation request's params, or None
    when it is not a form elicitation this client can show."""
    if not isinstance(request, Mapping):
        return None
    message, schema = request.get("message"), request.get("requestedSchema")
    if request.get("mode", "form") != "form" or not isinstance(message, str):
        return None
    if not isinstance(schema, dict):
        return None
    return message, schema


def decided(returned: object, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ElicitResult`` to send for what the callback returned: a checked
    answer, or a decline (logged) when it does not fit ``schema``."""
    answer: Answer
    if returned is None:
        answer = Declined()
    elif isinstance(returned, Accepted | Declined | Dismissed):
        answer = returned
    elif isinstance(returned, Mapping):
        answer = Accepted(dict(returned))
    else:
        logger.error("on_input returned %s; declining", type(returned).__name__)
        answer = Declined()
    if isinstance(answer, Accepted):
        problem = answer_problem(schema, answer.value)
        if problem is not None:
            logger.error("on_input's answer does not match the requested schema: %s", problem)
            answer = Declined()
    return answer_to_wire(answer)


def declined() -> dict[str, Any]:
    """The answer when nobody can answer (no callback, or it raised)."""
    return answer_to_wire(Declined())
