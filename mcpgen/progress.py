"""Per-spec progress for ``mcpgen build``: live on a terminal, plain when piped.

On a terminal each spec shows ``[3/12] path: building…`` while it runs, replaced by
its result line with the counter and timing, and a total closes a multi-spec run.
Piped (CI logs, scripts) the output is exactly one result line per spec, no
escape codes, no counter, no total: easy to grep and stable to compare.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

import click

from .printable import escape_line
from .report import color_choice

__all__ = ["BuildProgress"]

_CLEAR_LINE = "\r\x1b[K"


class BuildProgress:
    """Prints what a multi-spec build is doing; ``interactive`` defaults to stdout being a tty."""

    def __init__(
        self, total: int, *, interactive: bool | None = None, stream: TextIO | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.total = total
        self.index = 0
        self.failed = 0
        self.tally: dict[str, int] = {}
        self.started = time.perf_counter()
        self._transient = False

    def _prefix(self) -> str:
        if not self.interactive or self.total < 2:
            return ""
        width = len(str(self.total))
        return f"[{self.index:>{width}}/{self.total}] "

    def begin(self, spec: object) -> None:
        """A spec starts: on a terminal, say so until its result replaces the line."""
        self.index += 1
        if self.interactive:
            self.stream.write(f"{_CLEAR_LINE}{self._prefix()}{escape_line(str(spec))}: building…")
            self.stream.flush()
            self._transient = True

    def interrupt(self) -> None:
        """Clear the transient line before anything else (diagnostics, diffs) is printed."""
        if self._transient:
            self.stream.write(_CLEAR_LINE)
            self.stream.flush()
            self._transient = False

    def finish(self, line: str, *, status: str, ok: bool) -> None:
        """The spec's one result line: stdout when it succeeded, red on stderr when not."""
        self.interrupt()
        self.tally[status] = self.tally.get(status, 0) + 1
        text = self._prefix() + escape_line(line)  # paths and messages may come from a spec
        if ok:
            click.echo(text, file=self.stream)
        else:
            self.failed += 1
            click.secho(
                text, fg="red", err=True, color=color_choice()
            )  # NO_COLOR / FORCE_COLOR / tty

    def close(self) -> None:
        """On a terminal, a total after several specs."""
        self.interrupt()
        if not self.interactive or self.total < 2:
            return
        seconds = time.perf_counter() - self.started
        parts = ", ".join(f"{count} {status}" for status, count in sorted(self.tally.items()))
        verdict = f"{self.failed} failed" if self.failed else "all ok"
        click.echo(f"{self.total} specs: {parts}; {verdict} ({seconds:.2f}s)", file=self.stream)
