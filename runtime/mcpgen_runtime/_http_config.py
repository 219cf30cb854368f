"""The old import path of ``mcpgen_runtime.http.config`` (``HttpOptions``), which the
README once named. Kept so code written against it keeps working; new code imports
``http.config``.
"""

from __future__ import annotations

from .http.config import *
