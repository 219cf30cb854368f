"""The work behind ``add`` and ``profile``, shared by every benchmark server so that
handler time is the same everywhere and only the framework around it differs."""

from __future__ import annotations

from typing import Any

ADD_ARGS = {"a": 2, "b": 3}

PROFILE_ARGS: dict[str, Any] = {
    "name": "Ada Lovelace",
    "email": "Ada@Example.org",
    "age": 36,
    "score": 97.5,
    "active": True,
    "role": "editor",
    "tags": ["math", "engines", "poetry"],
    "address": {"street": "12 St James's Square", "city": "London", "zip": "10001"},
    "priority": 2,
    "ratio": 0.25,
    "nickname": "Enchantress",
    "joined": "1843-07-01",
}


def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


def profile(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` as the wire carries them (``address`` a dict, ``joined`` a string)."""
    user: dict[str, Any] = {
        "name": args["name"],
        "email": args["email"].lower(),
        "age": args["age"],
        "role": args["role"],
        "tags": sorted(args["tags"]),
    }
    if args.get("nickname") is not None:
        user["nickname"] = args["nickname"]
    stats: dict[str, Any] = {"score": args["score"], "priority": args.get("priority", 3)}
    if args.get("ratio") is not None:
        stats["ratio"] = args["ratio"]
    return {
        "id": f"u-{args['age']}-{len(args['name'])}",
        "active": args["active"],
        "user": user,
        "address": dict(args["address"]),
        "stats": stats,
        "joined": str(args["joined"]),
    }
