"""Explore-mode search without the search index (a corpus imported before it, or whose index is missing): SQLite
FTS5 over titles, abstracts and authors, or over the full text of every section, with filters (years, venue, author),
one result per work, and outside works that the query names ranked where a person looks for them.

Queries are split into words by the same tokenizer as the BM25 search of item mode (``search.tokenize``: lower case,
``\\w\\w+``, English stop words removed), and each word is matched as an FTS5 string, so both searches look for the
same words; the documents are split by FTS5's unicode61 tokenizer set up to agree with it (docs/corpus.md says where
they still differ).

Ranking, best first:
1. a paper whose title is the query (after normalisation);
2. papers whose title and authors hold every word of the query (papers with text first), so that a reference stub
   (a work known only from bibliographies) found by its title words or its author comes before weak matches;
3. every other match (papers with text first),
each group by FTS5's BM25 (title weighted twice). Item mode does not use any of this.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from agenthop.server.explore.query import ExploreHit, Filters, SearchOutcome, query_terms, read_year_words
from agenthop.server.explore.tables import normalise_title
from agenthop.server.search import tokenize

CANDIDATES = 300  # matches ranked by BM25 before the rules above re-rank them
TITLE_CANDIDATES = 50  # matches of every word in title/authors, fetched separately so none falls outside the window
WEIGHTS = "2.0, 1.0, 1.0"  # papers_fts: title, abstract, authors


def _phrase(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _filter_sql(filters: Filters) -> tuple[str, list]:
    """SQL conditions on papers ``p`` (venue, years); the author filter is an FTS5 condition, see _author_match."""
    sql: list[str] = []
    params: list[int | str] = []
    if filters.year_from is not None:
        sql.append("p.year >= ?")
        params.append(filters.year_from)
    if filters.year_to is not None:
        sql.append("p.year <= ?")
        params.append(filters.year_to)
    if filters.venue is not None:
        patterns = filters.venue_patterns()
        sql.append("(" + " OR ".join("lower(p.venue) LIKE ? ESCAPE '\\'" for _ in patterns) + ")")
        params += ["%" + p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for p in patterns]
    return (" AND " + " AND ".join(sql)) if sql else "", params


def _author_words(filters: Filters) -> list[str]:
    return filters.author_words()


_RANK = f"bm25({WEIGHTS})"


def _top_rowids(conn: sqlite3.Connection, table: str, match: str, limit: int) -> list[tuple[int, float]]:
    """(rowid, BM25 rank) of the best ``limit`` matches, ranked inside the FTS5 index (lower is better)."""
    rank = f" AND rank MATCH '{_RANK}'" if table == "papers_fts" else ""
    return list(
        conn.execute(
            f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ?{rank} ORDER BY rank LIMIT ?", (match, limit)
        )
    )


def _not_merged() -> str:
    """Leave out the records merged into another paper (they are shown as their canonical paper)."""
    return (
        " AND NOT EXISTS (SELECT 1 FROM paper_clusters c WHERE c.paper_id = p.paper_id AND c.canonical != p.paper_id)"
    )


def search_metadata(conn: sqlite3.Connection, terms: list[str], filters: Filters, top_k: int) -> list[ExploreHit]:
    """Title + abstract + authors (papers_fts), re-ranked as the module docstring says."""
    where, params = _filter_sql(filters)
    where += _not_merged()
    author = _author_words(filters)
    author_match = " AND ".join(_phrase(w) for w in author)
    if not terms:  # filters only: the matching papers, those with text first, then the most cited
        order = "ORDER BY p.has_text DESC, coalesce(n.n, 0) DESC, p.paper_id LIMIT ?"
        counted = "LEFT JOIN cited_by_counts n ON n.paper_id = p.paper_id"
        if author:
            matched = conn.execute(
                f"SELECT p.paper_id FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid {counted} "
                f"WHERE papers_fts MATCH ? {where} {order}",
                [f"authors : ({author_match})", *params, top_k],
            )
        else:
            matched = conn.execute(
                f"SELECT p.paper_id FROM papers p {counted} WHERE 1 {where} {order}", [*params, top_k]
            )
        return [ExploreHit(pid, 0.0) for (pid,) in matched]
    any_word = " OR ".join(_phrase(t) for t in terms)
    every_word = " AND ".join(_phrase(t) for t in terms)
    match = f"({any_word})" + (f" AND (authors : ({author_match}))" if author else "")
    title_match = f"({{title authors}} : ({every_word}))" + (f" AND (authors : ({author_match}))" if author else "")
    rows: dict[str, tuple]  # by paper ID: (paper_id, title, authors, has_text, score)
    if filters.year_from is None and filters.year_to is None and filters.venue is None:
        # No condition on papers: FTS5 ranks inside the index (ORDER BY rank), and only the best rows are joined.
        scores = dict(_top_rowids(conn, "papers_fts", match, CANDIDATES))
        # Every score comes from ``match``: title_match's own BM25 scores are on another scale (it matches fewer rows).
        missing = [
            rowid for rowid, _ in _top_rowids(conn, "papers_fts", title_match, TITLE_CANDIDATES) if rowid not in scores
        ]
        if missing:  # scored by the same query as the others, so scores compare
            marks = ",".join("?" * len(missing))
            scores.update(
                conn.execute(
                    f"SELECT rowid, rank FROM papers_fts WHERE papers_fts MATCH ? AND rank MATCH '{_RANK}' "
                    f"AND rowid IN ({marks})",
                    [match, *missing],
                )
            )
        marks = ",".join("?" * len(scores))
        by_rowid = {
            r[0]: (*r[1:], scores[r[0]])
            for r in conn.execute(
                f"SELECT p.rowid, p.paper_id, p.title, p.authors, p.has_text FROM papers p WHERE p.rowid IN ({marks}) {_not_merged()}",
                list(scores),
            )
        }
        rows = {r[0]: r for r in by_rowid.values()}
    else:
        select = (
            f"SELECT p.paper_id, p.title, p.authors, p.has_text, bm25(papers_fts, {WEIGHTS}) AS score "
            "FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid "
        )
        rows = {
            r[0]: r
            for r in conn.execute(
                f"{select} WHERE papers_fts MATCH ? {where} ORDER BY score LIMIT ?", [match, *params, CANDIDATES]
            )
        }
        # Matches of every word in title/authors outside the window: scored by the same query, so scores compare.
        extra = [
            r[0]
            for r in conn.execute(
                f"SELECT papers_fts.rowid FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid WHERE papers_fts MATCH ? {where} "
                f"ORDER BY bm25(papers_fts, {WEIGHTS}) LIMIT ?",
                [title_match, *params, TITLE_CANDIDATES],
            )
        ]
        if extra:
            marks = ",".join("?" * len(extra))
            for r in conn.execute(
                f"{select} WHERE papers_fts MATCH ? AND papers_fts.rowid IN ({marks})", [match, *extra]
            ):
                rows.setdefault(r[0], r)
    wanted, query_title = set(terms), " ".join(terms)

    def key(row):
        pid, title, authors, has_text, score = row
        words = set(tokenize(title)) | set(tokenize(" ".join(json.loads(authors or "[]"))))
        exact = " ".join(tokenize(normalise_title(title))) == query_title
        return (not exact, not wanted <= words, not has_text, score, pid)

    ranked = sorted(rows.values(), key=key)[:top_k]
    return [ExploreHit(r[0], -r[4]) for r in ranked]


def search_full_text(conn: sqlite3.Connection, terms: list[str], filters: Filters, top_k: int) -> list[ExploreHit]:
    """Section headers and text (sections_fts): papers with text, each by its best-matching section, with a snippet."""
    if not terms:
        return []
    where, params = _filter_sql(filters)
    match = " OR ".join(_phrase(t) for t in terms)
    author = _author_words(filters)
    author_sql = ""
    if author:
        author_sql = " AND p.rowid IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)"
        params = [*params, f"authors : ({' AND '.join(_phrase(w) for w in author)})"]
    rows: Iterable[tuple]  # (rowid, paper_id, position, header, score)
    if not where and not author_sql:  # ranked inside the index; only the best sections are joined
        ranked = _top_rowids(conn, "sections_fts", match, CANDIDATES * 3)
        found: dict[int, tuple] = {}
        for start in range(0, len(ranked), 500):
            chunk = [rowid for rowid, _ in ranked[start : start + 500]]
            marks = ",".join("?" * len(chunk))
            found.update(
                (r[0], r)
                for r in conn.execute(
                    "SELECT s.rowid, p.paper_id, s.position, s.header FROM sections s JOIN papers p ON p.arxiv_id = s.arxiv_id "
                    f"WHERE s.rowid IN ({marks}) AND p.has_text = 1",
                    chunk,
                )
            )
        rows = [(*found[rowid], score) for rowid, score in ranked if rowid in found]
    else:
        rows = conn.execute(
            "SELECT sections_fts.rowid, p.paper_id, s.position, s.header, bm25(sections_fts) AS score "
            "FROM sections_fts JOIN sections s ON s.rowid = sections_fts.rowid JOIN papers p ON p.arxiv_id = s.arxiv_id "
            f"WHERE sections_fts MATCH ? AND p.has_text = 1 {where}{author_sql} ORDER BY score LIMIT ?",
            [match, *params, CANDIDATES * 3],
        )
    best: dict[str, tuple] = {}
    for row in rows:
        best.setdefault(row[1], row)
        if len(best) >= top_k:
            break
    hits = []
    for rowid, pid, position, header, score in best.values():
        snippet = conn.execute(
            "SELECT snippet(sections_fts, 1, '**', '**', ' … ', 24) FROM sections_fts "
            "WHERE sections_fts MATCH ? AND rowid = ?",
            (match, rowid),
        ).fetchone()
        hits.append(ExploreHit(pid, -score, position, header, snippet[0] if snippet else None))
    return hits


def explore_search(conn: sqlite3.Connection, query: str, *, top_k: int, filters: Filters, scope: str) -> SearchOutcome:
    terms = query_terms(query)
    if not terms and query.strip():  # only stop words or one-letter words: nothing to match, say so
        notes = [
            "no word of the query can be searched (only stop words or one-letter words)"
            + ("; the filters alone were applied" if filters.any() else "")
        ]
        if not filters.any():  # else the filters-only listing would pass for matches of the query
            return SearchOutcome([], filters, [], notes)
        return SearchOutcome(
            search_metadata(conn, [], filters, top_k) if scope != "full_text" else [], filters, [], notes
        )
    terms, filters, note = read_year_words(terms, filters)
    notes = [note] if note else []
    if scope == "full_text":
        hits = search_full_text(conn, terms, filters, top_k)
    else:
        hits = search_metadata(conn, terms, filters, top_k)
    return SearchOutcome(hits, filters, terms, notes)
