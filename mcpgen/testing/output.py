"""The report of ``mcpgen test`` as text (people), JSON, GitHub annotations and JUnit XML."""

from __future__ import annotations

import json
import re
from typing import Any
from xml.etree import ElementTree as ET

from ..printable import escape_json, escape_line, escape_log_line
from ..report import github_command
from .check_names import SERVER
from .runner import Report, Tally

__all__ = ["render_github", "render_json", "render_junit", "render_text"]


def _arguments(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, ensure_ascii=False)


def render_text(report: Report, spec: str) -> list[str]:
    """The report for people, one line per element of the list.

    Tool names (a live server lists its own), messages (with a server's error text)
    and arguments are a server's words: every line is escaped (``escape_log_line``),
    so none can break a line, drive the terminal or be read as a CI workflow command."""
    lines = [f"mcpgen test {spec} (seed {report.seed})"]
    width = max((len(escape_line(t.name)) for t in report.tools), default=0)
    for tool in report.tools:
        count = sum(1 for f in report.findings if f.tool == tool.name)
        state = {
            "passed": "ok",
            "failed": f"{count} finding(s)",
            "skipped": f"skipped: {tool.reason}",
        }
        name = escape_line(tool.name)
        cut = f" ({tool.reason})" if tool.reason.startswith("cut short") else ""
        lines.append(
            f"  {name:<{width}}  {tool.calls:>5} calls  {state[tool.result]}{cut}"
            + _tally_text(tool.tally)
        )
    others = sorted({f.tool for f in report.findings} - {t.name for t in report.tools} - {SERVER})
    for name in map(escape_line, others):
        lines.append(f"  {name:<{width}}      -        not in the contract")
    for number, finding in enumerate(report.findings, 1):
        lines.append("")
        lines.append(f"{number}. {finding.tool}: {finding.check}: {finding.message}")
        if finding.check not in ("drift", "stdout_noise"):
            lines.append(f"   arguments: {_arguments(finding.arguments)}")
        lines.append(f"   reproduce: {finding.reproduce}")
    lines.append("")
    calls = sum(t.calls for t in report.tools)
    lines.append(f"{len(report.findings)} finding(s), {calls} call(s), {len(report.tools)} tool(s)")
    if report.incomplete:
        lines.append(f"incomplete: {report.incomplete}")
    for warning in warnings(report):
        lines.append(f"warning: {warning}")
    return [escape_log_line(line) for line in lines]


def _tally_text(tally: Tally) -> str:
    """``; valid: 12 succeeded, 3 refused`` (nothing when no valid call was answered)."""
    parts = [
        f"{count} {kind}"
        for count, kind in (
            (tally.succeeded, "succeeded"),
            (tally.refused, "refused"),
            (tally.error_text, "error text"),
        )
        if count
    ]
    return f"; valid: {', '.join(parts)}" if parts else ""


def warnings(report: Report) -> list[str]:
    """What a passing run may hide: tools where no call with valid arguments succeeded."""
    return [
        f"{tool.name}: no valid call succeeded ({tool.tally.refused} refused, "
        f"{tool.tally.error_text} error text): only its refusals were tested; "
        "realistic `examples:` on its parameters in the spec seed the arguments"
        for tool in report.tools
        if tool.tally.none_succeeded
    ]


def render_json(report: Report) -> str:
    """The report as one JSON document, escaped as ``mcpgen diff``'s (``escape_json``); the
    same seed gives the same bytes (no times: JUnit has them)."""
    document = {
        "seed": report.seed,
        **({"incomplete": report.incomplete} if report.incomplete else {}),
        "no_valid_call_succeeded": [t.name for t in report.tools if t.tally.none_succeeded],
        "tools": [
            {
                "name": t.name,
                "calls": t.calls,
                "result": t.result,
                **({"reason": t.reason} if t.reason else {}),
                "valid": {
                    "succeeded": t.tally.succeeded,
                    "refused": t.tally.refused,
                    "error_text": t.tally.error_text,
                },
            }
            for t in report.tools
        ],
        "findings": [
            {
                "tool": f.tool,
                "check": f.check,
                "arguments": f.arguments,
                "message": f.message,
                "phase": f.phase,
                "reproduce": f.reproduce,
            }
            for f in report.findings
        ],
    }
    return escape_json(json.dumps(document, indent=2, ensure_ascii=False))


def render_github(report: Report, spec: str, lines: dict[str, int]) -> list[str]:
    """One ``::error`` workflow command per finding, at the tool's line of the spec."""
    out = []
    if report.incomplete:
        out.append(github_command("warning", report.incomplete, title="mcpgen test: incomplete"))
    for warning in warnings(report):
        out.append(github_command("warning", warning, file=spec, title="mcpgen test"))
    for finding in report.findings:
        title = f"mcpgen test: {finding.tool}: {finding.check}"
        body = f"{finding.message}\narguments: {_arguments(finding.arguments)}\nreproduce: {finding.reproduce}"
        out.append(
            github_command("error", body, file=spec, line=lines.get(finding.tool), title=title)
        )
    return out


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold shown as ``\\uXXXX``."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render_junit(report: Report, spec: str) -> bytes:
    """One testsuite, one testcase per tool (and one per tool only the server lists);
    a failure element per finding."""
    suite = ET.Element(
        "testsuite",
        {
            "name": f"mcpgen test {spec}",
            "tests": str(len(report.tools)),
            "failures": str(sum(1 for t in report.tools if t.result == "failed")),
            "skipped": str(sum(1 for t in report.tools if t.result == "skipped")),
            "errors": "0",
        },
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", {"name": "seed", "value": str(report.seed)})
    if report.incomplete:
        ET.SubElement(properties, "property", {"name": "incomplete", "value": report.incomplete})
    names = [t.name for t in report.tools]
    extra = sorted({f.tool for f in report.findings} - set(names))
    calls = {t.name: t.calls for t in report.tools}
    seconds = {t.name: t.seconds for t in report.tools}
    for name in names + extra:
        time = f"{seconds.get(name, 0.0):.3f}"
        case = ET.SubElement(
            suite, "testcase", {"classname": "mcpgen.test", "name": _xml(name), "time": time}
        )
        ET.SubElement(case, "system-out").text = f"{calls.get(name, 0)} calls"
        skipped = [t.reason for t in report.tools if t.name == name and t.result == "skipped"]
        if skipped:
            ET.SubElement(case, "skipped", {"message": _xml(skipped[0])})
        for finding in report.findings:
            if finding.tool == name:
                failure = ET.SubElement(
                    case, "failure", {"type": finding.check, "message": _xml(finding.message)}
                )
                failure.text = _xml(
                    f"arguments: {_arguments(finding.arguments)}\nreproduce: {finding.reproduce}"
                )
    suite.set("tests", str(len(names) + len(extra)))
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True))
