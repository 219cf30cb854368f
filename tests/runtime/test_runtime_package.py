"""mcpgen-runtime as a distribution of its own: the public surface, the version check
generated code runs at import, one exception tree for every generated package, and
``--runtime vendored`` for packages that must carry their own copy."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from click.testing import CliRunner
from helpers import build_package, import_package

import mcpgen
import mcpgen_runtime
from mcpgen.build import build_spec
from mcpgen.cli import main
from mcpgen_runtime._version import requirement, runtime_can_run

ROOT = Path(__file__).resolve().parents[2]

SPEC_A = """\
mcpgen: 1
package: adder_mcp
server: {name: adder, version: 0.1.0}
tools:
  - name: add
    parameters: [{name: a, type: integer}, {name: b, type: integer}]
    returns: integer
"""

SPEC_B = """\
mcpgen: 1
package: greeter_mcp
server: {name: greeter, version: 0.1.0}
tools:
  - name: greet
    parameters: [{name: name, type: string}]
    returns: string
"""

# The public surface: what generated code imports and users may rely on. Adding a
# name is a minor change; removing or renaming one breaks packages generated before.
PUBLIC = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "AuthRequired",
    "Unauthorized",
    "Forbidden",
    "ClientCredentials",
    "AuthorizationCode",
    "HttpAuth",
    "AuthInfo",
    "InvalidToken",
    "TokenVerifier",
    "VerifierUnavailable",
    "ConnectionFailed",
    "EndpointNotFound",
    "HttpStatusError",
    "NotAnMcpEndpoint",
    "UNSET",
    "App",
    "Accepted",
    "Answer",
    "AsyncInputCallback",
    "Declined",
    "Dismissed",
    "InputCallback",
    "AsyncProgressCallback",
    "AsyncSession",
    "AsyncTaskHandle",
    "Binding",
    "Cancelled",
    "Context",
    "ContractMismatch",
    "ListedTool",
    "McpError",
    "ProgressCallback",
    "ProtocolChoice",
    "ProtocolError",
    "ResultConverter",
    "StructuredValue",
    "ResultMismatch",
    "ServerExited",
    "Session",
    "TaskHandle",
    "TaskStatus",
    "Timeout",
    "ToolError",
    "Unset",
    "__version__",
    "convert_result",
    "main",
    "requirement",
    "run_stdio",
    "serve_streams",
    "validate_runtime_version",
]


def test_public_surface_is_pinned() -> None:
    assert sorted(mcpgen_runtime.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(mcpgen_runtime, name) is not None, name


def test_versions_agree() -> None:
    """mcpgen depends on the runtime of its own version; both pyprojects say so."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = tomllib.loads((ROOT / "runtime" / "pyproject.toml").read_text())
    assert mcpgen.__version__ == mcpgen_runtime.__version__ == root["project"]["version"]
    assert runtime["project"]["name"] == "mcpgen-runtime"
    assert runtime["project"]["dependencies"] == [
        "pydantic>=2.14",
        "idna>=3.7",
        "opentelemetry-api>=1.27",
    ]
    # HTTP needs uvicorn (its C parser and loop where they build), never the mcp SDK
    http = runtime["project"]["optional-dependencies"]["http"]
    assert http == root["project"]["optional-dependencies"]["http"]
    assert http[0] == "uvicorn>=0.30,<1" and not any(dep.startswith("mcp") for dep in http)
    assert runtime["project"]["optional-dependencies"]["redis"] == ["redis>=5"]
    assert root["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]


@pytest.mark.parametrize(
    ("generated_by", "runtime", "ok"),
    [
        ("0.1.0", "0.1.0", True),
        ("0.1.0", "0.1.7", True),  # a newer runtime of the series runs older code
        ("0.1.5", "0.1.0", False),  # too old
        ("0.1.0", "0.2.0", False),  # 0.x: another minor is another series
        ("1.2.0", "1.9.3", True),
        ("1.2.0", "2.0.0", False),
        ("2.0.0", "1.9.0", False),
    ],
)
def test_which_runtime_runs_which_code(generated_by: str, runtime: str, ok: bool) -> None:
    assert runtime_can_run(generated_by, runtime) is ok


def test_requirement() -> None:
    assert requirement("0.1.0") == "mcpgen-runtime>=0.1.0,<0.2"
    assert requirement("1.4.2", "http") == "mcpgen-runtime[http]>=1.4.2,<2"


def test_build_reports_the_runtime_requirement(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(SPEC_A)
    result = CliRunner().invoke(main, ["build", str(spec)])
    assert result.exit_code == 0, result.output
    assert f"needs {requirement(mcpgen.__version__)}" in result.output
    assert build_spec(spec, runtime="vendored", force=True).requirement is None


def test_weather_package_holds_only_its_own_files(tmp_path: Path) -> None:
    result = build_spec(
        ROOT / "examples" / "weather" / "tools.yaml", output=tmp_path / "weather_mcp"
    )
    assert result.ok and result.output is not None
    files = sorted(p.name for p in result.output.iterdir())
    # no formatter cache: black's output for a unit is kept nowhere
    assert files == [
        ".mcpgen-manifest.json",
        "__init__.py",
        "__main__.py",
        "client.py",
        "contract.py",
        "models.py",
        "py.typed",
        "server.py",
    ]


def test_two_generated_packages_share_one_exception_tree(tmp_path: Path) -> None:
    gen_a = build_package(SPEC_A, tmp_path / "a", "adder_mcp")
    gen_b = build_package(SPEC_B, tmp_path / "b", "greeter_mcp")

    class Greeter:
        def greet(self, name: str) -> str:
            return f"hello {name}"

    with import_package(gen_a, "adder_mcp") as a, import_package(gen_b, "greeter_mcp") as b:
        for name in ("ToolError", "ContractMismatch", "ProtocolError", "Timeout", "ServerExited"):
            assert getattr(a, name) is getattr(b, name), name
        impl = type("Impl", (Greeter, b.GreeterServer), {})()
        app = b.server.build_app(impl)

        def serve(reader: BinaryIO, writer: BinaryIO) -> None:
            mcpgen_runtime.serve_streams(app, reader, writer)

        # adder's contract against greeter's server: the check on connect fails with
        # ContractMismatch, and greeter's `except` catches it.
        caught: Any = None
        try:
            with mcpgen_runtime.Session.in_memory(serve, contract=a.contract.TOOLS):
                pass
        except b.ContractMismatch as exc:
            caught = exc
        assert isinstance(caught, a.ContractMismatch)


def _run(code: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=path,
        env={**os.environ, "PYTHONPATH": str(path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_old_runtime_fails_at_import_with_both_versions_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Code from a newer mcpgen of the series (0.1.<n+5>) under the installed runtime.
    major, minor, patch = (int(p) for p in mcpgen_runtime.__version__.split("."))
    newer = f"{major}.{minor}.{patch + 5}"
    from mcpgen.render import package

    monkeypatch.setattr(package, "__version__", newer)
    gen = build_package(SPEC_A, tmp_path, "adder_mcp")
    proc = _run("import adder_mcp.client", gen)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        f"ImportError: adder_mcp was generated by mcpgen {newer} and cannot run on the installed "
        f"mcpgen-runtime {mcpgen_runtime.__version__} (it needs {requirement(newer)}); "
        f"upgrade the runtime: pip install '{requirement(newer)}'"
    ), proc.stderr


def test_a_missing_runtime_names_the_requirement(tmp_path: Path) -> None:
    gen = build_package(SPEC_A, tmp_path, "adder_mcp")
    proc = _run("import sys; sys.modules['mcpgen_runtime'] = None; import adder_mcp", gen)
    need = requirement(mcpgen.__version__)
    assert f"ImportError: adder_mcp needs {need}: pip install '{need}'" in proc.stderr


def test_vendored_package_runs_where_the_runtime_is_not_importable(tmp_path: Path) -> None:
    spec = tmp_path / "spec" / "tools.yaml"
    spec.parent.mkdir()
    spec.write_text(SPEC_A)
    gen = tmp_path / "gen"
    result = CliRunner().invoke(
        main, ["build", "--runtime", "vendored", "-o", str(gen / "adder_mcp"), str(spec)]
    )
    assert result.exit_code == 0, result.output
    assert "needs mcpgen-runtime" not in result.output
    assert (gen / "adder_mcp" / "_runtime" / "client" / "__init__.py").is_file()
    proc = _run(
        """
        import sys
        sys.modules["mcpgen_runtime"] = None  # any import of it now fails
        import adder_mcp
        from adder_mcp import AdderClient, AdderServer

        class Impl(AdderServer):
            def add(self, a, b):
                return a + b

        with AdderClient.in_memory(Impl()) as client:
            print(client.add(2, 3))
        print(adder_mcp.ToolError.__module__)
        print(sorted(m for m in sys.modules if m.startswith("mcpgen")))
        """,
        gen,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["5", "adder_mcp._runtime._errors", "['mcpgen_runtime']"]


def test_golden_records_hold_generated_code_only() -> None:
    for golden in (ROOT / "tests" / "golden", ROOT / "examples" / "weather" / "weather_mcp"):
        assert not list(golden.rglob("_runtime"))


def _env_without_the_sdk(root: Path) -> Path:
    """A Python environment with pydantic, idna, opentelemetry (the API) and
    mcpgen_runtime but not the http extra (no mcp, starlette, uvicorn): its
    interpreter, for mypy's --python-executable."""
    import annotated_types
    import idna
    import opentelemetry.trace
    import pydantic
    import pydantic_core
    import typing_extensions
    import typing_inspection

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "env")], check=True)
    deps = root / "deps"
    deps.mkdir()
    for module in (annotated_types, idna, pydantic, pydantic_core, typing_inspection):
        assert module.__file__ is not None
        (deps / module.__name__).symlink_to(Path(module.__file__).parent)
    assert opentelemetry.trace.__file__ is not None  # a namespace package: no __file__ of its own
    (deps / "opentelemetry").symlink_to(Path(opentelemetry.trace.__file__).parent.parent)
    assert typing_extensions.__file__ is not None
    (deps / "typing_extensions.py").symlink_to(typing_extensions.__file__)
    runtime_home = Path(mcpgen_runtime.__file__).parent.parent
    (site,) = (root / "env" / "lib").glob("python3*/site-packages")
    (site / "deps.pth").write_text(f"{deps}\n{runtime_home}\n")
    python = root / "env" / "bin" / "python"
    probe = "import pydantic, mcpgen_runtime, importlib.util as u; print(u.find_spec('mcp'))"
    assert (
        subprocess.run(
            [python, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "None"
    )
    return python


def test_mypy_strict_passes_on_a_user_module_without_the_http_extra(tmp_path: Path) -> None:
    """Type checking a module that imports a generated package (installed or vendored
    runtime) must not follow the runtime into the optional SDK."""
    python = _env_without_the_sdk(tmp_path)
    project = tmp_path / "project"
    weather = ROOT / "examples" / "weather" / "tools.yaml"
    for package, mode in (("weather_mcp", "installed"), ("vendored_mcp", "vendored")):
        result = build_spec(weather, output=project / package, runtime=mode)
        assert result.ok, result.message
        (project / f"use_{package}.py").write_text(
            textwrap.dedent(f"""\
            import {package}
            import {package}.__main__
            from {package}.client import WeatherClient

            ERROR: type[Exception] = {package}.ToolError
            CLIENT: type[WeatherClient] = WeatherClient
            """)
        )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-executable",
            str(python),
            "use_weather_mcp.py",
            "use_vendored_mcp.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
