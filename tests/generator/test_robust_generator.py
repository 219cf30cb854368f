"""Generator safety beyond tests/generator/render/test_injection.py: ``$ref`` never reaches the
network nor leaves the spec's directory tree (unless ``--allow-outside-refs``),
a build never writes, deletes or reads forever outside its output directory
whatever a crafted manifest or a planted symlink says, hostile files referenced
from a spec (alias bombs, deep nesting, dates) are diagnostics, and ``--check``
and ``validate`` never write, even on stale, hand-edited or invalid trees.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.spec.load import load_contract
from mcpgen.write import MANIFEST

SPEC = """\
mcpgen: 1
package: {package}
output: out
server: {{name: safe, version: 1.0.0}}
tools:
  - name: t
    description: d
    parameters:
      - {{name: p, $ref: "{ref}"}}
"""


def write_spec(folder: Path, ref: str = "#/types/Missing", package: str = "safe_mcp") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "tools.yaml"
    text = SPEC.format(package=package, ref=ref)
    if ref.startswith("#/types/"):
        text = text.replace("tools:\n", "types:\n  Ok: {type: string}\ntools:\n")
    spec.write_text(text, encoding="utf-8")
    return spec


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """Every file and link under ``root``: kind and content hash (or link target)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[str(path)] = ("link", os.readlink(path))
        elif path.is_file():
            found[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
        else:
            found[str(path)] = ("dir", "")
    return found


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fail any attempt to open a connection or resolve a name."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


# --------------------------------------------------------------------------- $ref


@pytest.mark.parametrize(
    "ref",
    [
        "https://example.com/schema.json",
        "http://127.0.0.1:1/schema.json#/defs/x",
        "file:///etc/passwd",
        "ftp://example.com/x.json",
        "data:application/json,{}",
        "urn:example:schema",
        "C:/Windows/schema.json",
    ],
)
@pytest.mark.parametrize("allow_outside", [False, True])
def test_network_refs_are_never_followed(
    tmp_path: Path, no_network: list[Any], ref: str, allow_outside: bool
) -> None:
    spec = write_spec(tmp_path / "spec", ref)
    result = load_contract(spec, allow_outside_refs=allow_outside)
    assert result.contract is None
    messages = " ".join(d.message for d in result.errors)
    assert "never network references" in messages, messages
    assert no_network == []


@pytest.mark.parametrize(
    "ref",
    [
        "../outside.json",
        "sub/../../outside.json",
        "{outside}",  # an absolute path
        "//{outside_no_slash}",  # protocol-relative: an absolute path to Python
        "link_to_outside.json",  # a symlink in the tree pointing out of it
        "link_dir/outside.json",  # through a symlinked directory
        "inner.json",  # a file in the tree whose own $ref leaves it
    ],
)
def test_refs_never_leave_the_spec_tree(tmp_path: Path, ref: str) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"type": "string", "description": "SECRET from outside"}')
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "sub").mkdir()
    (spec_dir / "link_to_outside.json").symlink_to(outside)
    (spec_dir / "link_dir").symlink_to(tmp_path)
    (spec_dir / "inner.json").write_text('{"$ref": "../outside.json"}')
    ref = ref.format(outside=outside, outside_no_slash=str(outside).lstrip("/"))
    spec = write_spec(spec_dir, ref)
    result = load_contract(spec)
    assert result.contract is None, "followed a reference out of the spec's tree"
    assert any("outside the spec's directory tree" in d.message for d in result.errors), [
        str(d) for d in result.diagnostics
    ]
    # opting in follows the same reference
    allowed = load_contract(spec, allow_outside_refs=True)
    assert allowed.contract is not None, [str(d) for d in allowed.diagnostics]
    assert "SECRET from outside" in json.dumps(allowed.contract.tools[0].input_schema)


def test_allow_outside_refs_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "outside.json").write_text('{"type": "integer"}')
    spec = write_spec(tmp_path / "spec", "../outside.json")
    runner = CliRunner()
    refused = runner.invoke(main, ["build", str(spec)])
    assert refused.exit_code == 1 and "outside the spec's directory tree" in refused.output
    assert not (spec.parent / "out").exists()
    allowed = runner.invoke(main, ["build", "--allow-outside-refs", str(spec)])
    assert allowed.exit_code == 0, allowed.output
    # validate takes no such flag: it reports the reference, and writes nothing
    validate = runner.invoke(main, ["validate", str(spec)])
    assert validate.exit_code == 1 and "outside" in validate.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[" * 5000 + "]" * 5000, "nesting depth"),
        (
            "\n".join(
                ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
                + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
            )
            + "\ntype: string\n",
            "aliases expand",
        ),
        (
            "\n".join(
                ["type: object", "$defs:", "  a0: &a0 {type: string}"]
                + [
                    f"  a{i}: &a{i} {{allOf: [" + ", ".join([f"*a{i - 1}"] * 10) + "]}"
                    for i in range(1, 9)
                ]
            )
            + "\n",
            "aliases expand",
        ),
        ("type: string\nenum: [2024-01-01]\n", None),  # a date stays a string
        ("{type: string, x: 1, x: 2}", "duplicate key"),
        ("", "empty"),
    ],
)
def test_hostile_referenced_yaml_is_a_diagnostic(
    tmp_path: Path, content: str, message: str | None
) -> None:
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "schema.yaml").write_text(content, encoding="utf-8")
    ref = "schema.yaml#/$defs/a8" if "$defs" in content else "schema.yaml"
    spec = write_spec(spec_dir, ref)
    started = time.monotonic()
    result = load_contract(spec)
    assert time.monotonic() - started < 10
    if message is None:
        assert result.contract is not None, [str(d) for d in result.diagnostics]
        assert '"enum": ["2024-01-01"]' in json.dumps(result.contract.tools[0].input_schema)
        built = build_spec(spec)
        assert built.ok, built.message
    else:
        assert result.contract is None
        text = " ".join(str(d) for d in result.diagnostics)
        assert message in text, text


def test_deep_referenced_json_is_a_diagnostic(tmp_path: Path) -> None:
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (spec_dir / "nested.json").write_text(
        '{"type": "array", "items": ' * 300 + '{"type": "string"}' + "}" * 300
    )
    for name in ("deep.json", "nested.json"):
        result = load_contract(write_spec(spec_dir, name))
        assert result.contract is None
        assert any("too deeply" in d.message or "recursion" in d.message for d in result.errors)


# --------------------------------------------------------------------------- output


def built(tmp_path: Path) -> tuple[Path, Path]:
    spec = write_spec(tmp_path / "proj", "#/types/Ok")
    result = build_spec(spec)
    assert result.status == "written", result.message
    return spec, spec.parent / "out"


def edit_manifest(out: Path, change: Any) -> None:
    manifest = json.loads((out / MANIFEST).read_text())
    change(manifest)
    (out / MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "name",
    [
        "../victim.txt",
        "../../victim.txt",
        "sub/../../victim.txt",
        "{victim}",
        "./../victim.txt",
        "a\u0000b",
    ],
)
def test_crafted_manifest_cannot_delete_outside(tmp_path: Path, name: str) -> None:
    spec, out = built(tmp_path)
    victims = [tmp_path / "victim.txt", tmp_path / "proj" / "victim.txt"]
    for victim in victims:
        victim.write_text("precious")
    name = name.format(victim=victims[0])
    edit_manifest(out, lambda m: m["outputs"].update({name: "0" * 64}))
    before = snapshot(tmp_path)
    result = build_spec(spec)  # the listed file is "no longer generated": remove it?
    assert result.status in ("refused", "unchanged", "written"), result.status
    for victim in victims:
        assert victim.read_text() == "precious"
    outside = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith(str(out))}
    assert outside == {k: v for k, v in before.items() if not k.startswith(str(out))}


@pytest.mark.parametrize("planted", ["server.py.mcpgen-tmp", MANIFEST, f"{MANIFEST}.mcpgen-tmp"])
def test_planted_symlinks_are_replaced_not_followed(tmp_path: Path, planted: str) -> None:
    spec, out = built(tmp_path)
    victim = tmp_path / "victim.json"
    victim.write_text(json.dumps({"inputs": {}, "outputs": {}, "note": "precious"}))
    target = out / planted
    if target.exists():
        target.unlink()
    target.symlink_to(victim)
    (out / "server.py").write_text("# hand-edited: the build must rewrite it\n")
    result = build_spec(spec)
    if planted == MANIFEST:
        # a manifest that is a symlink is never read: the directory counts as not
        # mcpgen's until --force, which replaces the link
        assert result.status == "refused" and "symbolic link" in result.message
        result = build_spec(spec, force=True)
    assert result.status == "written", result.message
    assert json.loads(victim.read_text())["note"] == "precious"
    assert not (out / "server.py").is_symlink() and not (out / MANIFEST).is_symlink()
    assert "hand-edited" not in (out / "server.py").read_text()


def test_symlinked_output_file_is_refused(tmp_path: Path) -> None:
    spec, out = built(tmp_path)
    victim = tmp_path / "victim.py"
    victim.write_text("precious")
    (out / "server.py").unlink()
    (out / "server.py").symlink_to(victim)
    result = build_spec(spec)
    assert result.status == "refused" and "outside" in result.message
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("kind", ["input", "output"])
def test_manifest_naming_a_device_does_not_hang(tmp_path: Path, kind: str) -> None:
    spec, out = built(tmp_path)
    depth = len(out.resolve().parts)
    zero = "../" * depth + "dev/zero"
    if kind == "input":
        edit_manifest(out, lambda m: m["inputs"]["files"].update({zero: "0" * 64}))
    else:
        edit_manifest(out, lambda m: m["outputs"].update({zero: "0" * 64}))
    started = time.monotonic()
    result = build_spec(spec, check=True)
    assert time.monotonic() - started < 20
    assert result.status in ("fresh", "stale")


@pytest.mark.parametrize(
    "manifest",
    [
        [],
        {"inputs": [], "outputs": []},
        {"inputs": {"files": [1, 2]}},
        {"outputs": "abc"},
        {"inputs": {"mcpgen": None}, "outputs": {"x": 5}},
    ],
)
def test_malformed_manifest_is_no_crash(tmp_path: Path, manifest: Any) -> None:
    spec, out = built(tmp_path)
    (out / MANIFEST).write_text(json.dumps(manifest))
    result = build_spec(spec)
    assert result.status in ("written", "unchanged", "refused"), result.status


# --------------------------------------------------------------------------- never write


def test_check_and_validate_never_write_on_a_stale_tree(
    tmp_path: Path, no_network: list[Any]
) -> None:
    spec, out = built(tmp_path)
    (out / "server.py").write_text("# hand-edited\n")
    (out / "extra.txt").write_text("mine")
    edit_manifest(out, lambda m: m["outputs"].update({"gone.py": "0" * 64, "../victim": "0"}))
    (out / "gone.py").write_text("# no longer generated\n")
    spec.write_text(spec.read_text().replace("description: d", "description: changed"))
    before = snapshot(tmp_path)
    runner = CliRunner()
    check = runner.invoke(main, ["build", "--check", str(spec)])
    assert check.exit_code == 1
    assert "would be removed" in check.output and "hand-edited" in check.output
    validate = runner.invoke(main, ["validate", str(spec)])
    assert validate.exit_code == 0, validate.output
    assert snapshot(tmp_path) == before
    assert no_network == []


def test_check_and_validate_never_write_on_an_invalid_spec(tmp_path: Path) -> None:
    spec_dir = tmp_path / "proj"
    spec = write_spec(spec_dir, "https://example.com/x.json")
    before = snapshot(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["build", "--check", str(spec)]).exit_code == 1
    assert runner.invoke(main, ["validate", str(spec)]).exit_code == 1
    assert snapshot(tmp_path) == before


def test_check_does_not_create_a_missing_output_or_its_parents(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "proj", "#/types/Ok")
    spec.write_text(spec.read_text().replace("output: out", "output: a/b/c/out"))
    before = snapshot(tmp_path)
    result = build_spec(spec, check=True)
    assert result.status == "stale"
    assert snapshot(tmp_path) == before


def test_spec_text_is_unchanged_by_a_build(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "proj", "#/types/Ok")
    text = spec.read_bytes()
    assert build_spec(spec).status == "written"
    assert spec.read_bytes() == text
