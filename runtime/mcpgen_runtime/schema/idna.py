"""IDNA2008 host names: the checks behind the ``hostname`` and ``idn-hostname`` formats.

A host name label is either an LDH label (letters, digits, hyphens) or an
internationalized one: a U-label (its Unicode form) or the A-label that encodes it
(``xn--`` and Punycode). RFC 5891 says what makes a U-label valid, RFC 5892 which
code points it may hold (derived from Unicode properties, plus contextual rules for a
few joiners and punctuation marks) and RFC 5893 (the Bidi rule) how right-to-left
text may mix with the rest. The properties come from ``unicodedata`` and, for the few
it lacks (Script, Joining_Type, …), from the generated tables in ``schema.idna_data``.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from typing import Final

from . import idna_data as data

__all__ = ["a_label_of", "is_a_label", "is_u_label", "label_problems"]

MAX_LABEL_OCTETS: Final = 63
"""RFC 1035 §2.3.4: a label is at most 63 octets (of its A-label form)."""

# RFC 5892 §2.6: code points whose derived value is fixed by hand.
_EXCEPTIONS: Final = {
    0x00DF: "PVALID", 0x03C2: "PVALID", 0x06FD: "PVALID", 0x06FE: "PVALID",
    0x0F0B: "PVALID", 0x3007: "PVALID",
    0x00B7: "CONTEXTO", 0x0375: "CONTEXTO", 0x05F3: "CONTEXTO", 0x05F4: "CONTEXTO",
    0x30FB: "CONTEXTO",
    **{cp: "CONTEXTO" for cp in range(0x0660, 0x066A)},
    **{cp: "CONTEXTO" for cp in range(0x06F0, 0x06FA)},
    0x0640: "DISALLOWED", 0x07FA: "DISALLOWED", 0x302E: "DISALLOWED", 0x302F: "DISALLOWED",
    0x3031: "DISALLOWED", 0x3032: "DISALLOWED", 0x3033: "DISALLOWED", 0x3034: "DISALLOWED",
    0x3035: "DISALLOWED", 0x303B: "DISALLOWED",
}  # fmt: skip
_LETTER_DIGITS: Final = frozenset({"Ll", "Lu", "Lo", "Nd", "Lm", "Mn", "Mc"})
# RFC 5892 §2.5 IgnorableBlocks: Combining Diacritical Marks for Symbols, Musical
# Symbols, Ancient Greek Musical Notation.
_IGNORABLE_BLOCKS: Final = ((0x20D0, 0x20FF), (0x1D100, 0x1D1FF), (0x1D200, 0x1D24F))
_HANGUL_SYLLABLES: Final = (0xAC00, 0xD7A3)  # Hangul_Syllable_Type LV and LVT
_VIRAMA: Final = 9  # Canonical_Combining_Class=Virama
_RTL: Final = frozenset({"R", "AL", "AN"})
_RTL_ALLOWED: Final = frozenset({"R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})
_RTL_END: Final = frozenset({"R", "AL", "EN", "AN"})
_LTR_ALLOWED: Final = frozenset({"L", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})
_LTR_END: Final = frozenset({"L", "EN"})


def _in(table: Sequence[int], cp: int) -> bool:
    return bisect_right(table, cp) % 2 == 1


def _is_noncharacter(cp: int) -> bool:
    return 0xFDD0 <= cp <= 0xFDEF or cp & 0xFFFE == 0xFFFE


def derived_property(cp: int) -> str:
    """RFC 5892 §3: PVALID, CONTEXTJ, CONTEXTO, DISALLOWED or UNASSIGNED."""
    if cp in _EXCEPTIONS:
        return _EXCEPTIONS[cp]
    char = chr(cp)
    category = unicodedata.category(char)
    if category == "Cn" and not _is_noncharacter(cp):
        return "UNASSIGNED"
    if cp == 0x2D or 0x30 <= cp <= 0x39 or 0x61 <= cp <= 0x7A:  # LDH
        return "PVALID"
    if cp in (0x200C, 0x200D):  # Join_Control
        return "CONTEXTJ"
    # OldHangulJamo: Hangul_Syllable_Type L, V or T (every type but LV/LVT and NA).
    if not _in(data.HANGUL_NOT_APPLICABLE, cp) and not (
        _HANGUL_SYLLABLES[0] <= cp <= _HANGUL_SYLLABLES[1]
    ):
        return "DISALLOWED"
    # Unstable: NFKC_Casefold changes it (default ignorables are handled just below).
    if unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", char).casefold()) != char:
        return "DISALLOWED"
    if _in(data.DEFAULT_IGNORABLE, cp) or _in(data.WHITE_SPACE, cp) or _is_noncharacter(cp):
        return "DISALLOWED"
    if any(low <= cp <= high for low, high in _IGNORABLE_BLOCKS):
        return "DISALLOWED"
    return "PVALID" if category in _LETTER_DIGITS else "DISALLOWED"


def _joining(cp: int) -> str:
    for name, table in (
        ("D", data.JOINING_D),
        ("L", data.JOINING_L),
        ("R", data.JOINING_R),
        ("T", data.JOINING_T),
    ):
        if _in(table, cp):
            return name
    return "U"


def _zwnj_joins(label: str, index: int) -> bool:
    """RFC 5892 A.1 regexp: (L|D) T* ZWNJ T* (R|D) around position ``index``."""
    before = index - 1
    while before >= 0 and _joining(ord(label[before])) == "T":
        before -= 1
    after = index + 1
    while after < len(label) and _joining(ord(label[after])) == "T":
        after += 1
    return (
        before >= 0
        and _joining(ord(label[before])) in ("L", "D")
        and after < len(label)
        and _joining(ord(label[after])) in ("R", "D")
    )


def _context_ok(label: str, index: int) -> bool:
    """RFC 5892 Appendix A: the contextual rule of the code point at ``index``."""
    cp = ord(label[index])
    before = ord(label[index - 1]) if index > 0 else None
    after = ord(label[index + 1]) if index + 1 < len(label) else None
    if cp in (0x200C, 0x200D):  # A.1 ZERO WIDTH NON-JOINER, A.2 ZERO WIDTH JOINER
        if before is not None and unicodedata.combining(chr(before)) == _VIRAMA:
            return True
        return cp == 0x200C and _zwnj_joins(label, index)
    if cp == 0x00B7:  # A.3 MIDDLE DOT: between two 'l'
        return before == 0x6C and after == 0x6C
    if cp == 0x0375:  # A.4 GREEK LOWER NUMERAL SIGN (KERAIA): Greek follows
        return after is not None and _in(data.GREEK, after)
    if cp in (0x05F3, 0x05F4):  # A.5, A.6 HEBREW GERESH, GERSHAYIM: Hebrew precedes
        return before is not None and _in(data.HEBREW, before)
    if cp == 0x30FB:  # A.7 KATAKANA MIDDLE DOT: some Hiragana, Katakana or Han
        return any(
            _in(data.HIRAGANA, ord(c)) or _in(data.KATAKANA, ord(c)) or _in(data.HAN, ord(c))
            for c in label
        )
    if 0x0660 <= cp <= 0x0669:  # A.8 ARABIC-INDIC DIGITS: no Extended Arabic-Indic
        return not any(0x06F0 <= ord(c) <= 0x06F9 for c in label)
    if 0x06F0 <= cp <= 0x06F9:  # A.9 EXTENDED ARABIC-INDIC DIGITS: no Arabic-Indic
        return not any(0x0660 <= ord(c) <= 0x0669 for c in label)
    return False


def is_rtl_label(label: str) -> bool:
    """RFC 5893 §1.4: an RTL label holds a character of Bidi class R, AL or AN."""
    return any(unicodedata.bidirectional(c) in _RTL for c in label)


def bidi_rule_ok(label: str) -> bool:
    """RFC 5893 §2, rules 1-6, for one label of a Bidi domain name."""
    classes = [unicodedata.bidirectional(c) for c in label]
    if not classes or classes[0] not in ("L", "R", "AL"):
        return False
    end = len(classes)
    while end > 0 and classes[end - 1] == "NSM":
        end -= 1
    if classes[0] in ("R", "AL"):
        if not all(c in _RTL_ALLOWED for c in classes):
            return False
        if end == 0 or classes[end - 1] not in _RTL_END:
            return False
        return not ("EN" in classes and "AN" in classes)
    if not all(c in _LTR_ALLOWED for c in classes):
        return False
    return end > 0 and classes[end - 1] in _LTR_END


def label_problems(label: str) -> str | None:
    """Why ``label`` is not a valid U-label (RFC 5891 §4.2, RFC 5892), or None.

    The Bidi rule is checked per domain name, by the caller.
    """
    if not label:
        return "an empty label"
    if unicodedata.normalize("NFC", label) != label:
        return "a label not in Unicode NFC"
    if label[2:4] == "--":
        return "'--' in the third and fourth positions of a label"
    if label[0] == "-" or label[-1] == "-":
        return "a label that starts or ends with '-'"
    if unicodedata.category(label[0]).startswith("M"):
        return "a label that starts with a combining mark"
    for index, char in enumerate(label):
        value = derived_property(ord(char))
        if value == "PVALID":
            continue
        if value in ("CONTEXTJ", "CONTEXTO") and _context_ok(label, index):
            continue
        return f"U+{ord(char):04X} in a label ({value.lower()})"
    return None


def a_label_of(label: str) -> str | None:
    """The A-label (``xn--`` + Punycode, RFC 3492) of a non-ASCII label, or None."""
    try:
        return "xn--" + label.encode("punycode").decode("ascii")
    except UnicodeError:
        return None


def decode_a_label(label: str) -> str | None:
    """The U-label an ``xn--`` label encodes, if it is canonical Punycode, else None."""
    body = label[4:]
    try:
        decoded = body.encode("ascii").decode("punycode")
    except (UnicodeError, ValueError):
        return None
    if decoded.isascii():
        return None  # RFC 5890 §2.3.2.1: an A-label encodes at least one non-ASCII character
    if a_label_of(decoded) != "xn--" + body.lower():
        return None  # not the one encoding of its U-label
    return decoded


def is_a_label(label: str) -> bool:
    return label[:4].lower() == "xn--"


def is_u_label(label: str) -> bool:
    return label_problems(label) is None
