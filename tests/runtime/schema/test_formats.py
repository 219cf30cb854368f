"""``format`` in the runtime validator: asserted for the formats ``mcpgen_runtime.schema.formats`` knows.

The official suite (test_schema_suite.py, ``optional/format/``) pins each checker
against its RFC; this file pins what the suite does not: the messages a model reads,
the switch between assertion and annotation, hostile inputs, and the generated
Unicode tables.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import idna
import pytest

from mcpgen_runtime.schema import formats as _formats
from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

ROOT = Path(__file__).resolve().parents[3]


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


def _pythons() -> dict[str, str]:
    """Python 3.12 and 3.13 where pyenv or PATH has them, by version."""
    found = {}
    for version in ("3.12", "3.13"):
        pyenv = sorted((Path.home() / ".pyenv" / "versions").glob(f"{version}.*/bin/python3"))
        on_path = shutil.which(f"python{version}")
        for candidate in [*map(str, pyenv[-1:]), on_path]:
            if candidate and ".pyenv/shims" not in candidate:
                found[version] = candidate
                break
    return found


def test_the_idna_props_are_what_the_generator_writes() -> None:
    if sys.version_info[:2] != (3, 11) or "3.13" not in _pythons():
        pytest.skip("regenerating needs Python 3.11 (Unicode 14.0) running and a Python 3.13")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "regen_idna_props.py"), "--check"],
        capture_output=True, text=True, check=False,
        env={**os.environ, "MCPGEN_PYTHON_3_13": _pythons()["3.13"]},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


# Labels with code points Unicode 15.0 and 15.1 added (Python 3.11 has Unicode 14.0,
# 3.12 15.0, 3.13 15.1): Kannada U+0CF3 (a spacing mark), Kawi U+11F00-U+11F02, CJK
# extensions H and I, Nag Mundari, Arabic U+10EFD (a non-spacing mark after an Arabic
# letter: the Bidi rule applies), and Garay U+10D4A (Unicode 16.0: unassigned for all).
NEW_LABELS = {
    "a\u0cf3b.example": True,
    "\u0cf3a.example": False,
    "\U00011f02\U00011f00.x": True,
    "\U00031350.cn": True,
    "\U0002ebf0.cn": True,
    "\U0001e4d0\U0001e4d1.x": True,
    "\u0628\U00010efd.x": True,
    "a\U00010efd.x": True,
    "\U00010d4a.x": False,
}

_VERDICTS = """
import json, sys
from mcpgen_runtime.schema import formats_net as f
labels = json.loads(sys.stdin.read())
print(json.dumps([[f.is_idn_hostname(t), f.is_hostname(t)] for t in labels]))
"""


def _suite_labels() -> list[str]:
    from test_schema_suite import SUITE

    labels = []
    for name in ("idn-hostname.json", "hostname.json"):
        path = SUITE / "optional" / "format" / name
        if path.is_file():
            for group in json.loads(path.read_text(encoding="utf-8")):
                labels += [t["data"] for t in group["tests"] if isinstance(t["data"], str)]
    return labels


def test_idn_hostname_verdicts_are_the_same_on_every_interpreter(tmp_path: Path) -> None:
    """Before, the tables were Unicode 14.0 read beside the interpreter's unicodedata:
    labels with code points Unicode 15.0/15.1 added were refused on 3.11 and accepted
    on 3.13, so a client and a server on different interpreters disagreed."""
    pythons = _pythons()
    if not pythons:
        pytest.skip("no Python 3.12 or 3.13 on this machine (pyenv or PATH)")
    labels = [*NEW_LABELS, *(a for t in NEW_LABELS if (a := _a_labels(t))), *_suite_labels()]
    # only the runtime and idna on the path: nothing else of this venv
    (tmp_path / "idna").symlink_to(Path(idna.__file__).parent)
    path = os.pathsep.join([str(ROOT / "runtime"), str(tmp_path)])
    verdicts = {}
    for name, python in {"3.11": sys.executable, **pythons}.items():
        done = subprocess.run(
            [
                python,
                "-I",
                "-c",
                f"import sys; sys.path[:0] = {path.split(os.pathsep)!r}\n" + _VERDICTS,
            ],
            input=json.dumps(labels),
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        verdicts[name] = dict(zip(labels, map(tuple, json.loads(done.stdout)), strict=True))
    for name, found in verdicts.items():
        assert found == verdicts["3.11"], {
            t: (found[t], verdicts["3.11"][t]) for t in labels if found[t] != verdicts["3.11"][t]
        }
        assert {t: found[t][0] for t in NEW_LABELS} == NEW_LABELS, name


def _a_labels(text: str) -> str | None:
    """``text`` with its non-ASCII labels written as A-labels (for ``hostname``)."""
    try:
        return ".".join(
            p if p.isascii() else "xn--" + p.encode("punycode").decode() for p in text.split(".")
        )
    except UnicodeError:
        return None
