"""Rendering: IR → Python source files (templates, models, formatting)."""
