"""Tools as a client holds them: ``ListedTool`` (the definition untouched, plus the
fields a caller reads) and the paging of ``tools/list``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import (
    ProtocolError,
)
from ..protocol.fingerprint import tool_fingerprint
from ..protocol.structured import unwrap_descriptor


@dataclass(frozen=True, slots=True)
class ListedTool:
    """A tool as a server listed it, with the fields a client reads pulled out.

    ``annotations`` are hints from the server (read-only, destructive, …): they
    are untrusted unless the server is, and must never drive a policy decision
    (auto-approval, sandboxing) by themselves. ``server_id`` is the name the
    *caller* gave this server, never the server's self-reported ``serverInfo``
    name, so two servers cannot pass for one another. ``raw`` is untouched;
    ``output_schema``, ``meta`` and ``fingerprint`` read an earlier revision's
    ``{"result": …}`` wrapper of a result of any type as the schema it wraps
    (``protocol.structured``), so a tool reads the same whichever revision listed it.
    """

    raw: dict[str, Any]
    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    execution: dict[str, Any] | None
    meta: dict[str, Any] | None
    server_id: str
    fingerprint: str
    display_name: str

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any], server_id: str) -> ListedTool:
        """Read one listed definition; optional fields of the wrong type are dropped,
        a definition without a string ``name`` or an object ``inputSchema`` is refused."""
        if not isinstance(raw, Mapping):
            raise ProtocolError("a listed tool is not an object", reason="invalid_tool", data=raw)
        name = raw.get("name")
        if not isinstance(name, str):
            raise ProtocolError(
                f"a listed tool has no string name: {name!r}", reason="invalid_tool", data=raw
            )
        input_schema = raw.get("inputSchema")
        if not isinstance(input_schema, dict):
            raise ProtocolError(
                f"tool {name!r} has no object inputSchema", reason="invalid_tool", data=raw
            )
        raw = dict(raw) if not isinstance(raw, dict) else raw
        title = str_or_none(raw.get("title"))
        annotations = _dict_or_none(raw.get("annotations")) or {}
        hint_title = str_or_none(annotations.get("title"))
        own = unwrap_descriptor(raw)  # a handshake-era wrapper of a result of any type
        return cls(
            raw=raw,
            name=name,
            title=title,
            description=str_or_none(raw.get("description")),
            input_schema=input_schema,
            output_schema=_dict_or_none(own.get("outputSchema")),
            annotations=annotations,
            execution=_dict_or_none(raw.get("execution")),
            meta=_dict_or_none(own.get("_meta")),
            server_id=server_id,
            fingerprint=tool_fingerprint(raw),
            display_name=title or hint_title or name,
        )

    def __hash__(self) -> int:
        # The dict fields are unhashable; these three identify a listed tool.
        return hash((self.server_id, self.name, self.fingerprint))


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def tools_page(
    result: Mapping[str, Any], server_id: str, seen: set[str]
) -> tuple[list[ListedTool], str | None]:
    tools = result.get("tools")
    if not isinstance(tools, list):
        raise ProtocolError("tools/list result has no tools array", reason="invalid_result")
    listed = [ListedTool.from_raw(raw, server_id) for raw in tools]
    cursor = result.get("nextCursor")
    if cursor is None:
        return listed, None
    if not isinstance(cursor, str) or cursor in seen:
        raise ProtocolError(
            f"tools/list returned a bad or repeated cursor {cursor!r}", reason="invalid_cursor"
        )
    seen.add(cursor)
    return listed, cursor
