"""mcpgen: compile a YAML contract of MCP tools into a typed Python package."""

__version__ = "0.1.0"
