"""memwal-mcp: long-term memory for AI agents, served over the Model Context Protocol."""

__version__ = "0.1.0"
