"""agenthop.runner: reference agents run against the sandbox, one session per item.

Public API (stable): ``run_items`` runs a benchmark and returns a ``RunResult``
(``RunSummary`` inside); ``Caps`` and ``RetryPolicy`` configure it; ``Shard`` names a
share of the items. Everything else is internal. Names are imported on first use, so
``import agenthop.runner.records`` (the scorer does) stays light.
"""

from __future__ import annotations

__all__ = ["run_items", "RunResult", "RunSummary", "RunError", "Caps", "RetryPolicy", "Shard"]

_WHERE = {
    "run_items": "agenthop.runner.api",
    "RunResult": "agenthop.runner.api",
    "RunSummary": "agenthop.runner.run",
    "RunError": "agenthop.runner.run",
    "Caps": "agenthop.server.sessions",
    "RetryPolicy": "agenthop.runner.retry",
    "Shard": "agenthop.runner.sharding",
}


def __getattr__(name: str):
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'agenthop.runner' has no attribute {name!r}")
