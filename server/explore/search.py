"""Explore-mode search over the search index (explore/index.py): titles, abstracts and authors, or the full text of
every section, with filters (years, venue, author), "quoted phrases", a sort (relevance, citations, year) and paging.
A corpus without the index is searched with SQLite FTS5 (explore/fts5_search.py), with a note saying how to build it.

Queries are split into words by the same tokenizer as the BM25 search of item mode (``search.tokenize``: lower case,
``\\w\\w+``, English stop words removed); the index splits documents into every run of ``\\w`` in lower case, so both
look for the same words. A quoted phrase must appear as written (its stop words too), in any field.

Ranking by relevance, best first:
1. a paper whose title is the query (after normalisation);
2. papers whose title and authors hold every word of the query (papers with text first), so that a reference stub
   (a work known only from bibliographies) found by its title words or its author comes before weak matches;
3. every other match (papers with text first),
each group by BM25 (title weighted twice; tantivy's block-max WAND finds the best ``CANDIDATES`` without scoring
every match). Sorting by citations or year lists the papers holding every word of the query, most cited or newest
first, read from fast fields. A full-text search ranks sections and shows each paper once, by its best section.
Item mode does not use any of this.
"""

from __future__ import annotations

import logging
import sqlite3

import tantivy

from agenthop.server.explore import fts5_search
from agenthop.server.explore.index import SearchIndex
from agenthop.server.explore.query import (
    ExploreHit,
    Filters,
    SearchOutcome,
    phrases,
    query_terms,
    read_year_words,
    snippet,
)
from agenthop.server.explore.tables import normalise_title
from agenthop.server.search import tokenize

CANDIDATES = 300  # matches ranked by BM25 before the rules above re-rank them
TITLE_CANDIDATES = 50  # matches of every word in title/authors, fetched separately so none falls outside the window
IN_TITLE_LIMIT = 2000  # up to this many papers holding every word in title/authors are read in one search
MAX_RESULTS = 1000  # offset + top_k: how deep a relevance ranking pages
PAPER_FIELDS = {"title": 2.0, "abstract": 1.0, "authors": 1.0}
SECTION_FIELDS = {"header": 1.0, "text": 1.0}
SORTS = ("relevance", "citations", "year")

Occur = tantivy.Occur
log = logging.getLogger("agenthop.server")


def _term(schema, field: str, word: str, boost: float = 1.0) -> tantivy.Query:
    q = tantivy.Query.term_query(schema, field, word)
    return q if boost == 1.0 else tantivy.Query.boost_query(q, boost)


def _any_word(schema, fields: dict[str, float], terms: list[str]) -> tantivy.Query:
    """BM25 disjunction of every word in every field: a flat OR of term queries, which tantivy runs with block-max
    WAND (a boost stays inside the term's scorer)."""
    return tantivy.Query.boolean_query(
        [(Occur.Should, _term(schema, f, t, w)) for t in terms for f, w in fields.items()]
    )


def _every_word(schema, fields: list[str], terms: list[str]) -> list[tuple]:
    """One clause per word: the word in any of ``fields``."""
    return [
        (Occur.Must, tantivy.Query.boolean_query([(Occur.Should, _term(schema, f, t)) for f in fields])) for t in terms
    ]


def _phrase_clauses(schema, fields: list[str], found: list[list[str]]) -> list[tuple]:
    clauses = []
    for words in found:
        if len(words) == 1:
            each = [(Occur.Should, _term(schema, f, words[0])) for f in fields]
        else:
            phrase: list[str | tuple[int, str]] = list(words)
            each = [(Occur.Should, tantivy.Query.phrase_query(schema, f, phrase)) for f in fields]
        clauses.append((Occur.Must, tantivy.Query.boolean_query(each)))
    return clauses


def _filter_clauses(index: SearchIndex, schema, filters: Filters) -> list[tuple] | None:
    """Must clauses of the filters, read from fast fields and the index; None when no paper can pass them."""
    clauses = []
    if filters.year_from is not None or filters.year_to is not None:
        clauses.append(
            (
                Occur.Must,
                # Through the year terms' postings: faster than the column when a scoring query is intersected with it.
                tantivy.Query.range_query(
                    schema,
                    "year",
                    tantivy.FieldType.Integer,
                    filters.year_from,
                    filters.year_to,
                    use_inverted_index=True,
                ),
            )
        )
    if filters.venue is not None:
        venues = index.venue_ids(filters.venue_patterns())
        if not venues:
            return None
        clauses.append((Occur.Must, tantivy.Query.term_set_query(schema, "venue", venues)))
    clauses += [(Occur.Must, _term(schema, "authors", w)) for w in filters.author_words()]
    return clauses


def _combine(clauses: list[tuple], scored: tantivy.Query | None) -> tantivy.Query:
    if scored is not None and not clauses:
        return scored
    if scored is not None:
        clauses = [*clauses, (Occur.Must, scored)]
    if not any(occur == Occur.Must for occur, _ in clauses):
        clauses = [*clauses, (Occur.Must, tantivy.Query.all_query())]
    return tantivy.Query.boolean_query(clauses)


def _rowids(searcher, field: str, hits) -> list[int]:
    return searcher.fast_field_values(field, [address for _, address in hits]) if hits else []


def _papers_by_rowid(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, tuple]:
    found = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT rowid, paper_id FROM papers WHERE rowid IN ({marks})", chunk):
            found[row[0]] = row
    return found


def _search_papers(
    conn: sqlite3.Connection,
    index: SearchIndex,
    terms: list[str],
    quoted: list[list[str]],
    filters: Filters,
    *,
    top_k: int,
    offset: int,
    sort: str,
) -> tuple[list[ExploreHit], bool]:
    schema = index.papers_schema
    clauses = _filter_clauses(index, schema, filters)
    if clauses is None:
        return [], False
    clauses += _phrase_clauses(schema, list(PAPER_FIELDS), quoted)
    searcher = index.papers.searcher()
    want = offset + top_k
    if sort != "relevance" or not terms:
        # Every word required, ordered by a fast field; with no words, a listing: papers with text, most cited first.
        field = {"citations": "citations", "year": "year"}.get(sort, "listing")
        query = _combine(clauses + _every_word(schema, list(PAPER_FIELDS), terms), None)
        hits = searcher.search(query, limit=top_k + 1, offset=offset, count=False, order_by_field=field).hits
        rowids = _rowids(searcher, "rowid", hits[:top_k])
        pids = {r[0]: r[1] for r in _papers_by_rowid(conn, rowids).values()}
        return [ExploreHit(pids[r], 0.0) for r in rowids if r in pids], len(hits) > top_k
    match = _combine(clauses, _any_word(schema, PAPER_FIELDS, terms))
    ranked = searcher.search(match, limit=max(CANDIDATES, want + 1), count=False).hits
    every_word = _every_word(schema, ["title", "authors"], terms)
    # Every paper holding every word in title or authors, best first: few (titles are short), so fetched whole.
    titled = searcher.search(_combine(clauses + every_word, None), limit=IN_TITLE_LIMIT, count=False).hits
    titled_rowids = _rowids(searcher, "rowid", titled)
    found = dict(zip(_rowids(searcher, "rowid", ranked), ranked))  # rowid -> (score, address)
    missing = [r for r in titled_rowids[: max(TITLE_CANDIDATES, want)] if r not in found]
    if missing:  # scored by the same query as the others, so scores compare
        only = tantivy.Query.term_set_query(schema, "rowid", missing)
        rescored = searcher.search(_combine([(Occur.Must, only)], match), limit=len(missing), count=False).hits
        found.update(zip(_rowids(searcher, "rowid", rescored), rescored))
    rowids = list(found)
    if not rowids:
        return [], False
    has_text = dict(zip(rowids, searcher.fast_field_values("has_text", [a for _, a in found.values()])))
    in_title = set(titled_rowids) & found.keys()
    if len(titled) == IN_TITLE_LIMIT:  # more papers hold every word: ask the index about the candidates themselves
        among = tantivy.Query.term_set_query(schema, "rowid", rowids)
        held = searcher.search(_combine([(Occur.Must, among), *every_word], None), len(rowids), count=False).hits
        in_title = set(_rowids(searcher, "rowid", held))
    exact = _exact_titles(conn, sorted(in_title), " ".join(terms))
    # Works the corpus only cites are known by their title and authors alone, so their fields say little about which
    # one a searcher means; among those holding every word there, the most cited comes first ("Vaswani": the
    # Transformer before a 2014 alignment paper).
    stubs = [r for r in in_title if not has_text[r]]
    addresses = [found[r][1] for r in stubs]
    cited = dict(zip(stubs, searcher.fast_field_values("citations", addresses))) if stubs else {}

    def key(rowid: int) -> tuple:
        tie = -(cited.get(rowid) or 0)
        return (rowid not in exact, rowid not in in_title, not has_text[rowid], tie, -found[rowid][0], rowid)

    ordered = sorted(rowids, key=key)
    page = ordered[offset:want]
    pids = {r[0]: r[1] for r in _papers_by_rowid(conn, page).values()}
    return [ExploreHit(pids[r], found[r][0]) for r in page if r in pids], len(ordered) > want


def _exact_titles(conn: sqlite3.Connection, rowids: list[int], query_title: str) -> set[int]:
    """The papers among ``rowids`` whose title is the query (its words, after normalisation)."""
    exact = set()
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for rowid, title in conn.execute(f"SELECT rowid, title FROM papers WHERE rowid IN ({marks})", chunk):
            if " ".join(tokenize(normalise_title(title))) == query_title:
                exact.add(rowid)
    return exact


def _search_sections(
    conn: sqlite3.Connection,
    index: SearchIndex,
    terms: list[str],
    quoted: list[list[str]],
    filters: Filters,
    *,
    top_k: int,
    offset: int,
    sort: str,
) -> tuple[list[ExploreHit], bool]:
    if not terms and not quoted:
        return [], False
    schema = index.sections_schema
    clauses = _filter_clauses(index, schema, filters)
    if clauses is None:
        return [], False
    clauses += _phrase_clauses(schema, list(SECTION_FIELDS), quoted)
    searcher = index.sections.searcher()
    want = offset + top_k
    if sort == "relevance" and terms:
        query, order = _combine(clauses, _any_word(schema, SECTION_FIELDS, terms)), None
    else:
        query = _combine(clauses + _every_word(schema, list(SECTION_FIELDS), terms), None)
        order = {"citations": "citations", "year": "year"}.get(sort)
    best: dict[int, tuple[int, float]] = {}  # paper rowid -> (its best section's rowid, score)
    window, seen = max(CANDIDATES * 3, 3 * want), 0
    while True:  # a paper's sections may fill the window: look further until the page is full or matches run out
        if order is None:
            hits = searcher.search(query, limit=window, offset=seen, count=False).hits
        else:
            hits = searcher.search(query, limit=window, offset=seen, count=False, order_by_field=order).hits
        papers = _rowids(searcher, "paper", hits)
        for (score, _), paper, section in zip(hits, papers, _rowids(searcher, "rowid", hits)):
            best.setdefault(paper, (section, score if order is None else 0.0))
        seen += len(hits)
        if len(best) > want or len(hits) < window:
            break
        window *= 2
    chosen = list(best.items())[offset:want]
    if not chosen:
        return [], False
    marks = ",".join("?" * len(chosen))
    sections = {
        r[0]: r[1:]
        for r in conn.execute(
            f"SELECT rowid, position, header, text FROM sections WHERE rowid IN ({marks})", [s for _, (s, _) in chosen]
        )
    }
    pids = {r[0]: r[1] for r in _papers_by_rowid(conn, [p for p, _ in chosen]).values()}
    words = set(terms) | {w for p in quoted for w in p}
    hits_out = []
    for paper, (section, score) in chosen:
        if paper not in pids or section not in sections:
            continue
        position, header, text = sections[section]
        hits_out.append(ExploreHit(pids[paper], score, position, header, snippet(text, words)))
    return hits_out, len(best) > want


def explore_search(
    conn: sqlite3.Connection,
    query: str,
    *,
    top_k: int,
    filters: Filters,
    scope: str,
    index: SearchIndex | None,
    offset: int = 0,
    sort: str = "relevance",
    missing_index: str | None = None,
) -> SearchOutcome:
    """Search as the explore tool asks; ``index`` None searches with FTS5 and says why (``missing_index``)."""
    if index is None:
        return _without_index(conn, query, top_k, filters, scope, offset, sort, missing_index)
    terms, quoted = query_terms(query), phrases(query)
    if not terms and not quoted and query.strip():  # only stop words or one-letter words: nothing to match, say so
        notes = [
            "no word of the query can be searched (only stop words or one-letter words)"
            + ("; the filters alone were applied" if filters.any() else "")
        ]
        if not filters.any() or scope == "full_text":  # else the filters-only listing would pass for matches
            return SearchOutcome([], filters, [], notes)
        hits, more = _search_papers(conn, index, [], [], filters, top_k=top_k, offset=offset, sort=sort)
        return SearchOutcome(hits, filters, [], notes, more=more)
    terms, filters, note = read_year_words(terms, filters)
    notes = [note] if note else []
    run = _search_sections if scope == "full_text" else _search_papers
    try:
        hits, more = run(conn, index, terms, quoted, filters, top_k=top_k, offset=offset, sort=sort)
    except BaseException as exc:  # tantivy's errors are ValueError; a Rust panic is pyo3's PanicException
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise
        log.exception("explore search failed on the search index %s; answering with FTS5", index.path)
        return _without_index(conn, query, top_k, filters, scope, offset, sort, "could not use its search index")
    return SearchOutcome(hits, filters, terms, notes, quoted, more)


def _without_index(conn, query, top_k, filters, scope, offset, sort, missing_index) -> SearchOutcome:
    found = fts5_search.explore_search(conn, query, top_k=offset + top_k + 1, filters=filters, scope=scope)
    found.more = len(found.hits) > offset + top_k
    found.hits = found.hits[offset : offset + top_k]
    why = missing_index or "has no search index"
    found.notes.append(
        f"this corpus {why}, so search is slower and ignores sort and phrases; "
        "build it with 'agenthop-server corpus index <corpus file>'"
    )
    if sort != "relevance":
        found.notes.append(f"sorted by relevance: sort '{sort}' needs the search index")
    return found
