"""The old import path of ``mcpgen_runtime.http.server``, which the README once named
for serving a generated package under your own ASGI server (``build_asgi_app``).
Kept so code written against it keeps working; new code imports ``http.server``.
"""

from __future__ import annotations

from .http.server import *
