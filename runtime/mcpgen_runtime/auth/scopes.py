"""Which OAuth scopes each tool needs: read from the contract's published descriptors.

A generated package publishes a tool's scopes (the server-wide ones and its own) in
its descriptor's ``_meta`` under ``protocol.constants.META_SCOPES``; ``ScopeTable``
reads them once and answers the per-request questions of the HTTP shell: what a call
needs, what a token lacks, which tools a token may see, what the server supports.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..protocol.constants import META_SCOPES

__all__ = ["ScopeTable", "tool_scopes"]


def tool_scopes(descriptor: Mapping[str, Any]) -> tuple[str, ...]:
    """The scopes a published descriptor says its tool needs (in order, each once)."""
    meta = descriptor.get("_meta")
    value = meta.get(META_SCOPES) if isinstance(meta, Mapping) else None
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(item for item in value if isinstance(item, str) and item))


class ScopeTable:
    """Each tool's required scopes, by wire name (tools needing none included)."""

    def __init__(self, descriptors: Iterable[Mapping[str, Any]]) -> None:
        self.required: dict[str, tuple[str, ...]] = {
            str(d["name"]): tool_scopes(d) for d in descriptors
        }
        every = [scope for scopes in self.required.values() for scope in scopes]
        # scopes_supported of the metadata document: every scope the contract names
        self.supported: tuple[str, ...] = tuple(dict.fromkeys(every))
        # what every tool needs (the server-wide scopes): asked for by a 401 that does
        # not know which tool the request is about
        sets = [set(scopes) for scopes in self.required.values()]
        common = set.intersection(*sets) if sets else set()
        self.common: tuple[str, ...] = tuple(s for s in self.supported if s in common)

    def needs(self, tool: str) -> tuple[str, ...]:
        """The scopes a call of ``tool`` needs (none for a tool the contract lacks:
        the server core answers that call as an unknown tool)."""
        return self.required.get(tool, ())

    def missing(self, tool: str, granted: frozenset[str]) -> tuple[str, ...]:
        """The scopes a call of ``tool`` needs that ``granted`` lacks, in order."""
        return tuple(scope for scope in self.needs(tool) if scope not in granted)

    def permitted(self, granted: frozenset[str]) -> frozenset[str]:
        """The tools a token granting ``granted`` may call (and so see listed)."""
        return frozenset(
            name for name, scopes in self.required.items() if granted.issuperset(scopes)
        )
