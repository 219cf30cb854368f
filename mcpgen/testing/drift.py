"""``drift`` findings: how the tools a live server lists differ from the contract.

The comparison is ``mcpgen diff``'s (the runtime's ``contract.compare.compare_tools``, OLD = the
contract, NEW = the listing), both sides cut to the fields the negotiated revision
defines (a 2024-11-05 server cannot list an output schema). Every difference is a
finding, breaking or not, except a form written differently with the same meaning and a
schema's ``examples`` (values the contract may add to seed the tests): the contract is
what both teams agreed on, and any other listing deserves a look.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcpgen_runtime.contract.compare import compare_tools
from mcpgen_runtime.protocol.revisions import TOOL_FIELDS

from .checks import Finding

__all__ = ["drift_findings"]


def drift_findings(
    contract: Sequence[Mapping[str, Any]],
    listed: Sequence[Mapping[str, Any]],
    protocol_version: str,
) -> list[Finding]:
    fields = TOOL_FIELDS.get(protocol_version)

    def project(tool: Mapping[str, Any]) -> dict[str, Any]:
        return dict(tool) if fields is None else {k: v for k, v in tool.items() if k in fields}

    changes = compare_tools([project(t) for t in contract], [project(t) for t in listed])
    return [
        Finding(
            change.tool,
            "drift",
            None,
            f"{change.rule} ({change.severity.value}) at {change.path}: {change.message}",
            phase="drift",
        )
        for change in changes
        if change.rule != "EQUIVALENT_FORM" and not _examples_only(change)
    ]


def _examples_only(change: Any) -> bool:
    """A schema's ``examples`` differ: the contract may carry realistic values to seed the
    generated arguments (a real path, a real zone) that the server never listed."""
    return bool(change.rule == "SCHEMA_ANNOTATION_CHANGED" and change.path.endswith(".examples"))
