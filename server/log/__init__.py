"""agenthop.server.log: the checkpoint log and the records of a run, the one contract between server, runner and scorer.

The server writes ``session_start``, ``call`` and ``session_end`` records to the checkpoint
log; the runner writes its own records to ``runner.jsonl``; the scorer reads both. Every
record is defined once (``records``: pydantic models, from which the JSON Schema of
docs/log-format.schema.json is generated), with fast msgspec twins for readers (``structs``).
The runner and the scorer import the log from this package and nowhere else in the server.

- ``checkpoint``: the durable writer (``CheckpointLog``) and the readers (``read_log``, ``read_records``, ``run_labels``).
- ``records``: the record models and ``log_schema``.
- ``structs``: the same records as msgspec Structs, for reading many quickly.
- ``jsontext``: strict JSON text for records whatever strings a client sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthop._exports import lazy_exports

# The names as the checker sees them (``X as X``: re-exported); at run time __getattr__ imports each on first use.
if TYPE_CHECKING:
    from agenthop.server.log.checkpoint import LOG_FORMAT_VERSION as LOG_FORMAT_VERSION
    from agenthop.server.log.checkpoint import CheckpointLog as CheckpointLog
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
    from agenthop.server.log.records import record_dict as record_dict

_WHERE = {
    "CheckpointLog": "agenthop.server.log.checkpoint",
    "read_log": "agenthop.server.log.checkpoint",
    "read_records": "agenthop.server.log.checkpoint",
    "run_labels": "agenthop.server.log.checkpoint",
    "default_log_path": "agenthop.server.log.checkpoint",
    "LogError": "agenthop.server.log.checkpoint",
    "LOG_FORMAT_VERSION": "agenthop.server.log.checkpoint",
    "SessionStart": "agenthop.server.log.records",
    "CallRecord": "agenthop.server.log.records",
    "SessionEnd": "agenthop.server.log.records",
    "RunStart": "agenthop.server.log.records",
    "AttemptStart": "agenthop.server.log.records",
    "Turn": "agenthop.server.log.records",
    "AttemptError": "agenthop.server.log.records",
    "ItemEnd": "agenthop.server.log.records",
    "log_schema": "agenthop.server.log.records",
    "record_dict": "agenthop.server.log.records",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
