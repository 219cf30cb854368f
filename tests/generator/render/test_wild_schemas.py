"""Schemas from the wild, end to end: each built into a package that passes
``mypy --strict`` (with an implementation and a typed caller), served, and called by
the typed client, which must take every result the server sends.

Every tool echoes its ``value`` argument as its result, so a test picks the
instance and both sides judge it: the server's validator, then the client's
validator and model. Found by running a peer generator's schema corpus through
mcpgen (issue 23, items 5 and 9-13).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import import_package, mypy_strict

from mcpgen.build import build_spec

TYPES: dict[str, Any] = {
    "Null": {"type": "null"},
    "AlsoNull": {"$ref": "#/types/Null"},
    "Counts": {
        "type": "object",
        "required": ["sheets"],
        "properties": {"sheets": {"type": "integer"}, "charts": {"type": "integer"}},
    },
    "Loose": {"properties": {"a": {"type": "string"}}},
    "Tally": {
        "type": "object",
        "patternProperties": {"^item_": {"type": "integer"}},
        "additionalProperties": False,
    },
}
# tool name → its output schema (the input is {value: <anything>})
OUTPUTS: dict[str, Any] = {
    # items 5, 10, 11: `default` is an annotation; absent stays absent (MISSING)
    "defaults": {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "default": "fast"},
            "note": {"type": ["string", "null"], "default": None},
            "counts": {"$ref": "#/types/Counts", "default": {"sheets": 0, "charts": 0}},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
        },
    },
    # item 9: `properties` without `type` constrains objects only
    "untyped": {
        "type": "object",
        "properties": {
            "v": {"properties": {"a": {"type": "string"}}},
            "w": {"$ref": "#/types/Loose"},
        },
    },
    # item 12: a union of aliases of null
    "nulls": {
        "type": "object",
        "properties": {
            "n": {"anyOf": [{"$ref": "#/types/Null"}, {"type": "null"}]},
            "m": {
                "anyOf": [
                    {"$ref": "#/types/AlsoNull"},
                    {"$ref": "#/types/Null"},
                    {"type": "integer"},
                ]
            },
        },
    },
    # item 13: a root object keyed by pattern only is a mapping
    "patterns": {
        "type": "object",
        "patternProperties": {"^item_": {"type": "integer"}},
        "additionalProperties": False,
    },
    "values": {"type": "object", "additionalProperties": {"$ref": "#/types/Counts"}},
    "tally": {"$ref": "#/types/Tally"},  # the same through a root $ref (was an alias)
    # item 17: multipleOf tolerates what float arithmetic computes
    "steps": {"type": "object", "properties": {"x": {"type": "number", "multipleOf": 0.1}}},
}

IMPL = (
    """
from __future__ import annotations

from typing import Any

from wild_mcp import WildClient, WildServer
from wild_mcp import models as m


class Impl(WildServer):
    def pick(self, mode: str, times: int) -> str:
        return mode * times

    def loose_in(self, args: m.LooseInArgs) -> str:
        return repr(args.get("v"))

"""
    + "".join(
        f"    def {name}(self, args: m.{name.capitalize()}Args) -> m.{name.capitalize()}Output:\n"
        f"        return m.{name.capitalize()}Output.model_validate(args['value'])\n\n"
        for name in OUTPUTS
    )
    + '''

def typed_uses(client: WildClient) -> None:
    """What mypy --strict must accept of the generated types."""
    out = client.defaults({})
    counts: m.Counts | Any = out.counts
    loose: m.Loose | bool | int | float | str | list[Any] | None | Any = client.untyped({}).w
    mapping: dict[str, int] = client.patterns({}).root
    by_name: dict[str, m.Counts] = client.values({}).root
    tally: dict[str, int] = client.tally({}).root
    nothing: None | Any = client.nulls({}).n
    client.loose_in(v=1)
    client.loose_in(v={"a": "x"})
    del counts, loose, mapping, by_name, nothing, tally
'''
)


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wild")
    spec = {
        "mcpgen": 1,
        "package": "wild_mcp",
        "server": {"name": "wild", "version": "1"},
        "types": TYPES,
        "tools": [
            {"name": name, "parameters": [{"name": "value"}], "output_schema": schema}
            for name, schema in OUTPUTS.items()
        ],
    }
    # item 9 on the argument side: the client's type admits what the server accepts
    spec["tools"].append(
        {
            "name": "loose_in",
            "callback": "named",
            "parameters": [
                {"name": "v", "required": False, "properties": {"a": {"type": "string"}}}
            ],
        }
    )
    # inputs keep their promise: an absent optional argument reaches a positional
    # handler as its default (the server applies it)
    spec["tools"].append(
        {
            "name": "pick",
            "callback": "positional",
            "parameters": [
                {"name": "mode", "type": "string", "default": "fast"},
                {"name": "times", "type": "integer", "default": 1},
            ],
        }
    )
    (root / "tools.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    result = build_spec(root / "tools.yaml", output=root / "gen" / "wild_mcp")
    assert result.ok, [str(d) for d in result.diagnostics]
    (root / "gen" / "wild_impl.py").write_text(IMPL, encoding="utf-8")
    return root / "gen"


@pytest.fixture(scope="module")
def package(gen: Path) -> Iterator[Any]:
    with import_package(gen, "wild_mcp") as module:
        yield module


@pytest.fixture(scope="module")
def client(package: Any) -> Iterator[Any]:
    import wild_impl

    with package.WildClient.in_memory(wild_impl.Impl()) as connected:
        yield connected


def test_the_package_and_its_uses_pass_mypy_strict(gen: Path) -> None:
    """Before: ``counts: Counts = {"sheets": 0, ...}`` (a dict assigned to a model)."""
    done = mypy_strict(gen / "wild_mcp", gen / "wild_impl.py", cwd=gen)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_default_never_materialises_and_stays_published(package: Any, client: Any) -> None:
    from pydantic import MISSING

    out = client.defaults({})
    assert (out.mode, out.note, out.counts, out.tags) == (MISSING, MISSING, MISSING, MISSING)
    assert out.model_dump(by_alias=True, exclude_unset=True) == {}
    out = client.defaults({"counts": {"sheets": 2}, "mode": "slow", "note": None})
    assert type(out.counts).__name__ == "Counts" and out.counts.sheets == 2
    assert (out.mode, out.note) == ("slow", None)
    listed = {tool["name"]: tool for tool in package.contract.TOOLS}
    published = listed["defaults"]["outputSchema"]["properties"]
    assert published["counts"]["default"] == {"sheets": 0, "charts": 0}
    assert published["mode"]["default"] == "fast"


@pytest.mark.parametrize("value", [1, "s", None, [1], True, 2.5])
def test_properties_without_type_admit_every_non_object(client: Any, value: Any) -> None:
    out = client.untyped({"v": value, "w": value})
    assert out.v == value and out.w == value
    assert out.model_dump(by_alias=True, exclude_unset=True) == {"v": value, "w": value}


def test_properties_without_type_still_model_objects(client: Any) -> None:
    out = client.untyped({"v": {"a": "x"}, "w": {"a": "y"}})
    assert out.v.a == "x" and type(out.w).__name__ == "Loose"


def test_a_union_of_null_aliases_is_none(client: Any) -> None:
    """Before: ``Null | None`` raised TypeError (``None | None``) on every call."""
    assert client.nulls({"n": None, "m": None}).n is None
    assert client.nulls({"m": 3}).m == 3


def test_a_root_object_keyed_by_pattern_is_a_mapping(client: Any) -> None:
    """Before: a field-less model forbidding every key: ``ResultMismatch``."""
    from mcpgen_runtime import ToolError

    assert client.patterns({"item_0": 0, "item_1": 5}).root == {"item_0": 0, "item_1": 5}
    with pytest.raises(ToolError):
        client.patterns({"other": 0})
    assert client.tally({"item_2": 2}).root == {"item_2": 2}
    with pytest.raises(ToolError):
        client.tally({"other": 0})
    got = client.values({"a": {"sheets": 1}}).root
    assert type(got["a"]).__name__ == "Counts" and got["a"].sheets == 1


def test_a_float_computed_multiple_passes_both_sides(client: Any) -> None:
    """Before: 7 * 0.1 (0.7000000000000001) was refused for ``multipleOf: 0.1``."""
    from mcpgen_runtime import ToolError

    assert client.steps({"x": 7 * 0.1}).x == 7 * 0.1
    with pytest.raises(ToolError):
        client.steps({"x": 0.70000000001})


def test_input_defaults_are_still_applied_by_the_server(client: Any) -> None:
    assert client.pick() == "fast"
    assert client.pick(times=2) == "fastfast" and client.pick("slow") == "slow"


@pytest.mark.parametrize("value", [1, "s", [1], {"a": "x"}])
def test_properties_without_type_admit_non_objects_as_arguments(client: Any, value: Any) -> None:
    assert client.loose_in(v=value) == repr(value)
