"""``fastmcp_server.py``'s server over FastMCP's stateless Streamable HTTP (uvicorn).

    python fastmcp_http.py PORT

A peer for benchmarks/http_calls.py: FastMCP's HTTP stack, the same ``add``.
"""

from __future__ import annotations

import sys

import uvicorn
from fastmcp_server import server

if __name__ == "__main__":
    app = server.http_app(path="/mcp", stateless_http=True)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
