"""Diagnostics: every problem found in a spec, as a value with its position.

Errors are collected, never raised one at a time, so a user sees every problem
of a file in one run (``tools.yaml:12:7: tools[2].parameters[0].type: …``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..printable import escape_line

__all__ = ["Diagnostic", "SpecError", "did_you_mean", "format_path"]


@dataclass(frozen=True, order=True)
class Diagnostic:
    file: str
    line: int
    column: int
    path: str
    message: str
    level: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        """``file:line:col: path: message`` on one line, with anything a terminal would
        act on (control, line-break, bidi characters from a spec or a server) escaped."""
        where = f"{self.file}:{self.line}:{self.column}"
        prefix = "warning: " if self.level == "warning" else ""
        subject = f"{self.path}: " if self.path else ""
        return escape_line(f"{where}: {prefix}{subject}{self.message}")


class SpecError(Exception):
    """A spec that cannot be built; ``diagnostics`` lists every problem found."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def format_path(path: Iterable[str | int]) -> str:
    """``("tools", 2, "parameters", 0, "type")`` → ``tools[2].parameters[0].type``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'string'?)`` when a close match exists, else ``""``."""
    matches = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.6)
    return f" (did you mean '{matches[0]}'?)" if matches else ""
