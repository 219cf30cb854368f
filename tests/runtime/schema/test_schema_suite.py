"""The official JSON Schema test suite (draft 2020-12) against the runtime validator.

The suite is data kept beside the checkout (``../shared/data/JSON-Schema-Test-Suite``,
or ``MCPGEN_SCHEMA_SUITE``). Every case either passes, or its schema is refused at
compile time for one of the documented reasons (docs/spec.md, "Calls: patterns"):
references the runtime does not follow (remote or relative URIs, anchors, URNs) and
``$dynamicRef``. A case that fails any other way, or a refusal for another reason,
fails this test; so does a known gap that starts passing (the list must shrink).

The required files run with ``format`` as an annotation (what the suite expects of a
validator by default); ``optional/format/`` runs with formats asserted, as the server
and the client check them: every file there passes, and a format the runtime does not
know stays an annotation (``unknown.json``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.schema.formats import FORMATS
from mcpgen_runtime.schema.validator import SchemaError, ValidationFailed, compile_schema

# Beside the checkout, found from any depth (a worktree sits one level further down).
_DEFAULT = next(
    (
        found
        for parent in Path(__file__).resolve().parents[3:]
        if (found := parent / "shared" / "data" / "JSON-Schema-Test-Suite").is_dir()
    ),
    Path(__file__).resolve().parents[4] / "shared" / "data" / "JSON-Schema-Test-Suite",
)
SUITE = Path(os.environ.get("MCPGEN_SCHEMA_SUITE", _DEFAULT)) / "tests" / "draft2020-12"

# Refusals docs/spec.md documents: the server checks bundled, local schemas only.
REFUSAL_REASONS = re.compile(
    r"only local references|anchors are not supported|\$dynamicRef is not supported"
)
# Cases that neither pass nor are refused, with why (file, group, case).
KNOWN_GAPS = {
    ("vocabulary.json", "schema that uses custom metaschema with with no validation vocabulary",
     "no validation: invalid number, but it still validates"):
        "a custom meta-schema's $vocabulary is not read: validation keywords always apply",
    ("optional/format/idn-email.json", "validation of an internationalized e-mail addresses",
     "a domain label that is not in Unicode NFC is valid"):
        "RFC 6531 puts U-labels in the domain, and a U-label is in NFC (RFC 5890 "
        "2.3.2.1): the runtime does not normalise what it checks",
}  # fmt: skip

FILES = [
    "*.json",
    "optional/ecmascript-regex.json",
    "optional/non-bmp-regex.json",
    "optional/bignum.json",  # big integers stay exact, big floats compare
    "optional/float-overflow.json",
    "optional/format/*.json",
]
# Every format the runtime asserts has its file in optional/format/ (a format that
# loses its checker, or a checker without its file, fails test_every_asserted_format_runs).
FORMAT_DIR = "optional/format/"


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


def test_every_asserted_format_runs() -> None:
    if not GROUPS:
        pytest.skip(f"the JSON Schema test suite is not at {SUITE} (set MCPGEN_SCHEMA_SUITE)")
    files = {path.stem for path in (SUITE / FORMAT_DIR).glob("*.json")}
    # ecmascript-regex.json in optional/format/ exercises the "regex" format.
    assert set(FORMATS) <= files | {"regex"}, sorted(set(FORMATS) - files)
    assert files - {"ecmascript-regex", "unknown"} <= set(FORMATS), sorted(files - set(FORMATS))


@pytest.mark.parametrize(("name", "group"), GROUPS)
def test_suite_group(name: str, group: dict[str, Any]) -> None:
    try:
        check = compile_schema(
            group["schema"], coerce=False, assert_formats=name.startswith(FORMAT_DIR)
        )
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
            failures.append(
                f"{case['description']}: expected valid={case['valid']}"
                + (" (a known gap now passes: remove it)" if gap else "")
            )
    assert not failures, failures
