"""agenthop.runner: reference agents run against the sandbox, one session per item (docs/python-api.md).

Public API (stable): ``run_items`` runs a benchmark and returns a ``RunResult``
(``RunSummary`` inside); ``Caps`` and ``RetryPolicy`` configure it; ``Shard`` names a
share of the items; the errors it raises are ``RunError`` (``ResumeConflict``,
``NoItemsLeft``, ``RunLogUnwritable``), ``ItemsError``, ``ServerError`` and ``ShardError``. Everything else is
internal. Names are imported on first use, so ``import agenthop.runner.records`` (the
scorer does) stays light.
"""

from __future__ import annotations

from agenthop._exports import lazy_exports

_WHERE = {
    "run_items": "agenthop.runner.api",
    "RunResult": "agenthop.runner.api",
    "RunSummary": "agenthop.runner.summary",
    "Caps": "agenthop.server.caps",
    "RetryPolicy": "agenthop.runner.retry",
    "Shard": "agenthop.runner.sharding",
    "RunError": "agenthop.runner.run",
    "ResumeConflict": "agenthop.runner.run",
    "NoItemsLeft": "agenthop.runner.run",
    "RunLogUnwritable": "agenthop.runner.run",
    "ItemsError": "agenthop.server.item_files",
    "ServerError": "agenthop.runner.session",
    "ShardError": "agenthop.runner.sharding",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
