"""Load YAML into plain Python values while remembering where every node sits.

Errors about a spec must point at a line and column, so the loader keeps a map
from each value's path (a tuple of keys and indices) to its position, and a
second map to the position of each mapping key (unknown-key errors point there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import Diagnostic, format_path

try:  # the C loader is several times faster on big specs
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment,unused-ignore]


class _Loader(_BaseLoader):
    """Safe YAML restricted to JSON values: ``2024-01-01`` stays a string, since a
    JSON Schema default or enum value can only be a JSON value."""

    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML's own class-level table
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }


__all__ = ["Path", "Position", "PositionedDocument", "load_yaml"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass
class PositionedDocument:
    """A YAML document as plain data plus the position of each node."""

    data: Any
    values: dict[Path, Position] = field(default_factory=dict)
    keys: dict[Path, Position] = field(default_factory=dict)

    def position(self, path: Path, *, key: bool = False) -> Position:
        """The closest known position to ``path`` (walking up to its parents)."""
        table = self.keys if key else self.values
        probe = path
        while True:
            if probe in table:
                return table[probe]
            if probe in self.values:
                return self.values[probe]
            if not probe:
                return Position(1, 1)
            probe = probe[:-1]


def _mark(node: yaml.Node) -> Position:
    return Position(node.start_mark.line + 1, node.start_mark.column + 1)


# Values an alias may add by repeating a node already built: a spec has no use for
# more, and without a bound a few hundred bytes of nested aliases ("billion laughs")
# expand to billions of values.
MAX_ALIAS_EXPANSION = 100_000


class _AliasBomb(Exception):
    pass


class _Builder:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.doc = PositionedDocument(data=None)
        self.problems: list[Diagnostic] = []
        self._built: set[int] = set()  # ids of the nodes built once already
        self._repeated = 0

    def build(self, node: yaml.Node, path: Path) -> Any:
        if id(node) in self._built:
            self._repeated += 1
            if self._repeated > MAX_ALIAS_EXPANSION:
                raise _AliasBomb
        else:
            self._built.add(id(node))
        self.doc.values[path] = _mark(node)
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self._key(key_node, path)
                if key is None:
                    continue
                if key in result:
                    pos = _mark(key_node)
                    self.problems.append(
                        Diagnostic(
                            self.filename,
                            pos.line,
                            pos.column,
                            _dotted(path + (key,)),
                            f"duplicate key '{key}'",
                        )
                    )
                    continue
                self.doc.keys[path + (key,)] = _mark(key_node)
                result[key] = self.build(value_node, path + (key,))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (index,)) for index, item in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode)
        return _CONSTRUCTOR.construct_object(node, deep=True)

    def _key(self, node: yaml.Node, path: Path) -> str | None:
        if isinstance(node, yaml.ScalarNode):
            value = _CONSTRUCTOR.construct_object(node, deep=True)
            if isinstance(value, str):
                return value
            if isinstance(value, (int, float, bool)) or value is None:
                # JSON object keys are strings; YAML `200:` or `yes:` would not be.
                pos = _mark(node)
                self.problems.append(
                    Diagnostic(
                        self.filename,
                        pos.line,
                        pos.column,
                        _dotted(path),
                        f"mapping key {value!r} must be a string (quote it)",
                    )
                )
                return None
        pos = _mark(node)
        self.problems.append(
            Diagnostic(
                self.filename, pos.line, pos.column, _dotted(path), "mapping keys must be strings"
            )
        )
        return None


# Scalars are built by a loader's constructor; one idle instance serves them all.
_CONSTRUCTOR: Any = _Loader("")


def _dotted(path: Path) -> str:
    return format_path(path)


# PyYAML's parser messages name its grammar ("mapping values are not allowed here");
# these say what is usually wrong in a hand-written spec. Unlisted ones pass through.
_PLAIN_WORDS: tuple[tuple[str, str], ...] = (
    (
        "mapping values are not allowed",
        (
            "a 'key: value' where none can start: check this line's indentation against the line "
            "above, or quote a value that contains ': '"
        ),
    ),
    (
        "did not find expected key",
        "this line is indented differently from the keys around it (or a quoted value ends early)",
    ),
    (
        "did not find expected '-' indicator",
        "a list item ('- ...') is indented differently from the items before it",
    ),
    ("did not find expected ',' or ']'", "a '[' list is not closed: expected ',' or ']'"),
    ("did not find expected ',' or '}'", "a '{' mapping is not closed: expected ',' or '}'"),
    ("could not find expected ':'", "a key without ':' (or an unquoted value broken over lines)"),
    (
        "that cannot start any token",
        "a character that cannot start a value here: quote a value that starts with @ or `",
    ),
    ("found unexpected end of stream", "the file ends inside a quoted string"),
    ("found undefined alias", "an alias (*name) with no matching anchor (&name)"),
    (
        "expected <block end>, but found",
        "this line is indented differently from the lines above it",
    ),
)


def _in_our_words(problem: str) -> str:
    for needle, words in _PLAIN_WORDS:
        if needle in problem:
            return words
    return problem


_TAB_IN_INDENT = (
    "a tab in the indentation: YAML indents with spaces only; replace the tab with spaces"
)
_TAB_ELSEWHERE = "a tab where YAML allows only spaces: replace the tab with spaces"


def _syntax_error(exc: yaml.MarkedYAMLError, text: str, filename: str) -> Diagnostic:
    """PyYAML's parse error as mcpgen says it: where, what is usually wrong, the fix."""
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = exc.problem or str(exc)
    lines = text.splitlines()
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    if "tab character" in problem or source[column - 1 : column] == "\t":
        # PyYAML's "found a tab character that violates indentation", or "found character
        # that cannot start any token" at a tab: point at the first tab of the indent
        indent = source[: len(source) - len(source.lstrip(" \t"))]
        if "\t" in indent:
            return Diagnostic(
                filename, line, indent.index("\t") + 1, "", f"YAML syntax error: {_TAB_IN_INDENT}"
            )
        return Diagnostic(filename, line, column, "", f"YAML syntax error: {_TAB_ELSEWHERE}")
    problem = _in_our_words(problem)
    context = exc.context_mark
    if exc.context and context is not None and mark is not None and context.line != mark.line:
        # the parser notices late (an unclosed bracket shows on a later line): say where it began
        problem += f" (it began at line {context.line + 1}, column {context.column + 1})"
    return Diagnostic(filename, line, column, "", f"YAML syntax error: {problem}")


def load_yaml(text: str, filename: str) -> tuple[PositionedDocument, list[Diagnostic]]:
    """Parse one YAML document; syntax errors come back as diagnostics."""
    builder = _Builder(filename)
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        return builder.doc, [_syntax_error(exc, text, filename)]
    except yaml.YAMLError as exc:
        return builder.doc, [Diagnostic(filename, 1, 1, "", f"YAML error: {exc}")]
    if not nodes:
        return builder.doc, [Diagnostic(filename, 1, 1, "", "the file is empty")]
    if len(nodes) > 1:
        pos = _mark(nodes[1])
        return builder.doc, [
            Diagnostic(
                filename, pos.line, pos.column, "", "expected one YAML document, found several"
            )
        ]
    try:
        builder.doc.data = builder.build(nodes[0], ())
    except _AliasBomb:
        builder.doc.data = None
        return builder.doc, [
            Diagnostic(
                filename,
                1,
                1,
                "",
                f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION} repeated values",
            )
        ]
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        return builder.doc, [Diagnostic(filename, 1, 1, "", f"YAML error: {exc}")]
    return builder.doc, builder.problems
