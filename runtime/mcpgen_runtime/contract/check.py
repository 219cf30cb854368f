"""The client's contract check on connect: the server's tools against the contract
the client was generated from, by the compatibility rules (``contract.compare``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._errors import ContractMismatch
from ..protocol.constants import META_SCOPES
from ..protocol.revisions import STRUCTURED_CONTENT_VERSIONS, TOOL_FIELDS
from ..protocol.structured import unwrap_descriptor

if TYPE_CHECKING:
    from .compare import Change

__all__ = ["Verify", "check_contract"]

logger = logging.getLogger("mcpgen.client")

#: What a session does with a server that breaks the contract: raise, log, or skip.
Verify = Literal["strict", "warn", "off"]


def _scoped(descriptor: Mapping[str, Any]) -> bool:
    """The tool names OAuth scopes (mcpgen's ``_meta`` key)."""
    meta = descriptor.get("_meta")
    return isinstance(meta, Mapping) and bool(meta.get(META_SCOPES))


def _project(descriptor: Mapping[str, Any], fields: frozenset[str] | None) -> dict[str, Any]:
    if fields is None:
        return dict(descriptor)
    return {key: value for key, value in descriptor.items() if key in fields}


def check_contract(
    contract: Sequence[Mapping[str, Any]],
    listed: Sequence[Mapping[str, Any]],
    protocol_version: str,
    verify: Verify,
) -> list[Change]:
    """Compare the server's tools with the contract; raise or log breaking changes
    and return the ones the caller should see as warnings. ``listed``: the server's
    tool descriptors as it sent them."""
    # Imported here: only sessions that verify pay for the comparison rules.
    from .compare import Severity, compare_tools

    # Both sides are cut to the fields the negotiated revision defines, so a
    # 2024-11-05 server is not blamed for omitting outputSchema it cannot send.
    fields = TOOL_FIELDS.get(protocol_version)
    expected = [_project(tool, fields) for tool in contract]
    # an earlier revision's wrapper of a result of any type is compared as what it wraps
    actual = [_project(unwrap_descriptor(tool), fields) for tool in listed]
    names = {tool.get("name") for tool in contract}
    # A tool only the server has is not ours to judge; nor is a scoped tool missing
    # from the listing: a server checking tokens lists only what the caller's scopes
    # permit (the MCP spec lets a listing vary by authorization), and calling it
    # says whether the tool is gone (404-like error) or needs scopes (403).
    scoped = {tool.get("name") for tool in contract if _scoped(tool)}
    changes = [
        change
        for change in compare_tools(expected, actual)
        if change.tool in names and not (change.rule == "TOOL_REMOVED" and change.tool in scoped)
    ]
    # A reordered parameter list breaks code generated from the contract, not this
    # client: it sends arguments by name. So a reorder is a warning here, never fatal.
    reordered = [change for change in changes if change.rule == "PARAM_ORDER_CHANGED"]
    breaking = [
        change
        for change in changes
        if change.severity == Severity.BREAKING and change.rule != "PARAM_ORDER_CHANGED"
    ]
    if reordered:
        logger.warning(
            "the server's parameter order differs from the contract (calls by name are "
            "unaffected): %s",
            "; ".join(f"tool {change.tool!r}: {change.message}" for change in reordered),
        )
    if breaking:
        message = "the server's tools break the contract:\n" + "\n".join(
            f"  tool {change.tool!r}: {change.message} ({change.rule})" for change in breaking
        )
        if verify == "strict":
            raise ContractMismatch(message, changes=breaking)
        logger.warning("%s", message)
    # With verify="warn" the breaking changes stay in the list: they were logged
    # and the caller chose to go on, so they are warnings now.
    _say_unchecked_results(contract, listed, protocol_version)
    return changes


def _say_unchecked_results(
    contract: Sequence[Mapping[str, Any]],
    listed: Sequence[Mapping[str, Any]],
    protocol_version: str,
) -> None:
    """Before 2025-06-18 a server lists no output schemas and sends no structured
    content: whether its results fit the contract's output schemas cannot be checked
    on connect. Said here, so a later ``ResultMismatch`` is no surprise."""
    if protocol_version in STRUCTURED_CONTENT_VERSIONS:
        return
    names = {tool.get("name") for tool in listed}
    unchecked = [
        str(tool["name"])
        for tool in contract
        if "outputSchema" in tool and tool.get("name") in names
    ]
    if unchecked:
        logger.warning(
            "the server speaks %s, which has no output schemas: the result shape of %s "
            "cannot be checked on connect (a result that does not fit raises ResultMismatch)",
            protocol_version,
            ", ".join(f"tool {name!r}" for name in unchecked),
        )
