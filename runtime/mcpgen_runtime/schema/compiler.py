"""The schema compiler's plumbing: one node per (sub)schema, reference resolution,
loop detection, regex compilation and the typed reading of keyword values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from .errors import SchemaError
from .nodes import (
    Node,
    accept,
    reject,
)
from .regex import EcmaRegex, RegexError
from .values import (
    Check,
    Err,
    is_number,
)

_Key = tuple[int, int, bool]

# Formats that 2020-12 defines and an earlier draft does not, by that draft's
# ``$schema`` (without scheme and final "#"): a schema declaring draft-07 (published
# so when nothing in it reads otherwise there) means `format: uuid` as an annotation.
_NEW_IN_2019 = frozenset({"uuid", "duration"})
_NEW_IN_07 = frozenset(
    {
        "date",
        "time",
        "idn-email",
        "idn-hostname",
        "iri",
        "iri-reference",
        "relative-json-pointer",
        "regex",
    }
)
_NEW_IN_06 = frozenset({"uri-reference", "uri-template", "json-pointer"})
_NOT_IN_DRAFT: dict[str, frozenset[str]] = {
    "json-schema.org/draft-07/schema": _NEW_IN_2019,
    "json-schema.org/draft-06/schema": _NEW_IN_2019 | _NEW_IN_07,
    "json-schema.org/draft-04/schema": _NEW_IN_2019 | _NEW_IN_07 | _NEW_IN_06,
}


@dataclass(frozen=True, slots=True)
class Here:
    """The schema object being compiled, and where: ``base`` (the resource its
    ``$ref``s resolve against), whether its checks ``coerce``, ``where`` (its JSON
    Pointer, for messages) and its ``node``. What every keyword group is given."""

    schema: Mapping[str, Any]
    base: Any
    coerce: bool
    where: str
    node: Node

    def at(self, keyword: str) -> str:
        """The pointer of one of its keywords."""
        return f"{self.where}/{keyword}"

    def parts(self) -> tuple[Mapping[str, Any], Any, bool, str, Node]:
        """``schema, base, coerce, where, node``, for a group that reads them all."""
        return self.schema, self.base, self.coerce, self.where, self.node


class CompilerBase:
    """Compiles (sub)schemas into nodes once each, resolves references, reads keyword values.

    ``build`` (the keywords of one schema object) is the subclass's."""

    def __init__(self, root: Mapping[str, Any] | bool, assert_formats: bool = True) -> None:
        self.root = root
        self.assert_formats = assert_formats
        # formats the schema's declared draft does not define stay annotations there
        declared = root.get("$schema") if isinstance(root, Mapping) else None
        self.unknown_formats = _NOT_IN_DRAFT.get(
            declared.split("://", 1)[-1].rstrip("#/") if isinstance(declared, str) else "",
            frozenset(),
        )
        self.nodes: dict[_Key, Node] = {}
        self.regexes: dict[str, EcmaRegex] = {}

    def node(self, schema: Any, base: Any, coerce: bool, where: str) -> Node:
        if not isinstance(schema, (Mapping, bool)):
            raise SchemaError(f"{where}: a schema must be an object or a boolean")
        key = (id(schema), id(base), coerce)
        found = self.nodes.get(key)
        if found is not None:
            return found
        node = Node()
        node.where = where
        self.nodes[key] = node
        if schema is True:
            node.check = accept
        elif schema is False:
            node.check = reject
        else:
            node.check = self.build(Here(schema, base, coerce, where, node))
        node.ready = True
        return node

    def check_loops(self) -> None:
        """Refuse schemas whose in-place keywords ($ref, allOf, ...) loop back on themselves.

        Such a loop never reaches a smaller part of the value, so validating with it
        would recurse forever (the specification leaves its behaviour undefined).
        """
        state: dict[int, bool] = {}  # False while on the DFS stack, True once finished
        for start in self.nodes.values():
            if id(start) in state:
                continue
            state[id(start)] = False
            stack = [(start, iter(start.edges))]
            while stack:
                current, children = stack[-1]
                child = next(children, None)
                if child is None:
                    state[id(current)] = True
                    stack.pop()
                elif id(child) not in state:
                    state[id(child)] = False
                    stack.append((child, iter(child.edges)))
                elif not state[id(child)]:
                    raise SchemaError(
                        f"{child.where}: $ref loop that never descends into the value"
                    )

    def check_of(self, node: Node) -> Check:
        if node.ready:
            return node.check

        def deferred(value: Any, errs: list[Err]) -> Any:
            return node.check(value, errs)

        return deferred

    def sub(self, schema: Any, base: Any, coerce: bool, where: str) -> Check:
        return self.check_of(self.node(schema, base, coerce, where))

    def regex(self, pattern: Any, where: str) -> EcmaRegex:
        if not isinstance(pattern, str):
            raise SchemaError(f"{where}: a pattern must be a string")
        found = self.regexes.get(pattern)
        if found is None:
            try:
                found = EcmaRegex(pattern)
            except RegexError as exc:
                raise SchemaError(
                    f"{where}: invalid regular expression {pattern!r}: {exc}"
                ) from None
            self.regexes[pattern] = found
        return found

    def resolve(self, ref: Any, base: Any, where: str) -> tuple[Any, Any]:
        if not isinstance(ref, str):
            raise SchemaError(f"{where}: $ref must be a string")
        if not ref.startswith("#"):
            raise SchemaError(
                f"{where}: unsupported $ref {ref!r}: only local references ('#/...') are "
                "supported; bundle external schemas into $defs"
            )
        pointer = unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            raise SchemaError(f"{where}: unsupported $ref {ref!r}: anchors are not supported")
        target = base
        for raw in pointer.split("/")[1:] if pointer else ():
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and token in target:
                target = target[token]
            elif (
                isinstance(target, list)
                and token.isdigit()
                and (token == "0" or not token.startswith("0"))
                and int(token) < len(target)
            ):
                target = target[int(token)]
            else:
                raise SchemaError(f"{where}: $ref {ref!r} does not resolve")
            if isinstance(target, Mapping) and isinstance(target.get("$id"), str):
                base = target
        return target, base

    @staticmethod
    def number(schema: Mapping[str, Any], keyword: str, where: str) -> float | None:
        value = schema.get(keyword)
        if value is None:
            return None
        if not is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
            raise SchemaError(f"{where}/{keyword}: must be a number")
        result: float = value
        return result

    @staticmethod
    def count(schema: Mapping[str, Any], keyword: str, where: str) -> int | None:
        value = schema.get(keyword)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SchemaError(f"{where}/{keyword}: must be a non-negative integer")
        result: int = value
        return result

    @staticmethod
    def schema_list(schema: Mapping[str, Any], keyword: str, where: str) -> list[Any]:
        value = schema[keyword]
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
            raise SchemaError(f"{where}/{keyword}: must be a non-empty array of schemas")
        return list(value)

    @staticmethod
    def schema_map(schema: Mapping[str, Any], keyword: str, where: str) -> Mapping[str, Any]:
        value = schema[keyword]
        if not isinstance(value, Mapping):
            raise SchemaError(f"{where}/{keyword}: must be an object")
        result: Mapping[str, Any] = value
        return result

    @staticmethod
    def string_list(value: Any, where: str) -> tuple[str, ...]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise SchemaError(f"{where}: must be an array of strings")
        if not all(isinstance(item, str) for item in value):
            raise SchemaError(f"{where}: must be an array of strings")
        return tuple(value)

    def build(self, here: Here) -> Check:
        raise NotImplementedError
