"""Fuzzing ``mcpgen diff``: pairs of specs made by mutating a valid base spec (the
weather example and the robustness contract) the way contracts evolve — tools
and parameters added, removed, renamed and reordered, types, enums, required
flags, defaults, constraints, hints, output schemas, task support, timeouts,
server and package changed — and by random damage (nodes deleted, retyped or set
to random values, garbage YAML text).

Properties, in process (``diff_files``, what the command calls) for every pair:
- the result is a report or ``DiffFailed``, nothing else; a failure carries a
  message, and an invalid spec its diagnostics (no traceback text);
- a spec compared with itself has no change, and a pair has changes both ways
  or neither;
- every change is classified: a known rule, with that rule's severity and
  category, a path, a message, and a line of NEW (or none);
- a difference in the published descriptors or in the Python surface is
  reported by at least one change;
- the failing changes grow as the category loosens (source ⊆ call ⊆ behavior),
  and the text, JSON and GitHub renderings all succeed (annotations one line);
- a spec written differently (keys shuffled, flow or block style, another line
  width) has no change at all.
Through the CLI (click's CliRunner), for fewer pairs: the exit code is 0, 1 or 2
and agrees with the report, and nothing escapes as an exception.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from fuzz_settings import fuzz_settings
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from mcpgen import ir
from mcpgen.cli import main
from mcpgen.descriptors import descriptor
from mcpgen.diff import (
    ALL_RULES,
    DiffFailed,
    DiffReport,
    diff_contracts,
    diff_files,
    render_github,
    render_json,
    render_text,
)
from mcpgen.spec.load import load_contract
from mcpgen_runtime.contract.compare import Category, Severity

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "weather"
BASES = {
    "weather": yaml.safe_load((WEATHER / "tools.yaml").read_text(encoding="utf-8")),
    "robust": yaml.safe_load(
        (ROOT / "tests" / "fixtures" / "robust_tools.yaml").read_text(encoding="utf-8")
    ),
}

# --------------------------------------------------------------------------- strategies

NAMES = [
    "a",
    "b",
    "city",
    "days",
    "get_forecast",
    "get-forecast",
    "get.forecast",
    "x1",
    "class",
    "self",
    "1st",
    "_",
    "Über",
    "a" * 129,
    "",
    "list_tools",
]
TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 100),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
    st.sampled_from(NAMES + TYPES),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
names = st.sampled_from(NAMES) | st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
types = st.sampled_from(TYPES) | st.lists(
    st.sampled_from(TYPES), min_size=1, max_size=3, unique=True
)
constraint_keys = st.sampled_from(
    [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "multipleOf",
    ]
)


@st.composite
def schemas(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """A small JSON Schema of the kinds contracts use."""
    kind = draw(
        st.sampled_from(
            ["type", "enum", "object", "array", "union", "ref", "const"]
            if depth < 2
            else ["type", "enum", "const"]
        )
    )
    if kind == "type":
        schema: dict[str, Any] = {"type": draw(types)}
    elif kind == "enum":
        schema = {"enum": draw(st.lists(scalars, min_size=1, max_size=4))}
    elif kind == "const":
        schema = {"const": draw(scalars)}
    elif kind == "object":
        props = draw(st.dictionaries(names, schemas(depth + 1), max_size=3))
        schema = {"type": "object", "properties": props}
        if props and draw(st.booleans()):
            schema["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        if draw(st.booleans()):
            schema["additionalProperties"] = draw(st.booleans())
    elif kind == "array":
        schema = {"type": "array", "items": draw(schemas(depth + 1))}
    elif kind == "union":
        schema = {
            draw(st.sampled_from(["anyOf", "oneOf"])): draw(
                st.lists(schemas(depth + 1), min_size=1, max_size=3)
            )
        }
    else:
        schema = {
            "$ref": draw(
                st.sampled_from(
                    ["#/types/Day", "#/types/Tree", "schemas/region.json", "#/types/Nope"]
                )
            )
        }
    if draw(st.integers(0, 3)) == 0:
        schema[draw(constraint_keys)] = draw(st.integers(0, 10))
    if draw(st.integers(0, 4)) == 0:
        schema["description"] = draw(st.text(max_size=10))
    if draw(st.integers(0, 5)) == 0:
        schema["pattern"] = draw(st.sampled_from(["^[A-Z]+$", "^a", "x*", "(", "[a-z]{2}"]))
    return schema


@st.composite
def parameters(draw: st.DrawFn) -> dict[str, Any]:
    parameter = {"name": draw(names), **draw(schemas())}
    choice = draw(st.integers(0, 5))
    if choice == 0:
        parameter["required"] = False
    elif choice == 1:
        parameter["default"] = draw(scalars)
    elif choice == 2:
        parameter["required"] = draw(scalars)
    return parameter


@st.composite
def tools(draw: st.DrawFn) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": draw(names), "description": draw(st.text(max_size=12))}
    tool["parameters"] = draw(st.lists(parameters(), max_size=3))
    if draw(st.integers(0, 3)) == 0:
        tool["output_schema"] = {
            "type": "object",
            "properties": draw(st.dictionaries(names, schemas(1), max_size=2)),
        }
    return tool


def _tools(spec: dict[str, Any]) -> list[Any]:
    found = spec.get("tools")
    return found if isinstance(found, list) else []


def _pick_tool(draw: st.DrawFn, spec: dict[str, Any]) -> dict[str, Any] | None:
    candidates = [t for t in _tools(spec) if isinstance(t, dict)]
    return draw(st.sampled_from(candidates)) if candidates else None


def _params(tool: dict[str, Any]) -> list[Any] | None:
    found = tool.get("parameters")
    return found if isinstance(found, list) else None


def _mutate_parameter(draw: st.DrawFn, parameter: dict[str, Any]) -> str:
    """One contract-style change to a parameter (in place); returns its name."""
    operation = draw(
        st.sampled_from(
            [
                "type",
                "enum",
                "required",
                "default",
                "constraint",
                "rename",
                "description",
                "schema",
                "nullable",
                "drop-key",
            ]
        )
    )
    if operation == "type":
        parameter["type"] = draw(types)
    elif operation == "enum":
        values = parameter.get("enum") if isinstance(parameter.get("enum"), list) else []
        if values and draw(st.booleans()):
            values = values[: draw(st.integers(0, len(values) - 1))] or None
        else:
            values = [*values, draw(scalars)]
        if values is None:
            parameter.pop("enum", None)
        else:
            parameter["enum"] = values
    elif operation == "required":
        parameter["required"] = draw(st.booleans())
    elif operation == "default":
        if "default" in parameter and draw(st.booleans()):
            del parameter["default"]
        else:
            parameter["default"] = draw(scalars)
    elif operation == "constraint":
        key = draw(constraint_keys)
        parameter[key] = draw(st.integers(-1, 20))
    elif operation == "rename":
        parameter["name"] = draw(names)
    elif operation == "description":
        parameter["description"] = draw(st.text(max_size=12))
    elif operation == "schema":
        keep = {k: parameter[k] for k in ("name", "required", "description") if k in parameter}
        parameter.clear()
        parameter.update({**keep, **draw(schemas())})
    elif operation == "nullable":
        parameter["type"] = [parameter.get("type", "string"), "null"]
    else:
        keys = sorted(k for k in parameter if k != "name")
        if keys:
            del parameter[draw(st.sampled_from(keys))]
    return operation


HINTS = ["read_only", "destructive", "idempotent", "open_world"]


def _mutate_tool(draw: st.DrawFn, spec: dict[str, Any]) -> str:
    """One contract-style change to a tool, or to the tool list (in place)."""
    operation = draw(
        st.sampled_from(
            [
                "add-tool",
                "remove-tool",
                "rename-tool",
                "reorder-tools",
                "add-param",
                "remove-param",
                "reorder-params",
                "param",
                "param",
                "param",
                "hint",
                "output",
                "callback",
                "returns",
                "async",
                "timeout",
                "task_support",
                "title",
                "description",
                "meta",
                "icons",
                "input_schema",
            ]
        )
    )
    tools_list = _tools(spec)
    tool = _pick_tool(draw, spec)
    if operation == "add-tool" or tool is None:
        tools_list.insert(draw(st.integers(0, len(tools_list))), draw(tools()))
        if "tools" not in spec or not isinstance(spec["tools"], list):
            spec["tools"] = tools_list
        return "add-tool"
    params = _params(tool)
    if operation == "remove-tool":
        tools_list.remove(tool)
    elif operation == "rename-tool":
        tool["name"] = draw(names)
    elif operation == "reorder-tools":
        tools_list.reverse()
    elif operation == "add-param" and params is not None:
        params.insert(draw(st.integers(0, len(params))), draw(parameters()))
    elif operation == "remove-param" and params:
        params.pop(draw(st.integers(0, len(params) - 1)))
    elif operation == "reorder-params" and params:
        params.reverse()
    elif operation == "param" and params:
        target = params[draw(st.integers(0, len(params) - 1))]
        if isinstance(target, dict):
            return "param: " + _mutate_parameter(draw, target)
    elif operation == "hint":
        hints = tool.setdefault("hints", {})
        if isinstance(hints, dict):
            key = draw(st.sampled_from(HINTS))
            value = draw(st.sampled_from([True, False, None]))
            if value is None:
                hints.pop(key, None)
            else:
                hints[key] = value
    elif operation == "output":
        output = tool.get("output_schema")
        if isinstance(output, dict) and draw(st.booleans()):
            props = output.setdefault("properties", {})
            if isinstance(props, dict) and props and draw(st.booleans()):
                del props[draw(st.sampled_from(sorted(props)))]
            elif isinstance(props, dict):
                props[draw(names)] = draw(schemas(1))
            if isinstance(props, dict) and props and draw(st.booleans()):
                output["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        elif output is not None and draw(st.booleans()):
            del tool["output_schema"]
        else:
            tool["output_schema"] = draw(schemas())
    elif operation == "callback":
        tool["callback"] = draw(st.sampled_from(["positional", "named", "structured", "odd"]))
    elif operation == "returns":
        tool["returns"] = draw(
            st.sampled_from(
                ["string", "integer", "number", "boolean", "object", "array", "content", "odd"]
            )
        )
    elif operation == "async":
        tool["async"] = not tool.get("async", False)
    elif operation == "timeout":
        tool["timeout"] = draw(st.sampled_from([None, 0, 1, 2.5, 30, 600, -1, "x"]))
        if tool["timeout"] is None:
            del tool["timeout"]
    elif operation == "task_support":
        tool["task_support"] = draw(st.sampled_from(["forbidden", "optional", "required"]))
    elif operation in ("title", "description"):
        tool[operation] = draw(st.text(max_size=12))
    elif operation == "meta":
        tool["meta"] = draw(st.dictionaries(st.text(max_size=4), json_values, max_size=2))
    elif operation == "icons":
        tool["icons"] = [
            {
                "src": draw(
                    st.sampled_from(["https://example.com/a.png", "data:image/png;base64,AA=="])
                )
            }
        ]
    elif operation == "input_schema" and params is not None:
        properties = {
            p["name"]: {k: v for k, v in p.items() if k not in ("name", "required")}
            for p in params
            if isinstance(p, dict) and isinstance(p.get("name"), str)
        }
        del tool["parameters"]
        tool["input_schema"] = {"type": "object", "properties": properties}
    return operation


def _mutate_contract(draw: st.DrawFn, spec: dict[str, Any]) -> str:
    """One change to the package, server or types (in place)."""
    operation = draw(
        st.sampled_from(["package", "server", "type-add", "type-remove", "type-change"])
    )
    if operation == "package":
        spec["package"] = draw(st.sampled_from(["weather_mcp", "other_mcp", "json", "1bad"]))
    elif operation == "server":
        server = spec.setdefault("server", {})
        if isinstance(server, dict):
            key = draw(
                st.sampled_from(["name", "version", "title", "instructions", "implementation"])
            )
            server[key] = draw(
                st.sampled_from(["weather", "Weather", "the weather", "2.0", "mod:Cls", ""])
                | st.text(max_size=8)
            )
    else:
        types_map = spec.setdefault("types", {})
        if not isinstance(types_map, dict):
            return operation
        if operation == "type-add" or not types_map:
            types_map[draw(st.sampled_from(["Day", "Tree", "Extra", "bad name"]))] = draw(
                schemas(1)
            )
        elif operation == "type-remove":
            del types_map[draw(st.sampled_from(sorted(types_map)))]
        else:
            types_map[draw(st.sampled_from(sorted(types_map)))] = draw(schemas(1))
    return operation


def _damage(draw: st.DrawFn, spec: Any) -> str:
    """Random damage to any node (as the spec-loader fuzzer does)."""
    nodes = list(_paths(spec))
    if not nodes:
        return "damage: none"
    path = draw(st.sampled_from(nodes))
    parent = spec
    for key in path[:-1]:
        parent = parent[key]
    operation = draw(st.sampled_from(["delete", "random", "retype"]))
    if operation == "delete":
        del parent[path[-1]]
    elif operation == "random":
        parent[path[-1]] = draw(json_values)
    else:
        parent[path[-1]] = draw(st.sampled_from([None, 0, "", [], {}, True]))
    return f"damage: {operation}"


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


@st.composite
def evolved(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` after one to four changes."""
    spec = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["tool"] * 6 + ["contract"] * 2 + ["damage"]))
        if kind == "tool":
            event("mutation: " + _mutate_tool(draw, spec))
        elif kind == "contract":
            event("mutation: " + _mutate_contract(draw, spec))
        else:
            event("mutation: " + _damage(draw, spec))
    return spec


GARBAGE = [
    "",
    "tools: [",
    "mcpgen: 1\n\t- x",
    "- - -",
    "{{}",
    "mcpgen: 2\n",
    "null",
    "&a [*a]",
    "!!python/object:os.system x",
    "\ufeffmcpgen: 1",
    "a: b\na: c\n",
]


@st.composite
def pairs(draw: st.DrawFn) -> tuple[str, str]:
    """(OLD text, NEW text): mostly the base and an evolution of it, either way round;
    sometimes two evolutions, sometimes garbage on a side."""
    base = BASES[draw(st.sampled_from(sorted(BASES)))]
    shape = draw(st.sampled_from(["base->new"] * 4 + ["new->base"] * 2 + ["new->new", "garbage"]))
    event(f"pair: {shape}")
    if shape == "garbage":
        texts = [
            dump(base),
            dump(draw(evolved(base))),
            draw(st.sampled_from(GARBAGE) | st.text(max_size=40)),
        ]
        old, new = draw(st.permutations(texts))[:2]
        return old, new
    first = base if shape == "base->new" else draw(evolved(base))
    second = draw(evolved(base)) if shape != "new->base" else base
    if shape == "new->base":
        first, second = second, first
    return dump(first), dump(second)


def dump(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)


# --------------------------------------------------------------------------- checking


def record(text: str) -> None:
    """``event``, also callable from the plain (non-Hypothesis) test."""
    if currently_in_test_context():
        event(text)


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """A folder holding the weather example's schema files, where both specs of a
    pair are written (their ``$ref``s resolve as in the example)."""
    with tempfile.TemporaryDirectory(prefix="mcpgen-fuzz-diff-") as folder:
        shutil.copytree(WEATHER / "schemas", Path(folder) / "schemas")
        yield Path(folder)


def write(workdir: Path, old: str, new: str) -> tuple[Path, Path]:
    old_path, new_path = workdir / "old.yaml", workdir / "new.yaml"
    old_path.write_text(old, encoding="utf-8")
    new_path.write_text(new, encoding="utf-8")
    return old_path, new_path


def run_diff(old: Path, new: Path) -> DiffReport | DiffFailed:
    try:
        return diff_files(old, new)
    except DiffFailed as exc:
        return exc


def loaded(path: Path) -> ir.Contract:
    contract = load_contract(path).contract
    assert contract is not None
    return contract


def check_failure(failure: DiffFailed) -> None:
    message = str(failure)
    assert message.strip() and "Traceback" not in message, message
    if "invalid spec" in message:
        assert failure.diagnostics, message
    for diagnostic in failure.diagnostics:
        text = str(diagnostic)
        assert diagnostic.message.strip() and "Traceback" not in text, text


def check_report(report: DiffReport, new_text: str) -> None:
    lines = new_text.count("\n") + 2
    for located in report.changes:
        change = located.change
        assert change.rule in ALL_RULES, change
        rule = ALL_RULES[change.rule]
        assert change.severity is rule.severity and change.category == rule.category, change
        assert (change.category is not None) == (change.severity is Severity.BREAKING), change
        assert isinstance(change.tool, str) and isinstance(change.path, str), change
        assert isinstance(change.message, str) and change.message.strip(), change
        assert located.line is None or 1 <= located.line <= lines, (located, lines)
        record(f"rule {change.rule}")
    failing = [set(map(id, report.failing(level))) for level in sorted(Category, reverse=True)]
    assert failing[0] <= failing[1] <= failing[2], "source ⊆ call ⊆ behavior"
    for level in Category:
        render_text(report, level, color=True)
        document = json.loads(render_json(report, level))
        assert len(document["changes"]) == len(report.changes)
        for line in render_github(report, level):
            assert "\n" not in line and "\r" not in line, line


def surface(contract: ir.Contract) -> Any:
    """What a diff must notice: every published descriptor, and what each tool and the
    contract generate in Python (tools by name: their order in a listing means nothing)."""
    tools = sorted(
        (
            (
                descriptor(tool),
                tool.py_name,
                tool.class_name,
                tool.callback,
                tool.returns,
                tool.is_async,
                tool.timeout,
                [p.py_name for p in tool.parameters],
            )
            for tool in contract.tools
        ),
        key=lambda entry: json.dumps(entry, sort_keys=True, default=str),
    )
    server = contract.server
    return (
        contract.package,
        server.name,
        server.version,
        server.title,
        server.instructions,
        server.implementation,
        sorted(contract.types),
        tools,
    )


def check_pair(workdir: Path, old_text: str, new_text: str) -> DiffReport | DiffFailed:
    old, new = write(workdir, old_text, new_text)
    result = run_diff(old, new)
    if isinstance(result, DiffFailed):
        record("DiffFailed")
        check_failure(result)
        return result
    record("changes" if result.changes else "no change")
    check_report(result, new_text)
    # the rest compares the loaded contracts (loading is the slow part)
    old_contract, new_contract = loaded(old), loaded(new)
    assert diff_contracts(old_contract, old_contract) == [], "OLD against itself"
    assert diff_contracts(new_contract, new_contract) == [], "NEW against itself"
    backwards = diff_contracts(new_contract, old_contract)
    assert bool(backwards) == bool(result.changes), (result.changes, backwards)
    if surface(old_contract) != surface(new_contract):
        assert result.changes, "the contracts differ but no change is reported"
    return result


# --------------------------------------------------------------------------- the tests


def test_every_base_compared_with_itself_has_no_change(workdir: Path) -> None:
    for base in BASES.values():
        report = check_pair(workdir, dump(base), dump(base))
        assert isinstance(report, DiffReport) and report.changes == []


@fuzz_settings(weight=0.6)  # each pair loads four specs: ~0.1 s
@given(pair=pairs())
def test_diff_of_evolved_specs(workdir: Path, pair: tuple[str, str]) -> None:
    check_pair(workdir, *pair)


@st.composite
def reordered(draw: st.DrawFn, node: Any, key: str | None = None) -> Any:
    """``node`` with the keys of every mapping shuffled, except where order means
    something (``properties``: the positional order of an input schema)."""
    if isinstance(node, list):
        return [draw(reordered(item)) for item in node]
    if not isinstance(node, dict):
        return node
    keys = list(node) if key == "properties" else draw(st.permutations(list(node)))
    return {k: draw(reordered(node[k], k)) for k in keys}


@fuzz_settings(weight=0.1)
@given(data=st.data(), flow=st.booleans())
def test_a_spec_written_differently_has_no_change(
    workdir: Path, data: st.DataObject, flow: bool
) -> None:
    base = BASES[data.draw(st.sampled_from(sorted(BASES)))]
    spec = data.draw(evolved(base)) if data.draw(st.booleans()) else base
    text = dump(spec)
    other = yaml.safe_dump(
        data.draw(reordered(spec)),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=flow,
        width=data.draw(st.integers(20, 200)),
    )
    result = check_pair(workdir, text, other)
    if isinstance(result, DiffReport):
        assert result.changes == [], [c.change for c in result.changes]


CLI_CATEGORIES = ["source", "call", "behavior"]


@fuzz_settings(weight=0.1)
@given(
    pair=pairs(),
    fmt=st.sampled_from(["text", "json", "github"]),
    category=st.sampled_from(CLI_CATEGORIES),
)
def test_diff_through_the_cli(
    workdir: Path, pair: tuple[str, str], fmt: str, category: str
) -> None:
    old, new = write(workdir, *pair)
    result = CliRunner().invoke(
        main, ["diff", str(old), str(new), "--format", fmt, "--category", category]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exc_info,
        result.output,
    )
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output)
    assert "Traceback" not in result.output, result.output
    expected = run_diff(old, new)
    if isinstance(expected, DiffFailed):
        assert result.exit_code == 2 and "mcpgen diff: " in result.output, result.output
    else:
        failing = expected.failing(Category[category.upper()])
        assert result.exit_code == (1 if failing else 0), (result.exit_code, result.output)
        if fmt == "json":
            assert json.loads(result.stdout)["failed"] == bool(failing)
    record(f"exit {result.exit_code}")
