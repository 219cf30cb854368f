"""The Streamable HTTP transports of the client: one POST per message, the answer read
as JSON or as a server-sent event stream, behind the same ``start``/``send``/``stop``
interface as the line transports, so the sessions and their protocol flows run over
HTTP unchanged.

``wire`` is the sans-I/O part both shells share (the headers of a message, the
session id and protocol version a server hands out, the bounded SSE parser, the
errors an HTTP answer means); ``sync`` (worker threads) and ``aio`` (asyncio tasks)
move the bytes with httpx2, the ``http`` extra. This ``__init__`` imports nothing,
so a client over stdio never loads httpx2.
"""
