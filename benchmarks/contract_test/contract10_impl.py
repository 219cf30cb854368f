"""A correct implementation of contract10.yaml (the `mcpgen test` budget benchmark)."""

from __future__ import annotations

from typing import Any

from contract10_mcp import Contract10Server


def _count(node: Any) -> int:
    return 1 + sum(_count(child) for child in node.get("children", []))


class Impl(Contract10Server):
    def echo(self, text: str) -> str:
        return text

    def add(self, a: int, b: int) -> int:
        return a + b

    def clamp(self, args: Any) -> float:
        return max(-10.0, min(10.0, float(args["x"])))

    def when(self, args: Any) -> str:
        return str(args["day"])

    def contact(self, args: Any) -> str:
        return str(args["email"]).split("@")[1]

    def pick(self, args: Any) -> str:
        return str(args["mode"])

    def order(self, items: Any) -> dict[str, int]:
        return {"count": len(items["items"])}

    def tree(self, root: Any) -> int:
        return _count(root)

    def settings(self, values: Any) -> dict[str, Any]:
        return dict(values)

    def lookup(self, key: str) -> str:
        return key.upper()
