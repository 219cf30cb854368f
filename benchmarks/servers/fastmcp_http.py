"""``fastmcp_server.py``'s server over FastMCP's stateless Streamable HTTP (uvicorn).

    python fastmcp_http.py PORT [HTTP] [LOOP]

A peer for benchmarks/http_calls.py: FastMCP's HTTP stack, the same ``add``.
"""

from __future__ import annotations

from _uvicorn import serve
from fastmcp_server import server

if __name__ == "__main__":
    app = server.http_app(path="/mcp", stateless_http=True, json_response=True)
    serve(app)
