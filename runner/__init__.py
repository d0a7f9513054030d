"""agenthop.runner: reference agents run against the sandbox, one session per item (docs/python-api.md).

Public API (stable): ``run_items`` runs a benchmark and returns a ``RunResult``
(``RunSummary`` inside); ``Caps`` and ``RetryPolicy`` configure it; ``Shard`` names a
share of the items; the errors it raises are ``RunError`` (``ResumeConflict``,
``NoItemsLeft``, ``RunLogUnwritable``), ``ItemsError``, ``ServerError`` and ``ShardError``. Everything else is
internal. Names are imported on first use, so ``import agenthop.runner.records`` (the
scorer does) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthop._exports import lazy_exports

# The names as the checker sees them (``X as X``: re-exported); at run time __getattr__ imports each on first use.
if TYPE_CHECKING:
    from agenthop.llm.retry import RetryPolicy as RetryPolicy
    from agenthop.runner.api import RunResult as RunResult
    from agenthop.runner.api import run_items as run_items
    from agenthop.runner.run import NoItemsLeft as NoItemsLeft
    from agenthop.runner.run import ResumeConflict as ResumeConflict
    from agenthop.runner.run import RunError as RunError
    from agenthop.runner.run import RunLogUnwritable as RunLogUnwritable
    from agenthop.runner.session import ServerError as ServerError
    from agenthop.runner.sharding import Shard as Shard
    from agenthop.runner.sharding import ShardError as ShardError
    from agenthop.runner.summary import RunSummary as RunSummary
    from agenthop.server.caps import Caps as Caps
    from agenthop.server.item_files import ItemsError as ItemsError

_WHERE = {
    "run_items": "agenthop.runner.api",
    "RunResult": "agenthop.runner.api",
    "RunSummary": "agenthop.runner.summary",
    "Caps": "agenthop.server.caps",
    "RetryPolicy": "agenthop.llm.retry",
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
