"""Load the implementation class named on the command line (``--impl module:Class``).

Its own module because both the command line (``_main``) and each HTTP worker process
(``http.server.worker_app``) load it, and ``http.server`` must not import ``_main``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__all__ = ["load_implementation"]


def load_implementation(reference: str, base_class: type) -> Any:
    """Import ``module:Class`` and instantiate it; it must subclass ``base_class``."""
    module_name, _, class_name = reference.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"--impl must look like module:Class, got {reference!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")  # `python -m pkg --impl my_module:Impl` finds modules in the cwd
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name)
    if not (isinstance(cls, type) and issubclass(cls, base_class)):
        raise TypeError(f"{reference} is not a subclass of {base_class.__name__}")
    abstract: frozenset[str] = getattr(cls, "__abstractmethods__", frozenset())
    if abstract:
        missing = ", ".join(sorted(abstract))
        raise TypeError(f"{cls.__name__} does not implement {missing} (required by the contract)")
    return cls()
