"""What ``mcpgen test`` calls: an implementation in process, a stdio server, an HTTP
endpoint, all through the runtime's client session. Each target lists tools and answers
one ``tools/call`` with a :class:`Reply` (the raw result, the JSON-RPC error, or a
timeout), never raising for what a server does.

In process, the implementation runs behind the generated package's real server path
(``build_app`` → the stdio shell's ``serve_streams`` over an in-memory pipe, as the
generated client's ``in_memory`` does), so arguments are validated and coerced and
errors mapped exactly as in production; each handler is wrapped to record an
exception other than ``ToolError`` (``handler_crash``) and the value it returned.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mcpgen_runtime._errors import McpError, ProtocolError, ServerExited, Timeout, ToolError

__all__ = ["UNSET", "InProcessTarget", "Reply", "SessionTarget", "Target", "TargetFailed"]

UNSET: Any = object()
# a call that keeps reporting progress may run this many times `--timeout` in all
PROGRESS_EXTENDS = 10


class TargetFailed(Exception):
    """The target cannot be started or reached (exit 2); the message says why."""


@dataclass
class Reply:
    """One call's answer as the checks read it."""

    result: dict[str, Any] | None = None  # the CallToolResult
    error: dict[str, Any] | None = None  # the JSON-RPC error: code, message
    timed_out: bool = False
    gone: str | None = None  # the server exited or the connection broke: why
    crash: str | None = None  # in process: "ValueError: …" raised by the handler
    returned: Any = UNSET  # in process: what the handler returned
    progress: int = 0  # progress notifications the call sent (each restarted its timeout)


class Target(Protocol):
    description: str  # "--impl m:C", for messages

    def start(self) -> None: ...
    def list_tools(self) -> list[dict[str, Any]]: ...
    def call(
        self, name: str, arguments: dict[str, Any], timeout: float, *, task: bool = False
    ) -> Reply: ...
    def restart(self) -> None: ...
    def close(self) -> None: ...


class SessionTarget:
    """A server behind the runtime's client session, the one generated clients use: a
    stdio command, an app in process (``serve`` given) or a Streamable HTTP endpoint
    (``url`` given, with ``headers``). A task-required tool runs through the session's
    task flow on each."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        serve: Callable[..., None] | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        description: str = "",
        timeout: float = 30.0,
    ) -> None:
        self.command = list(command) if command else None
        self.serve = serve
        self.url = url
        self.headers = dict(headers or {})
        self.description = description
        self.timeout = timeout
        self.session: Any = None
        self.protocol_version = ""
        # what the server wrote on stdout that was no JSON-RPC message, over every
        # session (a restart starts a new one): `stdout_noise`
        self.stray_lines = 0
        self.first_stray_line = b""

    def start(self) -> None:
        from mcpgen_runtime import Session

        if self.serve is not None:
            session = Session.in_memory(self.serve, verify="off", timeout=self.timeout)
        elif self.url is not None:
            session = Session.http(
                self.url, headers=self.headers, verify="off", timeout=self.timeout
            )
        else:
            assert self.command is not None
            session = Session.stdio(self.command, verify="off", timeout=self.timeout)
        try:
            session.connect()
        except (McpError, OSError) as exc:
            with contextlib.suppress(Exception):
                session.close()
            raise TargetFailed(f"{self.description}: the server did not start: {exc}") from None
        self.session = session
        self.protocol_version = str(session.protocol_version)

    def list_tools(self) -> list[dict[str, Any]]:
        try:
            return [dict(tool.raw) for tool in self.session.list_tools()]
        except (McpError, OSError) as exc:
            raise TargetFailed(f"{self.description}: tools/list failed: {exc}") from None

    def call(
        self, name: str, arguments: dict[str, Any], timeout: float, *, task: bool = False
    ) -> Reply:
        """One ``tools/call`` through the session's call flow: ``task`` asks for a task
        (the tool requires one), and a task the server makes of a call anyway (a tool
        whose tasks are optional) is followed to its result the same way. A progress
        token goes with every call, and each progress notification restarts
        ``timeout`` (``PROGRESS_EXTENDS`` × ``timeout`` at most): a long call that keeps
        reporting is alive, not timed out."""
        progress = 0

        def progressed(*_: Any) -> None:
            nonlocal progress
            progress += 1

        try:
            result = self.session.call_tool(
                name,
                arguments,
                timeout=timeout,
                task=task,
                on_progress=progressed,
                max_total_timeout=timeout * PROGRESS_EXTENDS,
            )
        except ToolError as exc:
            return Reply(result={"content": exc.content, "isError": True}, progress=progress)
        except Timeout:
            return Reply(timed_out=True, progress=progress)
        except ServerExited as exc:
            return Reply(gone=str(exc))
        except ProtocolError as exc:
            if exc.code == 0:  # not an error the server sent: a broken frame
                return Reply(gone=str(exc))
            message = exc.message.removeprefix("tools/call: ")
            return Reply(error={"code": exc.code, "message": message})
        except (McpError, OSError) as exc:
            return Reply(gone=str(exc))
        return Reply(result=result)

    def restart(self) -> None:
        self.close()
        self.start()

    def close(self) -> None:
        if self.session is not None:
            count, first = self.session.stray_lines
            self.stray_lines += count
            self.first_stray_line = self.first_stray_line or first
            with contextlib.suppress(Exception):
                self.session.close()
            self.session = None


@dataclass
class _Trace:
    crash: str | None = None
    returned: Any = UNSET


class InProcessTarget(SessionTarget):
    """An implementation object behind its generated package's server path."""

    def __init__(
        self, server_module: Any, impl: object, *, description: str, timeout: float
    ) -> None:
        from mcpgen_runtime.server.stdio import serve_streams

        app = server_module.build_app(impl)
        self._trace = _Trace()
        for tool in app.tools.values():
            tool.handler = self._recording(tool.handler)
        super().__init__(
            serve=lambda i, o: serve_streams(app, i, o), description=description, timeout=timeout
        )

    def _recording(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
                trace = self._trace
                try:
                    value = await handler(*args, **kwargs)
                except ToolError:
                    raise
                except BaseException as exc:
                    trace.crash = _describe(exc)
                    raise
                trace.returned = value
                return value

            return wrapped_async

        @functools.wraps(handler)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            trace = self._trace
            try:
                value = handler(*args, **kwargs)
            except ToolError:
                raise
            except BaseException as exc:
                trace.crash = _describe(exc)
                raise
            trace.returned = value
            return value

        return wrapped

    def call(
        self, name: str, arguments: dict[str, Any], timeout: float, *, task: bool = False
    ) -> Reply:
        self._trace = trace = _Trace()
        # the runtime reports a handler's traceback on stderr (the report says it instead),
        # and a handler's print must not land in the report on stdout
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            reply = super().call(name, arguments, timeout, task=task)
        reply.crash, reply.returned = trace.crash, trace.returned
        return reply


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
