"""models.py: output models, shared types and argument TypedDicts, from one type mapping.

Every Python type in the generated package comes from ``typemap.TypeMap``: the models
here, the ``…Args`` TypedDicts, and the handler and client signatures that
``package.py`` renders. mcpgen writes the models itself rather than through a model
generator, so that a schema maps to the same type in each of those places (a model
generator has its own table: ``number`` as ``float``, formats as ``date`` or
``EmailStr``, optional fields as ``X | None``), and so that no keyword in a spec can
steer what models.py imports.
"""

from __future__ import annotations

import itertools
import re

from .. import ir
from .imports import Imports
from .layout import Layout
from .typemap import TypeMap
from .typesource import HELPERS, NOQA_UP013

__all__ = ["render_models"]

_TRIPLE = re.compile(r'"""(.*?)"""', re.DOTALL)


def _for_black(declaration: str) -> bool:
    """Does black change this declaration's docstrings (as typemap writes them)? A
    multi-line one black re-indents; a one-line one it strips; other literals it
    rewrites as a docstring; a TypedDict call whose ``noqa`` comment sits after its
    bracket black joins into one line when it fits. Such declarations are left to black
    (``layout.Layout.unsure``)."""
    if NOQA_UP013 in declaration:
        return True
    if any(
        "\n" in m.group(1) or m.group(1) != m.group(1).strip()
        for m in _TRIPLE.finditer(declaration)
    ):
        return True
    lines = declaration.split("\n")
    for first, second in itertools.pairwise(lines):
        if first.startswith("class ") and second.lstrip().startswith(("'", '"')):
            return not second.lstrip().startswith('"""')
    return False


def render_models(
    contract: ir.Contract, typemap: TypeMap | None = None, layout: Layout | None = None
) -> str:
    """The body of models.py (imports included), one layout unit per declaration."""
    typemap = typemap or TypeMap.for_contract(contract)
    layout = layout or Layout()
    declarations = [d.source for d in typemap.ordered() if d.source]
    # a helper a spec type has the name of is imported under a private alias
    used = frozenset().union(*(source.helpers for source in declarations))
    aliases = {name: f"_{name}" if name in typemap.declarations else name for name in used}
    texts = [source.text(helpers=aliases) for source in declarations]
    # each declaration is a unit of its own to the layout (a top-level statement), so
    # black, where a declaration needs it, formats that declaration alone
    for text in texts:
        if _for_black(text):
            layout.unsure.add(text.split("\n", 1)[0])
    imports = Imports().add("__future__", "annotations")
    for name, local in aliases.items():
        imports.add_as(HELPERS[name], name, local)
    return imports.block(layout) + "\n\n\n" + "\n\n\n".join(texts)
