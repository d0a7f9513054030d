"""In-text author-year citations ("Vaswani et al., 2017") linked to the work they name, when the bibliography entry
they should point at is missing or unreadable.

GROBID 0.5.1 loses bibliography entries (a two-column reference list read half; an entry split so that only its
authors and year are left) and leaves markers without a target. Such a citation still names its work by its first
author's surname, the second's when there are two, and the year. :class:`AuthorYearIndex` finds the one work of the
corpus that fits, by the rule:

- the work's first author has that surname and its year is that year (exactly);
- for "A and B (2015)" its second author is B; for "A et al." it has three authors or more (or its list is unknown);
- among the works that fit, one is cited by at least ``MIN_CITERS`` bibliographies of the set and by at least
  ``DOMINANCE`` times as many as any other that fits (so "Wang et al., 2017", which fits many works, links none).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter, defaultdict

from agenthop.corpus.convert.names import surname_key

MIN_CITERS = 2
DOMINANCE = 3
_PARTICLE = r"(?:(?:de|van|von|der|den|del|da|di|la|le|dos)\s+)*"
_MARKER = re.compile(
    rf"({_PARTICLE}[A-Z][\w'\-]+)(\s+et\s+al\.?|\s+(?:and|&)\s+{_PARTICLE}([A-Z][\w'\-]+))?,?\s*\(?((?:19|20)\d\d)[a-z]?\b"
)


def marker_names(marker: str) -> list[tuple[list[str], int]]:
    """[(surnames as written, year)] of each author-year citation in a marker; "et al." is kept as a third name."""
    found = []
    for first, tail, second, year in _MARKER.findall(marker):
        names = [first]
        if second:
            names.append(second)
        elif tail.strip().startswith("et"):
            names += ["", ""]  # three or more authors, the others unnamed
        found.append((names, int(year)))
    return found


class AuthorYearIndex:
    """Works of the build store by (first author's surname, year), with their citers."""

    def __init__(self, conn: sqlite3.Connection):
        citers = Counter(cited for (cited,) in conn.execute("SELECT cited FROM raw_edges"))
        self.by_key: dict[tuple[str, int], list[tuple[str, list[str], int]]] = defaultdict(list)
        for pid, authors, year in conn.execute("SELECT pid, authors, year FROM papers ORDER BY rowid"):
            names = json.loads(authors)
            if names and year is not None:
                keys = [surname_key(n) for n in names]
                self.by_key[(keys[0], year)].append((pid, keys, citers[pid]))

    def find(self, names: list[str], year: int | None) -> str | None:
        """The one work that the surnames (first, and second or '' for et al.) and year name, or None."""
        if not names or year is None:
            return None
        first = surname_key(names[0])
        fits = []
        for pid, keys, n in self.by_key.get((first, year), []):
            if len(names) == 2 and names[1] and (len(keys) < 2 or keys[1] != surname_key(names[1])):
                continue
            if len(names) >= 3 and len(keys) < 3 and not all(names[1:]):
                continue
            if len(names) >= 3 and all(names[1:]) and [surname_key(x) for x in names[1:3]] != keys[1:3]:
                continue
            fits.append((n, pid))
        if not fits:
            return None
        fits.sort(key=lambda f: (-f[0], f[1]))
        best, best_pid = fits[0]
        runner_up = fits[1][0] if len(fits) > 1 else 0
        if best >= MIN_CITERS and best >= DOMINANCE * max(runner_up, 1 if len(fits) > 1 else 0):
            return best_pid
        return None
