"""One ``mcpgen test`` run: load the contract, start the target, report drift, test the
tools, attach a ``reproduce`` line to every finding.

The contract is always the spec. In process (``--impl``), the implementation must run
on a package generated from this very spec: the installed one when its ``contract``
module matches the spec, else a fresh build in a temporary folder (put first on
``sys.path`` before the implementation is imported).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import ir
from .checks import SERVER, Finding, ToolUnderTest
from .drift import drift_findings
from .runner import Options, Report, RunStopped, ToolOutcome, replay, run_tools
from .targets import UNSET, InProcessTarget, SessionTarget, Target, TargetFailed

__all__ = ["TargetChoice", "UsageFailure", "run_contract_test"]


class UsageFailure(Exception):
    """A usage or I/O problem (exit 2): the message names it."""


@dataclass(frozen=True)
class TargetChoice:
    impl: str | type | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # with url: sent with every request
    command: tuple[str, ...] = ()
    # with url: a token the server accepts holding none of a scoped tool's scopes
    # (unauthorized_accepted expects 403 for it)
    token_without_scopes: str | None = None
    # with url: tokens the server must refuse (401 invalid_token)
    invalid_tokens: tuple[str, ...] = ()

    def arguments(self) -> list[str]:
        """The target as ``mcpgen test`` options, for reproduce lines (a command goes
        last, after ``--``: see ``_reproduce``)."""
        if self.url is not None:
            # a header's value may be a secret: the line names the header, not its value
            named = [part for name, _ in self.headers for part in ("--header", f"{name}: …")]
            if self.token_without_scopes is not None:
                named += ["--auth-token-without-scopes", "…"]
            for _ in self.invalid_tokens:
                named += ["--auth-token-invalid", "…"]
            return ["--url", self.url, *named]
        if self.command:
            return []
        if isinstance(self.impl, type):
            return ["--impl", f"{self.impl.__module__}:{self.impl.__qualname__}"]
        return ["--impl", self.impl] if self.impl else []


def run_contract_test(
    spec: Path,
    choice: TargetChoice,
    options: Options,
    *,
    tools: Sequence[str] = (),
    replay_arguments: Any = UNSET,
    progress: Callable[[ToolOutcome], None] | None = None,
) -> Report:
    contract = _load(spec)
    by_name = {tool.name: tool for tool in contract.tools}
    unknown = [name for name in tools if name not in by_name]
    if unknown:
        raise UsageFailure(
            f"unknown --tool {', '.join(map(repr, unknown))}; the contract has "
            f"{', '.join(map(repr, by_name)) or 'no tools'}"
        )
    if replay_arguments is not UNSET and len(tools) != 1:
        raise UsageFailure("--replay needs exactly one --tool")
    selected = [by_name[name] for name in tools] if tools else list(contract.tools)
    target, in_process = _target(spec, contract, choice, options.timeout)
    under_test = [_under_test(tool, in_process) for tool in selected]
    try:
        target.start()
        report = _run(
            contract, target, under_test, options, replay_arguments, progress, remote=not in_process
        )
    except TargetFailed as exc:
        raise UsageFailure(str(exc)) from None
    except RunStopped as stop:  # before any tool ran (while starting, listing): no tool tested
        report = Report(options.seed, incomplete=stop.reason)
        report.tools = [ToolOutcome(t.name, 0, "skipped", stop.reason) for t in under_test]
    finally:
        target.close()
    if (
        choice.url is not None
        and "unauthorized_accepted" not in options.skip_checks
        and replay_arguments is UNSET
        and not report.incomplete
    ):
        refused = _authorization(choice, selected, options)
        report.findings += refused
        failed = {f.tool for f in refused}
        for outcome in report.tools:
            if outcome.name in failed and outcome.result != "skipped":
                outcome.result = "failed"
    noise = stdout_noise(target)
    if noise is not None and noise.check not in options.skip_checks:
        report.findings.append(noise)
    report.lines = {tool.name: tool.line for tool in contract.tools}
    prefix = ["mcpgen", "test", str(spec), *choice.arguments(), *_shaping(options)]
    tail = ["--", *choice.command] if choice.command else []
    for finding in report.findings:
        finding.reproduce = _reproduce(prefix, finding.tool, finding.arguments, finding.check, tail)
    return report


def _run(
    contract: ir.Contract,
    target: Target,
    under_test: list[ToolUnderTest],
    options: Options,
    replay_arguments: Any,
    progress: Callable[[ToolOutcome], None] | None,
    *,
    remote: bool,
) -> Report:
    from ..descriptors import descriptor

    if replay_arguments is not UNSET:
        return replay(under_test[0], target, replay_arguments, options)
    drift = []
    listed_names: set[str] | None = None
    if remote:
        listed = target.list_tools()
        listed_names = {str(tool.get("name")) for tool in listed}
        drift = drift_findings(
            [descriptor(t) for t in contract.tools], listed, getattr(target, "protocol_version", "")
        )
        chosen = {tool.name for tool in under_test}
        if len(chosen) < len(contract.tools):
            drift = [f for f in drift if f.tool in chosen]
    testable = [t for t in under_test if listed_names is None or t.name in listed_names]
    report = run_tools(testable, target, options, progress)
    for tool in under_test:
        if tool not in testable:
            report.tools.append(ToolOutcome(tool.name, 0, "skipped", "the server does not list it"))
    report.findings[:0] = drift
    failed = {f.tool for f in drift}
    for outcome in report.tools:
        if outcome.name in failed and outcome.result != "skipped":
            outcome.result = "failed"
    return report


def _authorization(choice: TargetChoice, tools: list[ir.Tool], options: Options) -> list[Finding]:
    """``unauthorized_accepted`` findings (``authz``)."""
    from .authz import authorization_findings

    assert choice.url is not None
    return authorization_findings(
        choice.url,
        dict(choice.headers),
        tools,
        token_without_scopes=choice.token_without_scopes,
        invalid_tokens=choice.invalid_tokens,
        allow_destructive=options.allow_destructive,
        timeout=options.timeout,
    )


def _shaping(options: Options) -> list[str]:
    """The options besides the target that decide a call's verdict: a reproduce line
    without them may not fail the same way (a `timeout` finding without `--timeout`)."""
    shaping = ["--allow-destructive"] if options.allow_destructive else []
    if options.timeout != Options.timeout:
        shaping += ["--timeout", f"{options.timeout:g}"]
    for check in sorted(options.skip_checks):
        shaping += ["--skip-check", check]
    return shaping


def stdout_noise(target: Target) -> Finding | None:
    """One ``stdout_noise`` finding for a server that wrote lines on stdout that are no
    JSON-RPC message (the stdio transport allows nothing else there): a host that reads
    stdout strictly may fail on them, and they are easily a leaked debug print."""
    count = getattr(target, "stray_lines", 0)
    if not count:
        return None
    first = getattr(target, "first_stray_line", b"").decode("utf-8", "replace")
    return Finding(
        SERVER,
        "stdout_noise",
        None,
        f"the server wrote {count} line(s) on stdout that are not JSON-RPC messages "
        f"(the stdio transport allows nothing else there; logs go to stderr); the first: "
        f"{first!r}",
        phase="protocol",
    )


def _reproduce(prefix: list[str], tool: str, arguments: Any, check: str, tail: list[str]) -> str:
    if check in ("drift", "stdout_noise"):
        return shlex.join([*prefix, "--examples", "0", *tail])
    if check == "unauthorized_accepted":  # the probe runs again for the tool, no examples
        return shlex.join([*prefix, "--tool", tool, "--examples", "0", *tail])
    # ASCII JSON: the line survives any terminal and escaping of control characters
    return shlex.join([*prefix, "--tool", tool, "--replay", json.dumps(arguments), *tail])


def _load(spec: Path) -> ir.Contract:
    from ..spec.load import load_contract

    if not spec.is_file():
        raise UsageFailure(f"{spec}: no such spec file")
    result = load_contract(spec, allow_outside_output=True)
    if result.contract is None:
        problems = "\n".join(str(d) for d in (result.errors or result.diagnostics))
        raise UsageFailure(f"{spec}: invalid spec\n{problems}")
    return result.contract


def _under_test(tool: ir.Tool, in_process: bool) -> ToolUnderTest:
    from ..descriptors import descriptor

    return ToolUnderTest(
        tool.name,
        descriptor(tool),
        returns=tool.returns,
        timeout=tool.timeout,
        line=tool.line,
        in_process=in_process,
    )


def _target(
    spec: Path, contract: ir.Contract, choice: TargetChoice, timeout: float
) -> tuple[Target, bool]:
    if choice.url is not None:
        if not choice.url.startswith(("http://", "https://")):
            raise UsageFailure(f"--url {choice.url}: not an http:// or https:// URL")
        return SessionTarget(
            url=choice.url,
            headers=dict(choice.headers),
            description=f"--url {choice.url}",
            timeout=timeout,
        ), False
    if choice.command:
        return SessionTarget(
            choice.command, description=shlex.join(choice.command), timeout=timeout
        ), False
    impl = choice.impl or contract.server.implementation
    if not impl:
        raise UsageFailure(
            "no target: give --impl MODULE:CLASS, --url URL or -- COMMAND "
            "(or set server.implementation in the spec)"
        )
    server_module, instance = _implementation(spec, contract, impl)
    label = impl if isinstance(impl, str) else f"{impl.__module__}:{impl.__qualname__}"
    try:
        target = InProcessTarget(
            server_module, instance, description=f"--impl {label}", timeout=timeout
        )
    except TypeError as exc:  # build_app refuses an implementation that misses tools
        raise UsageFailure(f"--impl {label}: {exc}") from None
    return target, True


# ------------------------------------------------------------------ in process


def _implementation(
    spec: Path, contract: ir.Contract, impl: str | type
) -> tuple[ModuleType, object]:
    if isinstance(impl, str):
        module_name, _, class_name = impl.partition(":")
        if not module_name or not class_name:
            raise UsageFailure(f"--impl must look like module:Class, got {impl!r}")
        _fresh_package(spec, contract)  # also puts the cwd on sys.path
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as exc:
            raise UsageFailure(f"--impl {impl}: cannot load it: {exc}") from None
    else:
        cls = impl
    server_module = _server_module_of(cls, contract.package)
    if server_module is None:
        raise UsageFailure(
            f"{impl!r} does not subclass the server class of package "
            f"{contract.package!r} generated from {spec}"
        )
    if not _matches(server_module, contract):
        raise UsageFailure(
            f"package {contract.package!r} as imported is stale against {spec}: "
            f"run `mcpgen build {spec}`"
        )
    try:
        return server_module, cls()
    except Exception as exc:  # noqa: BLE001 - the user's constructor: reported, exit 2
        raise UsageFailure(
            f"--impl: {cls.__name__}() failed: {type(exc).__name__}: {exc}"
        ) from None


def _server_module_of(cls: Any, package: str) -> ModuleType | None:
    if not isinstance(cls, type):
        return None
    for base in cls.__mro__:
        if base.__module__ == f"{package}.server":
            module = sys.modules.get(base.__module__)
            if module is not None and hasattr(module, "build_app"):
                return module
    return None


def _matches(server_module: ModuleType, contract: ir.Contract) -> bool:
    from ..descriptors import descriptor

    package = sys.modules.get(server_module.__name__.rpartition(".")[0])
    published = getattr(getattr(package, "contract", None), "TOOLS", None)
    return published is not None and list(published) == [descriptor(t) for t in contract.tools]


def _fresh_package(spec: Path, contract: ir.Contract) -> None:
    """Make ``import <package>`` give a package generated from ``spec``."""
    name = contract.package
    if "" not in sys.path:
        sys.path.insert(0, "")  # as `python -m pkg --impl m:C`: modules of the cwd
    with contextlib.suppress(ImportError):
        module = importlib.import_module(f"{name}.server")
        if _matches(module, contract):
            return
    from ..build import build_spec

    scratch = tempfile.mkdtemp(prefix="mcpgen-test-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    result = build_spec(spec, output=Path(scratch) / name)
    if not result.ok:
        raise UsageFailure(f"{spec}: cannot build the package: {result.message}")
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    sys.path.insert(0, scratch)
    importlib.invalidate_caches()
