"""Every dotted ``mcpgen.…`` / ``mcpgen_runtime.…`` path that a docstring, a comment or
a document names exists: the module imports and each further name is an attribute.

Read: the docstrings and comments of mcpgen/, the runtime and tests/ (not the golden
records nor the frozen old package of tests/fixtures/built_before_layout/), docs/**/*.md,
README.md, CONTRIBUTING.md and SECURITY.md. The runtime's own texts and docs/architecture.md also name
paths relative to a package, in double backquotes (````client.core````,
````spec.load````): those resolve below ``mcpgen_runtime`` or ``mcpgen`` by their first
name. A path that is not meant to resolve (a name a generated package defines) goes
into ``NOT_A_PATH`` with the reason.

The same texts name files by their path from the checkout (``tests/…/test_x.py``,
``runtime/mcpgen_runtime/schema/regex.py``, ``mcpgen/render/escape.py``): each such
path under tests/, runtime/ or mcpgen/ exists, so a moved or renamed file leaves no
reader looking for it.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# texts under tests/ that are not the project's own words: generated code, a frozen package
NOT_READ = ("tests/golden/", "tests/fixtures/built_before_layout/")
CHECKOUT_FILE = re.compile(r"(?<![\w./-])(?:tests|runtime|mcpgen)/[\w./-]*?\.py\b")
# paths that name a file of another tree, with the reason
NOT_OURS: dict[str, str] = {
    "tests/test_notes.py": "the test `mcpgen init` writes into a user's project (README's listing)",
}
DOTTED = re.compile(r"(?<![\w./-])(mcpgen_runtime|mcpgen)((?:\.[A-Za-z_]\w*)+)")
# a relative path in double backquotes, by the package its first name belongs to
PACKAGE_OF = {
    **dict.fromkeys(
        (
            "client",
            "contract",
            "http",
            "protocol",
            "schema",
            "server",
            "tasks",
            "telemetry",
            "transport",
        ),
        "mcpgen_runtime",
    ),
    "spec": "mcpgen",
    "render": "mcpgen",
}
RELATIVE = re.compile(r"``((" + "|".join(PACKAGE_OF) + r")(?:\.[A-Za-z_]\w*)+)``")

# path -> why it does not resolve and may still be written
NOT_A_PATH: dict[str, str] = {
    **dict.fromkeys(
        ("mcpgen.request", "mcpgen.server", "mcpgen.tasks"),
        "logger names of the request log and the diagnostics (telemetry/logs.py), not modules",
    ),
    "mcpgen_runtime.tasks.list": (
        "server/task_methods.py and http/task_layer.py name MCP's ``tasks.list`` capability "
        "(capabilities.tasks.list), not a module"
    ),
}


def resolves(path: str) -> bool:
    """Import the longest module prefix of ``path``, then look up the rest as attributes."""
    pieces = path.split(".")
    for cut in range(len(pieces), 0, -1):
        try:
            value: object = importlib.import_module(".".join(pieces[:cut]))
        except ModuleNotFoundError:
            continue
        for name in pieces[cut:]:
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


def paths_in(text: str, relative: frozenset[str] = frozenset()) -> Iterator[str]:
    for match in DOTTED.finditer(text):
        yield match.group(1) + match.group(2)
    for match in RELATIVE.finditer(text):
        if PACKAGE_OF[match.group(2)] in relative:
            yield f"{PACKAGE_OF[match.group(2)]}.{match.group(1)}"


def relative_in(where: str) -> frozenset[str]:
    """The packages a text names modules of relatively: the runtime's own texts
    its modules, the generator's its own (there ``server.name`` is a spec key)."""
    if where.startswith("runtime/"):
        return frozenset({"mcpgen_runtime"})
    if where.startswith("mcpgen/"):
        return frozenset({"mcpgen"})
    if where == "docs/architecture.md":
        return frozenset({"mcpgen_runtime", "mcpgen"})
    return frozenset()


def python_texts(path: Path) -> Iterator[tuple[int, str]]:
    """The docstrings and comments of one Python file, with their line numbers."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            doc = body[0].value
            if isinstance(doc, ast.Constant) and isinstance(doc.value, str):
                yield doc.lineno, doc.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def texts() -> Iterator[tuple[str, int, str]]:
    for folder in (ROOT / "mcpgen", ROOT / "runtime" / "mcpgen_runtime", ROOT / "tests"):
        for path in sorted(folder.rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            if where.startswith(NOT_READ):
                continue
            for line, text in python_texts(path):
                yield where, line, text
    documents = [
        *sorted((ROOT / "docs").rglob("*.md")),
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "SECURITY.md",
    ]
    for path in documents:
        for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield str(path.relative_to(ROOT)), line, text


def wrong_paths(found: Iterator[tuple[str, int, str]]) -> list[str]:
    out = []
    for where, line, text in found:
        for path in paths_in(text, relative_in(where)):
            if path not in NOT_A_PATH and not resolves(path.rstrip(".")):
                out.append(f"{where}:{line}: {path}")
    return out


def test_every_dotted_path_in_the_docs_exists() -> None:
    assert wrong_paths(texts()) == []


def missing_files(found: Iterator[tuple[str, int, str]]) -> list[str]:
    """``where:line: path`` of each ``tests/``, ``runtime/`` or ``mcpgen/`` ….py a text
    names that is not in the checkout."""
    return [
        f"{where}:{line}: {match.group(0)}"
        for where, line, text in found
        for match in CHECKOUT_FILE.finditer(text)
        if match.group(0) not in NOT_OURS and not (ROOT / match.group(0)).is_file()
    ]


def test_every_file_a_text_names_exists() -> None:
    assert missing_files(texts()) == []


def test_a_missing_file_is_caught() -> None:
    text = "see tests/test_http.py and tests/runtime/http/test_http.py (`tests/helpers.py`)"
    assert missing_files(iter([("README.md", 3, text)])) == ["README.md:3: tests/test_http.py"]
    text = "(`runtime/_regex.py`; runtime/mcpgen_runtime/schema/regex.py, mcpgen/ir.py)"
    assert missing_files(iter([("SECURITY.md", 9, text)])) == ["SECURITY.md:9: runtime/_regex.py"]
    named = {m.group(0) for _, _, text in texts() for m in CHECKOUT_FILE.finditer(text)}
    assert "tests/runtime/http/test_http.py" in named  # CONTRIBUTING.md
    assert "tests/repo/test_dotted_paths.py" in named  # docs/architecture.md
    assert set(NOT_OURS) <= named  # an exception no text needs any more goes


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ("``changes`` holds ``mcpgen.runtime._compat.Change``", ["mcpgen.runtime._compat.Change"]),
        ("# see mcpgen_runtime.client.Session", ["mcpgen_runtime.client.Session"]),
        (
            "see mcpgen_runtime.schema.validator.compile_schemas.",
            ["mcpgen_runtime.schema.validator.compile_schemas"],
        ),
        ("mcpgen_runtime.contract.rules.Change and mcpgen.spec.load", []),
        ("mcpgen_runtime.Session, mcpgen_runtime.schema.regex", []),
        ("``client.core.ClientCore``, ``spec.load``", []),
        (
            "``client.sessions``, ``render.typemaps``",
            ["mcpgen_runtime.client.sessions", "mcpgen.render.typemaps"],
        ),
    ],
)
def test_a_wrong_path_is_caught(text: str, wrong: list[str]) -> None:
    found = wrong_paths(iter([("docs/architecture.md", 1, text)]))
    assert [p.split(": ", 1)[1] for p in found] == wrong


def test_the_scan_reads_the_texts() -> None:
    """The scan finds the paths the texts name (a broken reader would find none)."""
    named = {path for where, _, text in texts() for path in paths_in(text, relative_in(where))}
    assert "mcpgen_runtime.contract.rules.Change" in named  # _errors.py
    assert "mcpgen_runtime.tasks.redis_store" in named  # docs/architecture.md
    assert len(named) > 30


def test_every_exception_is_still_needed() -> None:
    """An entry of NOT_A_PATH that no text names any more goes."""
    named = {path for where, _, text in texts() for path in paths_in(text, relative_in(where))}
    assert set(NOT_A_PATH) <= named


def _map_sections(doc: str) -> dict[str, str]:
    """The runtime's module map in docs/architecture.md: each subpackage's text."""
    block = doc.split("## Module map of the runtime", 1)[1].split("```", 2)[1]
    sections: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        head = re.match(r"  (\w+)/ ", line)
        if head:
            current = head.group(1)
        elif re.match(r"  \S", line):
            current = ""
        sections[current] = sections.get(current, "") + line + "\n"
    return sections


def test_the_architecture_names_every_module() -> None:
    """docs/architecture.md names each runtime module in its subpackage's entry of the
    module map, and each generator module."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    sections = _map_sections(doc)
    runtime = ROOT / "runtime" / "mcpgen_runtime"
    missing = []
    for path in sorted(runtime.rglob("*.py")):
        parts = path.relative_to(runtime).with_suffix("").parts
        if len(parts) == 1:
            if f"{parts[0]}.py" not in sections[""]:
                missing.append(f"runtime {parts[0]}.py")
        elif parts[-1] != "__init__" and not re.search(
            rf"\b{parts[-1]}\b", sections.get(parts[0], "")
        ):
            missing.append(f"runtime {'/'.join(parts)}")
    for path in sorted((ROOT / "mcpgen").rglob("*.py")):
        name = path.stem
        if not re.search(rf"`{name}(\.py)?`|\*\*(\w+/)?{name}\.py\*\*|`\w+/{name}`", doc):
            missing.append(f"generator {path.relative_to(ROOT)}")
    assert missing == []
