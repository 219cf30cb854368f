"""``mcpgen test``: contract testing of an implementation or a live MCP server.

Modules by job: ``strategies`` (JSON Schema → Hypothesis strategy, a pattern's
simplest match) and ``formats``; ``examples`` (the one example generator, also behind
``mcpgen docs``' example requests: the readable pick of ``readable`` when valid, else
Hypothesis's simplest value; boundary cases) and ``negative`` (one-place invalid
arguments); ``targets`` (in process, stdio, HTTP: one client session);
``checks`` (their names in ``check_names``) and ``drift``; ``runner`` (the phases);
``session`` (one run end to end);
``output`` (text, JSON, GitHub, JUnit); ``pytest_entry`` (``assert_contract``).

Public: :func:`example_arguments` (deterministic valid arguments of an input schema)
and :func:`assert_contract` (a contract test in a project's own test suite).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["assert_contract", "example_arguments"]

if TYPE_CHECKING:
    from .examples import example_arguments
    from .pytest_entry import assert_contract


def __getattr__(name: str) -> Any:
    # lazy: `import mcpgen.testing` costs nothing until a name is used
    if name == "example_arguments":
        from .examples import example_arguments

        return example_arguments
    if name == "assert_contract":
        from .pytest_entry import assert_contract

        return assert_contract
    raise AttributeError(name)
