"""JSON Schema ``pattern``: ECMA-262 regular expressions, matched in linear time.

JSON Schema defines ``pattern`` and ``patternProperties`` as ECMA-262 regular
expressions in Unicode mode (the ``u`` flag), not anchored. Python's ``re`` reads the
same text differently (``$`` also matches before a final newline, ``\\d`` and ``\\w``
match any Unicode digit or letter) and backtracks, so ``^([a-z]+)+$`` against 35
characters and a ``!`` takes seconds. pydantic-core, the runtime's one dependency,
carries the Rust ``regex`` crate, whose matching time is linear in the input and whose
compiled programs are size-bounded. This module parses an ECMA-262 pattern and writes
the same language in that crate's syntax:

- ``\\d \\w \\s`` and their negations become their ECMA-262 sets (ASCII digits, ASCII
  word characters, the ECMA-262 white space and line terminators); ``\\b``/``\\B`` use
  ASCII word characters; ``.`` matches anything but a line terminator;
- ``^``/``$`` stay input anchors (no multiline flag exists in JSON Schema);
- character escapes (``\\cX``, ``\\0``, ``\\xHH``, ``\\uHHHH``, surrogate pairs,
  ``\\u{H…}``, ``\\t``…) become the code points they stand for; ``[]`` matches
  nothing and ``[^]`` any character;
- ``\\p{…}``/``\\P{…}`` Unicode property escapes pass through.

What needs backtracking cannot run in linear time and is refused when the schema is
compiled, with the reason: lookahead and lookbehind, back-references (``\\1``,
``\\k<name>``). Syntax that ECMA-262 Unicode mode rejects (``\\a``, ``(?i)``,
``(?P<n>…)``, a lone ``{``, a quantifier with nothing to repeat) is refused too.

``check_syntax`` answers the other question, the ``regex`` format's: is a string an
ECMA-262 pattern at all? There lookaround and back-references are valid syntax.
"""

from __future__ import annotations

from typing import Final

__all__ = ["EcmaRegex", "RegexError", "check_syntax", "translate"]


class RegexError(ValueError):
    """The pattern is not ECMA-262, or needs an engine that backtracks."""


# ECMA-262 WhiteSpace and LineTerminator code points (what \s matches).
_SPACE_SET: Final = (
    r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}"
    r"\x{3000}\x{FEFF}"
)
_CLASS_ESCAPES: Final = {
    "d": "0-9",
    "w": "0-9A-Za-z_",
    "s": _SPACE_SET,
}
_DOT: Final = r"[^\n\r\x{2028}\x{2029}]"
_CONTROL_ESCAPES: Final = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
_SYNTAX_CHARACTERS: Final = frozenset("^$\\.*+?()[]{}|/")
_HEX: Final = frozenset("0123456789abcdefABCDEF")


_PLAIN: Final = frozenset(" !\"%',/:;<=>@_`")
_META: Final = frozenset("\\.+*?()|[]{}^$#&-~")


def _char(code: int) -> str:
    """One code point in the target syntax, safe in and out of a class; printable
    ASCII stays readable (the translation shows in generated models)."""
    char = chr(code)
    if (char.isascii() and char.isalnum()) or char in _PLAIN:
        return char
    if char in _META:
        return "\\" + char
    return f"\\x{{{code:X}}}"


class _Parser:
    """Recursive descent over the ECMA-262 Unicode-mode pattern grammar."""

    def __init__(self, source: str, syntax_only: bool = False) -> None:
        self.source = source
        self.pos = 0
        # Syntax only: lookaround and back-references are parsed, not refused (nothing
        # is run); what they refer to is checked once the whole pattern is read.
        self.syntax_only = syntax_only
        self.groups = 0
        self.names: set[str] = set()
        self.numbered_refs: list[int] = []
        self.named_refs: list[str] = []

    # -- reading -------------------------------------------------------------

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.source[index] if index < len(self.source) else ""

    def take(self) -> str:
        char = self.peek()
        self.pos += 1
        return char

    def fail(self, message: str) -> RegexError:
        return RegexError(f"{message} (at offset {self.pos})")

    # -- grammar -------------------------------------------------------------

    def pattern(self) -> str:
        result = self.disjunction()
        if self.pos < len(self.source):
            raise self.fail("unmatched ')'")
        return result

    def disjunction(self) -> str:
        parts = [self.alternative()]
        while self.peek() == "|":
            self.pos += 1
            parts.append(self.alternative())
        return "|".join(parts)

    def alternative(self) -> str:
        terms: list[str] = []
        while self.peek() not in ("", "|", ")"):
            terms.append(self.term())
        return "".join(terms)

    def term(self) -> str:
        char = self.peek()
        if char == "^" or char == "$":
            self.pos += 1
            return char
        if char == "\\" and self.peek(1) in ("b", "B"):
            letter = self.peek(1)
            self.pos += 2
            return f"(?-u:\\{letter})"  # ECMA-262 word boundaries use ASCII word characters
        if char == "(" and self.peek(1) == "?" and self.peek(2) in ("=", "!"):
            if self.syntax_only:
                return self.assertion(3)
            raise self.fail("lookahead needs a backtracking engine and is not supported")
        if char == "(" and self.source.startswith("(?<", self.pos) and self.peek(3) in ("=", "!"):
            if self.syntax_only:
                return self.assertion(4)
            raise self.fail("lookbehind needs a backtracking engine and is not supported")
        atom = self.atom()
        return atom + self.quantifier()

    def assertion(self, opener: int) -> str:
        """A lookaround, read for its syntax only; Unicode mode never quantifies one."""
        self.pos += opener
        self.disjunction()
        if self.take() != ")":
            raise self.fail("missing ')'")
        if self.peek() in ("*", "+", "?", "{"):
            raise self.fail("a lookaround assertion cannot be quantified")
        return ""

    def quantifier(self) -> str:
        char = self.peek()
        if char in ("*", "+", "?"):
            self.pos += 1
            result = char
        elif char == "{":
            result = self.braces()
        else:
            return ""
        if self.peek() == "?":
            self.pos += 1
            result += "?"
        if self.peek() in ("*", "+", "?", "{"):
            raise self.fail("a quantifier cannot follow a quantifier")
        return result

    def braces(self) -> str:
        start = self.pos
        self.pos += 1
        low = self.digits()
        if low is None:
            raise self.fail("a lone '{' is not allowed; escape it as '\\{'")
        high: int | None = low
        if self.peek() == ",":
            self.pos += 1
            high = self.digits()
        if self.take() != "}":
            self.pos = start
            raise self.fail("a lone '{' is not allowed; escape it as '\\{'")
        if high is not None and high < low:
            raise self.fail(f"numbers out of order in {{{low},{high}}}")
        if high == low:
            return f"{{{low}}}"
        return f"{{{low},}}" if high is None else f"{{{low},{high}}}"

    def digits(self) -> int | None:
        start = self.pos
        while self.peek().isascii() and self.peek().isdigit():
            self.pos += 1
        return int(self.source[start : self.pos]) if self.pos > start else None

    def atom(self) -> str:
        char = self.take()
        if char == ".":
            return _DOT
        if char == "(":
            return self.group()
        if char == "[":
            return self.character_class()
        if char == "\\":
            return self.atom_escape()
        if char in ("*", "+", "?"):
            raise self.fail("nothing to repeat")
        if char == "{":
            self.pos -= 1
            raise self.fail("a lone '{' is not allowed; escape it as '\\{'")
        if char in ("}", "]"):
            raise self.fail(f"a lone {char!r} is not allowed in Unicode mode; escape it")
        return _char(ord(char))

    def group(self) -> str:
        if self.peek() == "?":
            if self.peek(1) == ":":
                self.pos += 2
            elif self.peek(1) == "<":
                self.pos += 2
                self.names.add(self.group_name())
                self.groups += 1
            else:
                raise self.fail("unknown group syntax '(?'; ECMA-262 has (?:…) and (?<name>…)")
        else:
            self.groups += 1
        body = self.disjunction()
        if self.take() != ")":
            raise self.fail("missing ')'")
        return f"(?:{body})"  # captures are never read: matching only

    def group_name(self) -> str:
        start = self.pos
        while self.peek() not in ("", ">"):
            self.pos += 1
        name = self.source[start : self.pos]
        if (
            self.take() != ">"
            or not name
            or not (name[0].isalpha() or name[0] in "_$")
            or not all(c.isalnum() or c in "_$" for c in name)
        ):
            raise self.fail("invalid group name")
        return name

    def atom_escape(self) -> str:
        char = self.peek()
        if char.isascii() and char.isdigit() and char != "0":
            if self.syntax_only:
                number = self.digits()
                assert number is not None
                self.numbered_refs.append(number)
                return ""
            raise self.fail("back-references need a backtracking engine and are not supported")
        if char == "k":
            if self.syntax_only:
                self.pos += 1
                if self.take() != "<":
                    raise self.fail("\\k must be followed by a group name in angle brackets")
                self.named_refs.append(self.group_name())
                return ""
            raise self.fail("back-references need a backtracking engine and are not supported")
        escaped = self.class_escape()
        if escaped is not None:
            return f"[{escaped}]"
        return _char(self.character_escape())

    def class_escape(self) -> str | None:
        """``\\d \\D \\s \\S \\w \\W \\p{…} \\P{…}`` as class contents, else None."""
        char = self.peek()
        lower = char.lower()
        if lower in _CLASS_ESCAPES and char.isascii():
            self.pos += 1
            body = _CLASS_ESCAPES[lower]
            return body if char.islower() else f"[^{body}]"
        if char in ("p", "P"):
            self.pos += 1
            if self.take() != "{":
                raise self.fail(f"\\{char} needs a property in braces, like \\{char}{{Letter}}")
            start = self.pos
            while self.peek() not in ("", "}"):
                self.pos += 1
            name = self.source[start : self.pos]
            if self.take() != "}" or not name or not all(c.isalnum() or c in "_=" for c in name):
                raise self.fail("invalid Unicode property escape")
            return f"\\{char}{{{name}}}"
        return None

    def character_escape(self) -> int:
        char = self.take()
        if char in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[char]
        if char == "c":
            letter = self.take()
            if not (letter.isascii() and letter.isalpha()):
                raise self.fail("\\c must be followed by a letter")
            return ord(letter) % 32
        if char == "0":
            if self.peek().isascii() and self.peek().isdigit():
                raise self.fail("octal escapes are not allowed in Unicode mode")
            return 0
        if char == "x":
            return self.hex_digits(2)
        if char == "u":
            return self.unicode_escape()
        if char in _SYNTAX_CHARACTERS:
            return ord(char)
        if char == "":
            raise self.fail("the pattern ends with a lone '\\'")
        raise self.fail(f"'\\{char}' is not an escape in ECMA-262 Unicode mode")

    def hex_digits(self, count: int) -> int:
        text = self.source[self.pos : self.pos + count]
        if len(text) != count or not set(text) <= _HEX:
            raise self.fail(f"expected {count} hexadecimal digits")
        self.pos += count
        return int(text, 16)

    def unicode_escape(self) -> int:
        if self.peek() == "{":
            self.pos += 1
            start = self.pos
            while self.peek() in _HEX and self.peek():
                self.pos += 1
            text = self.source[start : self.pos]
            if not text or self.take() != "}" or int(text, 16) > 0x10FFFF:
                raise self.fail("invalid \\u{…} escape")
            return int(text, 16)
        code = self.hex_digits(4)
        if 0xD800 <= code <= 0xDBFF and self.source.startswith("\\u", self.pos):
            saved = self.pos
            self.pos += 2
            try:
                low = self.hex_digits(4)
            except RegexError:
                low = -1
            if 0xDC00 <= low <= 0xDFFF:
                return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            self.pos = saved
        if 0xD800 <= code <= 0xDFFF:
            raise self.fail("a lone surrogate cannot be matched")
        return code

    # -- character classes ---------------------------------------------------

    def character_class(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        items: list[str] = []
        while True:
            char = self.peek()
            if char == "":
                raise self.fail("missing ']'")
            if char == "]":
                self.pos += 1
                break
            low, low_set = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high, high_set = self.class_atom()
                if low_set is not None or high_set is not None:
                    raise self.fail("a class escape cannot bound a range")
                assert low is not None and high is not None
                if high < low:
                    raise self.fail("range out of order in character class")
                items.append(f"{_char(low)}-{_char(high)}")
            elif low_set is not None:
                items.append(f"[{low_set}]")
            else:
                assert low is not None
                items.append(_char(low))
        if not items:
            # ECMA-262: [] matches nothing, [^] matches any character.
            return r"[\x00-\x{10FFFF}]" if negated else r"[^\x00-\x{10FFFF}]"
        return f"[{'^' if negated else ''}{''.join(items)}]"

    def class_atom(self) -> tuple[int | None, str | None]:
        """One class member: a code point, or a set (from a class escape)."""
        char = self.take()
        if char != "\\":
            return ord(char), None
        if self.peek() == "b":
            self.pos += 1
            return 0x08, None
        if self.peek() == "-":
            self.pos += 1
            return ord("-"), None
        escaped = self.class_escape()
        if escaped is not None:
            return None, escaped
        if self.peek().isascii() and self.peek().isdigit() and self.peek() != "0":
            raise self.fail("back-references are not allowed in a class")
        return self.character_escape(), None


def check_syntax(source: str) -> None:
    """Raise RegexError unless ``source`` is an ECMA-262 pattern in Unicode mode.

    Lookaround and back-references are valid syntax here (they are refused only when a
    pattern must run); a back-reference must name a group the pattern has.
    """
    if any(0xD800 <= ord(char) <= 0xDFFF for char in source):
        raise RegexError("the pattern holds a lone surrogate, which cannot be matched")
    parser = _Parser(source, syntax_only=True)
    parser.pattern()
    if any(number > parser.groups for number in parser.numbered_refs):
        raise RegexError("a back-reference to a group the pattern does not have")
    if any(name not in parser.names for name in parser.named_refs):
        raise RegexError("a back-reference to a group name the pattern does not have")


def translate(source: str) -> str:
    """``source`` (ECMA-262, Unicode mode) in the Rust ``regex`` crate's syntax.

    Raises RegexError for what ECMA-262 rejects or what needs backtracking.
    """
    if any(0xD800 <= ord(char) <= 0xDFFF for char in source):
        raise RegexError("the pattern holds a lone surrogate, which cannot be matched")
    return _Parser(source).pattern()


class EcmaRegex:
    """A compiled ``pattern``: ``search`` says whether it matches anywhere in a string."""

    __slots__ = ("_no_match", "_validate", "source", "translated")

    def __init__(self, source: str) -> None:
        # pydantic-core (the Rust engine) is imported by the first pattern compiled,
        # not by importing this module: a server's start-up does not pay ~45 ms for it
        # (its validators are compiled on each tool's first call, see server.tools).
        import pydantic_core

        self.source = source
        self.translated = translate(source)
        try:
            validator = pydantic_core.SchemaValidator(
                pydantic_core.core_schema.str_schema(
                    pattern=self.translated, regex_engine="rust-regex"
                )
            )
        except pydantic_core.SchemaError as exc:
            reason = str(exc).strip().splitlines()[-1].strip()
            raise RegexError(f"cannot compile: {reason}") from None
        self._validate = validator.validate_python
        self._no_match: type[Exception] = pydantic_core.ValidationError

    def search(self, text: str) -> bool:
        try:
            self._validate(text)
        except self._no_match:
            if not any(0xD800 <= ord(char) <= 0xDFFF for char in text):
                return False
            # A lone surrogate (legal in a JSON string) matches no pattern character
            # but must not hide the rest: match with U+FFFD in its place.
            cleaned = "".join("\ufffd" if 0xD800 <= ord(char) <= 0xDFFF else char for char in text)
            try:
                self._validate(cleaned)
            except self._no_match:
                return False
        return True

    def __repr__(self) -> str:
        return f"EcmaRegex({self.source!r})"
