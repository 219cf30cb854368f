"""The imports of each generated module, from what its code uses.

server.py imports the types its handler signatures name; client.py those of its
method signatures, its output models (at run time: results are built into them) and
only the runtime names its methods call (``cast`` and ``convert_result`` only where a
tool returns a plain value; task handles only where a tool may run as a task). Names
come from the signatures' ``Annotation`` objects (``signatures``), printed in isort's
order by ``imports.Imports``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcpgen_runtime.protocol.structured import needs_wrapper

from .imports import Imports
from .signatures import Annotation, ToolView
from .typesource import HELPERS

__all__ = ["file_imports"]

# What __init__.py re-exports from the runtime (under TYPE_CHECKING; loaded on first use).
PACKAGE_RUNTIME_NAMES = (
    "UNSET", "Accepted", "AuthRequired", "ConnectionFailed", "Context", "ContractMismatch",
    "Declined", "Dismissed", "EndpointNotFound", "HttpStatusError", "NotAnMcpEndpoint",
    "ProtocolError", "ResultMismatch", "ServerExited", "Timeout", "ToolError", "Unset",
)  # fmt: skip

CLIENT_RUNTIME_NAMES = (
    "DEFAULT_MAX_MESSAGE_BYTES", "UNSET", "AsyncInputCallback", "AsyncProgressCallback",
    "AsyncSession", "HttpAuth", "InputCallback", "ListedTool", "ProgressCallback",
    "ProtocolChoice", "ResultConverter", "Session", "Unset", "serve_streams",
)  # fmt: skip
TASK_NAMES = ("AsyncTaskHandle", "TaskHandle", "TaskStatus")


def _uses(imports: Imports, annotations: Iterable[Annotation], models: Imports | None) -> None:
    """Add the helpers ``annotations`` name to ``imports`` and their models.py types to
    ``models`` (the ``if TYPE_CHECKING:`` block)."""
    for annotation in annotations:
        for name in annotation.helpers:
            imports.add(HELPERS[name], name)
        if models is not None:
            for name in annotation.models:
                models.add(".models", name)


def _renamed(block: Imports, renames: Mapping[str, str]) -> Imports:
    """``block`` with each models.py type imported under its local name (``X as X_``)."""
    originals = {local: name for name, local in renames.items()}
    out = Imports(set(block.modules))
    for module, entries in block.names.items():
        for name, _ in entries:
            out.add_as(module, originals.get(name, name), name)
    return out


def file_imports(
    tools: list[ToolView], runtime: str, renames: Mapping[str, str], prefix: str
) -> dict[str, Imports]:
    """Each module's imports by key: ``package``, ``package_types``, ``main``,
    ``server``, ``server_types``, ``client``, ``client_types`` (``_types``: the
    ``if TYPE_CHECKING:`` block)."""
    future = ("__future__", "annotations")
    package = Imports().add(*future).add("importlib").add("typing", "TYPE_CHECKING", "Any")
    package_types = Imports().add(runtime, *PACKAGE_RUNTIME_NAMES)
    package_types.add(".client", f"Async{prefix}Client", f"{prefix}Client")
    package_types.add(".server", f"{prefix}Server", "serve")
    main = Imports().add(*future).add("sys").add(runtime, "main").add(".", "contract")
    main.add(".server", f"{prefix}Server", "build_app")

    server = Imports().add(*future).add("abc").add(runtime, "App", "Binding", "run_stdio")
    server.add(".", "contract")
    server_types = Imports()
    _uses(server, (a for t in tools for a in t.handler.annotations()), server_types)
    if server_types:
        server.add("typing", "TYPE_CHECKING")

    client = Imports().add(*future).add("os").add("collections.abc", "Mapping", "Sequence")
    client.add("typing", "Any", "Literal").add(runtime, *CLIENT_RUNTIME_NAMES)
    client.add(".", "contract").add(".server", f"{prefix}Server", "build_app")
    if any(t.tool.callback != "structured" for t in tools):
        client.add("typing", "cast").add(runtime, "convert_result")
    if any(t.tool.task_support != "forbidden" for t in tools):
        client.add(runtime, *TASK_NAMES)
    outputs = [f"{t.tool.class_name}Output" for t in tools if t.tool.callback == "structured"]
    if outputs:
        client.add(".models", *outputs)
    if any(t.tool.callback == "structured" and needs_wrapper(t.tool.output_schema) for t in tools):
        client.add(runtime, "StructuredValue")
    client_types = Imports()
    _uses(client, (a for t in tools for a in t.client.annotations()), client_types)
    for names in client_types.names.values():
        names -= {(name, None) for name in outputs}
    client_types.names = {m: names for m, names in client_types.names.items() if names}
    if client_types:
        client.add("typing", "TYPE_CHECKING")
    return {
        "package": package,
        "package_types": package_types,
        "main": main,
        "server": server,
        "server_types": _renamed(server_types, renames),
        "client": client,
        "client_types": _renamed(client_types, renames),
    }
