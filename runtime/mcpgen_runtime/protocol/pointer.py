"""JSON Pointer (RFC 6901) lookup, shared by the generator's $ref bundling and the
runtime's contract comparison."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["MISSING", "resolve_pointer"]

MISSING: Final = object()  # what a pointer to nothing resolves to


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value ``pointer`` (``""`` or ``"/a/0/b"``, already percent-decoded)
    names inside ``document``, or ``MISSING``."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        return MISSING
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node
