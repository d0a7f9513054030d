"""AgentHop: a metered MCP sandbox for diagnosing multi-hop research agents."""

__version__ = "0.1.0"
