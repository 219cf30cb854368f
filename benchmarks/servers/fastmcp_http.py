"""``fastmcp_server.py``'s server over FastMCP's stateless Streamable HTTP (uvicorn).

    python fastmcp_http.py PORT [HTTP] [LOOP]

A peer for benchmarks/http_calls.py: FastMCP's HTTP stack, the same ``add``.
"""

from __future__ import annotations

import sys

import uvicorn
from fastmcp_server import server

if __name__ == "__main__":
    app = server.http_app(path="/mcp", stateless_http=True, json_response=True)
    http = sys.argv[2] if len(sys.argv) > 2 else "h11"
    loop = sys.argv[3] if len(sys.argv) > 3 else "auto"
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        access_log=False,
        http=http,
        loop=loop,
    )  # type: ignore[arg-type]
