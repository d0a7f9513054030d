"""The checkpoint log: one durable record per tool call, plus session start and end.

The log is an SQLite file in WAL mode with ``synchronous=FULL``: a record is on
disk when ``write`` returns, and the server writes it before it returns the
tool result, so no acknowledged call can be lost to a crash. Several server
processes (one per stdio session) may share one file; SQLite serialises them.

Each record is a JSON object (see docs/log-format.md); a few fields are copied
into columns so runs, sessions and items can be queried without parsing JSON.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

LOG_FORMAT_VERSION = 1


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


class LogError(Exception):
    """The log file cannot be used; the message says why."""


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and "log_meta" not in tables:
        # Another SQLite file (a corpus passed as --log by mistake): never add tables to it or switch it to WAL.
        conn.close()
        raise LogError(f"{path} is an SQLite file but not a checkpoint log (it has tables {sorted(tables)[:5]}); "
                       "pass --log with a new file path.")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


class CheckpointLog:
    """Appends records durably; safe to share between threads and processes."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = _connect(self.path)
            self._conn.executescript(_DDL)
            self._conn.execute(
                "INSERT OR IGNORE INTO log_meta(key, value) VALUES ('log_format_version', ?)", (str(LOG_FORMAT_VERSION),)
            )
            version = self._conn.execute("SELECT value FROM log_meta WHERE key = 'log_format_version'").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise LogError(f"cannot use {self.path} as a checkpoint log ({exc}); pass --log with a new file path.") from exc
        if version != str(LOG_FORMAT_VERSION):
            self._conn.close()
            raise LogError(f"{self.path} is a checkpoint log of format version {version}; this AgentHop writes version "
                           f"{LOG_FORMAT_VERSION}. Pass --log with a new file path.")
        self._lock = threading.Lock()

    def write(self, record: dict) -> None:
        """Write one record; it is durable when this returns."""
        row = (
            record.get("run"),
            record.get("session_id"),
            record.get("item_id"),
            record.get("seq"),
            record["kind"],
            record.get("tool"),
            record.get("outcome"),
            json.dumps(record, ensure_ascii=False, sort_keys=True),
        )
        with self._lock:
            self._conn.execute(
                "INSERT INTO records(run, session_id, item_id, seq, kind, tool, outcome, record) VALUES (?,?,?,?,?,?,?,?)",
                row,
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def read_records(path: str | Path, run: str | None = None) -> Iterator[dict]:
    """Yield the records of a log in write order, optionally of one run label."""
    path = Path(path)
    if not path.exists():
        raise LogError(f"log file not found: {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        query = "SELECT record FROM records"
        args: tuple = ()
        if run is not None:
            query += " WHERE run = ?"
            args = (run,)
        for (text,) in conn.execute(query + " ORDER BY id", args):
            yield json.loads(text)
    except sqlite3.DatabaseError as exc:
        raise LogError(f"{path} is not a readable checkpoint log ({exc}).") from exc
    finally:
        try:
            conn.close()
        except UnboundLocalError:
            pass


def run_labels(path: str | Path) -> list[str]:
    path = Path(path)
    if not path.exists():
        raise LogError(f"log file not found: {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return [r[0] for r in conn.execute("SELECT DISTINCT run FROM records WHERE run IS NOT NULL ORDER BY run")]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise LogError(f"{path} is not a readable checkpoint log ({exc}).") from exc
