"""The corpus file: its SQLite schema, version, and how to open it safely.

One file holds the public corpus (papers, sections, citation edges, items and
their neighbourhoods) and, in tables whose names start with ``gold_``, the
answers and labels. The server opens the file read-only and installs an SQLite
authorizer that refuses any read of a ``gold_`` table, so no tool can leak gold
data even by mistake.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

SCHEMA_VERSION = 2

GOLD_PREFIX = "gold_"

DDL = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL            -- JSON
);

-- Every paper of the corpus: graph nodes, corpus/papers.jsonl, and pool papers no paper names.
CREATE TABLE papers (
    paper_id  TEXT PRIMARY KEY,    -- the only ID agents see (40-hex in the published release; doi:..., arxiv:... when built)
    arxiv_id  TEXT,                -- text key: the paper's record in the pool (its arxiv_id field); NULL when none
    title     TEXT NOT NULL,
    abstract  TEXT NOT NULL DEFAULT '',
    year      INTEGER,
    authors   TEXT NOT NULL DEFAULT '[]',   -- JSON list of names ([] when unknown)
    venue     TEXT,
    ids       TEXT NOT NULL DEFAULT '{}',   -- JSON object of external IDs: doi, arxiv, pmcid, acl, ...
    has_text  INTEGER NOT NULL DEFAULT 0    -- 1 iff the pool has at least one section for arxiv_id
);

-- Top-level sections of the paper pool, in document order; unique on (arxiv_id, position) (see INDEXES).
CREATE TABLE sections (
    arxiv_id  TEXT NOT NULL,
    position  INTEGER NOT NULL,    -- 0-based; the alias is derived from it (0 -> A)
    header    TEXT NOT NULL,
    -- The text's length in characters, computed by SQLite when the row is written, so that listing a
    -- paper's sections does not read their text. Corpora written before it existed lack it (see papers.py).
    chars     INTEGER GENERATED ALWAYS AS (length(text)) STORED,
    text      TEXT NOT NULL
);

-- The records of the text pool (a record with zero sections gives no text).
CREATE TABLE pool (
    arxiv_id  TEXT PRIMARY KEY,
    title     TEXT NOT NULL,
    n_sections INTEGER NOT NULL
) WITHOUT ROWID;

-- Corpus-wide citation edges, served in explore mode: corpus/citations.jsonl where it lists the
-- citing paper, else the union of the item graphs (earliest position, first context given).
CREATE TABLE edges (
    citing    TEXT NOT NULL,
    cited     TEXT NOT NULL,
    position  INTEGER NOT NULL,      -- order in the citing paper's reference list
    context   TEXT,                  -- the citation sentence; NULL when unknown
    PRIMARY KEY (citing, cited)
) WITHOUT ROWID;

-- The licence each paper is shared under, where its source states one (JATS <license>, TEI <availability>, or
-- `corpus build --licence`); a side table, so corpora written before it existed are read as stating none.
CREATE TABLE paper_licences (
    paper_id  TEXT PRIMARY KEY,
    licence   TEXT NOT NULL,         -- short name: "CC BY 4.0", or the licence's words as stated
    url       TEXT                   -- its URL, when the source gives one
) WITHOUT ROWID;

-- Public part of each benchmark item.
CREATE TABLE items (
    item_id          TEXT PRIMARY KEY,
    question_type    TEXT NOT NULL,   -- single-target | multi-target
    depth            INTEGER NOT NULL,
    reasoning_type   TEXT NOT NULL,
    cognitive_skill  TEXT,            -- NULL: unknown (absent, empty or not a known skill)
    venue            TEXT,            -- NULL: unknown
    consensus_tier   TEXT,            -- NULL: unknown
    question         TEXT NOT NULL,
    options          TEXT NOT NULL,   -- JSON list of 4 strings
    seed_paper_id    TEXT NOT NULL,
    seed_arxiv_id    TEXT,
    seed_title       TEXT NOT NULL,
    filter_agreement INTEGER,
    position         INTEGER NOT NULL -- order in the input
);

-- The item's neighbourhood: exactly the nodes of its graph.
CREATE TABLE item_nodes (
    item_id   TEXT NOT NULL,
    paper_id  TEXT NOT NULL,
    position  INTEGER NOT NULL,      -- node order in the graph record (seed first)
    PRIMARY KEY (item_id, paper_id)
) WITHOUT ROWID;

-- The item's edges: only where its graph has them, in reference order, with the item's own contexts.
CREATE TABLE item_edges (
    item_id   TEXT NOT NULL,
    citing    TEXT NOT NULL,
    cited     TEXT NOT NULL,
    position  INTEGER NOT NULL,      -- index in the citing paper's reference list
    context   TEXT,                  -- this item's citation sentence; NULL when its graph gives none
    PRIMARY KEY (item_id, citing, position)
) WITHOUT ROWID;

-- The explore-mode BM25 index, built at import (agenthop.server.search): name -> bytes.
CREATE TABLE search_index (
    name  TEXT PRIMARY KEY,
    data  BLOB NOT NULL
);

-- Gold data: never readable from the server (see open_corpus).
CREATE TABLE gold_items (
    item_id           TEXT PRIMARY KEY,
    correct_index     INTEGER NOT NULL,
    distractor_types  TEXT,           -- JSON list per option, or NULL
    gold_paper_ids    TEXT NOT NULL,  -- JSON list
    gold_arxiv_ids    TEXT NOT NULL,  -- JSON list
    bridge_paper_ids  TEXT NOT NULL,  -- JSON list
    bridge_arxiv_ids  TEXT NOT NULL   -- JSON list
);

CREATE TABLE gold_recall_labels (
    item_id           TEXT NOT NULL,
    position          INTEGER NOT NULL,
    paper_title       TEXT,
    arxiv_id          TEXT NOT NULL,
    section           TEXT NOT NULL,
    relevance         TEXT NOT NULL,  -- direct | supporting
    what_it_contains  TEXT,
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;
"""

# Each gold paper's citation count as construction recorded it (the release's optional gold_citation_counts), for the
# panel's closed-book strata. Created by the importer only for a release that records counts, so a corpus without
# them (the committed demo corpus among them) keeps its tables; readers treat a missing table as no counts.
GOLD_CITATION_COUNTS_DDL = """
CREATE TABLE IF NOT EXISTS gold_citation_counts (
    item_id    TEXT NOT NULL,
    position   INTEGER NOT NULL,      -- the gold paper's position in gold_paper_ids
    paper_id   TEXT NOT NULL,
    citations  INTEGER NOT NULL,
    taken      TEXT,                  -- the date the count was taken (YYYY-MM-DD), NULL when not recorded
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;
"""

# Built after the bulk load (sorting once is cheaper than inserting large rows in key order); the
# importer builds one earlier when one of its own checks needs it. Table -> index. (Item tables are
# clustered by item instead: they are written item by item.)
INDEXES = {
    "papers": "CREATE INDEX papers_arxiv ON papers(arxiv_id)",
    "sections": "CREATE UNIQUE INDEX sections_key ON sections(arxiv_id, position)",
    "edges": "CREATE INDEX edges_cited ON edges(cited)",  # explore mode's cited-by (Corpus.citing)
}


class CorpusError(Exception):
    """The corpus file cannot be used; the message says why and what to do."""


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(DDL)
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (json.dumps(SCHEMA_VERSION),))


def create_index(conn: sqlite3.Connection, table: str) -> None:
    """The index of ``table`` (see INDEXES), unless it is there already."""
    conn.execute(INDEXES[table].replace("INDEX", "INDEX IF NOT EXISTS", 1))


def read_meta(conn: sqlite3.Connection) -> dict:
    return {key: json.loads(value) for key, value in conn.execute("SELECT key, value FROM meta")}


def _deny_gold(action: int, arg1, arg2, dbname, source) -> int:
    if action == sqlite3.SQLITE_READ and arg1 and arg1.startswith(GOLD_PREFIX):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _truncated(path: Path) -> str | None:
    """Why an SQLite file is shorter than its header says, or None.

    SQLite trusts the in-header page count when the header's 'version-valid-for'
    matches its change counter; a file shorter than that lost its tail (a partial
    copy or download) and would fail later, on whichever query reaches the gap.
    """
    with open(path, "rb") as f:
        header = f.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return None  # not SQLite at all: sqlite3 reports that itself
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if header[24:28] != header[92:96] or pages == 0:
        return None
    size = path.stat().st_size
    if size < pages * page_size:
        return f"{size} bytes, but its header says {pages} pages of {page_size} bytes"
    return None


def open_corpus(path: str | Path, *, allow_gold: bool = False) -> sqlite3.Connection:
    """Open a corpus read-only and check it is one this code understands.

    ``allow_gold`` is for the scorer and the runner's progress display; the
    MCP server always opens without it.
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError(
            f"corpus file not found: {path}. Build one by importing a release ('agenthop-server corpus import', docs/corpus.md) "
            "or use the committed corpus.sqlite."
        )
    truncated = _truncated(path)
    if truncated:
        raise CorpusError(
            f"{path} is truncated ({truncated}); rebuild it with 'agenthop-server corpus import' or copy it again."
        )
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise CorpusError(
            f"{path} is not a readable SQLite corpus ({exc}); rebuild it with 'agenthop-server corpus import'."
        ) from exc
    if "meta" not in tables:
        raise CorpusError(f"{path} is an SQLite file but not an AgentHop corpus (no meta table).")
    try:
        meta = read_meta(conn)
    except (ValueError, sqlite3.DatabaseError) as exc:
        raise CorpusError(
            f"{path} is not a readable SQLite corpus: its meta table is damaged ({exc}); "
            "rebuild it with 'agenthop-server corpus import'."
        ) from exc
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:
        raise CorpusError(
            f"{path} has corpus schema version {version!r}; this AgentHop reads version {SCHEMA_VERSION}. "
            "Rebuild it with 'agenthop-server corpus import'."
        )
    missing = {
        "papers",
        "sections",
        "edges",
        "items",
        "item_nodes",
        "item_edges",
        "search_index",
        "gold_items",
    } - tables
    if missing:
        raise CorpusError(f"{path} lacks tables {sorted(missing)}; rebuild it with 'agenthop-server corpus import'.")
    if not allow_gold:
        conn.set_authorizer(_deny_gold)
    return conn
