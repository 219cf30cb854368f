"""JSON Schema ``format`` checkers for internet addresses and names: IPv4 and IPv6,
URIs and IRIs (references and templates too), host names (IDNA2008 for
``idn-hostname``), e-mail addresses. ``schema.formats`` holds the table the validator
uses; the rules of every checker (whole string, ASCII digits, linear-time patterns,
nothing fetched) are stated there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

__all__ = [
    "Lazy",
    "is_email",
    "is_hostname",
    "is_idn_email",
    "is_idn_hostname",
    "is_ipv4",
    "is_ipv6",
    "is_iri",
    "is_iri_reference",
    "is_uri",
    "is_uri_reference",
    "is_uri_template",
]


class Lazy:
    """A regular expression compiled on first use: a server checks a few formats, and
    compiling every pattern here (Unicode ranges included) at import cost tens of
    milliseconds of start-up."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self._get().fullmatch(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self._get().match(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self._get().search(text)

    def split(self, text: str) -> list[str]:
        return self._get().split(text)

    def findall(self, text: str) -> list[str]:
        return self._get().findall(text)


# --------------------------------------------------------------------- IP addresses

_DEC_OCTET = Lazy(r"25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9]")
_DECBYTE = Lazy(r"[0-9]{1,3}")
_HEX_GROUP = Lazy(r"[0-9A-Fa-f]{1,4}")


def _dec_octet(text: str) -> bool:
    """RFC 3986 §3.2.2 ``dec-octet``: 0-255 without leading zeros."""
    return _DEC_OCTET.fullmatch(text) is not None


def _dotted(text: str, octet: Callable[[str], bool]) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(octet(part) for part in parts)


def _decbyte(text: str) -> bool:
    """RFC 2673 §3.2 ``decbyte``: one to three digits, 0-255 (leading zeros allowed)."""
    return _DECBYTE.fullmatch(text) is not None and int(text) <= 255


def is_ipv4(text: str) -> bool:
    """RFC 2673 §3.2 ``dotted-quad``: four ``decbyte`` joined by dots."""
    return len(text) <= 15 and _dotted(text, _decbyte)


def _ipv6(text: str, min_elided: int, ipv4_octet: Callable[[str], bool]) -> bool:
    """Eight 16-bit groups in hex, ``::`` standing for ``min_elided`` or more zero
    groups, the last two optionally written as a dotted IPv4 address."""
    if text.count("::") > 1:
        return False
    elided = "::" in text
    if elided:
        head, tail = text.split("::")
        parts = (head.split(":") if head else []) + (tail.split(":") if tail else [])
    else:
        parts = text.split(":")
    groups = 0
    for index, part in enumerate(parts):
        if index == len(parts) - 1 and "." in part:
            if not _dotted(part, ipv4_octet):
                return False
            groups += 2
        elif _HEX_GROUP.fullmatch(part):
            groups += 1
        else:
            return False
    return groups <= 8 - min_elided if elided else groups == 8


def is_ipv6(text: str) -> bool:
    """RFC 4291 §2.2 text forms (RFC 3986 §3.2.2 ``IPv6address``): ``::`` once at
    most, an embedded IPv4 part of ``dec-octet``s; no zone, no prefix length."""
    return len(text) <= 45 and _ipv6(text, 1, _dec_octet)


# -------------------------------------------------------------------------- URIs

_UNRESERVED: Final = r"A-Za-z0-9\-._~"
_SUB_DELIMS: Final = r"!$&'()*+,;="
_UCSCHAR: Final = (
    "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef"
    "\U00010000-\U0001fffd\U00020000-\U0002fffd\U00030000-\U0003fffd"
    "\U00040000-\U0004fffd\U00050000-\U0005fffd\U00060000-\U0006fffd"
    "\U00070000-\U0007fffd\U00080000-\U0008fffd\U00090000-\U0009fffd"
    "\U000a0000-\U000afffd\U000b0000-\U000bfffd\U000c0000-\U000cfffd"
    "\U000d0000-\U000dfffd\U000e1000-\U000efffd"
)
_IPRIVATE: Final = "\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
# RFC 3986 Appendix B: splits any string into the five components, or fails to.
_SPLIT = Lazy(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.DOTALL)
_SCHEME = Lazy(r"[A-Za-z][A-Za-z0-9+\-.]*")
_PORT = Lazy(r"[0-9]*")
_IPV_FUTURE = Lazy(rf"[vV][0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+")


_BAD_PERCENT = Lazy(r"%(?![0-9A-Fa-f]{2})")


def _chars(extra: str) -> Callable[[str], bool]:
    """Runs of the given characters and percent-encoded octets (two scans of one
    character class each: a run of alternatives is ten times slower in ``re``)."""
    run = Lazy(f"[{extra}%]*")

    def check(text: str) -> bool:
        return run.fullmatch(text) is not None and _BAD_PERCENT.search(text) is None

    return check


class _UriGrammar:
    """The character sets of each URI (or IRI) component, as checkers."""

    __slots__ = ("fragment", "host", "path", "query", "userinfo")

    def __init__(self, unreserved: str, private: str) -> None:
        base = unreserved + _SUB_DELIMS
        pchar = base + ":@"
        self.userinfo = _chars(base + ":")
        self.host = _chars(base)
        self.path = _chars(pchar + "/")
        self.query = _chars(pchar + "/?" + private)
        self.fragment = _chars(pchar + "/?")


_URI = _UriGrammar(_UNRESERVED, "")
_IRI = _UriGrammar(_UNRESERVED + _UCSCHAR, _IPRIVATE)


def _authority_ok(authority: str, grammar: _UriGrammar) -> bool:
    """``[ userinfo "@" ] host [ ":" port ]`` (RFC 3986 §3.2)."""
    userinfo, at, hostport = authority.rpartition("@")
    if at and (not grammar.userinfo(userinfo) or "@" in userinfo):
        return False
    if hostport.startswith("["):
        literal, bracket, rest = hostport[1:].partition("]")
        if not bracket or not (is_ipv6(literal) or _IPV_FUTURE.fullmatch(literal)):
            return False
        return not rest or (rest[0] == ":" and _PORT.fullmatch(rest[1:]) is not None)
    host, _, port = hostport.partition(":")
    # A registered name covers IPv4 addresses too (RFC 3986 §3.2.2 reads them first).
    return grammar.host(host) and _PORT.fullmatch(port) is not None


def _reference_ok(text: str, grammar: _UriGrammar, absolute: bool) -> bool:
    match = _SPLIT.fullmatch(text)
    if match is None:
        return False
    scheme, authority, path, query, fragment = match.groups()
    if scheme is None:
        if absolute:
            return False
    elif not _SCHEME.fullmatch(scheme):
        # Not a scheme, and a relative reference's first segment holds no ':'.
        return False
    if authority is not None and not _authority_ok(authority, grammar):
        return False
    return (
        grammar.path(path)
        and (query is None or grammar.query(query))
        and (fragment is None or grammar.fragment(fragment))
    )


def is_uri(text: str) -> bool:
    """RFC 3986 §3 ``URI``: ``scheme ":" hier-part [ "?" query ] [ "#" fragment ]``."""
    return _reference_ok(text, _URI, absolute=True)


def is_uri_reference(text: str) -> bool:
    """RFC 3986 §4.1 ``URI-reference``: a ``URI`` or a ``relative-ref``."""
    return _reference_ok(text, _URI, absolute=False)


def is_iri(text: str) -> bool:
    """RFC 3987 §2.2 ``IRI``: a URI whose parts may also hold ``ucschar`` (and the
    query ``iprivate``) characters."""
    return _reference_ok(text, _IRI, absolute=True)


def is_iri_reference(text: str) -> bool:
    """RFC 3987 §2.2 ``IRI-reference``: an ``IRI`` or an ``irelative-ref``."""
    return _reference_ok(text, _IRI, absolute=False)


# '%' stands for a pct-encoded triplet here: every '%' is checked to start one first,
# so the classes can take it as a character (runs of one class are fast in ``re``).
# Each character has one place to go (literal runs lie between expressions, dots and
# commas separate names), so possessive quantifiers change nothing but the time a
# failure takes: no state is kept to backtrack into.
_VARNAME: Final = r"[A-Za-z0-9_%]++(?:\.[A-Za-z0-9_%]++)*+"
_VARSPEC: Final = rf"{_VARNAME}(?::[1-9][0-9]{{0,3}}+|\*)?+"
_LITERALS: Final = rf"[!#$%&-;=?-\[\]_a-z~{_UCSCHAR}{_IPRIVATE}]*+"
_TEMPLATE = Lazy(rf"{_LITERALS}(?:\{{[+#./;?&=,!@|]?+{_VARSPEC}(?:,{_VARSPEC})*+\}}{_LITERALS})*+")


def is_uri_template(text: str) -> bool:
    """RFC 6570 §2 ``URI-Template``: literals and ``{[operator]varspec,…}`` expressions.

    The apostrophe, a URI sub-delimiter that §2.1's literal ranges leave out, is
    accepted as a literal, as the JSON Schema test suite expects.
    """
    return _BAD_PERCENT.search(text) is None and _TEMPLATE.fullmatch(text) is not None


# ---------------------------------------------------------------------- host names

_LDH_LABEL = Lazy(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
MAX_NAME_LENGTH: Final = 253
"""RFC 1034 §3.1: 255 octets on the wire, so 253 characters written with dots."""
_IDN_DOTS = Lazy("[.\u3002\uff0e\uff61]")


def _domain_ok(labels: list[str]) -> bool:
    """The Bidi rule (RFC 5893 §2) binds every label once one is right-to-left."""
    from . import idna as _idna  # its Unicode tables load when a host name is first checked

    if any(_idna.is_rtl_label(label) for label in labels):
        return all(_idna.bidi_rule_ok(label) for label in labels)
    return True


def _ascii_label(label: str) -> str | None:
    """An LDH label (RFC 1123 §2.1) as its U-label when it is an A-label; None if invalid."""
    from . import idna as _idna

    if not _LDH_LABEL.fullmatch(label):
        return None
    if not _idna.is_a_label(label):
        return label
    decoded = _idna.decode_a_label(label)
    if decoded is None or not _idna.is_u_label(decoded):
        return None
    return decoded


def is_hostname(text: str) -> bool:
    """RFC 1123 §2.1 host name: dot-separated labels of letters, digits and inner
    hyphens, 1-63 characters each, at most 253 in all.

    A label starting ``xn--`` must be an A-label (RFC 5890 §2.3.2.1): canonical
    Punycode of a valid U-label (RFC 5891 §5.4, RFC 5892, RFC 5893).
    """
    if not text or len(text) > MAX_NAME_LENGTH or not text.isascii():
        return False
    labels = []
    for label in text.split("."):
        decoded = _ascii_label(label)
        if decoded is None:
            return False
        labels.append(decoded)
    return _domain_ok(labels)


def is_idn_hostname(text: str) -> bool:
    """RFC 5890 §2.3.2.3 internationalized host name: labels that are LDH labels,
    A-labels or U-labels (RFC 5891 §5.4: valid code points and contexts, RFC 5892;
    the Bidi rule, RFC 5893), 63 octets at most in A-label form and 253 in all.

    U+3002, U+FF0E and U+FF61 separate labels as ``.`` does (RFC 3490 §3.1).
    """
    # Each label's A-label form is at least as long as the label: a longer text cannot
    # fit, and is refused before any label is looked at.
    if not text or len(text) > MAX_NAME_LENGTH:
        return False
    from . import idna as _idna

    labels = []
    total = -1
    for label in _IDN_DOTS.split(text):
        if label.isascii():
            decoded = _ascii_label(label)
            wire = label
        else:
            decoded = label if _idna.is_u_label(label) else None
            wire = _idna.a_label_of(label) or ""
            if len(wire) > _idna.MAX_LABEL_OCTETS:
                return False
        if decoded is None:
            return False
        labels.append(decoded)
        total += len(wire) + 1
    return total <= MAX_NAME_LENGTH and _domain_ok(labels)


# ------------------------------------------------------------------------- e-mail

_ATEXT: Final = r"A-Za-z0-9!#$%&'*+\-/=?^_`{|}~"
_QTEXT: Final = r"\x20\x21\x23-\x5b\x5d-\x7e"
MAX_LOCAL_PART_OCTETS: Final = 64
"""RFC 5321 §4.5.3.1.1: a local part is at most 64 octets."""
MAX_DOMAIN_OCTETS: Final = 255
"""RFC 5321 §4.5.3.1.2: a domain is at most 255 octets."""


def _mailbox(non_ascii: str) -> Lazy:
    atom = f"[{_ATEXT}{non_ascii}]+"
    quoted = rf'"(?:[{_QTEXT}{non_ascii}]|\\[\x20-\x7e])*"'
    return Lazy(rf"({atom}(?:\.{atom})*|{quoted})@(.+)", re.DOTALL)


_MAILBOX = _mailbox("")
_IDN_MAILBOX = _mailbox("\u0080-\U0010ffff")
_SNUM = Lazy(r"[0-9]{1,3}")


def _snum(text: str) -> bool:
    """RFC 5321 §4.1.3 ``Snum``: one to three digits, 0-255."""
    return _SNUM.fullmatch(text) is not None and int(text) <= 255


def _address_literal(text: str) -> bool:
    """RFC 5321 §4.1.3 ``address-literal``: ``[`` IPv4 or ``IPv6:`` address ``]``.

    The general form (``tag:content``) needs a tag registered with IANA, and none is
    but ``IPv6``, so it is refused.
    """
    body = text[1:-1]
    if body[:5].lower() == "ipv6:":
        return _ipv6(body[5:], 2, _snum)
    return _dotted(body, _snum)


def _email(text: str, pattern: Lazy, domain: Callable[[str], bool]) -> bool:
    if len(text) > MAX_LOCAL_PART_OCTETS + 1 + MAX_DOMAIN_OCTETS:
        return False  # more characters than the two parts may have octets
    match = pattern.fullmatch(text)
    if match is None:
        return False
    local, where = match.groups()
    if len(local.encode("utf-8", "surrogatepass")) > MAX_LOCAL_PART_OCTETS:
        return False
    if where.startswith("[") and where.endswith("]"):
        return _address_literal(where)
    return len(where.encode("utf-8", "surrogatepass")) <= MAX_DOMAIN_OCTETS and domain(where)


def is_email(text: str) -> bool:
    """RFC 5321 §4.1.2 ``Mailbox``: ``Local-part "@" ( Domain / address-literal )``.

    The local part is a dot-string of RFC 5322 ``atext`` or a quoted string; the
    domain is a host name (``is_hostname``).
    """
    return _email(text, _MAILBOX, is_hostname)


def _idn_domain(text: str) -> bool:
    # Only "." separates the labels of a mail domain (RFC 6531 §3.3 sub-domain).
    return len(_IDN_DOTS.findall(text)) == text.count(".") and is_idn_hostname(text)


def is_idn_email(text: str) -> bool:
    """RFC 6531 §3.3 ``Mailbox``: RFC 5321's, with non-ASCII characters allowed in the
    local part (``atext``, ``qtextSMTP``) and U-labels in the domain."""
    return _email(text, _IDN_MAILBOX, _idn_domain)
