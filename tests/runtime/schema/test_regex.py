"""``pattern`` has ECMA-262 meaning and linear-time matching (``mcpgen_runtime.schema.regex``)."""

from __future__ import annotations

import re

import pytest

from mcpgen_runtime.schema.regex import EcmaRegex, RegexError, translate
from mcpgen_runtime.schema.validator import SchemaError, compile_schema


def matches(pattern: str, text: str) -> bool:
    return EcmaRegex(pattern).search(text)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"^[A-Z]{2}$", "US", True),
        (r"^[A-Z]{2}$", "US\n", False),  # Python's $ also matches before a final newline
        (r"^\d{4}$", "2024", True),
        (r"^\d{4}$", "\u0661\u0662\u0663\u0664", False),  # Arabic-Indic digits: \d is ASCII
        (r"^\D$", "\u07c0", True),
        (r"^\w+$", "abc_9", True),
        (r"^\w+$", "é", False),
        (r"^\W$", "é", True),
        (r"^\s$", "\u00a0", True),
        (r"^\s$", "\ufeff", True),
        (r"^\s$", "\u2003", True),
        (r"^\s$", "\u0001", False),
        (r"^\S$", "\u2013", True),
        (r"^.$", "\n", False),
        (r"^.$", "\r", False),
        (r"^.$", "\u2028", False),
        (r"^.$", "\U0001f432", True),  # one code point, not two UTF-16 units
        (r"^\cC$", "\x03", True),
        (r"^\cc$", "\x03", True),
        (r"^\t$", "\t", True),
        (r"^\0$", "\x00", True),
        (r"^\x41\u0042\u{43}$", "ABC", True),
        (r"^\ud83d\udc32$", "\U0001f432", True),  # a surrogate pair escape is one code point
        (r"^[\b]$", "\x08", True),
        (r"\bcat\b", "a cat!", True),
        (r"\bcat\b", "concatenate", False),
        (r"\Bcat", "concat", True),
        (r"é\b", "éa", True),  # é is not an ASCII word character: a boundary follows it
        (r"^[^]$", "\n", True),
        (r"[]", "anything", False),
        (r"^[\d\-z]+$", "1-z", True),
        (r"^[\w.-]+@x$", "a.b-c@x", True),
        (r"^[^\s]+$", "a\u00a0b", False),
        (r"^\p{Letter}+$", "π", True),
        (r"^\p{L}+$", "123", False),
        (r"^\P{L}$", "1", True),
        (r"\p{Script=Greek}", "λ", True),
        (r"^(?:ab|cd)+$", "abcdab", True),
        (r"^(?<year>\d{4})-\d{2}$", "2024-01", True),
        (r"^a{2,3}$", "aaaa", False),
        (r"^a{2,}?$", "aaaa", True),
        (r"^\/\.\*\+\?\(\)\[\]\{\}\|\^\$\\$", "/.*+?()[]{}|^$\\", True),
        (r"a+", "xxaayy", True),  # not anchored
        (r"^a$", "A", False),  # case-sensitive
    ],
)
def test_ecma_262_meaning(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(?=a)a", "lookahead"),
        (r"(?!a)b", "lookahead"),
        (r"(?<=a)b", "lookbehind"),
        (r"(?<!a)b", "lookbehind"),
        (r"(a)\1", "back-reference"),
        (r"(?<n>a)\k<n>", "back-reference"),
        (r"\a", "not an escape"),
        (r"(?i)abc", "unknown group"),
        (r"(?P<name>x)", "unknown group"),
        (r"(?#comment)a", "unknown group"),
        (r"a{", "lone '{'"),
        (r"{1}", "lone '{'"),
        (r"*a", "nothing to repeat"),
        (r"a**", "cannot follow a quantifier"),
        (r"a{1000}{1000}", "cannot follow a quantifier"),
        (r"(abc", "missing ')'"),
        (r"abc)", "unmatched ')'"),
        (r"[abc", "missing ']'"),
        (r"[z-a]", "out of order"),
        (r"a{3,1}", "out of order"),
        (r"[\d-z]", "class escape cannot bound a range"),
    ],
)
def test_refused_with_a_reason(pattern: str, reason: str) -> None:
    with pytest.raises(RegexError, match=re.escape(reason)):
        EcmaRegex(pattern)


def test_compiled_program_size_is_bounded() -> None:
    with pytest.raises(RegexError, match="size limit"):
        EcmaRegex("(?:(?:(?:a{100}){100}){100}){100}")


def test_schema_compile_reports_the_pattern_and_where() -> None:
    with pytest.raises(SchemaError, match=r"#/properties/x/pattern: .*lookahead"):
        compile_schema({"properties": {"x": {"pattern": "(?=a)"}}})
    with pytest.raises(SchemaError, match=r"patternProperties: .*back-reference"):
        compile_schema({"patternProperties": {r"(a)\1": True}})


def test_catastrophic_backtracking_patterns_finish() -> None:
    # With Python's `re` each of these takes longer than the age of the universe;
    # a linear-time engine answers at once (pytest-timeout would stop a hang).
    hostile = "a" * 100_000 + "!"
    for pattern in (r"^([a-z]+)+$", r"^(a|a)*$", r"^(a|aa)+$", r"^(\w+\s?)*$"):
        assert not matches(pattern, hostile)
    check = compile_schema({"type": "string", "pattern": r"^([a-z]+)+$"})
    with pytest.raises(Exception, match="must match pattern"):
        check(hostile)


def test_lone_surrogates_in_the_text_do_not_break_matching() -> None:
    assert matches(r"^a.b$", "a\ud800b")
    assert not matches(r"^ab$", "a\ud800b")
    assert matches(r"x", "\udc00x")


def test_lone_surrogate_in_the_pattern_is_refused() -> None:
    with pytest.raises(RegexError, match="surrogate"):
        translate("\ud800")
    with pytest.raises(RegexError, match="surrogate"):
        translate(r"\ud800")


def test_translation_is_readable_for_common_patterns() -> None:
    assert translate(r"^\d{4}-\d{2}$") == r"^[0-9]{4}\-[0-9]{2}$"
    assert translate(r"^[\w.-]+@[a-z]+\.com$") == r"^[[0-9A-Za-z_]\.\-]+@[a-z]+\.com$"
    assert translate(r"^[a-z]+$") == "^[a-z]+$"
