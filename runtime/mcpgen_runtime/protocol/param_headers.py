"""Tool arguments mirrored into HTTP headers (``x-mcp-header``, 2026-07-28 Streamable
HTTP): one set of rules for the generator (build errors), the client (which headers a
call sends) and the server (whether the headers agree with the body).

A property of a tool's ``inputSchema`` carrying ``"x-mcp-header": "Region"`` asks an
HTTP client to send that argument again as ``Mcp-Param-Region``, so a proxy can route
on it without reading the body. The annotation is valid only on a property reached from
the root through ``properties`` keys alone, whose ``type`` is one of ``string``,
``integer`` (every admitted value within ±(2^53−1), the integers a JavaScript peer holds
exactly) or ``boolean``, named by an HTTP token (RFC 9110 ``tchar``s), unique
case-insensitively in the schema. An official client drops a tool that breaks one of
these, so the generator refuses to build one.

A header value is the argument as text (``true``/``false``, an integer's digits, a
string as is), sent in the ``=?base64?…?=`` form (UTF-8, then Base64) when the plain
text could not survive a header: anything outside printable ASCII, leading or trailing
whitespace, or text that already looks like that form. A null or absent argument sends
no header. The server refuses (-32020, HTTP 400) a header that disagrees with the body,
one that is missing while the body has the value, one present while the body has none,
one sent twice, and a malformed Base64 form; the message names the header and the
argument.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

__all__ = [
    "HEADER_KEY",
    "HEADER_PREFIX",
    "HEADER_TYPES",
    "SAFE_INTEGER",
    "HeaderParam",
    "Where",
    "decode_header_value",
    "encode_header_value",
    "header_params",
    "header_problems",
    "param_header_refusal",
    "param_headers",
]

HEADER_KEY = "x-mcp-header"
HEADER_PREFIX = "Mcp-Param-"
HEADER_TYPES = ("string", "integer", "boolean")  # not number: no portable text form
SAFE_INTEGER = 2**53 - 1

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SAFE_TEXT = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")  # printable, no edge spaces
_SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_DECIMAL = re.compile(r"-?[0-9]+(\.0+)?")

# Keywords holding subschemas, by shape; crossing any of them leaves the `properties`
# chain. Instance data (`default`, `enum`, `const`, `examples`) is never entered and
# `$ref` never followed, so the walk ends on any finite value.
_ONE = frozenset({"items", "contains", "unevaluatedItems", "additionalProperties",
                  "propertyNames", "unevaluatedProperties", "not", "if", "then", "else",
                  "contentSchema"})  # fmt: skip
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})

Where = tuple[str | int, ...]  # a position in the schema, key by key

_UNREACHABLE = (
    "x-mcp-header is allowed only on a property reached from the input schema's root "
    "through 'properties' alone"
)


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """One argument mirrored into a header: where it is in the arguments (``path``:
    ``properties`` keys), the annotation's name and the property's type."""

    path: tuple[str, ...]
    name: str
    type: str
    key: str = ""  # the header's name in lower case, as HTTP servers hand it over

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.header.lower())

    @property
    def header(self) -> str:
        return HEADER_PREFIX + self.name

    @property
    def argument(self) -> str:
        return ".".join(self.path)


def _positions(root: Any) -> Iterator[tuple[Where, tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema in ``root``: where it is, its ``properties`` path (None once another
    keyword was crossed) and the schema."""
    stack: list[tuple[Where, tuple[str, ...] | None, Any]] = [((), (), root)]
    while stack:
        where, path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield where, path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    inner = None if path is None else (*path, name)
                    stack.append(((*where, key, name), inner, sub))
            elif key in _ONE:
                stack.append(((*where, key), None, value))
            elif key in _LIST and isinstance(value, list):
                stack.extend(((*where, key, i), None, sub) for i, sub in enumerate(value))
            elif key in _MAP and isinstance(value, dict):
                stack.extend(((*where, key, name), None, sub) for name, sub in value.items())


def header_problems(input_schema: Any) -> list[tuple[Where, str]]:
    """Each annotation the rules refuse: where it is (the ``x-mcp-header`` key's
    position in the schema) and why, in schema order."""
    problems: list[tuple[Where, str]] = []
    seen: dict[str, str] = {}
    for where, path, schema in sorted(_positions(input_schema), key=lambda p: _order(p[0])):
        if HEADER_KEY not in schema:
            continue
        at = (*where, HEADER_KEY)
        name = schema[HEADER_KEY]
        if not path:
            problems.append((at, _UNREACHABLE))
            continue
        argument = ".".join(path)
        why = _annotation_problem(name, schema)
        if why is not None:
            problems.append((at, f"x-mcp-header of '{argument}': {why}"))
            continue
        if name.lower() in seen:
            other = seen[name.lower()]
            why = f"header name {name!r} of '{argument}' is already used by '{other}'"
            problems.append((at, why + " (header names ignore case)"))
            continue
        seen[name.lower()] = argument
    return problems


def _order(where: Where) -> tuple[tuple[int, str], ...]:
    return tuple((1, str(key)) if isinstance(key, str) else (0, f"{key:09d}") for key in where)


def _annotation_problem(name: Any, schema: Mapping[str, Any]) -> str | None:
    if not isinstance(name, str):
        return f"the header name must be a string, not {type(name).__name__}"
    if not _TOKEN.fullmatch(name):
        return (
            f"{name!r} is not an HTTP header name (letters, digits and "
            "!#$%&'*+-.^_`|~ only, at least one)"
        )
    kind = schema.get("type")
    if kind not in HEADER_TYPES:
        shown = "no type" if kind is None else f"type {kind!r}"
        if kind is None and "$ref" in schema:
            shown = "a $ref, which is not followed (write the type on the property)"
        why = "" if kind != "number" else " (a number has no exact text form)"
        return f"a header carries one string, integer or boolean; this property has {shown}{why}"
    if kind == "integer" and not _safe_integers(schema):
        return (
            f"an integer header must stay within ±{SAFE_INTEGER} (2^53−1, what a "
            "JavaScript client holds exactly): give minimum and maximum inside that range"
        )
    return None


def _safe_integers(schema: Mapping[str, Any]) -> bool:
    """Whether every integer ``schema`` admits lies within ±(2^53−1)."""
    listed = schema["enum"] if isinstance(schema.get("enum"), list) else None
    if "const" in schema:
        listed = [schema["const"]]
    if listed is not None:
        return all(not _is_number(v) or abs(v) <= SAFE_INTEGER for v in listed)
    return _bounded(schema, "minimum", "exclusiveMinimum", -1) and _bounded(
        schema, "maximum", "exclusiveMaximum", 1
    )


def _bounded(schema: Mapping[str, Any], inclusive: str, exclusive: str, side: int) -> bool:
    """Whether ``schema``'s bound on ``side`` (-1 low, 1 high) lies within the safe range."""
    value, open_value = schema.get(inclusive), schema.get(exclusive)
    return (_is_number(value) and side * value <= SAFE_INTEGER) or (
        _is_number(open_value) and side * open_value <= SAFE_INTEGER + 1
    )


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def header_params(input_schema: Any) -> tuple[HeaderParam, ...]:
    """The arguments a call mirrors into headers, for a schema ``header_problems``
    accepts (a schema it refuses gives none: a client drops such a tool)."""
    if header_problems(input_schema):
        return ()
    found = [
        HeaderParam(path, schema[HEADER_KEY], schema["type"])
        for _, path, schema in _positions(input_schema)
        if path and HEADER_KEY in schema
    ]
    return tuple(sorted(found, key=lambda p: p.path))


def encode_header_value(text: str) -> str:
    """``text`` as a header value: plain when it is printable ASCII without edge
    whitespace and does not look encoded, else ``=?base64?…?=``."""
    if not text or (_SAFE_TEXT.fullmatch(text) and not _SENTINEL.fullmatch(text)):
        return text
    return f"=?base64?{base64.b64encode(text.encode()).decode('ascii')}?="


def decode_header_value(value: str | None) -> str | None:
    """A header value as the sender meant it (the Base64 form decoded); None for a
    malformed form (bad or non-canonical Base64, not UTF-8) or an absent header."""
    if value is None:
        return None
    match = _SENTINEL.fullmatch(value)
    if match is None:
        return value
    payload = match.group(1)
    try:
        decoded = base64.b64decode(payload, validate=True)
        if base64.b64encode(decoded).decode("ascii") != payload:
            return None
        return decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _text(value: Any) -> str | None:
    """An argument as header text; None for a value no header can carry."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int) and abs(value) <= SAFE_INTEGER:
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= SAFE_INTEGER:
        return str(int(value))
    return None


def _value_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    if len(path) == 1:  # a top-level argument, the usual case
        return arguments.get(path[0])
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def param_headers(params: Sequence[HeaderParam], arguments: Mapping[str, Any]) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers of a call with ``arguments`` (none for a null or
    absent argument)."""
    headers: dict[str, str] = {}
    for param in params:
        text = _text(_value_at(arguments, param.path))
        if text is not None:
            headers[param.header] = encode_header_value(text)
    return headers


def param_header_refusal(
    params: Sequence[HeaderParam],
    arguments: Mapping[str, Any],
    headers: Sequence[tuple[str, str]],
) -> str | None:
    """Why the ``Mcp-Param-*`` headers (lower-case name, value; in the order received)
    disagree with ``arguments``, or None when they agree."""
    sent: dict[str, str | None] = {}  # None: the header came more than once
    for name, value in headers:
        sent[name] = None if name in sent else value
    for param in params:
        raw = sent.get(param.key, _ABSENT)
        value = _value_at(arguments, param.path)
        if raw is None:
            return f"{param.header} header appears more than once"
        if value is None:
            if raw is not _ABSENT:
                return f"{param.header} header is present but {_body(param)} is absent"
            continue
        if raw is _ABSENT:
            return f"{param.header} header is missing but {_body(param)} is present"
        decoded = decode_header_value(raw) if raw.startswith("=?") else raw
        if decoded is None:
            return f"{param.header} header holds a malformed =?base64?…?= value"
        if not _agrees(param.type, value, decoded):
            return f"{param.header} header does not match {_body(param)}"
    return None


_ABSENT = "\x00absent"  # no header value can hold a NUL


def _body(param: HeaderParam) -> str:
    return f"the request body's '{param.argument}' argument"


def _agrees(kind: str, value: Any, decoded: str) -> bool:
    """Whether header text ``decoded`` is ``value``: an integer compares as a number
    (``42`` and ``42.0`` agree), anything else as the text the client would send."""
    if kind == "string" or type(value) is str:
        return bool(value == decoded)
    if kind == "integer" and _DECIMAL.fullmatch(decoded) and _is_number(value):
        whole = isinstance(value, int) or value.is_integer()
        return whole and int(decoded.partition(".")[0]) == int(value)
    text = _text(value)
    return text is not None and text == decoded
