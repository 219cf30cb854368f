"""What compiling or validating a schema raises: ``SchemaError`` (the schema itself is
unusable) and ``ValidationFailed`` with its ``Problem``s (a value does not fit), which
describes them in words a model can act on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .values import (
    render_path,
)

MAX_PROBLEMS: Final = 20


_DESCRIBE_LIMIT: Final = 1000


class SchemaError(Exception):
    """The schema is invalid, or uses something this validator does not support."""


@dataclass(frozen=True)
class Problem:
    """One reason an instance was rejected, located by its path inside the instance."""

    path: tuple[str | int, ...]
    message: str

    def render(self) -> str:
        if not self.path:
            return self.message
        return f"{render_path(self.path)}: {self.message}"


class ValidationFailed(Exception):
    """An instance does not match its schema; ``problems`` says where and why."""

    problems: list[Problem]

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("ValidationFailed needs at least one problem")
        self.problems = list(problems[:MAX_PROBLEMS])
        super().__init__(self.problems)

    def describe(self, limit: int = 5) -> str:
        shown = self.problems[: max(1, limit)]
        more = len(self.problems) - len(shown)
        suffix = f" (and {more} more)" if more else ""
        text = "; ".join(problem.render() for problem in shown)
        budget = _DESCRIBE_LIMIT - len(suffix)
        if len(text) > budget:
            text = text[: budget - 1] + "…"
        return text + suffix

    def __str__(self) -> str:
        return self.describe()
