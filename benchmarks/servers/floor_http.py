"""The HTTP floor: a bare ASGI app on uvicorn that parses a ``tools/call add`` POST
and answers the bytes the generated server answers (JSON), validating nothing.

    python floor_http.py PORT [HTTP] [LOOP]

Its time is what any Python server on uvicorn pays for HTTP, ``json`` and a
handler call. ``HTTP``/``LOOP``: uvicorn's ``http`` and ``loop`` settings (the
benchmark gives every server the same).
"""

from __future__ import annotations

import json
from typing import Any

from _uvicorn import serve

HEADERS = [(b"content-type", b"application/json")]
dumps = json.JSONEncoder(separators=(",", ":")).encode


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    request = json.loads(body)
    arguments = request["params"]["arguments"]
    total = {"sum": arguments["a"] + arguments["b"]}
    result = {
        "content": [{"type": "text", "text": dumps(total)}],
        "structuredContent": total,
        "isError": False,
    }
    answer = (dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [*HEADERS, (b"content-length", str(len(answer)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": answer})


if __name__ == "__main__":
    serve(app)
