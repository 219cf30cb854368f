"""IDNA2008 host names: the checks behind the ``hostname`` and ``idn-hostname`` formats.

A host name label is either an LDH label (letters, digits, hyphens) or an
internationalized one: a U-label (its Unicode form) or the A-label that encodes it
(``xn--`` and Punycode). RFC 5891 says what makes a U-label valid, RFC 5892 which
code points it may hold (derived from Unicode properties, plus contextual rules for a
few joiners and punctuation marks) and RFC 5893 (the Bidi rule) how right-to-left
text may mix with the rest.

A client and a server on different interpreters must agree on every verdict, so
nothing here depends on the Unicode version of the running Python. Which code points
a label may hold, and the Joining_Type and Script data of the contextual rules, come
from the ``idna`` package's tables (one fixed Unicode version, whatever the
interpreter). The three properties that package reads from ``unicodedata`` (Bidi
class, General_Category M, Canonical_Combining_Class) are read here from
``unicodedata`` for the code points Unicode 14.0 (Python 3.11) has, and from
``schema.idna_props`` for those Unicode 15.0 and 15.1 added; a code point neither knows
(assigned after Unicode 15.1, or never) is unassigned, on Python 3.11 to 3.13 alike.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from typing import Final

from idna import idnadata
from idna.core import valid_contexto
from idna.intranges import intranges_contain

from . import idna_props

__all__ = ["a_label_of", "is_a_label", "is_u_label", "label_problems"]

MAX_LABEL_OCTETS: Final = 63
"""RFC 1035 §2.3.4: a label is at most 63 octets (of its A-label form)."""

_VIRAMA: Final = 9  # Canonical_Combining_Class=Virama
_RTL: Final = frozenset({"R", "AL", "AN"})
_RTL_ALLOWED: Final = frozenset({"R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})
_RTL_END: Final = frozenset({"R", "AL", "EN", "AN"})
_LTR_ALLOWED: Final = frozenset({"L", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})
_LTR_END: Final = frozenset({"L", "EN"})
_ADDED_STARTS: Final = tuple(row[0] for row in idna_props.ADDED)


def _properties(char: str) -> tuple[str, bool, int] | None:
    """(Bidi class, is a mark, combining class) of ``char``, or None if unassigned."""
    row = _added(ord(char))
    if row is not None:  # added by Unicode 15.0/15.1: the table, on every interpreter
        return row[2], row[3], row[4]
    category = unicodedata.category(char)
    if category == "Cn":
        return None
    return unicodedata.bidirectional(char), category[0] == "M", unicodedata.combining(char)


def _added(cp: int) -> tuple[int, int, str, bool, int] | None:
    index = bisect_right(_ADDED_STARTS, cp) - 1
    if index >= 0 and cp <= idna_props.ADDED[index][1]:
        return idna_props.ADDED[index]
    return None


def _bidi(char: str) -> str:
    found = _properties(char)
    return "" if found is None else found[0]


def derived_property(char: str) -> str:
    """RFC 5892 §3: PVALID, CONTEXTJ, CONTEXTO, DISALLOWED or UNASSIGNED."""
    cp = ord(char)
    if _properties(char) is None and not 0xFDD0 <= cp <= 0xFDEF and cp & 0xFFFE != 0xFFFE:
        return "UNASSIGNED"  # noncharacters are assigned (and DISALLOWED)
    for value in ("PVALID", "CONTEXTJ", "CONTEXTO"):
        if intranges_contain(cp, idnadata.codepoint_classes[value]):
            return value
    return "DISALLOWED"


def _joining(char: str) -> str:
    cp = ord(char)
    for name, ranges in idnadata.joining_types.items():
        if intranges_contain(cp, ranges):
            return str(name)
    return "U"


def _zwnj_joins(label: str, index: int) -> bool:
    """RFC 5892 A.1 regexp: (L|D) T* ZWNJ T* (R|D) around position ``index``."""
    before = index - 1
    while before >= 0 and _joining(label[before]) == "T":
        before -= 1
    after = index + 1
    while after < len(label) and _joining(label[after]) == "T":
        after += 1
    return (
        before >= 0
        and _joining(label[before]) in ("L", "D")
        and after < len(label)
        and _joining(label[after]) in ("R", "D")
    )


def _context_ok(label: str, index: int) -> bool:
    """RFC 5892 Appendix A: the contextual rule of the code point at ``index``."""
    if label[index] in ("\u200c", "\u200d"):  # A.1 ZWNJ, A.2 ZWJ: after a virama, or joining
        before = _properties(label[index - 1]) if index > 0 else None
        if before is not None and before[2] == _VIRAMA:
            return True
        return label[index] == "\u200c" and _zwnj_joins(label, index)
    # A.3-A.9 need only Script data and code points: the idna package's rules
    return bool(valid_contexto(label, index))


def is_rtl_label(label: str) -> bool:
    """RFC 5893 §1.4: an RTL label holds a character of Bidi class R, AL or AN."""
    return any(_bidi(c) in _RTL for c in label)


def bidi_rule_ok(label: str) -> bool:
    """RFC 5893 §2, rules 1-6, for one label of a Bidi domain name."""
    classes = [_bidi(c) for c in label]
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
    for index, char in enumerate(label):
        value = derived_property(char)
        if value == "PVALID":
            continue
        if value in ("CONTEXTJ", "CONTEXTO") and _context_ok(label, index):
            continue
        return f"U+{ord(char):04X} in a label ({value.lower()})"
    # every code point is known from here on: NFC is the same on every interpreter
    if unicodedata.normalize("NFC", label) != label:
        return "a label not in Unicode NFC"
    if label[2:4] == "--":
        return "'--' in the third and fourth positions of a label"
    if label[0] == "-" or label[-1] == "-":
        return "a label that starts or ends with '-'"
    first = _properties(label[0])
    if first is not None and first[1]:
        return "a label that starts with a combining mark"
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
