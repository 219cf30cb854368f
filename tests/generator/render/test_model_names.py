"""Model class names in ``models.py`` are the names mcpgen gives them: every ``types``
entry is a model of its own name and every ``…Output`` model is the tool's, whatever
datamodel-code-generator would have called them (it renames ``_x`` to ``FieldX``,
``foo_bar`` to ``FooBar``, ``Any`` to ``AnyModel``, and lets an inline model take a
type's name). Found by the import fuzzer (tests/fuzz/test_fuzz_import.py)."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import build_package, import_package, mypy_strict
from pydantic import BaseModel

from mcpgen.build import build_spec
from mcpgen.importer import spec_from_tools
from mcpgen.spec.load import load_spec_text
from mcpgen_runtime import ToolError


def _spec(types: dict[str, Any], tools: list[dict[str, Any]], package: str) -> str:
    return yaml.safe_dump(
        {
            "mcpgen": 1,
            "package": package,
            "server": {"name": "names", "version": "1"},
            "types": types,
            "tools": tools,
        },
        sort_keys=False,
    )


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_a_tool_named_with_a_leading_digit_keeps_its_output_model(tmp_path: Path) -> None:
    spec = _spec(
        {},
        [
            {
                "name": "0",
                "parameters": [{"name": "x", "type": "string"}],
                "output_schema": _obj(a={"type": "string"}),
            }
        ],
        "digit_mcp",
    )
    gen = build_package(spec, tmp_path, "digit_mcp")
    with import_package(gen, "digit_mcp") as package:  # imported client.py and server.py
        model = package.models._0Output
        assert issubclass(model, BaseModel) and list(model.model_fields) == ["a"]


NAMES = ["foo_bar", "_private", "model", "json", "X_1", "a1", "Day"]


def test_type_names_are_model_class_names(tmp_path: Path) -> None:
    types = {
        name: {**_obj(**{f"f_{i}": {"type": "integer"}}), "required": [f"f_{i}"]}
        for i, name in enumerate(NAMES)
    }
    tools = [
        {"name": f"t{i}", "parameters": [], "output_schema": {"$ref": f"#/types/{name}"}}
        for i, name in enumerate(NAMES)
    ]
    gen = build_package(_spec(types, tools, "typenames_mcp"), tmp_path, "typenames_mcp")
    with import_package(gen, "typenames_mcp") as package:
        for i, name in enumerate(NAMES):
            model = getattr(package.models, name)
            assert model.__name__ == name and list(model.model_fields) == [f"f_{i}"]
            assert getattr(package.models, f"T{i}Output") is model


def test_an_inline_model_never_takes_the_name_of_a_type(tmp_path: Path) -> None:
    types = {
        "Alpha": _obj(days=_obj(z={"type": "integer"})),  # an inline model DCG names "Days"
        "Days": {**_obj(count={"type": "string"}), "required": ["count"]},
    }
    tools = [
        {"name": "t", "parameters": [], "output_schema": {"$ref": "#/types/Days"}},
        {"name": "u", "parameters": [], "output_schema": {"$ref": "#/types/Alpha"}},
    ]
    gen = build_package(_spec(types, tools, "inline_mcp"), tmp_path, "inline_mcp")
    with import_package(gen, "inline_mcp") as package:
        assert list(package.models.TOutput.model_fields) == ["count"]
        assert package.models.TOutput is package.models.Days
        alpha = package.models.Alpha.model_validate({"days": {"z": 1}})
        assert alpha.model_dump(exclude_none=True) == {"days": {"z": 1}}
        assert type(alpha.days).__name__ != "Days"  # the inline model got another name


def test_a_type_may_share_its_name_with_a_pydantic_import(tmp_path: Path) -> None:
    types = {
        "BaseModel": {**_obj(n={"type": "integer", "minimum": 0}), "required": ["n"]},
        "Field": _obj(label={"type": "string", "maxLength": 3}),
    }
    tools = [
        {"name": "t", "parameters": [], "output_schema": {"$ref": "#/types/BaseModel"}},
        {"name": "u", "parameters": [], "output_schema": _obj(f={"$ref": "#/types/Field"})},
    ]
    gen = build_package(_spec(types, tools, "shadow_mcp"), tmp_path, "shadow_mcp")
    with import_package(gen, "shadow_mcp") as package:
        models = package.models
        assert models.TOutput is models.BaseModel and issubclass(models.BaseModel, BaseModel)
        assert models.BaseModel is not BaseModel and models.Field.__name__ == "Field"
        with pytest.raises(ValueError):
            models.BaseModel.model_validate({"n": "x"})  # pydantic's BaseModel still applies
        assert models.UOutput.model_validate({"f": {"label": "abc"}}).f.label == "abc"


@pytest.mark.parametrize("name", ["str", "list", "class", "None"])
def test_a_type_named_like_what_models_py_uses_is_refused(name: str, tmp_path: Path) -> None:
    loaded = load_spec_text(
        _spec({name: _obj()}, [], "reserved_mcp"), "tools.yaml", spec_dir=tmp_path
    )
    assert loaded.contract is None
    assert any(d.path == f"types.{name}" and "models.py" in d.message for d in loaded.errors), [
        str(d) for d in loaded.diagnostics
    ]


# Every name that typing, pydantic, the runtime or the generated modules give to
# models.py, server.py or client.py: each may name a `types` entry.
IMPORTED_NAMES = {
    "Required": {**_obj(a={"type": "string"}), "required": ["a"]},
    "TypedDict": _obj(r={"$ref": "#/types/Required"}),
    "NotRequired": _obj(n={"type": "integer"}),
    "Any": _obj(x={"type": "integer"}),
    "Annotated": {"type": "string", "minLength": 1},
    "TypeAlias": {"type": "array", "items": {"$ref": "#/types/Annotated"}},
    "Literal": {"enum": ["a", "Literal"]},
    "TYPE_CHECKING": {"type": "boolean"},
    "cast": {"type": "integer"},
    "Mapping": {"type": "object", "additionalProperties": {"type": "integer"}},
    "Sequence": {"type": "array", "items": {"type": "integer"}},
    "App": {"enum": ["App", "Any"]},
    "Binding": {"type": "string"},
    "Unset": {"type": "string"},
    "UNSET": {"type": "number"},
    "Field": _obj(f={"type": "string"}),
    "BaseModel": _obj(b={"type": "string"}),
    "ConfigDict": _obj(c={"type": "string"}),
    "MISSING": {"type": ["string", "null"]},
    "RootModel": _obj(m={"type": "string"}),
}

TYPING_IMPL = """
from typing_mcp.models import Literal, TArgs, TOutput, UArgs, UOutput
from typing_mcp.server import NamesServer


class Impl(NamesServer):
    def t(self, args: TArgs) -> TOutput:
        literal: Literal = args["Literal"]
        return TOutput.model_validate({**args, "Literal": literal})

    def u(self, args: UArgs) -> UOutput:
        return UOutput.model_validate({"k": 1})
"""


def test_a_type_may_take_any_name_that_typing_or_the_generated_modules_import(
    tmp_path: Path,
) -> None:
    """Before: `Required`, `TypedDict`, `Any`, `Literal` were refused as type names;
    names the generated server.py and client.py import (`App`, `cast`, `UNSET`, …)
    shadowed those imports there."""
    params = [{"name": name, "$ref": f"#/types/{name}"} for name in IMPORTED_NAMES]
    output = {"type": "object", "properties": {n: {"$ref": f"#/types/{n}"} for n in IMPORTED_NAMES}}
    tools = [
        {"name": "t", "parameters": params, "output_schema": output},
        # a root keyed by additionalProperties only: a pydantic RootModel
        {"name": "u", "parameters": [], "output_schema": {"$ref": "#/types/Mapping"}},
    ]
    gen = build_package(_spec(IMPORTED_NAMES, tools, "typing_mcp"), tmp_path, "typing_mcp")
    (gen / "typing_impl.py").write_text(TYPING_IMPL, encoding="utf-8")
    done = mypy_strict(gen / "typing_mcp", gen / "typing_impl.py", cwd=gen)
    assert done.returncode == 0, done.stdout + done.stderr
    sent: dict[str, Any] = {
        "Required": {"a": "r"},
        "TypedDict": {"r": {"a": "t"}},
        "NotRequired": {"n": 1},
        "Any": {"x": 2},
        "Annotated": "an",
        "TypeAlias": ["x", "y"],
        "Literal": "Literal",
        "TYPE_CHECKING": True,
        "cast": 3,
        "Mapping": {"k": 4},
        "Sequence": [5],
        "App": "Any",
        "Binding": "b",
        "Unset": "u",
        "UNSET": 1.5,
        "Field": {"f": "f"},
        "BaseModel": {"b": "b"},
        "ConfigDict": {"c": "c"},
        "MISSING": None,
        "RootModel": {"m": "m"},
    }
    with import_package(gen, "typing_mcp") as package:
        import typing_impl

        models = package.models
        assert models.Required.__name__ == "Required" and issubclass(models.Any, BaseModel)
        assert models.Literal == typing.Literal["a", "Literal"]
        with package.NamesClient.in_memory(typing_impl.Impl()) as client:
            # parameters in the spec's order, by their Python names
            py_names = list(inspect.signature(client.t).parameters)[: len(sent)]
            out = client.t(*sent.values())
            assert out.model_dump(exclude_unset=True, mode="json") == sent
            assert client.u().root == {"k": 1} and issubclass(models.RootModel, BaseModel)
            attr = next(n for n, f in type(out).model_fields.items() if f.alias == "Required")
            assert isinstance(getattr(out, attr), models.Required)
            with pytest.raises(ToolError, match="Literal: expected one of"):
                client.t(**dict(zip(py_names, {**sent, "Literal": "b"}.values(), strict=True)))


WRAPPED_SPEC = """\
    mcpgen: 1
    package: wrapped_mcp
    server: {name: wrapped, version: 1.0.0}
    types:
      StructuredValue: {type: string, enum: [a, b]}
    tools:
      - name: days
        parameters:
          - {name: n, type: integer}
        output_schema: {type: array, items: {type: integer}}
      - name: pick
        parameters:
          - {name: x, $ref: "#/types/StructuredValue"}
"""


def test_a_type_may_share_its_name_with_the_runtime_s_structured_value(tmp_path: Path) -> None:
    """Before: a type named `StructuredValue` shadowed the runtime's, which client.py
    imports for a result of any type (mypy: "Missing type arguments")."""
    gen = build_package(WRAPPED_SPEC, tmp_path, "wrapped_mcp")
    assert (
        "import StructuredValue as StructuredValue_"
        in (gen / "wrapped_mcp" / "client.py").read_text()
    )
    done = mypy_strict(gen / "wrapped_mcp", cwd=gen)
    assert done.returncode == 0, done.stdout + done.stderr


def test_module_names_hold_every_name_server_and_client_bind(tmp_path: Path) -> None:
    """`localnames.MODULE_NAMES` must list what server.py and client.py bind at module
    level (imports, assignments), else a type of that name would be shadowed there."""
    from mcpgen.render.localnames import MODULE_NAMES

    spec = Path(__file__).resolve().parents[3] / "examples" / "weather" / "tools.yaml"
    gen = tmp_path / "gen"
    assert build_spec(spec, output=gen / "weather_mcp").ok
    # a result of any type: client.py imports StructuredValue too
    wrapped = build_package(WRAPPED_SPEC, tmp_path / "wrapped", "wrapped_mcp")
    bound: set[str] = set()
    modules = [gen / "weather_mcp" / m for m in ("server.py", "client.py")]
    for path in [*modules, wrapped / "wrapped_mcp" / "client.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "models":
                continue  # the types themselves
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.col_offset == 0:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.FunctionDef) and node.col_offset == 0:
                bound.add(node.name)
    generated = {"annotations", "WeatherServer", "WeatherClient", "AsyncWeatherClient"}
    generated |= {"WrappedServer", "WrappedClient", "AsyncWrappedClient"}
    public = {n for n in bound - generated if not n.startswith("_")}
    assert public <= MODULE_NAMES, sorted(public - MODULE_NAMES)


def test_import_keeps_a_definition_named_like_a_typing_import(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Any"}},
        "$defs": {"Any": {"type": "string"}},
    }
    spec = spec_from_tools(
        [{"name": "t", "inputSchema": schema}],
        server_info={"name": "x", "version": "1"},
        package="anyname_mcp",
    )
    # `Any` is a type name like another (models.py imports typing's under an alias)
    data = yaml.safe_load(spec.text)
    assert data["types"] == {"Any": {"type": "string"}}
    (tmp_path / "tools.yaml").write_text(spec.text)
    result = build_spec(tmp_path / "tools.yaml", output=tmp_path / "gen" / "anyname_mcp")
    assert result.ok, [str(d) for d in result.diagnostics]


@pytest.mark.parametrize(
    "loop", [{"$ref": "#/types/T"}, {"allOf": [{"$ref": "#/types/T"}]}], ids=["ref", "allOf"]
)
def test_a_type_that_is_a_reference_loop_is_refused(loop: dict[str, Any], tmp_path: Path) -> None:
    """No model can be built for it: before, `mcpgen build` crashed with
    datamodel-code-generator's traceback (or wrote no class at all)."""
    types = {"T": loop, "U": _obj(t={"$ref": "#/types/T"})}
    loaded = load_spec_text(_spec(types, [], "loop_mcp"), "tools.yaml", spec_dir=tmp_path)
    assert loaded.contract is None
    assert any(d.path == "types.T" and "loop" in d.message for d in loaded.errors), [
        str(d) for d in loaded.diagnostics
    ]


NAMES_SPEC = Path(__file__).resolve().parents[2] / "fixtures" / "names" / "tools.yaml"

NAMES_IMPL = """
from typing import Any

from names_mcp.models import StrArgs, StrOutput
from names_mcp.server import NamesServer


class Impl(NamesServer):
    def list_(self, args: Any) -> list[Any]:
        return sorted(args)

    def dict_(self, float_: int | float, f: Any, m: str) -> dict[str, Any]:
        return {"float": float_, "f": f, "m": m}

    def str_(self, args: StrArgs) -> StrOutput:
        return StrOutput.model_validate({
            "from": "x", "str": "s", "int": 1, "list": ["l"], "Config": "c", "copy": 2,
            "fix": 3, "\\ufb01x": "ligature", "Day": "d", "StrOutput": "o", "max-results": 4,
        })

    def type(self, fix: Any) -> dict[str, Any]:
        return dict(fix)

    def cast_(self) -> str:
        return "cast"

    def Any_(self) -> str:
        return "Any"

    def float_(self, x: int | float) -> int | float:
        return x

    def int_(self, x: int) -> int:
        return x
"""


def test_legal_names_build_type_check_and_serve(tmp_path: Path) -> None:
    """Before: a tool ``str`` made later ``-> str`` annotations of the class mean the
    method, a parameter ``UNSET`` broke its own ``is not UNSET`` test, output
    properties ``ﬁx`` and ``fix`` (one name after NFKC) lost one, ``Config`` broke the
    model: mypy --strict failed or the package did not import."""
    from mcpgen.build import build_spec

    gen = tmp_path / "gen"
    result = build_spec(NAMES_SPEC, output=gen / "names_mcp")
    assert result.ok, [str(d) for d in result.diagnostics]
    (gen / "names_impl.py").write_text(NAMES_IMPL, encoding="utf-8")
    done = mypy_strict(gen / "names_mcp", gen / "names_impl.py", cwd=gen)
    assert done.returncode == 0, done.stdout + done.stderr
    with import_package(gen, "names_mcp") as package:
        import names_impl

        with package.NamesClient.in_memory(names_impl.Impl()) as client:
            assert client.list_(["b", "a"], "s", UNSET_="u") == ["UNSET", "list", "str"]
            out = client.str_(True)
            assert out.model_dump(by_alias=True, exclude_unset=True) == {
                "from": "x",
                "str": "s",
                "int": 1,
                "list": ["l"],
                "Config": "c",
                "copy": 2,
                "fix": 3,
                "\ufb01x": "ligature",
                "Day": "d",
                "StrOutput": "o",
                "max-results": 4,
            }
            both = {"fix": 1, "\ufb01x": "two"}
            assert client.type(both) == both
            assert client.int_(2**70) == 2**70 and client.float_(3) == 3


def test_a_tools_own_defs_get_python_names_of_their_own(tmp_path: Path) -> None:
    """A tool schema's ``$defs`` keys are JSON Schema names, not Python ones, and are
    local to that schema. Found by the import fuzzer: ``a-b`` was written as the alias
    ``a-b: TypeAlias`` (a syntax error), ``str`` shadowed the builtin for every later
    annotation, ``OneArgs`` collided with the tool's own TypedDict, and a second tool's
    ``Item`` (an integer) was typed as the first tool's (a string); an alias ``Ünï``
    was declared after the functional TypedDict that evaluates it."""
    defs = {
        "Item": {"type": "string"},
        "a-b": {"type": "integer"},
        "class": _obj(q={"type": "string"}),
        "str": {"type": "integer"},
        "OneArgs": {"type": "boolean"},
        "__x": {"type": "number"},
        "Same": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "Ünï": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    }
    one = {
        "type": "object",
        "$defs": defs,
        "properties": {name: {"$ref": f"#/$defs/{name}"} for name in defs},
    }
    two = {
        "type": "object",
        "$defs": {
            "Item": {"type": "integer"},
            "Same": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "a-b": {"type": "integer"},
        },
        "properties": {
            "x": {"$ref": "#/$defs/Item"},
            "s": {"$ref": "#/$defs/Same"},
            "y": {"$ref": "#/$defs/a-b"},
        },
    }
    tools = [{"name": "one", "input_schema": one}, {"name": "two", "input_schema": two}]
    gen = build_package(_spec({}, tools, "localdefs_mcp"), tmp_path, "localdefs_mcp")
    with import_package(gen, "localdefs_mcp") as package:
        models = package.models
        one_hints = typing.get_type_hints(models.OneArgs)
        two_hints = typing.get_type_hints(models.TwoArgs)
    assert one_hints["Item"] is str and one_hints["a-b"] is int and one_hints["str"] is int
    assert one_hints["OneArgs"] is bool and one_hints["__x"] == int | float
    assert typing.get_type_hints(one_hints["class"]) == {"q": str}
    assert one_hints["Same"] == list[str] and one_hints["Ünï"] == int | str
    # same name, different meaning: a type of its own; same name and content: shared
    assert two_hints["x"] is int and two_hints["s"] == list[int] and two_hints["y"] is int
    text = (gen / "localdefs_mcp" / "models.py").read_text(encoding="utf-8")
    assert "\nAB: TypeAlias = int\n" in text and "\nTwoItem: TypeAlias = int\n" in text
    checked = mypy_strict("localdefs_mcp", cwd=gen)
    assert checked.returncode == 0, checked.stdout


def test_an_enum_with_a_float_member_keeps_the_other_members(tmp_path: Path) -> None:
    """``enum: ["", 2.5, "1"]`` was typed ``Any``: a Literal cannot hold the float, but
    the strings still can, beside ``int | float`` (found by the import fuzzer)."""
    tools = [
        {
            "name": "pick",
            "parameters": [{"name": "v", "enum": ["", 2.5, "1", 3]}, {"name": "w", "const": 0.5}],
        }
    ]
    gen = build_package(_spec({}, tools, "floatenum_mcp"), tmp_path, "floatenum_mcp")
    with import_package(gen, "floatenum_mcp") as package:
        hints = typing.get_type_hints(package.models.PickArgs)
    assert hints["v"] == typing.Literal["", "1", 3] | int | float
    assert hints["w"] == int | float
