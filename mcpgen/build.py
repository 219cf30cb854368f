"""One build step per spec: load → render → write (or compare for --check).

Errors are values: a ``BuildResult`` carries the diagnostics of a bad spec, the
diffs of a stale output, or what was written, and the CLI prints them.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from .safeio import MAX_SPEC_BYTES, outside_reason, read_regular
from .spec.errors import Diagnostic
from .write import (
    OutputRefused,
    WriteReport,
    check_package,
    inputs_record,
    is_up_to_date,
    write_package,
)

__all__ = [
    "OLD_LAYOUT_CACHE",
    "BuildResult",
    "RuntimeMode",
    "build_spec",
    "output_dir",
    "runtime_requirement",
]

OLD_LAYOUT_CACHE = ".mcpgen-layout-cache.json"
"""Where builds before 0.1.0's last development round kept black's output per unit, in
the output directory. There is no such cache now (docs/architecture.md, "Generated code
and linters"); a build removes the file it finds there, its own leftover."""

Status = Literal["written", "unchanged", "fresh", "stale", "invalid", "refused"]
RuntimeMode = Literal["installed", "vendored"]  # see render.package.RuntimeMode


def runtime_requirement(mode: RuntimeMode) -> str | None:
    """What a package built in ``mode`` needs installed: the mcpgen-runtime range
    that can run code this mcpgen writes (None when the runtime is vendored)."""
    if mode == "vendored":
        return None
    from mcpgen_runtime import requirement

    from . import __version__

    return requirement(__version__)


@dataclass
class BuildResult:
    spec: Path
    status: Status
    output: Path | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    report: WriteReport | None = None
    message: str = ""
    seconds: float = 0.0
    requirement: str | None = None  # the runtime the package needs (runtime_requirement)

    @property
    def ok(self) -> bool:
        return self.status in ("written", "unchanged", "fresh")


def output_dir(spec: Path, declared: object, package: object, override: Path | None) -> Path:
    if override is not None:
        return override
    relative = declared if isinstance(declared, str) else f"./{package}"
    return spec.parent / relative


# Top-level `package:` / `output:` lines holding a plain scalar (optionally quoted).
_TOP_LEVEL = re.compile(
    r"^(package|output):[ \t]+(?:\"([^\"\\\n]*)\"|'([^'\n]*)'|([^\s#'\"][^\n#]*?))[ \t]*(?:#.*)?$",
    re.MULTILINE,
)


def _peek_output(
    spec: Path, override: Path | None, *, allow_outside_output: bool = False
) -> Path | None:
    """The output directory from a quick look (no validation), for the no-op check.

    A whole YAML parse costs ~0.3 s on a 1,000-tool spec, so the two top-level
    keys are read with a pattern first; anything unusual falls back to the parse.
    Either way the manifest's input hashes decide freshness, so a wrong guess can
    only cost a full build, never skip one.
    """
    if override is not None:
        return override
    try:
        text = read_regular(spec, limit=MAX_SPEC_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # the full load says why
    declared = _peek_declared(text)
    if declared is None:
        return None
    output, package = declared
    # An output outside the spec's tree takes the full load, which refuses it: an
    # up-to-date manifest there must not turn a refusal into "unchanged".
    if isinstance(output, str) and not allow_outside_output and outside_reason(spec.parent, output):
        return None
    return output_dir(spec, output, package, None)


def _peek_declared(text: str) -> tuple[object, str] | None:
    """(output, package) as declared at the top level of a spec's text, or None."""
    found: dict[str, list[str]] = {}
    for match in _TOP_LEVEL.finditer(text):
        value = next(group for group in match.groups()[1:] if group is not None)
        found.setdefault(match.group(1), []).append(value)
    if len(found.get("package", ())) == 1 and len(found.get("output", ())) <= 1:
        output = found["output"][0] if "output" in found else None
        return output, found["package"][0]
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("package"), str):
        return None
    return data.get("output"), data["package"]


def build_spec(
    spec: Path,
    *,
    output: Path | None = None,
    check: bool = False,
    force: bool = False,
    allow_outside_refs: bool = False,
    allow_outside_output: bool = False,
    runtime: RuntimeMode = "installed",
) -> BuildResult:
    """Build (or ``check``) one spec. ``output`` is the user's own choice of directory
    (``-o``) and is used as given; the spec's ``output`` must stay inside the spec's
    directory tree unless ``allow_outside_output``. ``runtime``: import the installed
    mcpgen-runtime, or vendor a copy into the package."""
    started = time.perf_counter()
    result = _build(spec, output, check, force, allow_outside_refs, allow_outside_output, runtime)
    result.seconds = time.perf_counter() - started
    if result.ok:
        result.requirement = runtime_requirement(runtime)
    return result


def _build(
    spec: Path,
    override: Path | None,
    check: bool,
    force: bool,
    allow_outside_refs: bool,
    allow_outside_output: bool,
    runtime: RuntimeMode,
) -> BuildResult:
    # --check always renders and compares: the manifest it would trust lives in the
    # directory being checked, where a hand edit can update its hash too.
    peeked = (
        None if check else _peek_output(spec, override, allow_outside_output=allow_outside_output)
    )
    if peeked is not None and is_up_to_date(peeked, spec.parent, runtime):
        return BuildResult(spec, "unchanged", peeked)

    from .render.package import render_package  # heavy: only when something changed
    from .spec.load import load_contract

    loaded = load_contract(
        spec,
        allow_outside_refs=allow_outside_refs,
        # with -o the spec's output is not used, so it cannot send the build anywhere
        allow_outside_output=allow_outside_output or override is not None,
    )
    if loaded.contract is None:
        return BuildResult(spec, "invalid", diagnostics=loaded.diagnostics)
    contract = loaded.contract
    out = output_dir(spec, contract.output, contract.package, override)
    if check:
        files = render_package(contract, runtime)
        diffs = check_package(out, files)
        return BuildResult(spec, "stale" if diffs else "fresh", out, loaded.diagnostics, diffs)
    files = render_package(contract, runtime)
    inputs = inputs_record([spec, *contract.inputs], spec.parent, runtime)
    try:
        report = write_package(out, files, inputs, force=force)
    except OutputRefused as exc:
        return BuildResult(spec, "refused", out, loaded.diagnostics, message=str(exc))
    (out / OLD_LAYOUT_CACHE).unlink(missing_ok=True)  # never follows a symlink
    status: Status = "written" if report.written or report.removed else "unchanged"
    return BuildResult(spec, status, out, loaded.diagnostics, report=report)
