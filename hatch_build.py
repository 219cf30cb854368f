"""Build hook: the mcpgen wheel depends on the mcpgen-runtime of its own version.

The runtime is its own distribution (runtime/pyproject.toml). A regular wheel of
mcpgen declares ``mcpgen-runtime==<version>``; an editable install from the checkout
(``pip install -e '.[dev,http]'``) instead puts ``runtime/`` on the path (dev-mode-dirs
in pyproject.toml), so one command gives both import packages without an index.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class RuntimeDependency(BuildHookInterface):  # type: ignore[misc]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["dependencies"].append(f"mcpgen-runtime=={self.metadata.version}")
