"""The one escape for text from a spec or a server that mcpgen prints or writes as a line.

Tool names, schema keys, paths and messages come from files other teams wrote and
from servers nobody on the team wrote. Printed raw, they could drive the terminal
(an OSC title sequence ``ESC ] 0 ; … BEL``, a BEL, ``\\r`` overwriting the line, a
C1 CSI) or reorder what the reader sees (bidi overrides); written raw into a YAML
comment, any line break YAML recognises would start a new line of the spec. So
every such character becomes a visible escape (``\\n``, ``\\x1b``, ``\\u2028``) and
the text stays on one line. Backslashes are kept as they are: the escape is for
reading, not for parsing back.
"""

from __future__ import annotations

import re

__all__ = ["escape_json", "escape_line", "escape_lines", "escape_log_line", "needs_escape"]

# Beyond the C0 controls (0x00-0x1f, which json.dumps always escapes itself):
_BEYOND_C0 = (
    "\x7f"  # DEL
    "\x80-\x9f"  # C1 controls: NEL (a YAML line break), CSI, OSC, …
    "\u061c\u200e\u200f"  # bidi marks: ALM, LRM, RLM
    "\u2028\u2029"  # line and paragraph separators (YAML line breaks)
    "\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides and isolates
    "\ud800-\udfff"  # lone surrogates: not encodable, not YAML
    "\ufeff\ufffe\uffff"  # byte-order mark and non-characters
)
_UNSAFE = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")  # C0 includes line breaks and tab
_UNSAFE_IN_JSON = re.compile(f"[{_BEYOND_C0}]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# GitHub's runner takes a log line for a workflow command when it starts, after
# blanks, with "::" (``::error::…``, ``::add-mask::…``), and when it holds the legacy
# "##[command]" form anywhere.
_LEGACY_COMMAND = "##["


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_line(text: str) -> str:
    """``text`` on one line with every control, line-break and bidi character escaped."""
    return _UNSAFE.sub(_escape, text)


def escape_lines(text: str) -> str:
    """Each ``\\n``-separated line of ``text`` escaped, the ``\\n`` kept: for output
    that is several lines on purpose (a message listing problems, a diff)."""
    return "\n".join(escape_line(line) for line in text.split("\n"))


def escape_log_line(text: str) -> str:
    """``escape_line``, and no workflow command in a CI log either: a leading ``::``
    becomes ``\\x3a:`` and every ``##[`` becomes ``##\\x5b``. For a line mcpgen
    writes itself around text from a server (``mcpgen test``'s text report)."""
    line = escape_line(text).replace(_LEGACY_COMMAND, "##\\x5b")
    blanks = len(line) - len(line.lstrip())
    if line.startswith("::", blanks):
        line = f"{line[:blanks]}\\x3a{line[blanks + 1 :]}"
    return line


def escape_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters above
    written as ``\\uXXXX``: the same document, safe on a terminal. (json.dumps already
    escapes C0 controls; DEL, C1, separators and bidi controls it leaves raw, and
    they can only occur inside strings, where ``\\uXXXX`` means the same.) A legacy
    workflow command's ``##[`` (see ``escape_log_line``), also only in a string, is
    written ``##\\u005b``: a JSON document printed to a CI log holds none."""
    escaped = _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return escaped.replace(_LEGACY_COMMAND, "##\\u005b")


def needs_escape(text: str) -> bool:
    """Does ``text`` hold a character that ``escape_line`` would escape?"""
    return _UNSAFE.search(text) is not None
