"""Descriptions and instructions as safe HTML: Markdown, raw HTML off, then sanitised.

Descriptions are written by other teams and copied from imported servers, so they are
untrusted. markdown-it-py renders CommonMark (plus tables and strikethrough) with raw
HTML disabled: a ``<script>`` in the text comes out as visible text. nh3 (the Ammonia
sanitiser) then keeps only the tags Markdown produces and no attribute but ``href``,
``src``/``alt`` of images, ``start`` of lists, ``align`` of table cells; it drops every
event handler and every element it does not know.

URLs: a link keeps its target only when it is ``http:``, ``https:``, ``mailto:`` or a
``#fragment`` of this page (no ``javascript:``, ``data:``, ``file:``, no relative
path); an image is shown only when it is a ``data:image/png|gif|jpeg|webp`` URI: any
other image becomes a link, so that opening the page fetches nothing.  Headings in a
description are moved down three levels (``#`` becomes ``<h4>``), under the page's own.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

__all__ = ["render_markdown"]

_TAGS: Final = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "code",
        "del",
        "em",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_ATTRIBUTES: Final = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "td": {"style"},
    "th": {"style"},
}
_LINK_SCHEMES: Final = ("http:", "https:", "mailto:")
_DATA_IMAGE: Final = re.compile(
    r"data:image/(?:png|gif|jpeg|webp);base64,[A-Za-z0-9+/=\s]*\Z", re.IGNORECASE
)


def render_markdown(text: str) -> str:
    """Safe HTML for the Markdown ``text`` (see the module docstring)."""
    import nh3

    html = _parser().render(text)
    cleaned: str = nh3.clean(
        html,
        tags=set(_TAGS),
        clean_content_tags={"script", "style"},
        attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
        attribute_filter=_filter,
        url_schemes={"http", "https", "mailto", "data"},
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
        strip_comments=True,
    )
    return cleaned


def _filter(tag: str, attribute: str, value: str) -> str | None:
    """Keep a URL attribute only when it is safe for its element (module docstring)."""
    if attribute == "href":
        lowered = value.strip().lower()
        return value if lowered.startswith(_LINK_SCHEMES) or value.startswith("#") else None
    if attribute == "src":
        return value if _DATA_IMAGE.match(value.strip()) else None
    return value


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("heading_open", _heading_open)
    md.add_render_rule("heading_close", _heading_close)
    md.add_render_rule("image", _image)
    return md


def _shifted(tag: str) -> str:
    return f"h{min(6, int(tag[1]) + 3)}"


def _heading_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    return f"<{_shifted(tokens[idx].tag)}>"


def _heading_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    return f"</{_shifted(tokens[idx].tag)}>\n"


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An inline ``data:`` image stays an image; any other becomes a link to it, so the
    page fetches nothing when it opens."""
    from markdown_it.common.utils import escapeHtml

    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    if _DATA_IMAGE.match(src):
        return f'<img src="{escapeHtml(src)}" alt="{escapeHtml(alt)}">'
    label = escapeHtml(alt or "image")
    return f'<a href="{escapeHtml(src)}">[image: {label}]</a>'
