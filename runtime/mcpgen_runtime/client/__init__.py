"""The client: the sessions generated clients call.

``sync.Session`` (threads) and ``aio.AsyncSession`` (asyncio) pick the protocol era
(a ``server/discover`` probe, falling back to the ``initialize`` handshake), check the
server's tools against the contract and make ``tools/list``/``tools/call`` requests
over any line transport; tool calls that run as tasks on the server are followed
through ``sync.TaskHandle``/``aio.AsyncTaskHandle``. Both are thin shells around
``core.ClientCore`` and run the protocol flows of ``flows`` (``negotiate`` for the
era); they differ only in how a caller waits for its response (a lock vs. a
future). ``base`` holds what both sessions share, ``listing``, ``tasks`` and
``results`` the listed tools, task state and result conversion.

This ``__init__`` imports nothing, so importing one of these modules (the sans-I/O
``core`` or ``flows``) does not load the sessions and their transports. Import a name
from the module that defines it, or from the public surface (``mcpgen_runtime.Session``).
"""
