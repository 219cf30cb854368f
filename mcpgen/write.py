"""Writing a generated package: ownership, a manifest, no-op detection, --check.

The output directory holds ``.mcpgen-manifest.json``: the hashes of every input
(spec, referenced schema files, mcpgen version) and of every file written. It
is how a build knows which files it owns (stale ones are removed, others never
touched), and how an unchanged build returns at once without importing the
heavy generator parts.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .paths import PACKAGE_DIR, templates_dir

__all__ = [
    "MANIFEST",
    "OutputRefused",
    "WriteReport",
    "check_package",
    "inputs_record",
    "is_up_to_date",
    "write_package",
]

MANIFEST = ".mcpgen-manifest.json"


class OutputRefused(Exception):
    """The output directory holds files mcpgen did not write."""


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def inputs_record(paths: Iterable[str | Path], base: Path) -> dict[str, Any]:
    """What the output was built from: mcpgen's version and each input's hash.

    Paths are stored relative to ``base`` so the record is the same on any machine.
    """
    files: dict[str, str] = {}
    for path in paths:
        p = Path(path)
        files[_relative(p, base)] = _sha(p.read_bytes())
    return {"mcpgen": __version__, "generator": generator_fingerprint(), "files": files}


def generator_fingerprint() -> str:
    """A hash of the templates, runtime and renderer: output changes when they do,
    even between two builds of one mcpgen version (as in development)."""
    package = PACKAGE_DIR

    sources = sorted(
        [*templates_dir().glob("*.jinja"), *package.glob("runtime/*.py"), *package.glob("render/*.py"),
         package / "schemas.py", *package.glob("spec/*.py")]
    )
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return path.resolve().as_posix()


def read_manifest(out: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    # A hand-edited or crafted manifest: a section of the wrong shape counts as empty.
    for section in ("inputs", "outputs"):
        if not isinstance(data.get(section, {}), dict):
            data[section] = {}
    return data


def is_up_to_date(out: Path, base: Path) -> bool:
    """True when the recorded inputs and every recorded output are unchanged."""
    manifest = read_manifest(out)
    if manifest is None or manifest.get("inputs", {}).get("mcpgen") != __version__:
        return False
    if manifest["inputs"].get("generator") != generator_fingerprint():
        return False
    recorded = manifest["inputs"].get("files", {})
    # Only regular files are hashed: a manifest naming /dev/zero or a FIFO (as an input
    # or an output) must not make the build read forever.
    if not isinstance(recorded, dict) or not all(
        isinstance(name, str) and (base / name).is_file() for name in recorded
    ):
        return False
    try:
        current = inputs_record((base / name for name in recorded), base)
    except OSError:
        return False
    if current["files"] != recorded:
        return False
    for name, digest in manifest.get("outputs", {}).items():
        if not (out / name).is_file():
            return False
        try:
            if _sha((out / name).read_bytes()) != digest:
                return False
        except OSError:
            return False
    return True


def write_package(
    out: Path, files: Mapping[str, bytes], inputs: Mapping[str, Any], *, force: bool = False
) -> WriteReport:
    """Write ``files`` under ``out``; remove files of an earlier build that are
    no longer produced; refuse a non-empty directory mcpgen did not create."""
    manifest = read_manifest(out)
    if manifest is None and out.exists() and any(out.iterdir()) and not force:
        raise OutputRefused(
            f"{out} exists and was not created by mcpgen (no {MANIFEST}); "
            "choose another output or pass --force"
        )
    report = WriteReport()
    previous = set(manifest.get("outputs", {})) if manifest else set()
    for name, data in files.items():
        target = _confined(out, name)
        if target.is_file() and target.read_bytes() == data:
            report.unchanged.append(name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        _replace_file(target, data)
        report.written.append(name)
    for name in sorted(previous - set(files)):
        target = _confined(out, name)
        if target.is_file():
            target.unlink()
            report.removed.append(name)
        _prune_empty_dirs(target.parent, out)
    new_manifest = {
        "inputs": dict(inputs),
        "outputs": {name: _sha(data) for name, data in files.items()},
    }
    manifest_text = json.dumps(new_manifest, indent=2, sort_keys=True) + "\n"
    _replace_file(out / MANIFEST, manifest_text.encode())
    return report


def _replace_file(target: Path, data: bytes) -> None:
    """Write ``target`` through a temporary file and an atomic rename (a reader never
    sees half a file). A symlink planted at either name is replaced, never followed,
    so the bytes cannot land outside the output directory."""
    temporary = target.with_name(target.name + ".mcpgen-tmp")
    temporary.unlink(missing_ok=True)
    temporary.write_bytes(data)
    os.replace(temporary, target)


def _confined(out: Path, name: str) -> Path:
    """``out / name``, refusing any name that would leave ``out``."""
    try:
        target = (out / name).resolve()
    except (ValueError, OSError):  # a NUL byte or a symlink loop in a crafted manifest
        raise OutputRefused(f"refusing an output name that is not a path: {name!r}") from None
    if not target.is_relative_to(out.resolve()) or Path(name).is_absolute():
        raise OutputRefused(f"refusing to write outside {out}: {name}")
    return out / name


def _prune_empty_dirs(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_relative_to(stop):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def check_package(out: Path, files: Mapping[str, bytes]) -> list[str]:
    """Unified diffs for every stale, missing, hand-edited or leftover file.

    Never writes anything.
    """
    diffs: list[str] = []
    manifest = read_manifest(out)
    for name, data in files.items():
        target = out / name
        try:
            current = target.read_bytes()
        except OSError:
            diffs.append(f"missing: {target}\n")
            continue
        if current != data:
            diffs.append(_diff(current, data, str(target)))
    if manifest:
        for name in sorted(set(manifest.get("outputs", {})) - set(files)):
            if (out / name).exists():
                diffs.append(f"no longer generated (would be removed): {out / name}\n")
    return diffs


def _diff(old: bytes, new: bytes, label: str) -> str:
    try:
        old_lines = old.decode().splitlines(keepends=True)
        new_lines = new.decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return f"binary file differs: {label}\n"
    return "".join(
        difflib.unified_diff(old_lines, new_lines, f"{label} (on disk)", f"{label} (generated)")
    )
