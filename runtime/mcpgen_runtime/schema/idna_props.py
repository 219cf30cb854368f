"""Unicode properties of the code points Unicode 15.0 and 15.1 added (generated).

Bidi class, General_Category M and Canonical_Combining_Class as Unicode 15.1.0 has
them, for the code points Unicode 14.0.0 (Python 3.11's unicodedata) lacks; written
by tests/regen_idna_props.py, do not edit. Rows: (first, last, bidi, mark, ccc).
"""

from __future__ import annotations

from typing import Final

UNICODE_VERSION: Final = "15.1.0"

ADDED: Final[tuple[tuple[int, int, str, bool, int], ...]] = (
    (0xCF3, 0xCF3, "L", True, 0),
    (0xECE, 0xECE, "NSM", True, 0),
    (0x2FFC, 0x2FFF, "ON", False, 0),
    (0x31EF, 0x31EF, "ON", False, 0),
    (0x10EFD, 0x10EFF, "NSM", True, 220),
    (0x1123F, 0x11240, "L", False, 0),
    (0x11241, 0x11241, "NSM", True, 0),
    (0x11B00, 0x11B09, "L", False, 0),
    (0x11F00, 0x11F01, "NSM", True, 0),
    (0x11F02, 0x11F02, "L", False, 0),
    (0x11F03, 0x11F03, "L", True, 0),
    (0x11F04, 0x11F10, "L", False, 0),
    (0x11F12, 0x11F33, "L", False, 0),
    (0x11F34, 0x11F35, "L", True, 0),
    (0x11F36, 0x11F3A, "NSM", True, 0),
    (0x11F3E, 0x11F3F, "L", True, 0),
    (0x11F40, 0x11F40, "NSM", True, 0),
    (0x11F41, 0x11F41, "L", True, 9),
    (0x11F42, 0x11F42, "NSM", True, 9),
    (0x11F43, 0x11F59, "L", False, 0),
    (0x1342F, 0x1342F, "L", False, 0),
    (0x13439, 0x1343F, "L", False, 0),
    (0x13440, 0x13440, "NSM", True, 0),
    (0x13441, 0x13446, "L", False, 0),
    (0x13447, 0x13455, "NSM", True, 0),
    (0x1B132, 0x1B132, "L", False, 0),
    (0x1B155, 0x1B155, "L", False, 0),
    (0x1D2C0, 0x1D2D3, "L", False, 0),
    (0x1DF25, 0x1DF2A, "L", False, 0),
    (0x1E030, 0x1E06D, "L", False, 0),
    (0x1E08F, 0x1E08F, "NSM", True, 230),
    (0x1E4D0, 0x1E4EB, "L", False, 0),
    (0x1E4EC, 0x1E4ED, "NSM", True, 232),
    (0x1E4EE, 0x1E4EE, "NSM", True, 220),
    (0x1E4EF, 0x1E4EF, "NSM", True, 230),
    (0x1E4F0, 0x1E4F9, "L", False, 0),
    (0x1F6DC, 0x1F6DC, "ON", False, 0),
    (0x1F774, 0x1F776, "ON", False, 0),
    (0x1F77B, 0x1F77F, "ON", False, 0),
    (0x1F7D9, 0x1F7D9, "ON", False, 0),
    (0x1FA75, 0x1FA77, "ON", False, 0),
    (0x1FA87, 0x1FA88, "ON", False, 0),
    (0x1FAAD, 0x1FAAF, "ON", False, 0),
    (0x1FABB, 0x1FABD, "ON", False, 0),
    (0x1FABF, 0x1FABF, "ON", False, 0),
    (0x1FACE, 0x1FACF, "ON", False, 0),
    (0x1FADA, 0x1FADB, "ON", False, 0),
    (0x1FAE8, 0x1FAE8, "ON", False, 0),
    (0x1FAF7, 0x1FAF8, "ON", False, 0),
    (0x2B739, 0x2B739, "L", False, 0),
    (0x2EBF0, 0x2EE5D, "L", False, 0),
    (0x31350, 0x323AF, "L", False, 0),
)
