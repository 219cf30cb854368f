"""MkDocs hook: the site publishes the repository's root documents, and only docs/.

The manual lives in docs/*.md and reads on GitHub as it is; README.md, CONTRIBUTING.md,
CHANGELOG.md and SECURITY.md stay at the root, where GitHub and PyPI show them. Their
stand-in pages in docs/ (``INCLUDED``) get the root file's text at build time, so the
site's home page is the README with nothing copied. Relative links are then rewritten
for the page that shows them: a link into docs/ becomes relative to the page, a link to
an included root file points at its page, and a link to any other file of the
repository (``examples/weather/tools.yaml``, ``LICENSE``), which the site does not
publish, keeps its text and loses its target. tests/repo/test_docs_site.py checks, apart
from this hook, that every such target exists in the repository.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

# a stand-in page of docs/ -> the root file whose text it shows
INCLUDED = {
    "index.md": "README.md",
    "contributing.md": "CONTRIBUTING.md",
    "changelog.md": "CHANGELOG.md",
    "security.md": "SECURITY.md",
}
_PAGE_OF = {root: page for page, root in INCLUDED.items()}
_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(`+).*?\1")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **_: Any) -> str:
    """The page's text, a root file's for a stand-in, with links fixed for the site."""
    root = Path(config["config_file_path"]).resolve().parent
    docs = Path(config["docs_dir"]).resolve()
    source: str = page.file.src_uri
    if source in INCLUDED:
        markdown = (root / INCLUDED[source]).read_text(encoding="utf-8")
        origin = root
    else:
        origin = (docs / source).parent
    here = posixpath.dirname(source)
    return rewrite_links(markdown, origin, root, docs, here)


def rewrite_links(markdown: str, origin: Path, root: Path, docs: Path, here: str) -> str:
    """Rewrite the relative links of ``markdown`` (outside code) written from ``origin``
    for a page in the folder ``here`` of docs/."""

    def fix(match: re.Match[str]) -> str:
        bang, label, target = match.groups()
        path, _, anchor = target.partition("#")
        if not path or "://" in path or path.startswith("mailto:"):
            return match.group(0)
        where = (origin / path).resolve()
        if where.is_relative_to(docs):
            site_path = where.relative_to(docs).as_posix()
        elif where.parent == root and where.name in _PAGE_OF:
            site_path = _PAGE_OF[where.name]
        else:
            return label  # a file the site does not publish: its name stays, as text
        new = posixpath.relpath(site_path, here or ".")
        return f"{bang}[{label}]({new}{'#' + anchor if anchor else ''})"

    out, fenced = [], False
    for line in markdown.splitlines(keepends=True):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        out.append(line if fenced else _outside_code(line, fix))
    return "".join(out)


def _outside_code(line: str, fix: Any) -> str:
    """Apply the link fix to the parts of one line that are not code spans."""
    pieces, last = [], 0
    for span in _CODE_SPAN.finditer(line):
        pieces.append(_LINK.sub(fix, line[last : span.start()]))
        pieces.append(span.group(0))
        last = span.end()
    pieces.append(_LINK.sub(fix, line[last:]))
    return "".join(pieces)
