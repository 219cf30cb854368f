"""Python names for wire names: identifiers, classes, collisions (names are part of the
generated package's API)."""

from __future__ import annotations

import keyword
import re
import sys

__all__ = ["MODELS_PY_NAMES", "class_name", "py_identifier", "shadowed_module"]

# `self` is the instance; `ctx` is the opt-in handler context (passed by keyword).
# The rest are names the generated server and client read inside their classes and
# methods (annotations, bodies): a method or parameter of that name would shadow them
# there (a tool `str` made every later `-> str` in the class mean the method; a
# parameter `UNSET` broke its own `is not UNSET` test), so it takes a trailing `_`.
_RESERVED = frozenset({
    "self", "ctx",
    "str", "int", "float", "bool", "list", "dict",
    "Any", "Literal", "TYPE_CHECKING", "cast", "Mapping", "Sequence", "os", "abc",
    "contract", "convert_result", "_structured", "_results", "Unset", "UNSET",
    "ProgressCallback", "AsyncProgressCallback", "TaskHandle", "AsyncTaskHandle", "TaskStatus",
    "ProtocolChoice", "Verify", "App", "Binding", "BINDINGS", "DEFAULT_MAX_MESSAGE_BYTES",
    "InputCallback", "AsyncInputCallback",
})  # fmt: skip

# Names a `types` entry cannot take: its model class would be a keyword, or would
# shadow a builtin that models.py's own annotations use (`str`, `list[...]`, ...).
# typing's and pydantic's names are free: models.py imports them under private
# aliases where a type takes one (`from typing import Literal as _Literal`), and
# server.py and client.py import such a type under a local name (`Literal_`).
MODELS_PY_NAMES = frozenset(keyword.kwlist) | {
    "str",
    "int",
    "float",
    "bool",
    "bytes",
    "dict",
    "list",
    "set",
    "frozenset",
    "tuple",
    "object",
    "type",
}


def py_identifier(name: str) -> str:
    """``max-results`` → ``max_results``; ``class`` → ``class_``; ``2fa`` → ``_2fa``;
    ``__init__`` → ``_init__``.

    ``self`` and ``ctx`` also get a trailing ``_`` (a positional handler receives
    its opt-in context as the keyword argument ``ctx``), and so do the names the
    generated server and client read in their class and method bodies (``str``,
    ``int``, ``float``, ``bool``, ``list``, ``dict``, ``Any``, ``cast``, ``UNSET``, …).

    ``-`` and ``.`` (and anything else an identifier cannot hold) become ``_``.
    """
    text = (
        "".join(
            ch
            if (ch.isidentifier() or ch.isdigit() or ch == "_") and (("_" + ch).isidentifier())
            else "_"
            for ch in name
        )
        or "_"
    )
    if text[0].isdigit():
        text = "_" + text
    if text.startswith("__"):
        # Python mangles `__name` inside a class (a handler `__x` could never be
        # implemented, a parameter `__y` never passed by keyword) and `__init__`-like
        # names are special methods: one leading underscore is kept.
        text = "_" + text.lstrip("_")
    if keyword.iskeyword(text) or text in _RESERVED:
        text += "_"
    return text


# Top-level import names a generated package must not take: on ``sys.path`` beside
# them (``python -m pkg`` puts the working folder first) it would be imported in their
# place. Kept as a fixed list, so a spec is valid or not whatever is installed.
_OWN = frozenset({"mcpgen", "mcpgen_runtime"})
_GENERATED_IMPORTS = frozenset(  # the runtime, its http and redis extras, and theirs
    {
        "pydantic",
        "pydantic_core",
        "typing_extensions",
        "typing_inspection",
        "annotated_types",
        "mcp",
        "mcp_types",
        "starlette",
        "uvicorn",
        "anyio",
        "sniffio",
        "httpx",
        "httpx2",
        "httpcore",
        "h11",
        "sse_starlette",
        "multipart",
        "python_multipart",
        "jwt",
        "opentelemetry",
        "jsonschema",
        "referencing",
        "rpds",
        "attrs",
        "redis",
        "idna",
        "certifi",
    }
)
_MCPGEN_IMPORTS = frozenset(  # mcpgen's own dependencies (pyproject.toml) and theirs
    {
        "jinja2",
        "markupsafe",
        "click",
        "black",
        "blib2to3",
        "pathspec",
        "platformdirs",
        "mypy_extensions",
        "packaging",
        "yaml",
        "_yaml",
        "jsonschema",
        "jsonschema_specifications",
        "referencing",
        "rpds",
        "attrs",
        "pydantic",
        "pydantic_core",
    }
)


def shadowed_module(package: str) -> str | None:
    """What a top-level package named ``package`` would shadow, or None.

    A generated package sits on ``sys.path`` like any other: named ``json``,
    ``typing`` or ``os`` it replaces the standard library module for everything
    imported after it (``python -m json`` runs the standard one, and the runtime's
    own ``import json`` gets the package); named ``click`` or ``redis`` it replaces
    what mcpgen or the generated server imports. The standard library is this
    interpreter's (``sys.stdlib_module_names``, builtins included)."""
    if package in sys.stdlib_module_names or package in sys.builtin_module_names:
        return "the standard library module"
    if package == "__main__":
        return "the module Python runs as the program"
    if package in _OWN:
        return "mcpgen's own package"
    if package in _GENERATED_IMPORTS:
        return "a package the generated server imports (mcpgen-runtime or its dependencies)"
    if package in _MCPGEN_IMPORTS:
        return "a package mcpgen itself depends on"
    return None


def class_name(name: str) -> str:
    """PascalCase: ``get_forecast`` → ``GetForecast``, ``getForecast`` → ``GetForecast``."""
    parts = [part for part in re.split(r"[^0-9A-Za-z]+", name) if part]
    text = "".join(part[:1].upper() + part[1:] for part in parts)
    if not text:
        text = "Tool"
    if text[0].isdigit():
        text = "_" + text
    return text
