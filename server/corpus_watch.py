"""Notice when the corpus file is removed, replaced, truncated or changed under a running server, and when it is back.

The corpus is opened read-only at start and must stay as it was. Connections
already open would go on reading a removed file's old contents while new ones
fail, and a replaced file would mix two corpora, so any change to the file's
identity is a failure: tool calls that read the corpus are refused (and logged),
and /health reports it. A file put back with exactly the bytes of the original
(same sha256, as after removing it and copying it back) ends the failure: the
watch adopts it, reads resume, and /health says when it happened.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
import weakref
from pathlib import Path

from agenthop.server.corpus_schema import CorpusError, open_corpus

log = logging.getLogger("agenthop.server")
CHUNK = 1 << 20


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _sha256(fd: int) -> str:
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, CHUNK, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


class CorpusWatch:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        # The original stays open, so its digest can be taken later, even once the name points elsewhere or nowhere.
        self._original = os.open(self.path, os.O_RDONLY)
        weakref.finalize(self, os.close, self._original)
        self._started = self._identity = _identity(os.fstat(self._original))
        self._original_digest: str | None = None
        self._verdicts: dict[tuple, bool] = {}  # identity of a file found at the path -> holds the original bytes
        self._lock = threading.Lock()
        self._failing = (
            False  # the last problem() found one: its end is reported even when the identity is the accepted one
        )
        self.restored: list[str] = []  # what /health reports: each time the same file came back

    def _original_sha256(self) -> str | None:
        """The original file's digest, or None when it was changed in place (its bytes are then lost)."""
        if self._original_digest is None:
            if _identity(os.fstat(self._original)) != self._started:
                return None
            self._original_digest = _sha256(self._original)
        return self._original_digest

    def _is_original(self, now: tuple, path_fd: int) -> bool:
        """Whether the file now at the path holds the original bytes; hashed once per identity it shows."""
        with self._lock:
            if now not in self._verdicts:
                original = self._original_sha256()
                self._verdicts[now] = original is not None and _sha256(path_fd) == original
            return self._verdicts[now]

    def _adopt(self, now: tuple | None) -> None:
        """Accept the file of identity ``now`` (None: the one accepted now) and record the end of the failure."""
        with self._lock:
            now = self._identity if now is None else now
            if self._identity != now or self._failing:
                self._identity, self._failing = now, False
                when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                how = (
                    f"the original bytes (sha256 {self._original_digest[:16]}...)"
                    if self._original_digest
                    else "the original file"
                )
                note = f"the corpus file {self.path} was put back with {how} at {when}; reads resumed"
                self.restored.append(note)
                log.warning(note)

    def problem(self) -> str | None:
        """Why the corpus can no longer be served, or None. One stat() call while the file is as accepted."""
        found = self._problem()
        if found is not None:
            self._failing = True
        elif self._failing:  # the accepted file itself came back (moved back): the failure ended all the same
            self._adopt(None)
        return found

    def _problem(self) -> str | None:
        try:
            now = _identity(os.stat(self.path))
        except FileNotFoundError:
            return f"the corpus file {self.path} was removed while the server was running"
        except OSError as exc:
            return f"the corpus file {self.path} cannot be read any more ({exc.strerror})"
        accepted = self._identity
        if now == accepted:
            return None
        if now == self._started:  # the original file itself, moved back
            self._adopt(now)
            return None
        if (
            now[:2] != self._started[:2] and now[2] == self._started[2]
        ):  # another file of the original's size: same bytes?
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except OSError as exc:
                return f"the corpus file {self.path} cannot be read any more ({exc.strerror})"
            try:
                same = _identity(os.fstat(fd)) == now and self._is_original(now, fd)
            finally:
                os.close(fd)
            if same:
                self._adopt(now)
                return None
        if now[:2] != accepted[:2]:
            return f"the corpus file {self.path} was replaced while the server was running"
        if now[2] != accepted[2]:
            return f"the corpus file {self.path} changed size while the server was running ({accepted[2]:,} -> {now[2]:,} bytes)"
        return f"the corpus file {self.path} was modified while the server was running"

    def check(self) -> str | None:
        """``problem()``, plus opening the file afresh as at start (truncation, damage): for /health, off the event loop."""
        problem = self.problem()
        if problem is not None:
            return problem
        try:
            open_corpus(self.path).close()
        except CorpusError as exc:
            return str(exc)
        return None
