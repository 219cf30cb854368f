"""What `mcpgen test` generates reaches the places real servers break (issue 33, item 7):
strings longer than a dozen characters when nothing bounds them, a `maxLength` of 200
written out whole, array items and the objects inside arrays broken one at a time."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from test_contract_testing import mcpgen_test

from mcpgen.testing.negative import invalid_arguments

SPEC = """\
mcpgen: 1
package: gaps_mcp
server: {name: gaps, version: 1.0.0}
tools:
  - name: greet
    description: Greets a name (any length).
    parameters:
      - {name: name, type: string}
  - name: note
    description: Keeps a note of up to 200 characters.
    parameters:
      - {name: text, type: string, maxLength: 200}
  - name: tag
    description: Tags, each a non-empty word; rows of small quantities.
    parameters:
      - {name: tags, type: array, items: {type: string, minLength: 1}}
      - name: rows
        type: array
        required: false
        items:
          type: object
          properties: {qty: {type: integer, maximum: 5}}
          required: [qty]
"""
IMPL = """\
from typing import Any

from gaps_mcp import GapsServer


class Impl(GapsServer):
    def greet(self, name: str) -> str:
        if len(name) > 20:  # a fixed-size buffer, as a real server had
            raise ValueError("name too long for the buffer")
        return "hi " + name

    def note(self, text: str) -> str:
        if len(text) == 200:  # an off-by-one at the bound
            raise IndexError("note buffer overrun")
        return "kept"

    def tag(self, args: Any) -> str:
        return "ok"
"""

# A stdio server for the same contract that checks nothing an argument holds.
SERVER = """\
import json, sys
sys.path.insert(0, ".")
from mcpgen.descriptors import descriptor
from mcpgen.spec.load import load_contract
from pathlib import Path
TOOLS = [descriptor(t) for t in load_contract(Path("gaps.yaml")).contract.tools]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, params = message["method"], message.get("params", {})
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "gaps", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    else:
        result = {"content": [{"type": "text", "text": "ok"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def write(tmp_path: Path) -> None:
    (tmp_path / "gaps.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "gaps_impl.py").write_text(IMPL, encoding="utf-8")
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")


def findings(tmp_path: Path, *args: str) -> dict[tuple[str, str], dict[str, Any]]:
    done = mcpgen_test("gaps.yaml", "--format", "json", "--seed", "5", *args, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return {(f["tool"], f["check"]): f for f in json.loads(done.stdout)["findings"]}


def test_long_strings_and_a_written_out_max_length_are_reached(tmp_path: Path) -> None:
    """Before: unbounded strings stopped at 12 characters and maxima at 64: no finding."""
    write(tmp_path)
    found = findings(tmp_path, "--impl", "gaps_impl:Impl", "--examples", "50")
    assert len(found[("greet", "handler_crash")]["arguments"]["name"]) == 21  # shrunk
    assert len(found[("note", "handler_crash")]["arguments"]["text"]) == 200
    assert ("tag", "handler_crash") not in found


def test_array_items_and_objects_in_arrays_are_broken_one_at_a_time(tmp_path: Path) -> None:
    """Before: the negative phase never produced an invalid array item."""
    write(tmp_path)
    found = findings(
        tmp_path, "--tool", "tag", "--examples", "20", "--", sys.executable, "server.py"
    )
    accepted = found[("tag", "invalid_accepted")]
    assert accepted["phase"] == "negative"
    breaks = {case.breaks for case in invalid_arguments(tag_schema(tmp_path), 100)}
    assert {
        "'tags'[0] of type integer (expected string)",
        "'tags'[0] shorter than its minLength",
        "'rows'[0].required 'qty' left out",
        "'rows'[0].'qty' above its maximum",
    } <= breaks


def tag_schema(tmp_path: Path) -> dict[str, Any]:
    from mcpgen.descriptors import descriptor
    from mcpgen.spec.load import load_contract

    contract = load_contract(tmp_path / "gaps.yaml").contract
    assert contract is not None
    schema: dict[str, Any] = descriptor(contract.tools[2])["inputSchema"]
    return schema
