"""``protocol.param_headers`` (x-mcp-header, SEP-2243) without I/O: the annotation's
rules, the header value encoding, the server's check of Mcp-Param-* headers against a
call's arguments (in the core, as ``receive_stateless`` meets it), and the headers the
client's HTTP peer sends with a call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpgen_runtime.protocol.param_headers import (
    SAFE_INTEGER,
    HeaderParam,
    decode_header_value,
    encode_header_value,
    header_params,
    header_problems,
    param_header_refusal,
    param_headers,
)
from mcpgen_runtime.server.actions import Invoke, SendFrame
from mcpgen_runtime.server.core import Routing, ServerConnection
from mcpgen_runtime.server.tools import App, Binding
from mcpgen_runtime.transport.http.wire import HttpPeer, read_message

MODERN = "2026-07-28"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "shard": {"type": "integer", "minimum": 0, "maximum": 100, "x-mcp-header": "Shard"},
        "fast": {"type": "boolean", "x-mcp-header": "Fast"},
        "where": {
            "type": "object",
            "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
        },
        "query": {"type": "string"},
    },
    "required": ["region", "shard", "query"],
}
PARAMS = header_params(SCHEMA)


# -- the encoding ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("us-west-1", "us-west-1"),
        ("a b", "a b"),  # inner spaces are printable ASCII
        ("", ""),
        ("café", "=?base64?Y2Fmw6k=?="),  # non-ASCII
        ("日本", "=?base64?5pel5pys?="),
        (" padded", "=?base64?IHBhZGRlZA==?="),  # leading whitespace
        ("padded ", "=?base64?cGFkZGVkIA==?="),  # trailing whitespace
        ("tab\there", "=?base64?dGFiCWhlcmU=?="),  # a control character
        ("line\r\nbreak", "=?base64?bGluZQ0KYnJlYWs=?="),
        ("=?base64?SGk=?=", "=?base64?PT9iYXNlNjQ/U0drPT89?="),  # looks encoded: encoded
    ],
)
def test_a_value_is_sent_plain_only_when_a_header_carries_it_unchanged(
    text: str, sent: str
) -> None:
    assert encode_header_value(text) == sent
    assert decode_header_value(sent) == text


@pytest.mark.parametrize(
    "value",
    [
        "=?base64?SGVsbG8?=",  # missing padding
        "=?base64?SGVs!!!bG8=?=",  # not the Base64 alphabet
        "=?base64?SGVsbG9=?=",  # non-canonical (stray bits in the last character)
        "=?base64?/w==?=",  # not UTF-8
    ],
)
def test_a_malformed_encoded_value_decodes_to_nothing(value: str) -> None:
    assert decode_header_value(value) is None


@pytest.mark.parametrize("value", ["=?base64?SGVsbG8=", "SGVsbG8=?=", "=?BASE64?SGk=?="])
def test_a_value_without_the_exact_markers_is_literal(value: str) -> None:
    assert decode_header_value(value) == value


# -- the annotation's rules -----------------------------------------------------------


def _problems(prop: dict[str, Any], **others: Any) -> list[str]:
    schema = {"type": "object", "properties": {"p": prop, **others}}
    return [why for _, why in header_problems(schema)]


@pytest.mark.parametrize(
    ("prop", "why"),
    [
        ({"type": "number", "x-mcp-header": "P"}, "type 'number'"),
        ({"type": "object", "x-mcp-header": "P"}, "type 'object'"),
        ({"type": ["string", "null"], "x-mcp-header": "P"}, "type ['string', 'null']"),
        ({"enum": ["a"], "x-mcp-header": "P"}, "no type"),
        ({"$ref": "#/$defs/X", "x-mcp-header": "P"}, "a $ref, which is not followed"),
        ({"type": "integer", "x-mcp-header": "P"}, "within ±9007199254740991"),
        ({"type": "integer", "minimum": 0, "x-mcp-header": "P"}, "within ±"),
        ({"type": "integer", "maximum": 5, "x-mcp-header": "P"}, "within ±"),
        ({"type": "integer", "minimum": 0, "maximum": 2**53, "x-mcp-header": "P"}, "within ±"),
        ({"type": "integer", "minimum": -(2**53), "maximum": 0, "x-mcp-header": "P"}, "within"),
        ({"type": "integer", "enum": [1, 2**53], "x-mcp-header": "P"}, "within ±"),
        ({"type": "string", "x-mcp-header": "Two Words"}, "not an HTTP header name"),
        ({"type": "string", "x-mcp-header": ""}, "not an HTTP header name"),
        ({"type": "string", "x-mcp-header": "Bad\r\nName"}, "not an HTTP header name"),
        ({"type": "string", "x-mcp-header": "Région"}, "not an HTTP header name"),
        ({"type": "string", "x-mcp-header": 7}, "must be a string, not int"),
    ],
)
def test_an_annotation_the_rules_refuse(prop: dict[str, Any], why: str) -> None:
    problems = _problems(prop)
    assert len(problems) == 1 and why in problems[0], problems
    assert header_params({"type": "object", "properties": {"p": prop}}) == ()


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "x-mcp-header": "P"},
        {"type": "boolean", "x-mcp-header": "P"},
        {"type": "integer", "minimum": -SAFE_INTEGER, "maximum": SAFE_INTEGER, "x-mcp-header": "P"},
        {"type": "integer", "exclusiveMinimum": -(2**53), "exclusiveMaximum": 2**53,
         "x-mcp-header": "P"},
        {"type": "integer", "enum": [1, 2, 3], "x-mcp-header": "P"},
        {"type": "integer", "const": 4, "x-mcp-header": "P"},
        {"type": "string", "x-mcp-header": "!#$%&'*+-.^_`|~09azAZ"},
    ],
)  # fmt: skip
def test_an_annotation_the_rules_accept(prop: dict[str, Any]) -> None:
    assert _problems(prop) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"x-mcp-header": "Root", "type": "object"},
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
        {"properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}},
        {"properties": {"a": {"additionalProperties": {"type": "string", "x-mcp-header": "A"}}}},
        {"$defs": {"A": {"type": "string", "x-mcp-header": "A"}}},
        {"patternProperties": {"^a": {"type": "string", "x-mcp-header": "A"}}},
    ],
)
def test_an_annotation_off_the_properties_chain_is_refused(schema: dict[str, Any]) -> None:
    (problem,) = header_problems(schema)
    assert problem[0][-1] == "x-mcp-header"
    assert "through 'properties' alone" in problem[1]


def test_names_are_unique_whatever_their_case_and_nesting() -> None:
    problems = header_problems(
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"properties": {"c": {"type": "string", "x-mcp-header": "REGION"}}},
            }
        }
    )
    assert problems == [
        (
            ("properties", "b", "properties", "c", "x-mcp-header"),
            "header name 'REGION' of 'b.c' is already used by 'a' (header names ignore case)",
        )
    ]


def test_instance_data_is_not_read_as_an_annotation() -> None:
    schema = {
        "properties": {"a": {"type": "object", "default": {"x-mcp-header": 1}, "examples": []}},
        "const": {"x-mcp-header": "X"},
    }
    assert header_problems(schema) == []


# -- what a client sends --------------------------------------------------------------


def test_the_headers_of_a_call() -> None:
    assert [p.header for p in PARAMS] == [
        "Mcp-Param-Fast",
        "Mcp-Param-Region",
        "Mcp-Param-Shard",
        "Mcp-Param-Zone",
    ]
    arguments = {"region": " eu ", "shard": 3, "fast": False, "where": {"zone": "b"}, "query": "q"}
    assert param_headers(PARAMS, arguments) == {
        "Mcp-Param-Fast": "false",
        "Mcp-Param-Region": "=?base64?IGV1IA==?=",
        "Mcp-Param-Shard": "3",
        "Mcp-Param-Zone": "b",
    }
    # null and absent arguments send no header
    assert param_headers(PARAMS, {"region": None, "shard": 1, "where": None}) == {
        "Mcp-Param-Shard": "1"
    }


def _call_line(arguments: dict[str, Any], version: str | None = MODERN) -> bytes:
    params: dict[str, Any] = {"name": "route", "arguments": arguments}
    if version is not None:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": version}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
    ).encode()


def test_the_http_peer_mirrors_a_modern_call() -> None:
    peer = HttpPeer("http://127.0.0.1:1/mcp", None, 1 << 20)
    peer.learn_tools([{"name": "route", "inputSchema": SCHEMA}])
    headers = peer.headers(read_message(_call_line({"region": "日本", "shard": 7, "query": "q"})))
    assert headers["mcp-name"] == "route"
    assert headers["Mcp-Param-Region"] == "=?base64?5pel5pys?="
    assert headers["Mcp-Param-Shard"] == "7"
    assert "Mcp-Param-Fast" not in headers


def test_the_http_peer_sends_no_param_headers_in_the_handshake_era() -> None:
    peer = HttpPeer("http://127.0.0.1:1/mcp", None, 1 << 20)
    peer.learn_tools([{"name": "route", "inputSchema": SCHEMA}])
    init = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
    peer.headers(read_message(init))
    peer.adopt(
        read_message(init), b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}'
    )
    headers = peer.headers(read_message(_call_line({"region": "eu", "shard": 1}, None)))
    assert not [key for key in headers if key.lower().startswith("mcp-param-")]


def test_a_tool_with_a_refused_annotation_mirrors_nothing() -> None:
    peer = HttpPeer("http://127.0.0.1:1/mcp", None, 1 << 20)
    bad = {"type": "object", "properties": {"region": {"type": "number", "x-mcp-header": "R"}}}
    peer.learn_tools([{"name": "route", "inputSchema": bad}])
    headers = peer.headers(read_message(_call_line({"region": 1.5})))
    assert not [key for key in headers if key.lower().startswith("mcp-param-")]


# -- what a server accepts ------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "headers", "why"),
    [
        ({"region": "eu"}, [("mcp-param-region", "us")], "does not match the request body's 'region'"),
        ({"region": "eu"}, [], "Mcp-Param-Region header is missing but the request body's 'region'"),
        ({}, [("mcp-param-region", "eu")], "is present but the request body's 'region' argument is absent"),
        ({"region": None}, [("mcp-param-region", "eu")], "is present but"),
        ({"region": "eu"}, [("mcp-param-region", "eu"), ("mcp-param-region", "eu")], "more than once"),
        ({"region": "eu"}, [("mcp-param-region", "=?base64?ZX=?=")], "malformed"),
        ({"region": "é"}, [("mcp-param-region", "é".encode().decode("latin-1"))], "does not match"),
        ({"shard": 3}, [("mcp-param-shard", "4")], "'shard'"),
        ({"shard": 3}, [("mcp-param-shard", "3.5")], "'shard'"),
        ({"fast": True}, [("mcp-param-fast", "True")], "'fast'"),
        ({"where": {"zone": "a"}}, [("mcp-param-zone", "b")], "'where.zone'"),
    ],
)  # fmt: skip
def test_headers_that_disagree_with_the_body(
    arguments: dict[str, Any], headers: list[tuple[str, str]], why: str
) -> None:
    refused = param_header_refusal(PARAMS, arguments, headers)
    assert refused is not None and why in refused, refused


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({}, []),
        ({"region": None, "fast": None}, []),
        ({"region": "eu"}, [("mcp-param-region", "eu")]),
        ({"region": "日本"}, [("mcp-param-region", "=?base64?5pel5pys?=")]),
        ({"region": "=?base64?x"}, [("mcp-param-region", "=?base64?x")]),  # literal
        ({"shard": 3}, [("mcp-param-shard", "3.0")]),  # integers compare as numbers
        ({"shard": 3.0}, [("mcp-param-shard", "3")]),
        ({"fast": False}, [("mcp-param-fast", "false")]),
        ({"where": {"zone": "a"}}, [("mcp-param-zone", "a")]),
        ({"region": "eu"}, [("mcp-param-region", "eu"), ("mcp-param-other", "x")]),
    ],
)
def test_headers_that_agree_with_the_body(
    arguments: dict[str, Any], headers: list[tuple[str, str]]
) -> None:
    assert param_header_refusal(PARAMS, arguments, headers) is None


class Impl:
    def route(self, args: dict[str, Any]) -> str:
        return json.dumps(args, sort_keys=True)


APP = App.build(
    Impl(),
    [{"name": "route", "inputSchema": SCHEMA}],
    [Binding("route", "route", "named", ("region", "shard", "fast", "where", "query"),
             (None,) * 5)],
    server_info={"name": "headers", "version": "1"},
)  # fmt: skip
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _call(version: str, params: tuple[tuple[str, str], ...], **arguments: Any) -> list[Any]:
    meta = ENVELOPE if version == MODERN else {}
    message = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "route", "arguments": arguments, "_meta": meta},
    }
    return ServerConnection(APP).receive_stateless(
        message, Routing(version, "tools/call", "route", None, params)
    )


def test_the_core_refuses_a_mismatch_with_400_and_32020() -> None:
    (frame,) = _call(MODERN, (("mcp-param-region", "us"),), region="eu", shard=1, query="q")
    assert isinstance(frame, SendFrame)
    assert (frame.code, frame.status) == (-32020, 400)
    error = json.loads(frame.data)["error"]
    assert error["message"] == (
        "Mcp-Param-Region header does not match the request body's 'region' argument"
    )


def test_the_core_runs_a_call_whose_headers_agree() -> None:
    params = (("mcp-param-region", "eu"), ("mcp-param-shard", "1"))
    (action,) = _call(MODERN, params, region="eu", shard=1, query="q")
    assert isinstance(action, Invoke)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_the_handshake_era_has_no_param_headers_to_check(version: str) -> None:
    (action,) = _call(version, (("mcp-param-region", "us"),), region="eu", shard=1, query="q")
    assert isinstance(action, Invoke)


def test_a_param_is_named_by_its_path() -> None:
    assert HeaderParam(("where", "zone"), "Zone", "string").argument == "where.zone"
