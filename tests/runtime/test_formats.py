"""``format`` in the runtime validator: asserted for the formats ``_formats`` knows.

The official suite (test_schema_suite.py, ``optional/format/``) pins each checker
against its RFC; this file pins what the suite does not: the messages a model reads,
the switch between assertion and annotation, hostile inputs, and the generated
Unicode tables.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.schema import formats as _formats
from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

ROOT = Path(__file__).resolve().parents[2]


def problems(schema: Any, value: Any) -> list[str]:
    with pytest.raises(ValidationFailed) as info:
        compile_schema(schema)(value)
    return [problem.render() for problem in info.value.problems]


def test_the_issue_examples_are_refused_with_what_to_send() -> None:
    schema = {
        "type": "object",
        "properties": {
            "due_on": {"type": "string", "format": "date"},
            "url": {"type": "string", "format": "uri"},
        },
    }
    assert problems(schema, {"due_on": "next week", "url": "not a uri"}) == [
        "due_on: expected a date as YYYY-MM-DD (RFC 3339 full-date), got 'next week'",
        (
            "url: expected an absolute URI with a scheme, like https://example.com/x "
            "(RFC 3986), got 'not a uri'"
        ),
    ]
    check = compile_schema(schema)
    good = {"due_on": "2026-12-02", "url": "https://example.com/a?b=c#d"}
    assert check(good) is good


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("date-time", "2026-12-02T10:00:00+01:00", "2026-12-02 10:00"),
        ("time", "23:59:60Z", "10:00"),
        ("email", "noreply@localhost", "noreply@@localhost"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
        ("ipv4", "192.0.2.1", "192.0.2.256"),
        ("ipv6", "2001:db8::1", "2001:db8:::1"),
        ("hostname", "api.example.com", "api_example.com"),
        ("duration", "PT1H30M", "1h30"),
        ("json-pointer", "/items/0", "items/0"),
        ("regex", "^(?<=a)b\\1?$|(x)", "(?i)abc"),
    ],
)
def test_each_asserted_format_names_itself_in_the_message(name: str, good: str, bad: str) -> None:
    check = compile_schema({"format": name})
    assert check(good) == good
    [message] = problems({"format": name}, bad)
    assert message == f"expected {_formats.FORMATS[name].expected}, got {bad!r}"


def test_formats_judge_strings_only_and_unknown_formats_are_annotations() -> None:
    check = compile_schema({"format": "date"})
    for other in (12, 1.5, None, True, [], {}):
        assert check(other) == other
    assert compile_schema({"format": "x-custom"})("anything") == "anything"
    # The specification's default: a validator that leaves every format an annotation.
    assert compile_schema({"format": "date"}, assert_formats=False)("next week") == "next week"


def test_a_format_that_is_not_a_string_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match=r"#/properties/d/format: must be a string"):
        compile_schema({"properties": {"d": {"format": 3}}})


def test_format_combines_with_the_other_string_keywords() -> None:
    schema = {"type": "string", "format": "email", "maxLength": 10}
    assert problems(schema, "a@example.com") == ["must be at most 10 characters"]
    assert problems(schema, "no-at-sign") == [
        f"expected {_formats.FORMATS['email'].expected}, got 'no-at-sign'"
    ]
    # Under anyOf the failed format is one of the reasons no branch matched.
    either = {"anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
    assert compile_schema(either)("::1") == "::1"
    with pytest.raises(ValidationFailed):
        compile_schema(either)("localhost")


def test_rfc_details_the_suite_does_not_cover() -> None:
    assert _formats.is_email("noreply@localhost")  # RFC 5321 needs no dot in a domain
    assert _formats.is_email('"a\\"b"@example.com')  # quoted-pairSMTP
    assert not _formats.is_email("a" * 65 + "@example.com")  # local part over 64 octets
    assert not _formats.is_email("a@[gen:content]")  # no general literal tag is registered
    assert _formats.is_email("a@[IPv6:2001:db8::1]")
    assert not _formats.is_email("a@[IPv6:1:2:3:4:5:6::7]")  # RFC 5321: "::" is 2+ groups
    assert _formats.is_ipv4("010.001.000.001")  # RFC 2673 decbyte keeps leading zeros
    assert not _formats.is_ipv6("::ffff:010.1.1.1")  # RFC 3986 dec-octet does not
    assert _formats.is_relative_json_pointer("0+1/a") and _formats.is_relative_json_pointer("2-1#")
    assert not _formats.is_relative_json_pointer("0+0/a")
    assert _formats.is_uri_reference("") and not _formats.is_uri("")
    assert _formats.is_uri("urn:isbn:0451450523") and _formats.is_uri("http://[v1.x]:8080/")
    assert not _formats.is_uri("http://[::1%25eth0]/")  # zone ids are RFC 6874, not 3986
    assert _formats.is_iri("https://例え.jp/パス?q=\U000f0000") and not _formats.is_uri(
        "https://例え.jp/"
    )
    assert not _formats.is_iri("https://example.com/#\U000f0000")  # iprivate: query only
    assert _formats.is_hostname("ab--cd.example") and not _formats.is_hostname("xn--ab-cd")
    assert _formats.is_idn_hostname("bücher.example") and _formats.is_hostname(
        "xn--bcher-kva.example"
    )
    assert not _formats.is_idn_hostname("Bücher.example")  # upper case is not PVALID
    assert not _formats.is_regex("a{2,1}") and not _formats.is_regex("\\k<nope>(?<yes>a)")
    assert not _formats.is_regex("(?=a)*")  # a lookaround is never quantified


HOSTILE = [
    "1" * 400_000,
    "P" + "1" * 400_000 + "X",
    "{a" + ",a" * 200_000,
    "a{b}" * 100_000 + "}",
    "{" + "a" * 400_000,
    "http://a/" + "%4" * 200_000,
    "http://[" + "1:" * 200_000,
    '"' + "\\ " * 200_000,
    "a." * 200_000,
    "(" * 200_000,
    "é" * 400_000,
    "10:00:00." + "1" * 400_000 + "x",
]


@pytest.mark.parametrize("name", sorted(_formats.FORMATS))
def test_hostile_strings_are_judged_in_linear_time(name: str) -> None:
    # A checker that backtracked, or recursed per character, would hang or crash here
    # (the suite's per-test timeout is the bound; no timing is asserted).
    check = _formats.FORMATS[name].check
    for text in HOSTILE:
        assert check(text) in (True, False)
    assert not check("(" * 200_000) or name != "regex"


def test_the_idna_tables_are_what_the_generator_writes() -> None:
    if not any(Path("/usr/share/perl").glob("*/unicore")):
        pytest.skip("no Unicode tables on this machine to regenerate from")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "regen_idna_tables.py"), "--check"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if "Python's unicodedata is" in result.stderr + result.stdout:
        pytest.skip("this Python's Unicode version differs from the machine's tables")
    assert result.returncode == 0, result.stdout + result.stderr
