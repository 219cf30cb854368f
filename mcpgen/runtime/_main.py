"""The command line of a generated package: ``python -m <package> [--impl module:Class]``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._stdio_server import run_stdio
from ._tools import App

__all__ = ["main"]


def main(
    argv: Sequence[str] | None = None,
    *,
    prog: str,
    base_class: type,
    build_app: Callable[[Any], App],
    default_impl: str | None,
    server_info: Mapping[str, Any],
) -> int:
    parser = argparse.ArgumentParser(
        prog=prog, description=f"Serve the {server_info.get('name')} MCP tools over stdio."
    )
    parser.add_argument(
        "--impl",
        default=default_impl,
        metavar="MODULE:CLASS",
        help="the implementation class (default: server.implementation from the spec)",
    )
    parser.add_argument(
        "--transport",
        choices=["stdio"],
        default="stdio",
        help="stdio (newline-delimited JSON-RPC on stdin/stdout)",
    )
    parser.add_argument(
        "--max-message-bytes", type=int, default=None, help="largest frame accepted (default 16 MiB)"
    )
    args = parser.parse_args(argv)
    if not args.impl:
        parser.error("no implementation: pass --impl module:Class (or set server.implementation)")
    try:
        impl = load_implementation(args.impl, base_class)
        app = build_app(impl)
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    run_stdio(app, max_message_bytes=args.max_message_bytes)
    return 0


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
