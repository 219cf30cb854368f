"""The official JSON Schema test suite (draft 2020-12) against the runtime validator.

The suite is data kept beside the checkout (``../shared/data/JSON-Schema-Test-Suite``,
or ``MCPGEN_SCHEMA_SUITE``). Every case either passes, or its schema is refused at
compile time for one of the documented reasons (README, "What the server checks"):
references the runtime does not follow (remote or relative URIs, anchors, URNs) and
``$dynamicRef``. A case that fails any other way, or a refusal for another reason,
fails this test; so does a known gap that starts passing (the list must shrink).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from mcpgen.runtime._jsonschema import SchemaError, ValidationFailed, compile_schema

_DEFAULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "JSON-Schema-Test-Suite"
SUITE = Path(os.environ.get("MCPGEN_SCHEMA_SUITE", _DEFAULT)) / "tests" / "draft2020-12"

# Refusals the README documents: the server checks bundled, local schemas only.
REFUSAL_REASONS = re.compile(
    r"only local references|anchors are not supported|\$dynamicRef is not supported"
)
# Cases that neither pass nor are refused, with why (file, group, case).
KNOWN_GAPS = {
    ("vocabulary.json", "schema that uses custom metaschema with with no validation vocabulary",
     "no validation: invalid number, but it still validates"):
        "a custom meta-schema's $vocabulary is not read: validation keywords always apply",
}  # fmt: skip

FILES = ["*.json", "optional/ecmascript-regex.json", "optional/non-bmp-regex.json"]


def _groups() -> list[Any]:
    if not SUITE.is_dir():
        return []
    found = []
    for pattern in FILES:
        for path in sorted(SUITE.glob(pattern)):
            name = path.relative_to(SUITE).as_posix()
            for group in json.loads(path.read_text(encoding="utf-8")):
                found.append(pytest.param(name, group, id=f"{name}:{group['description'][:60]}"))
    return found


GROUPS = _groups()


def test_the_suite_is_there() -> None:
    if not GROUPS:
        pytest.skip(f"the JSON Schema test suite is not at {SUITE} (set MCPGEN_SCHEMA_SUITE)")
    assert len(GROUPS) > 300


@pytest.mark.parametrize(("name", "group"), GROUPS)
def test_suite_group(name: str, group: dict[str, Any]) -> None:
    try:
        check = compile_schema(group["schema"], coerce=False)
    except SchemaError as exc:
        assert REFUSAL_REASONS.search(str(exc)), f"refused for an undocumented reason: {exc}"
        return
    failures = []
    for case in group["tests"]:
        try:
            check(case["data"])
            valid = True
        except ValidationFailed:
            valid = False
        gap = (name, group["description"], case["description"]) in KNOWN_GAPS
        if (valid == case["valid"]) == gap:
            failures.append(f"{case['description']}: expected valid={case['valid']}"
                            + (" (a known gap now passes: remove it)" if gap else ""))
    assert not failures, failures
