"""Fuzzing ``mcpgen import``: ``import_server`` (what the command calls) run against a
fake stdio server (tests/fixtures/fake_tools_server.py) whose ``tools/list`` answer
is generated: tool names, titles and descriptions with odd Unicode and control
characters; input schemas of many shapes (nested objects, arrays, unions, enums,
consts, defaults, patterns, formats, ``$defs`` and references, closed and open
objects, root annotations, keywords a spec does not know); output schemas;
annotations with hints of any type; icons; execution; ``_meta``; a ``serverInfo``
with odd names and versions; listings split into pages.

The property: the import either fails with ``ImportFailed`` and a clear message,
or its spec loads and publishes the tools the server listed (a generated client
accepts the server with ``verify="strict"``), builds, and the package imports; a
sample of the built packages also passes ``mypy --strict`` (one mypy run over many
packages, since mypy is slow).

Left out on purpose, as other work changes them (see the report of this fuzzer):
line breaks and control characters in ``serverInfo`` (written into the spec's
header), ``$ref``s to other files or URLs and ``$dynamicRef`` (never retrieved),
``x-python-*`` keys, and patterns that backtrack (the ECMA-262 engine). Patterns
come from a fixed list that Python's ``re`` and ECMA-262 read alike. A refusal
because a ``# differs from the live listing`` comment quotes a character YAML
does not allow (a control character in a title) is tolerated, and counted, as a
known bug of the same header and comment writing.

Building is slow (datamodel-code-generator, black, mypy), so the build test runs
fewer examples, drawn from "tame" listings that avoid what a spec refuses on
purpose (invalid names, bad defaults, unknown keywords, reference loops).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzz_settings import EXAMPLES, fuzz_settings
from helpers import import_package
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from mcpgen.build import build_spec
from mcpgen.descriptors import descriptor
from mcpgen.importer import ImportedSpec, ImportFailed, import_server
from mcpgen.spec.load import load_spec_text
from mcpgen_runtime.contract.compare import Severity, compare_tools

ROOT = Path(__file__).resolve().parents[2]
FAKE_SERVER = ROOT / "tests" / "fixtures" / "fake_tools_server.py"
IMPORT_TIMEOUT = 20.0  # seconds per request to the fake server (the machine is shared)
MYPY_BATCH = 40  # packages per mypy run

# --------------------------------------------------------------------------- strategies

# Text a server may send: any Unicode (control characters, line breaks, bidi marks,
# noncharacters, astral planes), plus strings that mean something to YAML, Python,
# Jinja2 or a terminal.
TRICKY = [
    "",
    " ",
    "yes",
    "no",
    "null",
    "~",
    "0x1F",
    "1e3",
    "- item",
    "# hash",
    "a: b",
    "'",
    '"',
    '"""',
    "'''",
    "\\",
    "{{ x }}",
    "{% if %}",
    "${x}",
    "\t",
    "\n",
    "\r\n",
    "\x00",
    "\x1b]0;title\x07",
    "\x85",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\u202e",
    "\ud7ff",
    "\U0001f600",
    "é",
    "\uffff",
    "--- ",
    "...",
    "&a",
    "*a",
    "!!python/object",
    "\ud800",
]  # a lone surrogate: valid JSON text, no YAML can hold it
odd_text = (
    st.text(max_size=16)
    | st.sampled_from(TRICKY)
    | st.lists(st.sampled_from(TRICKY) | st.text(max_size=3), max_size=4).map("".join)
)
# serverInfo strings: as odd, but only characters YAML allows raw in a comment, and no
# line breaks (left out: the header that quotes them is being rewritten)
HEADER_UNSAFE = re.compile(
    "[^\t\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
header_text = odd_text.map(lambda text: HEADER_UNSAFE.sub("", text))

WIRE_NAMES = [
    "search",
    "get_forecast",
    "get-forecast",
    "alerts.search",
    "a",
    "A",
    "x" * 128,
    "class",
    "import",
    "self",
    "None",
    "list_tools",
    "close",
    "stdio",
    "in_memory",
    "request",
    "start_search",
    "_private",
    "__init__",
    "1st",
    "a__b",
    "a_b",
    "a-b",
    "Tool",
    "json",
    "typing",
]
tool_names = st.sampled_from(WIRE_NAMES) | st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True)
CLIENT_NAMES = {"list_tools", "close", "stdio", "in_memory", "request", "start_search"}
tame_tool_names = tool_names.filter(lambda name: name not in CLIENT_NAMES)
odd_names = odd_text | st.sampled_from(["a b", "x" * 129, "ä", "a/b"])
PROPERTY_NAMES = [
    "city",
    "days",
    "q",
    "a",
    "b",
    "class",
    "self",
    "from",
    "None",
    "True",
    "a-b",
    "a_b",
    "a.b",
    "1x",
    "_",
    "__x",
    "model_config",
    "model_fields",
    "schema",
    "json",
    "dict",
    "copy",
    "fields",
    "validate",
    "Config",
    "args",
    "ctx",
    "on_progress",
    "timeout",
    "name",
    "required",
    "type",
    "ünï",
    "$x",
    "",
    " ",
    "x" * 80,
]
property_names = st.sampled_from(PROPERTY_NAMES) | st.from_regex(
    r"[a-z][a-z0-9_]{0,8}", fullmatch=True
)
# Read alike by Python's re and ECMA-262, none backtracking badly; two invalid in both.
VALID_PATTERNS = [
    "^[A-Z]{4}$",
    "^[a-z]+$",
    "\\d+",
    "^\\w+@\\w+\\.\\w+$",
    "^(a|b)$",
    "x",
    "^$",
    "[^/]+",
    "^\\S*$",
]
PATTERNS = [*VALID_PATTERNS, "(", "[a-"]
FORMATS = [
    "date",
    "date-time",
    "time",
    "email",
    "uri",
    "uuid",
    "ipv4",
    "hostname",
    "duration",
    "regex",
    "made-up",
]
TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"]

numbers = (
    st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, -0.0, 1.5, 1e308, 5e-324, 2**53 + 1])
)
scalars = st.none() | st.booleans() | numbers | odd_text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_text, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def schemas(draw: st.DrawFn, defs: tuple[str, ...], depth: int = 0, tame: bool = False) -> Any:
    """A JSON Schema a server might publish; ``defs`` are the names ``#/$defs/…`` may use.
    ``tame``: nothing a spec refuses on purpose (bad defaults, unknown keywords)."""
    kinds = ["string", "integer", "number", "boolean", "null", "enum", "const", "any", "typelist"]
    if depth < 3:
        kinds += ["object", "object", "array", "anyOf", "oneOf", "allOf", "nullable"]
    if defs:
        kinds += ["ref", "ref"]
    kind = draw(st.sampled_from(kinds))
    schema: dict[str, Any]
    if kind == "string":
        schema = {"type": "string"}
        if draw(st.integers(0, 3)) == 0:
            schema["pattern"] = draw(st.sampled_from(VALID_PATTERNS if tame else PATTERNS))
        if draw(st.integers(0, 3)) == 0:
            schema["format"] = draw(st.sampled_from(FORMATS))
        if draw(st.integers(0, 3)) == 0:
            schema["minLength"] = draw(st.integers(0, 3))
            schema["maxLength"] = draw(st.integers(0, 20))
    elif kind in ("integer", "number"):
        schema = {"type": kind}
        for key in ("minimum", "maximum", "exclusiveMinimum", "multipleOf"):
            if draw(st.integers(0, 4)) == 0:
                schema[key] = draw(
                    numbers if key != "multipleOf" else st.sampled_from([1, 2, 0.5, 0.01])
                )
    elif kind in ("boolean", "null"):
        schema = {"type": kind}
    elif kind == "typelist":
        schema = {
            "type": draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True))
        }
    elif kind == "enum":
        schema = {"enum": draw(st.lists(scalars, min_size=1, max_size=4))}
        if draw(st.booleans()):
            schema["type"] = draw(st.sampled_from(TYPES))
    elif kind == "const":
        schema = {"const": draw(json_values)}
    elif kind == "any":
        schema = draw(st.sampled_from([{}, {"description": "anything"}, {"title": "T"}]))
    elif kind == "object":
        properties = draw(
            st.dictionaries(property_names, schemas(defs, depth + 1, tame), max_size=3)
        )
        schema = {"type": "object", "properties": properties}
        if properties and draw(st.booleans()):
            schema["required"] = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        choice = draw(st.integers(0, 5))
        if choice == 0:
            schema["additionalProperties"] = False
        elif choice == 1:
            schema["additionalProperties"] = draw(schemas(defs, depth + 1, tame))
        elif choice == 2:
            schema["patternProperties"] = {"^x_": {"type": "string"}}
    elif kind == "array":
        schema = {"type": "array", "items": draw(schemas(defs, depth + 1, tame))}
        if draw(st.integers(0, 3)) == 0:
            schema["minItems"] = draw(st.integers(0, 3))
        if draw(st.integers(0, 4)) == 0:
            schema["uniqueItems"] = True
    elif kind == "allOf" and tame:
        # satisfiable: objects whose properties do not overlap (a model generator merges
        # the branches; for contradictory ones it writes code mypy refuses, see the report)
        properties = draw(
            st.dictionaries(property_names, schemas(defs, depth + 1, tame), min_size=1, max_size=4)
        )
        names = sorted(properties)
        cut = draw(st.integers(0, len(names)))
        schema = {
            kind: [
                {"type": "object", "properties": {n: properties[n] for n in part}}
                for part in (names[:cut], names[cut:])
                if part
            ]
        }
    elif kind in ("anyOf", "oneOf", "allOf"):
        schema = {kind: draw(st.lists(schemas(defs, depth + 1, tame), min_size=1, max_size=3))}
    elif kind == "nullable":
        schema = {"anyOf": [draw(schemas(defs, depth + 1, tame)), {"type": "null"}]}
    else:
        schema = {"$ref": f"#/$defs/{draw(st.sampled_from(defs))}"}
    extra = draw(st.integers(0, 39))
    if extra < 4:
        schema["description"] = draw(odd_text)
    elif extra < 8:
        schema["title"] = draw(odd_text)
    elif extra < 14:
        default = draw(defaults(schema, tame))
        if default is not NO_DEFAULT:
            schema["default"] = default
    elif extra < 16:
        schema["examples"] = draw(st.lists(json_values, max_size=2))
    elif extra < 18:
        schema["deprecated"] = draw(st.booleans())
    elif extra == 18 and not tame:  # keywords a spec refuses, or accepts as annotations
        schema[draw(st.sampled_from(["nullable", "x-order", "readOnly", "$comment"]))] = draw(
            scalars
        )
    return schema


NO_DEFAULT = object()
BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "multipleOf")


@st.composite
def defaults(draw: st.DrawFn, schema: dict[str, Any], tame: bool) -> Any:
    """A default for ``schema``: mostly one that fits it, sometimes anything; a tame one
    only when it is sure to fit (else ``NO_DEFAULT``)."""
    kind = schema.get("type")
    fitting: st.SearchStrategy[Any] | None = None
    if "enum" in schema:
        fitting = st.sampled_from(schema["enum"]) if "type" not in schema else None
    elif "const" in schema:
        fitting = st.just(schema["const"])
    elif kind == "string" and not {"pattern", "format"} & set(schema):
        low = schema.get("minLength", 0)
        fitting = st.text(min_size=low, max_size=max(low, schema.get("maxLength", 5)))
    elif kind == "integer" and not set(BOUNDS) & set(schema):
        fitting = st.integers(-(2**70), 2**70)
    elif kind == "boolean":
        fitting = st.booleans()
    elif kind == "null":
        fitting = st.none()
    elif kind == "array" and not schema.get("minItems"):
        fitting = st.just([])
    if fitting is None or (not tame and draw(st.integers(0, 4)) == 0):
        return NO_DEFAULT if tame else draw(json_values)
    return draw(fitting)


DEF_NAMES = [
    "Point",
    "Item",
    "Args",
    "Output",
    "SearchArgs",
    "Model",
    "class",
    "a-b",
    "1x",
    "Ünï",
    "Tree",
    "Day",
]


@st.composite
def object_schemas(draw: st.DrawFn, *, output: bool = False, tame: bool = False) -> Any:
    """A root schema: usually an object of properties, with ``$defs`` and root
    annotations; sometimes something a spec cannot hold."""
    shape = (
        "object"
        if tame
        else draw(st.sampled_from(["object"] * 27 + ["not-object", "no-type", "bad"]))
    )
    if shape == "bad":
        return draw(json_values)
    defs = tuple(draw(st.lists(st.sampled_from(DEF_NAMES), max_size=2, unique=True)))
    if shape == "not-object":
        return draw(schemas(defs))
    properties = draw(st.dictionaries(property_names, schemas(defs, tame=tame), max_size=4))
    schema: dict[str, Any] = {} if shape == "no-type" else {"type": "object"}
    schema["properties"] = properties
    if properties and draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
    if draw(st.integers(0, 2)) == 0:
        schema["additionalProperties"] = draw(st.booleans())
    if defs:
        container = draw(st.sampled_from(["$defs", "$defs", "definitions"]))
        schema[container] = {  # tame: a definition refers only to earlier ones, no loops
            name: draw(schemas(defs[:index] if tame else defs, 2, tame))
            for index, name in enumerate(defs)
        }
        if container == "definitions":  # the references must say so too
            schema = json.loads(json.dumps(schema).replace('"#/$defs/', '"#/definitions/'))
    for key in ("title", "$schema", "$comment", "description"):
        if draw(st.integers(0, 5)) == 0:
            schema[key] = (
                draw(odd_text)
                if key != "$schema"
                else "https://json-schema.org/draft/2020-12/schema"
            )
    if output and draw(st.integers(0, 4)) == 0:
        schema["required"] = sorted(properties)[:1]
    return schema


HINT_KEYS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]


@st.composite
def tools(draw: st.DrawFn, tame: bool = False) -> dict[str, Any]:
    odd = not tame and draw(st.integers(0, 9)) == 0
    tool: dict[str, Any] = {
        "name": draw(odd_names if odd else tame_tool_names if tame else tool_names),
        "inputSchema": draw(object_schemas(tame=tame)),
    }
    optional = {
        "title": odd_text,
        "description": odd_text | st.text(max_size=200) | (json_values if not tame else odd_text),
        "outputSchema": object_schemas(output=True, tame=tame),
        "annotations": st.fixed_dictionaries(
            {}, optional={"title": odd_text, **{key: st.booleans() | scalars for key in HINT_KEYS}}
        ),
        "icons": st.lists(
            st.fixed_dictionaries(
                {
                    "src": st.sampled_from(
                        [
                            "https://example.com/i.png",
                            "data:image/png;base64,AA==",
                            "javascript:alert(1)",
                            "",
                        ]
                    )
                    | odd_text
                },
                optional={
                    "mimeType": st.sampled_from(["image/png", "image/svg+xml"]) | odd_text,
                    "sizes": st.lists(st.sampled_from(["48x48", "any", "x"]), max_size=2)
                    | json_values,
                    "theme": st.sampled_from(["light", "dark", "dim"]),
                },
            )
            | json_values,
            max_size=2,
        ),
        "execution": st.fixed_dictionaries(
            {},
            optional={
                "taskSupport": st.sampled_from(["forbidden", "optional", "required", "maybe"])
            },
        )
        | json_values,
        "_meta": st.dictionaries(odd_text, json_values, max_size=3) | json_values,
    }
    for key, strategy in optional.items():
        if draw(st.integers(0, 2)) == 0:
            tool[key] = draw(strategy)
    if draw(st.integers(0, 19)) == 0:
        tool[draw(st.sampled_from(["x-extra", "unknownMember"]))] = draw(json_values)
    return tool


@st.composite
def listings(draw: st.DrawFn, tame: bool = False) -> dict[str, Any]:
    """A server's answers; ``tame`` ones avoid what a spec refuses on purpose, so that
    more of them get as far as a build."""
    server_info: dict[str, Any] = {
        "name": draw(
            st.sampled_from(["weather", "mcp-servers/everything", "1 odd", "class", "json", ""])
            | header_text
        ),
        "version": draw(st.sampled_from(["1.0.0", "", "v2"]) | header_text),
    }
    if draw(st.booleans()):
        server_info["title"] = draw(odd_text)
    unique = tame or draw(st.integers(0, 9)) > 0  # duplicate names, now and then
    empty_allowed = not tame and draw(st.integers(0, 9)) == 0  # no tools, now and then
    tool_list = draw(
        st.lists(
            tools(tame),
            min_size=0 if empty_allowed else 1,
            max_size=4,
            unique_by=(lambda tool: str(tool["name"])) if unique else None,
        )
    )
    listing: dict[str, Any] = {"serverInfo": server_info, "tools": tool_list}
    if draw(st.integers(0, 3)) == 0:
        listing["instructions"] = draw(odd_text)
    if len(tool_list) > 1 and draw(st.booleans()):
        listing["page_size"] = draw(st.integers(1, len(tool_list)))
    return listing


# --------------------------------------------------------------------------- checking


def record(text: str) -> None:
    """``event``, also callable from a plain (non-Hypothesis) test."""
    if currently_in_test_context():
        event(text)


EXCEPTION_TEXT = re.compile(r"^[A-Za-z_.]*(Error|Exception)\b|Traceback")


def run_import(
    folder: Path, listing: dict[str, Any], package: str | None = None
) -> ImportedSpec | ImportFailed:
    path = folder / "listing.json"
    path.write_text(json.dumps(listing), encoding="utf-8")
    try:
        return import_server(
            [sys.executable, str(FAKE_SERVER), str(path)],
            package=package,
            timeout=IMPORT_TIMEOUT,
            spec_dir=folder,
        )
    except ImportFailed as exc:
        return exc


# Refusals that are bugs being fixed elsewhere: tolerated here, named in the report.
# A note comment quoting a character YAML refuses (a control character in a title).
KNOWN_REFUSALS = re.compile(
    r"YAML error: unacceptable character #x[0-9a-f]+: "
    r"(control characters|special characters) are not allowed"
)


def check_refusal(failure: ImportFailed) -> None:
    message = str(failure)
    assert len(message.strip()) > 10 and not EXCEPTION_TEXT.search(message), message
    assert not message.rstrip().endswith(":"), f"a refusal without its reason: {message!r}"
    if KNOWN_REFUSALS.search(message):
        record("refused: known (a comment quotes a character YAML refuses)")
        return
    record(f"refused: {message.split(':')[0][:50]}")


def check_spec(folder: Path, listing: dict[str, Any], spec: ImportedSpec) -> list[Any]:
    """The spec loads and publishes what the server listed; returns the contract's tools."""
    assert spec.tools == len(listing["tools"])
    loaded = load_spec_text(spec.text, "tools.yaml", spec_dir=folder)
    assert loaded.contract is not None, [str(d) for d in loaded.diagnostics]
    assert loaded.contract.package == spec.package
    published = [descriptor(tool) for tool in loaded.contract.tools]
    assert [t["name"] for t in published] == [t["name"] for t in listing["tools"]]
    breaking = [
        c
        for c in compare_tools(published, listing["tools"])
        if c.severity is Severity.BREAKING and c.rule != "PARAM_ORDER_CHANGED"
    ]
    assert not breaking, breaking
    record(f"imported {spec.tools} tool(s)")
    return published


def client_class(package: Any) -> Any:
    return next(
        getattr(package, name)
        for name in package.__all__
        if name.endswith("Client") and not name.startswith("Async")
    )


def build_and_use(folder: Path, listing: dict[str, Any], spec: ImportedSpec, gen: Path) -> None:
    """Build the spec into ``gen``, import the package, connect its client strictly to
    the fake server."""
    spec_dir = folder / f"spec_{spec.package}"
    spec_dir.mkdir()
    (spec_dir / "tools.yaml").write_text(spec.text, encoding="utf-8")
    command = [sys.executable, str(FAKE_SERVER), str(folder / "listing.json")]
    with warnings.catch_warnings():
        # the model generator's notes on constraints a model cannot hold, pydantic's on
        # field names such as model_dump_: expected for generated schemas, not failures
        warnings.simplefilter("ignore")
        built = build_spec(spec_dir / "tools.yaml", output=gen / spec.package)
        assert built.ok, (built.status, built.message, [str(d) for d in built.diagnostics])
        with import_package(gen, spec.package) as package:
            assert [t["name"] for t in package.contract.TOOLS] == [
                t["name"] for t in listing["tools"]
            ]
            with client_class(package).stdio(command, verify="strict") as client:
                assert [tool.name for tool in client.list_tools()] == [
                    t["name"] for t in listing["tools"]
                ]


def mypy_strict(gen: Path, packages: list[str]) -> None:
    for start in range(0, len(packages), MYPY_BATCH):
        batch = packages[start : start + MYPY_BATCH]
        targets = [arg for name in batch for arg in ("-p", name)]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--strict",
                "--no-incremental",
                "--config-file",
                "/dev/null",
                "--python-version",
                "3.11",
                *targets,
            ],
            cwd=gen,
            capture_output=True,
            text=True,
            check=False,
            env={"MYPYPATH": str(gen), "PATH": "/usr/bin:/bin"},
        )
        if done.returncode != 0:
            failing = sorted(
                {line.split("/")[0] for line in done.stdout.splitlines() if "error:" in line}
            )
            specs = "\n\n".join(
                (gen.parent / f"spec_{name}" / "tools.yaml").read_text(encoding="utf-8")
                for name in failing
                if (gen.parent / f"spec_{name}").is_dir()
            )
            raise AssertionError(f"mypy --strict failed:\n{done.stdout}{done.stderr}\n{specs}")


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mcpgen-fuzz-import-") as folder:
        yield Path(folder)


# --------------------------------------------------------------------------- the tests


@fuzz_settings(weight=0.15)
@given(listing=listings())
def test_import_refuses_clearly_or_reproduces_the_listing(
    scratch: Path, listing: dict[str, Any]
) -> None:
    result = run_import(scratch, listing)
    if isinstance(result, ImportFailed):
        check_refusal(result)
    else:
        check_spec(scratch, listing, result)


@pytest.mark.timeout(900)  # builds and mypy: about a minute, more on a loaded machine
def test_imported_packages_build_import_connect_and_type_check(tmp_path: Path) -> None:
    """Fewer examples, each built and imported, its client connected to the fake
    server; then one ``mypy --strict`` run over every package built."""
    gen = tmp_path / "gen"
    built: list[str] = []

    @fuzz_settings(weight=0.05)
    @given(listing=listings(tame=True))
    def build_one(listing: dict[str, Any]) -> None:
        folder = Path(tempfile.mkdtemp(dir=tmp_path))
        name = f"fuzz_import_{len(built)}"  # one mypy run checks them all: unique names
        result = run_import(folder, listing, package=name)
        if isinstance(result, ImportFailed):
            check_refusal(result)
            return
        check_spec(folder, listing, result)
        build_and_use(folder, listing, result, gen)
        (folder / f"spec_{name}").rename(tmp_path / f"spec_{name}")
        built.append(name)

    build_one()
    assert EXAMPLES < 50 or built, "no example got as far as a build"
    mypy_strict(gen, built)


def test_the_fake_server_round_trips_a_plain_listing(tmp_path: Path) -> None:
    listing = {
        "serverInfo": {"name": "fake", "version": "1"},
        "page_size": 1,
        "tools": [
            {"name": "a", "inputSchema": {"type": "object"}},
            {
                "name": "b",
                "inputSchema": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}},
                    "required": ["x"],
                },
            },
        ],
    }
    spec = run_import(tmp_path, listing)
    assert isinstance(spec, ImportedSpec), spec
    assert yaml.safe_load(spec.text)["server"] == {"name": "fake", "version": "1"}
    check_spec(tmp_path, listing, spec)
