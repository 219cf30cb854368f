"""Builds as a workflow step: deterministic bytes, incremental writes, ownership,
a no-op that stays cheap, ``--check`` that never writes, and per-spec output.

The fixture spec is ``tests/fixtures/workflow/inventory`` (a ``types`` entry, a
``$ref`` to a schema file, two tools); each test copies it into ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen.write import MANIFEST

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "workflow" / "inventory"
MCPGEN = Path(sys.executable).with_name("mcpgen")
OUT = Path("build") / "inventory_mcp"


def _copy_spec(target: Path) -> Path:
    shutil.copytree(FIXTURE, target)
    return target / "tools.yaml"


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` with its bytes and mtime: a snapshot to compare."""
    if not root.exists():
        return {}
    return {
        path.relative_to(root).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _bytes(root: Path) -> dict[str, bytes]:
    return {name: data for name, (data, _) in _tree(root).items()}


def _edit_spec(spec: Path) -> None:
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("Add units of an item.", "Add units of one item."), "utf-8")


# --------------------------------------------------------------------------- determinism


def _build_in_subprocess(spec_arg: str, cwd: Path, hash_seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [str(MCPGEN), "build", spec_arg],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_two_builds_in_different_directories_give_identical_bytes(tmp_path: Path) -> None:
    # One build by absolute path, one by a relative path from another working
    # directory, with different hash seeds (set iteration order differs).
    first = _copy_spec(tmp_path / "a")
    second = _copy_spec(tmp_path / "elsewhere" / "deeper" / "b")
    _build_in_subprocess(str(first), ROOT, "1")
    _build_in_subprocess("deeper/b/tools.yaml", tmp_path / "elsewhere", "2")
    one, two = _bytes(first.parent / OUT), _bytes(second.parent / OUT)
    assert MANIFEST in one and "client.py" in one
    assert sorted(one) == sorted(two)
    for name in one:
        assert one[name] == two[name], f"{name} differs between the two builds"
    # Nothing machine-specific leaks into the output or the manifest.
    for name, data in one.items():
        text = data.decode("utf-8")
        for needle in (str(tmp_path), str(ROOT), str(Path.home()), "elsewhere"):
            assert needle not in text, f"{name} holds the path {needle!r}"
    manifest = json.loads(one[MANIFEST])
    assert sorted(manifest["inputs"]["files"]) == ["schemas/item.json", "tools.yaml"]
    assert not re.search(
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", "".join(data.decode() for data in one.values())
    ), "a timestamp in the output"


def test_rebuilding_after_deleting_the_output_gives_the_same_bytes(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path / "spec")
    assert build_spec(spec).status == "written"
    before = _bytes(spec.parent / OUT)
    shutil.rmtree(spec.parent / OUT)
    assert build_spec(spec).status == "written"
    assert _bytes(spec.parent / OUT) == before


# --------------------------------------------------------------------------- incremental


_NOOP_PROBE = """
import json, sys
from pathlib import Path
from mcpgen.build import build_spec
result = build_spec(Path(sys.argv[1]))
heavy = sorted({name.split(".")[0] for name in sys.modules} & {
    "black", "datamodel_code_generator", "jinja2", "jsonschema", "pydantic"})
print(json.dumps({"status": result.status, "heavy": heavy}))
"""


def test_a_no_op_build_imports_no_generator(tmp_path: Path) -> None:
    """A no-op build stays cheap by what it imports (timings live in benchmarks/, not here)."""
    spec = _copy_spec(tmp_path / "spec")
    assert build_spec(spec).status == "written"
    done = subprocess.run(
        [sys.executable, "-c", _NOOP_PROBE, str(spec)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    assert probe["status"] == "unchanged"
    assert probe["heavy"] == [], f"a no-op build imported {probe['heavy']}"

    cli = subprocess.run(
        [str(MCPGEN), "build", str(spec)], capture_output=True, text=True, check=False
    )
    assert cli.returncode == 0 and "unchanged" in cli.stdout


def test_an_unchanged_build_touches_no_file(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path / "spec")
    build_spec(spec)
    before = _tree(spec.parent / OUT)
    assert build_spec(spec).status == "unchanged"
    assert _tree(spec.parent / OUT) == before


def test_a_changed_spec_rewrites_only_the_files_that_change(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path / "spec")
    build_spec(spec)
    before = _tree(spec.parent / OUT)
    _edit_spec(spec)
    result = build_spec(spec)
    assert result.status == "written" and result.report is not None
    after = _tree(spec.parent / OUT)
    changed = sorted(name for name in after if after[name] != before.get(name))
    assert set(result.report.written) <= set(changed) and result.report.written
    assert "py.typed" in result.report.unchanged
    assert after["py.typed"] == before["py.typed"]  # mtime kept too


def test_stale_owned_files_are_removed_and_unowned_files_kept(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path / "spec")
    out = spec.parent / OUT
    build_spec(spec)
    # An earlier build (another mcpgen version) owned a file this one no longer makes.
    (out / "legacy").mkdir()
    (out / "legacy" / "old_module.py").write_text("# generated long ago\n")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["outputs"]["legacy/old_module.py"] = hashlib.sha256(
        b"# generated long ago\n"
    ).hexdigest()
    (out / MANIFEST).write_text(json.dumps(manifest))
    # Files the user put there are never mcpgen's business.
    (out / "NOTES.md").write_text("mine\n")
    (out / "extra").mkdir()
    (out / "extra" / "helper.py").write_text("X = 1\n")
    _edit_spec(spec)
    result = build_spec(spec)
    assert result.status == "written" and result.report is not None
    assert result.report.removed == ["legacy/old_module.py"]
    assert not (out / "legacy").exists()  # emptied directories are pruned
    assert (out / "NOTES.md").read_text() == "mine\n"
    assert (out / "extra" / "helper.py").read_text() == "X = 1\n"
    assert "legacy/old_module.py" not in json.loads((out / MANIFEST).read_text())["outputs"]


def test_a_directory_mcpgen_did_not_create_is_refused_unless_forced(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path / "spec")
    out = spec.parent / OUT
    out.mkdir(parents=True)
    (out / "precious.txt").write_text("do not lose me\n")
    runner = CliRunner()
    refused = runner.invoke(main, ["build", str(spec)])
    assert refused.exit_code == 1
    assert "was not created by mcpgen" in refused.output and "--force" in refused.output
    assert sorted(p.name for p in out.iterdir()) == ["precious.txt"]
    forced = runner.invoke(main, ["build", "--force", str(spec)])
    assert forced.exit_code == 0, forced.output
    assert (out / "precious.txt").read_text() == "do not lose me\n"
    assert (out / MANIFEST).is_file()


# --------------------------------------------------------------------------- --check


@pytest.fixture
def built(tmp_path: Path) -> Path:
    spec = _copy_spec(tmp_path / "spec")
    assert build_spec(spec).status == "written"
    return spec


def _check(*specs: Path) -> tuple[int, str, dict[str, tuple[bytes, int]]]:
    """Run `mcpgen build --check`, asserting it wrote nothing anywhere under the specs."""
    roots = {spec.parent for spec in specs}
    before = {root: _tree(root) for root in roots}
    result = CliRunner().invoke(main, ["build", "--check", *map(str, specs)])
    for root in roots:
        assert _tree(root) == before[root], "--check wrote something"
    return result.exit_code, result.output, before[next(iter(roots))]


def test_check_fresh_output_exits_0(built: Path) -> None:
    code, output, _ = _check(built)
    assert code == 0
    expected = rf"{re.escape(str(built))}: up to date \({re.escape(str(built.parent / OUT))}\) "
    assert re.fullmatch(expected + r"\(\d+\.\d\ds\)\n", output)


def test_check_after_a_spec_change_exits_1_with_a_diff(built: Path) -> None:
    _edit_spec(built)
    code, output, _ = _check(built)
    assert code == 1
    assert "-    Add units of an item." in output or "Add units of an item." in output
    assert "+" in output and "(generated)" in output
    assert re.search(r": stale, \d+ file\(s\) differ from ", output)


def test_check_a_hand_edited_file_exits_1(built: Path) -> None:
    client = built.parent / OUT / "client.py"
    client.write_text(client.read_text() + "# my tweak\n")
    code, output, _ = _check(built)
    assert code == 1
    assert "-# my tweak" in output and "client.py (on disk)" in output


def test_check_a_missing_file_exits_1(built: Path) -> None:
    (built.parent / OUT / "models.py").unlink()
    code, output, _ = _check(built)
    assert code == 1
    assert f"missing: {built.parent / OUT / 'models.py'}" in output


def test_check_a_leftover_file_exits_1(built: Path) -> None:
    out = built.parent / OUT
    (out / "old_module.py").write_text("# from an older mcpgen\n")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["outputs"]["old_module.py"] = "0" * 64
    manifest["inputs"]["generator"] = "an older generator"
    (out / MANIFEST).write_text(json.dumps(manifest))
    code, output, _ = _check(built)
    assert code == 1
    assert f"no longer generated (would be removed): {out / 'old_module.py'}" in output


def test_check_a_never_built_spec_creates_nothing(tmp_path: Path) -> None:
    spec = _copy_spec(tmp_path / "spec")
    code, output, _ = _check(spec)
    assert code == 1
    assert "missing: " in output
    assert not (spec.parent / "build").exists()


def test_check_several_specs_one_summary_line_each(tmp_path: Path) -> None:
    fresh = _copy_spec(tmp_path / "fresh")
    stale = _copy_spec(tmp_path / "stale")
    build_spec(fresh)
    build_spec(stale)
    _edit_spec(stale)
    result = CliRunner().invoke(main, ["build", "--check", str(fresh), str(stale)])
    assert result.exit_code == 1
    summaries = [line for line in result.output.splitlines() if line.startswith(str(tmp_path))]
    assert len(summaries) == 2
    assert summaries[0].startswith(f"{fresh}: up to date")
    assert summaries[1].startswith(f"{stale}: stale")
    both_fresh = CliRunner().invoke(main, ["build", "--check", str(fresh), str(fresh)])
    assert both_fresh.exit_code == 0


# --------------------------------------------------------------------------- output


def test_piped_output_is_one_plain_line_per_spec(tmp_path: Path) -> None:
    specs = [_copy_spec(tmp_path / name) for name in ("one", "two", "three")]
    build_spec(specs[0])
    done = subprocess.run(
        [str(MCPGEN), "build", *map(str, specs)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and done.stderr == ""
    assert lines[0].startswith(f"{specs[0]}: unchanged (")
    assert re.fullmatch(
        rf"{re.escape(str(specs[1]))}: wrote \d+ file\(s\), removed 0 → .* "
        r"\(\d+\.\d\ds\)",
        lines[1],
    )
    assert "\x1b" not in done.stdout and "[1/3]" not in done.stdout


def _run_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run a command with stdout and stderr on one pseudo-terminal; return its output."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, close_fds=True
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=30)
    os.close(leader)
    return code, b"".join(chunks).decode("utf-8", errors="replace")


def test_a_terminal_shows_progress_timing_a_total_and_red_errors(tmp_path: Path) -> None:
    specs = [_copy_spec(tmp_path / name) for name in ("one", "two")]
    build_spec(specs[0])
    broken = tmp_path / "broken.yaml"
    broken.write_text("mcpgen: 1\npackage: x\nserver: {name: x, version: '1'}\ntools: [{nme: a}]\n")
    code, output = _run_on_a_terminal(
        [str(MCPGEN), "build", str(specs[0]), str(specs[1]), str(broken)], tmp_path
    )
    assert code == 1
    assert "building…" in output
    assert re.search(r"\[1/3\] .*one/tools\.yaml: unchanged .*\(\d+\.\d\ds\)", output)
    assert re.search(r"\[2/3\] .*two/tools\.yaml: wrote \d+ file\(s\)", output)
    assert re.search(r"\x1b\[31m\[3/3\] .*broken\.yaml: invalid, \d+ error\(s\)", output)
    assert "unknown key 'nme'" in output
    assert re.search(r"3 specs: .*1 failed \(\d+\.\d\ds\)", output)
