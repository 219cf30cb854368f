"""The names of ``mcpgen test``'s checks, in report order (what each means: ``checks``).

Apart from ``checks`` so that the command line can offer them (``--skip-check``)
without importing the checks themselves, which load the runtime's validator."""

from __future__ import annotations

__all__ = ["CHECKS", "SERVER"]

CHECKS = (
    "drift",
    "output_schema",
    "handler_crash",
    "server_error",
    "invalid_accepted",
    "not_idempotent",
    "timeout",
    "error_as_success",
    "stdout_noise",
    "unauthorized_accepted",
)
# the `tool` of a finding about the server as a whole (`stdout_noise`)
SERVER = "(server)"
