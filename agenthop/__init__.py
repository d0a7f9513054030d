"""AgentHop: a metered MCP sandbox for diagnosing multi-hop research agents.

The Python API lives in the three packages that match the three commands (docs/python-api.md):
``agenthop.server`` (agenthop-server: serve, logs; ``agenthop.corpus`` builds corpora),
``agenthop.runner`` (agenthop-runner: ``run_items``) and ``agenthop.scorer`` (agenthop-scorer:
``score``, ``compare``, ``load_run``). This top-level package re-exports none of them, so an
import names the component that does the work; it holds only the version.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
