"""Deployment files from the contract: ``mcpgen build --emit server.json`` (the MCP
Registry's entry) and ``mcpgen init --dockerfile``.

Through the real CLI in a temporary project. The server.json written for the weather
example and for a spec with secrets and a remote is validated against the registry's
published schema (tests/fixtures/registry/README.md says where it comes from and where
it is kept), and checked key by key without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from mcpgen.cli import main
from mcpgen.deploy import SCHEMA_URL

ROOT = Path(__file__).resolve().parents[3]
WEATHER = ROOT / "examples" / "weather"
REGISTRY_SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
NAME = "io.github.example/weather"


def _registry_schema_file() -> Path | None:
    given = os.environ.get("MCPGEN_REGISTRY_SCHEMA")
    if given:
        return Path(given)
    for parent in ROOT.parents:
        found = parent / "shared" / "data" / "mcp-registry" / "server.schema.json"
        if found.is_file():
            return found
    return None


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _weather_project(
    folder: Path,
    *,
    readme: str = f"# weather\n\n<!-- mcp-name: {NAME} -->\n",
    server_extra: str = "",
    config: str = "",
) -> Path:
    """The weather example as a project of its own: [project] name, a README, a git root."""
    folder.mkdir(exist_ok=True)
    (folder / ".git").mkdir()
    text = (WEATHER / "tools.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "  title: Weather\n",
        f"  title: Weather\n  registry_name: {NAME}\n"
        "  description: Multi-day forecasts and current temperatures for a city.\n" + server_extra,
    )
    (folder / "tools.yaml").write_text(text, encoding="utf-8")
    shutil.copy(WEATHER / "weather_impl.py", folder)
    if (WEATHER / "schemas").is_dir():
        shutil.copytree(WEATHER / "schemas", folder / "schemas")
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "weather-mcp"\nversion = "1.4.0"\nreadme = "README.md"\n' + config,
        encoding="utf-8",
    )
    (folder / "README.md").write_text(readme, encoding="utf-8")
    return folder / "tools.yaml"


def _check_registry_shape(document: dict[str, Any]) -> None:
    """What the registry's schema requires of our document, checked without the schema."""
    assert document["$schema"] == SCHEMA_URL
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", document["name"])
    assert 1 <= len(document["description"]) <= 100
    assert document["version"] and document["version"] != "latest"
    for package in document["packages"]:
        assert package["registryType"] == "pypi" and package["identifier"]
        assert package["transport"] == {"type": "stdio"}
        for variable in package["environmentVariables"]:
            assert set(variable) <= {"name", "description", "isRequired", "isSecret", "default"}
    for remote in document.get("remotes", []):
        assert remote["type"] == "streamable-http"
        assert re.fullmatch(r"https?://\S+", remote["url"])


def _validate_against_registry_schema(document: dict[str, Any]) -> None:
    found = _registry_schema_file()
    if found is None:
        pytest.skip(
            "the registry's server.schema.json is not beside the checkout "
            "(tests/fixtures/registry/README.md)"
        )
    data = found.read_bytes()
    assert hashlib.sha256(data).hexdigest() == REGISTRY_SCHEMA_SHA256, f"{found} is another file"
    schema = json.loads(data)
    validator = jsonschema.Draft7Validator(
        schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, errors
    # the schema is not vacuous: a name without its namespace is refused
    assert list(validator.iter_errors({**document, "name": "weather"}))


def test_weather_server_json_is_what_the_registry_expects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather")
    monkeypatch.chdir(spec.parent)
    code, out, err = _cli("build", "--emit", "server.json")
    assert code == 0, err
    assert "wrote server.json" in out + err
    document = json.loads((spec.parent / "server.json").read_text(encoding="utf-8"))
    assert document == {
        "$schema": SCHEMA_URL,
        "name": NAME,
        "title": "Weather",
        "description": "Multi-day forecasts and current temperatures for a city.",
        "version": "1.4.0",
        "packages": [
            {
                "registryType": "pypi",
                "identifier": "weather-mcp",
                "version": "1.4.0",
                "transport": {"type": "stdio"},
                "environmentVariables": [
                    {
                        "name": "MCPGEN_MAX_MESSAGE_BYTES",
                        "description": (
                            "Largest JSON-RPC message the server reads, in bytes (default 16 MiB)."
                        ),
                    }
                ],
            }
        ],
    }
    _check_registry_shape(document)
    _validate_against_registry_schema(document)


SECRETS = """\
  environment:
    - {name: WEATHER_API_KEY, description: The forecast service's key, secret: true, required: true}
    - {name: WEATHER_UNITS, default: metric}
"""


def test_secrets_and_a_remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _weather_project(
        tmp_path / "weather",
        server_extra=SECRETS,
        config='\n[tool.mcpgen]\nspecs = ["tools.yaml"]\nemit = ["server.json"]\n'
        'remote-urls = ["https://weather.example.com/mcp"]\n',
    )
    monkeypatch.chdir(spec.parent)
    code, _, err = _cli("build")  # emit and remote-urls from [tool.mcpgen]
    assert code == 0, err
    document = json.loads((spec.parent / "server.json").read_text(encoding="utf-8"))
    variables = {v["name"]: v for v in document["packages"][0]["environmentVariables"]}
    assert variables["WEATHER_API_KEY"] == {
        "name": "WEATHER_API_KEY",
        "description": "The forecast service's key",
        "isRequired": True,
        "isSecret": True,
    }
    assert variables["WEATHER_UNITS"] == {"name": "WEATHER_UNITS", "default": "metric"}
    assert "isSecret" not in variables["MCPGEN_MAX_MESSAGE_BYTES"]
    assert document["remotes"] == [
        {"type": "streamable-http", "url": "https://weather.example.com/mcp"}
    ]
    _check_registry_shape(document)
    # a flag wins over the setting
    code, _, err = _cli("build", "--remote-url", "https://eu.example.com/mcp")
    assert code == 0, err
    document = json.loads((spec.parent / "server.json").read_text(encoding="utf-8"))
    assert [r["url"] for r in document["remotes"]] == ["https://eu.example.com/mcp"]
    _validate_against_registry_schema(document)


def test_a_bad_registry_name_is_a_build_error_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather")
    spec.write_text(
        spec.read_text().replace(f"registry_name: {NAME}", "registry_name: weather"),
        encoding="utf-8",
    )
    line = spec.read_text().splitlines().index("  registry_name: weather") + 1
    monkeypatch.chdir(spec.parent)
    code, _, err = _cli("build")  # without --emit too: the spec itself is wrong
    assert code == 1
    assert (
        f"tools.yaml:{line}:18: server.registry_name: 'weather' is not an MCP Registry name" in err
    )
    assert not (spec.parent / "weather_mcp").exists()
    code, _, err = _cli("validate")
    assert code == 1 and f"tools.yaml:{line}:18: server.registry_name" in err


def test_server_json_needs_a_registry_name_and_a_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather")
    text = spec.read_text()
    text = re.sub(r"  registry_name: .*\n  description: .*\n", "", text)
    spec.write_text(text, encoding="utf-8")
    line = text.splitlines().index("server:") + 1
    monkeypatch.chdir(spec.parent)
    code, _, err = _cli("build", "--emit", "server.json")
    assert code == 1
    assert f"tools.yaml:{line}:1: server: server.json needs server.registry_name" in err
    assert f"tools.yaml:{line}:1: server: server.json needs server.description" in err
    assert not (spec.parent / "server.json").exists()
    assert (spec.parent / "weather_mcp").is_dir()  # the package itself was built


def test_check_compares_and_never_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _weather_project(tmp_path / "weather")
    monkeypatch.chdir(spec.parent)
    assert _cli("build")[0] == 0
    target = spec.parent / "server.json"
    code, out, err = _cli("build", "--check", "--emit", "server.json")
    assert code == 1 and f"missing: {target.name}" in out + err
    assert not target.exists()
    assert _cli("build", "--emit", "server.json")[0] == 0
    code, out, _ = _cli("build", "--check", "--emit", "server.json", "--format", "json")
    assert code == 0
    (document,) = json.loads(out)["specs"]
    assert document["server_json"]["status"] == "fresh" and document["server_json"]["ok"]
    # a stale file: the diff is printed, the file left as it was
    stale = target.read_text().replace('"version": "1.4.0"', '"version": "1.3.0"', 1)
    target.write_text(stale, encoding="utf-8")
    before = target.stat().st_mtime_ns
    code, out, err = _cli("build", "--check", "--emit", "server.json")
    assert code == 1
    assert '-  "version": "1.3.0"' in out and '+  "version": "1.4.0"' in out
    assert target.read_text() == stale and target.stat().st_mtime_ns == before


def test_the_readme_must_carry_the_mcp_name_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather", readme="# weather\n")
    monkeypatch.chdir(spec.parent)
    wanted = f"add the line <!-- mcp-name: {NAME} --> to README.md"
    code, _, err = _cli("build", "--emit", "server.json")
    assert code == 0 and "warning: server.registry_name: " in err and wanted in err
    code, _, err = _cli("build", "--check", "--emit", "server.json")
    assert code == 1 and wanted in err and "warning:" not in err  # before a publish: an error
    (spec.parent / "README.md").write_text(f"# weather\nmcp-name: {NAME}\n", encoding="utf-8")
    code, _, err = _cli("build", "--check", "--emit", "server.json")
    assert code == 0, err
    # a longer name does not count as this one
    (spec.parent / "README.md").write_text(f"mcp-name: {NAME}-beta\n", encoding="utf-8")
    assert _cli("build", "--check", "--emit", "server.json")[0] == 1


def test_keys_mcpgen_does_not_write_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather")
    monkeypatch.chdir(spec.parent)
    target = spec.parent / "server.json"
    repository = {"url": "https://github.com/example/weather", "source": "github"}
    target.write_text(json.dumps({"name": "old/name", "repository": repository}), "utf-8")
    assert _cli("build", "--emit", "server.json")[0] == 0
    document = json.loads(target.read_text(encoding="utf-8"))
    assert document["name"] == NAME and document["repository"] == repository
    assert _cli("build", "--check", "--emit", "server.json")[0] == 0
    _validate_against_registry_schema(document)


def test_the_pypi_package_comes_from_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather")
    (spec.parent / "pyproject.toml").write_text('[tool.mcpgen]\nspecs = ["tools.yaml"]\n')
    monkeypatch.chdir(spec.parent)
    code, _, err = _cli("build", "--emit", "server.json")
    assert code == 1 and "set [project] name in pyproject.toml" in err
    assert not (spec.parent / "server.json").exists()


# --- mcpgen init --dockerfile ---------------------------------------------------------


def test_init_writes_a_dockerfile_only_when_asked(tmp_path: Path) -> None:
    plain, docker = tmp_path / "plain", tmp_path / "notes"
    assert _cli("init", str(plain))[0] == 0
    assert not (plain / "Dockerfile").exists()
    code, out, _ = _cli(
        "init", str(docker), "--dockerfile", "--registry-name", "io.github.me/notes"
    )
    assert code == 0 and "Dockerfile" in out
    text = (docker / "Dockerfile").read_text(encoding="utf-8")
    assert 'LABEL io.modelcontextprotocol.server.name="io.github.me/notes"' in text
    assert re.search(r"^RUN useradd .*--uid 10001", text, re.MULTILINE)
    assert re.search(r"^USER 10001:10001$", text, re.MULTILINE)
    assert text.index("USER 10001") < text.index("CMD [")
    assert re.search(r"^HEALTHCHECK ", text, re.MULTILINE)
    assert '"--transport", "http"' in text
    assert "mcpgen-runtime[http]>=" in text
    spec = (docker / "tools.yaml").read_text(encoding="utf-8")
    assert "\n  registry_name: io.github.me/notes" in spec
    assert _cli("validate", str(docker / "tools.yaml"))[0] == 0


def test_init_never_overwrites_a_dockerfile(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    code, _, err = _cli("init", str(tmp_path), "--dockerfile")
    assert code == 1 and "Dockerfile" in err
    assert (tmp_path / "Dockerfile").read_text() == "FROM scratch\n"
    assert not (tmp_path / "tools.yaml").exists()


def test_init_refuses_a_bad_registry_name(tmp_path: Path) -> None:
    code, _, err = _cli("init", str(tmp_path), "--registry-name", "notes")
    assert code == 2 and "--registry-name" in err and "reverse-DNS namespace" in err
    assert not (tmp_path / "tools.yaml").exists()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _instruction(text: str, keyword: str) -> list[str]:
    """The exec-form arguments of the Dockerfile's ``keyword`` line (CMD, HEALTHCHECK)."""
    joined = text.replace("\\\n", " ")
    line = next(x for x in joined.splitlines() if x.startswith(keyword + " "))
    return list(json.loads(line[line.index("CMD [") + 4 :]))


def test_the_dockerfile_command_serves_and_its_health_check_passes(tmp_path: Path) -> None:
    """The container's CMD and HEALTHCHECK, run here (no Docker needed): the server
    listens on the port the health check connects to, and the check fails when it
    does not."""
    pytest.importorskip("uvicorn")
    project = tmp_path / "notes"
    assert _cli("init", str(project), "--dockerfile", "--name", "notes")[0] == 0
    assert _cli("build", str(project / "tools.yaml"))[0] == 0
    text = (project / "Dockerfile").read_text(encoding="utf-8")
    port = str(_free_port())
    command = [a.replace("8000", port) for a in _instruction(text, "CMD")]
    check = [a.replace("8000", port) for a in _instruction(text, "HEALTHCHECK --interval=30s")]
    assert command[0] == check[0] == "python"
    command[0] = check[0] = sys.executable
    assert subprocess.run(check, check=False, cwd=project, capture_output=True).returncode != 0
    server = subprocess.Popen(command, cwd=project, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(check, check=False, cwd=project, capture_output=True).returncode != 0:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline, "the health check never passed"
            time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_new_server_keys_are_checked_at_their_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(
        tmp_path / "weather", server_extra="  environment:\n    - {name: API-KEY, secret: true}\n"
    )
    text = spec.read_text().replace(
        "  description: Multi-day forecasts and current temperatures for a city.",
        "  description: " + "x" * 101,
    )
    spec.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    described = next(i for i, x in enumerate(lines) if x.startswith("  description:")) + 1
    variable = lines.index("    - {name: API-KEY, secret: true}") + 1
    monkeypatch.chdir(spec.parent)
    code, _, err = _cli("validate")
    assert code == 1
    assert f"tools.yaml:{described}:16: server.description: 101 characters; at most 100 here" in err
    assert (
        f"tools.yaml:{variable}:14: server.environment[0].name: 'API-KEY' is not an "
        "environment variable name" in err
    )


def test_the_editor_schema_knows_the_registry_keys() -> None:
    from mcpgen.spec.format import EDITOR_SCHEMA, REGISTRY_NAME_PATTERN, schema_file

    server = EDITOR_SCHEMA["properties"]["server"]["properties"]
    assert server["registry_name"]["pattern"] == REGISTRY_NAME_PATTERN
    assert server["description"]["maxLength"] == 100
    assert server["environment"]["items"]["properties"]["secret"] == {
        "type": "boolean",
        "description": "A password, token or key (isSecret).",
    }
    assert json.loads(schema_file().read_text(encoding="utf-8")) == EDITOR_SCHEMA
    assert re.fullmatch(REGISTRY_NAME_PATTERN, NAME)
    assert not re.fullmatch(REGISTRY_NAME_PATTERN, "weather/weather")  # no reverse DNS


def test_a_version_range_is_no_registry_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather")
    spec.write_text(spec.read_text().replace("version: 1.4.0", "version: 1.x"), encoding="utf-8")
    line = spec.read_text().splitlines().index("  version: 1.x") + 1
    monkeypatch.chdir(spec.parent)
    code, _, err = _cli("build", "--emit", "server.json")
    assert code == 1
    assert f"tools.yaml:{line}:3: server.version: the registry takes one exact version" in err
    assert not (spec.parent / "server.json").exists()


def test_a_dockerfile_label_and_a_pyproject_version_that_disagree_are_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _weather_project(tmp_path / "weather")
    pyproject = spec.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"1.4.0"', '"1.5.0"'), encoding="utf-8")
    (spec.parent / "Dockerfile").write_text(
        'FROM python:3.12-slim\nLABEL io.modelcontextprotocol.server.name="io.github.example/old"\n'
    )
    monkeypatch.chdir(spec.parent)
    code, _, err = _cli("build", "--emit", "server.json")
    assert code == 0, err
    assert "warning: server.version: server.version is 1.4.0 but pyproject.toml says" in err
    assert (
        "warning: server.registry_name: Dockerfile labels the image "
        "io.modelcontextprotocol.server.name=io.github.example/old; the registry expects "
        f"{NAME}" in err
    )
    assert (spec.parent / "server.json").is_file()
