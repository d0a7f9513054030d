"""agenthop.server: the metered MCP sandbox, its checkpoint log and its record formats (docs/python-api.md).

The public API is ``__all__`` below; every other name is private by convention. Names are
imported on first use, so ``import agenthop.server`` (and any submodule) stays light: the MCP
stack loads only with ``serve``, ``ServerThread`` or ``serve_play``.

    from agenthop.server import serve, read_log, CallRecord

Where things are: the sandbox itself at this package's root (``sessions``: budgets and the
one metered call path; ``tools``, ``search``, ``papers``, ``sections``: the seven tools;
``caps``, ``task``, ``result_schema``), ``log/`` (the checkpoint log and the records of a run,
the contract the runner and the scorer read), ``transport/`` (MCP over stdio and Streamable
HTTP, the session API), ``play/`` (the /play page), ``explore/`` (explore mode), ``corpus_schema`` (the corpus
file's tables). Building corpus files is ``agenthop.corpus``, beside this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthop._exports import lazy_exports

# The names as the checker sees them (``X as X``: re-exported); at run time __getattr__ imports each on first use.
if TYPE_CHECKING:
    from agenthop.server.caps import Caps as Caps
    from agenthop.server.log.checkpoint import LOG_FORMAT_VERSION as LOG_FORMAT_VERSION
    from agenthop.server.log.checkpoint import LogError as LogError
    from agenthop.server.log.checkpoint import default_log_path as default_log_path
    from agenthop.server.log.checkpoint import read_log as read_log
    from agenthop.server.log.checkpoint import read_records as read_records
    from agenthop.server.log.checkpoint import run_labels as run_labels
    from agenthop.server.log.records import AttemptError as AttemptError
    from agenthop.server.log.records import AttemptStart as AttemptStart
    from agenthop.server.log.records import CallRecord as CallRecord
    from agenthop.server.log.records import ItemEnd as ItemEnd
    from agenthop.server.log.records import RunStart as RunStart
    from agenthop.server.log.records import SessionEnd as SessionEnd
    from agenthop.server.log.records import SessionStart as SessionStart
    from agenthop.server.log.records import Turn as Turn
    from agenthop.server.log.records import log_schema as log_schema
    from agenthop.server.play.routes import PlayOptions as PlayOptions
    from agenthop.server.play.routes import PlayOptionsError as PlayOptionsError
    from agenthop.server.play.serve import serve_play as serve_play
    from agenthop.server.transport.http import ExposureError as ExposureError
    from agenthop.server.transport.http import ServerThread as ServerThread
    from agenthop.server.transport.serving import ServeError as ServeError
    from agenthop.server.transport.serving import serve as serve

_WHERE = {
    # serving
    "serve": "agenthop.server.transport.serving",
    "ServeError": "agenthop.server.transport.serving",
    "ServerThread": "agenthop.server.transport.http",
    "ExposureError": "agenthop.server.transport.http",
    "serve_play": "agenthop.server.play.serve",
    "PlayOptions": "agenthop.server.play.routes",
    "PlayOptionsError": "agenthop.server.play.routes",
    "Caps": "agenthop.server.caps",
    # the checkpoint log
    "read_log": "agenthop.server.log.checkpoint",
    "read_records": "agenthop.server.log.checkpoint",
    "run_labels": "agenthop.server.log.checkpoint",
    "default_log_path": "agenthop.server.log.checkpoint",
    "LogError": "agenthop.server.log.checkpoint",
    "LOG_FORMAT_VERSION": "agenthop.server.log.checkpoint",
    # the records of a run, shared by the writers and the readers
    "SessionStart": "agenthop.server.log.records",
    "CallRecord": "agenthop.server.log.records",
    "SessionEnd": "agenthop.server.log.records",
    "RunStart": "agenthop.server.log.records",
    "AttemptStart": "agenthop.server.log.records",
    "Turn": "agenthop.server.log.records",
    "AttemptError": "agenthop.server.log.records",
    "ItemEnd": "agenthop.server.log.records",
    "log_schema": "agenthop.server.log.records",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
