"""AgentHop as an Inspect task: ``inspect eval agenthop/agenthop`` (docs/inspect.md).

This package is the only code of AgentHop that imports inspect_ai. Inspect loads it
through the ``inspect_ai`` entry point in pyproject.toml; it needs the ``[inspect]``
extra (``pip install -e ".[inspect]"``).
"""

try:
    import inspect_ai  # noqa: F401
except ImportError as exc:  # pragma: no cover - run in a subprocess by tests/inspect_task/test_inspect_optional.py
    raise ImportError(
        'agenthop.inspect_task needs inspect-ai, which is not installed. Install the extra: pip install -e ".[inspect]"'
    ) from exc

# Importing this package registers the task, solver, scorer and run-end hook. It stays light: the modules that
# import MCP, OpenAI, search and the server (dataset, options, loop, tools) load only when a task is built.
from agenthop.inspect_task import servers  # noqa: F401  (registers the run-end hook)
from agenthop.inspect_task.scorer import agenthop_answer
from agenthop.inspect_task.solver import agenthop_agent
from agenthop.inspect_task.task import agenthop

__all__ = ["agenthop", "agenthop_agent", "agenthop_answer"]
