"""Notice when the corpus file is removed, replaced, truncated or changed under a running server.

The corpus is opened read-only at start and must stay as it was. Connections
already open would go on reading a removed file's old contents while new ones
fail, and a replaced file would mix two corpora, so any change to the file's
identity is a failure: tool calls that read the corpus are refused (and logged),
and /health reports it.
"""

from __future__ import annotations

import os
from pathlib import Path

from agenthop.server.corpus.schema import CorpusError, open_corpus


def _identity(path: Path) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class CorpusWatch:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._identity = _identity(self.path)

    def problem(self) -> str | None:
        """Why the corpus can no longer be served, or None. One stat() call: cheap enough for every tool call."""
        try:
            now = _identity(self.path)
        except FileNotFoundError:
            return f"the corpus file {self.path} was removed while the server was running"
        except OSError as exc:
            return f"the corpus file {self.path} cannot be read any more ({exc.strerror})"
        if now[:2] != self._identity[:2]:
            return f"the corpus file {self.path} was replaced while the server was running"
        if now[2] != self._identity[2]:
            return f"the corpus file {self.path} changed size while the server was running ({self._identity[2]:,} -> {now[2]:,} bytes)"
        if now[3] != self._identity[3]:
            return f"the corpus file {self.path} was modified while the server was running"
        return None

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
