"""Hostile input and failing handlers against a generated stdio server: the cases,
and the table of what the server answered.

Each ``Case`` starts ``python -m robust_mcp`` (tests/fixtures/robust_tools.yaml,
robust_impl.py) over real pipes, sends its input, checks the answer and returns
a short description of it; then the server must still serve (a ``ping`` and an
``add`` call answered correctly) and everything it wrote to stdout must be
JSON-RPC frames. tests/runtime/server/test_robust_server.py and test_robust_handlers.py run
these cases one test each; run this file to print the table:

    .venv/bin/python tests/robust_table.py            # markdown table on stdout
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from helpers import RawServer, build_package

FIXTURES = TESTS / "fixtures"
SPEC = FIXTURES / "robust_tools.yaml"
PACKAGE = "robust_mcp"
IMPL = "robust_impl:Impl"
MiB = 1024 * 1024
DEFAULT_LIMIT = 16 * MiB
SECRET = "SECRET"
# What a refused, unparseable or invalid frame may cost the server in memory
# (peak RSS, VmHWM) on top of the limit itself.
MEMORY_HEADROOM = 120 * MiB
ANSWER_TIMEOUT = 30.0  # generous: the machine is shared with other test runs


def build(tmp: Path) -> list[Path]:
    """Build the robust package under ``tmp``; return the PYTHONPATH for a server."""
    gen = build_package(SPEC.read_text(encoding="utf-8"), tmp, PACKAGE)
    return [gen, FIXTURES]


# --------------------------------------------------------------------------- checks


def short(text: str, limit: int = 70) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(reply: dict[str, Any]) -> str:
    """One reply as the table shows it."""
    rid = json.dumps(reply.get("id"))
    if "error" in reply:
        error = reply["error"]
        return f"error {error['code']} id={rid}: {short(error['message'])}"
    result = reply["result"]
    if isinstance(result, dict) and "content" in result:
        texts = [b.get("text", "") for b in result["content"] if isinstance(b, dict)]
        flag = "isError" if result.get("isError") else "result"
        return f"{flag} id={rid}: {short(' '.join(texts))}"
    return f"result id={rid}: {short(json.dumps(result))}"


def recv(server: RawServer) -> dict[str, Any]:
    return server.recv(timeout=ANSWER_TIMEOUT)


def expect_error(server: RawServer, code: int, request_id: Any) -> str:
    reply = recv(server)
    assert "error" in reply and "result" not in reply, reply
    assert reply["error"]["code"] == code, reply
    assert reply["id"] == request_id and "id" in reply, reply
    assert isinstance(reply["error"]["message"], str) and reply["error"]["message"], reply
    return describe(reply)


def expect_silence(server: RawServer) -> str:
    """The input got no answer: the next frame is the answer to a marker ping."""
    server.send({"jsonrpc": "2.0", "id": "marker", "method": "ping"})
    reply = recv(server)
    assert reply == {"jsonrpc": "2.0", "id": "marker", "result": {}}, reply
    return "no answer (ignored)"


def request(method: str, params: Any = None, request_id: Any = 1, **extra: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def call(name: str, arguments: Any, request_id: Any = 1) -> bytes:
    return request("tools/call", {"name": name, "arguments": arguments}, request_id)


def tool_result(server: RawServer, request_id: Any, *, is_error: bool) -> tuple[str, str]:
    """(description, text) of a tools/call result."""
    reply = recv(server)
    assert reply.get("id") == request_id and "result" in reply, reply
    result = reply["result"]
    assert result["isError"] is is_error, reply
    text = "\n".join(block["text"] for block in result["content"])
    return describe(reply), text


def peak_rss(server: RawServer) -> int:
    """The server's peak resident set size in bytes (Linux /proc)."""
    with open(f"/proc/{server.proc.pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


def assert_all_frames(server: RawServer) -> None:
    """Every stdout line is one compact JSON-RPC 2.0 response or notification."""
    for line in server.raw_lines:
        assert line.endswith(b"\n") and line.count(b"\n") == 1, line[:200]
        message = json.loads(line)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line[:200]
        if "method" not in message:
            assert "id" in message and (("result" in message) != ("error" in message)), line[:200]


def check_serving(server: RawServer) -> None:
    assert server.request("ping", timeout=ANSWER_TIMEOUT)["result"] == {}
    reply = server.call("add", {"a": 2, "b": "3"}, timeout=ANSWER_TIMEOUT)
    assert reply["result"] == {"content": [{"type": "text", "text": "5"}], "isError": False}, reply


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    name: str  # the input, as the table shows it
    run: Callable[[RawServer], str]  # send, check, describe the answer
    group: str = "server"  # server | handler
    version: str | None = "2025-11-25"  # handshake first (None: none)
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    impl: str = IMPL
    ends_server: bool = False  # the input closes stdin: check the clean exit instead
    secret_free: bool = True  # no SECRET text may reach stdout
    traceback: str | None = None  # text that must appear on stderr (a traceback)


@dataclass
class Outcome:
    case: Case
    answer: str
    serving: str
    seconds: float


CASES: list[Case] = []


def case(name: str, **options: Any) -> Callable[[Callable[[RawServer], str]], Callable[..., str]]:
    def register(run: Callable[[RawServer], str]) -> Callable[[RawServer], str]:
        CASES.append(Case(name, run, **options))
        return run

    return register


# -- framing -----------------------------------------------------------------------


@case("empty line")
def _empty(server: RawServer) -> str:
    server.send(b"\n")
    return expect_silence(server)


@case("blank line (spaces, tab, CR)")
def _blank(server: RawServer) -> str:
    server.send(b"  \t \r\n")
    return expect_silence(server)


@case("invalid UTF-8 bytes")
def _invalid_utf8(server: RawServer) -> str:
    server.send(b"\xff\xfe\xfa garbage \xc3\x28\n")
    return expect_error(server, -32700, None)


@case("invalid UTF-8 inside a JSON string")
def _invalid_utf8_string(server: RawServer) -> str:
    server.send(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"text":"ok \xc3\x28 \xff"}}}\n'
    )
    return expect_error(server, -32700, None)


@case("a UTF-8-encoded surrogate (bytes ED A0 80) inside a JSON string")
def _encoded_surrogate(server: RawServer) -> str:
    # json.loads decodes bytes with "surrogatepass": the text arrives as "\ud800"
    server.send(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"text":"\xed\xa0\x80"}}}\n'
    )
    reply = recv(server)
    assert reply["result"]["content"][0]["text"] == "\ud800", reply
    assert b"\\ud800" in server.raw_lines[-1]  # sent back as an ASCII escape, valid UTF-8
    return "accepted; echoed back as the escape \\ud800"


@case("NUL bytes")
def _nul(server: RawServer) -> str:
    server.send(b"\x00\x00\x00\n")
    return expect_error(server, -32700, None)


@case("truncated JSON")
def _truncated(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"\n')
    return expect_error(server, -32700, None)


@case("lone surrogate escapes in id, method and tool name")
def _surrogates(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}\n')
    first = recv(server)
    assert first == {"jsonrpc": "2.0", "id": "\ud800", "result": {}}, first
    server.send(b'{"jsonrpc":"2.0","id":2,"method":"\\udfff"}\n')
    expect_error(server, -32601, 2)
    server.send(b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"\\ud800"}}\n')
    expect_error(server, -32602, 3)
    server.send(call("echo", {"text": "\udc00 lone"}, 4))
    _, text = tool_result(server, 4, is_error=False)
    assert text == "\udc00 lone"
    return "answered, surrogates escaped back (ping ok, -32601, -32602, echo ok)"


@case(
    "line of 1 MiB over a 4 KiB limit (--max-message-bytes 4096)",
    args=("--max-message-bytes", "4096"),
)
def _over_flag_limit(server: RawServer) -> str:
    server.send(call("echo", {"text": "x" * MiB}, 5))
    answer = expect_error(server, -32600, None)
    # a frame of exactly the limit (newline not counted) is still accepted
    frame = call("echo", {"text": ""}, 6)
    pad = 4096 - len(frame) + 1
    server.send(call("echo", {"text": "y" * pad}, 6))
    _, text = tool_result(server, 6, is_error=False)
    assert text == "y" * pad
    return answer + "; a 4096-byte frame is served"


@case(
    "line of 64 KiB over a 1 KiB limit (MCPGEN_MAX_MESSAGE_BYTES=1024)",
    env={"MCPGEN_MAX_MESSAGE_BYTES": "1024"},
)
def _over_env_limit(server: RawServer) -> str:
    server.send(call("echo", {"text": "x" * 65536}, 5))
    return expect_error(server, -32600, None)


@case("line of 16 MiB + 1 KiB (default limit, 16 MiB)")
def _over_default_limit(server: RawServer) -> str:
    line = call("echo", {"text": "z" * (DEFAULT_LIMIT + 1024)}, 5)
    server.send(line)
    answer = expect_error(server, -32600, None)
    peak = peak_rss(server)
    assert peak < DEFAULT_LIMIT + MEMORY_HEADROOM, f"peak RSS {peak / MiB:.0f} MiB"
    return f"{answer} (peak RSS {peak / MiB:.0f} MiB)"


@case("line of 8 MiB under the default limit (echo)")
def _big_but_allowed(server: RawServer) -> str:
    text = "w" * (8 * MiB)
    server.send(call("echo", {"text": text}, 5))
    _, got = tool_result(server, 5, is_error=False)
    assert got == text
    return "result: the 8 MiB text echoed"


@case("JSON array nested 10,000 deep")
def _deep_array(server: RawServer) -> str:
    server.send(b"[" * 10_000 + b"]" * 10_000 + b"\n")
    return expect_error(server, -32600, None)


@case("JSON object nested 10,000 deep as params")
def _deep_object(server: RawServer) -> str:
    deep = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
    server.send(b'{"jsonrpc":"2.0","id":9,"method":"ping","params":' + deep + b"}\n")
    return expect_error(server, -32600, None)


# -- message shapes ------------------------------------------------------------------------


@case("batch [ping, add] on 2025-03-26 (batches allowed)", version="2025-03-26")
def _batch_allowed(server: RawServer) -> str:
    server.send(
        json.dumps(
            [
                {"jsonrpc": "2.0", "id": "b1", "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/whatever"},
                {
                    "jsonrpc": "2.0",
                    "id": "b2",
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 1, "b": 1}},
                },
            ]
        ).encode()
        + b"\n"
    )
    replies = {reply["id"]: reply for reply in (recv(server), recv(server))}
    assert replies["b1"]["result"] == {}
    assert replies["b2"]["result"]["content"][0]["text"] == "2"
    expect_silence(server)  # the notification inside got no answer
    return "both answered (one frame each, ids b1, b2); the notification inside ignored"


@case("batch [ping] on 2025-11-25 (batches removed)")
def _batch_refused(server: RawServer) -> str:
    server.send(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
    return expect_error(server, -32600, None)


@case("empty batch [] on 2025-03-26", version="2025-03-26")
def _batch_empty(server: RawServer) -> str:
    server.send(b"[]\n")
    return expect_error(server, -32600, None)


@case('a JSON string instead of an object ("hello")')
def _string(server: RawServer) -> str:
    server.send(b'"hello"\n')
    return expect_error(server, -32600, None)


@case("a JSON number instead of an object (42)")
def _number(server: RawServer) -> str:
    server.send(b"42\n")
    return expect_error(server, -32600, None)


@case("null / true instead of an object")
def _null(server: RawServer) -> str:
    server.send(b"null\n")
    expect_error(server, -32600, None)
    server.send(b"true\n")
    return expect_error(server, -32600, None)


@case("id null")
def _id_null(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n')
    return expect_error(server, -32600, None)


@case("id an object")
def _id_object(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n')
    return expect_error(server, -32600, None)


@case("id a float (1.5)")
def _id_float(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n')
    return expect_error(server, -32600, None)


@case("id a boolean")
def _id_bool(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n')
    return expect_error(server, -32600, None)


@case("id an integer of 4000 digits")
def _id_huge_int(server: RawServer) -> str:
    big = "9" * 4000
    server.send(f'{{"jsonrpc":"2.0","id":{big},"method":"ping"}}\n'.encode())
    reply = recv(server)
    assert reply == {"jsonrpc": "2.0", "id": int(big), "result": {}}, str(reply)[:200]
    return "result, the same 4000-digit id echoed"


@case("id an integer of 5000 digits (past Python's int parsing limit)")
def _id_too_huge_int(server: RawServer) -> str:
    server.send(f'{{"jsonrpc":"2.0","id":{"9" * 5000},"method":"ping"}}\n'.encode())
    return expect_error(server, -32700, None)


@case("method not a string (42)")
def _method_number(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":7,"method":42}\n')
    return expect_error(server, -32600, 7)


@case('jsonrpc "1.0"')
def _jsonrpc_version(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"1.0","id":7,"method":"ping"}\n')
    return expect_error(server, -32600, 7)


@case("params an array")
def _params_array(server: RawServer) -> str:
    server.send(request("tools/list", [1, 2], 8))
    return expect_error(server, -32602, 8)


@case("params a string")
def _params_string(server: RawServer) -> str:
    server.send(request("ping", "x", 8))
    return expect_error(server, -32602, 8)


@case("unknown method")
def _unknown_method(server: RawServer) -> str:
    server.send(request("tools/explode", {}, 9))
    return expect_error(server, -32601, 9)


@case("method of 1 MiB")
def _huge_method(server: RawServer) -> str:
    server.send(request("m" * MiB, None, 9))
    return expect_error(server, -32601, 9)


@case("2026-07-28 envelope on a handshake connection")
def _envelope_on_legacy(server: RawServer) -> str:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    server.send(request("tools/list", {"_meta": meta}, 10))
    return expect_error(server, -32600, 10)


@case("tools/call before initialize", version=None)
def _before_initialize(server: RawServer) -> str:
    server.send(call("add", {"a": 1, "b": 2}, 11))
    answer = expect_error(server, -32600, 11)
    server.handshake()
    return answer


@case("second initialize")
def _second_initialize(server: RawServer) -> str:
    server.send(
        request(
            "initialize",
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "again", "version": "0"},
            },
            12,
        )
    )
    reply = recv(server)
    assert reply["id"] == 12 and reply["result"]["protocolVersion"] == "2024-11-05", reply
    return "answered again (2024-11-05 from then on)"


# -- tools/call --------------------------------------------------------------------------------


@case("tools/call without a name")
def _call_no_name(server: RawServer) -> str:
    server.send(request("tools/call", {"arguments": {}}, 13))
    return expect_error(server, -32602, 13)


@case("tools/call with a non-string name")
def _call_name_number(server: RawServer) -> str:
    server.send(request("tools/call", {"name": ["echo"]}, 13))
    return expect_error(server, -32602, 13)


@case("tools/call with an unknown tool")
def _call_unknown(server: RawServer) -> str:
    server.send(call("nope", {}, 13))
    return expect_error(server, -32602, 13)


@case("tools/call with arguments an array")
def _call_args_array(server: RawServer) -> str:
    server.send(call("add", [1, 2], 14))
    return expect_error(server, -32602, 14)


@case("tools/call with arguments a string")
def _call_args_string(server: RawServer) -> str:
    server.send(call("add", "a=1&b=2", 14))
    return expect_error(server, -32602, 14)


@case("argument a 4 MiB string where an integer is due")
def _huge_argument(server: RawServer) -> str:
    server.send(call("add", {"a": "9" * (4 * MiB) + "x", "b": 1}, 15))
    answer, text = tool_result(server, 15, is_error=True)
    assert "'a'" in text or "a:" in text, text[:300]
    assert len(text) < 1000, len(text)
    assert len(server.raw_lines[-1]) < 2000
    return f"{answer} ({len(text)} chars)"


@case("4 MiB of unknown argument names")
def _many_unknown_arguments(server: RawServer) -> str:
    arguments = {f"k{i:07d}": i for i in range(200_000)}
    arguments.update({"a": 1, "b": 2})
    server.send(call("add", arguments, 15))
    answer, text = tool_result(server, 15, is_error=True)
    assert len(text) < 1000, len(text)
    return f"{answer} ({len(text)} chars)"


@case("argument nested 900 deep in a recursive schema")
def _nested_argument(server: RawServer) -> str:
    root = '{"child":' * 900 + "{}" + "}" * 900
    server.send(
        b'{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"tree",'
        b'"arguments":{"root":' + root.encode() + b"}}}\n"
    )
    answer, text = tool_result(server, 16, is_error=True)
    assert "nested too deeply" in text and len(text) < 500, text
    shallow = '{"child":' * 50 + "{}" + "}" * 50
    server.send(
        b'{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"tree",'
        b'"arguments":{"root":' + shallow.encode() + b"}}}\n"
    )
    _, depth = tool_result(server, 17, is_error=False)
    assert depth == "50"
    return answer + " (50 deep: served)"


@case("arguments of the wrong types")
def _wrong_types(server: RawServer) -> str:
    server.send(
        call(
            "typed",
            {
                "count": "many",
                "tags": [1, "fine"],
                "options": {"verbose": "perhaps", "colour": "red"},
            },
            18,
        )
    )
    answer, text = tool_result(server, 18, is_error=True)
    for name in ("count", "tags", "verbose", "colour"):
        assert name in text, text
    assert len(text) < 1000
    return answer


@case("a required argument missing, an integer out of range")
def _missing_and_range(server: RawServer) -> str:
    server.send(call("typed", {"count": -1}, 19))
    answer, text = tool_result(server, 19, is_error=True)
    assert "tags" in text and "count" in text, text
    return answer


@case("integer argument of 4000 digits")
def _huge_int_argument(server: RawServer) -> str:
    big = 10**3999
    server.send(call("add", {"a": big, "b": 1}, 20))
    _, text = tool_result(server, 20, is_error=False)
    assert int(text) == big + 1
    return "result: the 4000-digit sum"


# -- traffic ------------------------------------------------------------------------------------


@case("500 requests pipelined in one write, with garbage, notifications and responses among them")
def _pipelined(server: RawServer) -> str:
    expected: dict[Any, str] = {}
    parse_errors = 0
    lines = []
    for i in range(500):
        request_id: Any = i if i % 3 else f"s{i}"
        kind = i % 10
        if kind == 0:
            lines.append(request("ping", None, request_id))
            expected[request_id] = "ping"
        elif kind == 1:
            lines.append(call("add", {"a": i, "b": 1}, request_id))
            expected[request_id] = str(i + 1)
        elif kind == 2:
            lines.append(call("echo", {"text": f"t{i}"}, request_id))
            expected[request_id] = f"t{i}"
        elif kind == 3:
            lines.append(b"{not json\n")
            parse_errors += 1
        elif kind == 4:
            lines.append(b'{"jsonrpc":"2.0","method":"notifications/unknown","params":{}}\n')
        elif kind == 5:
            lines.append(b'{"jsonrpc":"2.0","id":123456,"result":{}}\n')
        elif kind == 6:
            lines.append(request("tools/list", None, request_id))
            expected[request_id] = "list"
        elif kind == 7:
            lines.append(call("fail_async", {"how": "exception"}, request_id))
            expected[request_id] = "failed"
        elif kind == 8:
            lines.append(call("typed", {"count": "x", "tags": []}, request_id))
            expected[request_id] = "invalid"
        else:
            lines.append(b"\n")
    server.send(b"".join(lines))
    answered: dict[Any, dict[str, Any]] = {}
    nulls = 0
    for _ in range(len(expected) + parse_errors):
        reply = recv(server)
        if reply["id"] is None:
            assert reply["error"]["code"] == -32700
            nulls += 1
            continue
        assert reply["id"] in expected and reply["id"] not in answered, reply
        answered[reply["id"]] = reply
    assert nulls == parse_errors and set(answered) == set(expected)
    for request_id, want in expected.items():
        result = answered[request_id]["result"]
        if want == "ping":
            assert result == {}
        elif want == "list":
            assert len(result["tools"]) == 13
        elif want in ("failed", "invalid"):
            assert result["isError"] is True
        else:
            assert result["content"][0]["text"] == want, (request_id, result)
    expect_silence(server)
    return (
        f"{len(expected)} answered with matching ids, {parse_errors} parse errors "
        "(id null), notifications and responses ignored"
    )


@case("notification with an unknown method")
def _unknown_notification(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","method":"notifications/bogus","params":{"x":1}}\n')
    server.send(b'{"jsonrpc":"2.0","method":"no/such/thing"}\n')
    return expect_silence(server)


@case("notifications/cancelled for an unknown id, a list or object id, bad params")
def _bad_cancel(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}\n')
    server.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}\n')
    server.send(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":1}}}\n'
    )
    server.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}\n')
    server.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled"}\n')
    return expect_silence(server)


@case("a response sent to the server (result)")
def _response(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":5,"result":{"anything":true}}\n')
    return expect_silence(server)


@case("an error response sent to the server, with id and with id null")
def _error_response(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"you are wrong"}}\n')
    server.send(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n')
    server.send(b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"no id at all"}}\n')
    return expect_silence(server)


@case("stdin closed in the middle of a line", ends_server=True)
def _eof_mid_line(server: RawServer) -> str:
    server.send(b'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"ec')
    code = server.close(expect_code=None, timeout=ANSWER_TIMEOUT)
    assert code == 0, server.stderr
    last = json.loads(server.raw_lines[-1])
    assert last["id"] is None and last["error"]["code"] == -32700, last
    return f"error -32700 id=null for the fragment, then exit code {code}"


@case("stdin closed while a call is running", ends_server=True)
def _eof_mid_call(server: RawServer) -> str:
    server.send(call("nap", {"seconds": 0.5}, 22))
    server.send(call("hang_async", {"seconds": 0.2}, 23))
    started = time.monotonic()
    code = server.close(expect_code=None, timeout=ANSWER_TIMEOUT)
    assert code == 0, server.stderr
    ids = [json.loads(line)["id"] for line in server.raw_lines[1:]]
    assert sorted(ids) == [22, 23], ids
    return f"both calls answered, then exit code {code} after {time.monotonic() - started:.1f} s"


# -- stdout stays clean -------------------------------------------------------------------------


@case("handler prints, logs to the root logger, writes to fd 1 and sys.__stdout__, runs a child")
def _noisy(server: RawServer) -> str:
    server.send(call("noisy", {"text": "hi"}, 24))
    _, text = tool_result(server, 24, is_error=False)
    assert text == "quiet hi"
    return "result 'quiet hi'; all the noise on stderr"


@case("implementation prints and logs at import and construction", impl="robust_impl:Loud")
def _loud_start(server: RawServer) -> str:
    server.send(call("noisy", {"text": "loud"}, 25))
    _, text = tool_result(server, 25, is_error=False)
    assert text == "quiet loud"
    return "handshake and calls clean; start-up noise on stderr"


# -- failing handlers (test_robust_handlers.py) ------------------------------------------------


def _failed(name: str, how: str, request_id: int) -> Callable[[RawServer], str]:
    def run(server: RawServer) -> str:
        server.send(call(name, {"how": how}, request_id))
        answer, text = tool_result(server, request_id, is_error=True)
        assert name in text and SECRET not in text and "Error" not in text, text
        return answer

    return run


_RAISES = (
    ("exception", "RuntimeError", "RuntimeError: SECRET-exception-text"),
    ("base_exception", "a BaseException subclass", "Interrupt: SECRET-base-exception-text"),
    (
        "keyboard_interrupt",
        "KeyboardInterrupt",
        "KeyboardInterrupt: SECRET-keyboard-interrupt-text",
    ),
    ("cancelled_error", "asyncio.CancelledError", "CancelledError: SECRET-cancelled-error-text"),
    ("generator_exit", "GeneratorExit", "GeneratorExit: SECRET-generator-exit-text"),
)
for _name, _kind in (
    ("fail", "sync"),
    ("fail_timed", "sync, worker thread"),
    ("fail_async", "async"),
):
    for _index, (_how, _label, _traceback) in enumerate(_RAISES):
        CASES.append(
            Case(
                f"{_kind} handler raises {_label}",
                _failed(_name, _how, 30 + _index),
                group="handler",
                traceback=_traceback,
            )
        )
CASES.append(
    Case(
        "async handler awaits a task it cancelled (CancelledError)",
        _failed("fail_async", "cancelled_subtask", 36),
        group="handler",
        traceback="CancelledError",
    )
)
CASES.append(
    Case(
        "async handler raises SystemExit",
        _failed("fail_async", "system_exit", 37),
        group="handler",
        traceback="SystemExit: 7",
    )
)
CASES.append(
    Case(
        "sync handler on a worker thread raises SystemExit",
        _failed("fail_timed", "system_exit", 38),
        group="handler",
        traceback="SystemExit: 7",
    )
)


@case("handler raises ToolError", group="handler")
def _tool_error(server: RawServer) -> str:
    server.send(call("fail", {"how": "tool_error"}, 33))
    answer, text = tool_result(server, 33, is_error=True)
    assert text == "a tool error the caller may read"
    return answer


def _hang(name: str) -> Callable[[RawServer], str]:
    def run(server: RawServer) -> str:
        started = time.monotonic()
        for request_id in (40, 41, 42):  # three abandoned at once starve nothing
            server.send(call(name, {"seconds": 30}, request_id))
        server.send(call(name, {"seconds": 0}, 43))
        replies = {}
        for _ in range(4):
            reply = recv(server)
            replies[reply["id"]] = reply
        elapsed = time.monotonic() - started
        assert elapsed < 10, elapsed
        for request_id in (40, 41, 42):
            result = replies[request_id]["result"]
            assert result["isError"] is True and "timed out" in result["content"][0]["text"]
        assert replies[43]["result"]["content"][0]["text"] == "finished"
        check_serving(server)  # while three handlers still sleep
        return describe(replies[40]) + f" (3 hung calls + 1 quick: {elapsed:.1f} s)"

    return run


CASES.append(Case("sync handler hangs past its timeout (0.5 s)", _hang("hang"), group="handler"))
CASES.append(
    Case("async handler hangs past its timeout (0.5 s)", _hang("hang_async"), group="handler")
)


@case("the client cancels a running async call (notifications/cancelled)", group="handler")
def _cancelled_call(server: RawServer) -> str:
    server.send(call("hang_async", {"seconds": 0.3}, 44))
    server.send(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled",'
        b'"params":{"requestId":44,"reason":"changed my mind"}}\n'
    )
    time.sleep(0.8)  # past the handler's 0.3 s and its 0.5 s timeout: nothing may come
    expect_silence(server)
    return "no answer for the cancelled id"


def _internal(name: str, how: str, request_id: int) -> Callable[[RawServer], str]:
    def run(server: RawServer) -> str:
        server.send(call(name, {"how": how}, request_id))
        answer = expect_error(server, -32603, request_id)
        frame = server.raw_lines[-1].decode()
        assert name in frame and SECRET not in frame and "data" not in json.loads(frame)["error"]
        return answer

    return run


def _invalid_result(
    name: str, how: str, request_id: int, reason: str
) -> Callable[[RawServer], str]:
    """A structured result that breaks its schema or JSON: an ``isError`` result naming
    the tool (the error mapping of ``_tools``), nothing of the value in it."""

    def run(server: RawServer) -> str:
        server.send(call(name, {"how": how}, request_id))
        answer, text = tool_result(server, request_id, is_error=True)
        assert text == f"Tool '{name}' produced an invalid result: {reason}.", text
        assert SECRET not in server.raw_lines[-1].decode()
        return answer

    return run


for _how, _label, _err, _reason in (
    (
        "wrong_type",
        "a string where the schema wants a number",
        "does not match the output schema",
        "it does not match the tool's output schema",
    ),
    (
        "missing",
        "a required property missing",
        "does not match the output schema",
        "it does not match the tool's output schema",
    ),
    (
        "not_a_dict",
        "a list instead of an object",
        "expected the output model or a dict",
        "it is not an object",
    ),
    # n is {type: number}: NaN and infinities are no JSON numbers, so the output schema
    # refuses them before JSON encoding would.
    (
        "nan",
        "float('nan')",
        "n: expected a finite number, got nan",
        "it does not match the tool's output schema",
    ),
    (
        "infinity",
        "float('inf')",
        "n: expected a finite number, got inf",
        "it does not match the tool's output schema",
    ),
    ("set", "a set", "not JSON-serialisable", "it cannot be sent as JSON"),
    ("deep", "an object nested 5000 deep", "not JSON-serialisable", "it cannot be sent as JSON"),
):
    CASES.append(
        Case(
            f"structured result holds {_label}",
            _invalid_result("bad_struct", _how, 50, _reason),
            group="handler",
            traceback=_err,
        )
    )
for _how, _label in (
    ("set", "a set"),
    ("nan", "float('nan')"),
    ("object", "an object()"),
    ("deep", "an object nested 5000 deep"),
    ("bytes", "bytes"),
):
    CASES.append(
        Case(
            f"returns-object result holds {_label}",
            _internal("bad_value", _how, 51),
            group="handler",
            traceback="not JSON-serialisable",
        )
    )


# --------------------------------------------------------------------------- running


def run_case(item: Case, pythonpath: Sequence[Path]) -> Outcome:
    """Run one case on a fresh server; raise AssertionError when it misbehaves."""
    started = time.monotonic()
    server = RawServer(
        PACKAGE, item.impl, pythonpath=pythonpath, extra_args=item.args, env=item.env
    )
    try:
        if item.version is not None:
            server.handshake(item.version)
        answer = item.run(server)
        if item.ends_server:
            serving = "exited cleanly (code 0)"
        else:
            check_serving(server)
            serving = "yes"
            server.close(timeout=ANSWER_TIMEOUT)
    except BaseException:
        server.kill()
        raise
    assert_all_frames(server)
    stdout = b"".join(server.raw_lines)
    if item.secret_free:
        assert SECRET.encode() not in stdout, "a secret reached stdout"
    assert b"NOISE" not in stdout, "handler or start-up noise reached stdout"
    if item.traceback is not None:
        assert item.traceback in server.stderr, server.stderr[-2000:]
    if item.run is _noisy or item.run is _loud_start:
        err = server.stderr
        for noise in (
            "NOISE-print hi" if item.run is _noisy else "NOISE-print loud",
            "NOISE-sys.stdout",
            "NOISE-sys.__stdout__",
            "NOISE-root-logger",
            "NOISE-library-logger",
            "NOISE-fd1",
            "NOISE-child-process",
        ):
            assert noise in err, (noise, err[-2000:])
        if item.run is _loud_start:
            assert "NOISE-import-print" in err and "NOISE-constructor-print" in err
    return Outcome(item, answer, serving, time.monotonic() - started)


def table(outcomes: Sequence[Outcome]) -> str:
    rows = ["| input | answer | still serving |", "|---|---|---|"]
    for outcome in outcomes:
        cells = (outcome.case.name, outcome.answer, outcome.serving)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


def main(argv: Sequence[str] = ()) -> int:
    groups = set(argv) or {"server", "handler"}
    with tempfile.TemporaryDirectory(prefix="robust-table-") as tmp:
        pythonpath = build(Path(tmp))
        outcomes = []
        failed = 0
        for item in CASES:
            if item.group not in groups:
                continue
            try:
                outcomes.append(run_case(item, pythonpath))
            except AssertionError as exc:
                failed += 1
                outcomes.append(Outcome(item, f"FAILED: {short(str(exc), 120)}", "?", 0.0))
            print(f"{len(outcomes):3d}. {item.name}", file=sys.stderr)
    print(table(outcomes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
