"""One ``pattern``, one meaning: the generated server and the typed client read a
pattern as ECMA-262, as JSON Schema (and JavaScript peers) do.

Before: the server used Python's ``re`` (``^[A-Z]{2}$`` accepted ``"US\\n"``,
``^\\d{4}$`` accepted Arabic-Indic digits) while pydantic's models used Rust's
regex crate on the untranslated text (``\\d`` Unicode there too), and a
backtracking pattern stalled the server.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import build_package, import_package

SPEC = """\
mcpgen: 1
package: {package}
server: {{name: codes, version: 1.0.0}}
tools:
  - name: lookup
    description: Look up a country by code and year.
    parameters:
      - {{name: country, type: string, pattern: "^[A-Z]{{2}}$"}}
      - {{name: year, type: string, pattern: "^\\\\d{{4}}$"}}
      - {{name: slug, type: string, pattern: "^([a-z]+)+$", required: false}}
    output_schema:
      type: object
      properties:
        code: {{type: string, pattern: "^\\\\w+$"}}
      required: [code]
"""

IMPL = """
from {package}.server import CodesServer


class Impl(CodesServer):
    def lookup(self, args):
        return {{"code": args.get("slug", args["country"])}}
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("patterns")
    gen = build_package(SPEC.format(package="codes_mcp"), tmp, "codes_mcp")
    (gen / "codes_impl.py").write_text(IMPL.format(package="codes_mcp"), encoding="utf-8")
    with import_package(gen, "codes_mcp") as module:
        import importlib

        impl = importlib.import_module("codes_impl")
        yield module, impl
        import sys

        sys.modules.pop("codes_impl", None)


@pytest.mark.parametrize(
    ("arguments", "accepted"),
    [
        ({"country": "US", "year": "2024"}, True),
        ({"country": "US\n", "year": "2024"}, False),
        ({"country": "US", "year": "\u0661\u0662\u0663\u0664"}, False),
        ({"country": "US", "year": "2024", "slug": "a" * 50_000 + "!"}, False),
    ],
)
def test_server_reads_patterns_as_ecma_262(
    package: Any, arguments: dict[str, Any], accepted: bool
) -> None:
    module, impl = package
    with module.CodesClient.in_memory(impl.Impl()) as client:
        try:
            client.session.call_tool("lookup", arguments)
        except module.ToolError as exc:
            assert "must match pattern" in str(exc)
            assert not accepted
        else:
            assert accepted


def test_the_client_reads_patterns_like_the_server(package: Any) -> None:
    """The typed client checks a result with the runtime's validator (the server's
    own) before building the model, so it reads the pattern as ECMA-262 too. (The
    models carry types only: pydantic's Rust regex crate is not ECMA-262.)"""
    module, _ = package
    from mcpgen_runtime import ResultConverter
    from mcpgen_runtime._errors import ResultMismatch

    converter = ResultConverter(module.contract.TOOLS)
    build = module.models.LookupOutput.model_validate
    ok = converter.structured("lookup", {"structuredContent": {"code": "abc_9"}}, build)
    assert ok.code == "abc_9"
    for bad in ("é", "abc\n"):  # \w is ASCII; $ is the end of the text
        with pytest.raises(ResultMismatch, match="code"):
            converter.structured("lookup", {"structuredContent": {"code": bad}}, build)
