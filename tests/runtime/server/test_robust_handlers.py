"""Failing handlers of a generated stdio server, over its real pipes.

Every way a handler can fail (an exception, a KeyboardInterrupt-like
BaseException, CancelledError/GeneratorExit/SystemExit out of a tool, a hang
past its ``timeout:``, a structured result that breaks its schema, a result JSON
cannot carry) gives the caller a clear ``isError`` result or a -32603 error that
names the tool and nothing else; the exception and its traceback go to stderr;
the server keeps serving. The cases live in tests/robust_table.py (group
"handler"), so they appear in its printed table too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import robust_table
from helpers import RawServer
from robust_table import CASES, PACKAGE, SECRET, Case, call, run_case

HANDLER_CASES = [c for c in CASES if c.group == "handler"]


@pytest.fixture(scope="module")
def pythonpath(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return robust_table.build(tmp_path_factory.mktemp("robust_handlers"))


@pytest.mark.parametrize("case", HANDLER_CASES, ids=[c.name for c in HANDLER_CASES])
def test_failing_handler(case: Case, pythonpath: list[Path]) -> None:
    outcome = run_case(case, pythonpath)
    assert outcome.serving == "yes"


def test_failures_in_a_row_on_one_server(pythonpath: list[Path]) -> None:
    """All the failures on one server, interleaved with good calls."""
    with RawServer(PACKAGE, robust_table.IMPL, pythonpath=pythonpath) as server:
        server.handshake()
        for item in HANDLER_CASES:
            try:
                item.run(server)
                robust_table.check_serving(server)
            except AssertionError as exc:
                raise AssertionError(f"case {item.name!r}: {exc}") from None
        server.close()
    robust_table.assert_all_frames(server)
    stdout = b"".join(server.raw_lines)
    assert SECRET.encode() not in stdout and b"Traceback" not in stdout
    err = server.stderr
    assert err.count("Traceback (most recent call last)") >= 18
    for item in HANDLER_CASES:
        if item.traceback is not None:
            assert item.traceback in err, item.name


def test_no_internal_detail_in_any_reply(pythonpath: list[Path]) -> None:
    """The replies name the tool; no exception type, message, or file path."""
    with RawServer(PACKAGE, robust_table.IMPL, pythonpath=pythonpath) as server:
        server.handshake()
        for request_id, how in enumerate(["exception", "base_exception", "cancelled_error"]):
            server.send(call("fail", {"how": how}, request_id))
            text = server.recv()["result"]["content"][0]["text"]
            assert text == "Tool 'fail' failed with an internal error."
        server.send(call("bad_struct", {"how": "wrong_type"}, 9))
        result = server.recv()["result"]
        assert result == {
            "content": [
                {
                    "type": "text",
                    "text": "Tool 'bad_struct' produced an "
                    "invalid result: it does not match the tool's output "
                    "schema.",
                }
            ],
            "isError": True,
        }
        server.send(call("bad_value", {"how": "nan"}, 10))
        error = server.recv()["error"]
        assert error == {"code": -32603, "message": "Internal error in tool 'bad_value'"}
        server.close()
    stdout = b"".join(server.raw_lines).decode()
    for leak in ("RuntimeError", "Interrupt", "CancelledError", "robust_impl", ".py", "line "):
        assert leak not in stdout, leak
    assert "result does not match the output schema" in server.stderr


def test_sys_exit_in_a_sync_handler_stops_the_server(pythonpath: list[Path]) -> None:
    """Documented exception to "keeps serving": SystemExit from a sync handler on the
    reading thread ends the process with its code (on a worker thread or in an
    async handler it is an ordinary failure, see the cases)."""
    server = RawServer(PACKAGE, robust_table.IMPL, pythonpath=pythonpath)
    server.handshake()
    server.send(call("fail", {"how": "system_exit"}, 5))
    assert server.proc.wait(timeout=robust_table.ANSWER_TIMEOUT) == 7
    code = server.close(expect_code=7)
    assert code == 7
    robust_table.assert_all_frames(server)
    assert [json.loads(line)["id"] for line in server.raw_lines] == [0]  # the handshake only
