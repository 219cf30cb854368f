"""The one loopback test (``protocol.addresses``) that the HTTP server's rebinding
rules and verifiers and the client's OAuth endpoint check share."""

from __future__ import annotations

import pytest

from mcpgen_runtime.protocol.addresses import is_loopback, url_host

LOOPBACK = (
    "127.0.0.1",
    "127.0.0.2",
    "127.255.255.254",
    "::1",
    "[::1]",
    "localhost",
    "LOCALHOST",
    "localhost.",
    " localhost ",
    "::ffff:127.0.0.2",
    "[::ffff:127.0.0.1]",
)
NOT_LOOPBACK = (
    "0.0.0.0",
    "::",
    "10.0.0.1",
    "192.168.1.2",
    "::ffff:10.0.0.1",
    "example.com",
    "localhost.example.com",
    "128.0.0.1",
    "",
)


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_other_hosts(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("127.0.0.2", ("127.0.0.2", True)),
        ("::1", ("[::1]", True)),
        ("::ffff:127.0.0.1", ("127.0.0.1", True)),  # a dual-stack socket reached on 127.0.0.1
        ("::ffff:10.0.0.1", ("10.0.0.1", False)),
        ("2001:db8::1", ("[2001:db8::1]", False)),
        ("localhost", ("localhost", False)),  # a name, not an address literal
    ],
)
def test_url_host(name: str, expected: tuple[str, bool]) -> None:
    assert url_host(name) == expected
