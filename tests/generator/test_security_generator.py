"""The generator against a hostile server, spec or output tree (issue 11, generator side).

- An imported server cannot add keys to the spec through its name or version (every
  comment line the importer writes is one escaped line), and ``mcpgen build`` never
  writes where a spec's ``output`` leaves the spec's tree unless
  ``--allow-outside-output`` (``-o DIR`` is the user's own choice and trusted).
- A spec cannot make ``models.py`` import a module of its choosing: generator
  directives (``x-python-*``, ``customTypePath``…) are refused with their position,
  and models.py is written by mcpgen's own type mapping, for which they mean nothing.
- Files read on a spec's or an output tree's say-so are regular files of bounded
  size (a FIFO, ``/dev/zero`` or a symlinked manifest is a message, never a hang),
  files written for the user (``init``, ``import -o``) never follow a planted
  symlink, package names never shadow the standard library, and nothing a spec
  or a server says reaches the terminal as a control sequence.

Commands that would hang or eat memory before the fix run as subprocesses under
a memory limit and a generous timeout, so a regression fails instead of stalling.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.spec.load import load_contract
from mcpgen.write import MANIFEST

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LISTING_SERVER = FIXTURES / "listing_server.py"
MCPGEN = [sys.executable, "-c", "from mcpgen.cli import main; main()"]
HANG_GUARD = 60  # seconds: only turns a hang into a failure, never a pass/fail criterion

# Every character YAML reads as a line break.
LINE_BREAKS = ["\n", "\r\n", "\r", "\x85", "\u2028", "\u2029"]
# What must never reach a terminal raw: an OSC title sequence, BEL, CR overwrite,
# a C1 CSI, a bidi override, a line separator.
HOSTILE = "\x1b]0;pwned\x07\rfake\x9b31m\u202eevil\u2028x"
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x9b", "\u202e", "\u2028")


def _run(args: list[str], cwd: Path, *, memory: int = 2 << 30) -> subprocess.CompletedProcess[str]:
    """``mcpgen ARGS`` in a subprocess whose address space is capped (reading /dev/zero
    without bound fails with MemoryError instead of taking the machine's memory)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [*MCPGEN, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        preexec_fn=limit,
        check=False,
    )


def _listing(tmp_path: Path, server_info: dict[str, Any], tools: list[dict[str, Any]]) -> Path:
    listing = tmp_path / "listing.json"
    listing.write_text(json.dumps({"serverInfo": server_info, "tools": tools}))
    return listing


def _tool(name: str = "t", **schema: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": {}, **schema}}


SPEC = """\
mcpgen: 1
package: {package}
output: {output}
server: {{name: safe, version: 1.0.0}}
tools:
  - name: t
    description: d
"""


def _spec(folder: Path, output: str = "out", package: str = "safe_mcp") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "tools.yaml"
    spec.write_text(SPEC.format(package=package, output=output), encoding="utf-8")
    return spec


# --------------------------------------------------------------------------- finding 1: import


@pytest.mark.parametrize("brk", LINE_BREAKS, ids=repr)
def test_a_server_name_cannot_add_keys_to_the_imported_spec(tmp_path: Path, brk: str) -> None:
    name = f"weather{brk}output: ../../elsewhere{brk}#"
    listing = _listing(tmp_path, {"name": name, "version": f"1.0{brk}package: os"}, [_tool()])
    spec = tmp_path / "proj" / "tools.yaml"
    result = CliRunner().invoke(
        main, ["import", "-o", str(spec), "--", sys.executable, str(LISTING_SERVER), str(listing)]
    )
    assert result.exit_code == 0, result.output
    text = spec.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert "output" not in data
    assert data["server"]["name"] == name  # the value itself goes through the emitter intact
    header = text.split("mcpgen: 1")[0]
    escaped = {
        "\n": "\\n",
        "\r\n": "\\r\\n",
        "\r": "\\r",
        "\x85": "\\x85",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }[brk]
    assert f"# Server: weather{escaped}output: ../../elsewhere{escaped}# 1.0{escaped}" in header
    assert all(line.startswith("#") for line in header.splitlines())
    loaded = load_contract(spec)
    assert loaded.contract is not None, [str(d) for d in loaded.diagnostics]
    assert loaded.contract.output == f"./{data['package']}"
    # and the build lands inside the spec's folder
    built = build_spec(spec)
    assert built.ok and built.output is not None
    assert built.output.resolve().is_relative_to(spec.parent.resolve())


def test_every_comment_line_the_importer_writes_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen import importer

    # The source line (the command, user-typed but possibly odd) and the `# differs`
    # notes (built from server-supplied text) are comments too.
    monkeypatch.setattr(
        importer,
        "_notes",
        lambda live, published: ["note\noutput: ../evil\r\x85#\u2028\x1b]0;x\x07"],
    )
    spec = importer.spec_from_tools(
        [_tool()],
        server_info={"name": "n", "version": "1"},
        source="server 'a\noutput: /abs\u2029'",
        spec_dir=tmp_path,
    )
    data = yaml.safe_load(spec.text)
    assert set(data) == {"mcpgen", "package", "server", "tools"}
    comments = [line for line in spec.text.splitlines() if line.startswith("#")]
    assert "# Source: server 'a\\noutput: /abs\\u2029'" in comments
    assert (
        "# differs from the live listing: note\\noutput: ../evil\\r\\x85#\\u2028\\x1b]0;x\\x07"
        in comments
    )
    assert not any(c in spec.text for c in ("\r", "\x85", "\u2028", "\u2029", "\x1b", "\x07"))


# --------------------------------------------------------------------------- finding 1: build


def _outside_cases(tmp_path: Path) -> dict[str, str]:
    outside = tmp_path / "elsewhere"
    outside.mkdir(exist_ok=True)
    (tmp_path / "proj").mkdir(exist_ok=True)
    (tmp_path / "proj" / "link").symlink_to(outside, target_is_directory=True)
    return {
        "absolute": str(outside / "pkg"),
        "dotdot": "../elsewhere/pkg",
        "inner-dotdot": "sub/../../elsewhere/pkg",
        "symlinked-dir": "link/pkg",
    }


@pytest.mark.parametrize("case", ["absolute", "dotdot", "inner-dotdot", "symlinked-dir"])
def test_build_refuses_an_output_outside_the_spec_tree(tmp_path: Path, case: str) -> None:
    output = _outside_cases(tmp_path)[case]
    spec = _spec(tmp_path / "proj", output=f'"{output}"')
    result = CliRunner().invoke(main, ["build", str(spec)])
    assert result.exit_code == 1
    assert f"{spec}:3:9: output: " in result.output, result.output
    assert "leaves the spec's directory tree" in result.output or "absolute" in result.output
    assert "--allow-outside-output" in result.output
    assert list((tmp_path / "elsewhere").iterdir()) == []
    # validate says the same, at the same place
    validate = CliRunner().invoke(main, ["validate", str(spec)])
    assert validate.exit_code == 1 and f"{spec}:3:9: output: " in validate.output


def test_the_no_op_fast_path_does_not_bypass_the_output_check(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "proj", output="../elsewhere/pkg")
    assert build_spec(spec, allow_outside_output=True).status == "written"
    again = build_spec(spec)  # the manifest there says "up to date": still refused
    assert again.status == "invalid"
    assert any(d.path == "output" for d in again.diagnostics)


def test_allow_outside_output_builds_there(tmp_path: Path) -> None:
    output = _outside_cases(tmp_path)["dotdot"]
    spec = _spec(tmp_path / "proj", output=output)
    result = CliRunner().invoke(main, ["build", "--allow-outside-output", str(spec)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "elsewhere" / "pkg" / "__init__.py").is_file()
    check = CliRunner().invoke(main, ["build", "--check", "--allow-outside-output", str(spec)])
    assert check.exit_code == 0, check.output


def test_dash_o_is_the_users_choice_and_trusted(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "proj", output="/etc/never-used")
    target = tmp_path / "elsewhere" / "pkg"
    result = CliRunner().invoke(main, ["build", "-o", str(target), str(spec)])
    assert result.exit_code == 0, result.output
    assert (target / "__init__.py").is_file()
    assert "trusted" in CliRunner().invoke(main, ["build", "--help"]).output


def test_diff_does_not_care_where_a_spec_builds(tmp_path: Path) -> None:
    old = _spec(tmp_path / "a", output="../../x")
    new = _spec(tmp_path / "b", output="/abs/y")
    result = CliRunner().invoke(main, ["diff", str(old), str(new)])
    assert result.exit_code == 0, result.output


# --------------------------------------------------------------------------- finding 3


DIRECTIVE_SPEC = """\
mcpgen: 1
package: directive_mcp
server: {name: d, version: 1.0.0}
types:
  Sneaky:
    type: string
    x-python-import: {module: this, name: s}
tools:
  - name: t
    parameters:
      - {name: a, type: string, x-python-type: this.Foo}
    output_schema:
      type: object
      properties:
        s: {$ref: "#/types/Sneaky"}
        f: {type: string, x-python-type: "this.Foo"}
        c: {type: object, customTypePath: this.Foo}
        r: {$ref: "schemas/field.json"}
"""


def test_generator_directives_are_refused_with_their_position(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "field.json").write_text(
        json.dumps(
            {"type": "object", "properties": {"q": {"type": "string", "x-python-type": "this.Foo"}}}
        )
    )
    spec = tmp_path / "tools.yaml"
    spec.write_text(DIRECTIVE_SPEC)
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 1
    expected = [
        f"{spec}:7:5: types.Sneaky.x-python-import: 'x-python-import'",
        f"{spec}:11:33: tools[0].parameters[0].x-python-type: 'x-python-type'",
        f"{spec}:16:27: tools[0].output_schema.properties.f.x-python-type: 'x-python-type'",
        f"{spec}:17:27: tools[0].output_schema.properties.c.customTypePath: 'customTypePath'",
        (
            f"{spec}:18:19: tools[0].output_schema.properties.r.$ref: 'x-python-type' in "
            "schemas/field.json#/properties/q"
        ),
    ]
    for line in expected:
        assert line in result.output, result.output
    assert "directive" in result.output
    built = CliRunner().invoke(main, ["build", str(spec)])
    assert built.exit_code == 1 and not (tmp_path / "directive_mcp").exists()


def test_an_imported_server_cannot_choose_imports_either() -> None:
    from mcpgen.importer import ImportFailed, spec_from_tools

    tool = _tool(properties={"a": {"type": "string", "x-python-type": "this.Foo"}})
    with pytest.raises(ImportFailed, match=r"tool 't' .*'x-python-type' is a"):
        spec_from_tools([tool], server_info={"name": "n"})


def test_models_py_imports_only_typing_and_pydantic_whatever_the_schema_says(
    tmp_path: Path,
) -> None:
    """Validation bypassed: models.py is written by mcpgen's own type mapping, which
    has no keyword that names code to import, so such keywords are inert data."""
    import dataclasses

    from mcpgen.render.models import render_models

    spec = _spec(tmp_path, package="untrusted_mcp")
    spec.write_text(spec.read_text() + "types:\n  S: {type: string}\n")
    contract = load_contract(spec).contract
    assert contract is not None
    for sneaky in (
        {"type": "string", "x-python-import": {"module": "this", "name": "s"}},
        {"type": "string", "x-python-type": "this.Foo"},
        {"type": "object", "customTypePath": "this.Foo", "properties": {"a": {"type": "string"}}},
        {"type": "object", "customBasePath": "this.Base", "properties": {"a": {"type": "string"}}},
    ):
        user = {"type": "object", "properties": {"p": {"$ref": "#/$defs/S"}}}
        hostile = dataclasses.replace(contract, types={"S": sneaky, "User": user})
        text = render_models(hostile)
        imports = [line for line in text.splitlines() if "import" in line]
        assert imports and all(
            line.startswith(("from __future__ ", "from typing ", "from pydantic "))
            for line in imports
        ), imports
        assert "this" not in text


def test_the_type_mappings_depth_bound_is_a_positioned_error(tmp_path: Path) -> None:
    """The type mapping recurses once per level: the loader bounds the depth and says so
    at the type or output schema instead of a build failing on the recursion limit."""
    from mcpgen.render.typemap import MAX_MODEL_SCHEMA_DEPTH

    def nested(levels: int) -> str:
        inner = "{type: string}"
        for _ in range(levels):
            inner = "{type: object, properties: {a: " + inner + "}}"
        return inner

    results = {}
    for levels in ((MAX_MODEL_SCHEMA_DEPTH - 2) // 2, MAX_MODEL_SCHEMA_DEPTH // 2):
        folder = tmp_path / str(levels)
        folder.mkdir()
        spec = folder / "tools.yaml"
        spec.write_text(
            f"mcpgen: 1\npackage: deep_mcp\nserver: {{name: d, version: '1'}}\n"
            f"types:\n  D: {nested(levels)}\ntools:\n  - name: t\n"
            f"    output_schema: {nested(levels)}\n"
        )
        results[levels] = build_spec(spec)
    shallow, deep = results.values()
    assert shallow.status == "written", (shallow.message, [str(d) for d in shallow.diagnostics])
    assert deep.status == "invalid"
    assert {(d.line, d.path) for d in deep.diagnostics} == {
        (5, "types.D"),
        (8, "tools[0].output_schema"),
    }


# --------------------------------------------------------------------------- finding 6a: manifest


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge", "symlink-to-json"])
@pytest.mark.parametrize("check", [False, True])
def test_a_hostile_manifest_is_never_read_unbounded(tmp_path: Path, kind: str, check: bool) -> None:
    spec = _spec(tmp_path / "proj")
    assert build_spec(spec).status == "written"
    manifest = spec.parent / "out" / MANIFEST
    manifest.unlink()
    if kind == "dev-zero":
        manifest.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(manifest)
    elif kind == "huge":
        with manifest.open("wb") as handle:
            handle.truncate(64 << 20)  # sparse: 64 MiB of NUL bytes
    else:
        victim = tmp_path / "victim.json"
        victim.write_text(json.dumps({"inputs": {}, "outputs": {}}))
        manifest.symlink_to(victim)
    done = _run(["build", *(["--check"] if check else []), str(spec)], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    assert MANIFEST in done.stdout + done.stderr
    assert "not a regular file" in done.stdout + done.stderr or "larger than" in (
        done.stdout + done.stderr
    )
    # --force takes the directory back: the manifest is replaced, never followed
    if not check:
        forced = _run(["build", "--force", str(spec)], tmp_path)
        assert forced.returncode == 0, forced.stdout + forced.stderr
        assert manifest.is_file() and not manifest.is_symlink()
        if kind == "symlink-to-json":
            assert json.loads((tmp_path / "victim.json").read_text()) == {
                "inputs": {},
                "outputs": {},
            }


def test_check_never_reads_a_planted_device_or_fifo_in_the_output(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "proj")
    assert build_spec(spec).status == "written"
    out = spec.parent / "out"
    (out / "server.py").unlink()
    (out / "server.py").symlink_to("/dev/zero")
    (out / "client.py").unlink()
    os.mkfifo(out / "client.py")
    done = _run(["build", "--check", str(spec)], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "server.py" in done.stdout and "client.py" in done.stdout


# --------------------------------------------------------------------------- finding 6b


def test_init_refuses_a_planted_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim.yaml"
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "tools.yaml").symlink_to(victim)  # dangling: exists() is False
    for args in (["init", str(folder)], ["init", "--name", "x", str(folder)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        assert "symbolic link" in result.output
        assert not victim.exists() and (folder / "tools.yaml").is_symlink()


def test_import_refuses_a_planted_symlink(tmp_path: Path) -> None:
    listing = _listing(tmp_path, {"name": "n", "version": "1"}, [_tool()])
    victim = tmp_path / "victim.yaml"
    target = tmp_path / "tools.yaml"
    target.symlink_to(victim)
    for extra in ([], ["--force"]):
        result = CliRunner().invoke(
            main,
            [
                "import",
                "-o",
                str(target),
                *extra,
                "--",
                sys.executable,
                str(LISTING_SERVER),
                str(listing),
            ],
        )
        assert result.exit_code == 2, result.output
        assert "symbolic link" in result.output
        assert not victim.exists() and target.is_symlink()


def test_init_and_import_write_through_a_temporary_and_a_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        renames.append((str(src), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    assert CliRunner().invoke(main, ["init", str(tmp_path / "a")]).exit_code == 0
    listing = _listing(tmp_path, {"name": "n", "version": "1"}, [_tool()])
    out = tmp_path / "b" / "tools.yaml"
    result = CliRunner().invoke(
        main, ["import", "-o", str(out), "--", sys.executable, str(LISTING_SERVER), str(listing)]
    )
    assert result.exit_code == 0, result.output
    targets = [dst for _, dst in renames]
    assert str(tmp_path / "a" / "tools.yaml") in targets and str(out) in targets
    assert all(Path(src).parent == Path(dst).parent for src, dst in renames)
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["tools.yaml"]


# --------------------------------------------------------------------------- finding 6c


@pytest.mark.parametrize("package", ["json", "typing", "os", "sys", "builtins", "pydantic"])
def test_a_package_cannot_shadow_the_standard_library(tmp_path: Path, package: str) -> None:
    spec = _spec(tmp_path, package=package)
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 1
    assert f"{spec}:2:10: package: '{package}' would shadow" in result.output


def test_import_derives_a_package_name_that_does_not_shadow(tmp_path: Path) -> None:
    from mcpgen.importer import ImportFailed, spec_from_tools

    spec = spec_from_tools([_tool()], server_info={"name": "json"})
    assert yaml.safe_load(spec.text)["package"] == "json_mcp"
    with pytest.raises(ImportFailed, match="would shadow the standard library"):
        spec_from_tools([_tool()], server_info={"name": "x"}, package="typing")


# --------------------------------------------------------------------------- finding 6d


def test_a_fifo_referenced_by_a_spec_is_a_diagnostic(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        textwrap.dedent("""\
        mcpgen: 1
        package: fifo_mcp
        server: {name: f, version: 1.0.0}
        tools:
          - name: t
            parameters:
              - {name: p, $ref: "schemas/pipe.json"}
              - {name: q, $ref: "schemas/zero.json"}
              - {name: r, $ref: "schemas/big.json"}
              - {name: s, $ref: "schemas/ok-link.json"}
    """)
    )
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    os.mkfifo(schemas / "pipe.json")
    (schemas / "zero.json").symlink_to("/dev/zero")
    with (schemas / "big.json").open("wb") as handle:
        handle.truncate(17 << 20)
    (schemas / "real.json").write_text('{"type": "string"}')
    (schemas / "ok-link.json").symlink_to("real.json")  # an in-tree symlink stays fine
    done = _run(["validate", str(spec)], tmp_path)
    assert done.returncode == 1
    assert f"{spec}:7:" in done.stderr and "schemas/pipe.json" in done.stderr
    assert "not a regular file" in done.stderr
    assert f"{spec}:9:" in done.stderr and "larger than" in done.stderr
    assert "ok-link" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_spec_that_is_not_a_regular_file_is_a_diagnostic(tmp_path: Path, kind: str) -> None:
    spec = tmp_path / "tools.yaml"
    if kind == "fifo":
        os.mkfifo(spec)
    else:
        spec.symlink_to("/dev/zero")
    for command in (["validate"], ["build"], ["build", "--check"]):
        done = _run([*command, str(spec)], tmp_path)
        # an I/O problem, not a finding about a spec: exit 2 (docs/commands.md, "Exit codes")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------- finding 6e


def _clean(text: str) -> None:
    leaked = [c for c in RAW_CONTROLS if c in text]
    assert not leaked, f"raw control characters {leaked!r} in output:\n{text!r}"


def test_spec_diagnostics_escape_control_characters(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    key = json.dumps(HOSTILE)  # a double-quoted YAML key holding the raw characters
    spec.write_text(
        textwrap.dedent(f"""\
        mcpgen: 1
        package: esc_mcp
        server: {{name: e, version: 1.0.0}}
        {key}: 1
        tools:
          - name: t
            parameters:
              - {{name: p, type: object, properties: {{{key}: {{type: strng}}}}}}
    """)
    )
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 1
    _clean(result.output)
    assert "\\x1b]0;pwned\\x07\\rfake\\x9b31m\\u202eevil\\u2028x" in result.output
    built = CliRunner().invoke(main, ["build", str(spec)])
    assert built.exit_code == 1
    _clean(built.output)


def test_import_messages_escape_control_characters(tmp_path: Path) -> None:
    tools = [_tool(properties={"p": {"type": "string", HOSTILE: 1}}), _tool(HOSTILE)]
    listing = _listing(tmp_path, {"name": "n", "version": "1"}, tools)
    result = CliRunner().invoke(
        main, ["import", "-o", "-", "--", sys.executable, str(LISTING_SERVER), str(listing)]
    )
    assert result.exit_code == 1
    _clean(result.output)
    assert "\\x1b]0;pwned" in result.output


def test_an_imported_spec_on_stdout_holds_no_raw_control_characters(tmp_path: Path) -> None:
    """Values keep their exact text, but are written escaped (double-quoted YAML)."""
    tool = _tool(properties={"p": {"type": "string", "title": HOSTILE}})
    tool["description"] = f"line one\n{HOSTILE}"
    listing = _listing(tmp_path, {"name": "n", "version": "1", "title": HOSTILE}, [tool])
    result = CliRunner().invoke(
        main, ["import", "-o", "-", "--", sys.executable, str(LISTING_SERVER), str(listing)]
    )
    assert result.exit_code == 0, result.output
    _clean(result.output)
    data = yaml.safe_load(result.output)
    assert data["server"]["title"] == HOSTILE
    assert data["tools"][0]["description"] == f"line one\n{HOSTILE}"
    # an open object schema is kept as listed (input_schema): `parameters` would close it
    assert data["tools"][0]["input_schema"]["properties"]["p"]["title"] == HOSTILE


def test_diff_output_escapes_control_characters(tmp_path: Path) -> None:
    def spec(folder: str, title: str, extra: str) -> Path:
        path = tmp_path / folder / "tools.yaml"
        path.parent.mkdir()
        path.write_text(
            textwrap.dedent(f"""\
            mcpgen: 1
            package: esc_mcp
            server: {{name: e, version: 1.0.0, title: {json.dumps(title)}}}
            tools:
              - name: t
                parameters:
                  - {{name: {json.dumps(HOSTILE)}, type: string{extra}}}
        """)
        )
        return path

    old = spec("old", "plain", "")
    new = spec("new\x1b]0;dir\x07", HOSTILE, ", maxLength: 3")  # a file name is text too
    for fmt in ("text", "json", "github"):
        result = CliRunner().invoke(main, ["diff", "--format", fmt, str(old), str(new)])
        assert result.exit_code == 1, result.output
        _clean(result.output)
        if fmt == "json":  # still JSON, the same values once parsed
            document = json.loads(result.output)
            assert document["new"] == str(new)
            shown = json.dumps(HOSTILE, ensure_ascii=False)  # how the message quotes a title
            assert any(shown in change["message"] for change in document["changes"])
