"""Older JSON Schema drafts, rewritten to 2020-12 before anything else reads a schema.

mcpgen checks, validates and publishes 2020-12 (MCP's dialect for tool schemas). A
schema that declares an earlier draft with ``$schema`` (draft-04, -06, -07, 2019-09)
and uses what that draft reads otherwise is rewritten to the 2020-12 schema that
means the same, and published as 2020-12 (its ``$schema`` says so): the server, the
client and every peer reading the published schema then apply one set of rules,
never the declared draft's on one side and 2020-12's on the other. A schema that
means the same in both keeps its ``$schema`` (an imported server re-lists exactly
what it listed); the runtime validator then asserts only the formats that draft
defines (draft-07 has no ``uuid`` or ``duration``).

| declared draft | written | rewritten to |
|---|---|---|
| 04 to 2019-09 | ``items: [A, B]`` (+ ``additionalItems: C``) | ``prefixItems: [A, B]`` (+ ``items: C``) |
| 04 to 2019-09 | ``additionalItems`` beside a schema ``items`` | dropped (it applies to nothing) |
| 04 to 07 | ``$ref`` with keywords beside it | the ``$ref`` alone (those drafts ignore the rest; each dropped keyword is a warning), definitions and annotations kept |
| 04 to 07 | ``dependencies`` | ``dependentRequired`` (lists) and ``dependentSchemas`` (schemas) |
| 04 | ``exclusiveMaximum: true`` beside ``maximum: M`` | ``exclusiveMaximum: M`` (the same for minimum) |
| 04 | ``id: URI`` | ``$id: URI`` |
| 04 | ``id: "#name"`` | ``$anchor: name`` (draft-04 declared a plain-name anchor this way) |
| 06, 07 | ``$id: "#name"`` | ``$anchor: name`` (so did 06 and 07; 2020-12 forbids a fragment in ``$id``) |

``definitions`` needs no rewriting: references into it are JSON pointers, which
resolve the same in 2020-12. A schema without ``$schema`` is 2020-12; only the
array form of ``items`` (which 2020-12 cannot mean) is rewritten there too.
"""

from __future__ import annotations

from typing import Any

from ..keywords import JsonPath, child_schemas

__all__ = ["DRAFT_2020_12", "Note", "declared_draft", "upgrade_schema"]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_DRAFTS = {
    "json-schema.org/draft-04/schema": 4,
    "json-schema.org/draft-06/schema": 6,
    "json-schema.org/draft-07/schema": 7,
    "json-schema.org/draft/2019-09/schema": 2019,
    "json-schema.org/draft/2020-12/schema": 2020,
}
# What stays beside a `$ref` in drafts 04-07 (which ignore every sibling): places
# other references point into, and annotations a reader wants to see.
_KEPT_BESIDE_REF = frozenset(
    {"$ref", "$schema", "definitions", "$defs", "title", "description", "$comment"}
)

Note = tuple[JsonPath, str]  # a warning: where, what was done


def declared_draft(uri: Any) -> int | None:
    """The draft a ``$schema`` value names (4, 6, 7, 2019, 2020), None when unknown."""
    if not isinstance(uri, str):
        return None
    bare = uri.split("://", 1)[-1].rstrip("#").rstrip("/")
    return _DRAFTS.get(bare)


def upgrade_schema(schema: Any, path: JsonPath, draft: int = 2020) -> list[Note]:
    """Rewrite ``schema`` (found at ``path``) in place to 2020-12; ``draft`` is the
    one in force where it sits (a ``$schema`` inside changes it). Returns warnings."""
    notes: list[Note] = []
    _upgrade(schema, path, draft, notes)
    return notes


def _upgrade(node: Any, path: JsonPath, draft: int, notes: list[Note]) -> bool:
    """Rewrite ``node``'s subtree; was anything changed (that a ``$schema`` inside did
    not account for)?"""
    if not isinstance(node, dict):
        return False
    declared = declared_draft(node.get("$schema"))
    draft = declared if declared is not None else draft
    changed = False
    if draft <= 7 and isinstance(node.get("$ref"), str):
        for key in [k for k in node if k not in _KEPT_BESIDE_REF and not k.startswith("x-")]:
            message = (
                f"'{key}' beside $ref is ignored by draft {_name(draft)}, which this "
                "schema declares: dropped"
            )
            notes.append((path + (key,), message))
            del node[key]
            changed = True
    changed |= _upgrade_items(node, draft)
    changed |= _upgrade_id(node, draft)
    if draft <= 7 and "dependencies" in node and isinstance(node["dependencies"], dict):
        _split_dependencies(node)
        changed = True
    if draft == 4:
        for bound, flag in (("maximum", "exclusiveMaximum"), ("minimum", "exclusiveMinimum")):
            if isinstance(node.get(flag), bool):
                changed = True
                # the flag goes whatever it says; true makes the bound exclusive
                if node.pop(flag) and bound in node:
                    node[flag] = node.pop(bound)
    for child, where in child_schemas(node, path):
        changed |= _upgrade(child, where, draft, notes)
    if declared is not None and declared != 2020 and changed:
        node["$schema"] = DRAFT_2020_12  # rewritten: it now says what it means
        return False
    return changed


def _upgrade_items(node: dict[str, Any], draft: int) -> bool:
    """Tuple ``items`` and ``additionalItems`` → ``prefixItems`` and ``items``."""
    if isinstance(node.get("items"), list) and "prefixItems" not in node:
        node["prefixItems"] = node.pop("items")
        if "additionalItems" in node:
            node["items"] = node.pop("additionalItems")
        return True
    if draft < 2020 and "additionalItems" in node:
        del node["additionalItems"]  # beside a schema `items` (or none) it applies to nothing
        return True
    return False


def _upgrade_id(node: dict[str, Any], draft: int) -> bool:
    """Draft-04's ``id`` → ``$id``; a plain-name fragment (``#name``) in either,
    which declared an anchor up to draft-07, → ``$anchor``."""
    key = "id" if draft == 4 else "$id" if draft <= 7 else None
    value = node.get(key) if key is not None else None
    if not isinstance(value, str):
        return False
    anchor = value[1:] if value.startswith("#") else None
    if anchor is None and key == "$id":
        return False  # a URI: 2020-12 reads it the same
    renamed = "$id" if anchor is None else "$anchor"
    if renamed in node:
        return False  # both spellings: leave it to the checks to report
    items = [
        (renamed if k == key else k, anchor if k == key and anchor else v) for k, v in node.items()
    ]
    node.clear()
    node.update(items)  # the key renamed where it stood (published order unchanged)
    return True


def _split_dependencies(node: dict[str, Any]) -> None:
    dependencies = node.pop("dependencies")
    required = {k: v for k, v in dependencies.items() if isinstance(v, list)}
    schemas = {k: v for k, v in dependencies.items() if not isinstance(v, list)}
    if required:
        node["dependentRequired"] = {**node.get("dependentRequired", {}), **required}
    if schemas:
        node["dependentSchemas"] = {**node.get("dependentSchemas", {}), **schemas}


def _name(draft: int) -> str:
    return f"{draft}" if draft > 2000 else f"{draft:02d}"
