"""``mcpgen diff --against REF``: the older spec, and every schema file it references
(followed transitively), copied out of git into a scratch folder at the same relative
places, so that its ``$ref``s resolve exactly as they did at REF.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from .rules import DiffFailed

__all__ = ["materialise"]


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise DiffFailed("--against needs git on PATH") from None
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise DiffFailed(detail[-1] if detail else f"git {' '.join(args)} failed")
    return done.stdout


def materialise(spec: Path, ref: str, scratch: Path) -> tuple[Path, str]:
    """Write SPEC@REF and its referenced files under ``scratch``; return the spec's
    copy and its path relative to the repository root."""
    folder = spec.resolve().parent
    if not folder.is_dir():
        raise DiffFailed(f"{spec}: no such directory")
    top = Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip()).resolve()
    try:
        commit = _git(folder, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffFailed:
        raise DiffFailed(f"{ref!r} is not a commit of the repository at {top}") from None
    commit_id = commit.decode().strip()
    rel = Path(os.path.relpath(spec.resolve(), top)).as_posix()
    if rel.startswith("../"):
        raise DiffFailed(f"{spec} is outside the git repository at {top}")
    pending, seen = [rel], set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            data = _git(top, "show", f"{commit_id}:{path}")
        except DiffFailed:
            if path == rel:
                raise DiffFailed(f"{rel} does not exist at {ref}") from None
            continue  # the loader reports the missing reference with its position
        target = scratch / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        pending.extend(_referenced_files(data, path))
    return scratch / rel, rel


def _referenced_files(data: bytes, path: str) -> Iterator[str]:
    """Repository-relative paths of the files that ``$ref``s in one document name."""
    try:
        document = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        return
    base = posixpath.dirname(path)
    for ref in _refs(document):
        location = ref.partition("#")[0]
        if not location or ":" in location.split("/", 1)[0]:
            continue  # local pointer or a URL: nothing to fetch
        joined = posixpath.normpath(posixpath.join(base, location))
        if not joined.startswith("../") and joined != "..":
            yield joined


def _refs(root: Any) -> Iterator[str]:
    """Every ``$ref`` string in a document, visiting each node once: YAML aliases share
    nodes, and a walk that followed every path through them could take forever."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, list):
            stack.extend(reversed(node))
            continue
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                stack.append(value)
