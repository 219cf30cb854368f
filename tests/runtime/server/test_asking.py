"""Tools that ask their caller for input (``ctx.ask``), end to end, in both eras.

A generated server whose tools ask twice (how many people, then a confirmation),
sync (``ctx.ask_sync``) and async (``await ctx.ask``), served over stdio and
Streamable HTTP, called through the generated typed clients with ``on_input``:
answered, declined, dismissed, unanswerable (no ``on_input``: no elicitation
declared, so the server declines without asking), an answer that does not fit the
schema (never sent: a decline). At 2026-07-28 the sealed ``requestState`` is
refused when forged, altered, expired or minted for another call, and a call is
resumed by another worker (two processes sharing a key and a Redis task store).
The official SDK's client (mcp 2.3.0) answers the same tools in both eras.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.http_server import HttpServer
from helpers import RawServer, build_package, import_package

from mcpgen_runtime import Accepted, Declined, Dismissed, ToolError
from mcpgen_runtime.server.sealing import StateSeal, binding_of

SPEC = """
mcpgen: 1
package: asker_mcp
server: {name: asker, version: 1.0.0}
tools:
  - name: book
    description: Book a table, asking how many people come, then for a confirmation.
    parameters: [{name: place, type: string}]
    returns: string
  - name: book_async
    description: The same, async.
    parameters: [{name: place, type: string}]
    returns: string
    async: true
  - name: nested
    description: Asks with a schema elicitation cannot carry.
    parameters: []
    returns: string
  - name: patient
    description: Asks, waiting at most half a second.
    parameters: []
    returns: string
"""

IMPL = """
from typing import Any
from mcpgen_runtime import Accepted, Context, Declined
from asker_mcp import AskerServer

PEOPLE = {"type": "object", "properties": {"people": {"type": "integer", "minimum": 1}},
          "required": ["people"]}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def outcome(place: str, first: Any, second: Any) -> str:
    if not isinstance(first, Accepted):
        return "declined" if isinstance(first, Declined) else "dismissed"
    ok = isinstance(second, Accepted) and second.value["ok"]
    return f"{first.value['people']} at {place}, confirmed={ok}"


class Impl(AskerServer):
    def book(self, place: str, *, ctx: Context = Context.NONE) -> str:
        first = ctx.ask_sync(f"How many people at {place}?", PEOPLE)
        second = ctx.ask_sync("Confirm?", CONFIRM) if isinstance(first, Accepted) else None
        return outcome(place, first, second)

    async def book_async(self, place: str, *, ctx: Context = Context.NONE) -> str:
        first = await ctx.ask(f"How many people at {place}?", PEOPLE)
        second = await ctx.ask("Confirm?", CONFIRM) if isinstance(first, Accepted) else None
        return outcome(place, first, second)

    def nested(self, *, ctx: Context = Context.NONE) -> str:
        schema = {"type": "object", "properties": {"a": {"type": "object"}}}
        ctx.ask_sync("Deep?", schema)
        return "unreachable"

    def patient(self, *, ctx: Context = Context.NONE) -> str:
        answer = ctx.ask_sync("Anyone?", CONFIRM, timeout=0.5)
        return type(answer).__name__
"""

KEY = "k" * 40  # the request-state key the servers of these tests share
ERAS = ["legacy", "modern"]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("asking")
    gen = build_package(SPEC, root, "asker_mcp")
    impl = root / "impl"
    impl.mkdir()
    (impl / "asker_impl.py").write_text(IMPL, encoding="utf-8")
    return gen, impl


@pytest.fixture(scope="module")
def asker(package: tuple[Path, Path]) -> Iterator[Any]:
    gen, impl = package
    sys.path.insert(0, str(impl))
    with import_package(gen, "asker_mcp") as module:
        yield module
    sys.path.remove(str(impl))


def command(package: tuple[Path, Path]) -> list[str]:
    return [sys.executable, "-m", "asker_mcp", "--impl", "asker_impl:Impl"]


def env(package: tuple[Path, Path]) -> dict[str, str]:
    import os

    gen, impl = package
    return {**os.environ, "PYTHONPATH": f"{gen}:{impl}", "MCPGEN_REQUEST_STATE_KEY": KEY}


class Recorder:
    """An ``on_input`` that answers from a script and records what it was asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, message: str, schema: dict[str, Any]) -> Any:
        self.asked.append((message, schema))
        return self.answers.pop(0)


# -- stdio, both eras, the typed clients ------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("tool", ["book", "book_async"])
def test_the_caller_answers_over_stdio(
    asker: Any, package: tuple[Path, Path], era: str, tool: str
) -> None:
    on_input = Recorder({"people": 4}, Accepted({"ok": True}))
    with asker.AskerClient.stdio(
        command(package), env=env(package), protocol=era, on_input=on_input
    ) as client:
        assert client.session.era == era
        assert getattr(client, tool)("Luigi's") == "4 at Luigi's, confirmed=True"
    assert [message for message, _ in on_input.asked] == ["How many people at Luigi's?", "Confirm?"]
    assert on_input.asked[0][1]["properties"]["people"] == {"type": "integer", "minimum": 1}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("answer", "expected"),
    [(Declined(), "declined"), (None, "declined"), (Dismissed(), "dismissed")],
)
def test_declined_and_dismissed_reach_the_handler(
    asker: Any, package: tuple[Path, Path], era: str, answer: Any, expected: str
) -> None:
    with asker.AskerClient.stdio(
        command(package), env=env(package), protocol=era, on_input=lambda m, s: answer
    ) as client:
        assert client.book("x") == expected


@pytest.mark.parametrize("era", ERAS)
def test_a_client_without_on_input_is_never_asked(
    asker: Any, package: tuple[Path, Path], era: str
) -> None:
    """No ``on_input``: no elicitation capability; the tool takes its declined path."""
    with asker.AskerClient.stdio(command(package), env=env(package), protocol=era) as client:
        assert client.book("x") == "declined"
        assert client.book_async("x") == "declined"


@pytest.mark.parametrize("era", ERAS)
def test_an_answer_off_the_schema_is_not_sent(
    asker: Any, package: tuple[Path, Path], era: str
) -> None:
    """``people`` must be at least 1: the client checks before sending and declines."""
    with asker.AskerClient.stdio(
        command(package), env=env(package), protocol=era, on_input=lambda m, s: {"people": 0}
    ) as client:
        assert client.book("x") == "declined"


@pytest.mark.parametrize("era", ERAS)
def test_a_schema_elicitation_cannot_carry_fails_the_call(
    asker: Any, package: tuple[Path, Path], era: str
) -> None:
    with (
        asker.AskerClient.stdio(
            command(package), env=env(package), protocol=era, on_input=Recorder()
        ) as client,
        pytest.raises(ToolError, match="Tool 'nested' failed"),
    ):
        client.nested()


def test_an_unanswered_question_times_out_declined(asker: Any, package: tuple[Path, Path]) -> None:
    """Handshake era: the server waits for the answer, within the ask's timeout."""

    release = threading.Event()

    def never(message: str, schema: dict[str, Any]) -> Any:
        release.wait(30)

    with asker.AskerClient.stdio(
        command(package), env=env(package), protocol="legacy", on_input=never
    ) as client:
        assert client.patient() == "Declined"
    release.set()
    for thread in threading.enumerate():
        if thread.name == "mcpgen-on-input":
            thread.join(10)


@pytest.mark.parametrize("era", ERAS)
def test_the_async_client_answers_with_a_coroutine(
    asker: Any, package: tuple[Path, Path], era: str
) -> None:
    import asyncio

    async def on_input(message: str, schema: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        return {"people": 2} if "people" in schema["properties"] else {"ok": False}

    async def main() -> str:
        async with asker.AsyncAskerClient.stdio(
            command(package), env=env(package), protocol=era, on_input=on_input
        ) as client:
            result: str = await client.book_async("Mario's")
            return result

    assert asyncio.run(main()) == "2 at Mario's, confirmed=False"


# -- the 2026-07-28 wire: input_required, requestState ----------------------------------

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}


def modern_call(server: RawServer, request_id: int, **params: Any) -> dict[str, Any]:
    server.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "book", "arguments": {"place": "p"}, **params, "_meta": MODERN_META},
        }
    )
    reply: dict[str, Any] = server.recv()
    return reply


@pytest.fixture
def raw(package: tuple[Path, Path]) -> Iterator[RawServer]:
    gen, impl = package
    server = RawServer(
        "asker_mcp",
        "asker_impl:Impl",
        pythonpath=[gen, impl],
        env={"MCPGEN_REQUEST_STATE_KEY": KEY},
    )
    try:
        yield server
    finally:
        server.close(expect_code=None)


def test_the_modern_rounds_on_the_wire(raw: RawServer) -> None:
    first = modern_call(raw, 1)["result"]
    assert first["resultType"] == "input_required"
    request = first["inputRequests"]["ask-0"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "How many people at p?"
    accept = {"action": "accept", "content": {"people": 3}}
    second = modern_call(
        raw, 2, inputResponses={"ask-0": accept}, requestState=first["requestState"]
    )["result"]
    assert list(second["inputRequests"]) == ["ask-1"]
    done = modern_call(
        raw,
        3,
        inputResponses={"ask-1": {"action": "accept", "content": {"ok": True}}},
        requestState=second["requestState"],
    )["result"]
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "3 at p, confirmed=True"


def sealed(
    claims: dict[str, Any], *, key: str = KEY, ttl: float = 600.0, at: float | None = None
) -> str:
    clock = time.time if at is None else (lambda: at)
    return StateSeal(key, ttl=ttl, clock=clock).seal(claims)


def state_for(tool: str = "book", arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**binding_of(tool, arguments or {"place": "p"}, None), "answers": [], "pending": "x"}


@pytest.mark.parametrize(
    ("why", "state"),
    [
        ("forged", "v1.eyJ0IjoiYm9vayJ9.AAAA"),
        ("another key", sealed(state_for(), key="z" * 40)),
        ("expired", sealed(state_for(), ttl=60, at=time.time() - 3600)),
        ("another tool", sealed(state_for("book_async"))),
        ("other arguments", sealed(state_for(arguments={"place": "q"}))),
        ("not a string", 42),
    ],
)
def test_a_bad_request_state_is_refused(raw: RawServer, why: str, state: Any) -> None:
    reply = modern_call(raw, 1, requestState=state)
    assert reply["error"]["code"] == -32602, why
    assert "Invalid or expired requestState" in reply["error"]["message"]
    assert reply["error"]["data"]["reason"] == "invalid_request_state"
    # and the server keeps serving
    assert modern_call(raw, 2)["result"]["resultType"] == "input_required"


def test_an_altered_state_is_refused(raw: RawServer) -> None:
    state = modern_call(raw, 1)["result"]["requestState"]
    body, tag = state[3:].split(".")
    payload = json.loads(__import__("base64").urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["answers"] = [[payload["pending"], {"action": "accept", "content": {"people": 99}}]]
    forged_body = __import__("base64").urlsafe_b64encode(json.dumps(payload).encode()).decode()
    reply = modern_call(raw, 2, requestState=f"v1.{forged_body.rstrip('=')}.{tag}")
    assert reply["error"]["data"]["detail"].startswith("bad seal")


def test_a_raw_answer_off_the_schema_fails_the_call(raw: RawServer) -> None:
    """The server checks too: an answer a client sent unchecked is a tool error."""
    first = modern_call(raw, 1)["result"]
    bad = {"action": "accept", "content": {"people": "many"}}
    reply = modern_call(raw, 2, inputResponses={"ask-0": bad}, requestState=first["requestState"])
    assert reply["result"]["isError"] is True
    assert "does not match the requested schema" in reply["result"]["content"][0]["text"]


@pytest.mark.parametrize("tool", ["book", "book_async"])
def test_cancelling_a_call_stops_its_question(raw: RawServer, tool: str) -> None:
    """Handshake era: the caller cancels while the server waits for an answer; the
    server withdraws its question (notifications/cancelled), sends no reply to the
    call, and keeps serving."""
    raw.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "0"},
        "capabilities": {"elicitation": {"form": {}}}}})  # fmt: skip
    assert "result" in raw.recv()
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    raw.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
              "params": {"name": tool, "arguments": {"place": "p"}}})  # fmt: skip
    asked = raw.recv()
    assert asked["method"] == "elicitation/create"
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    withdrawn = raw.recv()
    assert withdrawn["method"] == "notifications/cancelled"
    assert withdrawn["params"]["requestId"] == asked["id"]
    raw.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
    assert raw.recv() == {"jsonrpc": "2.0", "id": 8, "result": {}}  # no reply to call 7


# -- HTTP ---------------------------------------------------------------------------------


def http_server(package: tuple[Path, Path], *extra: str) -> HttpServer:
    gen, impl = package
    server = HttpServer(
        "asker_mcp", "--impl", "asker_impl:Impl", *extra, pythonpath=[gen, impl], cwd=impl,
        log_dir=impl.parent,
    )  # fmt: skip
    server.wait_ready()
    return server


@pytest.fixture(scope="module")
def http(package: tuple[Path, Path]) -> Iterator[HttpServer]:
    server = http_server(package, "--request-state-key", KEY)
    try:
        yield server
    finally:
        server.stop()
        server.log.close()


@pytest.mark.parametrize("tool", ["book", "book_async"])
def test_the_caller_answers_over_http_modern(asker: Any, http: HttpServer, tool: str) -> None:
    on_input = Recorder({"people": 5}, {"ok": True})
    with asker.AskerClient.http(http.url, protocol="modern", on_input=on_input) as client:
        assert getattr(client, tool)("Anna's") == "5 at Anna's, confirmed=True"
    assert len(on_input.asked) == 2


@pytest.mark.parametrize("tool", ["book", "book_async"])
def test_the_caller_answers_over_http_handshake_era(
    asker: Any, http: HttpServer, tool: str
) -> None:
    """The initialize answer hands an Mcp-Session-Id carrying the declared elicitation;
    the call is answered on an SSE stream that carries elicitation/create; the
    client's POSTed answer reaches the waiting handler."""
    on_input = Recorder({"people": 3}, {"ok": False})
    with asker.AskerClient.http(http.url, protocol="legacy", on_input=on_input) as client:
        assert client.session.protocol_version == "2025-11-25"
        assert getattr(client, tool)("Bo's") == "3 at Bo's, confirmed=False"
    assert len(on_input.asked) == 2


def test_http_handshake_era_without_on_input_is_not_asked(asker: Any, http: HttpServer) -> None:
    with asker.AskerClient.http(http.url, protocol="legacy") as client:
        assert client.book("x") == "declined"


def test_http_json_only_declines_without_hanging(asker: Any, package: tuple[Path, Path]) -> None:
    """--json-response: a call's answer cannot carry a request, so the tool declines."""
    server = http_server(package, "--json-response")
    try:
        on_input = Recorder()
        with asker.AskerClient.http(server.url, protocol="legacy", on_input=on_input) as client:
            assert client.book("x") == "declined"
        assert on_input.asked == []
    finally:
        server.stop()
        server.log.close()


def test_a_forged_session_id_only_declines(http: HttpServer) -> None:
    """A session id this server did not seal declares nothing: the tool declines."""
    import httpx2 as httpx

    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Session-Id": "v1.e30.AAAA",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "book", "arguments": {"place": "p"}}}  # fmt: skip
    reply = httpx.post(http.url, json=body, headers=headers, timeout=30)
    assert reply.status_code == 200
    assert "declined" in reply.text


# -- across workers ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    from fixtures.redis_server import redis_server

    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


def test_another_worker_resumes_the_call(package: tuple[Path, Path], redis_url: str) -> None:
    """Round one on worker A, the retry on worker B: they share the key (and a Redis
    task store); B resumes the call from the sealed state alone."""
    import httpx2 as httpx

    workers = [
        http_server(package, "--request-state-key", KEY, "--task-store", redis_url)
        for _ in range(2)
    ]
    stranger = http_server(package, "--task-store", redis_url)  # its own random key
    try:
        first = _post(httpx, workers[0].url, 1)
        assert first["resultType"] == "input_required"
        accept = {"ask-0": {"action": "accept", "content": {"people": 6}}}
        second = _post(
            httpx, workers[1].url, 2, inputResponses=accept, requestState=first["requestState"]
        )
        assert list(second["inputRequests"]) == ["ask-1"]
        confirm = {"ask-1": {"action": "accept", "content": {"ok": True}}}
        done = _post(
            httpx, workers[0].url, 3, inputResponses=confirm, requestState=second["requestState"]
        )
        assert done["content"][0]["text"] == "6 at p, confirmed=True"
        refused = _post(
            httpx, stranger.url, 4, inputResponses=confirm, requestState=second["requestState"],
            status=400,
        )  # fmt: skip
        assert refused["code"] == -32602
    finally:
        for server in [*workers, stranger]:
            server.stop()
            server.log.close()


def test_a_handshake_era_answer_posted_to_another_worker_reaches_the_call(
    package: tuple[Path, Path], redis_url: str
) -> None:
    """The call streams on worker A; the client POSTs its answers to worker B, which
    relays them through Redis to A, where the handler waits."""
    import httpx2 as httpx

    a, b = (
        http_server(package, "--request-state-key", KEY, "--task-store", redis_url)
        for _ in range(2)
    )
    try:
        with httpx.Client(timeout=30) as client:
            headers = {"Accept": "application/json, text/event-stream"}
            init = client.post(a.url, headers=headers, json={
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "0"},
                           "capabilities": {"elicitation": {}}}})  # fmt: skip
            session = init.headers["mcp-session-id"]
            headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "book", "arguments": {"place": "p"}}}  # fmt: skip
            answers = iter([{"people": 7}, {"ok": True}])
            events = []
            with client.stream("POST", a.url, json=call, headers=headers) as stream:
                for line in stream.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    event = json.loads(line[6:])
                    events.append(event)
                    if event.get("method") == "elicitation/create":
                        reply = {"jsonrpc": "2.0", "id": event["id"],
                                 "result": {"action": "accept", "content": next(answers)}}  # fmt: skip
                        assert client.post(b.url, json=reply, headers=headers).status_code == 202
        assert [e.get("method") for e in events] == ["elicitation/create"] * 2 + [None]
        assert events[-1]["result"]["content"][0]["text"] == "7 at p, confirmed=True"
    finally:
        for server in (a, b):
            server.stop()
            server.log.close()


def test_workers_of_one_command_share_a_key(package: tuple[Path, Path], redis_url: str) -> None:
    """``--workers 2`` without a key: the command makes one random key for its workers,
    so a round sealed by either is opened by the other (each POST a new connection,
    which the kernel spreads over the two workers)."""
    import httpx2 as httpx

    server = http_server(package, "--workers", "2", "--task-store", redis_url)
    try:
        for round_ in range(12):
            first = _post(httpx, server.url, 1)
            accept = {"ask-0": {"action": "accept", "content": {"people": round_ + 1}}}
            second = _post(
                httpx, server.url, 2, inputResponses=accept, requestState=first["requestState"]
            )
            assert list(second["inputRequests"]) == ["ask-1"], second
    finally:
        server.stop()
        server.log.close()


def _post(httpx: Any, url: str, request_id: int, status: int = 200, **params: Any) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "book", "arguments": {"place": "p"}, **params, "_meta": MODERN_META},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "book",
    }
    reply = httpx.post(url, json=body, headers=headers, timeout=30)
    assert reply.status_code == status, reply.text
    answer = reply.json()
    return answer["result"] if "result" in answer else answer["error"]


# -- mcpgen test ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["--impl", "stdio"])
def test_mcpgen_test_runs_asking_tools(package: tuple[Path, Path], target: str) -> None:
    """``mcpgen test`` declares no elicitation, so an asking tool takes its declined
    path: the run calls it like any other tool and finds nothing."""
    import os
    import subprocess

    gen, impl = package
    spec = gen.parent / "spec_asker_mcp" / "tools.yaml"
    how = ["--impl", "asker_impl:Impl"] if target == "--impl" else ["--", *command(package)]
    run = subprocess.run(
        [str(Path(sys.executable).parent / "mcpgen"), "test", str(spec), "--tool", "book",
         "--tool", "book_async", "--examples", "5", "--seed", "1", *how],
        check=False, capture_output=True, text=True, timeout=120, cwd=impl,
        env={**os.environ, "PYTHONPATH": f"{gen}:{impl}"},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 finding(s)" in run.stdout
