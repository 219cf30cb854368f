"""Is a layout-cache entry black's output of its unit? (``layout.UnitCache``)

The cache is a file in the output directory, so anyone who can commit to a project
can edit it, and an entry must change nothing but layout. ``same_code`` accepts an
entry only when, against the unit it stands for, it has

- the same syntax tree;
- the same tokens, parentheses and commas aside (black adds and removes those), so
  every name, operator, number and string is spelled as in the unit, and every
  statement ends and is indented as in the unit;
- the same comments in the same order (black only adds a space after ``#``): a
  comment is where a PEP 263 coding cookie hides, and a cookie changes how Python
  decodes the file's bytes, which no syntax tree of the text shows;
- docstrings with the unit's text, each in the form black writes (indentation,
  trailing spaces and closing quotes as black leaves them);
- no character outside the printable ones and newline that the unit lacks (a BOM, a
  form feed, a carriage return, a line separator...).

What is left to an entry is where lines break inside brackets, blank lines, and redundant
parentheses and trailing commas: layout, which ``build --check`` (it never reads the
cache) reports as stale when it is not black's. Any mismatch sends the unit to black
again, so a tampered entry costs time only.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

__all__ = ["same_code"]

_INDENT = "    "
# Line breaks inside brackets and blank lines are layout; statement ends (NEWLINE)
# and indentation (INDENT, DEDENT) are not: a method indented one level deeper is
# the same tree inside its wrapper and an IndentationError in the file.
_LAYOUT_TOKENS = frozenset({tokenize.NL, tokenize.ENDMARKER})
_BRACKETS_AND_COMMAS = frozenset({"(", ")", ","})
_BACKSLASH_NEWLINE = re.compile(r"\\\s*\n")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_LENGTH = 88  # layout.LINE_LENGTH (layout imports this module)

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_Key = tuple[str, tuple[str, ...], tuple[str, ...]]


def same_code(depth: int, source: str, formatted: str) -> bool:
    """Is ``formatted`` the same code as ``source`` (a unit at ``depth``), as black's
    output of it is? See the module's docstring for what is compared."""
    if not _hidden_characters(formatted) <= _hidden_characters(source):
        return False
    expected = _key(depth, source, canonical=False)
    return expected is not None and expected == _key(depth, formatted, canonical=True)


def _hidden_characters(text: str) -> set[str]:
    if text.replace("\n", "").isprintable():
        return set()
    return {ch for ch in text if ch != "\n" and not ch.isprintable()}


def _key(depth: int, text: str, *, canonical: bool) -> _Key | None:
    """The syntax tree (docstrings normalised), the tokens and the comments of a
    unit; None when it is not code, or (``canonical``) when a docstring is not in
    black's form."""
    wrapped = "\n".join([*(_INDENT * level + "class _:" for level in range(depth)), text])
    try:
        parsed = ast.parse(wrapped)
        tokens = list(tokenize.generate_tokens(io.StringIO(wrapped).readline))
    except (SyntaxError, ValueError, RecursionError, MemoryError, tokenize.TokenError):
        return None
    docstrings = _docstrings(parsed)
    lines = wrapped.split("\n") if canonical and docstrings else []
    if canonical and not all(_is_canonical(lines, node) for node in docstrings):
        return None
    for node in docstrings:
        node.value = _docstring_text(str(node.value))
    where = {(node.lineno, node.col_offset) for node in docstrings}
    code = tuple(
        "\n" if token.type == tokenize.NEWLINE else token.string
        for token in tokens
        if token.type not in _LAYOUT_TOKENS
        and token.type != tokenize.COMMENT
        and token.string not in _BRACKETS_AND_COMMAS
        and token.start not in where
    )
    comments = tuple(
        "".join(token.string.split()) for token in tokens if token.type == tokenize.COMMENT
    )
    return ast.dump(parsed), code, comments


def _docstrings(tree: ast.AST) -> list[ast.Constant]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, _DOCUMENTED):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append(value)
    return found


def _docstring_text(text: str) -> str:
    """A docstring's text as black leaves it, whatever its indentation: leading tabs
    expanded, the first line stripped, the common indentation of the others
    removed, trailing spaces dropped, blank lines at either end removed."""
    lines = [
        ln
        if ln.strip() in ("", ln)
        else ln[: len(ln) - len(ln.lstrip())].expandtabs(4) + ln.lstrip()
        for ln in text.splitlines()
    ]
    if not lines:
        return ""
    rest = lines[1:]
    indent = min((len(ln) - len(ln.lstrip()) for ln in rest if ln.strip()), default=0)
    trimmed = [lines[0].strip(), *(ln[indent:].rstrip() for ln in rest)]
    return "\n".join(trimmed).strip()


def _is_canonical(lines: list[str], node: ast.Constant) -> bool:
    """Is the docstring literal ``node`` spelled as black spells it at its place?
    (black's ``visit_STRING`` on its own output: a fixed point.)"""
    literal = _segment(lines, node)
    if literal is None:
        return False
    prefix = literal[: len(literal) - len(literal.lstrip("rRbBuUfF"))]
    quoted = literal[len(prefix) :]
    if len(quoted) < 2 or _BACKSLASH_NEWLINE.search(quoted):
        return True  # black leaves these as they are; the tree comparison holds them
    quote = quoted[0] * (3 if quoted[1] == quoted[0] and len(quoted) >= 6 else 1)
    body = quoted[len(quote) : -len(quote)]
    return literal == _black_docstring(prefix, quote, body, " " * node.col_offset)


def _segment(lines: list[str], node: ast.expr) -> str | None:
    """The source text of ``node`` (``ast.get_source_segment`` without splitting the
    whole source again for every node; offsets are UTF-8 byte offsets)."""
    if node.end_lineno is None or node.end_col_offset is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset : node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset :].decode()
    tail = lines[last].encode()[: node.end_col_offset].decode()
    return "\n".join([head, *lines[first + 1 : last], tail])


def _black_docstring(prefix: str, quote: str, body: str, indent: str) -> str:
    """The docstring literal black writes for ``body`` between ``quote``s at ``indent``
    (black's ``visit_STRING`` for a docstring already in normalised quotes)."""
    if "\n" in body:
        lines = [
            ln
            if ln.strip() in ("", ln)
            else ln[: len(ln) - len(ln.lstrip())].expandtabs(4) + ln.lstrip()
            for ln in _LINE_BREAK.split(body)
        ]
        rest = lines[1:]
        common = min((len(ln) - len(ln.lstrip()) for ln in rest if ln.strip()), default=None)
        trimmed = [lines[0].strip()]
        for i, line in enumerate(rest if common is not None else ()):
            kept = line[common:].rstrip()
            trimmed.append(indent + kept if kept or i == len(rest) - 1 else "")
        text = "\n".join(trimmed)
    else:
        text = body.strip()
    backslash = False
    if text:
        text = (" " if text[0] == quote[0] else "") + text
        text += " " if text[-1] == quote[0] else ""
        if text[-1] == "\\" and (len(text) - len(text.rstrip("\\"))) % 2:
            text, backslash = text + " ", True
    elif body:
        text = " "
    last = text.split("\n")[-1] if text and not text.endswith("\n") else ""
    if (
        len(quote) == 3
        and "\n" in text
        and len(last) + 3 > _LINE_LENGTH
        and len(indent) + 3 <= _LINE_LENGTH
        and not backslash
        and not body.endswith("\n")
    ):
        text += "\n" + indent
    return prefix + quote + text + quote
