"""``mcpgen diff``: the labelled corpus of spec pairs, the CLI formats and exit codes,
and ``--against GIT_REF`` in a temporary git repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.diff import ALL_RULES, SPEC_RULES, diff_files
from mcpgen_runtime.contract.compare import RULES, Category, Severity

ROOT = Path(__file__).resolve().parents[2]
CORPUS_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "workflow" / "diff" / "corpus.yaml"
CORPUS: list[dict[str, Any]] = yaml.safe_load(CORPUS_PATH.read_text(encoding="utf-8"))["entries"]

Label = tuple[str, str, str | None]


def _write(folder: Path, spec: dict[str, Any], files: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, document in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(document), encoding="utf-8")
    path = folder / "tools.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _pair(entry: dict[str, Any], tmp_path: Path) -> tuple[Path, Path]:
    old = _write(tmp_path / "old", entry["old"], entry.get("old_files"))
    new = _write(tmp_path / "new", entry["new"], entry.get("new_files"))
    return old, new


def _labels(entry: dict[str, Any]) -> set[Label]:
    return {(rule, severity, category) for rule, severity, category in entry["expect"]}


# --------------------------------------------------------------------------- the corpus


def test_corpus_is_large_with_unique_ids() -> None:
    ids = [entry["id"] for entry in CORPUS]
    assert len(ids) >= 25
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("entry", CORPUS, ids=[entry["id"] for entry in CORPUS])
def test_corpus_entry(entry: dict[str, Any], tmp_path: Path) -> None:
    old, new = _pair(entry, tmp_path)
    report = diff_files(old, new)
    found = {
        (
            c.change.rule,
            c.change.severity.value,
            None if c.change.category is None else c.change.category.name.lower(),
        )
        for c in report.changes
    }
    assert found == _labels(entry), "\n".join(
        f"{c.change.rule} {c.change.path}: {c.change.message}" for c in report.changes
    )


def test_corpus_labels_agree_with_the_rule_tables() -> None:
    for entry in CORPUS:
        for rule, severity, category in _labels(entry):
            info = ALL_RULES[rule]
            assert info.severity.value == severity, (entry["id"], rule)
            assert (info.category.name.lower() if info.category else None) == category


def test_every_spec_rule_is_in_the_corpus() -> None:
    seen = {rule for entry in CORPUS for rule, _, _ in _labels(entry)}
    source_rules = {name for name, rule in SPEC_RULES.items() if rule.category is Category.SOURCE}
    assert {
        "CALLBACK_CHANGED",
        "RETURNS_CHANGED",
        "ASYNC_CHANGED",
        "METHOD_RENAMED",
        "PARAM_PY_RENAMED",
    } <= source_rules
    assert source_rules <= seen, f"spec-level SOURCE rules without an entry: {source_rules - seen}"
    assert set(SPEC_RULES) <= seen, f"spec rules without an entry: {set(SPEC_RULES) - seen}"


def test_spec_rules_extend_the_wire_rules_without_clashing() -> None:
    assert not set(SPEC_RULES) & set(RULES)
    for rule in SPEC_RULES.values():
        assert (rule.severity is Severity.BREAKING) == (rule.category is not None)


def test_every_category_has_a_breaking_entry_and_negatives_exist() -> None:
    categories = {category for entry in CORPUS for _, _, category in _labels(entry)}
    assert {"source", "call", "behavior"} <= categories
    assert sum(1 for entry in CORPUS if not entry["expect"]) >= 3


# --------------------------------------------------------------------------- the CLI


def _entry(name: str) -> dict[str, Any]:
    return next(entry for entry in CORPUS if entry["id"] == name)


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["diff", *args])
    return result.exit_code, result.output


def test_text_output_groups_per_tool_then_summarises(tmp_path: Path) -> None:
    entry = {
        "old": _entry("identical")["old"],
        "new": {
            **_entry("identical")["new"],
            "package": "store_mcp",
            "tools": [
                {**_entry("identical")["new"]["tools"][0], "description": "Changed."},
                {**_entry("identical")["new"]["tools"][1], "timeout": 3},
            ],
        },
    }
    old, new = _pair(entry, tmp_path)
    code, output = _invoke(str(old), str(new))
    assert code == 1
    lines = output.splitlines()
    assert lines[0] == f"{old} -> {new}"
    assert lines[1] == "contract (package, server, types)"
    assert re.match(
        r"  breaking +source +PACKAGE_RENAMED +package: package 'shop_mcp' -> 'store_mcp'", lines[2]
    )
    assert re.fullmatch(rf"get_item \({re.escape(str(new))}:\d+\)", lines[3])
    assert "DESCRIPTION_CHANGED" in lines[4] and lines[4].startswith("  warning")
    search = lines.index(next(line for line in lines if line.startswith("search (")))
    assert "TIMEOUT_TIGHTENED" in lines[search + 1]
    assert "\nstock\n" in output and "TOOL_REMOVED" in output  # only OLD has it: no line
    assert lines[-1].startswith("FAIL ")
    # TOOL_REMOVED is source (the client method is gone) as well as call
    assert "3 breaking (2 source, 1 behavior)" in lines[-1]
    assert "\x1b" not in output  # not a terminal: no colour


@pytest.mark.parametrize(
    ("entry", "category", "code"),
    [
        ("identical", "behavior", 0),
        ("tool-added", "behavior", 0),
        ("description-changed", "behavior", 0),  # a warning never fails
        ("read-only-dropped", "behavior", 1),
        ("read-only-dropped", "call", 0),
        ("tool-removed", "call", 1),
        ("tool-removed", "source", 1),  # the client method is gone: mypy fails
        ("enum-value-removed", "source", 1),  # Literal["urgent"] no longer accepted
        ("required-param-added", "source", 1),
        ("type-narrowed-number-to-integer", "source", 1),
        ("maximum-lowered", "call", 1),  # the annotation is unchanged: wire only
        ("maximum-lowered", "source", 0),
        ("returns-changed", "source", 1),
        ("returns-changed", "behavior", 1),
    ],
)
def test_exit_codes_follow_the_category(
    entry: str, category: str, code: int, tmp_path: Path
) -> None:
    old, new = _pair(_entry(entry), tmp_path)
    exit_code, output = _invoke(str(old), str(new), "--category", category)
    assert exit_code == code, output
    assert output.splitlines()[-1].startswith("FAIL" if code else "OK")


def test_json_output(tmp_path: Path) -> None:
    old, new = _pair(_entry("default-dropped-param-made-required"), tmp_path)
    code, output = _invoke(str(old), str(new), "--format", "json", "--category", "source")
    assert code == 1
    document = json.loads(output)
    assert document["category"] == "source" and document["failed"] is True
    assert document["summary"] == {"breaking": 2, "warning": 1, "compatible": 0, "failing": 2}
    by_rule = {change["rule"]: change for change in document["changes"]}
    assert by_rule["CALLBACK_CHANGED"]["fails"] is True
    assert by_rule["PARAM_MADE_REQUIRED"] == {
        "tool": "search",
        "rule": "PARAM_MADE_REQUIRED",
        "severity": "breaking",
        "category": "source",  # a call leaving `limit` out no longer type-checks
        "path": "inputSchema.properties.limit",
        "message": "parameter 'limit' became required",
        "line": by_rule["PARAM_MADE_REQUIRED"]["line"],
        "fails": True,
    }
    spec_lines = new.read_text().splitlines()
    assert "limit" in spec_lines[by_rule["PARAM_MADE_REQUIRED"]["line"] - 1]


def test_github_annotations_point_at_the_new_spec(tmp_path: Path) -> None:
    entry = {
        "old": _entry("read-only-dropped")["old"],
        "new": {
            **_entry("read-only-dropped")["new"],
            "tools": [
                {
                    **_entry("read-only-dropped")["new"]["tools"][0],
                    "description": "100%: fine,\nreally",
                },
            ],
        },
    }
    old, new = _pair(entry, tmp_path)
    code, output = _invoke(str(old), str(new), "--format", "github", "--category", "call")
    assert code == 0  # the behaviour change is below --category call
    lines = output.splitlines()
    description_line = next(
        number
        for number, text in enumerate(new.read_text().splitlines(), 1)
        if text.lstrip().startswith("description:")
    )
    hints_line = next(
        number for number, text in enumerate(new.read_text().splitlines(), 1) if "hints:" in text
    )
    assert (
        f"::warning file={new},line={hints_line},title=HINT_READ_ONLY_REMOVED::get_item: "
        "readOnlyHint true -> false" in lines
    )
    description = [line for line in lines if "DESCRIPTION_CHANGED" in line]
    assert len(description) == 1 and description[0].startswith("::warning ")
    assert f"line={description_line}," in description[0]
    assert description[0].endswith("::get_item: description changed; review the new text")
    assert lines[-1].startswith("OK ")
    # and with the default category the same change is an error
    code, output = _invoke(str(old), str(new), "--format", "github")
    assert code == 1
    assert any(
        line.startswith("::error ") and "HINT_READ_ONLY_REMOVED" in line
        for line in output.splitlines()
    )


def test_github_escapes_data_and_properties(tmp_path: Path) -> None:
    old, new = _pair(_entry("package-renamed"), tmp_path)
    odd = tmp_path / "odd,dir:x"
    odd.mkdir()
    moved = odd / "tools.yaml"
    moved.write_text(new.read_text())
    code, output = _invoke(str(old), str(moved), "--format", "github")
    assert code == 1
    assert "file=" + str(moved).replace(",", "%2C").replace(":", "%3A") in output


def test_ignore_drops_a_rule_and_unknown_rules_are_refused(tmp_path: Path) -> None:
    old, new = _pair(_entry("returns-changed"), tmp_path)
    assert _invoke(str(old), str(new), "--ignore", "RETURNS_CHANGED")[0] == 0
    code, output = _invoke(str(old), str(new), "--ignore", "NOT_A_RULE")
    assert code == 2 and "NOT_A_RULE" in output


def test_an_invalid_spec_exits_2_with_its_diagnostics(tmp_path: Path) -> None:
    old, new = _pair(_entry("identical"), tmp_path)
    new.write_text(new.read_text().replace("type: string", "type: strng", 1))
    code, output = _invoke(str(old), str(new))
    assert code == 2
    assert "'strng' is not a JSON Schema type (did you mean 'string'?)" in output
    assert "invalid spec" in output


def test_wrong_number_of_specs_is_a_usage_error(tmp_path: Path) -> None:
    old, _ = _pair(_entry("identical"), tmp_path)
    assert _invoke(str(old))[0] == 2
    assert _invoke(str(old), str(old), "--against", "HEAD")[0] == 2


# --------------------------------------------------------------------------- --against


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a committed spec in a subfolder, referencing a schema file."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    entry = _entry("schema-file-pattern-changed")
    _write(root / "contracts", entry["old"], entry["old_files"])
    # a schema file referencing another one: both must come out of git
    (root / "contracts" / "schemas" / "sku.json").write_text(
        json.dumps({"$ref": "common/code.json"})
    )
    (root / "contracts" / "schemas" / "common").mkdir()
    (root / "contracts" / "schemas" / "common" / "code.json").write_text(
        json.dumps({"type": "string", "pattern": "^[A-Z]+$"})
    )
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "contract v1")
    return root


def test_against_head_reads_the_spec_and_its_schema_files_from_git(repo: Path) -> None:
    spec = repo / "contracts" / "tools.yaml"
    code, output = _invoke(str(spec), "--against", "HEAD")
    assert code == 0 and output.splitlines()[-1].startswith("OK 0 change(s)")
    assert output.splitlines()[0] == f"HEAD:contracts/tools.yaml -> {spec}"
    # Tighten the nested schema file and change the description in the working tree.
    (repo / "contracts" / "schemas" / "common" / "code.json").write_text(
        json.dumps({"type": "string", "pattern": "^[A-Z]{3}$"})
    )
    spec.write_text(spec.read_text().replace("One item by SKU.", "One item, by SKU."))
    code, output = _invoke(str(spec), "--against", "HEAD", "--format", "json")
    assert code == 1
    rules = {change["rule"] for change in json.loads(output)["changes"]}
    assert rules == {"PARAM_CONSTRAINT_TIGHTENED", "DESCRIPTION_CHANGED"}
    # An older commit works too, from any working directory.
    _git(repo, "commit", "-qam", "contract v2")
    cwd = os.getcwd()
    try:
        os.chdir(repo / "contracts" / "schemas")
        code, output = _invoke("../tools.yaml", "--against", "HEAD~1")
    finally:
        os.chdir(cwd)
    assert code == 1 and "PARAM_CONSTRAINT_TIGHTENED" in output
    assert output.splitlines()[0] == "HEAD~1:contracts/tools.yaml -> ../tools.yaml"


def test_against_a_bad_ref_or_a_new_spec_exits_2(repo: Path) -> None:
    spec = repo / "contracts" / "tools.yaml"
    code, output = _invoke(str(spec), "--against", "no-such-branch")
    assert code == 2 and "mcpgen diff:" in output
    new_spec = repo / "contracts" / "more.tools.yaml"
    new_spec.write_text(spec.read_text())
    code, output = _invoke(str(new_spec), "--against", "HEAD")
    assert code == 2 and "contracts/more.tools.yaml does not exist at HEAD" in output


def test_against_outside_a_repository_exits_2(tmp_path: Path) -> None:
    old, _ = _pair(_entry("identical"), tmp_path)
    code, output = _invoke(str(old), "--against", "HEAD")
    assert code == 2 and "mcpgen diff:" in output


def test_github_data_escaping() -> None:
    from mcpgen.diff.output import _gh_data, _gh_property

    assert _gh_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert _gh_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_readme_lists_every_rule_with_its_categories() -> None:
    """The rule table of docs/contract-diff.md is the reference users read: every rule,
    its severity and its category, exactly as the code classifies them."""
    readme = (ROOT / "docs" / "contract-diff.md").read_text(encoding="utf-8")
    pattern = r"^\| `([A-Z_]+)`(?: \(spec\))? \| (\w+) \| ([\w—]+) \|"
    rows = {
        name: (severity, category)
        for name, severity, category in re.findall(pattern, readme, re.MULTILINE)
    }
    expected = {
        name: (rule.severity.value, rule.category.name.lower() if rule.category else "—")
        for name, rule in ALL_RULES.items()
    }
    assert rows == expected


_TYPED_OLD = """\
mcpgen: 1
package: pri_mcp
server: {name: pri, version: "1"}
tools:
  - name: file_ticket
    parameters:
      - {name: title, type: string}
      - {name: priority, enum: [low, urgent], required: false}
      - {name: size, type: number, required: false}
      - {name: owner, type: string, required: false}
      - {name: note, type: string, required: false}
    callback: named
"""

# each change alone, and what the diff must call it
_TYPED_CHANGES = {
    "PARAM_ENUM_VALUE_REMOVED": ("enum: [low, urgent]", "enum: [low]"),
    "PARAM_MADE_REQUIRED": (
        "{name: owner, type: string, required: false}",
        "{name: owner, type: string}",
    ),
    "PARAM_TYPE_NARROWED": ("{name: size, type: number,", "{name: size, type: integer,"),
    "PARAM_REMOVED": ("      - {name: note, type: string, required: false}\n", ""),
}

_CALLER = """\
from pri_mcp import PriClient


def call(client: PriClient) -> None:
    client.file_ticket("t", priority="urgent", size=1.5, note="n")
"""


def test_source_category_matches_what_mypy_rejects(tmp_path: Path) -> None:
    """Client code that type-checks against OLD fails mypy against NEW for each change
    the diff calls source (it used to call the first three call-breaking only)."""
    import sys

    from helpers import build_package

    old_spec = tmp_path / "old.yaml"
    old_spec.write_text(_TYPED_OLD, encoding="utf-8")
    targets = []
    for index, (rule, (before, after)) in enumerate(_TYPED_CHANGES.items()):
        assert before in _TYPED_OLD
        new_text = _TYPED_OLD.replace(before, after)
        new_spec = tmp_path / f"new_{index}.yaml"
        new_spec.write_text(new_text, encoding="utf-8")
        report = diff_files(old_spec, new_spec)
        found = {c.change.rule: c.change.category for c in report.changes}
        assert found.get(rule) is Category.SOURCE, (rule, found)
        assert report.failing(Category.SOURCE) and report.failing(Category.CALL)
        gen = build_package(new_text, tmp_path / f"case_{index}", "pri_mcp")
        caller = gen / "caller.py"
        caller.write_text(_CALLER, encoding="utf-8")
        targets.append(caller)
    old_gen = build_package(_TYPED_OLD, tmp_path / "old", "pri_mcp")
    (old_gen / "caller.py").write_text(_CALLER, encoding="utf-8")
    targets.insert(0, old_gen / "caller.py")

    def mypy(target: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--strict",
                "--no-incremental",
                "--config-file",
                "/dev/null",
                "caller.py",
            ],
            cwd=target.parent,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    first = mypy(targets[0])
    assert first.returncode == 0, first.stdout  # type-correct against OLD
    for rule, target in zip(_TYPED_CHANGES, targets[1:], strict=True):
        checked = mypy(target)
        assert checked.returncode == 1 and "caller.py:5" in checked.stdout, (rule, checked.stdout)
