"""The one way the HTTP benchmark servers run: ``python X_http.py PORT [HTTP] [LOOP]``.

Every server of the HTTP table (floor, SDK low-level, FastMCP) is served by uvicorn with
the same options, so the table compares the apps and not their servers.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn


def serve(app: Any) -> None:
    """Serve ``app`` on 127.0.0.1:PORT with the parser (h11) and loop (auto) from argv."""
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
