"""runner.jsonl: the runner's own records (docs/log-format.md), and reading them back for resume.

Every record is one JSON line, appended, flushed and fsynced before ``write``
returns, so a crash loses at most the record being written (a torn last line
is ignored when reading).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

RUNNER_FILE = "runner.jsonl"


class RecordWriter:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._fh = open(self.path, "a", encoding="utf-8")
        # A previous run killed mid-write may have left a torn last line: start on a fresh one.
        if self.path.stat().st_size > 0:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    self._fh.write("\n")
                    self._fh.flush()

    def write(self, record: dict) -> None:
        record.setdefault("time", time.time())
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()


def read_records(path: str | Path) -> Iterator[dict]:
    """Yield the records of a runner.jsonl, skipping torn or blank lines."""
    path = Path(path)
    if not path.exists():
        return
    # A crash can tear a line inside a multi-byte character: decode leniently, the JSON check drops the line.
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # torn line from a crash
            if isinstance(rec, dict):
                yield rec


@dataclass
class RunState:
    """What an existing runner.jsonl says about a run."""

    final: dict[str, dict] = field(default_factory=dict)          # item -> last item_end that is not error
    errored: dict[str, dict] = field(default_factory=dict)        # item -> last item_end with error (no final one)
    open_sessions: dict[str, str] = field(default_factory=dict)   # session -> item: started, but no end record
    starts: dict[str, dict] = field(default_factory=dict)         # session -> its attempt_start record
    turns: list[dict] = field(default_factory=list)


def load_state(path: str | Path) -> RunState:
    state = RunState()
    closed: set[str] = set()
    for rec in read_records(path):
        kind = rec.get("kind")
        sid = rec.get("session_id")
        if kind == "attempt_start":
            if sid:
                state.starts[sid] = rec
                state.open_sessions.setdefault(sid, rec.get("item_id"))
        elif kind == "turn":
            state.turns.append(rec)
            if sid:
                state.open_sessions.setdefault(sid, rec.get("item_id"))
        elif kind in ("attempt_error", "item_end"):
            if sid:
                closed.add(sid)
            if kind == "item_end":
                item = rec.get("item_id")
                if rec.get("termination") == "error":
                    if item not in state.final:
                        state.errored[item] = rec
                else:
                    state.final[item] = rec
                    state.errored.pop(item, None)
    for sid in closed:
        state.open_sessions.pop(sid, None)
    return state
