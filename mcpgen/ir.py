"""The intermediate representation: a validated spec as frozen dataclasses.

Every default is resolved and every Python name decided here; nothing after
this step looks at raw YAML. Schemas are held as the exact JSON that will be
published (``$ref`` bundled under ``$defs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CALLBACKS",
    "RETURNS",
    "TASK_SUPPORT",
    "Callback",
    "Contract",
    "EnvironmentVariable",
    "Hints",
    "Icon",
    "Parameter",
    "Returns",
    "Server",
    "TaskSupport",
    "Tool",
]

Callback = Literal["positional", "named", "structured"]
Returns = Literal["string", "integer", "number", "boolean", "object", "array", "content", "result"]
TaskSupport = Literal["forbidden", "optional", "required"]

CALLBACKS: tuple[Callback, ...] = ("positional", "named", "structured")
RETURNS: tuple[Returns, ...] = (
    "string",
    "integer",
    "number",
    "boolean",
    "object",
    "array",
    "content",
    "result",
)
TASK_SUPPORT: tuple[TaskSupport, ...] = ("forbidden", "optional", "required")

JSON = Any  # a value json.loads could have produced


@dataclass(frozen=True)
class Icon:
    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] | None = None
    theme: str | None = None


@dataclass(frozen=True)
class Hints:
    """Behaviour hints; ``None`` means "not set in the spec, not published"."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


@dataclass(frozen=True)
class Parameter:
    name: str  # wire name
    py_name: str  # Python identifier in the positional shape
    schema: dict[str, JSON]  # published property schema (with description)
    required: bool
    has_default: bool
    default: JSON = None


@dataclass(frozen=True)
class Tool:
    name: str  # wire name
    py_name: str  # method name
    class_name: str  # PascalCase stem: GetForecast → GetForecastArgs / GetForecastOutput
    title: str | None
    description: str | None
    parameters: tuple[Parameter, ...]
    input_schema: dict[str, JSON]  # published inputSchema
    output_schema: dict[str, JSON] | None  # published outputSchema
    output_type_ref: str | None  # the `types` entry the output schema is a bare $ref to
    callback: Callback
    returns: Returns
    hints: Hints
    task_support: TaskSupport
    icons: tuple[Icon, ...]
    is_async: bool
    timeout: float | None
    meta: dict[str, JSON] | None
    line: int = 0
    # What `annotations.title` publishes: `title` unless the spec's `annotation_title`
    # says otherwise (a string, or false for none): a server may send one without the other.
    annotations_title: str | None = None
    # More `annotations` members (a server's own, such as `category`), published as given
    annotations: dict[str, JSON] | None = None
    # `task_support: forbidden` written out: published as `execution` (a server that
    # lists it explicitly is reproduced); left out, nothing is published.
    execution_explicit: bool = False
    # OAuth scopes a caller's token must hold (server.scopes first, then the tool's own),
    # published in _meta under io.mcpgen/scopes; () publishes nothing.
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class EnvironmentVariable:
    """An environment variable the implementation reads (``server.environment``)."""

    name: str
    description: str | None = None
    secret: bool = False
    required: bool = False
    default: str | None = None


@dataclass(frozen=True)
class Server:
    name: str
    version: str
    title: str | None
    instructions: str | None
    implementation: str | None
    class_prefix: str  # PascalCase of the server name: Weather → WeatherServer
    # What only server.json reads: the MCP Registry name, its one-line description
    # and the implementation's environment variables.
    registry_name: str | None = None
    description: str | None = None
    environment: tuple[EnvironmentVariable, ...] = ()


@dataclass(frozen=True)
class Contract:
    """One validated spec file: what the generator renders."""

    spec_path: str  # as given (relative paths stay relative)
    spec_name: str  # file name only, for headers
    spec_sha256: str
    package: str
    output: str  # output directory, relative to the spec's folder unless absolute
    server: Server
    types: dict[str, dict[str, JSON]]  # bundled `types` entries (also all file refs)
    tools: tuple[Tool, ...]
    inputs: tuple[str, ...] = field(default=())  # every file read (spec first), for the manifest
