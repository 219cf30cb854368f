"""A hatchling build hook: generate packages from specs into the wheel.

A consumer project adds mcpgen to its build requirements and names the hook:

    [build-system]
    requires = ["hatchling", "mcpgen"]
    build-backend = "hatchling.build"

    [tool.hatch.build.hooks.mcpgen]
    # specs = ["tools.yaml"]     # default: [tool.mcpgen] specs, else tools.yaml

``pip install .``, ``pip wheel .`` or ``python -m build`` then builds each spec into
a scratch folder and puts the package into the wheel under its import name, so no
generated code needs to be committed. The wheel depends on the mcpgen-runtime range
that code needs (``mcpgen-runtime>=X.Y.Z,<X.Y+1``, added to the project's own
dependencies), so installing the wheel alone gives a server that runs. A spec that does not build fails the build
with its diagnostics. The sdist ships the specs (they are sources) and no
generated code; its wheel is built the same way.

Registered through the ``hatch`` entry-point group (pyproject.toml), which is how
hatchling finds a hook named in ``[tool.hatch.build.hooks.<name>]``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.plugin import hookimpl

__all__ = ["McpgenBuildHook", "hatch_register_build_hook"]


class McpgenBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "mcpgen"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return  # the sdist carries the specs; its own wheel build generates
        from .build import build_spec
        from .config import find_config

        root = Path(self.root)
        specs = self._specs(root, find_config(root))
        self._scratch = Path(tempfile.mkdtemp(prefix="mcpgen-hatch-"))
        force_include: dict[str, str] = build_data.setdefault("force_include", {})
        for spec in specs:
            from .spec.load import load_contract

            loaded = load_contract(spec)
            if loaded.contract is None:
                problems = "\n".join(str(d) for d in loaded.diagnostics)
                raise RuntimeError(f"mcpgen: {spec} does not build:\n{problems}")
            package = loaded.contract.package
            target = self._scratch / package
            result = build_spec(spec, output=target)
            if not result.ok:
                problems = "\n".join(str(d) for d in result.diagnostics) or result.message
                raise RuntimeError(f"mcpgen: {spec} does not build:\n{problems}")
            (target / ".mcpgen-manifest.json").unlink(missing_ok=True)  # a build record only
            force_include[str(target)] = package
            self._require(build_data, result.requirement)
            self.app.display_info(f"mcpgen: {spec.relative_to(root)} -> {package}/")

    @staticmethod
    def _require(build_data: dict[str, Any], requirement: str | None) -> None:
        """Add the runtime the generated code imports to the wheel's ``Requires-Dist``
        (hatchling appends ``build_data["dependencies"]`` to the project's own)."""
        dependencies: list[str] = build_data.setdefault("dependencies", [])
        if requirement is not None and requirement not in dependencies:
            dependencies.append(requirement)

    def _specs(self, root: Path, config: Any) -> list[Path]:
        configured = self.config.get("specs")
        if configured is not None:
            if not isinstance(configured, list) or not all(isinstance(s, str) for s in configured):
                raise TypeError("[tool.hatch.build.hooks.mcpgen] specs must be a list of paths")
            return [root / spec for spec in configured]
        if config is not None and config.specs and config.root == root:
            return [entry.path.resolve() for entry in config.specs]
        return [root / "tools.yaml"]

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


@hookimpl
def hatch_register_build_hook() -> type[McpgenBuildHook]:
    return McpgenBuildHook
