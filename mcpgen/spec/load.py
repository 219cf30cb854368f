"""Spec front end: YAML file → every problem at once, or a frozen IR.

``load_contract`` reads a spec, checks its structure against the spec format
schema, the keywords and validity of every embedded JSON Schema, references,
names and defaults, and builds ``ir.Contract``. All problems of a file come
back together as one ``SpecError`` whose diagnostics carry file:line:col.

The steps live apart: ``yamlpos`` (YAML with positions), ``validate`` (the checks),
``bundle`` (``$ref`` bundling), ``lower`` (raw spec → IR tools and names); this module
runs them in order and assembles the contract.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import ir
from ..names import class_name
from ..safeio import MAX_SPEC_BYTES, UnsafeFile, read_regular
from .bundle import Bundler
from .dialect import upgrade_schema
from .errors import Diagnostic
from .lower import Lowering, local_def_names, unhide_type_names
from .yamlpos import Path as YPath
from .yamlpos import load_yaml

__all__ = ["LoadResult", "load_contract", "load_spec_text"]


@dataclass
class LoadResult:
    contract: ir.Contract | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "warning"]


def load_contract(
    path: str | Path, *, allow_outside_refs: bool = False, allow_outside_output: bool = False
) -> LoadResult:
    """Load and validate the spec at ``path``; never raises for a bad spec.

    ``allow_outside_output``: accept an ``output`` that is absolute or leaves the
    spec's directory tree (refused by default: a spec, perhaps written by an imported
    server, must not choose to write anywhere on the machine)."""
    spec_path = Path(path)
    try:
        # a regular file of bounded size: a FIFO or /dev/zero named as the spec is a
        # diagnostic, never a hang
        raw = read_regular(spec_path, limit=MAX_SPEC_BYTES)
    except UnsafeFile as exc:
        return LoadResult(
            None, [Diagnostic(str(path), 1, 1, "", f"cannot read spec: it {exc.reason}")]
        )
    except OSError as exc:
        return LoadResult(
            None, [Diagnostic(str(path), 1, 1, "", f"cannot read spec: {exc.strerror}")]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LoadResult(
            None, [Diagnostic(str(path), 1, 1, "", f"spec is not UTF-8: {exc.reason}")]
        )
    return load_spec_text(
        text,
        str(path),
        spec_dir=spec_path.parent,
        allow_outside_refs=allow_outside_refs,
        allow_outside_output=allow_outside_output,
    )


def load_spec_text(
    text: str,
    filename: str,
    *,
    spec_dir: Path,
    allow_outside_refs: bool = False,
    allow_outside_output: bool = False,
) -> LoadResult:
    doc, problems = load_yaml(text, filename)
    if problems and doc.data is None:
        return LoadResult(None, problems)
    checker = _Checker(doc, filename, spec_dir, allow_outside_refs, allow_outside_output)
    checker.diagnostics.extend(problems)
    try:
        contract = checker.run(hashlib.sha256(text.encode()).hexdigest())
    except RecursionError:  # a schema (inline or referenced) deeper than the checks can walk
        checker.error((), "the spec or a schema it references is nested too deeply to check")
        contract = None
    diagnostics = sorted(set(checker.diagnostics))
    if any(d.level == "error" for d in diagnostics):
        contract = None
    return LoadResult(contract, diagnostics)


class _Checker(Lowering):
    """Runs the checks and the lowering in order (``validate.py``, ``lower.py``)."""

    def upgrade_drafts(self, types: dict[str, Any], tools: list[Any]) -> None:
        """Every schema of the spec in 2020-12 (``dialect.py``), before it is checked."""
        found: list[tuple[Any, YPath]] = [
            (schema, ("types", name)) for name, schema in types.items()
        ]
        for index, tool in enumerate(tools):
            if not isinstance(tool, dict):
                continue
            found += [
                (tool[key], ("tools", index, key))
                for key in ("input_schema", "output_schema")
                if key in tool
            ]
            parameters = tool.get("parameters")
            found += [
                (param, ("tools", index, "parameters", number))
                for number, param in enumerate(parameters if isinstance(parameters, list) else [])
            ]
        for schema, path in found:
            for where, message in upgrade_schema(schema, path):
                self.warning(where, message)

    def run(self, sha256: str) -> ir.Contract | None:
        if not isinstance(self.data, dict):
            self.error((), "a spec is a mapping with keys mcpgen, package, server, tools")
            return None
        self.check_structure()
        self.check_package()
        self.check_output()
        types: dict[str, Any] = (
            self.data["types"] if isinstance(self.data.get("types"), dict) else {}
        )
        tools_raw: list[Any] = (
            self.data["tools"] if isinstance(self.data.get("tools"), list) else []
        )
        self.upgrade_drafts(types, tools_raw)
        for name, schema in types.items():
            self.check_schema(schema, ("types", name))
        for index, tool in enumerate(tools_raw):
            if isinstance(tool, dict):
                self.check_tool_schemas(tool, ("tools", index))
        bundler = Bundler(
            self.spec_dir,
            types,
            allow_outside=self.allow_outside,
            reserved=local_def_names(tools_raw),
        )
        bundler.bundle_types()
        built = [
            (index, self.build_tool(tool, ("tools", index), bundler, types))
            for index, tool in enumerate(tools_raw)
            if isinstance(tool, dict)
        ]
        built = unhide_type_names(built, types)
        tools = [tool for _, tool in built]
        for problem in bundler.problems:
            self.error(problem.path, problem.message)
        self.check_file_directives(bundler)
        # positions use the index in the spec, not in the list of tools that could be built
        self.check_names(
            [(index, tool) for index, tool in built if tool is not None], tools_raw, types
        )
        if any(d.level == "error" for d in self.diagnostics):
            return None
        for index, tool in built:
            if tool is not None:
                self.check_runtime_schemas(tool, ("tools", index))
        self.check_model_depth(bundler, built)
        self.check_type_schemas(bundler.defs, types)
        if any(d.level == "error" for d in self.diagnostics):
            return None
        return self.contract(sha256, bundler, tools)

    def contract(self, sha256: str, bundler: Bundler, tools: list[ir.Tool | None]) -> ir.Contract:
        """The IR of a spec every check passed."""
        server = self.data["server"]
        package = self.data["package"]
        return ir.Contract(
            spec_path=self.filename,
            spec_name=Path(self.filename).name,
            spec_sha256=sha256,
            package=package,
            output=self.data.get("output", f"./{package}"),
            server=ir.Server(
                name=server["name"],
                version=str(server["version"]),
                title=server.get("title"),
                instructions=server.get("instructions"),
                implementation=server.get("implementation"),
                class_prefix=class_name(server["name"]),
                registry_name=server.get("registry_name"),
                description=server.get("description"),
                environment=tuple(
                    ir.EnvironmentVariable(
                        name=item["name"],
                        description=item.get("description"),
                        secret=item.get("secret", False),
                        required=item.get("required", False),
                        default=item.get("default"),
                    )
                    for item in server.get("environment", ())
                ),
            ),
            types={name: bundler.defs[name] for name in sorted(bundler.defs)},
            tools=tuple(tool for tool in tools if tool is not None),
            inputs=tuple(str(path) for path in bundler.files),
        )
