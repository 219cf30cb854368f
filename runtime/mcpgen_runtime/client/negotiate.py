"""Era negotiation on the client, as a generator of steps: probe with
``server/discover`` at our modern revision, fall back to the ``initialize`` handshake.
``ClientCore.negotiate`` returns it; ``client.flows.open_connection`` runs its steps.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .._errors import ProtocolError, error_from_response
from ..protocol.constants import UNSUPPORTED_VERSION
from ..protocol.revisions import HANDSHAKE_VERSIONS, MODERN_VERSIONS

__all__ = [
    "Discover",
    "Initialize",
    "Outcome",
    "ProtocolChoice",
    "SendLine",
    "Step",
    "negotiate",
]

#: What a session is told to speak: probe and decide, or one era outright.
ProtocolChoice = Literal["auto", "legacy", "modern"]

LATEST_MODERN = MODERN_VERSIONS[-1]


class Negotiator(Protocol):
    """The two things negotiation asks of the client core (``ClientCore`` has them):
    adopt a ``server/discover`` result, and check an ``initialize`` result."""

    def accept_discover(self, result: Mapping[str, Any], version: str = ...) -> bool: ...

    def accept_initialize(self, result: Mapping[str, Any]) -> bytes: ...


# -- negotiation steps: what ``ClientCore.negotiate`` asks the shell to do ----------


@dataclass(frozen=True, slots=True)
class Discover:
    """Send ``server/discover`` at ``version``. A ``probe`` waits at most the probe
    timeout, and no answer is an ``Outcome`` with neither field (not an error)."""

    version: str
    probe: bool


@dataclass(frozen=True, slots=True)
class Initialize:
    """Send the ``initialize`` request (normal timeout; no answer is ``Timeout``)."""


@dataclass(frozen=True, slots=True)
class SendLine:
    """Write ``line`` (``notifications/initialized``); its outcome is ignored."""

    line: bytes


Step = Discover | Initialize | SendLine


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a step's request ended: a result, an error object, or neither (no answer)."""

    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


Steps = Generator[Step, Outcome | None, None]


def negotiate(core: Negotiator, choice: ProtocolChoice) -> Steps:
    """Open the connection in the era ``choice`` allows; the caller runs each
    yielded step and sends back its ``Outcome`` (``None`` after ``SendLine``).

    ``"auto"``: probe with ``server/discover`` at our modern revision. A
    ``DiscoverResult`` listing it → modern. ``-32022`` naming a mutual modern
    revision → probe once more at it. ``-32022`` listing only revisions we
    cannot speak in either era → ``ProtocolError``. Any other error, a result
    listing no modern revision we speak, or no answer within the probe timeout
    → legacy ``initialize``; if that is refused with ``-32022`` (a slow server
    answered the probe after all and locked the modern era), probe once more.
    ``"modern"``: discover only (its failure is an error). ``"legacy"``:
    ``initialize`` only. Raises ``ProtocolError`` when no era is agreed.
    """
    if choice not in ("auto", "legacy", "modern"):
        raise ValueError(f"protocol must be 'auto', 'legacy' or 'modern', not {choice!r}")
    if choice == "legacy":
        yield from _initialize_steps(core)
        return
    version = LATEST_MODERN
    for attempt in range(2):
        outcome = yield Discover(version, probe=choice == "auto")
        assert outcome is not None
        verdict = _read_discover(core, choice, outcome, version, attempt)
        if verdict is True:
            return
        if isinstance(verdict, str):
            version = verdict  # -32022 named a mutual modern revision: probe at it
            continue
        # any other error, a result with no modern revision, or silence: legacy
        outcome = yield Initialize()
        assert outcome is not None
        if outcome.error is None:
            assert outcome.result is not None
            yield SendLine(core.accept_initialize(outcome.result))
            return
        mutual = _mutual_modern(outcome.error)
        if not mutual or attempt != 0:
            raise error_from_response(outcome.error, "initialize")
        version = mutual[-1]  # the server is modern after all: probe again
    raise ProtocolError(
        "could not agree on a protocol era with the server", reason="unsupported_version"
    )


def _read_discover(
    core: Negotiator, choice: ProtocolChoice, outcome: Outcome, version: str, attempt: int
) -> bool | str | None:
    """What a probe's outcome decides: True (modern, adopted), a revision to probe
    again at, or None (fall back to ``initialize``); an outcome that rules out both
    eras (or any failure under ``"modern"``) raises."""
    if outcome.result is not None:
        if core.accept_discover(outcome.result, version):
            return True
        if choice == "modern":
            raise ProtocolError(
                "server/discover lists no protocol revision this client speaks "
                f"({', '.join(MODERN_VERSIONS)}): {outcome.result.get('supportedVersions')!r}",
                reason="unsupported_version",
                data=outcome.result.get("supportedVersions"),
            )
        return None
    if outcome.error is not None:
        mutual = _mutual_modern(outcome.error)
        if mutual and attempt == 0:
            return mutual[-1]
        if choice == "modern":
            raise error_from_response(outcome.error, "server/discover")
        supported = _supported_versions(outcome.error)
        if supported is not None and not any(v in HANDSHAKE_VERSIONS for v in supported):
            raise ProtocolError(
                "the server speaks only protocol revisions this client does not: "
                + ", ".join(map(str, supported)),
                code=UNSUPPORTED_VERSION,
                reason="unsupported_version",
                data=outcome.error.get("data"),
            )
        return None
    if choice == "modern":
        raise ProtocolError("server/discover got no answer", reason="no_answer")
    return None


def _initialize_steps(core: Negotiator) -> Steps:
    outcome = yield Initialize()
    assert outcome is not None
    if outcome.error is not None:
        raise error_from_response(outcome.error, "initialize")
    assert outcome.result is not None
    yield SendLine(core.accept_initialize(outcome.result))


def _mutual_modern(error: Mapping[str, Any]) -> list[str]:
    """The modern revisions we speak among those a ``-32022`` error lists."""
    supported = _supported_versions(error) or ()
    return [v for v in MODERN_VERSIONS if v in supported]


def _supported_versions(error: Mapping[str, Any]) -> list[Any] | None:
    """``data.supported`` of a ``-32022`` error, or None for any other error."""
    if error.get("code") != UNSUPPORTED_VERSION:
        return None
    data = error.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    return supported if isinstance(supported, list) else None
