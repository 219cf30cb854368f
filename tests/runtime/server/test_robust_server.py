"""A generated stdio server under hostile input, over its real pipes.

The cases live in tests/robust_table.py (which also prints them as a table):
each sends one kind of bad input to a fresh ``python -m robust_mcp``, checks the
answer (-32700 and ``id: null`` for what does not parse, -32600 for what is not
a request, never an answer to a notification or a response, bounded error
messages, bounded memory), then checks that the server still answers a ``ping``
and a ``tools/call`` and that its stdout held nothing but JSON-RPC frames.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import robust_table
from helpers import RawServer
from robust_table import CASES, PACKAGE, Case, run_case

SERVER_CASES = [c for c in CASES if c.group == "server"]


@pytest.fixture(scope="module")
def pythonpath(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return robust_table.build(tmp_path_factory.mktemp("robust_server"))


@pytest.mark.parametrize("case", SERVER_CASES, ids=[c.name for c in SERVER_CASES])
def test_hostile_input(case: Case, pythonpath: list[Path]) -> None:
    outcome = run_case(case, pythonpath)
    assert outcome.serving in ("yes", "exited cleanly (code 0)")


def test_every_case_has_a_distinct_name() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))


def test_invalid_limit_in_the_environment_is_ignored(pythonpath: list[Path]) -> None:
    # A negative limit once lifted the bound (readline(-n)); a non-number crashed start-up.
    for value in ("-5", "zero", "0"):
        with RawServer(
            PACKAGE,
            robust_table.IMPL,
            pythonpath=pythonpath,
            env={"MCPGEN_MAX_MESSAGE_BYTES": value},
        ) as server:
            server.handshake()
            assert server.call("echo", {"text": "x" * 100_000})["result"]["isError"] is False
            server.close()
            assert "ignoring MCPGEN_MAX_MESSAGE_BYTES" in server.stderr


def test_flag_wins_over_the_environment(pythonpath: list[Path]) -> None:
    with RawServer(
        PACKAGE,
        robust_table.IMPL,
        pythonpath=pythonpath,
        extra_args=["--max-message-bytes", "100000"],
        env={"MCPGEN_MAX_MESSAGE_BYTES": "1000"},
    ) as server:
        server.handshake()
        assert server.call("echo", {"text": "x" * 50_000})["result"]["isError"] is False
        server.send(robust_table.call("echo", {"text": "x" * 200_000}, 3))
        refused = server.recv()
        assert refused["id"] is None and "100000 bytes" in refused["error"]["message"]
        server.close()


def test_one_server_survives_every_case_in_a_row(pythonpath: list[Path]) -> None:
    """The cleanup-free cases again, all on one server: no state one leaves behind
    breaks the next (each case ends with its own liveness check)."""
    reusable = [
        c
        for c in SERVER_CASES
        if not c.ends_server
        and not c.args
        and not c.env
        and c.impl == robust_table.IMPL
        and c.version == "2025-11-25"
        and c.run is not robust_table._over_default_limit  # it measures the peak RSS
    ]
    with RawServer(PACKAGE, robust_table.IMPL, pythonpath=pythonpath) as server:
        server.handshake()
        for item in reusable:
            try:
                item.run(server)
                robust_table.check_serving(server)
            except AssertionError as exc:
                raise AssertionError(f"case {item.name!r}: {exc}") from None
        server.close()
    robust_table.assert_all_frames(server)
    assert len(reusable) > 30
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in server.raw_lines)
