"""The names and numbers of the MCP wire, in one place for the server core, the
client core and the client shells.

Error codes. JSON-RPC 2.0 reserves -32768..-32000; its own five are the first block.
MCP's 2026-07-28 revision adds two in that range: -32021, a request needs a client
capability or extension the client did not declare (its ``data`` names it, e.g. the
tasks extension for a tool that runs only as a task), and -32022, the request's
protocol version is not one the server speaks (``data.supported`` lists those it
does, which is how a client picks a revision to retry at). ``SERVER_BUSY``,
``RATE_LIMITED`` and ``SHUTTING_DOWN`` are mcpgen's own, outside the reserved range.

``_meta`` keys. From 2026-07-28 there is no handshake: every request carries its
protocol version, the client's info and capabilities and, optionally, the log level
it wants, as ``_meta`` entries under the ``io.modelcontextprotocol/`` prefix;
results carry the server's info the same way. ``related-task`` ties a message to the
task it belongs to (2025-11-25 tasks and the tasks extension).
"""

from __future__ import annotations

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_RELATED_TASK",
    "META_RESERVED_PREFIX",
    "META_SERVER_INFO",
    "META_VERSION",
    "METHOD_NOT_FOUND",
    "MISSING_CAPABILITY",
    "PARSE_ERROR",
    "RATE_LIMITED",
    "SERVER_BUSY",
    "SHUTTING_DOWN",
    "TASKS_EXTENSION",
    "UNSUPPORTED_VERSION",
]

# JSON-RPC 2.0
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# MCP 2026-07-28
HEADER_MISMATCH = -32020  # an HTTP routing header disagrees with the request body
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022

# mcpgen's own code for "too many tool calls running": outside -32768..-32000, the
# range JSON-RPC and MCP reserve for themselves. The caller may retry later.
SERVER_BUSY = -31000
# mcpgen's own: the caller is over its rate limit (--rate-limit); ``data.retryAfterMs``
# says when it may send again (over HTTP also the 429's Retry-After header).
RATE_LIMITED = -31001
# mcpgen's own: the server is draining before it stops (SIGTERM); another instance
# will answer (over HTTP: 503 with Retry-After).
SHUTTING_DOWN = -31002

# The prefix of the _meta keys the protocol reserves for itself.
META_RESERVED_PREFIX = "io.modelcontextprotocol/"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_RELATED_TASK = "io.modelcontextprotocol/related-task"
# mcpgen's own _meta keys live under one prefix of its own (reverse DNS, as the MCP
# spec asks of _meta keys that are not the protocol's).
META_MCPGEN_PREFIX = "io.mcpgen/"
# The OAuth scopes a caller's token must
# hold to call a tool (the contract's `scopes`, server-wide ones included), published in
# the tool's descriptor for clients, `mcpgen diff` and the HTTP server's scope check.
META_SCOPES = META_MCPGEN_PREFIX + "scopes"

# The extension identifier a 2026-07-28 client declares to use tasks.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
