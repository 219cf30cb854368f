"""Observability: OpenTelemetry spans and metrics per the MCP semantic conventions, and
the server's request log, recorded by the shells (never by the sans-I/O cores)."""
