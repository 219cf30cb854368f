"""The schema half of the compatibility rules: how an input or output schema changed,
from the caller's point of view (an input that admits less breaks callers, an output
that admits more breaks consumers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..protocol.param_headers import HEADER_KEY
from ..protocol.pointer import MISSING
from .patterns import pattern_rel
from .rules import Out
from .shapes import (
    ALL_TYPES,
    ANALYSED,
    IGNORED,
    MAX_PATH_DEPTH,
    UNANALYSED,
    VALIDATION,
    Rel,
    as_fraction,
    bound_of,
    bound_rel,
    canon,
    child_path,
    count_rel,
    declared_ok,
    differs,
    effective_types,
    enum_values,
    fmt,
    mapping,
    multiple_rel,
    normalize,
    presence_rel,
    same,
    show_bound,
    slot,
    sub,
)

# How often one pair of schemas reached through a ``$ref`` is compared, at as many
# different paths, before later visits are skipped. A definition used in a few places is
# reported at each of them; a recursive one (``items`` and ``additionalProperties`` both
# pointing back at the root, say) can be reached along exponentially many paths, and the
# changes it yields are the same rules at every one of them, so the walk stops there.
MAX_VISITS_PER_PAIR: Final = 8

_Key = tuple[bytes, bytes]


class SchemaDiff:
    """Compares one inputSchema or outputSchema pair, emitting side-specific rules.

    The walk is bounded however the schemas refer to themselves: a pair compared
    through a reference is keyed by the content of both sides (the roots are fixed, so
    equal content means the same comparison), never entered twice along one path (a
    cycle) and entered at most ``MAX_VISITS_PER_PAIR`` times in all.
    """

    def __init__(self, out: Out, output: bool, old_root: Any, new_root: Any) -> None:
        self.out = out
        self.output = output
        self.old_root = old_root
        self.new_root = new_root
        self.visits: dict[_Key, int] = {}

    def who(self, subject: str) -> str:
        if not subject:
            return "output schema" if self.output else "input schema"
        return f"output field {subject!r}" if self.output else f"parameter {subject!r}"

    def relation(self, rel: Rel, path: str, subject: str, what: str, kind: str) -> None:
        """Emit a type/constraint change: ``kind`` is "type" or "constraint"."""
        if rel is Rel.EQUAL:
            return
        if kind == "type":
            if self.output:
                narrowed = rel is Rel.NARROWER
                rule = "OUTPUT_FIELD_TYPE_NARROWED" if narrowed else "OUTPUT_FIELD_TYPE_CHANGED"
            else:
                rule = {
                    Rel.NARROWER: "PARAM_TYPE_NARROWED",
                    Rel.WIDER: "PARAM_TYPE_WIDENED",
                    Rel.INCOMPARABLE: "PARAM_TYPE_CHANGED",
                }[rel]
        elif self.output:
            narrowed = rel is Rel.NARROWER
            rule = "OUTPUT_CONSTRAINT_TIGHTENED" if narrowed else "OUTPUT_CONSTRAINT_LOOSENED"
        else:
            widened = rel is Rel.WIDER
            rule = "PARAM_CONSTRAINT_LOOSENED" if widened else "PARAM_CONSTRAINT_TIGHTENED"
        self.out.add(rule, path, f"{self.who(subject)}: {what}")

    def keyword_changed(self, path: str, subject: str, keyword: str) -> None:
        rule = "OUTPUT_KEYWORD_CHANGED" if self.output else "PARAM_KEYWORD_CHANGED"
        self.out.add(
            rule,
            child_path(path, keyword),
            f"{self.who(subject)}: {keyword!r} changed (not analysed; assumed breaking)",
        )

    def header_changed(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, who: str
    ) -> None:
        """x-mcp-header: a client that does not send the header a 2026-07-28 HTTP server
        now expects is refused; a header the server no longer declares is ignored."""
        before, after = old.get(HEADER_KEY), new.get(HEADER_KEY)
        where = child_path(path, HEADER_KEY)
        if after is None:
            self.out.add("PARAM_HEADER_REMOVED", where, f"{who}: no longer sent as a header")
        else:
            was = "" if before is None else f" (was Mcp-Param-{before})"
            self.out.add("PARAM_HEADER_ADDED", where, f"{who}: sent as Mcp-Param-{after}{was}")

    # -- entry point

    def compare(
        self,
        old_raw: Any,
        new_raw: Any,
        path: str,
        subject: str,
        stack: frozenset[_Key] = frozenset(),
        top: bool = False,
    ) -> None:
        if path.count(".") > MAX_PATH_DEPTH:
            return  # absurdly deep schemas: the section's EQUIVALENT_FORM net still fires
        old, old_chain = normalize(old_raw, self.old_root)
        new, new_chain = normalize(new_raw, self.new_root)
        if old_chain or new_chain:
            key = (canon(old_raw), canon(new_raw))
            visits = self.visits.get(key, 0)
            if key in stack or visits >= MAX_VISITS_PER_PAIR:
                return
            self.visits[key] = visits + 1
            stack = stack | {key}
        if self.compare_one_to_union(old, new, path, subject):
            self.compare_rest(old, new, path, subject)
            return
        self.compare_types(old, new, path, subject)
        self.compare_enums(old, new, path, subject)
        self.compare_constraints(old, new, path, subject)
        self.compare_object(old, new, path, subject, stack, top)
        self.compare_slot(old, new, "items", path, subject, stack)
        self.compare_unions(old, new, path, subject, stack)
        self.compare_rest(old, new, path, subject)

    # -- aspects

    def compare_types(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        declared_same = not differs(old, new, "type")
        if not declared_same and not (declared_ok(old) and declared_ok(new)):
            self.keyword_changed(path, subject, "type")
            return
        if declared_same and enum_values(old) is not None and enum_values(new) is not None:
            return  # the value sets decide; compare_enums reports them
        old_types, new_types = effective_types(old), effective_types(new)
        if old_types == new_types:
            return
        if new_types < old_types:
            rel = Rel.NARROWER
        elif new_types > old_types:
            rel = Rel.WIDER
        else:
            rel = Rel.INCOMPARABLE

        def show(types: frozenset[str]) -> str:
            if types == ALL_TYPES:
                return "any"
            shown = types - {"integer"} if "number" in types else types
            return "|".join(sorted(shown)) or "nothing"

        type_path = child_path(path, "type") if "type" in old or "type" in new else path
        what = f"type {show(old_types)} -> {show(new_types)}"
        self.relation(rel, type_path, subject, what, "type")

    def compare_enums(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        if "enum" in old and "enum" in new and same(old["enum"], new["enum"]):
            return
        if ("enum" in old and not isinstance(old["enum"], list)) or (
            "enum" in new and not isinstance(new["enum"], list)
        ):
            self.keyword_changed(path, subject, "enum")
            return
        old_values, new_values = old.get("enum"), new.get("enum")
        if old_values is None and new_values is None:
            return
        enum_path = child_path(path, "enum")
        who = self.who(subject)
        narrowed_rule = "OUTPUT_ENUM_VALUE_REMOVED" if self.output else "PARAM_ENUM_VALUE_REMOVED"
        widened_rule = "OUTPUT_ENUM_VALUE_ADDED" if self.output else "PARAM_ENUM_VALUE_ADDED"
        if old_values is None:
            self.out.add(narrowed_rule, enum_path, f"{who}: enum {fmt(new_values)} added")
            return
        if new_values is None:
            self.out.add(widened_rule, enum_path, f"{who}: enum restriction removed")
            return
        old_keys = {canon(v): v for v in old_values}
        new_keys = {canon(v): v for v in new_values}
        removed = [old_keys[k] for k in sorted(old_keys.keys() - new_keys.keys())]
        added = [new_keys[k] for k in sorted(new_keys.keys() - old_keys.keys())]
        if removed:
            shown = ", ".join(fmt(v) for v in removed)
            self.out.add(narrowed_rule, enum_path, f"{who}: enum value(s) {shown} removed")
        if added:
            shown = ", ".join(fmt(v) for v in added)
            self.out.add(widened_rule, enum_path, f"{who}: enum value(s) {shown} added")

    def compare_constraints(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        self.compare_bounds(old, new, path, subject)
        self.compare_counts(old, new, path, subject)
        self.compare_value_rules(old, new, path, subject)

    def compare_bounds(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        """The numeric bounds (``minimum``/``exclusiveMinimum`` and the maximums)."""
        for lower in (True, False):
            keywords = ("minimum", "exclusiveMinimum") if lower else ("maximum", "exclusiveMaximum")
            if not any(differs(old, new, kw) for kw in keywords):
                continue
            junk = [
                kw
                for kw in keywords
                for side in (old, new)
                if kw in side
                and as_fraction(side[kw]) is None
                and not (kw.startswith("exclusive") and isinstance(side[kw], bool))
            ]
            if junk:
                self.keyword_changed(path, subject, junk[0])
                continue
            old_bound, new_bound = bound_of(old, lower), bound_of(new, lower)
            rel = bound_rel(old_bound, new_bound, lower)
            setter = new_bound or old_bound
            kw_path = child_path(path, setter[2] if setter else keywords[0])
            name = "lower bound" if lower else "upper bound"
            what = f"{name} {show_bound(old_bound, lower)} -> {show_bound(new_bound, lower)}"
            self.relation(rel, kw_path, subject, what, "constraint")

    def compare_counts(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        """The length, item and property counts."""
        for keyword, lower in (
            ("minLength", True), ("maxLength", False), ("minItems", True), ("maxItems", False),
            ("minProperties", True), ("maxProperties", False),
        ):  # fmt: skip
            if not differs(old, new, keyword):
                continue
            old_n, new_n = as_fraction(old.get(keyword)), as_fraction(new.get(keyword))
            if (keyword in old and old_n is None) or (keyword in new and new_n is None):
                self.keyword_changed(path, subject, keyword)
                continue
            rel = count_rel(old_n, new_n, lower)
            what = f"{keyword} {fmt(old.get(keyword, MISSING))} -> "
            what += fmt(new.get(keyword, MISSING))
            self.relation(rel, child_path(path, keyword), subject, what, "constraint")

    def compare_value_rules(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        """``multipleOf``, ``pattern``, ``format``, ``const`` and ``uniqueItems``."""
        if differs(old, new, "multipleOf"):
            old_m, new_m = as_fraction(old.get("multipleOf")), as_fraction(new.get("multipleOf"))
            valid = [
                number is not None and number > 0
                for side, number in ((old, old_m), (new, new_m))
                if "multipleOf" in side
            ]
            if not all(valid):
                self.keyword_changed(path, subject, "multipleOf")
            else:
                what = f"multipleOf {fmt(old.get('multipleOf', MISSING))} -> "
                what += fmt(new.get("multipleOf", MISSING))
                rel = multiple_rel(old_m, new_m)
                self.relation(rel, child_path(path, "multipleOf"), subject, what, "constraint")
        for keyword in ("pattern", "format", "const"):
            if not differs(old, new, keyword):
                continue
            old_v, new_v = old.get(keyword, MISSING), new.get(keyword, MISSING)
            rel = presence_rel(old_v, new_v)
            if keyword == "pattern" and isinstance(old_v, str) and isinstance(new_v, str):
                rel = pattern_rel(old_v, new_v)  # a class, a bound or an alternative widened
            if old_v is MISSING:
                what = f"{keyword} {fmt(new_v)} added"
            elif new_v is MISSING:
                what = f"{keyword} {fmt(old_v)} removed"
            else:
                what = f"{keyword} {fmt(old_v)} -> {fmt(new_v)}"
            self.relation(rel, child_path(path, keyword), subject, what, "constraint")
        if differs(old, new, "uniqueItems"):
            old_u, new_u = old.get("uniqueItems") is True, new.get("uniqueItems") is True
            if old_u != new_u:
                rel = Rel.NARROWER if new_u else Rel.WIDER
                what = "uniqueItems required" if new_u else "uniqueItems no longer required"
                self.relation(rel, child_path(path, "uniqueItems"), subject, what, "constraint")

    def compare_object(
        self,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        path: str,
        subject: str,
        stack: frozenset[_Key],
        top: bool,
    ) -> None:
        old_props, new_props = mapping(old.get("properties")), mapping(new.get("properties"))
        old_req, new_req = _required(old), _required(new)
        old_names = list(old_props) + [n for n in old_req if n not in old_props]
        new_names = list(new_props) + [n for n in new_req if n not in new_props]
        self.compare_slot(old, new, "additionalProperties", path, subject, stack)
        if not old_names and not new_names:
            return
        props_path = child_path(path, "properties")
        removed = [n for n in old_names if n not in new_names]
        added = [n for n in new_names if n not in old_names]
        renamed: dict[str, str] = {}
        if not self.output and len(removed) == 1 and len(added) == 1:
            before, after = removed[0], added[0]
            if (
                before in old_props
                and after in new_props
                and list(old_props).index(before) == list(new_props).index(after)
                and (before in old_req) == (after in new_req)
                and same(old_props[before], new_props[after])
            ):
                renamed[before] = after
                who = self.who(sub(subject, before))
                self.out.add(
                    "PARAM_RENAMED", child_path(props_path, before), f"{who} renamed to {after!r}"
                )
        closed_new = new.get("additionalProperties") is False
        for name in removed:
            if name not in renamed:
                self.member_removed(name, props_path, subject, closed_new)
        closed_old = old.get("additionalProperties") is False
        for name in added:
            if name not in renamed.values():
                self.member_added(name, props_path, subject, closed_old, name in new_req)
        for name in old_names:
            if name not in new_names:
                continue
            child, child_subject = child_path(props_path, name), sub(subject, name)
            was, now = name in old_req, name in new_req
            if was != now:
                who = self.who(child_subject)
                if self.output:
                    rule = "OUTPUT_FIELD_MADE_REQUIRED" if now else "OUTPUT_FIELD_MADE_OPTIONAL"
                else:
                    rule = "PARAM_MADE_REQUIRED" if now else "PARAM_MADE_OPTIONAL"
                self.out.add(rule, child, f"{who} became {'required' if now else 'optional'}")
            self.compare(
                old_props.get(name, {}), new_props.get(name, {}), child, child_subject, stack
            )
        if top and not self.output:
            self.compare_order(list(old_props), list(new_props), renamed, props_path)

    def member_removed(self, name: str, props_path: str, subject: str, closed_new: bool) -> None:
        who = self.who(sub(subject, name))
        if self.output:
            message = f"{who} was removed"
            self.out.add("OUTPUT_FIELD_REMOVED", child_path(props_path, name), message)
        else:
            effect = "is rejected" if closed_new else "is ignored by the server"
            message = f"{who} was removed; a call that sends it {effect}"
            self.out.add("PARAM_REMOVED", child_path(props_path, name), message)

    def member_added(
        self, name: str, props_path: str, subject: str, closed_old: bool, required: bool
    ) -> None:
        who = self.who(sub(subject, name))
        child = child_path(props_path, name)
        if self.output:
            if closed_old:
                message = f"new {who} in an object that forbade additional properties"
                self.out.add("OUTPUT_CONSTRAINT_LOOSENED", child, message)
            else:
                self.out.add("OUTPUT_FIELD_ADDED", child, f"new {who}")
        elif required:
            self.out.add("PARAM_REQUIRED_ADDED", child, f"new required {who}")
        else:
            self.out.add("PARAM_OPTIONAL_ADDED", child, f"new optional {who}")

    def compare_order(
        self, old_order: list[str], new_order: list[str], renamed: Mapping[str, str], path: str
    ) -> None:
        mapped = [renamed.get(name, name) for name in old_order]
        common_old = [name for name in mapped if name in new_order]
        common_new = [name for name in new_order if name in mapped]
        if common_old != common_new:
            message = "parameter order changed: " + ", ".join(common_old)
            message += " -> " + ", ".join(common_new)
            self.out.add("PARAM_ORDER_CHANGED", path, message)
            return
        if not common_new:
            return
        last = new_order.index(common_new[-1])
        inserted = [name for name in new_order[:last] if name not in mapped]
        if inserted:
            shown = ", ".join(repr(name) for name in inserted)
            message = f"parameter(s) {shown} inserted before existing ones; positions shift"
            self.out.add("PARAM_ORDER_CHANGED", path, message)

    def compare_slot(
        self,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        keyword: str,
        path: str,
        subject: str,
        stack: frozenset[_Key],
    ) -> None:
        """``items`` or ``additionalProperties``: closed (false), open, or a schema."""
        if keyword not in old and keyword not in new:
            return
        old_value, new_value = old.get(keyword), new.get(keyword)
        if isinstance(old_value, list) or isinstance(new_value, list):  # tuple-form items
            if not same(old_value, new_value):
                self.keyword_changed(path, subject, keyword)
            return
        old_slot, new_slot = slot(old_value), slot(new_value)
        slot_path = child_path(path, keyword)
        if old_slot is False or new_slot is False:
            if old_slot is new_slot:
                return
            rel = Rel.NARROWER if new_slot is False else Rel.WIDER
            closed = "closed" if new_slot is False else "opened"
            self.relation(rel, slot_path, subject, f"{keyword} {closed}", "constraint")
            return
        suffix = "[]" if keyword == "items" else "*"
        child_subject = subject + suffix if keyword == "items" else sub(subject, suffix)
        self.compare(old_slot, new_slot, slot_path, child_subject, stack)

    def compare_unions(
        self,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        path: str,
        subject: str,
        stack: frozenset[_Key],
    ) -> None:
        for keyword in ("anyOf", "oneOf", "allOf"):
            old_alts, new_alts = old.get(keyword, MISSING), new.get(keyword, MISSING)
            if not isinstance(old_alts, list) or not isinstance(new_alts, list):
                if not same(old_alts, new_alts):
                    self.keyword_changed(path, subject, keyword)
                continue
            if len(old_alts) == len(new_alts):
                for index, (old_alt, new_alt) in enumerate(zip(old_alts, new_alts, strict=True)):
                    alt_path = f"{child_path(path, keyword)}[{index}]"
                    self.compare(old_alt, new_alt, alt_path, subject, stack)
                continue
            if keyword == "allOf":
                self.keyword_changed(path, subject, keyword)
                continue
            old_keys = {canon(alt) for alt in old_alts}
            new_keys = {canon(alt) for alt in new_alts}
            gone, came = len(old_keys - new_keys), len(new_keys - old_keys)
            if gone and came:
                rel = Rel.INCOMPARABLE
            elif gone:
                rel = Rel.NARROWER
            elif came:
                rel = Rel.WIDER
            else:
                rel = Rel.EQUAL
            what = f"{keyword}: {gone} alternative(s) removed, {came} added"
            self.relation(rel, child_path(path, keyword), subject, what, "type")

    def compare_one_to_union(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> bool:
        """One schema on one side, an ``anyOf``/``oneOf`` (and nothing else that
        validates) on the other: compared as a set of one alternative against the
        union's, as one change. True when it applied."""
        for keyword in ("anyOf", "oneOf"):
            old_union, new_union = (
                isinstance(old.get(keyword), list),
                isinstance(new.get(keyword), list),
            )
            if old_union == new_union:
                continue
            union, single = (new, old) if new_union else (old, new)
            union_root = self.new_root if new_union else self.old_root
            alternatives = union[keyword]
            if (
                not alternatives
                or (union.keys() - {keyword}) & VALIDATION
                or single.keys() & {"anyOf", "oneOf", "allOf"}
            ):
                return False
            mine = _bare(single)
            inside = any(same(mine, _bare(normalize(alt, union_root)[0])) for alt in alternatives)
            others = len(alternatives) - 1 if inside else len(alternatives)
            if not inside:
                rel = Rel.INCOMPARABLE
                what = f"a single schema -> {keyword} of {others} alternative(s)"
                if not new_union:
                    what = f"{keyword} of {others} alternative(s) -> a single schema"
            elif new_union:
                rel = Rel.WIDER
                what = f"{keyword}: {others} alternative(s) added beside the old schema"
            else:
                rel = Rel.NARROWER
                what = f"{keyword}: {others} alternative(s) removed, one kept"
            self.relation(rel, child_path(path, keyword), subject, what, "type")
            return True
        return False

    def compare_rest(
        self, old: Mapping[str, Any], new: Mapping[str, Any], path: str, subject: str
    ) -> None:
        who = self.who(subject)
        if differs(old, new, "default"):
            if self.output:
                self.out.add(
                    "SCHEMA_ANNOTATION_CHANGED",
                    child_path(path, "default"),
                    f"{who}: default changed",
                )
            else:
                what = f"{who}: default {fmt(old.get('default', MISSING))} -> "
                what += fmt(new.get("default", MISSING))
                self.out.add("PARAM_DEFAULT_CHANGED", child_path(path, "default"), what)
        if differs(old, new, "description"):
            rule = "SCHEMA_ANNOTATION_CHANGED" if self.output else "PARAM_DESCRIPTION_CHANGED"
            self.out.add(rule, child_path(path, "description"), f"{who}: description changed")
        for keyword in sorted((old.keys() | new.keys()) - ANALYSED - IGNORED):
            if not differs(old, new, keyword):
                continue
            if keyword == HEADER_KEY and not self.output:
                self.header_changed(old, new, path, who)
                continue
            if keyword in UNANALYSED:
                self.keyword_changed(path, subject, keyword)
            else:
                self.out.add(
                    "SCHEMA_ANNOTATION_CHANGED",
                    child_path(path, keyword),
                    f"{who}: annotation {keyword!r} changed",
                )


def _bare(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A schema's validation keywords only (no description, title, default…)."""
    return {key: value for key, value in schema.items() if key in VALIDATION}


def _required(schema: Mapping[str, Any]) -> list[str]:
    names = schema.get("required")
    if not isinstance(names, list):
        return []
    return list(dict.fromkeys(name for name in names if isinstance(name, str)))
