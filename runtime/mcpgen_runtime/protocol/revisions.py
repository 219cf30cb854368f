"""Protocol revisions, treated as an enumerated set (membership, never ``>``)."""

from __future__ import annotations

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "MODERN_VERSIONS",
    "negotiate_version",
]

# Newest first: a counter-offer picks the first entry.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[0]
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

# Tool fields each revision defines (annotations from 2025-03-26; title, outputSchema and
# _meta from 2025-06-18; icons and execution in 2025-11-25, execution gone in 2026-07-28); anything else is stripped
# from the descriptor before it is sent on a connection at that revision.
_STRUCTURED_TOOL = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta"}
)
TOOL_FIELDS: dict[str, frozenset[str]] = {
    "2024-11-05": frozenset({"name", "description", "inputSchema"}),
    "2025-03-26": frozenset({"name", "description", "inputSchema", "annotations"}),
    "2025-06-18": _STRUCTURED_TOOL,
    "2025-11-25": _STRUCTURED_TOOL | {"icons", "execution"},
    "2026-07-28": _STRUCTURED_TOOL | {"icons"},
}

# Revisions whose CallToolResult may carry structuredContent.
STRUCTURED_CONTENT_VERSIONS = frozenset({"2025-06-18", "2025-11-25", "2026-07-28"})


def negotiate_version(requested: object) -> str:
    """The handshake revision to answer an ``initialize`` with: the one asked for
    when served, else a counter-offer of the latest (never an error)."""
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE
