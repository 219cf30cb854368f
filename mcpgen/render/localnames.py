"""Local names of models.py types in server.py and client.py.

Those modules import typing's, collections.abc's and the runtime's names as they are
(``Any``, ``Literal``, ``cast``, ``App``, ``UNSET``, …); a ``types`` entry may take any
of those names, so there it is imported under a local name with a trailing ``_``
(``from .models import Literal as Literal_``) and the signatures say that name.
"""

from __future__ import annotations

from .. import ir
from .fileimports import CLIENT_RUNTIME_NAMES, TASK_NAMES
from .typemap import TypeMap

__all__ = ["MODULE_NAMES", "local_type_names"]

# Names server.py and client.py themselves import or define at module level: these,
# and the runtime names client.py imports (fileimports' lists, so a name added there
# is reserved here too). A models.py type of one of these names (a `types` entry
# `Literal`, `App`, `StructuredValue`) is imported there under a local name with a
# trailing `_`.
MODULE_NAMES = frozenset({
    "abc", "os", "Mapping", "Sequence", "TYPE_CHECKING", "Any", "Literal", "cast",
    "contract", "App", "Binding", "run_stdio", "BINDINGS", "build_app", "serve", "Verify",
    "convert_result", "StructuredValue",
    *CLIENT_RUNTIME_NAMES, *TASK_NAMES,
})  # fmt: skip


def local_type_names(contract: ir.Contract, typemap: TypeMap) -> dict[str, str]:
    """models.py name → the name server.py and client.py import it as, where the two differ."""
    taken = set(typemap.declarations) | MODULE_NAMES | {t.py_name for t in contract.tools}
    taken |= {p.py_name for t in contract.tools for p in t.parameters}
    renames = {}
    for name in sorted(n for n in typemap.declarations if n in MODULE_NAMES):
        local = name + "_"
        while local in taken:
            local += "_"
        renames[name] = local
        taken.add(local)
    return renames
