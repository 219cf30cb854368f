"""Where mcpgen's own files live, in a checkout and in an installed wheel."""

from __future__ import annotations

from pathlib import Path

import mcpgen_runtime

__all__ = ["PACKAGE_DIR", "RUNTIME_DIR", "templates_dir"]

PACKAGE_DIR = Path(__file__).resolve().parent
# The installed mcpgen-runtime (in a checkout: runtime/mcpgen_runtime), the source of a
# vendored copy (``mcpgen build --runtime vendored``).
RUNTIME_DIR = Path(mcpgen_runtime.__file__).resolve().parent


def templates_dir() -> Path:
    """Top-level ``templates/`` in a checkout; ``mcpgen/_templates`` in a wheel."""
    packaged = PACKAGE_DIR / "_templates"
    if packaged.is_dir():
        return packaged
    return PACKAGE_DIR.parent / "templates"
