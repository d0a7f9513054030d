"""Authors of an explore corpus: the papers of a name, how often they are cited, and the co-authors.

Names are compared folded: accents dropped, case ignored, punctuation as spaces, so "Schutze", "schütze" and
"SCHÜTZE" are one name. A query names an author by the surname (its last word) and, optionally, forenames or
initials before it: "Schütze", "Hinrich Schutze", "H Schütze". Every spelling that fits is one author when the
folded full names agree; an initials-only spelling ("H Schütze") joins the one full name it fits, if only one does
(two people, "Yang Liu" and "Yi Liu", leave "Y Liu" on its own). Several authors can fit a query; the one with the
most papers is shown in full.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from agenthop.server.explore.tables import fold_name as fold

# Folded author names by surname, per corpus file: read once, on the first author call (a corpus is read-only while
# served), so that the corpus file needs no table of its own for them.
_INDEXES: dict[str, dict[str, list[tuple[str, str, str]]]] = {}


def _index(conn: sqlite3.Connection) -> dict[str, list[tuple[str, str, str]]]:
    path = next(row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main")
    if path not in _INDEXES:
        by_surname: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        for pid, authors in conn.execute("SELECT paper_id, authors FROM papers ORDER BY rowid"):
            for name in json.loads(authors or "[]"):
                folded = fold(name)
                if folded:
                    by_surname[folded.split()[-1]].append((folded, name, pid))
        _INDEXES[path] = dict(by_surname)
    return _INDEXES[path]


def _fits(query: list[str], name: list[str]) -> bool:
    """Do the query's words before the surname fit the name's (a word, or its initial)?"""
    for word in query[:-1]:
        if not any(
            w == word or (len(word) == 1 and w.startswith(word)) or (len(w) == 1 and word.startswith(w))
            for w in name[:-1]
        ):
            return False
    return True


@dataclass
class Author:
    name: str  # the spelling most papers give
    spellings: Counter = field(default_factory=Counter)
    papers: set[str] = field(default_factory=set)
    folded: set[str] = field(default_factory=set)


def find(conn: sqlite3.Connection, query: str) -> list[Author]:
    """The authors a name fits, most papers first (ties by name)."""
    words = fold(query).split()
    if not words:
        return []
    rows = _index(conn).get(words[-1], [])
    by_folded: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for folded, name, pid in rows:
        if _fits(words, folded.split()):
            by_folded[folded].append((name, pid))
    full = [f for f in by_folded if any(len(w) > 1 for w in f.split()[:-1])]
    groups: dict[str, list[str]] = defaultdict(list)
    for folded in by_folded:
        target = folded
        if folded not in full:
            fitting = [f for f in full if _fits(folded.split(), f.split())]
            if len(fitting) == 1:
                target = fitting[0]
        groups[target].append(folded)
    authors = []
    for members in groups.values():
        author = Author("")
        for folded in members:
            author.folded.add(folded)
            for name, pid in by_folded[folded]:
                author.spellings[name] += 1
                author.papers.add(pid)
        author.name = max(author.spellings, key=lambda n: (author.spellings[n], len(n), n))
        authors.append(author)
    authors.sort(key=lambda a: (-len(a.papers), a.name))
    return authors


def co_authors(conn: sqlite3.Connection, author: Author, limit: int = 10) -> list[tuple[str, int]]:
    """The names that share most papers with ``author`` (folded names counted once per paper)."""
    counts: Counter[str] = Counter()
    spelled: dict[str, Counter] = defaultdict(Counter)
    for start in range(0, len(author.papers), 500):
        chunk = sorted(author.papers)[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for (authors,) in conn.execute(f"SELECT authors FROM papers WHERE paper_id IN ({marks})", chunk):
            seen = set()
            for name in json.loads(authors or "[]"):
                folded = fold(name)
                if folded in author.folded or folded in seen or not folded:
                    continue
                seen.add(folded)
                counts[folded] += 1
                spelled[folded][name] += 1
    ranked = sorted(counts, key=lambda f: (-counts[f], f))[:limit]
    return [(max(spelled[f], key=lambda n: (spelled[f][n], n)), counts[f]) for f in ranked]
