"""models.py: output models, shared types and argument TypedDicts, from one type mapping.

Every Python type in the generated package comes from ``typemap.TypeMap``: the models
here, the ``…Args`` TypedDicts, and the handler and client signatures that
``project.py`` renders. mcpgen writes the models itself rather than through a model
generator, so that a schema maps to the same type in each of those places (a model
generator has its own table: ``number`` as ``float``, formats as ``date`` or
``EmailStr``, optional fields as ``X | None``), and so that no keyword in a spec can
steer what models.py imports.
"""

from __future__ import annotations

from collections import defaultdict

from .. import ir
from .typemap import HELPERS, TypeMap, resolve_helpers

__all__ = ["render_models"]


def render_models(contract: ir.Contract, typemap: TypeMap | None = None) -> str:
    """The body of models.py (imports included), before black."""
    typemap = typemap or TypeMap.for_contract(contract)
    body = "\n\n\n".join(d.source for d in typemap.ordered() if d.source)
    text, used = resolve_helpers(body, set(typemap.declarations))
    by_module: dict[str, list[str]] = defaultdict(list)
    for name, local in sorted(used.items()):
        by_module[HELPERS[name]].append(name if local == name else f"{name} as {local}")
    header = ["from __future__ import annotations", ""]
    header += [
        f"from {module} import {', '.join(names)}" for module, names in sorted(by_module.items())
    ]
    return "\n".join(header) + "\n\n\n" + text + "\n"
