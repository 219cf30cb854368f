"""One raw-pipe driver for every server: spawn, write newline-delimited JSON-RPC
on the child's stdin, read its stdout with plain ``os.read``. No MCP library on
this side, so every server pays the same client cost, and that cost is small.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["INITIALIZE", "INITIALIZED", "RawServer", "call_line"]

PROTOCOL_VERSION = "2025-11-25"
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcpgen-bench", "version": "1.0"},
            },
        },
        separators=(",", ":"),
    ).encode()
    + b"\n"
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def call_line(request_id: int, tool: str, arguments: Mapping[str, Any]) -> bytes:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": dict(arguments)},
    }
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


class ServerFailed(RuntimeError):
    pass


class RawServer:
    """A server child process and a line reader over its stdout pipe."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr_path: str | None = None,
    ) -> None:
        self.stderr_path = stderr_path
        stderr = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                bufsize=0,
            )
        finally:
            if stderr_path:
                stderr.close()  # type: ignore[union-attr]
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buf = bytearray()

    # -- bytes ---------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._in, view)
            view = view[written:]

    def readline(self) -> bytes:
        buf = self._buf
        while True:
            end = buf.find(b"\n")
            if end >= 0:
                line = bytes(buf[: end + 1])
                del buf[: end + 1]
                return line
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                raise ServerFailed(f"server closed stdout{self._stderr_tail()}")
            buf += chunk

    def response(self) -> dict[str, Any]:
        """The next line that is a response (notifications and logs are skipped)."""
        while True:
            message = json.loads(self.readline())
            if "id" in message and ("result" in message or "error" in message):
                return message

    # -- protocol --------------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        self.send(INITIALIZE)
        reply = self.response()
        if "result" not in reply:
            raise ServerFailed(f"initialize failed: {reply}")
        self.send(INITIALIZED)
        return reply["result"]

    def close(self, timeout: float = 10.0) -> float:
        """Close stdin and wait for the exit; returns the seconds it took."""
        started = time.perf_counter()
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        elapsed = time.perf_counter() - started
        self.proc.stdout.close()  # type: ignore[union-attr]
        return elapsed

    def _stderr_tail(self) -> str:
        if not self.stderr_path:
            return ""
        try:
            with open(self.stderr_path, "rb") as f:
                tail = f.read()[-2000:].decode(errors="replace")
        except OSError:
            return ""
        return f"; stderr tail:\n{tail}"

    # -- measurements ------------------------------------------------------------------

    def sequential(
        self, tool: str, arguments: Mapping[str, Any], n: int, first_id: int
    ) -> list[int]:
        """``n`` calls one after another; the round trip of each in nanoseconds.

        Lines are built before timing and checked after it, so the timed part is
        one ``os.write`` and the reads until the answer's newline.
        """
        lines = [call_line(first_id + i, tool, arguments) for i in range(n)]
        replies: list[bytes] = []
        times: list[int] = []
        clock = time.perf_counter_ns
        send, readline = self.send, self.readline
        for line in lines:
            started = clock()
            send(line)
            reply = readline()
            times.append(clock() - started)
            replies.append(reply)
        _check_replies(replies, first_id, n)
        return times

    def pipelined(
        self, tool: str, arguments: Mapping[str, Any], n: int, first_id: int, window: int
    ) -> float:
        """``n`` calls with ``window`` in flight at once; seconds for all of them."""
        lines = [call_line(first_id + i, tool, arguments) for i in range(n)]
        replies: list[bytes] = []
        started = time.perf_counter()
        self.send(b"".join(lines[:window]))
        sent = min(window, n)
        while len(replies) < n:
            replies.append(self.readline())
            if sent < n:
                self.send(lines[sent])
                sent += 1
        elapsed = time.perf_counter() - started
        _check_replies(replies, first_id, n, ordered=False)
        return elapsed


def _check_replies(replies: list[bytes], first_id: int, n: int, *, ordered: bool = True) -> None:
    """Every reply is a successful result for one of our ids (each exactly once)."""
    ids = []
    for raw in replies:
        message = json.loads(raw)
        result = message.get("result")
        if (
            not isinstance(result, dict)
            or result.get("isError")
            or "structuredContent" not in result
        ):
            raise ServerFailed(f"unexpected reply: {raw[:300]!r}")
        ids.append(message["id"])
    expected = list(range(first_id, first_id + n))
    if (ids if ordered else sorted(ids)) != expected:
        raise ServerFailed("replies do not match the requests one for one")
