"""The runtime's layout rules: protocol constants in one module, the import rules
(tests/runtime/import_rules.py) hold, and they catch each kind of violation."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
from import_rules import (
    PRIVATE_IMPORT_EXCEPTIONS,
    PRIVATE_READ_EXCEPTIONS,
    SHELL_EXCEPTIONS,
    load,
    loads,
    violations,
)

import mcpgen_runtime

RUNTIME = Path(mcpgen_runtime.__file__).parent
MODULES = load(RUNTIME)


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            ids.add(id(body[0].value))
    return ids


def test_protocol_constants_live_in_one_module() -> None:
    """`_meta` keys, extension names and reserved error codes are written only in
    protocol.constants; everywhere else uses its names."""
    found = []
    for name, tree in MODULES.items():
        if name == "protocol.constants":
            continue
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and (node.value.startswith("io.modelcontextprotocol/"))
            ):
                found.append(f"{name}:{node.lineno}: {node.value!r}")
            if (
                isinstance(node, ast.UnaryOp)
                and isinstance(node.op, ast.USub)
                and isinstance(node.operand, ast.Constant)
                and isinstance(node.operand.value, int)
                and 31000 <= node.operand.value <= 32768
            ):
                found.append(f"{name}:{node.lineno}: -{node.operand.value}")
    assert found == []


def test_the_runtime_keeps_its_import_rules() -> None:
    assert violations(MODULES) == []
    # every subpackage is a part the rules know, and the rules see them all
    assert {name.split(".")[0] for name in MODULES if "." in name} == {
        "auth",
        "client",
        "contract",
        "http",
        "protocol",
        "ratelimit",
        "schema",
        "server",
        "tasks",
        "telemetry",
        "transport",
    }


def _fake(**sources: str) -> dict[str, ast.Module]:
    """A synthetic runtime: dotted module name -> source."""
    return {name: ast.parse(textwrap.dedent(text)) for name, text in sources.items()}


BROKEN = {
    "a cycle through TYPE_CHECKING": (
        _fake(
            **{
                "client.a": "from .b import x\n",
                "client.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from .a import y\n",
            }
        ),
        "cycle: client.a -> client.b -> client.a",
    ),
    "a cycle through a by-name import": (
        _fake(
            **{
                "tasks.store": "import importlib\n"
                "def f():\n    importlib.import_module('.redis_store', __package__)\n",
                "tasks.redis_store": "from .store import x\n",
            }
        ),
        "cycle: tasks.redis_store -> tasks.store -> tasks.redis_store",
    ),
    "the token checks importing the HTTP shell": (
        _fake(
            **{
                "auth.jwt": "from ..http.verifiers import fetch_json\n",
                "http.verifiers": "x = 1\n",
            }
        ),
        "auth may not import http",
    ),
    "the client importing the token checks": (
        _fake(**{"client.sync": "from ..auth.tokens import AuthInfo\n", "auth.tokens": "x = 1\n"}),
        "client may not import auth",
    ),
    "the client importing the server": (
        _fake(
            **{"client.core": "def f():\n    from ..server.tools import App\n", "server.tools": ""}
        ),
        "client may not import server",
    ),
    "the client importing HTTP": (
        _fake(**{"client.core": "from ..http import config\n", "http": "", "http.config": ""}),
        "client may not import http",
    ),
    "the server importing the client": (
        _fake(**{"server.core": "from ..client import Session\n", "client": ""}),
        "server may not import client",
    ),
    "the schema importing a part above it": (
        _fake(**{"schema.validator": "from ..contract.rules import Rule\n", "contract.rules": ""}),
        "schema may not import contract",
    ),
    "the SDK at module level outside http": (
        _fake(**{"server.core": "import uvicorn\n"}),
        "only http imports the SDK/ASGI stack at module level",
    ),
    "redis outside tasks": (
        _fake(**{"http.server": "def f():\n    from redis.asyncio import Redis\n"}),
        "only tasks imports redis",
    ),
    "a cycle through a parent package's __init__": (
        _fake(
            **{
                "client": "from .sync import Session\n",
                "client.sync": "from ..transport.lines import Transport\n",
                "transport": "from ..client.sync import Session\n",
                "transport.lines": "",
            }
        ),
        "cycle: client.sync -> transport -> client.sync",
    ),
    "a module in no known part": (
        _fake(**{"misc.helpers": ""}),
        "misc.helpers is in no part the rules know",
    ),
    "the HTTP shell setting the core's era": (
        _fake(**{"http.exchange": "def f(conn):\n    conn.era = 'legacy'\n"}),
        "http.exchange:2 sets conn.era",
    ),
    "the HTTP shell reading a private attribute of the core": (
        _fake(**{"http.task_layer": "def f(conn, r):\n    return conn._task_mode(r)\n"}),
        "http.task_layer:2 reads conn._task_mode",
    ),
    "the HTTP shell importing a private name of the server": (
        _fake(**{"http.exchange": "from ..server.core import _Handler\n", "server.core": ""}),
        "http.exchange:1 imports _Handler from server.core",
    ),
    "a module importing an underscore name of its sibling": (
        _fake(**{"schema.validator": "from .values import _short\n", "schema.values": ""}),
        "schema.validator:1 imports the private _short from schema.values",
    ),
    "an absolute import of an underscore name, inside a function": (
        _fake(
            **{
                "client.flows": "def f():\n    from mcpgen_runtime.client.sync import _State\n",
                "client.sync": "",
            }
        ),
        "client.flows:2 imports the private _State from client.sync",
    ),
    "a flow reading a private attribute of the session": (
        _fake(
            **{
                "client.flows": "def f(session):\n    return session._core\n",
                "client.base": "class S:\n    def __init__(self):\n        self._core = 1\n",
            }
        ),
        "client.flows:2 reads session._core",
    ),
    "a private attribute of a module's own class read through a non-self name, by another module": (
        _fake(
            **{
                "client.sync": "def f(handle):\n    return handle._session._task_status\n",
            }
        ),
        "client.sync:2 reads handle._session",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_import_rules_catch_each_violation(case: str) -> None:
    modules, expected = BROKEN[case]
    found = violations(modules)
    assert any(expected in line for line in found), found


def test_the_import_rules_allow_what_the_layout_allows() -> None:
    allowed = _fake(
        **{
            "http.server": "import uvicorn\nfrom ..server.tools import App\n",
            "server.tools": "def f():\n    import mcp_types\n",
            "tasks.factory": "def f():\n    import importlib\n    importlib.import_module('.redis_store', __package__)\n",
            "tasks.redis_store": "import redis\n",
            "_main": "HTTP = '.http.server'\n",
            # the shell's own state, a public name of a sibling, a private submodule
            "http.guard": "class G:\n    def f(self):\n        self._x = self.y = 1\n",
            "http.guard_fast": "from .guard import Deadlines\n",
            "client.sync": "from .. import _version\n",
            "_version": "",
            # a class reaching into another of its own module, through super() too
            "client.aio": (
                "class S:\n    def _status(self):\n        return 1\n"
                "class H:\n    def __init__(self, s):\n        self._session = s\n"
                "    def status(self):\n        return self._session._status()\n"
                "class T(S):\n    def _status(self):\n        return super()._status()\n"
            ),
        }
    )
    assert violations(allowed) == []


def _used_and_explained(exceptions: Mapping[str, str], found: set[str]) -> None:
    """Every exception is one the code still makes, and gives its reason."""
    assert set(exceptions) <= found
    assert all(len(reason) > 40 for reason in exceptions.values())


def test_every_exception_of_the_shell_rule_is_used_and_explained() -> None:
    """An exception to the shell rule names something the shell still does, and why."""
    found = {
        f"{name}: {expression}"
        for name, tree in MODULES.items()
        if name.startswith("http.")
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        for expression in [ast.unparse(node)]
    }
    _used_and_explained(SHELL_EXCEPTIONS, found)


def test_every_exception_of_the_private_import_rule_is_used_and_explained() -> None:
    """An allowed ``from x import _name`` is one a module still makes, and says why."""
    found = {
        f"{name}: {alias.name}"
        for name, tree in MODULES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    _used_and_explained(PRIVATE_IMPORT_EXCEPTIONS, found)


def test_every_exception_of_the_private_read_rule_is_used_and_explained() -> None:
    """An allowed ``obj._name`` is one a module still reads, and says why."""
    found = {
        f"{name}: {ast.unparse(node)}"
        for name, tree in MODULES.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
    }
    _used_and_explained(PRIVATE_READ_EXCEPTIONS, found)


def test_the_runtime_explains_itself() -> None:
    """Comments and messages state facts, not sections of documents outside the
    repository, and point users of the runtime at the runtime's own extra."""
    root = RUNTIME.parent.parent
    sources = [
        *RUNTIME.rglob("*.py"),
        *(root / "mcpgen").rglob("*.py"),
        *(p for p in (root / "templates").rglob("*") if p.is_file()),
    ]
    # the two outside documents' citation forms, spelled in pieces so that this file
    # does not cite them itself
    outside = ("DESIGN" + " §", "PROTOCOL" + ".md")
    cited = [f"{p.name}: {word}" for p in sources for word in outside if word in p.read_text()]
    assert cited == []
    # the runtime's extras are mcpgen-runtime's ([http], [redis]), not the generator's
    assert not [p.name for p in RUNTIME.rglob("*.py") if "'mcpgen[" in p.read_text()]


def test_importing_a_module_loads_only_what_it_needs() -> None:
    """The subpackages' ``__init__`` files import nothing, so a module loads its
    own imports and no sibling: the generator's validator and compatibility rules
    load no client, server or transport, the client no server."""
    assert [
        name
        for name in MODULES
        if name.count(".") == 0
        and any(other.startswith(name + ".") for other in MODULES)
        and MODULES[name].body[1:]
    ] == []
    for name in ("schema.validator", "contract.compare", "client.core", "client.flows"):
        parts = {m.split(".")[0] for m in loads(name, MODULES) if m in MODULES}
        assert not parts & {"server", "http", "transport"} - {name.split(".")[0]}, name
    assert "transport.aio" not in loads("client.sync", MODULES)
    # the same facts seen from the module loader, not the source
    probe = (
        "import sys, mcpgen_runtime.client.flows, mcpgen_runtime.contract.compare\n"
        "print(sorted(m for m in sys.modules if m.startswith('mcpgen_runtime.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert "transport" not in loaded and "client.sync" not in loaded and "server" not in loaded


def test_serving_http_loads_pyjwt_only_when_tokens_are_checked() -> None:
    """PyJWT is the auth extra's: a server with the http extra alone imports its app
    (and the authorization gate) without it; only the JWT verifier loads it."""
    for name in ("http.app", "http.server", "http.oauth", "http.exchange"):
        assert "jwt" not in loads(name, MODULES), name
    assert "jwt" in loads("http.verifiers", MODULES)
    probe = (
        "import sys, mcpgen_runtime.http.app, mcpgen_runtime.http.server\n"
        "print('jwt' in sys.modules, 'cryptography' in sys.modules)"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert loaded.split() == ["False", "False"]


SANS_IO = (
    "client.core",
    "client.negotiate",
    "client.effects",
    "client.flows",
    "server.core",
    "ratelimit.bucket",
    # the token checks: the HTTP shell (http.verifiers) fetches keys and owns the clock
    "auth.tokens",
    "auth.scopes",
    "auth.challenge",
    "auth.jwt",
)
IO_MODULES = frozenset({"asyncio", "time", "threading", "socket", "subprocess", "select", "signal"})


def test_the_sans_io_cores_do_no_io() -> None:
    """The protocol cores import no clock, loop, thread or socket (the drivers do the
    I/O and answer ``Now`` with the time), and the client flows set no session
    attribute (they return what they learned; the session records it)."""
    found = []
    for name in SANS_IO:
        for node in ast.walk(MODULES[name]):
            if isinstance(node, ast.Import):
                found += [
                    f"{name}: import {a.name}"
                    for a in node.names
                    if a.name.split(".")[0] in IO_MODULES
                ]
            elif (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and node.module
                and node.module.split(".")[0] in IO_MODULES
            ):
                found.append(f"{name}: from {node.module}")
    for node in ast.walk(MODULES["client.flows"]):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        )
        for target in targets:
            if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "session":
                found.append(f"client.flows:{node.lineno}: sets session.{target.attr}")
    assert found == []
