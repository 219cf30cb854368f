"""Never run, only type-checked (tests/generator/render/test_typing.py builds tests/fixtures/wire and
runs mypy --strict on it and on this module).

An optional argument is ``UNSET`` when left out (not sent) and ``None`` only where
its schema admits null (sent as null): every line marked ``# type: ignore[...]`` MUST
be an error (warn_unused_ignores keeps these expectations honest).
"""

from __future__ import annotations

from typing import Any, Literal

from wire_mcp import UNSET, AsyncWireClient, Unset, WireClient, WireServer


def explicit_null_versus_absent(client: WireClient) -> None:
    client.update_issue(7)
    client.update_issue(7, milestone=None)  # [integer, "null"]: None is sent as null
    client.update_issue(7, milestone=3, title="t", priority=2, due_on="2026-12-02")
    client.update_issue(7, milestone=UNSET, title=UNSET)
    client.update_issue(7, title=None)  # type: ignore[arg-type]
    client.update_issue(7, priority=None)  # type: ignore[arg-type]
    client.update_issue(7, milestone="3")  # type: ignore[arg-type]
    client.set_milestone(7, None, 2)
    client.set_milestone(7, priority=None)  # type: ignore[arg-type]
    maybe: int | None | Unset = UNSET
    client.update_issue(7, milestone=maybe)
    received: dict[str, Any] = client.update_issue(7)
    print(received)


async def explicit_null_async(client: AsyncWireClient) -> None:
    await client.update_issue(7, milestone=None)
    await client.update_issue(7, title=None)  # type: ignore[arg-type]


def unset_is_one_value(value: int | Unset) -> int:
    marker: Literal[Unset.UNSET] = UNSET
    print(marker)
    if value is UNSET:
        return 0
    return value  # narrowed to int


def numbers(client: WireClient) -> None:
    exact: float = client.echo_number(9007199254740993)
    whole: int = client.echo_integer(3)
    print(exact, whole)


class Handlers(WireServer):
    # Positional handlers are unchanged: a left-out optional arrives as its default,
    # else None.
    def set_milestone(self, number: int, milestone: int | None, priority: int) -> list[Any]:
        return [number, milestone, priority]
