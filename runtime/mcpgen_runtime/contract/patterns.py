"""Which of two ``pattern`` regexes admits more: a structural containment check.

Deciding whether one regular expression's language contains another's is hard in
general; the changes people make to a ``pattern`` are not: a character class gains
characters (``[a-z]`` → ``[a-zA-Z]``), a repeat's bounds move (``{1,10}`` →
``{1,20}``), an alternative is added (``(a|b)`` → ``(a|b|c)``), an anchor is dropped.
:func:`pattern_rel` parses both patterns with Python's own regex parser and walks the
two trees side by side: NEW admits everything OLD does when every node of OLD sits
inside the matching node of NEW.  The check is sound (it never says "wider" for a
pattern that rejects a value the old one accepted) and incomplete: anything it cannot
follow (lookarounds, back references, flags that differ, an unparsable pattern) makes
the two incomparable, which the rules treat as breaking.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Final

from .shapes import Rel

__all__ = ["pattern_rel"]

_MAX_NODES: Final = 2_000  # past this many nodes a pattern is not analysed
_MAX_RANGE: Final = 512  # a class range wider than this is compared by its ends only


def _parser() -> Any:
    try:
        return importlib.import_module("re._parser")
    except ImportError:  # pragma: no cover - Python < 3.11 named it sre_parse
        return importlib.import_module("sre_parse")


def _parse(pattern: str) -> tuple[list[Any], int] | None:
    """The parsed node list of ``pattern`` and its global flags, or None."""
    if len(pattern) > _MAX_NODES:
        return None
    try:
        parsed = _parser().parse(pattern)
    except Exception:  # noqa: BLE001 - any pattern Python cannot parse is not analysed
        return None
    return list(parsed.data), int(parsed.state.flags)


def pattern_rel(old: str, new: str) -> Rel:
    """How the strings ``new`` admits compare with those ``old`` admits."""
    if old == new:
        return Rel.EQUAL
    old_tree, new_tree = _parse(old), _parse(new)
    if old_tree is None or new_tree is None or old_tree[1] != new_tree[1]:
        return Rel.INCOMPARABLE
    wider = _contains(new_tree[0], old_tree[0])
    narrower = _contains(old_tree[0], new_tree[0])
    if wider and narrower:
        return Rel.EQUAL
    if wider:
        return Rel.WIDER
    return Rel.NARROWER if narrower else Rel.INCOMPARABLE


def _name(node: Any) -> str:
    return str(node[0]).upper()


def _contains(big: list[Any], small: list[Any]) -> bool:
    """Does the search pattern ``big`` match every string ``small`` matches? An anchor
    ``small`` has at either end and ``big`` lacks may be dropped (a search finds it)."""
    small = list(small)
    if (
        small
        and _is_anchor(small[0], "AT_BEGINNING")
        and not (big and _is_anchor(big[0], "AT_BEGINNING"))
    ):
        small = small[1:]
    if small and _is_anchor(small[-1], "AT_END") and not (big and _is_anchor(big[-1], "AT_END")):
        small = small[:-1]
    try:
        return _seq(big, small, [0])
    except RecursionError:  # pragma: no cover - depth is bounded by the node budget
        return False


def _is_anchor(node: Any, where: str) -> bool:
    return _name(node) == "AT" and str(node[1]).upper() == where


def _seq(big: Sequence[Any], small: Sequence[Any], budget: list[int]) -> bool:
    if len(big) != len(small):
        return False
    return all(_node(b, s, budget) for b, s in zip(big, small, strict=True))


def _node(big: Any, small: Any, budget: list[int]) -> bool:
    budget[0] += 1
    if budget[0] > _MAX_NODES:
        return False
    kind_big, kind_small = _name(big), _name(small)
    if kind_big == "SUBPATTERN" and big[1][1] == 0 and big[1][2] == 0:
        return _seq(list(big[1][3]), [small], budget) or (
            kind_small == "SUBPATTERN" and _node_pair(big, small, budget)
        )
    if kind_small == "SUBPATTERN" and small[1][1] == 0 and small[1][2] == 0:
        return _seq([big], list(small[1][3]), budget)
    return _node_pair(big, small, budget)


def _node_pair(big: Any, small: Any, budget: list[int]) -> bool:
    kind_big, kind_small = _name(big), _name(small)
    if kind_big == "BRANCH":
        alternatives = [list(alt) for alt in big[1][1]]
        if kind_small == "BRANCH":
            return all(
                any(_seq(alt, list(mine), budget) for alt in alternatives) for mine in small[1][1]
            )
        return any(_seq(alt, [small], budget) for alt in alternatives)
    if kind_big in ("MAX_REPEAT", "MIN_REPEAT") and kind_small in ("MAX_REPEAT", "MIN_REPEAT"):
        (big_lo, big_hi, big_sub), (small_lo, small_hi, small_sub) = big[1], small[1]
        return (
            big_lo <= small_lo
            and big_hi >= small_hi
            and _seq(list(big_sub), list(small_sub), budget)
        )
    if kind_big == "SUBPATTERN" and kind_small == "SUBPATTERN":
        same_flags = big[1][1:3] == small[1][1:3]
        return same_flags and _seq(list(big[1][3]), list(small[1][3]), budget)
    if kind_big in _ONE_CHAR and kind_small in _ONE_CHAR:
        return _chars(big, small)
    return kind_big in ("AT",) and big == small


_ONE_CHAR: Final = ("LITERAL", "NOT_LITERAL", "IN", "ANY")


def _class(node: Any) -> tuple[bool, list[Any]]:
    """A one-character node as (negated, its literal/range/category items)."""
    kind = _name(node)
    if kind in ("LITERAL", "NOT_LITERAL"):
        return kind == "NOT_LITERAL", [("LITERAL", node[1])]
    items = list(node[1])
    if items and _name(items[0]) == "NEGATE":
        return True, items[1:]
    return False, items


def _chars(big: Any, small: Any) -> bool:
    """Does the one-character node ``big`` match every character ``small`` does?"""
    if _name(small) == "ANY":
        return _name(big) == "ANY"
    small_negated, small_items = _class(small)
    if _name(big) == "ANY":  # any character but a newline
        spans = _spans(small_items)
        return (
            not small_negated
            and spans is not None
            and not any(low <= 10 <= high for low, high in spans)
        )
    big_negated, big_items = _class(big)
    if big_negated != small_negated:
        return False
    if big_negated:  # [^ab] holds every character [^abc] holds
        big_items, small_items = small_items, big_items
    categories = {str(item[1]) for item in big_items if _name(item) == "CATEGORY"}
    wanted = [item for item in small_items if _name(item) == "CATEGORY"]
    if any(str(item[1]) not in categories for item in wanted):
        return False
    small_spans = _spans([item for item in small_items if _name(item) != "CATEGORY"])
    big_spans = _spans([item for item in big_items if _name(item) != "CATEGORY"])
    if small_spans is None or big_spans is None:
        return False
    return all(_covered(span, big_spans) for span in small_spans)


def _spans(items: Sequence[Any]) -> list[tuple[int, int]] | None:
    """The code point ranges of literal and range items; None for anything else."""
    spans = []
    for item in items:
        kind = _name(item)
        if kind == "LITERAL":
            spans.append((int(item[1]), int(item[1])))
        elif kind == "RANGE":
            spans.append((int(item[1][0]), int(item[1][1])))
        else:
            return None
    return spans


def _covered(span: tuple[int, int], spans: Sequence[tuple[int, int]]) -> bool:
    low, high = span
    if any(a <= low and high <= b for a, b in spans):
        return True
    if high - low > _MAX_RANGE:
        return False
    return all(any(a <= point <= b for a, b in spans) for point in range(low, high + 1))
