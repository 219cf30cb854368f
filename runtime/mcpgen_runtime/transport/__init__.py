"""I/O shells that move newline-delimited JSON lines between a client and a server:
a child process over stdio (sync and async) or a server running in this process.

Transports know nothing of JSON-RPC. Each delivers every line the server writes to
an ``on_line`` callback and calls ``on_close`` once when the server side is gone,
so the session can fail its pending requests at once instead of letting them hang.

A stdio transport bounds what one line may cost: a line longer than
``max_message_bytes`` is never buffered beyond that size. It ends the exchange
(``exit_error()`` is then a ``ProtocolError`` naming the limit, ``on_close``
fires at once) and the transport stops the server itself, reading and
discarding its output meanwhile so that a child blocked on a full pipe can die.

The code lives in ``lines`` (the ``Transport`` protocols, line framing, child
processes), ``sync`` (on threads) and ``aio`` (asyncio); this ``__init__`` imports
nothing, so a module needing one of them loads only that one.
"""
