"""How the HTTP client finds where to get tokens for an MCP endpoint (the MCP
authorization spec's discovery), and the one way it talks to OAuth endpoints.

``Discovery.find``: the 401's ``resource_metadata`` (else the RFC 9728 well-known
URLs of the endpoint, path-suffixed first) → the protected resource metadata, which
must sit on the endpoint's own origin and name the endpoint (or a parent of it) as
its ``resource`` → the first authorization server it lists (or the caller's pinned
issuer, which must be listed) → that server's RFC 8414 metadata (else OpenID
discovery, path-inserted then path-appended), whose ``issuer`` must be the one asked
for, with a token endpoint (and for the code grant an authorization endpoint and
PKCE S256).

``Discovery.fetch``: one bounded request (a document of at most 256 KiB, 30 s, no
redirects) to https, or to http on the loopback interface only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2

from ..._errors import Unauthorized
from ...protocol.addresses import discovery_urls, secure_url
from .wire import url_origin

__all__ = ["Discovered", "Discovery", "check_endpoint"]

_MAX_DOCUMENT = 256 * 1024  # bytes of a metadata document or token response read
_TIMEOUT = 30.0  # seconds one request to a metadata or token endpoint may take


@dataclass(frozen=True)
class Discovered:
    """The resource, its authorization server and that server's metadata."""

    resource: str
    issuer: str
    metadata: Mapping[str, Any]
    scopes_supported: tuple[str, ...]
    source: str  # the challenge's resource_metadata it came from ("": well-known)


class Discovery:
    """Discovery and OAuth requests for the MCP endpoint ``url``, on ``client``."""

    def __init__(self, url: str, client: httpx2.AsyncClient) -> None:
        self.url = url
        self._client = client

    async def find(self, metadata_url: str, issuer: str | None, code_flow: bool) -> Discovered:
        resource_metadata, prm_url = await self._resource_metadata(metadata_url)
        resource = resource_metadata.get("resource")
        if not isinstance(resource, str) or not _covers(resource, self.url):
            raise self.error(f"{prm_url} describes resource {resource!r}, not this one")
        servers = _strings(resource_metadata.get("authorization_servers"))
        if issuer is not None and issuer not in servers:
            raise self.error(f"{prm_url} does not name {issuer!r} (the grant's issuer)")
        if not servers:
            raise self.error(f"{prm_url} names no authorization server")
        chosen = issuer or servers[0]
        metadata = await self._server_metadata(chosen, code_flow)
        scopes = tuple(_strings(resource_metadata.get("scopes_supported")))
        return Discovered(resource, chosen, metadata, scopes, metadata_url)

    async def _resource_metadata(self, metadata_url: str) -> tuple[dict[str, Any], str]:
        parts = urlsplit(self.url)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        candidates = [metadata_url] if metadata_url else []
        candidates += [f"{origin}/.well-known/oauth-protected-resource{path}"] if path else []
        candidates += [f"{origin}/.well-known/oauth-protected-resource"]
        for url in candidates:
            if url_origin(url) != url_origin(self.url):
                raise self.error(
                    f"the server points to protected resource metadata on another origin ({url})"
                )
            status, document = await self.fetch("GET", url)
            if status == 200 and document:
                return document, url
        raise self.error(f"no protected resource metadata at {', '.join(candidates)}")

    async def _server_metadata(self, issuer: str, code_flow: bool) -> dict[str, Any]:
        check_endpoint(issuer, self.url)
        for url in discovery_urls(issuer):
            status, metadata = await self.fetch("GET", url)
            if status != 200 or not metadata:
                continue
            if str(metadata.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
                raise self.error(f"{url} is the metadata of {metadata.get('issuer')!r}")
            self._check_server(issuer, metadata, code_flow)
            return metadata
        raise self.error(f"no authorization server metadata for {issuer}")

    def _check_server(self, issuer: str, metadata: Mapping[str, Any], code_flow: bool) -> None:
        needed = ["token_endpoint"]
        if code_flow:
            needed.append("authorization_endpoint")
            if "S256" not in _strings(metadata.get("code_challenge_methods_supported")):
                raise self.error(f"{issuer} does not support PKCE with S256")
        for key in needed:
            endpoint = metadata.get(key)
            if not isinstance(endpoint, str):
                raise self.error(f"{issuer}'s metadata has no {key}")
            check_endpoint(endpoint, self.url)

    async def fetch(
        self, method: str, url: str, headers: Mapping[str, str] | None = None, body: bytes = b""
    ) -> tuple[int, dict[str, Any]]:
        """One request to a metadata, registration or token endpoint: the status and the
        JSON object answered (empty when the answer is no JSON object)."""
        check_endpoint(url, self.url)
        try:
            async with asyncio.timeout(_TIMEOUT):
                request = self._client.build_request(
                    method, url, headers=headers or {"accept": "application/json"}, content=body
                )
                response = await self._client.send(request, stream=True)
                try:
                    data = await _bounded(response)
                finally:
                    await response.aclose()
        except (httpx2.HTTPError, OSError, TimeoutError) as exc:
            raise Unauthorized(
                f"cannot reach {url} to authorize the client: {exc or type(exc).__name__}",
                url=self.url,
                error="unreachable",
            ) from None
        try:
            document = json.loads(data)
        except (ValueError, RecursionError):
            document = None
        return response.status_code, document if isinstance(document, dict) else {}

    def error(self, what: str) -> Unauthorized:
        return Unauthorized(
            f"cannot find how to authorize with {self.url}: {what}",
            url=self.url,
            error="discovery_failed",
        )


def check_endpoint(url: str, endpoint: str) -> None:
    """OAuth needs TLS: https, or http on the loopback interface only."""
    if secure_url(url):
        return
    raise Unauthorized(
        f"refusing to use {url!r} to authorize with {endpoint}: OAuth endpoints must be "
        "https (http only on 127.0.0.1/localhost)",
        url=endpoint,
        error="insecure_endpoint",
    )


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _covers(resource: str, url: str) -> bool:
    """``resource`` names the endpoint ``url``: the same origin, a parent path."""
    if url_origin(resource) != url_origin(url) or urlsplit(resource).fragment:
        return False
    base = urlsplit(resource).path.rstrip("/")
    path = urlsplit(url).path.rstrip("/")
    return path == base or path.startswith(base + "/")


async def _bounded(response: httpx2.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > _MAX_DOCUMENT:
            raise httpx2.DecodingError(f"more than {_MAX_DOCUMENT} bytes")
        parts.append(chunk)
    return b"".join(parts)
