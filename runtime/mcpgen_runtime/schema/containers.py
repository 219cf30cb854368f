"""Compiling the container keywords: ``items``, ``prefixItems``, ``contains`` and the
array counts; ``properties``, ``patternProperties``, ``additionalProperties``,
``propertyNames``, ``required``, ``dependent*`` and the object counts; and the
``unevaluated*`` keywords, which read what the in-place applicators evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from itertools import repeat
from typing import Any

from .compiler import CompilerBase, Here
from .errors import MAX_PROBLEMS, SchemaError
from .nodes import (
    Node,
    each,
    evaluated,
    is_valid,
    prefix_paths,
    run_chain,
)
from .regex import EcmaRegex
from .values import (
    Check,
    Err,
    counted,
    json_key,
    name_list,
    short,
)


class ContainerKeywords(CompilerBase):
    """The keywords of arrays and objects, and ``unevaluatedItems``/``unevaluatedProperties``."""

    def array_group(self, here: Here) -> Check:
        schema, where = here.schema, here.where
        min_items = self.count(schema, "minItems", where)
        max_items = self.count(schema, "maxItems", where)
        unique = schema.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise SchemaError(f"{where}/uniqueItems: must be a boolean")
        walk = self.array_items(here)
        contains = self.array_contains(here)

        def arrays(value: Any, errs: list[Err]) -> Any:
            if not isinstance(value, list):
                return value
            size = len(value)
            if min_items is not None and size < min_items:
                errs.append(
                    (
                        (),
                        f"expected at least {counted(min_items, 'item', 'items')}, got {size}",
                        None,
                    )
                )
            if max_items is not None and size > max_items:
                errs.append(((), f"expected at most {max_items} items, got {size}", None))
            final = value if walk is None else walk(value, errs)
            if contains is not None:
                contains(final, errs)
            if unique:
                _check_unique(final, errs)
            return final

        return arrays

    def array_items(self, here: Here) -> Check | None:
        """``prefixItems`` and ``items``: a check of each item (the array, with the
        items it coerced, comes back), or None when neither constrains anything."""
        schema, base, coerce, where = here.schema, here.base, here.coerce, here.where
        prefix: tuple[Check, ...] = ()
        if "prefixItems" in schema:
            prefix = tuple(
                self.sub(s, base, coerce, f"{where}/prefixItems/{i}")
                for i, s in enumerate(self.schema_list(schema, "prefixItems", where))
            )
        items_schema = schema.get("items", True)
        if not isinstance(items_schema, (Mapping, bool)):
            raise SchemaError(f"{where}/items: must be a schema (use prefixItems for tuples)")
        items_false = items_schema is False
        items = (
            None
            if items_schema is True or items_false
            else (self.sub(items_schema, base, coerce, f"{where}/items"))
        )
        here.node.prefix = len(prefix)
        here.node.all_items = "items" in schema
        n_prefix = len(prefix)
        if not n_prefix and not items_false and items is None:
            return None

        def walk(value: list[Any], errs: list[Err]) -> list[Any]:
            size = len(value)
            if n_prefix:
                value = each(value, zip(range(size), prefix, strict=False), errs)
            if items_false:
                if size > n_prefix:
                    errs.append(((), f"expected at most {n_prefix} items, got {size}", None))
            elif items is not None and size > n_prefix:
                value = each(value, zip(range(n_prefix, size), repeat(items)), errs)
            return value

        return walk

    def array_contains(self, here: Here) -> Callable[[list[Any], list[Err]], None] | None:
        """``contains`` with ``minContains``/``maxContains``, or None without it."""
        schema, where = here.schema, here.where
        if "contains" not in schema:
            return None
        # Counting matches must not coerce: which items the caller meant is unknowable.
        contains_node = self.node(schema["contains"], here.base, False, f"{where}/contains")
        contains = self.check_of(contains_node)
        here.node.contains = contains_node
        given_min = self.count(schema, "minContains", where)
        min_contains = 1 if given_min is None else given_min
        max_contains = self.count(schema, "maxContains", where)

        def count_matches(final: list[Any], errs: list[Err]) -> None:
            matches = sum(1 for item in final if is_valid(contains, item))
            if matches < min_contains:
                errs.append(
                    (
                        (),
                        (
                            f"expected at least {counted(min_contains, 'item', 'items')} "
                            f"matching the 'contains' schema, got {matches}"
                        ),
                        None,
                    )
                )
            if max_contains is not None and matches > max_contains:
                errs.append(
                    (
                        (),
                        (
                            f"expected at most {counted(max_contains, 'item', 'items')} "
                            f"matching the 'contains' schema, got {matches}"
                        ),
                        None,
                    )
                )

        return count_matches

    def object_group(self, here: Here, typed: bool) -> Check:
        members = self.object_members(here)
        shape = self.object_shape(here)
        type_message = "expected object, got "

        def objects(value: Any, errs: list[Err]) -> Any:
            if not isinstance(value, dict):
                if typed:
                    errs.append(((), type_message + short(value), "object"))
                return value
            if shape is not None:
                shape(value, errs)
            return value if members is None else members(value, errs)

        return objects

    def object_shape(self, here: Here) -> Callable[[dict[str, Any], list[Err]], None] | None:
        """``propertyNames``, ``required``, the property counts and
        ``dependentRequired``: what an object must look like, whatever its values."""
        schema, where = here.schema, here.where
        names = None
        if "propertyNames" in schema:
            names = self.sub(schema["propertyNames"], here.base, False, f"{where}/propertyNames")
        required = self.string_list(schema.get("required", ()), f"{where}/required")
        required_set = frozenset(required)
        min_props = self.count(schema, "minProperties", where)
        max_props = self.count(schema, "maxProperties", where)
        dep_required: list[tuple[str, tuple[str, ...]]] = []
        if "dependentRequired" in schema:
            for name, needs in self.schema_map(schema, "dependentRequired", where).items():
                dep_required.append((name, self.string_list(needs, f"{where}/dependentRequired")))
        if not (names or required_set or dep_required) and min_props is None and max_props is None:
            return None

        def shape(value: dict[str, Any], errs: list[Err]) -> None:
            if required_set and not value.keys() >= required_set:
                missing = [name for name in required if name not in value]
                if len(missing) == 1:
                    errs.append(((), f"missing required property {short(missing[0])}", None))
                else:
                    errs.append(((), f"missing required properties {name_list(missing)}", None))
            if min_props is not None and len(value) < min_props:
                wanted = counted(min_props, "property", "properties")
                errs.append(((), f"expected at least {wanted}, got {len(value)}", None))
            if max_props is not None and len(value) > max_props:
                wanted = counted(max_props, "property", "properties")
                errs.append(((), f"expected at most {wanted}, got {len(value)}", None))
            for name, needs in dep_required:
                if name in value:
                    absent = [need for need in needs if need not in value]
                    if absent:
                        what = "property" if len(absent) == 1 else "properties"
                        errs.append(
                            (
                                (),
                                f"property {short(name)} requires {what} {name_list(absent)}",
                                None,
                            )
                        )
            if names is not None:
                for name in value:
                    scratch: list[Err] = []
                    names(name, scratch)
                    if scratch:
                        reason = scratch[0][1]
                        errs.append(((), f"invalid property name {short(name)}: {reason}", None))

        return shape

    def object_members(self, here: Here) -> Check | None:
        """``properties``, ``patternProperties`` and ``additionalProperties``: a check
        of each member (the object, with the members it coerced, comes back), or
        None when no member is constrained."""
        schema, base, coerce, where, node = here.parts()
        props: dict[str, Check] = {}
        if "properties" in schema:
            for name, sub in self.schema_map(schema, "properties", where).items():
                props[name] = self.sub(sub, base, coerce, f"{where}/properties/{name}")
        patterns: list[tuple[EcmaRegex, Check]] = []
        if "patternProperties" in schema:
            for source, sub in self.schema_map(schema, "patternProperties", where).items():
                regex = self.regex(source, f"{where}/patternProperties")
                patterns.append((regex, self.sub(sub, base, coerce, f"{where}/patternProperties")))
        additional_schema = schema.get("additionalProperties", True)
        forbid = additional_schema is False
        additional = None
        if not forbid and additional_schema is not True:
            additional = self.sub(additional_schema, base, coerce, f"{where}/additionalProperties")
        node.props = frozenset(props)
        node.patterns = tuple(regex for regex, _ in patterns)
        node.all_props = "additionalProperties" in schema
        if not (props or patterns or forbid or additional is not None):
            return None
        props_get = props.get
        matching = _matching(props, patterns, additional, coerce) if patterns else None

        def members(value: dict[str, Any], errs: list[Err]) -> dict[str, Any]:
            # nodes._each with the lookup of each member's check inlined: the hottest
            # loop of the validator (every object of every call), so written out here
            out: dict[str, Any] | None = None
            extras: list[str] = []
            for name, item in value.items():
                check = props_get(name, additional) if matching is None else matching(name)
                if check is None:
                    if forbid:
                        extras.append(name)
                    continue
                start = len(errs)
                result = check(item, errs)
                if len(errs) != start:
                    prefix_paths(errs, start, name)
                    if len(errs) >= MAX_PROBLEMS:
                        break
                if result is not item:
                    if out is None:
                        out = dict(value)
                    out[name] = result
            if extras:
                errs.append(((), _unexpected(extras, True), None))
            return value if out is None else out

        return members

    def unevaluated(self, here: Here) -> list[Check]:
        result: list[Check] = []
        schema = here.schema
        if "unevaluatedProperties" not in schema and "unevaluatedItems" not in schema:
            return result
        # Which branches were valid is judged without coercion, on the final value.
        plain = self.node(schema, here.base, False, here.where) if here.coerce else here.node
        if "unevaluatedProperties" in schema:
            here.node.uneval_props = True
            result.append(self.uneval(here, plain, True))
        if "unevaluatedItems" in schema:
            here.node.uneval_items = True
            result.append(self.uneval(here, plain, False))
        return result

    def uneval(self, here: Here, plain: Node, props: bool) -> Check:
        """``unevaluatedProperties`` (``props``) or ``unevaluatedItems``: the members
        that ``plain`` (the schema, judged without coercion) did not evaluate."""
        keyword = "unevaluatedProperties" if props else "unevaluatedItems"
        sub = here.schema[keyword]
        check = None if sub is False else self.sub(sub, here.base, here.coerce, here.at(keyword))
        kind = dict if props else list

        def unevaluated(value: Any, errs: list[Err]) -> Any:
            if not isinstance(value, kind):
                return value
            seen: set[Any] = set()
            if evaluated(plain, value, seen, True, props):
                return value
            rest = [key for key in (value if props else range(len(value))) if key not in seen]
            if not rest:
                return value
            if check is None:
                errs.append(((), _unexpected(rest, props), None))
                return value
            return each(value, zip(rest, repeat(check)), errs)

        return unevaluated


def _unexpected(keys: list[Any], props: bool) -> str:
    """The message for members no schema allows: property names, or item indices."""
    if props:
        if len(keys) == 1:
            return f"unexpected property {short(keys[0])}"
        return f"unexpected properties {name_list(keys)}"
    shown = ", ".join(str(i) for i in keys[:10]) + (", …" if len(keys) > 10 else "")
    return f"unexpected {'item' if len(keys) == 1 else 'items'} at index {shown}"


def _check_unique(final: list[Any], errs: list[Err]) -> None:
    first: dict[Any, int] = {}
    for index, item in enumerate(final):
        earlier = first.setdefault(json_key(item), index)
        if earlier != index:
            errs.append(
                ((), f"expected unique items, but items {earlier} and {index} are equal", None)
            )
            break


def _matching(
    props: Mapping[str, Check],
    patterns: list[tuple[EcmaRegex, Check]],
    additional: Check | None,
    coerce: bool,
) -> Callable[[str], Check | None]:
    """With ``patternProperties``: the check of a member by its name (its own, then
    each matching pattern's, in a chain; ``additionalProperties`` when none), or None."""
    props_get = props.get

    def matching(name: str) -> Check | None:
        found = [check for regex, check in patterns if regex.search(name)]
        own = props_get(name)
        if own is not None:
            found.insert(0, own)
        elif not found:
            return additional
        if len(found) == 1:
            return found[0]
        return partial(run_chain, found, (), rerun=coerce)

    return matching
