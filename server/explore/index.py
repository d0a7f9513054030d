"""Explore mode's search index: a tantivy index beside the corpus file, built at import and memory-mapped by the server.

Why tantivy (docs/corpus.md, "Search index", and docs/benchmarks.md give the measurement): FTS5 ranks an OR query by
scoring every paper that holds any of its words, seconds at a million papers; bm25s holds a dense score matrix per
query word and scores every matching document too. tantivy's block-max WAND skips the blocks of postings that cannot
reach the top k, and its fast fields (column-stored year, venue, citation count, has-text) make filters and sorts
cost no scan of the corpus file.

Layout, for a corpus ``X.sqlite``: ``X.sqlite.search/`` holding ``papers/`` (title, abstract, authors of every paper
shown in explore mode: records merged into another are left out), ``sections/`` (header and text of each section of
the papers with text) and ``manifest.json`` (format, the corpus's ``corpus_id``, counts, the venue names). The folder
is built under a temporary name in the same directory and renamed into place once complete, so a killed import
never leaves a half-written index under the served name; ``manifest.json`` is written last inside it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tantivy

log = logging.getLogger("agenthop.server")

FORMAT = 1  # bump when the fields or the tokenizer change: an index of another format is not served
ANALYZER = "words"  # every run of \w, lower-cased: the words server/search.tokenize finds (it drops stop words only)
HEAP_BYTES = 200_000_000  # tantivy's indexing budget (import peak RSS: docs/benchmarks.md)
_BUILDING = ".building-"


def index_dir(corpus_path: Path) -> Path:
    corpus_path = Path(corpus_path)
    return corpus_path.with_name(corpus_path.name + ".search")


def _analyzer():
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+")).filter(tantivy.Filter.lowercase()).build()


def _text(builder: tantivy.SchemaBuilder, name: str) -> None:
    builder.add_text_field(name, stored=False, tokenizer_name=ANALYZER, index_option="position")


def papers_schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    for name in ("title", "abstract", "authors"):
        _text(b, name)
    b.add_unsigned_field("rowid", fast=True, indexed=True)  # the paper's rowid in the corpus file
    b.add_integer_field("year", fast=True, indexed=True)
    b.add_unsigned_field("venue", fast=True, indexed=True)  # position in the manifest's venue list
    b.add_unsigned_field("citations", fast=True)  # distinct citing papers in the corpus
    b.add_unsigned_field("has_text", fast=True, indexed=True)
    b.add_unsigned_field("listing", fast=True)  # has_text << 32 | citations: the order of a listing with no query
    return b.build()


def sections_schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    for name in ("header", "text", "authors"):
        _text(b, name)
    b.add_unsigned_field("rowid", fast=True)  # the section's rowid
    b.add_unsigned_field("paper", fast=True)  # its paper's rowid
    b.add_integer_field("year", fast=True, indexed=True)
    b.add_unsigned_field("venue", fast=True, indexed=True)
    b.add_unsigned_field("citations", fast=True)
    return b.build()


def _open(path: Path, schema: tantivy.Schema | None = None) -> tantivy.Index:
    index = tantivy.Index(schema, str(path), reuse=False) if schema is not None else tantivy.Index.open(str(path))
    index.register_tokenizer(ANALYZER, _analyzer())
    return index


_PAPERS_SQL = """
SELECT p.rowid, p.title, p.abstract, p.authors, p.year, p.venue, p.has_text, coalesce(n.n, 0)
FROM papers p LEFT JOIN cited_by_counts n ON n.paper_id = p.paper_id
WHERE NOT EXISTS (SELECT 1 FROM paper_clusters c WHERE c.paper_id = p.paper_id AND c.canonical != p.paper_id)
ORDER BY p.rowid
"""
_SECTIONS_SQL = """
SELECT s.rowid, s.header, s.text, p.rowid, p.authors, p.year, p.venue, coalesce(n.n, 0)
FROM papers p JOIN sections s ON s.arxiv_id = p.arxiv_id LEFT JOIN cited_by_counts n ON n.paper_id = p.paper_id
WHERE p.has_text = 1
ORDER BY p.rowid, s.position
"""


def _authors(value: str | None) -> str:
    return "\n".join(json.loads(value or "[]"))


def _unsigned(doc: tantivy.Document, **values: int) -> None:
    for name, value in values.items():
        doc.add_unsigned(name, value)


def _fill(writer, rows, make) -> int:
    n = 0
    for row in rows:
        writer.add_document(make(row))
        n += 1
    writer.commit()
    writer.wait_merging_threads()
    return n


def build(conn: sqlite3.Connection, dest: Path, corpus_id: str | None, echo: Callable[[str], None] = print) -> Path:
    """Write the index of the corpus open on ``conn`` into a new temporary folder beside ``dest``; return that folder.

    :func:`install` renames it to ``dest``. Until then nothing under ``dest``'s name has changed.
    """
    started = time.monotonic()
    dest = Path(dest)
    remove_stale_builds(dest)
    tmp = dest.with_name(f".{dest.name}{_BUILDING}{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        venues: dict[str, int] = {}

        def venue_id(name: str | None) -> int:
            return venues.setdefault(name or "", len(venues))

        (tmp / "papers").mkdir()
        papers = _open(tmp / "papers", papers_schema())
        writer = papers.writer(HEAP_BYTES, 1)

        def paper_doc(row) -> tantivy.Document:
            rowid, title, abstract, authors, year, venue, has_text, cited = row
            doc = tantivy.Document(title=title or "", abstract=abstract or "", authors=_authors(authors))
            _unsigned(
                doc,
                rowid=rowid,
                venue=venue_id(venue),
                citations=cited,
                has_text=int(bool(has_text)),
                listing=(int(bool(has_text)) << 32) | min(cited, 0xFFFFFFFF),
            )
            if year is not None:
                doc.add_integer("year", year)
            return doc

        n_papers = _fill(writer, conn.execute(_PAPERS_SQL), paper_doc)
        echo(f"search index: {n_papers} papers indexed in {time.monotonic() - started:.0f} s")
        (tmp / "sections").mkdir()
        sections = _open(tmp / "sections", sections_schema())
        writer = sections.writer(HEAP_BYTES, 1)

        def section_doc(row) -> tantivy.Document:
            rowid, header, text, paper, authors, year, venue, cited = row
            doc = tantivy.Document(header=header or "", text=text or "", authors=_authors(authors))
            _unsigned(doc, rowid=rowid, paper=paper, venue=venue_id(venue), citations=cited)
            if year is not None:
                doc.add_integer("year", year)
            return doc

        n_sections = _fill(writer, conn.execute(_SECTIONS_SQL), section_doc)
        del papers, sections, writer
        manifest = {
            "format": FORMAT,
            "corpus_id": corpus_id,
            "papers": n_papers,
            "sections": n_sections,
            "venues": list(venues),
        }
        with open(tmp / "manifest.json.part", "w", encoding="utf-8") as f:
            json.dump(manifest, f, ensure_ascii=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp / "manifest.json.part", tmp / "manifest.json")  # written last: a folder without it is unfinished
        echo(f"search index: {n_sections} sections indexed; {time.monotonic() - started:.0f} s in all")
        return tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def install(tmp: Path, dest: Path) -> None:
    """Put a finished index in place of ``dest``. The old index, if any, is moved aside first: a crash between the two
    renames leaves no index (the server then says how to build it), never a mixed one."""
    dest = Path(dest)
    old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
    if dest.exists():
        os.replace(dest, old)
    os.replace(tmp, dest)
    _fsync_dir(dest.parent)
    shutil.rmtree(old, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_builds(dest: Path) -> list[Path]:
    """Delete the temporary folders of builds whose process is gone (an import killed part-way)."""
    removed = []
    for prefix in (f".{dest.name}{_BUILDING}", f".{dest.name}.old-"):
        for path in dest.parent.glob(prefix + "*"):
            pid = path.name[len(prefix) :]
            if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def build_for_corpus(corpus_path: Path, echo: Callable[[str], None] = print) -> dict:
    """Build (or rebuild) the index of an existing corpus file: ``agenthop-server corpus index``."""
    corpus_path = Path(corpus_path)
    conn = sqlite3.connect(f"file:{corpus_path}?mode=ro", uri=True)
    try:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"paper_clusters", "cited_by_counts"} <= tables:
            raise ValueError(
                f"{corpus_path} was built before explore mode had its tables: "
                "import it again with 'agenthop-server corpus import' (that builds the search index too)"
            )
        row = conn.execute("SELECT value FROM meta WHERE key = 'corpus_id'").fetchone()
        corpus_id = json.loads(row[0]) if row else None
        dest = index_dir(corpus_path)
        install(build(conn, dest, corpus_id, echo), dest)
    finally:
        conn.close()
    return json.loads((dest / "manifest.json").read_text(encoding="utf-8"))


# --- serving -----------------------------------------------------------------------------------------------------


@dataclass
class SearchIndex:
    """The opened index: tantivy memory-maps its files, so opening costs milliseconds and RSS grows only with the
    pages a search touches."""

    path: Path
    papers: tantivy.Index
    sections: tantivy.Index
    venues: list[str]
    manifest: dict

    def __post_init__(self) -> None:
        self.papers_schema = self.papers.schema
        self.sections_schema = self.sections.schema
        self._venue_words = [v.lower() for v in self.venues]

    def venue_ids(self, patterns: list[str]) -> list[int]:
        """Venues whose name contains any of ``patterns`` (lower case): a pass over the distinct venue names."""
        return [i for i, name in enumerate(self._venue_words) if any(p in name for p in patterns)]


def why_not_served(path: Path, corpus_id: str | None, n_papers: int | None = None) -> str | None:
    """None when the index at ``path`` can serve this corpus; else the reason."""
    manifest_path = Path(path) / "manifest.json"
    if not manifest_path.exists():
        return "has no search index"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "has an unreadable search index"
    if manifest.get("format") != FORMAT:
        return "has a search index of another format"
    if manifest.get("corpus_id") != corpus_id:
        return "has a search index built for another version of the corpus"
    return None


def open_index(corpus_path: Path, corpus_id: str | None) -> tuple[SearchIndex | None, str | None]:
    """(the index beside the corpus file, None) or (None, why it cannot be served)."""
    path = index_dir(corpus_path)
    reason = why_not_served(path, corpus_id)
    if reason is not None:
        return None, reason
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        papers, sections = _open(path / "papers"), _open(path / "sections")
    except (OSError, ValueError) as exc:
        log.warning("cannot open the search index %s: %s", path, exc)
        return None, "has a search index that cannot be opened"
    return SearchIndex(path, papers, sections, manifest["venues"], manifest), None


_OPENED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _stamp(corpus_path: Path) -> tuple | None:
    """What says an index folder was (re)built: its manifest's inode and modification time, None when there is none."""
    try:
        st = os.stat(index_dir(corpus_path) / "manifest.json")
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def corpus_index(corpus) -> tuple[SearchIndex | None, str | None]:
    """The index of a served corpus (a papers.Corpus), opened once per corpus object. When it cannot be served, a
    later call looks again once the folder has changed, so an index built by `corpus index` while the server runs
    is used from the next search on."""
    with _LOCK:
        cached = _OPENED.get(corpus)
        if cached is not None and (cached[0][0] is not None or cached[1] == _stamp(corpus.path)):
            return cached[0]
        stamp = _stamp(corpus.path)
        found = open_index(corpus.path, corpus.meta.get("corpus_id"))
        _OPENED[corpus] = (found, stamp)
        if found[0] is None:
            log.warning(
                "%s %s: explore search falls back to SQLite FTS5 (slow on large corpora); "
                "build it with: agenthop-server corpus index %s",
                corpus.path,
                found[1],
                corpus.path,
            )
        return found
