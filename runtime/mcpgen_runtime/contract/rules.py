"""The compatibility rules' vocabulary: severities, categories, the rule table
(each rule's meaning is listed in ``contract.compare``'s docstring) and the change collector.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


class Category(enum.IntEnum):
    """How far a breaking change reaches; higher is stricter (SOURCE ⊃ CALL ⊃ BEHAVIOR)."""

    BEHAVIOR = 1
    CALL = 2
    SOURCE = 3


class Severity(str, enum.Enum):  # noqa: UP042 (str() and format() stay as they were)
    """Whether a change breaks a consumer, deserves a human look, or is safe."""

    BREAKING = "breaking"
    WARNING = "warning"
    COMPATIBLE = "compatible"


@dataclass(frozen=True)
class Rule:
    """One kind of change: its stable name, severity, category (breaking only) and meaning."""

    name: str
    severity: Severity
    category: Category | None
    summary: str


@dataclass(frozen=True)
class Change:
    """One classified difference of one tool."""

    tool: str
    rule: str
    severity: Severity
    category: Category | None
    path: str
    message: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form: severity as its value, category lower-case or None."""
        return {
            "tool": self.tool,
            "rule": self.rule,
            "severity": self.severity.value,
            "category": None if self.category is None else self.category.name.lower(),
            "path": self.path,
            "message": self.message,
        }


_B, _W, _C = Severity.BREAKING, Severity.WARNING, Severity.COMPATIBLE


_SRC, _CALL, _BEH = Category.SOURCE, Category.CALL, Category.BEHAVIOR


_RULE_LIST: Final[tuple[Rule, ...]] = (
    Rule("TOOL_REMOVED", _B, _SRC, "a tool is gone: every call to it fails"),
    Rule("TOOL_RENAMED", _B, _SRC, "a tool was renamed"),
    Rule("TOOL_ADDED", _C, None, "a new tool"),
    Rule("PARAM_REMOVED", _B, _SRC, "a parameter is gone"),
    Rule("PARAM_RENAMED", _B, _SRC, "a parameter was renamed"),
    Rule("PARAM_ORDER_CHANGED", _B, _SRC, "the positional order of parameters changed"),
    Rule("PARAM_REQUIRED_ADDED", _B, _SRC, "a new required parameter"),
    Rule("PARAM_MADE_REQUIRED", _B, _SRC, "an optional parameter became required"),
    Rule("PARAM_TYPE_NARROWED", _B, _SRC, "a parameter accepts fewer types"),
    Rule("PARAM_TYPE_CHANGED", _B, _SRC, "a parameter accepts different types"),
    Rule("PARAM_ENUM_VALUE_REMOVED", _B, _SRC, "a parameter accepts fewer enum values"),
    Rule("PARAM_CONSTRAINT_TIGHTENED", _B, _CALL, "a parameter constraint tightened"),
    Rule("PARAM_KEYWORD_CHANGED", _B, _CALL, "an unanalysed input validation keyword changed"),
    Rule(
        "PARAM_HEADER_ADDED",
        _B,
        _CALL,
        "an argument is now mirrored into an Mcp-Param-* header (or into another one)",
    ),
    Rule("PARAM_DEFAULT_CHANGED", _W, None, "a parameter default changed"),
    Rule("PARAM_DESCRIPTION_CHANGED", _W, None, "a parameter description changed"),
    Rule("PARAM_HEADER_REMOVED", _C, None, "an argument is no longer mirrored into a header"),
    Rule("PARAM_OPTIONAL_ADDED", _C, None, "a new optional parameter"),
    Rule("PARAM_MADE_OPTIONAL", _C, None, "a required parameter became optional"),
    Rule("PARAM_TYPE_WIDENED", _C, None, "a parameter accepts more types"),
    Rule("PARAM_ENUM_VALUE_ADDED", _C, None, "a parameter accepts more enum values"),
    Rule("PARAM_CONSTRAINT_LOOSENED", _C, None, "a parameter constraint loosened"),
    Rule("OUTPUT_SCHEMA_REMOVED", _B, _SRC, "the output schema is gone"),
    Rule(
        "OUTPUT_WRAPPING_CHANGED",
        _B,
        _SRC,
        "an output value moved into or out of a {result: …} object: the same on the wire "
        "before 2026-07-28, another value at 2026-07-28",
    ),
    Rule("OUTPUT_FIELD_REMOVED", _B, _SRC, "an output field is gone"),
    Rule("OUTPUT_FIELD_TYPE_CHANGED", _B, _SRC, "an output type widened or changed"),
    Rule("OUTPUT_FIELD_MADE_OPTIONAL", _B, _SRC, "a required output field became optional"),
    Rule("OUTPUT_ENUM_VALUE_ADDED", _B, _SRC, "an output may carry a new enum value"),
    Rule("OUTPUT_CONSTRAINT_LOOSENED", _B, _CALL, "an output constraint loosened or changed"),
    Rule("OUTPUT_KEYWORD_CHANGED", _B, _CALL, "an unanalysed output validation keyword changed"),
    Rule("OUTPUT_SCHEMA_ADDED", _C, None, "a new output schema"),
    Rule("OUTPUT_FIELD_ADDED", _C, None, "a new output field"),
    Rule("OUTPUT_FIELD_MADE_REQUIRED", _C, None, "an optional output field became required"),
    Rule("OUTPUT_FIELD_TYPE_NARROWED", _C, None, "an output type narrowed"),
    Rule("OUTPUT_ENUM_VALUE_REMOVED", _C, None, "an output carries fewer enum values"),
    Rule("OUTPUT_CONSTRAINT_TIGHTENED", _C, None, "an output constraint tightened"),
    Rule("HINT_READ_ONLY_REMOVED", _B, _BEH, "the tool is no longer read-only"),
    Rule("HINT_DESTRUCTIVE_ADDED", _B, _BEH, "the tool may now be destructive"),
    Rule("HINT_IDEMPOTENT_REMOVED", _B, _BEH, "the tool is no longer idempotent"),
    Rule("HINT_OPEN_WORLD_ADDED", _B, _BEH, "the tool may now reach an open world"),
    Rule("HINT_READ_ONLY_ADDED", _C, None, "the tool became read-only"),
    Rule("HINT_DESTRUCTIVE_REMOVED", _C, None, "the tool is no longer destructive"),
    Rule("HINT_IDEMPOTENT_ADDED", _C, None, "the tool became idempotent"),
    Rule("HINT_OPEN_WORLD_REMOVED", _C, None, "the tool became closed-world"),
    Rule("TASK_SUPPORT_TIGHTENED", _B, _BEH, "task support moved to required or forbidden"),
    Rule("TASK_SUPPORT_LOOSENED", _C, None, "task support moved to optional"),
    Rule("DESCRIPTION_CHANGED", _W, None, "the tool description changed"),
    Rule("TITLE_CHANGED", _W, None, "the tool title changed"),
    Rule("ICONS_CHANGED", _C, None, "the icons changed"),
    Rule("SCOPE_ADDED", _B, _CALL, "the tool needs an OAuth scope more"),
    Rule("SCOPE_REMOVED", _C, None, "the tool needs an OAuth scope less"),
    Rule("META_CHANGED", _C, None, "_meta changed"),
    Rule("SCHEMA_ANNOTATION_CHANGED", _C, None, "a non-validating schema keyword changed"),
    Rule("UNKNOWN_FIELD_CHANGED", _C, None, "a member this module does not know changed"),
    Rule("EQUIVALENT_FORM", _C, None, "written differently, same meaning"),
)


RULES: Final[Mapping[str, Rule]] = MappingProxyType({rule.name: rule for rule in _RULE_LIST})


RANK: Final[Mapping[str, int]] = {rule.name: index for index, rule in enumerate(_RULE_LIST)}


class Out:
    """Collects the changes of the tool being compared."""

    def __init__(self) -> None:
        self.tool = ""
        self.changes: list[Change] = []

    def add(self, rule: str, path: str, message: str) -> None:
        info = RULES[rule]
        self.changes.append(Change(self.tool, rule, info.severity, info.category, path, message))
