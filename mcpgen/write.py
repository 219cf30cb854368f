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
from .paths import PACKAGE_DIR, RUNTIME_DIR, templates_dir
from .safeio import MAX_MANIFEST_BYTES, MAX_SPEC_BYTES, UnsafeFile, read_regular, replace_file

__all__ = [
    "MANIFEST",
    "MAX_OUTPUT_BYTES",
    "BadManifest",
    "OutputRefused",
    "WriteReport",
    "check_package",
    "inputs_record",
    "is_up_to_date",
    "write_package",
]

MANIFEST = ".mcpgen-manifest.json"

MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""Largest file an up-to-date check hashes for a manifest entry (64 MiB; a generated
1,000-tool package is ~3 MB in all)."""


class OutputRefused(Exception):
    """The output directory holds files mcpgen did not write."""


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def inputs_record(
    paths: Iterable[str | Path], base: Path, runtime: str = "installed"
) -> dict[str, Any]:
    """What the output was built from: mcpgen's version and each input's hash.

    Paths are stored relative to ``base`` so the record is the same on any machine.
    """
    files: dict[str, str] = {}
    for path in paths:
        p = Path(path)
        files[_relative(p, base)] = _sha(read_regular(p, limit=MAX_SPEC_BYTES))
    return {
        "mcpgen": __version__,
        "generator": generator_fingerprint(),
        "runtime": runtime,  # installed or vendored: another choice is another output
        "files": files,
    }


def generator_fingerprint() -> str:
    """A hash of the templates, runtime and renderer: output changes when they do,
    even between two builds of one mcpgen version (as in development)."""
    package = PACKAGE_DIR

    sources = sorted(
        [
            *templates_dir().glob("*.jinja"),
            *RUNTIME_DIR.rglob("*.py"),
            *package.glob("render/*.py"),
            package / "descriptors.py",
            package / "keywords.py",  # the JSON Schema vocabulary both spec/ and render/ read
            *package.glob("spec/*.py"),
        ]
    )
    digest = hashlib.sha256()
    for source in sources:
        digest.update(
            source.relative_to(source.parents[1]).as_posix().encode()
            + b"\0"
            + source.read_bytes()
            + b"\0"
        )
    return digest.hexdigest()


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return path.resolve().as_posix()


class BadManifest(Exception):
    """The manifest exists but is not something mcpgen will read (a symlink, a FIFO,
    a device, a file over ``MAX_MANIFEST_BYTES``); the message says which."""


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of ``out``; None when absent or unreadable as JSON.

    Raises ``BadManifest`` when the name holds anything but a regular file of at
    most ``MAX_MANIFEST_BYTES``: it is opened without following a symlink and never
    read past the limit, so a manifest linked to ``/dev/zero`` or replaced by a FIFO
    is a message, not a hang. Such a directory counts as not created by mcpgen.
    """
    try:
        raw = read_regular(out / MANIFEST, limit=MAX_MANIFEST_BYTES, follow_symlinks=False)
    except UnsafeFile as exc:
        raise BadManifest(
            f"{out / MANIFEST} {exc.reason}; mcpgen reads only a regular file of at most "
            f"{MAX_MANIFEST_BYTES:,} bytes there"
        ) from None
    except OSError:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    # A hand-edited or crafted manifest: a section of the wrong shape counts as empty.
    for section in ("inputs", "outputs"):
        if not isinstance(data.get(section, {}), dict):
            data[section] = {}
    return data


def is_up_to_date(out: Path, base: Path, runtime: str = "installed") -> bool:
    """True when the recorded inputs and every recorded output are unchanged."""
    try:
        manifest = read_manifest(out)
    except BadManifest:
        return False  # the full build says why
    if manifest is None or manifest.get("inputs", {}).get("mcpgen") != __version__:
        return False
    if manifest["inputs"].get("generator") != generator_fingerprint():
        return False
    if manifest["inputs"].get("runtime", "installed") != runtime:
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
        try:
            target = _confined(out, name)
            content = read_regular(target, limit=MAX_OUTPUT_BYTES, follow_symlinks=False)
        except (OutputRefused, OSError):
            return False
        if _sha(content) != digest:
            return False
    return True


def write_package(
    out: Path, files: Mapping[str, bytes], inputs: Mapping[str, Any], *, force: bool = False
) -> WriteReport:
    """Write ``files`` under ``out``; remove files of an earlier build that are
    no longer produced; refuse a non-empty directory mcpgen did not create."""
    try:
        manifest = read_manifest(out)
    except BadManifest as exc:
        if not force:
            raise OutputRefused(
                f"{exc}, so {out} counts as not created by mcpgen; "
                "choose another output or pass --force (the manifest is then replaced)"
            ) from None
        manifest = None
    if manifest is None and out.exists() and any(out.iterdir()) and not force:
        raise OutputRefused(
            f"{out} exists and was not created by mcpgen (no {MANIFEST}); "
            "choose another output or pass --force"
        )
    report = WriteReport()
    previous = set(manifest.get("outputs", {})) if manifest else set()
    for name, data in files.items():
        target = _confined(out, name)
        if _current(target, len(data)) == data:
            report.unchanged.append(name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_file(target, data)
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
    # Through a temporary file and a rename (safeio.replace_file): a reader never sees
    # half a file, and a symlink planted at the name is replaced, never followed, so
    # the bytes cannot land outside the output directory.
    replace_file(out / MANIFEST, manifest_text.encode())
    return report


def _read_output(target: Path, expected: int) -> bytes:
    """What ``target`` holds now, if it is a regular file (not a symlink, a FIFO, a
    device) of a size worth comparing with ``expected`` bytes: enough to compare and
    show a diff, never an unbounded read. ``OSError`` (``UnsafeFile``) otherwise."""
    return read_regular(target, limit=max(2 * expected, MAX_SPEC_BYTES), follow_symlinks=False)


def _current(target: Path, expected: int) -> bytes | None:
    try:
        return _read_output(target, expected)
    except OSError:
        return None


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
    try:
        manifest = read_manifest(out)
    except BadManifest as exc:  # a build would refuse this directory without --force
        diffs.append(f"untrusted manifest: {exc}\n")
        manifest = None
    for name, data in files.items():
        target = out / name
        try:
            current = _read_output(target, len(data))
        except FileNotFoundError:
            diffs.append(f"missing: {target}\n")
            continue
        except OSError as exc:
            reason = exc.reason if isinstance(exc, UnsafeFile) else exc.strerror
            diffs.append(f"not a file mcpgen wrote: {target}: {reason}\n")
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
