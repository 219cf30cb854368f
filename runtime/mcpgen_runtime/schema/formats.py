"""JSON Schema ``format``: the formats the runtime asserts, each checked per its RFC.

JSON Schema 2020-12 makes ``format`` an annotation unless a validator chooses to
assert it; the runtime asserts every format below, on the server (arguments and
results) and in the client (``structuredContent``), so that a value the models would
refuse never passes the wire unnoticed. A format not listed here stays an annotation:
any string passes. Formats apply to strings only; other values pass.

Every checker takes the whole string: nothing is stripped, no trailing newline is
forgiven, digits are ASCII digits. Regular expressions here are written so that none
can backtrack more than linearly, and nothing is fetched or resolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from .formats_net import (
    Lazy,
    is_email,
    is_hostname,
    is_idn_email,
    is_idn_hostname,
    is_ipv4,
    is_ipv6,
    is_iri,
    is_iri_reference,
    is_uri,
    is_uri_reference,
    is_uri_template,
)
from .regex import RegexError, check_syntax

__all__ = ["FORMATS", "Format", "format_checker"]

# The formats of internet addresses and names (IP, URI and IRI, host names, e-mail)
# live in ``schema.formats_net``; dates, times, durations, UUIDs, pointers and regular
# expressions here, with the table of them all.


class Format:
    """A checker and the words for a value that fails it (after "expected")."""

    __slots__ = ("check", "expected")  # a plain class: a dataclass costs ms at import

    def __init__(self, check: Callable[[str], bool], expected: str) -> None:
        self.check = check
        self.expected = expected


# ------------------------------------------------------------------ dates and times

_DATE = Lazy(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = Lazy(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))")
_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _date_ok(match: re.Match[str]) -> bool:
    year, month, day = (int(group) for group in match.groups())
    if not 1 <= month <= 12 or day < 1:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= (29 if month == 2 and leap else _DAYS_IN_MONTH[month - 1])


def _time_ok(match: re.Match[str]) -> bool:
    hour, minute, second = int(match[1]), int(match[2]), int(match[3])
    if hour > 23 or minute > 59 or second > 60:
        return False
    offset = 0
    if match[5] is not None:
        off_hour, off_minute = int(match[6]), int(match[7])
        if off_hour > 23 or off_minute > 59:
            return False
        offset = (off_hour * 60 + off_minute) * (1 if match[5] == "+" else -1)
    # A leap second is inserted at the end of a UTC day: 23:59:60 in UTC.
    return second != 60 or (hour * 60 + minute - offset) % 1440 == 23 * 60 + 59


def is_date(text: str) -> bool:
    """RFC 3339 §5.6 ``full-date``: YYYY-MM-DD, a day that exists (§5.7, leap years)."""
    match = _DATE.fullmatch(text)
    return match is not None and _date_ok(match)


def is_time(text: str) -> bool:
    """RFC 3339 §5.6 ``full-time``: hh:mm:ss[.frac] then ``Z`` or ±hh:mm.

    Second 60 only where it is 23:59:60 UTC (a leap second); ``T`` and ``Z`` may be
    lower case (RFC 3339 §5.6 note).
    """
    match = _TIME.fullmatch(text)
    return match is not None and _time_ok(match)


def is_date_time(text: str) -> bool:
    """RFC 3339 §5.6 ``date-time``: ``full-date "T" full-time``."""
    if len(text) < 11 or text[10] not in "Tt":
        return False
    return is_date(text[:10]) and is_time(text[11:])


_DURATION = Lazy(
    r"P(?:"
    r"(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)"  # dur-date
    r"(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?"  # [dur-time]
    r"|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"  # dur-time
    r"|[0-9]+W"  # dur-week
    r")"
)


def is_duration(text: str) -> bool:
    """RFC 3339 Appendix A ``duration``: ``P`` then date, time or week elements in order.

    Whole numbers only (the ABNF has no fraction), weeks alone.
    """
    return _DURATION.fullmatch(text) is not None


# --------------------------------------------------------------------- the others

_UUID = Lazy(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_JSON_POINTER = Lazy(r"(?:/(?:[^/~]|~[01])*)*", re.DOTALL)
_RELATIVE_POINTER = Lazy(r"(?:0|[1-9][0-9]*)(?:[+-][1-9][0-9]*)?(#?)")


def is_uuid(text: str) -> bool:
    """RFC 9562 §4: 32 hex digits in groups of 8-4-4-4-12 (any version and variant)."""
    return _UUID.fullmatch(text) is not None


def is_json_pointer(text: str) -> bool:
    """RFC 6901 §3 ``json-pointer``: ``*( "/" reference-token )``, ``~`` only as
    ``~0`` or ``~1``."""
    return _JSON_POINTER.fullmatch(text) is not None


def is_relative_json_pointer(text: str) -> bool:
    """Relative JSON Pointer (draft-bhutton-relative-json-pointer-00 §3): a
    non-negative integer, an optional ``+``/``-`` index shift, then ``#`` or a
    JSON Pointer."""
    match = _RELATIVE_POINTER.match(text)
    if match is None:
        return False
    rest = text[match.end() :]
    if match[1]:
        return rest == ""
    return is_json_pointer(rest)


MAX_REGEX_LENGTH: Final = 10_000
"""The longest string the ``regex`` format parses (characters); a longer one fails it.

Parsing is linear but slow in Python (about 4 µs a character): without a bound one
16 MiB argument would hold a server for a minute."""


def is_regex(text: str) -> bool:
    """ECMA-262 §22.2.1 ``Pattern`` in Unicode mode (the dialect JSON Schema names):
    lookaround and back-references are valid here, though ``pattern`` refuses them.

    At most ``MAX_REGEX_LENGTH`` characters, nested no deeper than the parser's stack.
    """
    if len(text) > MAX_REGEX_LENGTH:
        return False
    try:
        check_syntax(text)
    except (RegexError, RecursionError):
        return False
    return True


FORMATS: Final[dict[str, Format]] = {
    "date": Format(is_date, "a date as YYYY-MM-DD (RFC 3339 full-date)"),
    "date-time": Format(
        is_date_time,
        "a date-time as YYYY-MM-DDThh:mm:ss with Z or an offset like +01:00 (RFC 3339)",
    ),
    "time": Format(is_time, "a time with an offset, like 10:00:00Z or 11:00:00+01:00 (RFC 3339)"),
    "duration": Format(is_duration, "a duration like P3D, PT1H30M or P1Y2M (RFC 3339 appendix A)"),
    "email": Format(is_email, "an email address like name@example.com (RFC 5321)"),
    "idn-email": Format(is_idn_email, "an email address (RFC 6531)"),
    "hostname": Format(is_hostname, "a host name like example.com (RFC 1123)"),
    "idn-hostname": Format(is_idn_hostname, "an internationalized host name (RFC 5890)"),
    "ipv4": Format(is_ipv4, "an IPv4 address like 192.0.2.1"),
    "ipv6": Format(is_ipv6, "an IPv6 address like 2001:db8::1 (RFC 4291)"),
    "uri": Format(is_uri, "an absolute URI with a scheme, like https://example.com/x (RFC 3986)"),
    "uri-reference": Format(is_uri_reference, "a URI reference (RFC 3986)"),
    "iri": Format(is_iri, "an absolute IRI with a scheme (RFC 3987)"),
    "iri-reference": Format(is_iri_reference, "an IRI reference (RFC 3987)"),
    "uri-template": Format(is_uri_template, "a URI template (RFC 6570)"),
    "uuid": Format(is_uuid, "a UUID like 123e4567-e89b-12d3-a456-426614174000"),
    "json-pointer": Format(is_json_pointer, "a JSON Pointer like /items/0 (RFC 6901)"),
    "relative-json-pointer": Format(
        is_relative_json_pointer, "a relative JSON Pointer like 0/name or 1#"
    ),
    "regex": Format(is_regex, "an ECMA-262 regular expression"),
}


def format_checker(name: str) -> Format | None:
    """The checker the runtime asserts for ``name``; None for a format it leaves an
    annotation (unknown formats, by the specification's rule)."""
    return FORMATS.get(name)
