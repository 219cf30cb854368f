"""Hypothesis strategies for the ``format`` values the runtime asserts.

Each draws plausible values of its format and is filtered by the runtime's own checker
(``schema.formats.format_checker``), so a generated value is one the server accepts. A format
the runtime leaves an annotation draws plain text.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import strategies as st

from mcpgen_runtime.schema.formats import format_checker

__all__ = ["format_strategy"]

_LABEL = st.from_regex(r"\A[a-z][a-z0-9]{0,8}\Z")
_HOST = st.builds(lambda labels: ".".join(labels), st.lists(_LABEL, min_size=1, max_size=3)).map(
    lambda host: host + ".example"
)
_TIMEZONES = st.sampled_from(["Z", "+00:00", "+01:00", "-05:30", "+14:00"])


def _time_text(time: dt.time, zone: str, fraction: bool) -> str:
    text = time.strftime("%H:%M:%S")
    if fraction and time.microsecond:
        text += f".{time.microsecond:06d}"
    return text + zone


_TIME = st.builds(_time_text, st.times(), _TIMEZONES, st.booleans())
_DATE = st.dates(min_value=dt.date(1, 1, 1)).map(lambda day: day.isoformat())
_TOKEN = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=4)

_BY_FORMAT: dict[str, st.SearchStrategy[str]] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": st.builds(lambda day, time: f"{day}T{time}", _DATE, _TIME),
    "duration": st.one_of(
        st.integers(0, 400).map(lambda n: f"P{n}D"),
        st.builds(lambda h, m: f"PT{h}H{m}M", st.integers(0, 99), st.integers(0, 59)),
        st.builds(lambda y, m: f"P{y}Y{m}M", st.integers(0, 20), st.integers(0, 11)),
    ),
    "email": st.builds(lambda user, host: f"{user}@{host}", _LABEL, _HOST),
    "idn-email": st.builds(lambda user, host: f"{user}@{host}", _LABEL, _HOST),
    "hostname": _HOST,
    "idn-hostname": _HOST,
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
    "uri": st.builds(lambda host, path: f"https://{host}/{path}", _HOST, _LABEL),
    "iri": st.builds(lambda host, path: f"https://{host}/{path}", _HOST, _LABEL),
    "uri-reference": st.one_of(
        _LABEL.map(lambda path: f"/{path}"), _HOST.map(lambda h: f"https://{h}/")
    ),
    "iri-reference": st.one_of(
        _LABEL.map(lambda path: f"/{path}"), _HOST.map(lambda h: f"https://{h}/")
    ),
    "uri-template": st.builds(lambda host, var: f"https://{host}/{{{var}}}", _HOST, _LABEL),
    "uuid": st.uuids().map(str),
    "json-pointer": st.lists(_LABEL, max_size=3).map(lambda parts: "".join("/" + p for p in parts)),
    "relative-json-pointer": st.builds(
        lambda up, parts: f"{up}" + "".join("/" + p for p in parts),
        st.integers(0, 3),
        st.lists(_LABEL, max_size=2),
    ),
    "regex": st.sampled_from(["^a", "[0-9]+", "x|y", "^$", "a{2,3}"]),
}


def format_strategy(name: str) -> st.SearchStrategy[Any] | None:
    """Values of format ``name`` the runtime accepts; None when it asserts nothing."""
    checker = format_checker(name)
    if checker is None:
        return None
    base = _BY_FORMAT.get(name, _TOKEN)
    return base.filter(checker.check)
