"""The project ``mcpgen init`` scaffolds: spec, implementation, test, configuration.

Every file is a template over three names derived from the project: the server
name (``notes``), the package (``notes_mcp``) and the class prefix (``Notes``).
The generated package goes beside the spec (its default ``./<package>``), so
``python -m notes_mcp`` works from the project folder without PYTHONPATH: ``-m``
puts the working folder first on ``sys.path``, where both the package and the
implementation module live.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .names import class_name, shadowed_module

__all__ = ["SCHEMA_PATH", "Scaffold", "scaffold", "server_name_for"]

# Where init writes the spec-format schema (committed, so a fresh clone's editor finds it).
SCHEMA_PATH = ".mcpgen/mcpgen-1.schema.json"

_SPEC = """\
# yaml-language-server: $schema={schema_path}
# The tool contract of {name}. After an edit: mcpgen build   (settings: [tool.mcpgen] in pyproject.toml)
mcpgen: 1                      # format version
package: {package}             # import name of the generated package, written to ./{package}
server:
  name: {name}                 # serverInfo.name; also names the classes ({prefix}Server, {prefix}Client)
  version: 0.1.0
  instructions: Greets people and adds numbers.
  implementation: {module}:{prefix}   # the class `python -m {package}` serves
{registry_lines}
tools:
  - name: greet                # wire name: 1-128 characters of A-Z a-z 0-9 _ - .
    description: Say hello to someone.
    parameters:                # declaration order is the positional order
      - {{name: who, type: string, description: Who to greet}}
      - {{name: excited, type: boolean, default: false}}   # a default makes it optional
    callback: positional       # greet(who, excited): an absent `excited` arrives as false
    returns: string            # string | integer | number | boolean | object | array | content
    hints: {{read_only: true}}

  - name: add
    description: Add two integers.
    parameters:
      - {{name: a, type: integer}}
      - {{name: b, type: integer}}
    callback: structured       # add(args) gets the arguments as a dict, returns the output model
    output_schema:             # a structured result, validated before it is sent
      type: object
      properties: {{sum: {{type: integer}}}}
      required: [sum]
"""

_IMPL = '''\
"""The implementation of the {name} tools: fill in each method of {prefix}Server."""

from __future__ import annotations

from {package} import {prefix}Server
from {package}.models import AddArgs, AddOutput


class {prefix}({prefix}Server):
    def greet(self, who: str, excited: bool) -> str:
        return f"Hello, {{who}}{{'!' if excited else '.'}}"

    def add(self, args: AddArgs) -> AddOutput:
        return AddOutput(sum=args["a"] + args["b"])
'''

_TEST = '''\
"""The tools through the generated client, in memory (no subprocess), and the
implementation checked against the whole contract (mcpgen test, in process)."""

from __future__ import annotations

from pathlib import Path

from mcpgen.testing import assert_contract

from {package} import {prefix}Client
from {module} import {prefix}

SPEC = Path(__file__).resolve().parent.parent / "tools.yaml"


def test_greet_and_add() -> None:
    with {prefix}Client.in_memory({prefix}()) as client:
        assert client.greet("Ada") == "Hello, Ada."
        assert client.greet("Ada", excited=True) == "Hello, Ada!"
        assert client.add(2, 3).sum == 5


def test_contract() -> None:
    # generated arguments (boundary, random, invalid) against {prefix}; fails with
    # the findings and a `mcpgen test ... --replay` line for each
    assert_contract(SPEC, {prefix}, examples=25, seed=0)
'''

_PYPROJECT_TABLE = """\
[tool.mcpgen]
# `mcpgen build`, `build --check`, `validate` and `diff` with no arguments use these specs.
specs = ["tools.yaml"]
"""

_CONFTEST = '''\
"""Lets pytest import the generated package and the implementation from this folder."""
'''

_PRE_COMMIT = """\
# pre-commit (https://pre-commit.com): `pre-commit install`, then every commit checks that the
# generated package matches tools.yaml (also after a hand edit of a generated file).
repos:
  - repo: local
    hooks:
      - id: mcpgen-check
        name: mcpgen build --check
        entry: mcpgen build --check
        language: system
        pass_filenames: false
        always_run: true
"""

# The MCP Registry keys: commented out until a registry name is chosen (init --registry-name).
_REGISTRY_COMMENTED = """\
  # registry_name: io.github.your-name/{name}   # the MCP Registry name (mcpgen build --emit server.json)
  # description: Greets people and adds numbers.
"""
_REGISTRY = """\
  registry_name: {registry_name}   # the MCP Registry name (mcpgen build --emit server.json)
  description: Greets people and adds numbers.   # server.json's one line, at most 100 characters
"""

_DOCKERFILE = """\
# The {name} server over Streamable HTTP in a container (mcpgen init --dockerfile).
#   mcpgen build && docker build -t {name}-mcp . && docker run --rm -p 8000:8000 {name}-mcp
# The image holds the built package ({package}/, from `mcpgen build`) and the implementation
# ({module}.py); add the implementation's own requirements to the pip install line.
FROM python:3.12-slim

# The MCP Registry matches an image to its server.json entry by this label: keep it equal
# to server.registry_name in tools.yaml (`mcpgen build --emit server.json` warns otherwise).
LABEL io.modelcontextprotocol.server.name="{registry_name}"

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN pip install --no-cache-dir "{requirement}"

# Not root: a user of its own, owning nothing the server could overwrite.
RUN useradd --create-home --uid 10001 --user-group mcp
WORKDIR /app
COPY {package}/ {package}/
COPY {module}.py ./
USER 10001:10001
EXPOSE 8000

# The server's liveness route: GET /healthz answers 200 while it serves (GET /readyz also
# says whether the task store answers: a probe for a load balancer, not for a restart).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \\
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=3)"]

# 0.0.0.0: reachable through the container's port. Browser pages from other origins need
# --allowed-origin, a public host name --allowed-host (README, Serving over Streamable HTTP);
# several workers sharing tasks need --task-store redis://... (or MCPGEN_TASK_STORE).
CMD ["python", "-m", "{package}", "--transport", "http", "--host", "0.0.0.0", "--port", "8000"]
"""

GITIGNORE_LINES = ("__pycache__/", ".venv/", ".pytest_cache/", ".mypy_cache/")


@dataclass(frozen=True)
class Scaffold:
    files: dict[str, str]  # relative path -> text (written only where nothing exists)
    pyproject_table: str  # appended to an existing pyproject.toml, else its whole content
    gitignore_lines: tuple[str, ...]
    package: str


def server_name_for(folder_name: str) -> str:
    """A server name from a folder name: lower case, runs of other characters as '_'."""
    name = re.sub(r"[^a-z0-9]+", "_", folder_name.lower()).strip("_")
    if not name or not name[0].isalpha():
        name = f"tools_{name}".rstrip("_") if name else "hello"
    return name


def scaffold(
    name: str,
    schema_text: str,
    *,
    registry_name: str | None = None,
    dockerfile_requirement: str | None = None,
) -> Scaffold:
    """The files of a new project; a ``Dockerfile`` too when ``dockerfile_requirement``
    (the runtime requirement its image installs) is given."""
    package = f"{name}_mcp"
    if shadowed_module(package):
        package = f"{name}_tools_mcp"
    prefix = class_name(name)
    module = f"{name}_impl"
    values = {
        "name": name,
        "package": package,
        "prefix": prefix,
        "module": module,
        "schema_path": SCHEMA_PATH,
        "registry_name": registry_name or f"io.github.your-name/{name}",
        "requirement": dockerfile_requirement or "",
    }
    registry = _REGISTRY if registry_name else _REGISTRY_COMMENTED
    values["registry_lines"] = registry.format(**values)
    files = {
        "tools.yaml": _SPEC.format(**values),
        f"{module}.py": _IMPL.format(**values),
        f"tests/test_{name}.py": _TEST.format(**values),
        "conftest.py": _CONFTEST,
        ".pre-commit-config.yaml": _PRE_COMMIT,
        SCHEMA_PATH: schema_text,
    }
    if dockerfile_requirement is not None:
        files["Dockerfile"] = _DOCKERFILE.format(**values)
    return Scaffold(files, _PYPROJECT_TABLE, GITIGNORE_LINES, package)
