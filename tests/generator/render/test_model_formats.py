"""Models from schemas a model generator got wrong (found by the import fuzzer, when
datamodel-code-generator wrote models.py; pinned for mcpgen's own type mapping):

- a generated package needs only pydantic at run time, whatever ``format`` its
  output schemas and types use: formats whose pydantic types need another package
  (``email``/``idn-email`` → ``EmailStr`` needs email-validator, ``ulid`` needs
  python-ulid) are plain strings in the models;
- an optional field whose schema is a ``const`` list, object or float may be left
  out (datamodel-code-generator wrote ``x: list[Any] = None``, which
  ``mypy --strict`` refuses);
- integers mypy cannot hold in a ``Literal`` (beyond 64 bits) are typed ``int``
  (``Literal[1180591620717411303424]`` is an error to mypy), in the models and in
  the argument TypedDicts;
- ``patternProperties`` never make a model refuse what its schema allows
  (datamodel-code-generator wrote ``dict[constr(pattern=...), str]``: other keys
  refused, ``additionalProperties`` lost, and a call in an annotation, which
  ``mypy --strict`` refuses);
- a property named ``Config`` (what pydantic reads as a v1 config class) is a
  field, even in a closed model (which also sets ``model_config``: the package
  failed to import, "Config" and "model_config" cannot be used together);
- strings holding a line separator (U+2028, U+2029, NEL, ...) in enum values,
  consts, defaults (published only), titles and descriptions stay inside their literals (models.py
  was split at them: the build crashed with a SyntaxError).
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest
from helpers import build_package, import_package, mypy_strict
from pydantic import MISSING

FORMATS = ["email", "idn-email", "ulid"]


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) for m in ("email_validator", "ulid")),
    reason="email-validator or python-ulid is installed: the import would succeed anyway",
)
def test_formats_needing_other_packages_are_plain_strings(tmp_path: Path) -> None:
    properties = "\n".join(
        f"            {name.replace('-', '_')}: {{type: string, format: {name}}}"
        for name in FORMATS
    )
    spec = (
        textwrap.dedent("""\
        mcpgen: 1
        package: formats_mcp
        server: {name: formats, version: "1"}
        types:
          Contact:
            type: object
            properties:
        """)
        + properties
        + textwrap.dedent("""
        tools:
          - name: contact
            parameters: []
            output_schema: {$ref: "#/types/Contact"}
        """)
    )
    gen = build_package(spec, tmp_path, "formats_mcp")
    with import_package(gen, "formats_mcp") as package:  # client.py imports the models
        value = {
            "email": "a@example.com",
            "idn_email": "ü@example.com",
            "ulid": "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        }
        contact = package.models.Contact.model_validate(value)
        assert contact.model_dump() == value


def test_an_optional_const_field_is_optional(tmp_path: Path) -> None:
    spec = textwrap.dedent("""\
        mcpgen: 1
        package: consts_mcp
        server: {name: consts, version: "1"}
        tools:
          - name: t
            parameters: []
            output_schema:
              type: object
              properties:
                a: {const: []}
                b: {const: {}}
                c: {const: 1.5}
                d: {const: {k: [1]}}
                e: {const: x}
        """)
    gen = build_package(spec, tmp_path, "consts_mcp")
    with import_package(gen, "consts_mcp") as package:
        fields = package.models.TOutput.model_fields
        for name in "abcde":
            assert not fields[name].is_required(), name
        parsed = package.models.TOutput.model_validate({"a": [], "c": 1.5})
        assert parsed.a == [] and parsed.model_dump() == {"a": [], "c": 1.5}
    _mypy_strict(gen, "consts_mcp")


def test_pattern_properties_never_narrow_a_model(tmp_path: Path) -> None:
    spec = textwrap.dedent("""\
        mcpgen: 1
        package: patterns_mcp
        server: {name: patterns, version: "1"}
        types:
          Open: {type: object, patternProperties: {"^x_": {type: string}}}
          Mixed:
            type: object
            properties: {a: {type: integer}}
            patternProperties: {"^x_": {type: string}}
          Closed:
            type: object
            patternProperties: {"^x_": {type: string}}
            additionalProperties: false
          Typed:
            type: object
            patternProperties: {"^x_": {type: string}}
            additionalProperties: {type: integer}
        tools:
          - name: t
            parameters: []
            output_schema:
              type: object
              properties:
                open: {$ref: "#/types/Open"}
                mixed: {$ref: "#/types/Mixed"}
                closed: {$ref: "#/types/Closed"}
                typed: {$ref: "#/types/Typed"}
                inline: {type: object, patternProperties: {"^n": {type: integer}}}
                const_list: {const: [1]}
          - name: big
            parameters:
              - {name: size, enum: [1, 1180591620717411303424]}
              - {name: mixed, enum: [-9223372036854775808, a, true], required: false}
            output_schema:
              type: object
              properties:
                n: {enum: [-1180591620717411303423, 2]}
                m: {const: 9223372036854775808}
        """)
    gen = build_package(spec, tmp_path, "patterns_mcp")
    with import_package(gen, "patterns_mcp") as package:
        value = {
            "open": {"x_a": "s", "y": 1},
            "mixed": {"a": 1, "x_b": "s", "z": [1]},
            "closed": {"x_c": "s"},
            "typed": {"x_d": "s", "e": 2},
            "inline": {"n1": 1, "other": "s"},
            "const_list": [1],
        }
        parsed = package.models.TOutput.model_validate(value)
        assert parsed.model_dump() == value
        big = {"n": -1180591620717411303423, "m": 9223372036854775808}
        assert package.models.BigOutput.model_validate(big).model_dump() == big
    _mypy_strict(gen, "patterns_mcp")


def _mypy_strict(gen: Path, package: str) -> None:
    done = mypy_strict(gen / package, cwd=gen)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_property_named_config_is_a_field(tmp_path: Path) -> None:
    spec = textwrap.dedent("""\
        mcpgen: 1
        package: config_mcp
        server: {name: config, version: "1"}
        tools:
          - name: t
            parameters: []
            output_schema:
              type: object
              properties:
                Config: {type: integer, minimum: 0}
              additionalProperties: false
        """)
    gen = build_package(spec, tmp_path, "config_mcp")
    with import_package(gen, "config_mcp") as package:
        parsed = package.models.TOutput.model_validate({"Config": 1})
        assert parsed.model_dump(by_alias=True) == {"Config": 1}


def test_line_separators_inside_literals_stay_there(tmp_path: Path) -> None:
    spec = textwrap.dedent("""\
        mcpgen: 1
        package: separators_mcp
        server: {name: separators, version: "1"}
        tools:
          - name: t
            parameters: []
            output_schema:
              type: object
              properties:
                a: {enum: ["x\\u2028y", "z\\x85"]}
                b: {enum: [1, "p\\u2029"], type: array}
                c: {const: "q\\u2028r"}
                d: {type: string, default: "d\\u2028e\\x1c"}
                e: {type: string, description: "line\\u2028sep", title: "t\\x85"}
        """)
    gen = build_package(spec, tmp_path, "separators_mcp")
    with import_package(gen, "separators_mcp") as package:
        parsed = package.models.TOutput.model_validate({"a": "x\u2028y", "c": "q\u2028r"})
        assert parsed.a == "x\u2028y"
        # a default is published (contract.py), never filled into a parsed result
        schema = package.contract.TOOLS[0]["outputSchema"]
        assert schema["properties"]["d"]["default"] == "d\u2028e\x1c"
        assert parsed.d is MISSING
