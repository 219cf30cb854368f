"""The MCP wire: protocol constants, revisions, JSON-RPC framing, JSON pointers and fingerprints."""
