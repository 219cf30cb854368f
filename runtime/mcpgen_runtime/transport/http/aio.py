"""``AsyncHttpTransport``: a Streamable HTTP endpoint behind the async session, on
httpx2's ``AsyncClient`` (one pool of keep-alive connections).

Each request is one POST run as a task of its own, so the session's wait (and its
time limit) covers the whole answer, however slowly it arrives; the answer's
messages go to ``on_line`` as they come (progress before the result). Abandoning a
request (a timeout, a cancelled caller) sends ``notifications/cancelled``, which this
transport also reads as "stop reading that answer": the POST's task is cancelled and
its connection closed, which a stateless server takes as the cancellation.
Notifications are POSTed in order and awaited (``notifications/initialized`` must
land before the next request); ``send_nowait`` never waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable, Mapping

import httpx2

from ..._errors import McpError
from ..lines import DEFAULT_MAX_MESSAGE_BYTES, CloseCallback, LineCallback
from .auth import (
    Authenticator,
    AuthorizationCode,
    BearerSource,
    ClientCredentials,
    HttpAuth,
    parse_challenge,
)
from .wire import EventStream, FailureCallback, HttpPeer, Message, read_message, too_large

__all__ = ["AsyncHttpTransport"]

logger = logging.getLogger("mcpgen.client")

_REFUSED_BODY = 64 * 1024  # bytes read of an answer that is no MCP answer
_MAX_REDIRECTS = 5
_AUTH_PROBE = b'{"jsonrpc":"2.0","id":"mcpgen-auth-probe","method":"ping"}'
_CLOSE_TIMEOUT = 2.0  # seconds the DELETE that ends a session may take


class AsyncHttpTransport:
    """POSTs each message to ``url`` and delivers the messages of each answer."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 30.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        auth: HttpAuth | None = None,
    ) -> None:
        self.peer = HttpPeer(url, headers, max_message_bytes)
        if auth is not None and any(key.lower() == "authorization" for key in headers or {}):
            raise ValueError("pass either auth= or an Authorization header, not both")
        self._auth_config = auth
        self._auth: Authenticator | None = (
            None
            if auth is None or isinstance(auth, ClientCredentials | AuthorizationCode)
            else BearerSource(auth, url)
        )
        self.on_failure: FailureCallback | None = None
        self._connect_timeout = connect_timeout
        self._client: httpx2.AsyncClient | None = None
        self._on_line: LineCallback | None = None
        self._on_close: CloseCallback | None = None
        self._calls: dict[int, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def url(self) -> str:
        return self.peer.url

    async def start(self, on_line: LineCallback, on_close: CloseCallback) -> None:
        """Open the connection pool (nothing is sent until the first message);
        ``on_close`` is called once, by ``stop``, to fail the calls still waiting."""
        self._on_line, self._on_close = on_line, on_close
        self._client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(None, connect=self._connect_timeout),
            limits=httpx2.Limits(max_connections=64, max_keepalive_connections=32),
            follow_redirects=False,
            trust_env=False,
        )
        if isinstance(self._auth_config, ClientCredentials | AuthorizationCode):
            self._auth = _oauth_session(self._auth_config, self.peer.url, self._client)
        if isinstance(self._auth_config, AuthorizationCode):
            try:
                await self._authorize_first()
            except BaseException:
                await self.stop()
                raise

    async def _authorize_first(self) -> None:
        """The authorization code grant waits on a person: run it here, before the first
        call (whose time limit would cover it), when the server challenges a ``ping``
        (a request the spec allows before ``initialize``) sent without a token."""
        assert self._client is not None and self._auth is not None
        if await self._auth.authorization() is not None:
            return  # a token kept from an earlier session
        probe = read_message(_AUTH_PROBE)
        request = self._client.build_request(
            "POST", self.peer.url, content=probe.body, headers=self.peer.headers(probe)
        )
        try:
            response = await self._client.send(request, stream=True)
            await response.aclose()  # only the status and the challenge matter
        except (httpx2.HTTPError, OSError):
            return  # the first call reports an unreachable server
        if response.status_code == 401:
            await self._challenged(response, None, set())

    async def send(self, line: bytes) -> None:
        """A request starts its POST and returns; a notification or reply is POSTed
        and awaited."""
        await self.send_message(read_message(line))

    def send_nowait(self, line: bytes) -> None:
        self.post_nowait(read_message(line))

    async def send_message(self, message: Message) -> None:
        if message.id is not None or message.method == "notifications/cancelled":
            self.post_nowait(message)
            return
        self._check_open()
        try:
            async with asyncio.timeout(self._connect_timeout):
                await self._post(message)
        except TimeoutError:
            logger.info("%s: %s took over %gs", self.peer.url, message.label, self._connect_timeout)

    def post_nowait(self, message: Message) -> None:
        """Start the POST of ``message`` as a task (a request's is kept by id)."""
        self._check_open()
        if message.cancels is not None:
            self._abandon(message)
        task = asyncio.get_running_loop().create_task(self._post_task(message))
        request_id = message.id
        if request_id is not None:
            self._calls[request_id] = task
            task.add_done_callback(lambda _: self._calls.pop(request_id, None))
        else:
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def stop(self) -> None:
        """Stop reading every answer, end a handshake-era session (DELETE), close the pool."""
        if self._closed:
            return
        self._closed = True
        client = self._client
        tasks = [*self._calls.values(), *self._background]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._on_close is not None:
            self._on_close()  # a caller still waiting gets exit_error() at once
        if client is None:
            return
        headers = self.peer.close_headers()
        if headers is not None:
            with contextlib.suppress(McpError, httpx2.HTTPError, OSError, TimeoutError):
                async with asyncio.timeout(_CLOSE_TIMEOUT):
                    if self._auth is not None:  # a protected server ends sessions for tokens too
                        credential = await self._auth.authorization()
                        if credential is not None:
                            headers["authorization"] = credential
                    await client.delete(self.peer.url, headers=headers)
        await client.aclose()

    def exit_error(self) -> McpError:
        return self.peer.closed()

    # -- one POST -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed or self._client is None:
            raise self.peer.closed()

    def _abandon(self, message: Message) -> None:
        """A request the session gave up on: stop reading its answer."""
        task = self._calls.pop(message.cancels, None) if message.cancels is not None else None
        if task is not None:
            task.cancel()

    async def _post_task(self, message: Message) -> None:
        try:
            await self._post(message)
        except asyncio.CancelledError:
            pass  # abandoned or stopped: nobody waits for it any more

    async def _post(self, message: Message) -> None:
        """POST ``message``; a request that ends unanswered fails its caller."""
        try:
            last = await self._exchange(message)
        except (McpError, httpx2.HTTPError, OSError) as exc:
            failure = self._failure(message, exc)
            self._fail(message, lambda: failure)
            return
        self._fail(message, lambda: self.peer.unanswered(message, last))

    def _failure(self, message: Message, exc: BaseException) -> McpError:
        if isinstance(exc, McpError):
            return exc
        if isinstance(exc, (httpx2.ConnectError, httpx2.ConnectTimeout)):
            return self.peer.unreachable(message, exc)
        return self.peer.cut_off(message, exc)

    def _fail(self, message: Message, error: Callable[[], McpError]) -> None:
        if message.id is not None and self.on_failure is not None:
            self.on_failure(message.id, error)
        elif message.id is None:
            logger.info("%s: %s", message.label, error())

    async def _exchange(self, message: Message) -> bytes | None:
        """POST ``message`` and deliver its answer; the last message data read. A 401
        or 403 goes to the authenticator, which may obtain a token and send it again."""
        assert self._client is not None
        tries: set[int] = set()  # the auth statuses this request got past
        for _ in range(_MAX_REDIRECTS + 3):
            headers = self.peer.headers(message)
            sent = await self._auth.authorization() if self._auth is not None else None
            if sent is not None:
                headers["authorization"] = sent
            request = self._client.build_request(
                "POST", self.peer.url, content=message.body, headers=headers
            )
            response = await self._client.send(request, stream=True)
            try:
                if self.peer.redirect(response.status_code, response.headers):
                    continue
                challenge = response.status_code in (401, 403) and self._auth is not None
                if challenge and await self._challenged(response, sent, tries):
                    continue
                return await self._read(message, response)
            finally:
                await response.aclose()
        raise self.peer.cut_off(message, RuntimeError("too many redirects"))

    async def _challenged(
        self, response: httpx2.Response, sent: str | None, tries: set[int]
    ) -> bool:
        """True: the authenticator has what the 401/403 asks, send again; else raises."""
        assert self._auth is not None
        challenge = parse_challenge(
            response.status_code, response.headers.get("www-authenticate", "")
        )
        if await self._auth.challenged(challenge, sent, tries):
            return True
        raise self._auth.refused(challenge)

    async def _read(self, message: Message, response: httpx2.Response) -> bytes | None:
        kind = self.peer.kind(message, response.status_code, response.headers)
        if kind == "sse":
            return await self._read_events(message, response)
        if kind == "json":
            body = await _read_body(response, self.peer.max_message_bytes, self.peer.url)
            self._deliver(message, body)
            return body
        if kind == "empty":
            return None
        body = await _read_body(response, _REFUSED_BODY, None)
        refusal = self.peer.refusal(message, response.status_code, response.headers, body)
        if isinstance(refusal, McpError):
            raise refusal
        self._deliver(message, refusal)
        return refusal

    async def _read_events(self, message: Message, response: httpx2.Response) -> bytes | None:
        stream = EventStream(self.peer.url, self.peer.max_message_bytes)
        last = None
        async for chunk in response.aiter_bytes():
            for data in stream.feed(chunk):
                last = data
                self._deliver(message, data)
        return last

    def _deliver(self, message: Message, data: bytes) -> None:
        self.peer.adopt(message, data)
        assert self._on_line is not None
        self._on_line(data)


def _oauth_session(
    grant: ClientCredentials | AuthorizationCode, url: str, client: httpx2.AsyncClient
) -> Authenticator:
    try:
        oauth = importlib.import_module(".oauth", __package__)
    except ImportError as exc:
        raise ImportError(
            f"{type(grant).__name__} needs Authlib: pip install 'mcpgen-runtime[auth]' ({exc})"
        ) from exc
    session: Authenticator = oauth.OAuthSession(grant, url, client)
    return session


async def _read_body(response: httpx2.Response, limit: int, url: str | None) -> bytes:
    """The body, at most ``limit`` bytes: more is an error (``url`` given) or cut off."""
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            if url is not None:
                raise too_large(url, limit)
            parts.append(chunk[: limit - (size - len(chunk))])
            break
        parts.append(chunk)
    return b"".join(parts)
