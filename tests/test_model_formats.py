"""A generated package needs only pydantic at run time, whatever ``format`` its
output schemas and types use: formats whose pydantic types need another package
(``email``/``idn-email`` → ``EmailStr`` needs email-validator, ``ulid`` needs
python-ulid) are plain strings in the models. Found by the import fuzzer."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest
from helpers import build_package, import_package

FORMATS = ["email", "idn-email", "ulid"]


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) for m in ("email_validator", "ulid")),
    reason="email-validator or python-ulid is installed: the import would succeed anyway",
)
def test_formats_needing_other_packages_are_plain_strings(tmp_path: Path) -> None:
    properties = "\n".join(
        f"            {name.replace('-', '_')}: {{type: string, format: {name}}}"
        for name in FORMATS
    )
    spec = textwrap.dedent("""\
        mcpgen: 1
        package: formats_mcp
        server: {name: formats, version: "1"}
        types:
          Contact:
            type: object
            properties:
        """) + properties + textwrap.dedent("""
        tools:
          - name: contact
            parameters: []
            output_schema: {$ref: "#/types/Contact"}
        """)
    gen = build_package(spec, tmp_path, "formats_mcp")
    with import_package(gen, "formats_mcp") as package:  # client.py imports the models
        value = {"email": "a@example.com", "idn_email": "ü@example.com",
                 "ulid": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
        contact = package.models.Contact.model_validate(value)
        assert contact.model_dump() == value
