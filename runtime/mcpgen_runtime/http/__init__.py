"""Streamable HTTP: the only part that imports the official MCP SDK and the ASGI stack."""
