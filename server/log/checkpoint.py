"""The checkpoint log: one durable record per tool call, plus session start and end.

The log is an SQLite file in WAL mode with ``synchronous=FULL``. One writer
thread per log commits records in batches (group commit): every record waiting
when a transaction starts goes into it, and each writer of a record is woken
only after that transaction's fsync, so a record is on disk when ``write``
returns and the server still writes it before it returns the tool result. No
acknowledged call can be lost to a crash. Callers block only their own thread,
never the event loop (async code calls ``write`` through a worker thread).

When the log cannot be written (another process holds its write lock, the disk
is full), the writer retries until each record's wait runs out
(``write_wait_s``), then ``write`` raises ``LogUnavailable`` naming the cause;
the caller must then act as if the call never happened (sessions.py refuses it,
charging nothing). Several server processes (one per stdio session) may share
one file; SQLite serialises them.

Each record is a JSON object (records.py, docs/log-format.md); a few fields
are copied into columns so runs, sessions and items can be queried without
parsing JSON.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from agenthop.server.log import jsontext
from agenthop.server.log.records import CallRecord, SessionEnd, SessionStart, checkpoint_adapter, record_dict

LOG_FORMAT_VERSION = 1
WRITE_WAIT_S = 10.0  # how long a record may wait for a locked or failing log; below the 30 s call deadline
_ATTEMPT_BUSY_MS = 250  # SQLite's busy wait per attempt: short, so deadlines are checked between attempts
_RETRY_PAUSE_S = 0.2  # between attempts that failed at once (a full disk)

log = logging.getLogger("agenthop.server")

_DDL = """
CREATE TABLE IF NOT EXISTS log_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run        TEXT,
    session_id TEXT,
    item_id    TEXT,
    seq        INTEGER,
    kind       TEXT NOT NULL,
    tool       TEXT,
    outcome    TEXT,
    record     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_run ON records(run, session_id, seq);
CREATE INDEX IF NOT EXISTS records_session ON records(session_id, seq);
"""
_INSERT = "INSERT INTO records(run, session_id, item_id, seq, kind, tool, outcome, record) VALUES (?,?,?,?,?,?,?,?)"


class LogError(Exception):
    """The log file cannot be used; the message says why."""


class LogUnavailable(LogError):
    """Records could not be written within their wait; nothing of them is on disk."""


class LogPathError(LogError):
    """The log cannot be created where it was asked for (its directory cannot be made)."""


def default_log_path() -> Path:
    """Where a server logs when it is given no log path: the per-user data directory, whatever the working directory.

    Hosts such as Claude Desktop start servers in arbitrary, often unwritable, directories. On Linux this is
    $XDG_DATA_HOME/agenthop (by default ~/.local/share/agenthop); on macOS ~/Library/Application Support/agenthop;
    on Windows %LOCALAPPDATA%\\agenthop.
    """
    import platformdirs

    return platformdirs.user_data_path("agenthop", appauthor=False) / "agenthop-log.sqlite"


def describe_failure(exc: sqlite3.Error) -> str:
    """What an SQLite error means for the operator."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"the checkpoint log is locked by another process or connection ({text})"
    if "full" in text:
        return f"the disk holding the checkpoint log is full ({text})"
    if "readonly" in text or "read-only" in text:
        return f"the checkpoint log has become read-only ({text})"
    return f"the checkpoint log cannot be written ({text})"


def _column(value) -> object:
    """A column copy of a field: SQLite cannot bind a str with a lone surrogate (the JSON record keeps it exactly)."""
    return jsontext.replace_lone_surrogates(value) if isinstance(value, str) else value


def encode(record: BaseModel | dict) -> tuple:
    """The row for a record. Strict JSON: NaN and Infinity are stored as strings; lone surrogates as escapes."""
    data = record_dict(record) if isinstance(record, BaseModel) else record
    try:
        text = jsontext.dumps(data, sort_keys=True)
    except ValueError:  # NaN or Infinity somewhere (writers normally remove them first)
        text = jsontext.dumps(jsontext.finite(data)[0], sort_keys=True)
    return (
        _column(data.get("run")),
        _column(data.get("session_id")),
        _column(data.get("item_id")),
        data.get("seq"),
        data["kind"],
        _column(data.get("tool")),
        data.get("outcome"),
        text,
    )


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and "log_meta" not in tables:
        # Another SQLite file (a corpus given as the log by mistake): never add tables to it or switch it to WAL.
        conn.close()
        raise LogError(
            f"{path} is an SQLite file but not a checkpoint log (it has tables {sorted(tables)[:5]}); "
            "use a new file path for the log."
        )
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    return conn


@dataclass(eq=False)  # compared by identity
class _Batch:
    """Records that must be committed together (a call and the session end it causes), and their fate."""

    rows: list[tuple]
    deadline: float
    done: bool = False
    error: LogUnavailable | None = None


@dataclass
class LogStatus:
    """What /health reports about the log."""

    failing: str | None = None  # the last failure, until a commit succeeds again
    since: float | None = None
    waiting: int = 0  # batches queued or being retried
    committed: int = 0  # transactions committed by this process
    records: int = 0  # records written by this process


class CheckpointLog:
    """Appends records durably through one group-committing writer thread; safe to share between threads and processes."""

    def __init__(self, path: str | Path, *, write_wait_s: float = WRITE_WAIT_S):
        self.path = Path(path)
        self.write_wait_s = write_wait_s
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LogPathError(
                f"cannot create the checkpoint log {self.path}: {exc.strerror}; give a writable path"
            ) from exc
        try:
            self._conn = _connect(self.path)
            self._conn.executescript(_DDL)
            self._conn.execute(
                "INSERT OR IGNORE INTO log_meta(key, value) VALUES ('log_format_version', ?)",
                (str(LOG_FORMAT_VERSION),),
            )
            version = self._conn.execute("SELECT value FROM log_meta WHERE key = 'log_format_version'").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            if getattr(self, "_conn", None) is not None:
                self._conn.close()
            raise LogError(
                f"cannot use {self.path} as a checkpoint log ({exc}); use a new file path for the log."
            ) from exc
        if version != str(LOG_FORMAT_VERSION):
            self._conn.close()
            raise LogError(
                f"{self.path} is a checkpoint log of format version {version}; this AgentHop writes version "
                f"{LOG_FORMAT_VERSION}. Use a new file path for the log."
            )
        self._conn.execute(f"PRAGMA busy_timeout = {_ATTEMPT_BUSY_MS}")
        self._conn.execute(
            "PRAGMA cache_size = -512"
        )  # KiB; an append-only writer needs few pages, and memory stays flat
        self.status = LogStatus()
        self._cond = threading.Condition()
        self._queue: list[_Batch] = []
        self._closed = False
        self._closing = threading.Event()
        self._writer = threading.Thread(target=self._run, name=f"agenthop-log-{self.path.name}", daemon=True)
        self._writer.start()

    # --- writing --------------------------------------------------------------------------------------------

    def write(self, record: BaseModel | dict) -> None:
        """Write one record; it is durable when this returns. Raises LogUnavailable (nothing written) on failure."""
        self.write_all([record])

    def write_all(self, records: list[BaseModel | dict]) -> None:
        """Write records in one transaction: all are durable when this returns, or none is written (LogUnavailable)."""
        batch = _Batch([encode(r) for r in records], time.monotonic() + self.write_wait_s)
        with self._cond:
            if self._closed:
                raise LogError(f"the checkpoint log {self.path} is closed")
            self._queue.append(batch)
            self.status.waiting += 1
            self._cond.notify_all()
            while not batch.done:
                self._cond.wait()
        if batch.error is not None:
            raise batch.error

    def _run(self) -> None:
        pending: list[_Batch] = []
        while True:
            with self._cond:
                while not self._queue and not pending and not self._closed:
                    self._cond.wait()
                if self._closed and not self._queue and not pending:
                    return
                pending += self._queue  # oldest first; a retried batch keeps its place
                self._queue = []
            error = self._commit(pending)
            if error is not None and not isinstance(error, sqlite3.Error):
                pending, error = self._commit_one_by_one(pending)
            if error is None:
                self._finish(pending, None)
                pending = []
                continue
            reason = describe_failure(error)
            if self.status.failing != reason:
                log.warning(
                    "cannot write the checkpoint log %s: %s; retrying for up to %g s per record",
                    self.path,
                    reason,
                    self.write_wait_s,
                )
            now = time.monotonic()
            expired = [b for b in pending if b.deadline <= now or self._closing.is_set()]  # closing: no more retries
            pending = [b for b in pending if b not in expired]
            with self._cond:
                self.status.failing, self.status.since = reason, self.status.since or time.time()
            self._finish(expired, LogUnavailable(reason))
            if pending:
                self._closing.wait(_RETRY_PAUSE_S)  # a pause that only close() cuts short (new records do not)

    def _commit_one_by_one(self, batches: list[_Batch]) -> tuple[list[_Batch], sqlite3.Error | None]:
        """After an error that is not the log's: commit each batch alone, so that only a record SQLite cannot store
        (an integer over 64 bits, say) fails, at once and with that reason. Returns the batches left and the log's error."""
        left, error = [], None
        for batch in batches:
            failure = self._commit([batch])
            if failure is None:
                self._finish([batch], None)
            elif isinstance(failure, sqlite3.Error):
                left.append(batch)
                error = failure
            else:
                self._finish(
                    [batch],
                    LogUnavailable(
                        f"a record cannot be stored in the checkpoint log ({type(failure).__name__}: {failure})"
                    ),
                )
        return left, error

    def _commit(self, batches: list[_Batch]) -> Exception | None:
        """One transaction, one fsync, for every row of every batch. Any error is returned: the writer thread must live."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            for batch in batches:
                self._conn.executemany(_INSERT, batch.rows)
            self._conn.execute("COMMIT")
            return None
        except Exception as exc:  # sqlite3.Error: the log; anything else (OverflowError binding a value): a record
            if self._conn.in_transaction:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            return exc

    def _finish(self, batches: list[_Batch], error: LogUnavailable | None) -> None:
        if not batches:
            return
        with self._cond:
            for batch in batches:
                batch.done, batch.error = True, error
            self.status.waiting -= len(batches)
            if error is None:
                if self.status.failing is not None:
                    log.warning("the checkpoint log %s is writable again", self.path)
                self.status.failing = self.status.since = None
                self.status.committed += 1
                self.status.records += sum(len(b.rows) for b in batches)
            self._cond.notify_all()

    def close(self) -> None:
        """Write what is queued (one more attempt if the log is failing), stop the writer and close the file."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        self._closing.set()
        self._writer.join()
        self._conn.close()

    # --- reading (a separate read-only connection: WAL readers never wait for the writer) ----------------------

    def session_records(self, session_id: str) -> list[dict]:
        """Every record of one session, in write order."""
        return list(_query(self.path, "SELECT record FROM records WHERE session_id = ? ORDER BY id", (session_id,)))


def _texts(path: Path, sql: str, args: tuple = ()) -> Iterator[str]:
    if not path.exists():
        raise LogError(f"log file not found: {path}")
    conn = None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        for (text,) in conn.execute(sql, args):
            yield text
    except sqlite3.DatabaseError as exc:
        raise LogError(f"{path} is not a readable checkpoint log ({exc}).") from exc
    finally:
        if conn is not None:
            conn.close()


def _query(path: Path, sql: str, args: tuple = ()) -> Iterator[dict]:
    return map(json.loads, _texts(path, sql, args))


def _record_texts(path: str | Path, run: str | None) -> Iterator[str]:
    if run is None:
        return _texts(Path(path), "SELECT record FROM records ORDER BY id")
    return _texts(Path(path), "SELECT record FROM records WHERE run = ? ORDER BY id", (run,))


def read_records(path: str | Path, run: str | None = None) -> Iterator[dict]:
    """Yield the records of a log in write order as dicts, optionally of one run label."""
    return map(json.loads, _record_texts(path, run))


def read_log(path: str | Path, run: str | None = None) -> Iterator[SessionStart | CallRecord | SessionEnd]:
    """Yield the records of a log in write order as typed models (records.SessionStart, CallRecord, SessionEnd).

    Each record is validated strictly (no type coercion), as the scorer's fast reader does.
    Raises pydantic.ValidationError on a record that is not a checkpoint record of this format.
    """
    for text in _record_texts(path, run):
        yield checkpoint_adapter.validate_json(text, strict=True)


def run_labels(path: str | Path) -> list[str]:
    return [r[0] for r in _rows(path, "SELECT DISTINCT run FROM records WHERE run IS NOT NULL ORDER BY run")]


def unlabelled_sessions(path: str | Path) -> int:
    """How many sessions in the log have no run label (a server started without --run, as Desktop's often is)."""
    [(count,)] = _rows(
        path, "SELECT COUNT(DISTINCT session_id) FROM records WHERE run IS NULL AND session_id IS NOT NULL"
    )
    return count


def _rows(path: str | Path, sql: str) -> list[tuple]:
    """The rows of one read-only query; LogError when the file is missing or not a log."""
    path = Path(path)
    if not path.exists():
        raise LogError(f"log file not found: {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return list(conn.execute(sql))
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise LogError(f"{path} is not a readable checkpoint log ({exc}).") from exc
