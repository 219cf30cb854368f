"""The floor: a minimal stdlib JSON-RPC loop over stdio. It answers initialize,
tools/list and tools/call with hard-coded tools and validates nothing, so its time
is what any Python stdio server pays for the pipe, ``json`` and a handler call.

    python floor.py [--tools TOOLS.json]

``--tools`` names a JSON list of tool descriptors for ``tools/list`` (run.py passes
the generated contract's, so the generated client's contract check passes).
"""

from __future__ import annotations

import json
import sys

from _profile import add, profile

TOOLS = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        },
    }
]


def main() -> None:
    tools = TOOLS
    if "--tools" in sys.argv:
        with open(sys.argv[sys.argv.index("--tools") + 1], encoding="utf-8") as f:
            tools = json.load(f)
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message["method"]
        params = message.get("params") or {}
        if method == "tools/call":
            args = params["arguments"]
            value = add(args["a"], args["b"]) if params["name"] == "add" else profile(args)
            result = {
                "content": [{"type": "text", "text": dumps(value)}],
                "structuredContent": value,
                "isError": False,
            }
        elif method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "floor", "version": "1.0.0"},
            }
        elif method == "tools/list":
            result = {"tools": tools}
        else:
            result = {}
        out.write(
            (dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n").encode()
        )
        out.flush()


if __name__ == "__main__":
    main()
