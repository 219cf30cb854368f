"""How the CLI reports findings: colour choice and the text | json | github formats.

One place decides colour (NO_COLOR wins, then FORCE_COLOR, then "is it a
terminal"), and one place turns diagnostics into GitHub workflow commands or a
JSON document, so ``validate``, ``build --check`` and ``diff`` agree.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from .printable import escape_line
from .spec.errors import Diagnostic

__all__ = ["color_choice", "diagnostic_json", "github_command", "plural"]


def color_choice() -> bool | None:
    """False under NO_COLOR, True under FORCE_COLOR (both: any non-empty value,
    see no-color.org and force-color.org), else None: colour only on a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return None


def diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "file": diagnostic.file,
        "line": diagnostic.line,
        "column": diagnostic.column,
        "path": diagnostic.path,
        "message": diagnostic.message,
        "level": diagnostic.level,
    }


def _escape_property(text: str) -> str:
    # GitHub's workflow-command escaping: properties also escape ':' and ','
    return (
        text.replace("%", "%25")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
        .replace(":", "%3A")
        .replace(",", "%2C")
    )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_command(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    column: int | None = None,
    title: str | None = None,
) -> str:
    """``::error file=…,line=…,col=…,title=…::message`` (level: error | warning | notice)."""
    props = []
    if file is not None:
        props.append(f"file={_escape_property(file)}")
    if line is not None:
        props.append(f"line={line}")
    if column is not None:
        props.append(f"col={column}")
    if title is not None:
        props.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return escape_line(f"{head}::{_escape_data(message)}")


def diagnostic_github(diagnostic: Diagnostic) -> str:
    subject = f"{diagnostic.path}: " if diagnostic.path else ""
    return github_command(
        diagnostic.level,
        subject + diagnostic.message,
        file=diagnostic.file,
        line=diagnostic.line,
        column=diagnostic.column,
        title="mcpgen",
    )


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def count_levels(diagnostics: Iterable[Diagnostic]) -> tuple[int, int]:
    errors = warnings = 0
    for diagnostic in diagnostics:
        if diagnostic.level == "error":
            errors += 1
        else:
            warnings += 1
    return errors, warnings


def dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=True)
