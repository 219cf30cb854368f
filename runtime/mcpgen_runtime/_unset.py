"""``UNSET``: an argument the caller left out, as opposed to one given as ``None``.

Typed client methods default every optional parameter to ``UNSET`` and send only the
arguments that are not ``UNSET``, so ``update_issue(7)`` sends ``{"number": 7}`` and
``update_issue(7, milestone=None)`` sends ``{"number": 7, "milestone": null}``. A
parameter whose schema does not admit null is not annotated with ``None``, so mypy
refuses ``None`` there. ``Unset`` is an enum of one member so that type checkers
narrow ``value is not UNSET`` (``Unset`` is the same type as ``Literal[Unset.UNSET]``).
"""

from __future__ import annotations

import enum
from typing import Final, Literal

__all__ = ["UNSET", "Unset"]


class Unset(enum.Enum):
    """The type of ``UNSET``."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> Literal[False]:
        return False


UNSET: Final = Unset.UNSET
