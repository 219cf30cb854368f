"""Regenerate runtime/mcpgen_runtime/schema/idna_props.py, on purpose.

The IDNA2008 checks (runtime/mcpgen_runtime/schema/idna.py) take which code points a
label may hold, and the Joining_Type and Script data of RFC 5892's contextual rules,
from the ``idna`` package (one fixed Unicode version). Three properties they still read from Python's
``unicodedata``: the Bidi class (RFC 5893), General_Category M (a label must not start
with a mark) and Canonical_Combining_Class (a virama before a joiner). Python 3.11 has
Unicode 14.0, 3.12 15.0, 3.13 15.1: for the code points 15.0 and 15.1 added, this
script writes those properties, as 3.13 has them, so every supported interpreter
judges them alike. It runs two interpreters: this one (Unicode 14.0, the oldest
supported) and a Python 3.13 (``MCPGEN_PYTHON_3_13``, else pyenv's 3.13, or
``python3.13`` on PATH). ``tests/runtime/schema/test_formats.py`` checks that the committed
module is what this script writes, where both interpreters are at hand.

Usage: ``.venv/bin/python tests/regen_idna_props.py [--check]``
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "runtime" / "mcpgen_runtime" / "schema" / "idna_props.py"
BASE, NEWEST = "14.0.0", "15.1.0"

_DUMP = """
import json, sys, unicodedata as u
rows = []
for cp in range(0x110000):
    c = chr(cp)
    if u.category(c) != "Cn":
        rows.append([cp, u.bidirectional(c), u.category(c).startswith("M"), u.combining(c)])
print(json.dumps([u.unidata_version, rows]))
"""


def newest_python() -> str:
    pyenv = sorted((Path.home() / ".pyenv" / "versions").glob("3.13.*/bin/python3"))
    for candidate in (
        os.environ.get("MCPGEN_PYTHON_3_13"),
        *map(str, pyenv[-1:]),
        shutil.which("python3.13"),
    ):
        if candidate and ".pyenv/shims" not in candidate and Path(candidate).is_file():
            return candidate
    raise SystemExit("no Python 3.13 found (set MCPGEN_PYTHON_3_13)")


def ranges(rows: list[list[object]]) -> list[tuple[int, int, str, bool, int]]:
    """Runs of consecutive code points with the same three properties."""
    out: list[tuple[int, int, str, bool, int]] = []
    for cp, bidi, mark, ccc in rows:
        assert isinstance(cp, int) and isinstance(bidi, str) and isinstance(ccc, int)
        last = out[-1] if out else None
        if last and last[1] == cp - 1 and last[2:] == (bidi, bool(mark), ccc):
            out[-1] = (last[0], cp, bidi, bool(mark), ccc)
        else:
            out.append((cp, cp, bidi, bool(mark), ccc))
    return out


def render() -> str:
    if unicodedata.unidata_version != BASE:
        raise SystemExit(
            f"run with a Python whose unicodedata is Unicode {BASE} (3.11), "
            f"not {unicodedata.unidata_version}"
        )
    done = subprocess.run(
        [newest_python(), "-c", _DUMP], capture_output=True, text=True, check=True
    )
    version, rows = json.loads(done.stdout)
    if version != NEWEST:
        raise SystemExit(f"the newer Python has Unicode {version}, expected {NEWEST}")
    added = [row for row in rows if unicodedata.category(chr(row[0])) == "Cn"]
    lines = [
        '"""Unicode properties of the code points Unicode 15.0 and 15.1 added (generated).',
        "",
        f"Bidi class, General_Category M and Canonical_Combining_Class as Unicode {NEWEST} has",
        f"them, for the code points Unicode {BASE} (Python 3.11's unicodedata) lacks; written",
        "by tests/regen_idna_props.py, do not edit. Rows: (first, last, bidi, mark, ccc).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        f'UNICODE_VERSION: Final = "{NEWEST}"',
        "",
        "ADDED: Final[tuple[tuple[int, int, str, bool, int], ...]] = (",
    ]
    lines += [
        f'    (0x{a:X}, 0x{b:X}, "{bidi}", {mark}, {ccc}),'
        for a, b, bidi, mark, ccc in ranges(added)
    ]
    lines.append(")")
    return "\n".join(lines) + "\n"


def main() -> None:
    text = render()
    if "--check" in sys.argv:
        if not TARGET.is_file() or TARGET.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{TARGET.relative_to(ROOT)} is stale: run tests/regen_idna_props.py")
        return
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
