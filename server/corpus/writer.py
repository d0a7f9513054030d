"""Writes to the corpus being built on a second thread, so SQLite's work overlaps the parsing of the next records.

sqlite3 releases the GIL while a statement runs, so on two cores the importer
parses and checks record N+1 while SQLite stores record N. There is one
connection and it is never used by two threads at once: writes are queued in
order, and a read first waits until every queued write is done (``read``).
The queue is short, so memory stays bounded.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Iterable


class Writer:
    def __init__(self, conn: sqlite3.Connection, depth: int = 4) -> None:
        self._conn = conn
        self._jobs: queue.Queue = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="corpus writer", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                if self._error is None:  # after a failure, drain without writing
                    self._conn.executemany(*job)
            except BaseException as exc:  # re-raised in the importer's thread by the next call
                self._error = exc
            finally:
                self._jobs.task_done()

    def _raise_pending(self) -> None:
        if self._error is not None:
            raise self._error

    def many(self, sql: str, rows: Iterable[tuple]) -> None:
        """Queue ``executemany(sql, rows)``; ``rows`` must not change afterwards."""
        self._raise_pending()
        self._jobs.put((sql, rows))

    def one(self, sql: str, params: tuple = ()) -> None:
        self.many(sql, (params,))

    def read(self) -> sqlite3.Connection:
        """The connection, once every queued write is done: for reads, DDL and the final commit."""
        self._jobs.join()
        self._raise_pending()
        return self._conn

    def close(self) -> None:
        """Stop the thread (queued writes are finished first); the connection stays open."""
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()
