"""The example arguments of ``mcpgen docs``: valid against the schema (checked with the
runtime's validator, the one the generated server runs), deterministic, and accepted by
a real generated server through the generated client's method, as the page shows it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpgen.build import build_spec
from mcpgen.docs.model import tool_view
from mcpgen.spec.load import load_contract
from mcpgen.testing.examples import ExampleError, example_arguments
from mcpgen.testing.readable import FORMAT_EXAMPLES
from mcpgen_runtime.schema.validator import compile_schema

ROOT = Path(__file__).resolve().parents[3]
WEATHER = ROOT / "examples" / "weather" / "tools.yaml"
CORPUS = yaml.safe_load(
    (ROOT / "tests" / "fixtures" / "workflow" / "diff" / "corpus.yaml").read_text(encoding="utf-8")
)["entries"]


def _obj(
    properties: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    schema["required"] = list(properties) if required is None else required
    return schema


NODE = {
    "type": "object",
    "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "minItems": 1},
    },
    "required": ["value"],
}
SCHEMAS: dict[str, dict[str, Any]] = {
    "empty": {"type": "object"},
    "bounds": _obj(
        {
            "a": {"type": "integer", "minimum": 10, "maximum": 12},
            "b": {"type": "number", "exclusiveMinimum": 0.5, "exclusiveMaximum": 0.6},
            "c": {"type": "integer", "exclusiveMaximum": -3},
            "d": {"type": "number", "multipleOf": 0.25, "minimum": 1.1},
            "e": {"type": "integer", "multipleOf": 7, "minimum": 20},
        }
    ),
    "strings": _obj(
        {
            "a": {"type": "string", "minLength": 12},
            "b": {"type": "string", "maxLength": 3},
            "c": {"type": "string", "pattern": "^(foo|bar)-[0-9]{3}$"},
            "d": {"type": "string", "pattern": "^[^a-z]{2,4}\\.x$"},
            "e": {"type": "string", "pattern": "^[a-z]+$", "minLength": 5},
            "f": {"type": "string", "pattern": "^\\d{4}-\\w+\\s?$"},
        }
    ),
    "formats": _obj({name: {"type": "string", "format": name} for name in FORMAT_EXAMPLES}),
    "enum_const": _obj(
        {
            "a": {"enum": ["x", 2, None]},
            "b": {"const": {"k": [1]}},
            "c": {"type": "integer", "enum": [3, 4]},
        }
    ),
    "defaults": _obj(
        {
            "a": {"type": "string"},
            "b": {"type": "integer", "default": 5},
            "c": {"type": "string", "default": "zz"},
        },
        ["a"],
    ),
    "default_that_drags": _obj(
        {
            "a": {"type": "string"},
            "b": {"type": "integer", "default": 5},
            "c": {"type": "string", "pattern": "^\\p{L}$"},
        },
        ["a"],
        dependentRequired={"b": ["c"]},
    ),
    "arrays": _obj(
        {
            "a": {
                "type": "array",
                "items": {"enum": ["x", "y", "z"]},
                "minItems": 2,
                "uniqueItems": True,
            },
            "b": {
                "type": "array",
                "items": {"type": "integer", "minimum": 3},
                "minItems": 3,
                "uniqueItems": True,
            },
            "c": {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "boolean"}],
                "minItems": 2,
            },
            "d": {"type": "array", "contains": {"const": 7}},
            "e": {
                "type": "array",
                "items": _obj({"k": {"type": "string", "minLength": 2}}),
                "minItems": 2,
                "uniqueItems": True,
            },
        }
    ),
    "unions": _obj(
        {
            "a": {"oneOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]},
            "b": {"anyOf": [{"type": "null"}, {"type": "string", "format": "email"}]},
            "c": {"type": ["integer", "null"], "minimum": 10},
            "d": {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}]},
            "e": {"allOf": [{"type": "number", "minimum": 2.5}, {"maximum": 3}]},
            "f": {"allOf": [_obj({"x": {"type": "integer"}}), _obj({"y": {"type": "boolean"}})]},
        }
    ),
    "refs": {
        **_obj({"n": {"$ref": "#/$defs/Node"}, "m": {"$ref": "#/$defs/Leaf", "maxLength": 4}}),
        "$defs": {"Node": NODE, "Leaf": {"type": "string", "minLength": 3}},
    },
    "ref_sibling_looser": {
        **_obj({"s": {"$ref": "#/$defs/Short", "maxLength": 10}}),
        "$defs": {"Short": {"type": "string", "maxLength": 3}},
    },
    "root_recursion": _obj({"next": {"$ref": "#"}, "v": {"type": "integer"}}, ["v"]),
    "extra_keys": _obj({}, ["k1", "k2"], additionalProperties={"type": "integer", "minimum": 4}),
    "min_properties": _obj(
        {"a": {"type": "string"}, "b": {"type": "integer"}}, [], minProperties=2
    ),
    "nested": _obj({"outer": _obj({"inner": _obj({"leaf": {"type": "boolean"}})})}),
    "examples_keyword": _obj(
        {"a": {"type": "string", "pattern": "^\\p{Lu}\\p{Ll}+$", "examples": ["Zurich"]}}
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_example_is_valid_and_deterministic(name: str) -> None:
    schema = SCHEMAS[name]
    arguments = example_arguments(schema)
    compile_schema(schema)(arguments)  # raises ValidationFailed when invalid
    assert example_arguments(json.loads(json.dumps(schema))) == arguments
    for key in schema.get("required", []):
        assert key in arguments


def test_optional_properties_with_defaults_are_shown() -> None:
    assert example_arguments(SCHEMAS["defaults"]) == {"a": "example", "b": 5, "c": "zz"}
    # b's default would require c, whose pattern no generated value meets: left out
    assert example_arguments(SCHEMAS["default_that_drags"]) == {"a": "example"}


def test_unsatisfiable_schema_is_said_not_faked() -> None:
    impossible = _obj({"a": {"type": "string", "minLength": 5, "maxLength": 2}})
    with pytest.raises(ExampleError, match="no generated value"):
        example_arguments(impossible)
    with pytest.raises(ExampleError, match="cannot be compiled"):
        example_arguments(_obj({"a": {"type": "string", "pattern": "(a)\\1"}}))


def test_patterns_keep_ecma_meaning() -> None:
    """Patterns Python's own parser cannot read (``\\p{…}``, ``[^]``) still get a
    match, by the runtime's ECMA-262 matcher; ``\\d`` stays ASCII."""
    schema = _obj(
        {
            "a": {"type": "string", "pattern": "^\\p{Lu}\\p{Ll}+$"},
            "b": {"type": "string", "pattern": "^[^]{3}$"},
            "c": {"type": "string", "pattern": "^\\d{2}-[a-z]+$", "minLength": 6},
        }
    )
    arguments = example_arguments(schema)
    compile_schema(schema)(arguments)
    assert len(arguments["b"]) == 3 and arguments["c"][:2].isascii() and len(arguments["c"]) >= 6


def test_a_long_patterns_example_is_found_in_bounded_time(tmp_path: Path) -> None:
    """Hypothesis's shrinker spends time quadratic in a match's length even when it
    cannot shrink it: a 1024-hex-digit ``pattern`` made ``mcpgen docs`` take 34 s, 2000
    digits ~2 min. The first (simplest) draw of a long match is kept unshrunk."""
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        textwrap.dedent(
            """\
            mcpgen: 1
            package: slow_docs
            server: {name: slow-docs, version: 1.0.0}
            tools:
              - name: verify
                description: Verifies a detached signature.
                parameters:
                  - {name: key_id, type: string, pattern: "^[A-Z]{2}-\\\\d{3}$"}
                  - {name: signature, type: string, pattern: "^[0-9a-f]{2000}$"}
                returns: boolean
            """
        ),
        encoding="utf-8",
    )
    script = (
        "import json, sys, time\n"
        "from mcpgen.docs.model import tool_view\n"
        "from mcpgen.spec.load import load_contract\n"
        "contract = load_contract(sys.argv[1]).contract\n"
        "start = time.monotonic()\n"
        "view = tool_view(contract, contract.tools[0], 'SlowDocsClient')\n"
        "print(json.dumps([time.monotonic() - start, view.example.request]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(spec)],
        capture_output=True,
        text=True,
        timeout=90,  # ~2 min without the bound
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seconds, request = json.loads(done.stdout)
    arguments = json.loads(request)["params"]["arguments"]
    assert arguments == {"key_id": "AA-000", "signature": "0" * 2000}
    assert seconds < 15


def test_the_pattern_search_stops_at_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """No more candidates than PATTERN_DRAWS are examined: the search stops there (it
    does not go on drawing candidates it refuses); a pattern whose matches the budget
    does not reach gets no example (the page says so) rather than a long search."""
    from mcpgen.testing import strategies

    budgets: list[strategies.SearchBudget] = []

    class Counted(strategies.SearchBudget):
        def __init__(self, draws: int, seconds: float) -> None:
            super().__init__(draws, seconds)
            self.asked = 0
            budgets.append(self)

        def __call__(self) -> bool:
            self.asked += 1
            return super().__call__()

    monkeypatch.setattr(strategies, "SearchBudget", Counted)
    monkeypatch.setattr(strategies, "PATTERN_DRAWS", 3)
    strategies.pattern_string.cache_clear()
    try:
        # from_regex rarely draws 40 letters for [a-z]*: many candidates are refused
        assert strategies.pattern_string("^[a-z]*$", 40) is None
        assert budgets and all(b.used == 3 and b.spent and b.asked == 4 for b in budgets)
        budgets.clear()
        assert strategies.pattern_string("^[a-z]{2}-\\d{3}$") == "aa-000"  # within the budget
        assert all(b.used <= 3 for b in budgets)
    finally:
        strategies.pattern_string.cache_clear()


def test_hypothesis_stands_in_when_the_readable_pick_is_refused() -> None:
    # "example" is the readable string and the one value refused: the strategy's
    # simplest value is shown instead of no example
    schema = _obj({"a": {"type": "string", "not": {"enum": ["example", "exampl"]}}})
    assert example_arguments(schema) == {"a": ""}


def test_docs_shows_the_example_mcpgen_test_calls_with() -> None:
    from mcpgen import testing

    contract = load_contract(WEATHER).contract
    assert contract is not None
    for tool in contract.tools:
        request = json.loads(tool_view(contract, tool, "WeatherClient").example.request or "")
        full = testing.example_arguments(tool.input_schema)
        properties = tool.input_schema["properties"]
        # less the optional arguments that only repeat their default
        needed = {
            key: value
            for key, value in full.items()
            if key in tool.input_schema.get("required", [])
            or properties[key].get("default", object()) != value
        }
        assert request["params"]["arguments"] == needed


def test_examples_do_not_pad_with_defaults_and_show_a_checked_result() -> None:
    contract = load_contract(WEATHER).contract
    assert contract is not None
    by_name = {tool.name: tool for tool in contract.tools}
    alerts = tool_view(contract, by_name["alerts.search"], "WeatherClient").example
    assert alerts.python is not None and "max_results" not in alerts.python  # default 10
    forecast = by_name["get_forecast"]
    example = tool_view(contract, forecast, "WeatherClient").example
    assert example.python == (
        'result = client.get_forecast(city="example")\n'
        "# result: GetForecastOutput (a pydantic model)\n"
        "# as a task: handle = client.start_get_forecast(…)\n"
        "# handle.status(), handle.result(), handle.cancel()"
    )
    assert example.result is not None and forecast.output_schema is not None
    compile_schema(forecast.output_schema)(json.loads(example.result))  # checked, as calls are
    assert tool_view(contract, by_name["alerts.search"], "WeatherClient").example.result is None


def test_every_tool_of_the_diff_corpus_gets_a_valid_example(tmp_path: Path) -> None:
    checked = 0
    for entry in CORPUS:
        for side in ("old", "new"):
            folder = tmp_path / entry["id"] / side
            folder.mkdir(parents=True)
            for name, document in (entry.get(f"{side}_files") or {}).items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(json.dumps(document), encoding="utf-8")
            spec = folder / "tools.yaml"
            spec.write_text(yaml.safe_dump(entry[side], sort_keys=False), encoding="utf-8")
            contract = load_contract(spec).contract
            assert contract is not None, entry["id"]
            for tool in contract.tools:
                compile_schema(tool.input_schema)(example_arguments(tool.input_schema))
                checked += 1
    assert checked >= 80


def test_page_examples_run_against_the_generated_weather_server(tmp_path: Path) -> None:
    """Each tool's Python call, exactly as the page prints it, runs through the
    generated client against the example implementation over stdio; the JSON-RPC
    request carries the same arguments, valid against the published inputSchema."""
    contract = load_contract(WEATHER).contract
    assert contract is not None
    result = build_spec(WEATHER, output=tmp_path / "weather_mcp")
    assert result.ok, result.message
    shutil.copy(WEATHER.parent / "weather_impl.py", tmp_path / "weather_impl.py")
    calls = []
    for tool in contract.tools:
        example = tool_view(contract, tool, "WeatherClient").example
        assert example.request is not None and example.python is not None, example.problem
        request = json.loads(example.request)
        assert request["method"] == "tools/call" and request["params"]["name"] == tool.name
        compile_schema(tool.input_schema)(request["params"]["arguments"])
        calls.append(example.python)
    script = "\n".join(
        [
            "import sys",
            "from weather_mcp import WeatherClient",
            "with WeatherClient.stdio([sys.executable, '-m', 'weather_mcp']) as client:",
            *(textwrap.indent(call, "    ") + "\n    print(repr(result))" for call in calls),
        ]
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "runtime")])}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout.splitlines()) == len(calls)


def test_examples_in_the_spec_replace_generated_values(tmp_path: Path) -> None:
    """What docs/contract-docs.md promises of ``examples:``."""
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "mcpgen: 1\npackage: ex_mcp\nserver: {name: ex, version: '1'}\ntools:\n"
        "  - name: find\n    parameters:\n"
        "      - {name: city, type: string, examples: [Paris, Lyon]}\n"
        "      - {name: n, type: integer, minimum: 1, examples: [0, 4]}\n",
        encoding="utf-8",
    )
    contract = load_contract(spec).contract
    assert contract is not None
    example = tool_view(contract, contract.tools[0], "ExClient").example
    assert example.python == 'result = client.find(city="Paris", n=4)'  # 0 is refused
