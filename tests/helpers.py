"""Shared helpers for the tests of generated packages.

- ``build_package``: write an inline spec, build it with ``mcpgen.build``, return
  the directory to put on ``sys.path``.
- ``import_package``: import a generated package for one test, then forget it.
- ``RawServer``: a tiny raw stdio driver for ``python -m <package>`` (bytes in,
  JSON-RPC frames out, never hangs: a reader thread feeds a queue).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Self

from mcpgen.build import build_spec

__all__ = [
    "ALL_VERSIONS",
    "RawServer",
    "build_package",
    "import_package",
    "initialize_request",
    "mypy_strict",
]

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def mypy_strict(
    *targets: str | Path, cwd: Path, mypypath: Sequence[Path] = ()
) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` (no config file, no cache) on ``targets``, with ``mypypath``
    (default: ``cwd``) as the only place generated packages are found."""
    path = os.pathsep.join(str(p) for p in (mypypath or [cwd]))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--config-file",
            "/dev/null",
            "--python-version",
            "3.11",
            *map(str, targets),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"MYPYPATH": path, "PATH": "/usr/bin:/bin"},
    )


def build_package(spec_text: str, tmp_path: Path, package: str) -> Path:
    """Build ``spec_text`` (dedented) into ``tmp_path/gen/<package>``; return ``tmp_path/gen``."""
    spec_dir = tmp_path / f"spec_{package}"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = spec_dir / "tools.yaml"
    spec.write_text(textwrap.dedent(spec_text), encoding="utf-8")
    gen = tmp_path / "gen"
    result = build_spec(spec, output=gen / package)
    assert result.ok, f"build of {package} failed: {result.status} {result.message}\n" + "\n".join(
        str(d) for d in result.diagnostics
    )
    assert (gen / package / "__init__.py").is_file()
    return gen


@contextlib.contextmanager
def import_package(path: Path, package: str) -> Iterator[ModuleType]:
    """Import ``package`` from ``path``; afterwards drop it from sys.path and sys.modules."""
    entry = str(path)
    sys.path.insert(0, entry)
    importlib.invalidate_caches()
    try:
        yield importlib.import_module(package)
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]


def initialize_request(version: str, request_id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "mcpgen-tests", "version": "0"},
        },
    }


class RawServer:
    """``python -m <package> --impl mod:Class`` over raw pipes.

    ``send`` writes one frame (a dict is JSON-encoded, bytes go as they are);
    ``recv`` returns the next stdout frame parsed as JSON (or raises on timeout);
    ``close`` closes stdin, waits for the exit and asserts the exit code.
    """

    def __init__(
        self,
        package: str,
        impl: str | None,
        *,
        pythonpath: Sequence[Path | str],
        cwd: Path | str | None = None,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        command = [sys.executable, "-m", package]
        if impl is not None:
            command += ["--impl", impl]
        command += list(extra_args)
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
        full_env["PYTHONUNBUFFERED"] = "1"
        if env:
            full_env.update(env)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=full_env,
        )
        self.raw_lines: list[bytes] = []  # every stdout line, as received
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self._out_thread = threading.Thread(target=self._read_stdout, daemon=True)
        self._err_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self._out_thread.start()
        self._err_thread.start()
        self._next_id = 1000

    # -- reader threads -------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_lines.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    # -- protocol -------------------------------------------------------------

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv_raw(self, timeout: float = 10.0) -> bytes:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no frame from the server within {timeout} s; stderr:\n{self.stderr}"
            ) from None
        if line is None:
            self._lines.put(None)  # stay at EOF for later calls
            raise AssertionError(f"server closed stdout; stderr:\n{self.stderr}")
        return line

    def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        return json.loads(self.recv_raw(timeout))

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 10.0
    ) -> dict[str, Any]:
        """Send one request and return its response (nothing else may arrive in between)."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.recv(timeout)
        assert reply.get("id") == self._next_id, reply
        return reply

    def call(
        self, name: str, arguments: dict[str, Any], *, timeout: float = 10.0
    ) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)

    def handshake(self, version: str = "2025-11-25") -> dict[str, Any]:
        """initialize + notifications/initialized; returns the initialize result."""
        self.send(initialize_request(version, request_id=0))
        reply = self.recv()
        assert reply.get("id") == 0 and "result" in reply, reply
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply["result"]

    def no_more_frames(self, wait: float = 0.2) -> bool:
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            return True
        self._lines.put(line)
        return line is None

    # -- shutdown -------------------------------------------------------------

    def close(self, expect_code: int | None = 0, timeout: float = 10.0) -> int:
        """Close stdin, wait for the exit, assert its code (None: don't check)."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"server did not exit within {timeout} s of stdin EOF") from None
        self._join()
        if expect_code is not None:
            assert code == expect_code, f"exit code {code}; stderr:\n{self.stderr}"
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        self.proc.wait()
        self._join()

    def _join(self) -> None:
        self._out_thread.join(timeout=5)
        self._err_thread.join(timeout=5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None or self._out_thread.is_alive():
            if exc[0] is None:
                self.close()
            else:
                self.kill()
