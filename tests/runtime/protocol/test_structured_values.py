"""How a handler's structured value becomes JSON data
(``protocol.structured.plain_value``): models dumped at any depth, plain data passed
through untouched, too deep a value refused."""

from __future__ import annotations

import pydantic
import pytest

from mcpgen_runtime.protocol.structured import plain_value as _plain


class Point(pydantic.BaseModel):
    x: int
    label: str = pydantic.Field(default="", alias="Label")


def test_plain_data_is_passed_through_without_a_copy() -> None:
    flat = {"a": 1, "b": "two", "c": None, "d": 1.5, "e": True}
    assert _plain(flat) is flat
    row = [1, "two", None]
    assert _plain(row) is row
    nested = {"user": {"name": "a"}, "tags": ["x"]}
    assert _plain(nested) == nested


def test_models_are_dumped_by_alias_at_any_depth() -> None:
    value = {"points": [Point(x=1), Point(x=2, Label="b")], "at": (Point(x=3),)}
    assert _plain(value) == {"points": [{"x": 1}, {"x": 2, "Label": "b"}], "at": [{"x": 3}]}
    assert _plain([{"p": Point(x=4)}]) == [{"p": {"x": 4}}]


def test_too_deep_a_value_raises_recursion_error() -> None:
    deep: dict[str, object] = {}
    for _ in range(5000):
        deep = {"d": deep}
    with pytest.raises(RecursionError):
        _plain(deep)
