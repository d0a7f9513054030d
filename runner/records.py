"""runner.jsonl: the runner's own records (docs/log-format.md), and reading them back for resume.

The records are the models of agenthop.server.log.records (``RunStart``, ``AttemptStart``,
``Turn``, ``AttemptError``, ``ItemEnd``): the runner builds each record as its model, so a
record that does not fit the format fails where it is made, never in the scorer.

Every record is one JSON line, appended by a writer thread so that no write or fsync
ever blocks the event loop. ``write`` queues a record and returns at once; the thread
appends everything queued in one ``write(2)`` and one fsync (a group commit), and
``await durable()`` returns once every record queued so far is on disk. The runner
awaits it where resume depends on a record (``attempt_start`` before the agent moves,
``item_end`` before the item counts as done), so a crash loses at most the records of
the batch being written, never one the run acted on; a torn last line is ignored when
reading.

Several processes may append to one file (``--processes``): each batch is one
``write(2)`` on an ``O_APPEND`` descriptor under an exclusive ``flock``, so lines of
different processes never interleave.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from agenthop.server.log import record_dict

RUNNER_FILE = "runner.jsonl"


class RecordWriter:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._cond = threading.Condition()
        self._queue: list[bytes] = []
        self._queued = 0  # records queued since the writer opened
        self._written = 0  # of those, records on disk (fsynced)
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._error: OSError | None = None
        self._closing = False
        # A previous run killed mid-write may have left a torn last line: start on a fresh one.
        with _locked(self._fd):
            if os.fstat(self._fd).st_size > 0:
                with open(self.path, "rb") as fh:
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":
                        _write_all(self._fd, b"\n")
        self._thread = threading.Thread(target=self._drain, name="runner-records", daemon=True)
        self._thread.start()

    def write(self, record: BaseModel | dict) -> None:
        """Queue one record; it reaches the file (fsynced) within one batch. Never blocks on I/O.

        The runner writes models of agenthop.server.log.records (validated when they are made), so
        every line fits docs/log-format.schema.json; a dict is written as it is (``time`` added).
        """
        if isinstance(record, BaseModel):
            record = record_dict(record)
        else:
            record.setdefault("time", time.time())
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8", "surrogatepass")
        with self._cond:
            if self._closing:
                raise ValueError(f"{self.path}: the record writer is closed")
            self._queue.append(line)
            self._queued += 1
            self._cond.notify()

    async def durable(self) -> None:
        """Return once every record queued so far is on disk; raise the OSError that prevented it."""
        loop = asyncio.get_running_loop()
        with self._cond:
            target = self._queued
            if self._error is not None:
                raise self._error
            if self._written >= target:
                return
            future = loop.create_future()
            self._waiters.append((target, loop, future))
        await future

    def _drain(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue, []
            error = None
            try:
                with _locked(self._fd):
                    size = os.fstat(self._fd).st_size
                    try:
                        _write_all(self._fd, b"".join(batch))
                    except OSError:
                        os.ftruncate(self._fd, size)  # no half-written batch: the retry appends it whole
                        raise
                os.fsync(self._fd)
            except OSError as exc:  # e.g. a full disk: waiters hear of it, the batch is tried again
                error = exc
            with self._cond:
                if error is None:
                    self._written += len(batch)
                    self._error = None
                else:
                    self._error = error
                    self._queue[:0] = batch
                ready = [w for w in self._waiters if error is not None or w[0] <= self._written]
                self._waiters = [w for w in self._waiters if w not in ready]
                give_up = error is not None and self._closing
            for _, loop, future in ready:
                loop.call_soon_threadsafe(_settle, future, error)
            if give_up:
                return
            if error is not None:
                time.sleep(1.0)

    def close(self) -> None:
        """Write everything queued, then close the file; raise the OSError that kept records from the disk."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify()
        self._thread.join()
        os.close(self._fd)
        if self._queue:
            raise OSError(f"{self.path}: {len(self._queue)} record(s) could not be written: {self._error}")


def _settle(future: asyncio.Future, error: OSError | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


class _locked:
    """An exclusive flock on the file for the time of one append (processes share runner.jsonl)."""

    def __init__(self, fd: int):
        self.fd = fd

    def __enter__(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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

    final: dict[str, dict] = field(default_factory=dict)  # item -> last item_end that is not error
    errored: dict[str, dict] = field(default_factory=dict)  # item -> last item_end with error (no final one)
    open_sessions: dict[str, str] = field(default_factory=dict)  # session -> item: started, but no end record
    starts: dict[str, dict] = field(default_factory=dict)  # session -> its attempt_start record
    turns: list[dict] = field(default_factory=list)


def load_state(path: str | Path) -> RunState:
    state = RunState()
    closed: set[str] = set()
    for rec in read_records(path):
        kind = rec.get("kind")
        sid = rec.get("session_id")
        # The runner writes a string item_id on every record (the models require it): one without names no item.
        item = rec.get("item_id")
        if kind == "attempt_start":
            if sid:
                state.starts[sid] = rec
                if isinstance(item, str):
                    state.open_sessions.setdefault(sid, item)
        elif kind == "turn":
            state.turns.append(rec)
            if sid and isinstance(item, str):
                state.open_sessions.setdefault(sid, item)
        elif kind in ("attempt_error", "item_end"):
            if sid:
                closed.add(sid)
            if kind == "item_end" and isinstance(item, str):
                if rec.get("termination") == "error":
                    if item not in state.final:
                        state.errored[item] = rec
                else:
                    state.final[item] = rec
                    state.errored.pop(item, None)
    for sid in closed:
        state.open_sessions.pop(sid, None)
    return state
