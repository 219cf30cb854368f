"""Regenerate runtime/mcpgen_runtime/schema/idna_data.py from the Unicode Character Database, on purpose.

The IDNA2008 checks (runtime/mcpgen_runtime/schema/idna.py) need a few Unicode properties that Python's
``unicodedata`` does not expose: the Script of five scripts named by RFC 5892's
contextual rules, Joining_Type, Default_Ignorable_Code_Point, White_Space and
Hangul_Syllable_Type. This script reads them from the UCD tables that Perl ships
(``/usr/share/perl/<version>/unicore``, or ``MCPGEN_UNICORE``), whose Unicode version
must equal ``unicodedata.unidata_version`` so that both sources agree, and writes them
as inversion lists. ``tests/runtime/test_formats.py`` checks that the committed module
is what this script writes (when the tables are on the machine).

Usage: ``.venv/bin/python tests/regen_idna_tables.py [--check]``
"""

from __future__ import annotations

import os
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "runtime" / "mcpgen_runtime" / "schema" / "idna_data.py"

# name in the generated module -> (table file under lib/, what it holds)
TABLES = {
    "GREEK": ("Sc/Grek.pl", "Script=Greek"),
    "HAN": ("Sc/Han.pl", "Script=Han"),
    "HEBREW": ("Scx/Hebr.pl", "Script=Hebrew (Perl files it under Scx: the same set)"),
    "HIRAGANA": ("Sc/Hira.pl", "Script=Hiragana"),
    "KATAKANA": ("Sc/Kana.pl", "Script=Katakana"),
    "JOINING_D": ("Jt/D.pl", "Joining_Type=Dual_Joining"),
    "JOINING_L": ("Jt/L.pl", "Joining_Type=Left_Joining"),
    "JOINING_R": ("Jt/R.pl", "Joining_Type=Right_Joining"),
    "JOINING_T": ("Jt/T.pl", "Joining_Type=Transparent"),
    "DEFAULT_IGNORABLE": ("DI/Y.pl", "Default_Ignorable_Code_Point=Yes"),
    "WHITE_SPACE": ("Perl/SpacePer.pl", "White_Space=Yes"),
    "HANGUL_NOT_APPLICABLE": ("Hst/NA.pl", "Hangul_Syllable_Type=Not_Applicable"),
}


def find_unicore() -> Path:
    given = os.environ.get("MCPGEN_UNICORE")
    if given:
        return Path(given)
    for candidate in sorted(Path("/usr/share/perl").glob("*/unicore"), reverse=True):
        return candidate
    raise SystemExit("no Perl unicore directory found (set MCPGEN_UNICORE)")


def inversion_list(path: Path) -> list[int]:
    """Perl's tables are inversion lists: ``V<count>`` then the boundaries, one a line."""
    text = path.read_text(encoding="utf-8")
    body = text.split("<<'END';\n", 1)[1].split("\nEND", 1)[0].split("\n")
    count = int(body[0].removeprefix("V"))
    values = [int(line) for line in body[1 : 1 + count]]
    assert len(values) == count and values == sorted(values), path
    return values


def render(unicore: Path) -> str:
    version = (unicore / "version").read_text(encoding="utf-8").strip()
    if version != unicodedata.unidata_version:
        raise SystemExit(
            f"the tables are Unicode {version}, this Python's unicodedata is "
            f"{unicodedata.unidata_version}: run with a Python whose Unicode version matches"
        )
    lines = [
        '"""Unicode properties the IDNA2008 checks need and ``unicodedata`` lacks (generated).',
        "",
        f"Unicode {version}, written by tests/regen_idna_tables.py from the UCD; do not edit.",
        "Each table is an inversion list: a code point is in the set when the number of",
        "boundaries at or below it is odd (``bisect_right(table, cp) % 2 == 1``).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        f'UNICODE_VERSION: Final = "{version}"',
    ]
    for name, (file, meaning) in TABLES.items():
        values = inversion_list(unicore / "lib" / file)
        lines += ["", f"# {meaning}", f"{name}: Final[tuple[int, ...]] = ("]
        row: list[str] = []
        for value in values:
            row.append(f"0x{value:X},")
            if len(row) == 8:
                lines.append("    " + " ".join(row))
                row = []
        if row:
            lines.append("    " + " ".join(row))
        lines.append(")")
    return "\n".join(lines) + "\n"


def main() -> None:
    text = render(find_unicore())
    if "--check" in sys.argv:
        if TARGET.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{TARGET.relative_to(ROOT)} is stale: run tests/regen_idna_tables.py")
        return
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
