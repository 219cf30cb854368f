"""The uvicorn internals the connection guards rely on (``http.guard``,
``http.guard_fast``): the guards use none but those named in
``guard.UVICORN_INTERNALS``, the installed uvicorn has every one of them, and its
minor version is one the guard tests were run against (``UVICORN_VERIFIED``). And the
SIGTERM handling the drain relies on (``http.drain``, ``http.server``): uvicorn's
``Server.handle_exit`` is the SIGTERM handler when the lifespan starts, calling it
shuts the server down, and the signal is then raised again into the handler uvicorn
found.

Installing each supported uvicorn into a throwaway environment is too slow for the
suite; instead the verified minors are listed, and a new uvicorn (a bumped
constraint) fails here until the guard tests have been run against it and it is
added to the list.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest
from private_reads import class_body_names

pytest.importorskip("uvicorn")
pytest.importorskip("h11")

import h11
import uvicorn
from uvicorn.config import Config
from uvicorn.protocols.http import h11_impl
from uvicorn.server import ServerState

from mcpgen_runtime.http import guard

GUARDS = Path(guard.__file__).parent
# The guards' own classes: what they define is theirs, not uvicorn's.
OWN_CLASSES = ("Deadlines", "GuardedH11Protocol", "GuardedHttpToolsProtocol")
HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n"


def _trees() -> dict[str, ast.Module]:
    return {
        name: ast.parse((GUARDS / f"{name}.py").read_text(encoding="utf-8"))
        for name in ("guard", "guard_fast")
    }


def _own_names(trees: dict[str, ast.Module]) -> set[str]:
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in OWN_CLASSES:
                names |= class_body_names(node)
    return names


def _used(trees: dict[str, ast.Module]) -> tuple[set[str], set[str], set[str]]:
    """What the guard classes use of their protocol (``self.x``), of the methods they
    extend (``super().x``) and of a request's cycle (``cycle.x``, ``self.cycle.x``)."""
    on_self: set[str] = set()
    extended: set[str] = set()
    on_cycle: set[str] = set()
    for tree in trees.values():
        for cls in ast.walk(tree):
            if not (isinstance(cls, ast.ClassDef) and cls.name in OWN_CLASSES):
                continue
            for node in ast.walk(cls):
                if not isinstance(node, ast.Attribute):
                    continue
                value = node.value
                if isinstance(value, ast.Name) and value.id == "self":
                    on_self.add(node.attr)
                elif isinstance(value, ast.Call) and ast.unparse(value.func) == "super":
                    extended.add(node.attr)
                elif ast.unparse(value) in ("cycle", "self.cycle"):
                    on_cycle.add(node.attr)
    return on_self, extended, on_cycle


def test_the_guards_use_only_the_declared_uvicorn_internals() -> None:
    trees = _trees()
    own = _own_names(trees)
    on_self, extended, on_cycle = _used(trees)
    declared = set(guard.UVICORN_INTERNALS["H11Protocol"]) | set(
        guard.UVICORN_INTERNALS["HttpToolsProtocol"]
    )
    assert (on_self - own) <= declared, sorted(on_self - own - declared)
    assert extended <= declared, sorted(extended - declared)
    assert on_cycle <= set(guard.UVICORN_INTERNALS["RequestResponseCycle"]), sorted(on_cycle)


class _Transport(asyncio.Transport):
    """Enough of a socket transport for a uvicorn protocol to take a request head."""

    def __init__(self) -> None:
        super().__init__()
        self.closing = False
        self.written = b""

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: Any) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await receive()


def _protocol(cls: type) -> Any:
    """A uvicorn protocol as its server builds one (``app_state`` since uvicorn 0.3x)."""
    config = Config(app=_app, log_level="critical", lifespan="off")
    config.load()
    kwargs: dict[str, Any] = {"config": config, "server_state": ServerState()}
    if "app_state" in inspect.signature(cls.__init__).parameters:
        kwargs["app_state"] = {}
    return cls(**kwargs)


def _check(cls: type, attributes: tuple[str, ...]) -> list[str]:
    """The declared names that an instance of ``cls``, with a request head in, lacks."""

    async def drive() -> list[str]:
        protocol = _protocol(cls)
        protocol.connection_made(_Transport())
        protocol.data_received(HEAD)
        missing = [name for name in attributes if not hasattr(protocol, name)]
        cycle = getattr(protocol, "cycle", None)
        missing += [
            f"cycle.{name}"
            for name in guard.UVICORN_INTERNALS["RequestResponseCycle"]
            if not hasattr(cycle, name)
        ]
        conn = getattr(protocol, "conn", None)
        if cls is h11_impl.H11Protocol and type(conn) is not h11.Connection:
            missing.append("conn: an h11.Connection (guard._StrictConnection swaps its class)")
        protocol.connection_lost(None)
        await asyncio.sleep(0)
        return missing

    return asyncio.run(drive())


def test_the_installed_uvicorn_has_what_the_h11_guard_uses() -> None:
    assert _check(h11_impl.H11Protocol, guard.UVICORN_INTERNALS["H11Protocol"]) == []


def test_the_installed_uvicorn_has_what_the_httptools_guard_uses() -> None:
    pytest.importorskip("httptools")
    from uvicorn.protocols.http import httptools_impl

    names = guard.UVICORN_INTERNALS["HttpToolsProtocol"]
    assert _check(httptools_impl.HttpToolsProtocol, names) == []


def test_the_installed_uvicorn_minor_was_verified() -> None:
    minor = ".".join(uvicorn.__version__.split(".")[:2])
    assert minor in guard.UVICORN_VERIFIED, (
        f"uvicorn {uvicorn.__version__}: run tests/runtime/http/test_http_guard.py, "
        "test_http_hardening.py, test_http_trailers.py and this file against it, then "
        "add it to http.guard.UVICORN_VERIFIED"
    )
    supported = [tuple(int(p) for p in v.split(".")) for v in guard.UVICORN_VERIFIED]
    assert all((0, 30) <= version < (1, 0) for version in supported)


def test_the_installed_uvicorn_runs_workers_as_http_server_calls_it() -> None:
    """``serve_http --workers`` builds uvicorn's ``Multiprocess`` with the config and
    its sockets, and (uvicorn before 0.51) what each worker runs."""
    from uvicorn.supervisors import Multiprocess

    names = set(inspect.signature(Multiprocess).parameters)
    assert {"config", "sockets"} <= names <= {"config", "sockets", "target"}


def test_uvicorn_handles_sigterm_as_the_drain_expects() -> None:
    """``http.drain`` finds ``Server.handle_exit`` on SIGTERM at the lifespan's start
    and calls it once drained; ``http.server`` catches the signal uvicorn raises again."""
    import signal

    assert all(hasattr(uvicorn.Server, name) for name in guard.UVICORN_INTERNALS["Server"])
    found: list[Any] = []
    raised_again: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                found.append(signal.getsignal(signal.SIGTERM))
                await send({"type": "lifespan.startup.complete"})
                found[0](signal.SIGTERM, None)  # what Drain._hand_over does
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return

    server = uvicorn.Server(
        Config(app=app, host="127.0.0.1", port=0, lifespan="on", log_level="critical")
    )
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: raised_again.append(signum))
    try:
        server.run()  # returns: handle_exit shut it down
    finally:
        signal.signal(signal.SIGTERM, previous)
    handler = found[0]
    assert getattr(handler, "__self__", None) is server and handler.__name__ == "handle_exit"
    assert server.should_exit and raised_again == [signal.SIGTERM]
