"""Which hosts are the loopback interface, decided in one place for both sides:
the HTTP server's DNS-rebinding rules and its token verifiers' fetch URLs
(``http.guard``, ``http.verifiers``), and the client's OAuth endpoint check
(``transport.http.discovery``), which may not import the server's HTTP part."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback", "url_host"]


def is_loopback(host: str) -> bool:
    """``localhost`` or an address literal in 127.0.0.0/8 or ``::1`` (also IPv4-mapped)."""
    name = host.strip().strip("[]").lower()
    if name in ("localhost", "localhost."):
        return True
    return url_host(name)[1]


def url_host(name: str) -> tuple[str, bool]:
    """An address as a URL's host (IPv6 in brackets, IPv4-mapped as IPv4) and whether
    it is a loopback address; a name that is no address literal is returned as is."""
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return name, False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    literal = f"[{address}]" if address.version == 6 else str(address)
    return literal, address.is_loopback
