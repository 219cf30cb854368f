"""Building HTML from trusted templates and untrusted values, fast."""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup, escape

__all__ = ["html", "json_text"]


def html(template: str, *values: object) -> Markup:
    """``template`` (trusted markup) with each of ``values`` escaped into its ``{}``s:
    what ``Markup.format`` does, with the C ``str.format`` (it is the page's hot path)."""
    return Markup(template.format(*[escape(value) for value in values]))


def json_text(value: Any, limit: int = 200) -> str:
    """A JSON value as compact text, cut at ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
