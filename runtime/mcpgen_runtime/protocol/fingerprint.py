"""Canonical JSON and tool fingerprints, shared by generator, server and client."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .structured import unwrap_descriptor

__all__ = ["canonical_json", "tool_fingerprint"]


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: one byte string per JSON value.

    A lone surrogate (``"\\ud800"`` is valid JSON text, so a peer may send one) is
    encoded as its three bytes rather than raising: every value has a fingerprint."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def tool_fingerprint(descriptor: Mapping[str, Any]) -> str:
    """sha256 hex of a tool descriptor without its era-specific ``execution``
    member and in its own output form (an earlier revision's wrapper of a result of
    any type unwrapped), so a tool has one fingerprint whichever revision listed it."""
    own = unwrap_descriptor(descriptor)
    body = {key: value for key, value in own.items() if key != "execution"}
    return hashlib.sha256(canonical_json(body)).hexdigest()
