"""Unit tests of the spec front end: the weather example's IR, bundling, the exact
published descriptors (2025-11-25 shape), warnings, the spec-format schema, `mcpgen init`
and Python names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.descriptors import descriptor
from mcpgen.names import py_identifier
from mcpgen.spec.format import EDITOR_SCHEMA, SPEC_FORMAT_SCHEMA, schema_file
from mcpgen.spec.load import load_contract

ROOT = Path(__file__).resolve().parents[3]
WEATHER = ROOT / "examples" / "weather" / "tools.yaml"
REGION = json.loads((WEATHER.parent / "schemas" / "region.json").read_text(encoding="utf-8"))
DAY = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date"},
        "high_c": {"type": "number"},
        "low_c": {"type": "number"},
        "summary": {"type": "string"},
    },
    "required": ["date", "high_c", "low_c"],
}

HEADER = {"mcpgen": 1, "package": "t_mcp", "server": {"name": "t", "version": "1.0"}}


def _spec(tmp_path: Path, tools: list[dict[str, Any]], **extra: Any) -> Path:
    path = tmp_path / "tools.yaml"
    path.write_text(json.dumps({**HEADER, **extra, "tools": tools}, indent=1), encoding="utf-8")
    return path


def _load(tmp_path: Path, tools: list[dict[str, Any]], **extra: Any) -> Any:
    result = load_contract(_spec(tmp_path, tools, **extra))
    assert result.contract is not None, [str(d) for d in result.diagnostics]
    return result.contract


def _dumps(value: Any) -> str:
    """JSON with key order kept: equal strings mean equal content *and* order."""
    return json.dumps(value, ensure_ascii=False)


@pytest.fixture(scope="module")
def weather() -> Any:
    result = load_contract(WEATHER)
    assert result.diagnostics == []
    assert result.contract is not None
    return result.contract


def _tool(contract: Any, name: str) -> Any:
    return next(tool for tool in contract.tools if tool.name == name)


# -- the weather example ------------------------------------------------------


def test_weather_tools_and_callbacks(weather: Any) -> None:
    assert [(t.name, t.callback) for t in weather.tools] == [
        ("get_forecast", "structured"),
        ("current_temperature", "positional"),
        ("alerts.search", "named"),
        ("report_observation", "positional"),
    ]
    assert weather.package == "weather_mcp"
    assert weather.output == "./weather_mcp"
    assert weather.server.name == "weather"
    assert weather.server.version == "1.4.0"
    assert weather.server.class_prefix == "Weather"
    assert weather.server.implementation == "weather_impl:Forecaster"


def test_weather_python_names(weather: Any) -> None:
    search = _tool(weather, "alerts.search")
    assert search.py_name == "alerts_search"
    assert search.class_name == "AlertsSearch"
    assert [(p.name, p.py_name) for p in search.parameters] == [
        ("region", "region"),
        ("max-results", "max_results"),
        ("severity", "severity"),
    ]
    assert _tool(weather, "get_forecast").class_name == "GetForecast"


def test_weather_defaults_resolved(weather: Any) -> None:
    forecast = _tool(weather, "get_forecast")
    assert [(p.name, p.required, p.has_default, p.default) for p in forecast.parameters] == [
        ("city", True, False, None),
        ("days", False, True, 3),
        ("units", False, False, None),
    ]
    assert forecast.returns == "string"
    assert forecast.task_support == "optional"
    assert forecast.timeout == 30.0
    assert forecast.is_async is False
    assert forecast.meta == {"team": "forecasting"}
    search = _tool(weather, "alerts.search")
    assert search.is_async is True
    assert search.returns == "array"
    assert search.timeout is None
    assert search.task_support == "forbidden"
    assert [p.default for p in search.parameters if p.has_default] == [10]
    assert _tool(weather, "current_temperature").returns == "number"


def test_weather_type_ref_bundled(weather: Any) -> None:
    forecast = _tool(weather, "get_forecast")
    out = forecast.output_schema
    assert out["properties"]["days"]["items"] == {"$ref": "#/$defs/Day"}
    assert out["$defs"] == {"Day": DAY}
    assert forecast.output_type_ref is None  # not a bare $ref
    assert "$defs" not in forecast.input_schema
    jsonschema.Draft202012Validator.check_schema(out)


def test_weather_file_ref_bundled(weather: Any) -> None:
    search = _tool(weather, "alerts.search")
    schema = search.input_schema
    assert schema["properties"]["region"] == {"$ref": "#/$defs/Region"}
    assert schema["$defs"] == {"Region": REGION}
    assert list(schema) == ["type", "properties", "required", "additionalProperties", "$defs"]
    assert weather.types == {"Day": DAY, "Region": REGION}
    assert [Path(p).name for p in weather.inputs] == ["region.json"]
    # the published schema is self-contained and works
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"region": {"country": "DE"}})
    assert not validator.is_valid({"region": {"country": "Germany"}})
    assert not validator.is_valid({"region": {"country": "DE"}, "extra": 1})


def test_weather_derived_input_schema_exact(weather: Any) -> None:
    forecast = _tool(weather, "get_forecast")
    expected = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
            "units": {"enum": ["metric", "imperial"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert _dumps(forecast.input_schema) == _dumps(expected)


def test_weather_descriptors_exact(weather: Any) -> None:
    expected = [
        {
            "name": "get_forecast",
            "title": "Get forecast",
            "description": "Forecast for a city, one entry per day.",
            "inputSchema": _tool(weather, "get_forecast").input_schema,
            "outputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "units": {"enum": ["metric", "imperial"]},
                    "days": {"type": "array", "items": {"$ref": "#/$defs/Day"}},
                },
                "required": ["city", "units", "days"],
                "$defs": {"Day": DAY},
            },
            "annotations": {
                "title": "Get forecast",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": True,
            },
            "icons": [
                {"src": "https://example.com/sun.png", "mimeType": "image/png", "sizes": ["48x48"]}
            ],
            "execution": {"taskSupport": "optional"},
            "_meta": {"team": "forecasting"},
        },
        {
            "name": "current_temperature",
            "description": "Current temperature in degrees Celsius.",
            "inputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": "alerts.search",
            "description": "Weather alerts matching a region, newest first.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"$ref": "#/$defs/Region"},
                    "max-results": {"type": "integer", "minimum": 1, "default": 10},
                    "severity": {
                        "type": "array",
                        "items": {"enum": ["minor", "moderate", "severe", "extreme"]},
                    },
                },
                "required": ["region"],
                "additionalProperties": False,
                "$defs": {"Region": REGION},
            },
        },
        {
            "name": "report_observation",
            "title": "Report an observation",
            "description": "Record a temperature reading from a station; returns its id.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "station": {"type": "string", "pattern": "^[A-Z]{4}$"},
                    "temperature_c": {"type": "number"},
                    "at": {"type": "string", "format": "date-time"},
                },
                "required": ["station", "temperature_c", "at"],
                "additionalProperties": False,
            },
            "annotations": {
                "title": "Report an observation",
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": False,
                "openWorldHint": False,
            },
        },
    ]
    assert _dumps([descriptor(t) for t in weather.tools]) == _dumps(expected)


# -- derived schemas and descriptors in small specs ---------------------------------


def test_required_omitted_when_empty_and_order_kept(tmp_path: Path) -> None:
    contract = _load(
        tmp_path,
        [
            {
                "name": "t",
                "parameters": [
                    {"name": "zeta", "type": "string", "required": False},
                    {"name": "alpha", "type": "integer", "default": 1},
                    {"name": "mid", "type": "boolean", "required": False, "description": "d"},
                ],
            }
        ],
    )
    tool = contract.tools[0]
    assert tool.callback == "named"
    assert _dumps(tool.input_schema) == _dumps(
        {
            "type": "object",
            "properties": {
                "zeta": {"type": "string"},
                "alpha": {"type": "integer", "default": 1},
                "mid": {"type": "boolean", "description": "d"},
            },
            "additionalProperties": False,
        }
    )


def test_no_parameters(tmp_path: Path) -> None:
    tool = _load(tmp_path, [{"name": "t"}]).tools[0]
    assert tool.callback == "positional"
    assert _dumps(descriptor(tool)) == _dumps(
        {
            "name": "t",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        }
    )


@pytest.mark.parametrize(
    ("tool", "callback"),
    [
        ({"parameters": [{"name": "a", "type": "integer"}]}, "positional"),
        ({"parameters": [{"name": "a", "type": "integer", "default": 2}]}, "named"),
        ({"parameters": [{"name": "a", "required": False}]}, "named"),
        ({"output_schema": {"type": "object"}}, "structured"),
        ({"parameters": [{"name": "a", "type": "integer"}], "callback": "named"}, "named"),
    ],
)
def test_callback_defaults(tmp_path: Path, tool: dict[str, Any], callback: str) -> None:
    assert _load(tmp_path, [{"name": "t", **tool}]).tools[0].callback == callback


def test_annotations_only_when_title_or_hint(tmp_path: Path) -> None:
    tools = _load(
        tmp_path,
        [
            {"name": "plain", "description": "x"},
            {"name": "titled", "title": "T"},
            {"name": "one_false_hint", "hints": {"destructive": False}},
            {"name": "empty_hints", "hints": {}},
        ],
    ).tools
    published = [descriptor(t) for t in tools]
    assert "annotations" not in published[0]
    assert published[1]["title"] == "T"
    assert published[1]["annotations"] == {"title": "T"}
    assert published[2]["annotations"] == {"destructiveHint": False}
    assert "title" not in published[2]
    assert "annotations" not in published[3]


def test_execution_icons_meta(tmp_path: Path) -> None:
    tools = _load(
        tmp_path,
        [
            {"name": "a", "task_support": "forbidden"},
            {
                "name": "b",
                "task_support": "required",
                "meta": {"k": [1, {"x": None}]},
                "icons": [
                    {"src": "data:image/png;base64,AAAA", "theme": "dark"},
                    {"src": "https://e.x/i.svg", "mime_type": "image/svg+xml", "sizes": ["any"]},
                ],
            },
            {"name": "c", "meta": {}},
        ],
    ).tools
    a, b, c = (descriptor(t) for t in tools)
    # `forbidden` written out is published (an imported server that lists it is
    # reproduced); left out (tool c), nothing is
    assert list(a) == ["name", "inputSchema", "execution"]
    assert a["execution"] == {"taskSupport": "forbidden"} and "execution" not in c
    assert b["execution"] == {"taskSupport": "required"}
    assert b["_meta"] == {"k": [1, {"x": None}]}
    assert b["icons"] == [
        {"src": "data:image/png;base64,AAAA", "theme": "dark"},
        {"src": "https://e.x/i.svg", "mimeType": "image/svg+xml", "sizes": ["any"]},
    ]
    assert list(b) == ["name", "inputSchema", "icons", "execution", "_meta"]
    assert c["_meta"] == {}


def test_input_schema_published_exactly(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "integer", "default": 4}},
        "required": ["b"],
    }
    tool = _load(tmp_path, [{"name": "t", "input_schema": schema}]).tools[0]
    assert _dumps(tool.input_schema) == _dumps(schema)  # no additionalProperties added
    assert [(p.name, p.required, p.default) for p in tool.parameters] == [
        ("b", True, None),
        ("a", False, 4),
    ]


def test_output_schema_bare_type_ref(tmp_path: Path) -> None:
    contract = _load(
        tmp_path,
        [{"name": "t", "output_schema": {"$ref": "#/types/Out"}}],
        types={"Out": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    )
    tool = contract.tools[0]
    assert tool.output_type_ref == "Out"
    # the root $ref is inlined: "type": "object" at the root (tests/generator/spec/test_spec_schemas.py)
    assert tool.output_schema == {"type": "object", "properties": {"n": {"type": "integer"}}}


def test_file_ref_with_pointer_and_transitive_defs(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "geo.yaml").write_text(
        "Point: {type: object, properties: {lat: {type: number}}}\n"
        "Area: {type: array, items: {$ref: '#/Point'}}\n",
        encoding="utf-8",
    )
    tool = _load(
        tmp_path,
        [
            {
                "name": "t",
                "parameters": [{"name": "area", "$ref": "schemas/geo.yaml#/Area"}],
            }
        ],
    ).tools[0]
    assert tool.input_schema["properties"]["area"] == {"$ref": "#/$defs/GeoArea"}
    assert tool.input_schema["$defs"] == {
        "GeoArea": {"type": "array", "items": {"$ref": "#/$defs/GeoPoint"}},
        "GeoPoint": {"type": "object", "properties": {"lat": {"type": "number"}}},
    }
    jsonschema.Draft202012Validator.check_schema(tool.input_schema)


def test_unused_types_not_carried(tmp_path: Path) -> None:
    contract = _load(
        tmp_path,
        [{"name": "t", "parameters": [{"name": "a", "type": "string"}]}],
        types={"Unused": {"type": "string"}},
    )
    assert "$defs" not in contract.tools[0].input_schema
    assert contract.types == {"Unused": {"type": "string"}}


def test_yaml_dates_stay_strings(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        'mcpgen: 1\npackage: t_mcp\nserver: {name: t, version: "1.0"}\ntools:\n'
        "  - name: t\n    parameters:\n"
        "      - {name: day, type: string, default: 2024-01-01}\n",
        encoding="utf-8",
    )
    result = load_contract(spec)
    assert result.contract is not None, [str(d) for d in result.diagnostics]
    assert result.contract.tools[0].parameters[0].default == "2024-01-01"
    assert result.contract.server.version == "1.0"


def test_unquoted_version_is_an_error_with_a_hint(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "mcpgen: 1\npackage: t_mcp\nserver: {name: t, version: 1.10}\ntools: []\n", encoding="utf-8"
    )
    result = load_contract(spec)
    assert [(d.line, d.column, d.path, d.message) for d in result.diagnostics] == [
        (3, 28, "server.version", "expected a string, got float 1.1 (quote it)")
    ]


# -- warnings -------------------------------------------------------------------


@pytest.mark.parametrize("length", [65, 100, 128])
def test_long_tool_name_warns(tmp_path: Path, length: int, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path, [{"name": "n" * length}])
    result = load_contract(spec)
    assert result.contract is not None
    assert result.errors == []
    assert [(d.level, d.path, d.line) for d in result.warnings] == [
        ("warning", "tools[0].name", 10)
    ]
    assert f"{length} characters long" in result.warnings[0].message
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, ["validate", "tools.yaml"])
    assert run.exit_code == 0
    assert run.stdout == "tools.yaml: valid (1 tool(s))\n"
    assert run.stderr.startswith("tools.yaml:10:")
    assert ": warning: tools[0].name: " in run.stderr


def test_64_char_name_no_warning(tmp_path: Path) -> None:
    result = load_contract(_spec(tmp_path, [{"name": "n" * 64}]))
    assert result.diagnostics == []


# -- the spec-format schema ----------------------------------------------------------


def test_schema_command_equals_committed_file() -> None:
    run = CliRunner().invoke(main, ["schema"])
    assert run.exit_code == 0
    committed = schema_file().read_text(encoding="utf-8")
    assert run.stdout == committed
    assert json.loads(committed) == EDITOR_SCHEMA
    assert schema_file() == ROOT / "mcpgen" / "spec" / "mcpgen-1.schema.json"
    path_run = CliRunner().invoke(main, ["schema", "--path"])
    assert path_run.stdout == f"{schema_file()}\n"


def test_editor_schema_checks_embedded_json_schemas(tmp_path: Path) -> None:
    """What an editor (yaml-language-server) sees: every valid spec passes, a misspelt
    keyword or type inside a parameter, type or output schema, at any depth, is flagged."""
    jsonschema.Draft202012Validator.check_schema(EDITOR_SCHEMA)
    editor = jsonschema.Draft202012Validator(EDITOR_SCHEMA)
    good = [WEATHER, *sorted((ROOT / "tests" / "fixtures").rglob("tools.yaml"))]
    for spec in good:
        if load_contract(spec).contract is None:
            continue
        errors = [e.message for e in editor.iter_errors(yaml.safe_load(spec.read_text()))]
        assert errors == [], (spec, errors)
    base = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
    wrong = [
        (("tools", 0, "parameters", 0), "typ", "string"),
        (("tools", 0, "parameters", 0), "type", "strin"),
        (("types", "Day"), "propertys", {}),
        (("types", "Day", "properties", "date"), "type", "strng"),
        (("tools", 0, "output_schema"), "requird", ["days"]),
    ]
    for path, key, value in wrong:
        spec = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))
        node = spec
        for part in path:
            node = node[part]
        node[key] = value
        assert not editor.is_valid(spec), (path, key, value)
        # the loader says the same in one diagnostic, with a suggestion
        written = tmp_path / "tools.yaml"
        written.write_text(yaml.safe_dump(spec), encoding="utf-8")
        (tmp_path / "schemas").mkdir(exist_ok=True)
        for schema in (WEATHER.parent / "schemas").iterdir():
            (tmp_path / "schemas" / schema.name).write_bytes(schema.read_bytes())
        assert load_contract(written).errors, (path, key, value)
    assert editor.is_valid(base)


def test_schema_validates_example_and_starter() -> None:
    from mcpgen.starter import scaffold

    STARTER_SPEC = scaffold("hello", "{}").files["tools.yaml"]

    jsonschema.Draft202012Validator.check_schema(SPEC_FORMAT_SCHEMA)
    validator = jsonschema.Draft202012Validator(SPEC_FORMAT_SCHEMA)
    for text in (WEATHER.read_text(encoding="utf-8"), STARTER_SPEC):
        data = yaml.safe_load(text)
        assert list(validator.iter_errors(data)) == []
    bad = yaml.safe_load((ROOT / "tests/specs/bad/misspelled_tool_key.yaml").read_text())
    assert not validator.is_valid(bad)


# -- mcpgen init ---------------------------------------------------------------------


def test_init_writes_a_spec_that_validates_and_builds(tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["init", str(tmp_path / "proj")])
    assert run.exit_code == 0, run.output
    spec = tmp_path / "proj" / "tools.yaml"
    assert spec.exists()
    result = load_contract(spec)
    assert result.diagnostics == []
    assert result.contract is not None
    assert [t.name for t in result.contract.tools] == ["greet", "add"]
    # every starter tool names its handler shape: no silent args dict
    assert [t.callback for t in result.contract.tools] == ["positional", "structured"]
    built = build_spec(spec)
    assert built.status == "written", (built.diagnostics, built.message)
    out = tmp_path / "proj" / "proj_mcp"  # beside the spec: `python -m proj_mcp` finds it
    assert built.output is not None and built.output.resolve() == out.resolve()
    for source in out.rglob("*.py"):
        compile(source.read_bytes(), str(source), "exec")
    assert build_spec(spec, check=True).status == "fresh"
    # the modeline points at a schema file init wrote, relative to the spec
    modeline = spec.read_text(encoding="utf-8").splitlines()[0]
    assert modeline == "# yaml-language-server: $schema=.mcpgen/mcpgen-1.schema.json"
    assert (
        json.loads((tmp_path / "proj" / ".mcpgen" / "mcpgen-1.schema.json").read_text())
        == EDITOR_SCHEMA
    )
    # a second init refuses to overwrite anything, and writes nothing
    before = spec.read_bytes()
    again = CliRunner().invoke(main, ["init", str(tmp_path / "proj")])
    assert again.exit_code == 1
    assert "already has tools.yaml" in again.stderr and "nothing was written" in again.stderr
    assert spec.read_bytes() == before


def test_init_adds_to_an_existing_pyproject_and_gitignore(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    (tmp_path / ".gitignore").write_text("dist/\n__pycache__/\n", encoding="utf-8")
    run = CliRunner().invoke(main, ["init", "--name", "notes", str(tmp_path)])
    assert run.exit_code == 0, run.output
    pyproject = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert pyproject.startswith('[project]\nname = "x"\n\n[tool.mcpgen]\n')
    gitignore = (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert gitignore[:2] == ["dist/", "__pycache__/"] and gitignore.count("__pycache__/") == 1
    assert ".venv/" in gitignore
    assert (tmp_path / "notes_impl.py").is_file()


# -- Python names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "python"),
    [
        ("city", "city"),
        ("max-results", "max_results"),
        ("alerts.search", "alerts_search"),
        ("a.b-c", "a_b_c"),
        ("class", "class_"),
        ("def", "def_"),
        ("async", "async_"),
        ("None", "None_"),
        ("True", "True_"),
        ("lambda", "lambda_"),
        ("self", "self_"),
        ("2fa", "_2fa"),
        ("9", "_9"),
        ("_private", "_private"),
        ("CamelCase", "CamelCase"),
        ("match", "match"),  # a soft keyword is a valid identifier
        ("__init__", "_init__"),  # Python mangles `__x` in a class; `__init__` is special
        ("__x", "_x"),
        ("___y", "_y"),
        ("__", "_"),
        ("cast", "cast_"),  # names the generated client's methods call or annotate with
        ("convert_result", "convert_result_"),
        ("dict", "dict_"),
        ("Any", "Any_"),
        ("_structured", "_structured_"),
    ],
)
def test_py_identifier(wire: str, python: str) -> None:
    assert py_identifier(wire) == python
    assert python.isidentifier()


def test_names_python_would_mangle_are_callable_by_keyword(tmp_path: Path) -> None:
    """A tool ``__init__`` replaced the client's constructor, a tool ``__x`` became an
    abstract method no implementation could define (``_Server__x``), and a parameter
    ``__y`` could not be passed by keyword. Found by the import fuzzer."""
    import textwrap

    from helpers import build_package, import_package

    spec = textwrap.dedent("""\
        mcpgen: 1
        package: mangled_mcp
        server: {name: mangled, version: "1"}
        tools:
          - name: __init__
            parameters: []
          - name: __x
            parameters:
              - {name: __y, type: string}
        """)
    gen = build_package(spec, tmp_path, "mangled_mcp")
    with import_package(gen, "mangled_mcp") as package:

        class Impl(package.MangledServer):  # type: ignore[name-defined,misc]
            def _init__(self) -> str:
                return "init"

            def _x(self, _y: str) -> str:
                return "x:" + _y

        with package.MangledClient.in_memory(Impl()) as client:
            assert client._init__() == "init"
            assert client._x(_y="a") == "x:a"


def test_parameters_named_like_what_client_methods_use_still_work(tmp_path: Path) -> None:
    """Parameters named cast or convert_result shadowed the helpers the generated
    client method calls (every call: "'str' object is not callable"); dict or Any
    broke its annotations for mypy. Found by the import fuzzer."""
    import textwrap

    from helpers import build_package, import_package

    spec = textwrap.dedent("""\
        mcpgen: 1
        package: shadowed_mcp
        server: {name: shadowed, version: "1"}
        tools:
          - name: t
            callback: positional
            parameters:
              - {name: cast, type: string}
              - {name: convert_result, type: string}
              - {name: dict, type: integer, required: false}
              - {name: Any, type: integer, required: false}
              - {name: _structured, type: integer, required: false}
        """)
    gen = build_package(spec, tmp_path, "shadowed_mcp")
    with import_package(gen, "shadowed_mcp") as package:

        class Impl(package.ShadowedServer):  # type: ignore[name-defined,misc]
            def t(
                self,
                cast_: str,
                convert_result_: str,
                dict_: int | None,
                Any_: int | None,
                _structured_: int | None,
            ) -> str:
                return f"{cast_}{convert_result_}{dict_}{Any_}{_structured_}"

        with package.ShadowedClient.in_memory(Impl()) as client:
            assert client.t("a", "b", 1, 2, 3) == "ab123"
            assert client.t(cast_="a", convert_result_="b", dict_=1) == "ab1NoneNone"


def test_python_names_are_decided_on_the_nfkc_form(tmp_path: Path) -> None:
    """Python normalizes identifiers (NFKC): ``ｓｅｌｆ`` would be ``self`` in a signature."""
    tool = _load(
        tmp_path,
        [
            {
                "name": "t",
                "callback": "positional",
                "parameters": [{"name": "ｓｅｌｆ", "type": "string"}, {"name": "ｃｌａｓｓ"}],
            }
        ],
    ).tools[0]
    assert [p.py_name for p in tool.parameters] == ["self_", "class_"]


def test_positional_only_spec_builds(tmp_path: Path) -> None:
    """A spec whose tools need no model import at all (no named/structured tool)."""
    spec = _spec(tmp_path, [{"name": "t", "parameters": [{"name": "x", "type": "string"}]}])
    result = build_spec(spec, output=tmp_path / "out")
    assert result.status == "written", [str(d) for d in result.diagnostics] or result.message
