"""Who holds each participant name on /play: the SHA-256 of a key, kept in the checkpoint log's database.

A name becomes a browser's for good (a row of ``play_keys``) with its first attempt, or with enrolment in a study:
from then on only that key lists, starts or acts on the name's attempts, on this server process and the next one
on the same log. A listing alone reserves the name in memory only (``provisional``), so that the page can show the
key before the first attempt; those reservations are bounded, the least recently used go first, and a restart
forgets them. Nothing that holds an attempt is ever freed: a name whose attempts the log holds without a kept key
(logged before keys were kept, or under ``--participant``) is refused to newcomers, since its owner cannot be told.

Keys themselves are never stored: only their SHA-256, compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path

from agenthop.server.log.checkpoint import WRITE_WAIT_S, LogError, describe_failure

_DDL = """
CREATE TABLE IF NOT EXISTS play_keys (
    participant TEXT PRIMARY KEY,
    key_sha256  TEXT NOT NULL,
    claimed     REAL NOT NULL,
    study       TEXT
)
"""


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class KeyStore:
    """Kept claims in the log database, provisional ones in memory (at most ``provisional_kept``)."""

    def __init__(self, log_path: str | Path, provisional_kept: int, wait_s: float = WRITE_WAIT_S):
        # Waits for a locked log as long as a checkpoint record would, then fails as one would (LogError: a 503).
        self._conn = sqlite3.connect(Path(log_path), check_same_thread=False, timeout=wait_s, isolation_level=None)
        try:
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.execute(_DDL)
        except sqlite3.Error as exc:
            self._conn.close()
            raise LogError(describe_failure(exc)) from exc
        self._provisional: OrderedDict[str, str] = OrderedDict()
        self.provisional_kept = max(1, provisional_kept)
        self.lock = threading.Lock()  # held by callers around a look-up and the claim that follows it

    def kept(self, participant: str) -> str | None:
        row = self._conn.execute("SELECT key_sha256 FROM play_keys WHERE participant = ?", (participant,)).fetchone()
        return row[0] if row else None

    def study_of(self, participant: str) -> str | None:
        row = self._conn.execute("SELECT study FROM play_keys WHERE participant = ?", (participant,)).fetchone()
        return row[0] if row else None

    def claimed_at(self, participant: str) -> float | None:
        row = self._conn.execute("SELECT claimed FROM play_keys WHERE participant = ?", (participant,)).fetchone()
        return row[0] if row else None

    def enrolled(self, study: str) -> list[str]:
        """The participants enrolled in ``study``, in the order they enrolled (their position balances assignment)."""
        rows = self._conn.execute("SELECT participant FROM play_keys WHERE study = ? ORDER BY claimed, rowid", (study,))
        return [r[0] for r in rows]

    def provisional(self, participant: str) -> str | None:
        held = self._provisional.get(participant)
        if held is not None:
            self._provisional.move_to_end(participant)
        return held

    def reserve(self, participant: str, key_digest: str) -> None:
        self._provisional[participant] = key_digest
        while len(self._provisional) > self.provisional_kept:
            self._provisional.popitem(last=False)

    def keep(self, participant: str, key_digest: str, study: str | None = None) -> None:
        """Make the claim lasting (a durable write: the name is this key's after a crash too)."""
        try:
            self._conn.execute(
                "INSERT INTO play_keys(participant, key_sha256, claimed, study) VALUES (?, ?, ?, ?)",
                (participant, key_digest, time.time(), study),
            )
        except sqlite3.Error as exc:
            raise LogError(describe_failure(exc)) from exc
        self._provisional.pop(participant, None)

    @staticmethod
    def matches(held: str, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(held, digest(presented))

    def close(self) -> None:
        self._conn.close()
