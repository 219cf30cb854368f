"""Unit tests of the sans-I/O client core: bytes in, events out."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from mcpgen_runtime._errors import ProtocolError
from mcpgen_runtime.client.core import (
    ClientCore,
    Notification,
    Reply,
    Response,
    error_from_response,
)
from mcpgen_runtime.protocol.revisions import HANDSHAKE_VERSIONS


def line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


def decode(data: bytes) -> dict[str, object]:
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    message = json.loads(data)
    assert isinstance(message, dict)
    return message


def test_requests_get_increasing_integer_ids_and_compact_single_lines() -> None:
    core: ClientCore[str] = ClientCore()
    first_id, first = core.request("tools/list", None, "w1")
    second_id, second = core.request(
        "tools/call", {"name": "echo", "arguments": {"text": "a\nb \u00e9 \U0001f600"}}, "w2"
    )
    assert (first_id, second_id) == (1, 2)
    assert first == b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
    assert b"\n" not in second[:-1]
    assert "é".encode() in second  # raw UTF-8, not \u escapes
    assert decode(second)["params"] == {"name": "echo", "arguments": {"text": "a\nb é 😀"}}
    assert core.pending_count == 2


def test_notification_has_no_id() -> None:
    core: ClientCore[None] = ClientCore()
    assert decode(core.notification("notifications/initialized")) == {
        "jsonrpc": "2.0",
        "method": "notifications/initialized",
    }


def test_response_resolves_its_pending_request_once() -> None:
    core: ClientCore[str] = ClientCore()
    request_id, _ = core.request("ping", None, "waiter")
    events = core.receive(line({"jsonrpc": "2.0", "id": request_id, "result": {"ok": 1}}))
    assert events == [Response(request_id, "waiter", {"ok": 1}, None)]
    assert core.pending_count == 0
    # A duplicate is now a late response: ignored.
    assert core.receive(line({"jsonrpc": "2.0", "id": request_id, "result": {}})) == []


def test_error_response_and_its_protocol_error() -> None:
    core: ClientCore[str] = ClientCore()
    request_id, _ = core.request("tools/call", {"name": "x"}, "w")
    error = {"code": -32602, "message": "Unknown tool: x", "data": {"name": "x"}}
    (event,) = core.receive(line({"jsonrpc": "2.0", "id": request_id, "error": error}))
    assert isinstance(event, Response) and event.error == error and event.result is None
    exc = error_from_response(error, "tools/call 'x'")
    assert isinstance(exc, ProtocolError)
    assert (exc.code, exc.data) == (-32602, {"name": "x"})
    assert "Unknown tool: x" in str(exc)


def test_response_without_result_or_error_becomes_an_error() -> None:
    core: ClientCore[str] = ClientCore()
    request_id, _ = core.request("ping", None, "w")
    (event,) = core.receive(line({"jsonrpc": "2.0", "id": request_id, "result": [1]}))
    assert isinstance(event, Response) and event.error is not None and event.result is None


@pytest.mark.parametrize(
    "raw",
    [
        b"not json\n",
        b"\xff\xfe\n",
        b"[1, 2]\n",
        b'"text"\n',
        b"42\n",
        b'{"jsonrpc":"2.0","id":"1","result":{}}\n',  # our ids are integers
        b'{"jsonrpc":"2.0","id":true,"result":{}}\n',
        b'{"jsonrpc":"2.0","id":12345,"result":{}}\n',  # never sent
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n',
        b'{"jsonrpc":"2.0","method":7}\n',
    ],
)
def test_bad_or_foreign_lines_are_ignored_and_logged(
    raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    core: ClientCore[str] = ClientCore()
    core.request("ping", None, "w")
    with caplog.at_level(logging.DEBUG, logger="mcpgen.client"):
        assert core.receive(raw) == []
    assert core.pending_count == 1
    assert any(record.name == "mcpgen.client" for record in caplog.records)


def test_blank_line_is_ignored_silently(caplog: pytest.LogCaptureFixture) -> None:
    core: ClientCore[str] = ClientCore()
    with caplog.at_level(logging.DEBUG, logger="mcpgen.client"):
        assert core.receive(b"  \r") == []
    assert caplog.records == []


def test_server_ping_gets_an_empty_result() -> None:
    core: ClientCore[str] = ClientCore()
    (event,) = core.receive(line({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}))
    assert isinstance(event, Reply)
    assert decode(event.line) == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}


def test_other_server_requests_get_method_not_found() -> None:
    core: ClientCore[str] = ClientCore()
    (event,) = core.receive(
        line({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": {}})
    )
    assert isinstance(event, Reply)
    reply = decode(event.line)
    assert reply["id"] == 3
    assert reply["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": "sampling/createMessage",
    }


def test_server_request_with_null_id_is_not_answered() -> None:
    core: ClientCore[str] = ClientCore()
    assert core.receive(line({"jsonrpc": "2.0", "id": None, "method": "ping"})) == []


def test_notifications_surface_as_events() -> None:
    core: ClientCore[str] = ClientCore()
    progress = {"progressToken": "t", "progress": 1}
    assert core.receive(
        line({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
    ) == [Notification("notifications/progress", progress)]
    assert core.receive(line({"jsonrpc": "2.0", "method": "notifications/x"})) == [
        Notification("notifications/x", {})
    ]


def test_batches_from_a_2025_03_26_server_are_unpacked() -> None:
    core: ClientCore[str] = ClientCore()
    a, _ = core.request("ping", None, "a")
    b, _ = core.request("ping", None, "b")
    events = core.receive(
        line(
            [
                {"jsonrpc": "2.0", "id": a, "result": {}},
                "junk",
                {"jsonrpc": "2.0", "id": b, "result": {}},
            ]
        )
    )
    assert [e.waiter for e in events if isinstance(e, Response)] == ["a", "b"]


def test_cancel_forgets_the_request_and_builds_the_notification() -> None:
    core: ClientCore[str] = ClientCore()
    request_id, _ = core.request("tools/call", {"name": "slow"}, "w")
    cancelled = decode(core.cancel(request_id, "timed out"))
    assert cancelled == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "timed out"},
    }
    assert core.receive(line({"jsonrpc": "2.0", "id": request_id, "result": {}})) == []


def test_fail_all_empties_the_table() -> None:
    core: ClientCore[str] = ClientCore()
    for name in "abc":
        core.request("ping", None, name)
    assert sorted(core.fail_all()) == ["a", "b", "c"]
    assert core.pending_count == 0 and core.fail_all() == []


def test_the_core_owns_the_connection_s_life() -> None:
    """Idle, then connected; the server gone fails what waits; closed refuses use."""
    core: ClientCore[str] = ClientCore()
    with pytest.raises(RuntimeError, match="not connected"):
        core.check_usable()
    assert core.alive  # nothing has ended yet
    core.connected = True
    core.check_usable()
    core.request("ping", None, "w")
    assert core.lost() == ["w"] and core.gone and not core.alive
    core.check_usable()  # still usable: a request then fails with the transport's error
    core.closed = True
    with pytest.raises(RuntimeError, match="closed"):
        core.check_usable()


@pytest.mark.parametrize(
    ("version", "capabilities", "expected"),
    [
        ("2025-11-25", {"tasks": {"requests": {"tools": {"call": {}}}}}, True),
        ("2025-11-25", {"tasks": {"requests": {"tools": {}}}}, False),
        ("2025-11-25", {"tasks": {"list": {}}}, False),
        ("2025-06-18", {"tasks": {"requests": {"tools": {"call": {}}}}}, False),
    ],
)
def test_legacy_tasks_need_2025_11_25_and_the_tools_call_capability(
    version: str, capabilities: dict[str, Any], expected: bool
) -> None:
    core: ClientCore[str] = ClientCore()
    assert not core.legacy_tasks()  # before any handshake
    core.accept_initialize({"protocolVersion": version, "capabilities": capabilities})
    assert core.legacy_tasks() is expected


def test_initialize_request_offers_the_latest_revision() -> None:
    core: ClientCore[str] = ClientCore({"name": "gen-client", "version": "9"})
    request_id, data = core.initialize_request("w")
    assert decode(data) == {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "gen-client", "version": "9"},
        },
    }


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_every_handshake_counter_offer_is_accepted(version: str) -> None:
    core: ClientCore[str] = ClientCore()
    initialized = core.accept_initialize(
        {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
            "instructions": "hi",
        }
    )
    assert decode(initialized) == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert core.handshake is not None
    assert core.handshake.protocol_version == version
    assert core.handshake.server_info == {"name": "s", "version": "1"}
    assert core.handshake.capabilities == {"tools": {}}
    assert core.handshake.instructions == "hi"


@pytest.mark.parametrize("version", ["2026-07-28", "1999-01-01", "", None, 20251125])
def test_an_unknown_counter_offer_is_a_protocol_error(version: object) -> None:
    core: ClientCore[str] = ClientCore()
    with pytest.raises(ProtocolError) as caught:
        core.accept_initialize({"protocolVersion": version, "capabilities": {}})
    assert caught.value.reason == "unsupported_version"
    assert core.handshake is None
