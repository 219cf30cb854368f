"""Streamable HTTP: mcpgen's own ASGI app (``server``, ``app``, ``exchange``) and the
guards that bound each connection on uvicorn; the only part that imports uvicorn.
Nothing here imports the official MCP SDK."""
