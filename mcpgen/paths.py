"""Where mcpgen's own files live, in a checkout and in an installed wheel."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGE_DIR", "RUNTIME_DIR", "templates_dir"]

PACKAGE_DIR = Path(__file__).resolve().parent
RUNTIME_DIR = PACKAGE_DIR / "runtime"


def templates_dir() -> Path:
    """Top-level ``templates/`` in a checkout; ``mcpgen/_templates`` in a wheel."""
    packaged = PACKAGE_DIR / "_templates"
    if packaged.is_dir():
        return packaged
    return PACKAGE_DIR.parent / "templates"
