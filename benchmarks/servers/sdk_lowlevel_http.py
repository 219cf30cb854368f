"""``sdk_lowlevel.py``'s server over the SDK's own stateless Streamable HTTP (uvicorn).

    python sdk_lowlevel_http.py PORT [HTTP] [LOOP]

The reference for benchmarks/http_calls.py: the SDK's HTTP stack with nothing of
mcpgen in it.
"""

from __future__ import annotations

from _uvicorn import serve
from sdk_lowlevel import server

if __name__ == "__main__":
    app = server.streamable_http_app(stateless_http=True, json_response=True, host="127.0.0.1")
    serve(app)
