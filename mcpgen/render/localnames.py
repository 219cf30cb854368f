"""Local names of models.py types in server.py and client.py.

Those modules import typing's, collections.abc's and the runtime's names as they are
(``Any``, ``Literal``, ``cast``, ``App``, ``UNSET``, …); a ``types`` entry may take any
of those names, so there it is imported under a local name with a trailing ``_``
(``from .models import Literal as Literal_``) and the signatures say that name.
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import ir
from .typemap import TypeMap
from .typesource import identifiers_in

__all__ = ["MODULE_NAMES", "local_type_names", "model_imports", "types_named_in"]

# Names server.py and client.py themselves import or define at module level. A
# models.py type of one of these names (a `types` entry `Literal`, `App`, `cast`)
# is imported there under a local name with a trailing `_`.
MODULE_NAMES = frozenset({
    "abc", "os", "Mapping", "Sequence", "TYPE_CHECKING", "Any", "Literal", "cast",
    "contract", "App", "Binding", "run_stdio", "BINDINGS", "build_app", "serve", "Verify",
    "DEFAULT_MAX_MESSAGE_BYTES", "UNSET", "Unset", "AsyncProgressCallback", "AsyncSession",
    "AsyncTaskHandle", "ListedTool", "ProgressCallback", "ProtocolChoice", "ResultConverter",
    "Session", "TaskHandle", "TaskStatus", "convert_result", "serve_streams",
    "InputCallback", "AsyncInputCallback",
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


def types_named_in(text: str, typemap: TypeMap, renames: dict[str, str]) -> set[str]:
    """The models.py types that ``text`` (signatures) names, by their local names."""
    local_names = set(renames.values()) | (set(typemap.declarations) - set(renames))
    return set(identifiers_in(text) & local_names)


def model_imports(names: Iterable[str], renames: dict[str, str]) -> list[str]:
    """``from .models import …`` entries for the local ``names`` server.py or client.py use."""
    originals = {local: name for name, local in renames.items()}
    return sorted(f"{originals[n]} as {n}" if n in originals else n for n in names)
