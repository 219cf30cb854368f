"""Shrinking a boundary or negative finding to the smallest arguments that still fail.

Hypothesis shrinks the random phase; the boundary and negative phases call fixed cases,
so their findings are shrunk here, greedily and deterministically (no randomness: the
same finding gives the same steps). A step replaces the current arguments by a simpler
candidate and is kept only when

- the candidate is still admitted: for a boundary (valid) finding the input schema
  accepts it; for a negative finding the server's validator (after coercion) refuses it
  with exactly the same problems, so the one broken place stays broken and nothing
  else breaks;
- and the call still fails *under the same check*.

The candidates, biggest first, repeated until a round keeps nothing: every optional key
dropped at once; each key dropped; each top-level value replaced by the simplest value
of its property's schema (``examples.simplest``); then, at every depth, booleans to
``false``, integers bisected toward 0 (the validator keeps them inside their bounds),
floats to 0 or a whole number, strings and arrays cut to a prefix (bisected), array
items and object keys dropped one at a time.

A candidate the schema refuses costs no call. At most :data:`SHRINK_CALLS` extra calls
per finding (:data:`TIMEOUT_SHRINK_CALLS` for a ``timeout`` finding, whose every failing
call waits out the time limit); past the budget the best arguments so far stand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from mcpgen_runtime.schema.validator import ValidationFailed, compile_schema

from .checks import Finding
from .examples import NO_VALUE, part_example, simplest
from .strategies import canonical, passes

__all__ = ["SHRINK_CALLS", "TIMEOUT_SHRINK_CALLS", "shrink_finding"]

SHRINK_CALLS = 50
TIMEOUT_SHRINK_CALLS = 5
_Path = tuple[str | int, ...]


def shrink_finding(
    finding: Finding,
    attempt: Callable[[Any], Finding | None],
    schema: Mapping[str, Any],
    calls: Callable[[], int],
    cost: int = 1,
) -> Finding:
    """The smallest form of ``finding`` (a boundary finding when ``finding.breaks`` is
    empty, else a negative one). ``attempt`` calls the tool with candidate arguments
    and checks the reply as the finding's phase does; ``calls`` counts the calls made so
    far; ``cost`` is the calls one attempt makes (2 where answers are compared)."""
    if not isinstance(finding.arguments, dict):
        return finding
    budget = TIMEOUT_SHRINK_CALLS if finding.check == "timeout" else SHRINK_CALLS
    shrinker = _Shrinker(finding, attempt, _admission(finding, schema), calls() + budget, calls)
    shrinker.cost = cost
    shrinker.run(schema)
    return shrinker.best


def _admission(finding: Finding, schema: Mapping[str, Any]) -> Callable[[Any], bool]:
    if not finding.breaks:
        validate = compile_schema(schema)
        return lambda candidate: passes(validate, candidate)
    coercing = compile_schema(schema, coerce=True)

    def problems(candidate: Any) -> frozenset[str] | None:
        try:
            coercing(candidate)
        except ValidationFailed as exc:
            return frozenset(problem.render() for problem in exc.problems)
        return None

    broken = problems(finding.arguments)
    return lambda candidate: broken is not None and problems(candidate) == broken


class _Shrinker:
    def __init__(
        self,
        finding: Finding,
        attempt: Callable[[Any], Finding | None],
        admits: Callable[[Any], bool],
        limit: int,
        calls: Callable[[], int],
    ) -> None:
        self.best = finding
        self.attempt = attempt
        self.admits = admits
        self.limit = limit
        self.calls = calls
        self.cost = 1
        self.seen = {canonical(finding.arguments)}

    @property
    def arguments(self) -> dict[str, Any]:
        return self.best.arguments  # type: ignore[no-any-return]

    def tries(self, candidate: Any) -> bool:
        """Whether ``candidate`` still fails the same check (then it is the new best)."""
        key = canonical(candidate)
        if key in self.seen or self.calls() + self.cost > self.limit:
            return False
        self.seen.add(key)
        if not self.admits(candidate):
            return False
        found = self.attempt(candidate)
        if found is None or found.check != self.best.check:
            return False
        found.phase, found.breaks = self.best.phase, self.best.breaks
        self.best = found
        return True

    def run(self, schema: Mapping[str, Any]) -> None:
        required = set(schema.get("required", []))
        self.tries({k: v for k, v in self.arguments.items() if k in required})
        progress = True
        while progress and self.calls() + self.cost <= self.limit:
            before = canonical(self.arguments)
            for name in list(self.arguments):
                if name in self.arguments:
                    self.tries({k: v for k, v in self.arguments.items() if k != name})
            for name in list(self.arguments):
                if name in self.arguments:
                    self._simplest(name, schema)
                    self._shrink((name,))
            progress = canonical(self.arguments) != before

    def _simplest(self, name: str, schema: Mapping[str, Any]) -> None:
        sub = schema.get("properties", {}).get(name)
        value = NO_VALUE if sub is None else part_example(sub, schema, simplest)
        if value is not NO_VALUE:
            self.tries({**self.arguments, name: value})

    def _shrink(self, path: _Path) -> None:
        """Simpler forms of the value at ``path``, then of the values inside it."""
        value = _get(self.arguments, path)
        if isinstance(value, bool):
            self._put(path, False)
        elif isinstance(value, int):
            self._bisect(abs(value), lambda d: d if value >= 0 else -d, path)
        elif isinstance(value, float):
            if not self._put(path, 0.0) and math.isfinite(value):
                self._put(path, float(math.trunc(value)))
        elif isinstance(value, str):
            self._bisect(len(value), lambda n: value[:n], path)
        elif isinstance(value, list):
            self._bisect(len(value), lambda n: value[:n], path)
            self._members(path, list(range(len(_get(self.arguments, path)))))
        elif isinstance(value, dict):
            self._members(path, list(value))

    def _members(self, path: _Path, keys: list[Any]) -> None:
        for key in reversed(keys):  # from the end: the earlier indexes stay put
            container = _get(self.arguments, path)
            if isinstance(container, list) and key < len(container):
                self._put(path, container[:key] + container[key + 1 :])
            elif isinstance(container, dict) and key in container:
                self._put(path, {k: v for k, v in container.items() if k != key})
        container = _get(self.arguments, path)
        inner = range(len(container)) if isinstance(container, list) else list(container)
        for key in inner:
            self._shrink((*path, key))

    def _bisect(self, size: int, make: Callable[[int], Any], path: _Path) -> None:
        """The smallest ``n`` in 0..size whose ``make(n)`` still fails, assuming the
        failure grows with ``n``; ``make(size)`` is the current value."""
        if size == 0 or self._put(path, make(0)):
            return
        low, high = 0, size
        while high - low > 1 and self.calls() + self.cost <= self.limit:
            middle = (low + high) // 2
            if self._put(path, make(middle)):
                high = middle
            else:
                low = middle

    def _put(self, path: _Path, value: Any) -> bool:
        return self.tries(_replaced(self.arguments, path, value))


def _get(value: Any, path: _Path) -> Any:
    for key in path:
        value = value[key]
    return value


def _replaced(value: Any, path: _Path, new: Any) -> Any:
    """A copy of ``value`` with the value at ``path`` replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        assert isinstance(head, int)
        return [*value[:head], _replaced(value[head], rest, new), *value[head + 1 :]]
    return {**value, head: _replaced(value[head], rest, new)}
