"""Contract verification on connect: a parameter reorder is a warning, not a mismatch.

A reorder breaks code generated from the contract (positional order), but a live
client sends arguments by name, so ``verify="strict"`` must not refuse the server.
"""

from __future__ import annotations

import json
import logging
from typing import Any, BinaryIO

import pytest

from mcpgen_runtime import ContractMismatch, Session


def _tool(order: list[str], required: list[str]) -> dict[str, Any]:
    return {
        "name": "add",
        "inputSchema": {
            "type": "object",
            "properties": {name: {"type": "integer"} for name in order},
            "required": required,
            "additionalProperties": False,
        },
    }


CONTRACT = [_tool(["a", "b"], ["a", "b"])]


def _server(tools: list[dict[str, Any]]) -> Any:
    def serve(reader: BinaryIO, writer: BinaryIO) -> None:
        for raw in reader:
            message = json.loads(raw)
            if "id" not in message:
                continue
            method, params = message["method"], message.get("params") or {}
            if method == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "reordered", "version": "1"},
                }
            elif method == "tools/list":
                result = {"tools": tools}
            elif method == "tools/call":
                args = params.get("arguments", {})
                result = {"content": [{"type": "text", "text": str(args["a"] - args["b"])}]}
            else:  # e.g. server/discover: this server speaks only the initialize era
                error = {"code": -32601, "message": f"Method not found: {method}"}
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
                writer.write(json.dumps(reply).encode() + b"\n")
                writer.flush()
                continue
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            writer.write(json.dumps(reply).encode() + b"\n")
            writer.flush()

    return serve


def test_reordered_parameters_pass_strict_verification_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = _server([_tool(["b", "a"], ["a", "b"])])
    with (
        caplog.at_level(logging.WARNING, logger="mcpgen.client"),
        Session.in_memory(server, contract=CONTRACT, verify="strict") as session,
    ):
        rules = [change.rule for change in session.contract_warnings]
        # Arguments travel by name: the call means what the caller meant.
        assert session.call_tool("add", {"a": 5, "b": 2})["content"][0]["text"] == "3"
    assert rules == ["PARAM_ORDER_CHANGED"]
    assert any("parameter order differs" in record.getMessage() for record in caplog.records)


def test_a_reorder_next_to_a_real_break_still_fails_and_names_only_the_break() -> None:
    server = _server([_tool(["c", "b", "a"], ["a", "b", "c"])])
    with pytest.raises(ContractMismatch) as caught:
        Session.in_memory(server, contract=CONTRACT, verify="strict").connect()
    assert "PARAM_REQUIRED_ADDED" in str(caught.value)
    assert "PARAM_ORDER_CHANGED" not in str(caught.value)
    assert [change.rule for change in caught.value.changes] == ["PARAM_REQUIRED_ADDED"]


def test_warn_mode_keeps_the_reorder_in_the_warnings() -> None:
    server = _server([_tool(["b", "a"], ["a", "b"])])
    with Session.in_memory(server, contract=CONTRACT, verify="warn") as session:
        assert [change.rule for change in session.contract_warnings] == ["PARAM_ORDER_CHANGED"]
