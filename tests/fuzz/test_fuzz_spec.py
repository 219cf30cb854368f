"""Fuzzing the spec loader: ``load_spec_text`` fed YAML-ish text, JSON values dumped
as YAML, spec-shaped documents with random contents, and the weather example
mutated (nodes deleted, duplicated, retyped, renamed, set to random values).

The property: the loader answers with diagnostics or a contract, never with an
exception, in bounded time; a contract comes exactly when there is no error,
and every diagnostic points at a line and column of the file.
"""

from __future__ import annotations

import copy
import re
import time
from pathlib import Path
from typing import Any

import yaml
from fuzz_settings import fuzz_settings
from hypothesis import event, given
from hypothesis import strategies as st

from mcpgen.spec.load import LoadResult, load_spec_text

WEATHER = Path(__file__).resolve().parents[2] / "examples" / "weather"
WEATHER_TEXT = (WEATHER / "tools.yaml").read_text(encoding="utf-8")
WEATHER_DATA = yaml.safe_load(WEATHER_TEXT)
YAML_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
SLOW = 20.0  # seconds: a generous bound on one load (the machine is shared)

VOCABULARY = [
    "mcpgen",
    "package",
    "output",
    "server",
    "name",
    "version",
    "title",
    "instructions",
    "implementation",
    "types",
    "tools",
    "description",
    "parameters",
    "input_schema",
    "output_schema",
    "returns",
    "callback",
    "hints",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "task_support",
    "icons",
    "src",
    "mime_type",
    "sizes",
    "async",
    "timeout",
    "meta",
    "required",
    "default",
    "type",
    "properties",
    "items",
    "enum",
    "const",
    "$ref",
    "$defs",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "minimum",
    "maximum",
    "pattern",
    "format",
    "additionalProperties",
    "prefixItems",
    "minLength",
    "string",
    "integer",
    "number",
    "boolean",
    "object",
    "array",
    "null",
    "positional",
    "named",
    "structured",
    "optional",
    "forbidden",
    "content",
    "#/types/Day",
    "schemas/region.json",
    "../outside.json",
    "https://example.com/s.json",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(VOCABULARY),
)
keys = st.sampled_from(VOCABULARY) | st.text(max_size=8)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=25,
)

# YAML-ish text: the characters and tokens YAML gives meaning to, in lines.
TOKENS = [
    "mcpgen: 1",
    "package: p",
    "server:",
    "tools:",
    "- name: t",
    "  ",
    "    ",
    "- ",
    ": ",
    "&a ",
    "*a",
    "<<: *a",
    "!!str ",
    "!!python/object ",
    "!tag ",
    "|",
    ">-",
    "{",
    "}",
    "[",
    "]",
    ",",
    "#",
    "'",
    '"',
    "\\",
    "%YAML 1.2",
    "---",
    "...",
    "? ",
    "~",
    "null",
    "yes",
    "0x1F",
    "1e3",
    ".inf",
    "2024-01-01",
    "@",
    "`",
    "\t",
    "\u2028",
    "\ufeff",
    "\x85",
]
yamlish = st.lists(
    st.lists(
        st.sampled_from(TOKENS) | st.sampled_from(VOCABULARY) | st.text(max_size=4), max_size=8
    ).map("".join),
    max_size=12,
).map("\n".join)

spec_shaped = st.fixed_dictionaries(
    {
        "mcpgen": st.just(1) | scalars,
        "package": st.just("fuzz_mcp") | scalars,
        "server": st.fixed_dictionaries(
            {"name": st.just("fuzz") | scalars, "version": st.just("1.0.0") | scalars}
        )
        | json_values,
        "tools": st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["t", "u", "t"]) | scalars,
                    "description": st.just("d") | scalars,
                },
                optional={
                    k: json_values
                    for k in (
                        "parameters",
                        "input_schema",
                        "output_schema",
                        "returns",
                        "callback",
                        "hints",
                        "task_support",
                        "icons",
                        "async",
                        "timeout",
                        "meta",
                        "title",
                    )
                },
            )
            | json_values,
            max_size=3,
        )
        | json_values,
    },
    optional={
        "types": st.dictionaries(keys, json_values, max_size=3) | json_values,
        "output": scalars,
    },
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a node below the root."""
    found = []
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        found.append(prefix + (key,))
        found.extend(paths(child, prefix + (key,)))
    return found


def parent_of(root: Any, path: tuple[Any, ...]) -> Any:
    node = root
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def mutated_weather(draw: st.DrawFn) -> Any:
    """The weather spec with one to five random mutations."""
    data = copy.deepcopy(WEATHER_DATA)
    for _ in range(draw(st.integers(1, 5))):
        candidates = paths(data)
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        parent, key = parent_of(data, path), path[-1]
        operation = draw(
            st.sampled_from(
                ["delete", "duplicate", "retype", "random", "rename", "add_key", "swap"]
            )
        )
        event(f"mutation: {operation}")
        if operation == "delete":
            del parent[key]
        elif operation == "duplicate":
            if isinstance(parent, list):
                parent.insert(key, copy.deepcopy(parent[key]))
            else:
                parent[f"{key}_copy"] = copy.deepcopy(parent[key])
        elif operation == "retype":
            value = parent[key]
            parent[key] = (
                (
                    [value]
                    if not isinstance(value, list)
                    else {"value": value}
                    if draw(st.booleans())
                    else str(value)
                )
                if draw(st.booleans())
                else draw(st.sampled_from([None, 0, -1, 1.5, True, "", "x", [], {}]))
            )
        elif operation == "random":
            parent[key] = draw(json_values)
        elif operation == "rename" and isinstance(parent, dict):
            parent[draw(keys)] = parent.pop(key)
        elif operation == "add_key":
            target = parent[key]
            if isinstance(target, dict):
                target[draw(keys)] = draw(json_values)
            elif isinstance(target, list):
                target.append(draw(json_values))
        elif operation == "swap":
            other = draw(st.sampled_from(candidates))
            try:
                parent[key] = copy.deepcopy(parent_of(data, other)[other[-1]])
            except (KeyError, IndexError, TypeError):
                pass
    return data


def dump(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)


def check(text: str, *, record: bool = True) -> LoadResult:
    started = time.monotonic()
    result = load_spec_text(text, "tools.yaml", spec_dir=WEATHER)  # never raises
    elapsed = time.monotonic() - started
    assert elapsed < SLOW, f"{elapsed:.1f} s for {len(text)} characters"
    assert isinstance(result, LoadResult)
    assert (result.contract is None) == bool(result.errors), result.diagnostics
    lines = len(YAML_LINE_BREAK.split(text)) + 1  # YAML's own line breaks
    for diagnostic in result.diagnostics:
        assert diagnostic.file == "tools.yaml"
        assert 1 <= diagnostic.line <= lines and diagnostic.column >= 1, diagnostic
        assert isinstance(diagnostic.message, str) and diagnostic.message.strip(), diagnostic
        str(diagnostic)
    if record:
        event("contract" if result.contract is not None else "diagnostics")
    return result


def test_the_weather_example_loads() -> None:
    assert check(WEATHER_TEXT, record=False).contract is not None
    assert check(dump(WEATHER_DATA), record=False).contract is not None


@fuzz_settings(weight=0.5)
@given(text=yamlish)
def test_yamlish_text(text: str) -> None:
    check(text)


@fuzz_settings(weight=0.25)
@given(text=st.text(max_size=200))
def test_arbitrary_text(text: str) -> None:
    check(text)


@fuzz_settings(weight=0.5)
@given(value=json_values | spec_shaped)
def test_json_values_as_yaml(value: Any) -> None:
    check(dump(value))


@fuzz_settings(weight=1.0)
@given(data=mutated_weather())
def test_mutated_weather_spec(data: Any) -> None:
    check(dump(data))


@fuzz_settings(weight=0.25)
@given(data=mutated_weather(), cut=st.integers(0, 4000))
def test_mutated_weather_spec_truncated(data: Any, cut: int) -> None:
    text = dump(data)
    check(text[: cut % (len(text) + 1)])
