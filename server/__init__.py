"""agenthop.server: the metered MCP sandbox, its checkpoint log and its record formats (docs/python-api.md).

The public API is ``__all__`` below; every other name is private by convention. Names are
imported on first use, so ``import agenthop.server`` (and any submodule) stays light: the MCP
stack loads only with ``serve``, ``ServerThread`` or ``serve_play``.

    from agenthop.server import serve, read_log, CallRecord
"""

from __future__ import annotations

from agenthop._exports import lazy_exports

_WHERE = {
    # serving
    "serve": "agenthop.server.serving",
    "ServeError": "agenthop.server.serving",
    "ServerThread": "agenthop.server.http",
    "ExposureError": "agenthop.server.http",
    "serve_play": "agenthop.server.play",
    "PlayOptions": "agenthop.server.play",
    "PlayOptionsError": "agenthop.server.play",
    "Caps": "agenthop.server.caps",
    # the checkpoint log
    "read_log": "agenthop.server.checkpoint",
    "read_records": "agenthop.server.checkpoint",
    "run_labels": "agenthop.server.checkpoint",
    "default_log_path": "agenthop.server.checkpoint",
    "LogError": "agenthop.server.checkpoint",
    "LOG_FORMAT_VERSION": "agenthop.server.checkpoint",
    # the records of a run, shared by the writers and the readers
    "SessionStart": "agenthop.server.log_records",
    "CallRecord": "agenthop.server.log_records",
    "SessionEnd": "agenthop.server.log_records",
    "RunStart": "agenthop.server.log_records",
    "AttemptStart": "agenthop.server.log_records",
    "Turn": "agenthop.server.log_records",
    "AttemptError": "agenthop.server.log_records",
    "ItemEnd": "agenthop.server.log_records",
    "log_schema": "agenthop.server.log_records",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
