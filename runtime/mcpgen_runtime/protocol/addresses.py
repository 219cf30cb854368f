"""Which hosts are the loopback interface, decided in one place for both sides:
the HTTP server's DNS-rebinding rules and its token verifiers' fetch URLs
(``http.guard``, ``http.verifiers``), and the client's OAuth endpoint check
(``transport.http.discovery``), which may not import the server's HTTP part. OAuth
URLs are held to one rule on both sides too (``secure_url``), and an authorization
server's metadata is looked for at the same places (``discovery_urls``)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit, urlunsplit

__all__ = ["discovery_urls", "is_loopback", "secure_url", "url_host"]


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


def secure_url(url: str) -> bool:
    """Whether OAuth may use ``url``: https with a host, or http on a loopback host."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https":
        return bool(host)
    return parts.scheme == "http" and bool(host) and is_loopback(host)


def discovery_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order tried: RFC 8414 (the well-known
    path inserted before the issuer's path), then OpenID Connect discovery (inserted,
    then appended)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(well_known: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, well_known, "", ""))

    urls = [
        at("/.well-known/oauth-authorization-server" + path),
        at("/.well-known/openid-configuration" + path),
        at(path + "/.well-known/openid-configuration"),
    ]
    return list(dict.fromkeys(urls))
