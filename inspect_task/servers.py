"""One AgentHop HTTP server per eval: started by the first sample that needs it, stopped when Inspect's run ends.

The same run-end hook prints, for each AgentHop eval of the run, the agenthop-scorer
command that scores it (also kept in the Inspect log's task metadata).

Samples share the server and each creates its own session on it (POST /sessions),
so the corpus is opened and each item's search index built once per eval, and a
session can be ended with the reason the harness saw (turn or token cap, error).
Servers are keyed by (corpus, checkpoint log): Inspect runs one eval at a time in
a process, so the run-end hook can stop every server that is still up.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from inspect_ai.hooks import Hooks, RunEnd, hooks

if TYPE_CHECKING:
    from agenthop.server.transport.http import ServerThread

log = logging.getLogger("agenthop.inspect")

_lock = threading.Lock()
_running: dict[tuple[Path, Path], ServerThread] = {}


def server_url(corpus: Path, checkpoint_log: Path) -> str:
    """The base URL of the server for this corpus and log, starting it on first use (blocking: call off the event loop)."""
    # Imported on first use: Inspect imports this module (for the hook) in every process, AgentHop eval or not.
    from agenthop.server.transport.http import ServerThread

    key = (corpus, checkpoint_log)
    with _lock:
        server = _running.get(key)
        if server is None:
            checkpoint_log.parent.mkdir(parents=True, exist_ok=True)
            server = ServerThread(str(corpus), str(checkpoint_log)).start()
            _running[key] = server
            log.info("AgentHop server for %s at %s, checkpoint log %s", corpus, server.base_url, checkpoint_log)
        return server.base_url


def stop_all() -> None:
    """Stop every server this process started (sessions already ended keep their records: each was written durably)."""
    with _lock:
        servers = list(_running.values())
        _running.clear()
    for server in servers:
        server.stop()


def running() -> int:
    with _lock:
        return len(_running)


def score_hints(data: RunEnd) -> list[str]:
    """One line per AgentHop eval of the run: its run label, checkpoint log and the command that scores it."""
    lines = []
    for eval_log in data.logs:
        meta = (eval_log.eval.metadata or {}).get("agenthop")
        if isinstance(meta, dict) and meta.get("score_with"):
            lines.append(
                f"AgentHop run {meta['run']!r} (checkpoint log {meta['checkpoint_log']}); score it with: {meta['score_with']}"
            )
    return lines


@hooks(
    name="agenthop",
    description="Stops the AgentHop servers an eval started and prints how to score each AgentHop eval.",
)
class AgentHopRunEnd(Hooks):
    def enabled(self) -> bool:
        # Inspect loads every extension's hooks for every eval, and lists the enabled ones when it starts:
        # this one only has work (and only shows) once an AgentHop server is up.
        return bool(_running)

    async def on_run_end(self, data: RunEnd) -> None:
        await anyio.to_thread.run_sync(stop_all)
        for line in score_hints(data):
            print(line, file=sys.stderr)  # stderr: Inspect's display is done by now, and stdout may be piped


# A process that ends without Inspect's run-end hook (a crash, a bare solver test) still closes its logs.
atexit.register(stop_all)
