"""A tampered ``.mcpgen-layout-cache.json`` cannot change what a build writes (issue 22).

The cache sits in the output directory, so anyone who can commit to a repository can
edit it. An entry is used only when it is the same code as the unit it stands for:
the same syntax tree, the same comments, docstrings equal as black normalises them,
and no character (a BOM, a form feed, a carriage return...) the unit does not hold.
Anything else is formatted again by black, so the package written equals the one a
build without any cache writes.

The attack: a PEP 263 coding cookie on line 2 of a file changes how Python decodes
the file's bytes, which ``ast.parse`` of the text never sees; with
``raw_unicode_escape`` a comment holding ``\\u000a`` ends at that escape and what
follows it runs on import.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpgen.build import LAYOUT_CACHE, build_spec

ROOT = Path(__file__).resolve().parent.parent
LAYOUT_SPEC = ROOT / "tests/fixtures/layout/tools.yaml"
PACKAGE = "layout_with_a_much_longer_package_name_mcp"


def _spec(directory: Path) -> Path:
    """The layout fixture with names long enough that the first unit of
    ``__init__.py`` (its header comment, docstring and imports) needs black."""
    directory.mkdir()
    text = LAYOUT_SPEC.read_text(encoding="utf-8")
    text = text.replace("package: layout_mcp", f"package: {PACKAGE}").replace(
        "  name: layout\n", "  name: layout_with_a_much_longer_server_name_for_the_header_line_xx\n"
    )
    spec = directory / "tools.yaml"
    spec.write_text(text, encoding="utf-8")
    return spec


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != LAYOUT_CACHE and "__pycache__" not in p.parts
    }


def _tamper(out: Path, change: Callable[[str], str]) -> None:
    """Apply ``change`` to the cache entry that is the start of ``__init__.py``."""
    cache = out / LAYOUT_CACHE
    entries = json.loads(cache.read_text(encoding="utf-8"))
    head = (out / "__init__.py").read_text(encoding="utf-8")
    (key,) = [k for k, body in entries.items() if body and head.startswith(body)]
    entries[key] = change(entries[key])
    assert entries[key] != json.loads(cache.read_text(encoding="utf-8"))[key]
    cache.write_text(json.dumps(entries), encoding="utf-8")


def _cookie(body: str) -> str:
    first, rest = body.split("\n", 1)
    future = "from __future__ import annotations\n"
    payload = "# \\u000aopen(__file__ + '.pwned', 'w').close()\n"
    return (
        first
        + "\n"
        + "# -*- coding: raw_unicode_escape -*-\n"
        + rest.replace(future, future + payload, 1)
    )


def _comment(body: str) -> str:
    return body.replace("Do not edit:", "Edit freely:", 1)


def _docstring(body: str) -> str:
    return body.replace('"""Generated MCP', '"""Harmless MCP', 1)


def _docstring_spaces(body: str) -> str:
    # the same text once black strips it, yet not what black writes
    return body.replace('"""Generated MCP', '"""    Generated MCP', 1)


def _string_spelling(body: str) -> str:
    # the same value, spelled otherwise: the tree cannot tell, the tokens can
    return body.replace('"mcpgen-runtime>=', '"\\x6dcpgen-runtime>=', 1)


def _bom(body: str) -> str:
    return "\ufeff" + body


def _form_feed(body: str) -> str:
    return body.replace("\nfrom __future__", "\n\x0cfrom __future__", 1)


def _carriage_return(body: str) -> str:
    return body.replace("\nfrom __future__", "\r\nfrom __future__", 1)


@pytest.mark.parametrize(
    "change",
    [
        _cookie,
        _comment,
        _docstring,
        _docstring_spaces,
        _string_spelling,
        _bom,
        _form_feed,
        _carriage_return,
    ],
    ids=[
        "coding-cookie",
        "comment",
        "docstring",
        "docstring-spaces",
        "string-spelling",
        "bom",
        "form-feed",
        "carriage-return",
    ],
)
def test_a_tampered_entry_changes_nothing_written(
    tmp_path: Path, change: Callable[[str], str]
) -> None:
    spec = _spec(tmp_path / "tampered")
    built = build_spec(spec)
    assert built.status == "written" and built.output is not None
    _tamper(built.output, change)
    spec.write_text(spec.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # a spec edit
    assert build_spec(spec).ok
    clean = _spec(tmp_path / "clean")
    clean.write_text(spec.read_text(encoding="utf-8"), encoding="utf-8")
    reference = build_spec(clean)
    assert reference.output is not None
    assert _tree(built.output) == _tree(reference.output)
    assert build_spec(spec, check=True).status == "fresh"


def test_the_coding_cookie_attack_runs_nothing_on_import(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "attack")
    built = build_spec(spec)
    assert built.output is not None
    _tamper(built.output, _cookie)
    spec.write_text(spec.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert build_spec(spec).ok
    init = built.output / "__init__.py"
    assert b"coding" not in init.read_bytes().split(b"\n")[1]
    env = {**os.environ, "PYTHONPATH": str(spec.parent), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", f"import {PACKAGE}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not Path(str(init) + ".pwned").exists()


@pytest.mark.parametrize("fixture", ["layout", "names", "conformance", "fidelity", "tracker"])
def test_an_untouched_cache_is_still_used(tmp_path: Path, fixture: str) -> None:
    """The checks accept black's own output: a rebuild after a spec edit sends no
    unit that did not change to black (for every fixture whose units need black)."""
    from mcpgen.render import layout

    spec = tmp_path / fixture / "tools.yaml"
    shutil.copytree(ROOT / "tests/fixtures" / fixture, spec.parent)
    assert build_spec(spec, force=True).ok
    calls: list[int] = []
    original = layout._black_batch

    def counting(units: list[tuple[int, str]]) -> list[str]:
        calls.append(len(units))
        return original(units)

    layout._black_batch = counting  # type: ignore[assignment]
    try:
        spec.write_text(spec.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        assert build_spec(spec).ok
    finally:
        layout._black_batch = original  # type: ignore[assignment]
    assert calls == []


def test_a_spec_file_name_is_never_a_coding_cookie(tmp_path: Path) -> None:
    """Line 1 of every generated file names the spec; a name holding
    ``coding=...`` must not become a PEP 263 cookie."""
    import re

    spec = tmp_path / "x coding=latin-1.yaml"
    spec.write_text(
        (ROOT / "examples/weather/tools.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    shutil.copytree(ROOT / "examples/weather/schemas", tmp_path / "schemas")
    built = build_spec(spec, output=tmp_path / "out")
    assert built.ok and built.output is not None, built.diagnostics
    cookie = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
    for path in built.output.rglob("*.py"):
        assert not any(cookie.match(line) for line in path.read_bytes().split(b"\n")[:2]), path


def test_entries_indented_otherwise_are_not_used(tmp_path: Path) -> None:
    """A method indented one level deeper is the same tree inside its wrapper but an
    IndentationError in the file: every entry shifted so is formatted again."""
    spec = _spec(tmp_path / "shifted")
    built = build_spec(spec)
    assert built.output is not None
    cache = built.output / LAYOUT_CACHE
    entries = json.loads(cache.read_text(encoding="utf-8"))
    shifted = {
        key: "\n".join("    " + line if line.strip() else line for line in body.split("\n"))
        for key, body in entries.items()
    }
    cache.write_text(json.dumps(shifted), encoding="utf-8")
    spec.write_text(spec.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert build_spec(spec).ok
    clean = _spec(tmp_path / "clean")
    clean.write_text(spec.read_text(encoding="utf-8"), encoding="utf-8")
    reference = build_spec(clean)
    assert reference.output is not None
    assert _tree(built.output) == _tree(reference.output)
