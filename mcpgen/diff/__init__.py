"""``mcpgen diff``: every change between two specs, classified by named rules.

The wire-level rules live in the runtime's ``contract/compare.py`` (one implementation, shared with
the generated clients' check on connect): this module loads both specs to IR,
compares their published descriptors with it, and adds the rules only a spec can
show, because they concern the Python surface generated from it (handler shape,
return type, ``async``, Python names, package and classes).  ``--against REF``
reads the older spec, and every schema file it references, from git.

Spec rules (in ``rules.py``; the wire rules are listed in the runtime's ``contract/compare.py``):

    Rule                         Severity    Category  Meaning
    PACKAGE_RENAMED              breaking    SOURCE    ``package`` changed: imports break
    SERVER_CLASSES_RENAMED       breaking    SOURCE    ``server.name`` changed the class prefix
    TYPE_REMOVED                 breaking    SOURCE    a ``types`` entry (a model class) is gone
    METHOD_RENAMED               breaking    SOURCE    a tool's Python method name changed
    MODELS_RENAMED               breaking    SOURCE    a tool's …Args/…Output class names changed
    PARAM_PY_RENAMED             breaking    SOURCE    a renamed parameter's Python name changed
    CALLBACK_CHANGED             breaking    SOURCE    handler shape changed (explicitly, or implied
                                                       by the defaults: a first optional parameter,
                                                       an output schema added or removed)
    RETURNS_CHANGED              breaking    SOURCE    ``returns`` of a positional/named tool changed
    ASYNC_CHANGED                breaking    SOURCE    the handler moved between def and async def
    TIMEOUT_TIGHTENED            breaking    BEHAVIOR  a timeout added or lowered
    TIMEOUT_LOOSENED             compatible  -         a timeout raised or removed
    SERVER_INSTRUCTIONS_CHANGED  warning     -         instructions steer the model: review them
    SERVER_INFO_CHANGED          compatible  -         server name (same classes), version, title or
                                                       implementation changed
    TYPE_ADDED                   compatible  -         a new ``types`` entry

A wire rename (TOOL_RENAMED, PARAM_RENAMED) that keeps the Python name adds nothing:
``get-item`` → ``get_item`` breaks callers on the wire but not the generated code.
"""

from __future__ import annotations

from pathlib import Path

from .. import ir
from ..safeio import MAX_SPEC_BYTES, read_regular
from ..spec.load import load_contract, load_spec_text
from ..spec.yamlpos import PositionedDocument, load_yaml
from .git import materialise
from .output import render_github, render_json, render_text
from .rules import (
    ALL_RULES,
    SPEC_RULES,
    DiffFailed,
    DiffReport,
    LocatedChange,
    diff_contracts,
)

__all__ = [
    "ALL_RULES",
    "SPEC_RULES",
    "DiffFailed",
    "DiffReport",
    "LocatedChange",
    "diff_against_git",
    "diff_contracts",
    "diff_files",
    "render_github",
    "render_json",
    "render_text",
]


def _load(path: Path, *, allow_outside_refs: bool) -> tuple[ir.Contract, PositionedDocument]:
    # diff writes nothing: where a spec builds does not matter here
    result = load_contract(path, allow_outside_refs=allow_outside_refs, allow_outside_output=True)
    if result.contract is None:
        raise DiffFailed(f"{path}: invalid spec", result.errors or result.diagnostics)
    try:
        text = read_regular(path, limit=MAX_SPEC_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # replaced since it was loaded
        raise DiffFailed(f"{path}: cannot read spec: {exc}") from None
    doc, _ = load_yaml(text, str(path))
    return result.contract, doc


def diff_files(old: Path, new: Path, *, allow_outside_refs: bool = False) -> DiffReport:
    """``mcpgen diff OLD NEW``."""
    old_contract, _ = _load(old, allow_outside_refs=allow_outside_refs)
    new_contract, doc = _load(new, allow_outside_refs=allow_outside_refs)
    changes = diff_contracts(old_contract, new_contract, doc)
    return DiffReport(str(old), str(new), str(new), changes, _tool_lines(new_contract))


def diff_against_git(
    spec: Path, ref: str, scratch: Path, *, allow_outside_refs: bool = False
) -> DiffReport:
    """``mcpgen diff SPEC --against REF``: OLD is SPEC as committed at REF.

    The spec and the schema files it references (followed transitively) are
    copied out of git into ``scratch`` at the same relative places, so that
    ``$ref``s resolve exactly as they did at REF.
    """
    old_spec, rel = materialise(spec, ref, scratch)
    label = f"{ref}:{rel}"
    loaded = load_spec_text(
        old_spec.read_text(encoding="utf-8"),
        label,
        spec_dir=old_spec.parent,
        allow_outside_refs=allow_outside_refs,
        allow_outside_output=True,
    )
    if loaded.contract is None:
        raise DiffFailed(f"{label}: invalid spec", loaded.errors or loaded.diagnostics)
    new_contract, doc = _load(spec, allow_outside_refs=allow_outside_refs)
    changes = diff_contracts(loaded.contract, new_contract, doc)
    return DiffReport(label, str(spec), str(spec), changes, _tool_lines(new_contract))


def _tool_lines(new: ir.Contract) -> dict[str, int]:
    """Each tool's line in NEW (a tool only OLD has gets none)."""
    return {tool.name: tool.line for tool in new.tools if tool.line}
