"""Generator safety: strings from a spec reach generated code only as escaped
literals (``render/escape.py``). Hostile text in every string slot of a spec must
build, compile, and round-trip byte for byte into ``contract.TOOLS``.

Each build goes into ``tmp_path`` under a package name used once, so the
imported modules never clash; ``sys.path`` and ``sys.modules`` are restored.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.descriptors import descriptor
from mcpgen.spec.load import load_contract

NASTY = (
    "a\"\"\"b'''c \"q\" 's' {{ jinja }} {% if x %}{% endif %} {# c #} ${x} %s {0} "
    "back\\slash \\n \\x00 \\u2028 trailing\\\nnew\nline\r\ncr\rtab\tbell\x07 esc\x1b del\x7f "
    "ff\x0c vt\x0b nel\x85 ls\u2028 ps\u2029 bom\ufeff zwj\u200d rtl\u202e "
    "emoji 😀🧪👩‍👩‍👧 ñandú Ωμέγα 中文 עברית\U0010ffff end\\"
)
ENDS_WITH_QUOTE = 'ends with a quote"'
COUNTER = itertools.count()


def _package() -> str:
    return f"inj_pkg_{next(COUNTER)}"


@contextmanager
def _imported(out: Path, package: str) -> Iterator[ModuleType]:
    sys.path.insert(0, str(out.parent))
    try:
        importlib.invalidate_caches()
        yield importlib.import_module(f"{package}.contract")
    finally:
        sys.path.remove(str(out.parent))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


_NOT_RAW_IN_YAML = re.compile("[\x7f-\uffff]")


def spec_text(spec: dict[str, Any]) -> str:
    """``spec`` as JSON that PyYAML reads back exactly.

    ``json.dumps(ensure_ascii=True)`` is not enough: PyYAML rejects the surrogate
    pair escapes (``\\ud83d\\ude00``) JSON uses for astral characters. So every BMP
    character beyond ASCII is escaped (``\\x85``, ``\\u2028`` and ``\\u2029`` would
    otherwise be line breaks to YAML, C1 controls are not allowed raw) and astral
    characters stay raw UTF-8, which YAML accepts.
    """
    text = json.dumps(spec, ensure_ascii=False, indent=1)
    return _NOT_RAW_IN_YAML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _build(tmp_path: Path, spec: dict[str, Any]) -> Path:
    path = tmp_path / "tools.yaml"
    path.write_text(spec_text(spec), encoding="utf-8")
    result = build_spec(path, output=tmp_path / "out" / spec["package"])
    assert result.status == "written", [str(d) for d in result.diagnostics] or result.message
    out = tmp_path / "out" / spec["package"]
    for source in sorted(out.rglob("*.py")):
        compile(source.read_bytes(), str(source), "exec", dont_inherit=True)
    return out


def _expected(path: Path) -> list[dict[str, Any]]:
    loaded = load_contract(path)
    assert loaded.contract is not None
    return [descriptor(tool) for tool in loaded.contract.tools]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)  # key order and every code point kept


def _hostile_spec(package: str, text: str) -> dict[str, Any]:
    return {
        "mcpgen": 1,
        "package": package,
        "server": {
            "name": "srv " + text,
            "version": "1.0" + text,
            "title": text,
            "instructions": text,
        },
        "types": {
            "Thing": {
                "type": "object",
                "description": text,
                "properties": {text: {"type": "string", "default": text}},
            }
        },
        "tools": [
            {
                "name": "hostile.tool-1",
                "title": text,
                "description": text,
                "parameters": [
                    {
                        "name": text,
                        "type": "string",
                        "description": text,
                        "default": text,
                        "title": text,
                        "examples": [text],
                    },
                    {
                        "name": "choice",
                        "enum": [text, ENDS_WITH_QUOTE, "plain", "\\"],
                        "required": False,
                    },
                    {"name": "class", "type": "integer", "required": False},
                    {
                        "name": 'q"uote',
                        "type": "string",
                        "pattern": text.replace("\\", "") and "^a+$",
                        "required": False,
                    },
                    {"name": "self", "$ref": "#/types/Thing", "required": False},
                ],
                "meta": {text: text, "nested": [text, {"k": text}], "n": 1.5},
                "icons": [{"src": "data:image/png;base64,AAAA", "mime_type": text}],
            },
            {
                "name": "structured",
                "description": ENDS_WITH_QUOTE,
                "parameters": [{"name": "x-y", "type": "string", "enum": [text]}],
                "output_schema": {
                    "type": "object",
                    "description": text,
                    "properties": {text: {"type": "string"}},
                },
            },
            {
                "name": "positional",
                "title": ENDS_WITH_QUOTE,
                "parameters": [
                    {"name": "a.b", "type": "string", "default": text},
                    {"name": "def", "type": "string", "default": ENDS_WITH_QUOTE},
                ],
                "callback": "positional",
            },
        ],
    }


def test_hostile_strings_round_trip(tmp_path: Path) -> None:
    package = _package()
    spec = _hostile_spec(package, NASTY)
    out = _build(tmp_path, spec)
    expected = _expected(tmp_path / "tools.yaml")
    with _imported(out, package) as contract:
        assert _json(contract.TOOLS) == _json(expected)
        assert contract.TOOLS[0]["description"] == NASTY
        assert contract.TOOLS[0]["title"] == NASTY
        assert contract.TOOLS[0]["annotations"] == {"title": NASTY}
        properties = contract.TOOLS[0]["inputSchema"]["properties"]
        assert list(properties) == [NASTY, "choice", "class", 'q"uote', "self"]
        assert properties[NASTY]["default"] == NASTY
        assert properties["choice"]["enum"] == [NASTY, ENDS_WITH_QUOTE, "plain", "\\"]
        assert contract.TOOLS[0]["_meta"] == spec["tools"][0]["meta"]
        assert contract.TOOLS[0]["icons"] == [
            {"src": "data:image/png;base64,AAAA", "mimeType": NASTY}
        ]
        assert contract.TOOLS[1]["outputSchema"]["properties"] == {NASTY: {"type": "string"}}
        assert contract.SERVER_INFO == {
            "name": "srv " + NASTY,
            "version": "1.0" + NASTY,
            "title": NASTY,
        }
        assert contract.INSTRUCTIONS == NASTY
        # the whole package imports (models, server, client) with these strings in it
        package_module = importlib.import_module(package)
        assert package_module.__name__ == package


@pytest.mark.parametrize(
    "text",
    [
        '"""',
        "'''",
        '"',
        "'",
        "\\",
        "\\\\\\",
        "\n",
        "\r",
        "\r\n",
        "\t",
        "\x00".replace("\x00", "\x01"),
        "\u2028",
        "\x85",
        "\x0c",
        "{{ x }}",
        "{% raw %}",
        "}}",
        "#",
        "\\N{BULLET}",
        "\\u0041",
        '""""""',
        'x"""',
        "😀",
        "\ufeff",
        "\x1b[31m",
    ],
)
def test_single_hostile_fragment(tmp_path: Path, text: str) -> None:
    package = _package()
    spec = _hostile_spec(package, text)
    out = _build(tmp_path, spec)
    with _imported(out, package) as contract:
        assert _json(contract.TOOLS) == _json(_expected(tmp_path / "tools.yaml"))
        assert contract.TOOLS[0]["description"] == text
        importlib.import_module(package)


# -- property test -----------------------------------------------------------------

TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(description=TEXT, title=TEXT, enum_value=TEXT, default=TEXT, name=TEXT)
def test_arbitrary_text_round_trips(
    tmp_path: Path, description: str, title: str, enum_value: str, default: str, name: str
) -> None:
    package = _package()
    workdir = tmp_path / package
    workdir.mkdir()
    param_name = "p " + name  # never a plain identifier: always needs aliasing
    spec = {
        "mcpgen": 1,
        "package": package,
        "server": {"name": "s", "version": "1"},
        "tools": [
            {
                "name": "t",
                "title": title,
                "description": description,
                "parameters": [
                    {"name": param_name, "type": "string", "default": default},
                    {"name": "e", "enum": [enum_value], "required": False},
                ],
            },
            {
                "name": "u",
                "description": title,
                "parameters": [{"name": "q " + name, "type": "string", "enum": [enum_value]}],
                "callback": "positional",
            },
            {
                "name": "v",
                "title": description,
                "parameters": [{"name": "r " + name, "type": "string", "default": enum_value}],
                "output_schema": {
                    "type": "object",
                    "description": default,
                    "properties": {"s " + name: {"type": "string"}},
                },
            },
        ],
    }
    out = _build(workdir, spec)
    with _imported(out, package) as contract:
        tool = contract.TOOLS[0]
        assert _json(tool["description"]) == _json(description)
        assert _json(tool["title"]) == _json(title)
        assert _json(tool["annotations"]) == _json({"title": title})
        properties = tool["inputSchema"]["properties"]
        assert _json(list(properties)) == _json([param_name, "e"])
        assert _json(properties[param_name]["default"]) == _json(default)
        assert _json(properties["e"]["enum"]) == _json([enum_value])
        assert _json(contract.TOOLS) == _json(_expected(workdir / "tools.yaml"))


def test_hostile_spec_file_name(tmp_path: Path) -> None:
    """The spec's file name reaches a comment in every generated file."""
    package = _package()
    folder = tmp_path / 'dir """ {{ x }}'
    folder.mkdir()
    spec = folder / 'to"""ols\\{{x}}\n\u2028\x85😀.yaml'
    spec.write_text(spec_text(_hostile_spec(package, "x")), encoding="utf-8")
    out = tmp_path / "out" / package
    result = build_spec(spec, output=out)
    assert result.status == "written", [str(d) for d in result.diagnostics] or result.message
    for source in sorted(out.rglob("*.py")):
        text = source.read_text(encoding="utf-8")
        compile(text, str(source), "exec", dont_inherit=True)
        assert len(text.splitlines()[0]) == len(text.split("\n", 1)[0])  # no stray line break
    with _imported(out, package) as contract:
        assert [tool["name"] for tool in contract.TOOLS] == [
            "hostile.tool-1",
            "structured",
            "positional",
        ]


# -- commands that must not write ------------------------------------------------------


def test_check_and_validate_never_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(spec_text(_hostile_spec(_package(), "x")), encoding="utf-8")
    out = tmp_path / "never"
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    check = CliRunner().invoke(main, ["build", "--check", "-o", str(out), "tools.yaml"])
    assert check.exit_code == 1, check.output
    assert not out.exists()
    default_out = tmp_path / spec.stem  # not created either
    check_default = CliRunner().invoke(main, ["build", "--check", "tools.yaml"])
    assert check_default.exit_code == 1
    validate = CliRunner().invoke(main, ["validate", "tools.yaml"])
    assert validate.exit_code == 0, validate.output
    assert validate.stdout == "tools.yaml: valid (3 tool(s))\n"
    assert not out.exists()
    assert not default_out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert build_spec(spec, output=out, check=True).status == "stale"
    assert not out.exists()
