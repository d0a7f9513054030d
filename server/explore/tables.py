"""The explore-mode tables the importer adds after loading a corpus: full-text indexes, one paper per outside work,
external IDs, and cited-by counts.

All of them are additive (new tables, nothing changed in the benchmark's tables), and only explore mode reads them:
an item session sees exactly the papers and edges of its graph, as before.

- ``papers_fts`` and ``sections_fts``: SQLite FTS5 indexes over papers (title, abstract, authors) and sections
  (header, text). They are *external-content* tables (the text stays in ``papers`` and ``sections``; the index holds
  only postings), so the text is not stored twice, and FTS5's ``snippet()`` reads the matched passage back from it.
- ``paper_clusters``: metadata-only papers (stubs) that name the same work, mapped to one canonical paper
  (``cluster_key`` below says when two records are the same work, ``choose_canonical`` which ID is kept).
- ``external_ids``: every DOI, arXiv ID and ACL Anthology ID a paper is known by (normalised), for pasted IDs.
- ``cited_by_counts``: how many distinct papers cite each canonical paper (all its cluster's members together).
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from collections import defaultdict

# unicode61 keeps diacritics (remove_diacritics 0) and treats '_' as part of a word, as the BM25 tokenizer's \w does,
# so both engines split text into the same words (docs/corpus.md, "Full-text search", lists what still differs).
FTS_TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '_'"

DDL = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS papers_fts USING fts5(
    title, abstract, authors, content='papers', content_rowid='rowid', tokenize="{FTS_TOKENIZE}");
CREATE VIRTUAL TABLE IF NOT EXISTS sections_fts USING fts5(
    header, text, content='sections', content_rowid='rowid', tokenize="{FTS_TOKENIZE}");
CREATE TABLE IF NOT EXISTS paper_clusters (
    paper_id   TEXT PRIMARY KEY,     -- a member of a cluster of two or more records of one work (canonical included)
    canonical  TEXT NOT NULL         -- the paper ID explore mode shows for all of them
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS paper_clusters_canonical ON paper_clusters(canonical);
CREATE TABLE IF NOT EXISTS external_ids (
    scheme    TEXT NOT NULL,         -- doi | arxiv | acl | pmcid
    value     TEXT NOT NULL,         -- lower-cased; arXiv without its version
    paper_id  TEXT NOT NULL,
    PRIMARY KEY (scheme, value, paper_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cited_by_counts (
    paper_id  TEXT PRIMARY KEY,      -- a canonical paper cited at least once
    n         INTEGER NOT NULL       -- distinct citing papers, over all members of its cluster
) WITHOUT ROWID;
"""

EXPLORE_TABLES = ("papers_fts", "sections_fts", "paper_clusters", "external_ids", "cited_by_counts")


def fold_name(name: str) -> str:
    """ "Hinrich Schütze" -> "hinrich schutze": how two spellings of a name compare."""
    decomposed = unicodedata.normalize("NFKD", name)
    kept = "".join(ch.lower() if ch.isalnum() else " " for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(kept.split())


ACL_DOI = re.compile(r"^10\.18653/v1/(.+)$")
_ARXIV_VERSION = re.compile(r"v\d+$")
_WORDS = re.compile(r"[^\w]+")
_APOSTROPHES = re.compile(r"['\u2019]")  # "What's" and "Whats" (a parser dropped it) are one title
# What GROBID glues to a title: ". International Conference on ...", ". arXiv preprint ...", ". In Proceedings of ...".
_TITLE_TAIL = re.compile(
    r"\.\s+(in\s|proceedings?\b|proceeding\b|international\b|conference\b|annual\b|arxiv\b|corr\b|"
    r"journal\b|workshop\b|advances in\b|transactions\b|iclr\b|nips\b|neurips\b|icml\b|acl\b|emnlp\b)",
    re.IGNORECASE,
)
MIN_TITLE_CHARS = 12  # shorter normalised titles ("Introduction", "Proceedings") name no work on their own


def normalise_title(title: str) -> str:
    """Lower case, words only, without what a bibliography parser glued after the title's full stop."""
    cut = _TITLE_TAIL.search(title)
    if cut is not None and cut.start() >= MIN_TITLE_CHARS:
        title = title[: cut.start()]
    return " ".join(_WORDS.sub(" ", _APOSTROPHES.sub("", title.lower())).split())


def first_author_surname(authors: list[str]) -> str:
    if not authors:
        return ""
    words = _WORDS.sub(" ", authors[0].lower()).split()
    return words[-1] if words else ""


def strip_arxiv_version(value: str) -> str:
    return _ARXIV_VERSION.sub("", value.strip().lower())


def paper_external_ids(paper_id: str, ids: dict) -> set[tuple[str, str]]:
    """(scheme, normalised value) of every external ID a paper is known by, from its ``ids`` and its own ID."""
    found = set()
    for scheme, value in ids.items():
        if isinstance(value, str) and value.strip():
            found.add((scheme, strip_arxiv_version(value) if scheme == "arxiv" else value.strip().lower()))
    prefix, _, rest = paper_id.partition(":")
    if rest and prefix in ("doi", "arxiv", "acl", "pmc"):
        scheme = "pmcid" if prefix == "pmc" else prefix
        found.add((scheme, strip_arxiv_version(rest) if scheme == "arxiv" else rest.lower()))
    for scheme, value in list(found):
        acl = ACL_DOI.match(value) if scheme == "doi" else None
        if acl:  # the Anthology's DOIs are 10.18653/v1/ + the ACL ID
            found.add(("acl", acl.group(1)))
    return found


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _id_rank(paper_id: str) -> int:
    return 0 if paper_id.startswith("doi:") else 1 if paper_id.startswith("arxiv:") else 2


def choose_canonical(members: list[str], citers: dict[str, int]) -> str:
    """The ID a cluster of stubs is shown by: a DOI ID, else an arXiv ID, else the member most papers cite; ties by
    the smallest ID, so every build chooses the same."""
    return min(members, key=lambda pid: (_id_rank(pid), -citers.get(pid, 0), pid))


def build(conn: sqlite3.Connection) -> dict:
    """Create and fill the explore tables of a freshly loaded corpus; counts for the import summary."""
    for statement in DDL.split(";\n"):  # not executescript: it would commit the import's transaction
        if statement.strip():
            conn.execute(statement)
    clusters = _write_clusters(conn)
    _write_external_ids(conn)
    conn.execute(
        "INSERT INTO cited_by_counts(paper_id, n) SELECT coalesce(c.canonical, e.cited), count(DISTINCT e.citing) "
        "FROM edges e LEFT JOIN paper_clusters c ON c.paper_id = e.cited GROUP BY 1 ORDER BY 1"
    )
    conn.execute("INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO sections_fts(sections_fts) VALUES ('rebuild')")
    return clusters


def _write_clusters(conn: sqlite3.Connection) -> dict:
    """Group the records that name one work: same DOI, same arXiv ID, or same normalised title and first author's
    surname with years at most one apart (a preprint and its proceedings version). Stubs join each other, or the one
    paper with text they name; two papers with text are never merged, and a group holding two is left as it is."""
    ids: list[str] = []
    has_text: list[bool] = []
    by_key: dict[tuple, int] = {}
    by_title: defaultdict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    uf_pairs: list[tuple[int, int]] = []
    rows = conn.execute("SELECT paper_id, title, year, authors, ids, has_text FROM papers ORDER BY rowid")
    for i, (pid, title, year, authors, ext, text) in enumerate(rows):
        ids.append(pid)
        has_text.append(bool(text))
        for key in sorted(paper_external_ids(pid, json.loads(ext or "{}"))):
            if key[0] in ("doi", "arxiv"):
                j = by_key.setdefault(key, i)
                if j != i:
                    uf_pairs.append((j, i))
        norm = normalise_title(title)
        if len(norm) >= MIN_TITLE_CHARS:
            by_title[(norm, first_author_surname(json.loads(authors or "[]")))].append(
                (year if year is not None else -1, i)
            )
    del by_key
    for group in by_title.values():
        if len(group) < 2:
            continue
        group.sort()
        for (y1, a), (y2, b) in zip(group, group[1:]):
            if y1 < 0 or y2 - y1 <= 1:
                uf_pairs.append((a, b))
    del by_title
    uf = _UnionFind(len(ids))
    involved: set[int] = set()
    for a, b in uf_pairs:
        uf.union(a, b)
        involved.update((a, b))
    del uf_pairs
    components: defaultdict[int, list[int]] = defaultdict(list)
    for i in sorted(involved):
        components[uf.find(i)].append(i)
    citers = dict(conn.execute("SELECT cited, count(*) FROM edges GROUP BY cited"))
    rows_out, merged, works = [], 0, 0
    for members in components.values():
        if len(members) < 2:
            continue
        texts = [i for i in members if has_text[i]]
        if len(texts) > 1:
            continue
        names = [ids[i] for i in members]
        canonical = ids[texts[0]] if texts else choose_canonical(names, citers)
        rows_out += [(pid, canonical) for pid in names]
        merged += len(names) - 1
        works += 1
    conn.executemany("INSERT INTO paper_clusters(paper_id, canonical) VALUES (?, ?)", sorted(rows_out))
    return {"clustered_works": works, "clustered_records_merged": merged}


def _write_external_ids(conn: sqlite3.Connection) -> None:
    def rows():
        for pid, ext in conn.execute("SELECT paper_id, ids FROM papers ORDER BY rowid"):
            # Sorted: a set's order changes with the string hash seed, and the insertion order shapes the file's bytes.
            for scheme, value in sorted(paper_external_ids(pid, json.loads(ext or "{}"))):
                yield scheme, value, pid

    conn.executemany("INSERT OR IGNORE INTO external_ids(scheme, value, paper_id) VALUES (?, ?, ?)", rows())
