"""Paper IDs and the citation graph: link each bibliography entry to a paper of the set, or make it a node of its own.

The set is kept in a scratch SQLite file, not in memory, so a build of 100K+
papers uses the same memory as a build of ten. A reference is linked, in order,
by the identifier the source resolved itself (S2ORC's ``link``), by DOI, arXiv
ID, PMCID, ACL ID or PMID, then by normalised title when the years agree (or one
is unknown). A reference that links to nothing in the set becomes a metadata-only
paper (title, year, authors and venue from the bibliography; an entry without a
title shows its printed text); two papers citing the same outside work share that
node. One paper that arrives twice (same ID, or same title and year across formats)
is kept once: the copy with text, then the later version.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from agenthop.corpus.convert import anthology, works
from agenthop.corpus.convert.markers import AuthorYearIndex, marker_names
from agenthop.corpus.convert.model import ID_KINDS, Paper, Reference
from agenthop.corpus.convert.names import clean_authors
from agenthop.corpus.convert.refparse import repair
from agenthop.corpus.convert.rejoin import Vocabulary
from agenthop.corpus.convert.text import display_title, normalise_title

MAX_ID = 200
_PREFIX = {"doi": "doi", "arxiv": "arxiv", "pmcid": "pmc", "acl": "acl", "pmid": "pmid"}
MIN_TITLE = 12  # normalised characters: shorter titles ("Introduction") match too much to link on

_SCHEMA = """
CREATE TABLE papers (
    pid TEXT PRIMARY KEY, title TEXT NOT NULL, abstract TEXT, authors TEXT NOT NULL, year INTEGER,
    venue TEXT, ids TEXT NOT NULL, in_set INTEGER NOT NULL, has_text INTEGER NOT NULL DEFAULT 0, source TEXT, version INTEGER,
    licence TEXT, richness INTEGER NOT NULL DEFAULT 0, named_by_file INTEGER NOT NULL DEFAULT 0, pages TEXT
);
CREATE TABLE pool (pid TEXT PRIMARY KEY, line TEXT NOT NULL);
CREATE TABLE keys (key TEXT PRIMARY KEY, pid TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE titles (norm TEXT NOT NULL, year INTEGER, in_set INTEGER NOT NULL, pid TEXT NOT NULL);
CREATE INDEX titles_norm ON titles(norm);
CREATE TABLE refs (citing TEXT NOT NULL, pos INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (citing, pos)) WITHOUT ROWID;
CREATE TABLE edges (citing TEXT NOT NULL, pos INTEGER NOT NULL, cited TEXT NOT NULL, context TEXT, PRIMARY KEY (citing, pos)) WITHOUT ROWID;
CREATE TABLE raw_edges (citing TEXT NOT NULL, pos INTEGER NOT NULL, cited TEXT NOT NULL, context TEXT, PRIMARY KEY (citing, pos)) WITHOUT ROWID;
CREATE INDEX raw_edges_cited ON raw_edges(cited);
CREATE TABLE mentions (cited TEXT NOT NULL, title TEXT, year INTEGER, authors TEXT NOT NULL, venue TEXT, pages TEXT);
CREATE TABLE markers (citing TEXT NOT NULL, marker TEXT NOT NULL, context TEXT);
"""


def _clean_id(value: str) -> str:
    value = "".join(ch for ch in value if not ch.isspace() and ch.isprintable())
    if len(value) > MAX_ID:
        value = value[:150] + "~" + hashlib.sha1(value.encode()).hexdigest()[:16]
    return value


def paper_id(
    ids: dict[str, str],
    source_id: str | None,
    title: str,
    year: int | None,
    *,
    prefix: str = "paper",
    content: str = "",
) -> str:
    """The readable ID a paper gets: doi:…, arxiv:…, pmc:…, acl:…, s2orc:…, else a hash of title and year
    (``paper:`` for a paper of the set, ``ref:`` for a bibliography entry outside it). With no title, ``content``
    (a paper's own text) joins the hash, so that untitled papers are not all one paper."""
    for kind in ID_KINDS:
        if ids.get(kind):
            return _clean_id(f"{_PREFIX[kind]}:{ids[kind]}")
    if source_id:
        return _clean_id(f"s2orc:{source_id}")
    title = normalise_title(title)
    digest = hashlib.sha1(f"{title}|{year or ''}{'' if title else '|' + content}".encode()).hexdigest()[:16]
    return f"{prefix}:{digest}"


def _own_text(paper: Paper) -> str:
    """What tells an untitled paper from another: its abstract and first section."""
    first = paper.sections[0] if paper.sections else None
    return f"{paper.abstract or ''}|{first.header + first.text if first else ''}"


def untitled(ref: dict) -> str:
    """What a bibliography entry without a title or printed text still holds (GROBID 0.5.1 leaves entries with
    only their authors and year when it splits one reference in two), so that no message calls it empty wrongly."""
    authors = ref.get("authors") or []
    ids = ref.get("ids") or {}
    if not authors and not ref.get("year") and not ids:
        return "nothing else either: the entry is empty"
    names = ", ".join(authors[:3]) + (", …" if len(authors) > 3 else "")
    held = [
        f"authors {names}" if authors else "",
        str(ref["year"]) if ref.get("year") else "",
        "; ".join(f"{k} {v}" for k, v in sorted(ids.items())),
    ]
    return "only " + ", ".join(h for h in held if h)


def _id_title(ids: dict[str, str]) -> str:
    """What to show for an entry whose only name is an identifier (GROBID found the arXiv ID, not the title)."""
    kind = next((k for k in ID_KINDS if ids.get(k)), None)
    return f"{_PREFIX[kind]}:{ids[kind]} (no title in the bibliography entry)" if kind else ""


def _authoritative(paper: Paper) -> None:
    """A paper of the set with an old-style ACL ID takes the Anthology's year and proceedings name (GROBID reads
    them off the first page, wrongly at times); every paper's author names are cleaned of the converter's garbling."""
    paper.authors = clean_authors(paper.authors)
    acl = anthology.acl_id_of(paper.ids)
    if acl is None:
        return
    official = anthology.metadata(acl)
    paper.ids = {**paper.ids, "acl": acl}
    paper.year = official["year"]
    paper.venue = official["venue"] or paper.venue


def _richness(paper: Paper) -> int:
    """How much a copy of a paper holds: characters of text, and 500 per bibliography entry."""
    return sum(len(s.text) for s in paper.sections) + 500 * len(paper.references)


def _named_by_file(paper: Paper) -> bool:
    """Is the paper's ID its file's name (doc2json's paper_id), for want of any identifier?"""
    return paper.source_id_from_name and paper.source_id is not None and not any(paper.ids.values())


def _keys(ids: dict[str, str], source_id: str | None) -> list[str]:
    keys = [f"{kind}:{ids[kind]}" for kind in ID_KINDS if ids.get(kind)]
    if source_id:
        keys.append(f"s2orc:{source_id}")
    return keys


class CitationStore:
    """Papers and references of one build, in a scratch SQLite file."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = OFF")
        self.conn.execute("PRAGMA synchronous = OFF")
        self.conn.execute("PRAGMA cache_size = -32768")  # 32 MiB, whatever the corpus size
        self.conn.executescript(_SCHEMA)
        self.conn.execute("BEGIN")
        self.duplicates: list[str] = []
        self.source_id_clashes: list[str] = []
        self.untitled = 0
        self.dropped_references = 0
        self.dropped_examples: list[str] = []  # "<citing> reference <n>: <why>", the first few
        self.works: dict = {}  # what merging records of one work did (works.merge's counts)
        self.edges_from_text = 0  # edges found by an in-text citation's author and year, not by a bibliography key
        self.vocabulary = Vocabulary()  # the corpus's words, to rejoin words split at line ends

    def close(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()

    # -- pass 1: the papers of the set -----------------------------------------

    def _taken(self, pid: str, keys: list[str]) -> str | None:
        """The paper of the set that already has this ID or one of these keys."""
        row = self.conn.execute("SELECT pid FROM papers WHERE pid = ?", (pid,)).fetchone()
        if row is None and keys:
            marks = ",".join("?" * len(keys))
            row = self.conn.execute(f"SELECT pid FROM keys WHERE key IN ({marks})", keys).fetchone()
        return row[0] if row else None

    def _source_id_clash(self, paper: Paper, taken: str) -> bool:
        """Does ``paper`` share only its source key with ``taken``, under another title? Then the key is not unique.

        doc2json names a paper after its file up to the first dot, so every 2020.acl-main.N.pdf becomes "2020":
        those are different papers, not copies of one.
        """
        if not paper.source_id or self._taken(
            paper_id(paper.ids, None, paper.title, paper.year, content=_own_text(paper)), _keys(paper.ids, None)
        ):
            return False
        row = self.conn.execute("SELECT title FROM papers WHERE pid = ?", (taken,)).fetchone()
        return row is not None and normalise_title(row[0]) != normalise_title(paper.title)

    def _same_title(self, paper: Paper) -> str | None:
        """A paper of the set with this paper's normalised title and a year that agrees: the same paper in
        another format (GROBID TEI beside doc2json JSON without a DOI). Two papers with different IDs of one kind
        (two DOIs, two ACL IDs: a conference paper and its journal version) stay two papers."""
        norm = normalise_title(paper.title)
        if len(norm) < MIN_TITLE:
            return None
        rows = self.conn.execute(
            "SELECT t.pid, t.year, p.ids FROM titles t JOIN papers p ON p.pid = t.pid "
            "WHERE t.norm = ? AND t.in_set = 1 ORDER BY t.rowid",
            (norm,),
        )
        for pid, year, ids in rows:
            ids = json.loads(ids)
            if any(kind in ids and ids[kind] != value for kind, value in paper.ids.items()):
                continue
            if paper.year is None or year is None or paper.year == year:
                return pid
        return None

    def _keep_new(self, paper: Paper, taken: str) -> tuple[bool, str]:
        """Should ``paper`` replace the copy ``taken`` already holds? The copy with text wins, then the later version,
        then the richer copy (GROBID TEI beside the doc2json JSON made from it: more text and references)."""
        has_text, version, richness = self.conn.execute(
            "SELECT has_text, version, richness FROM papers WHERE pid = ?", (taken,)
        ).fetchone()
        new = (1 if paper.sections else 0, paper.version or 0, _richness(paper))
        if new[0] != has_text:
            return new[0] > has_text, "the copy with text"
        if new[1] != (version or 0):
            return new[1] > (version or 0), "the later version"
        if new[2] != richness:
            return new[2] > richness, "the richer copy (more characters of text and bibliography entries)"
        return False, "the first in input order"

    def _rename(self, old: str, new: str, ids: dict[str, str]) -> None:
        """Give the paper kept the ID of a copy that has a real one (a DOI, or a title hash) instead of doc2json's
        file name, and the identifiers of both copies."""
        self.conn.execute(
            "UPDATE papers SET pid = ?, ids = ?, named_by_file = 0 WHERE pid = ?",
            (new, json.dumps(ids, sort_keys=True), old),
        )
        for table, column in (("titles", "pid"), ("refs", "citing"), ("keys", "pid")):
            self.conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (new, old))
        row = self.conn.execute("SELECT line FROM pool WHERE pid = ?", (old,)).fetchone()
        if row is not None:
            record = json.loads(row[0])
            record["arxiv_id"] = new
            self.conn.execute(
                "UPDATE pool SET pid = ?, line = ? WHERE pid = ?",
                (new, json.dumps(record, ensure_ascii=False) + "\n", old),
            )

    def _drop(self, pid: str) -> str:
        """Forget a paper of the set (a worse copy); its source. Its keys stay, to point at the copy kept."""
        (source,) = self.conn.execute("SELECT source FROM papers WHERE pid = ?", (pid,)).fetchone()
        for table, column in (("papers", "pid"), ("titles", "pid"), ("refs", "citing"), ("pool", "pid")):
            self.conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (pid,))
        return source

    def add(self, paper: Paper) -> str | None:
        """Register a paper of the set; its ID, or None if a better copy is kept (see :meth:`_keep_new`)."""
        _authoritative(paper)
        pid = paper_id(paper.ids, paper.source_id, paper.title, paper.year, content=_own_text(paper))
        keys = _keys(paper.ids, paper.source_id)
        taken = self._taken(pid, keys)
        if taken is not None and self._source_id_clash(paper, taken):
            self.source_id_clashes.append(f"{paper.source} (source ID {json.dumps(paper.source_id)}, as {taken})")
            paper.source_id = None
            pid, keys = (
                paper_id(paper.ids, None, paper.title, paper.year, content=_own_text(paper)),
                _keys(paper.ids, None),
            )
            taken = self._taken(pid, keys)
        if taken is None:
            taken = self._same_title(paper)
        if taken is not None:
            replace, why = self._keep_new(paper, taken)
            kept, taken_by_file, taken_ids, taken_licence = self.conn.execute(
                "SELECT source, named_by_file, ids, licence FROM papers WHERE pid = ?", (taken,)
            ).fetchone()
            by_file = _named_by_file(paper)
            if not replace:
                # A licence only the other copy states (doc2json keeps none) is the paper's too.
                self.conn.execute(
                    "UPDATE papers SET licence = COALESCE(licence, ?) WHERE pid = ?", (paper.licence, taken)
                )
                if taken_by_file and not by_file:
                    self._rename(taken, pid, {**paper.ids, **json.loads(taken_ids)})
                    self.conn.executemany(
                        "INSERT OR IGNORE INTO keys(key, pid) VALUES (?, ?)", [(k, pid) for k in keys]
                    )
                    why += f", under this copy's ID {pid} (not {taken}, which is the other's file name)"
                    taken = pid
                self.duplicates.append(f"{paper.source} (same paper as {taken}; kept {kept}, {why})")
                return None
            paper.ids = {**json.loads(taken_ids), **paper.ids}
            paper.licence = paper.licence or taken_licence
            if by_file and not taken_by_file:
                why += f", under the other copy's ID {taken} (not {pid}, which is this file's name)"
                pid = taken
            dropped = self._drop(taken)
            self.duplicates.append(f"{dropped} (same paper as {taken}; kept {paper.source}, {why})")
            self.conn.execute("UPDATE keys SET pid = ? WHERE pid = ?", (pid, taken))
        if not paper.title:
            self.untitled += 1
        self.conn.execute(
            "INSERT INTO papers(pid, title, abstract, authors, year, venue, ids, in_set, has_text, source, version, licence, "
            "richness, named_by_file, pages) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)",
            (
                pid,
                paper.title,
                paper.abstract,
                json.dumps(paper.authors, ensure_ascii=False),
                paper.year,
                paper.venue,
                json.dumps(paper.ids, sort_keys=True),
                1 if paper.sections else 0,
                paper.source,
                paper.version,
                paper.licence,
                _richness(paper),
                int(_named_by_file(paper)),
                paper.pages,
            ),
        )
        self.conn.executemany("INSERT OR IGNORE INTO keys(key, pid) VALUES (?, ?)", [(k, pid) for k in keys])
        norm = normalise_title(paper.title)
        if len(norm) >= MIN_TITLE:
            self.conn.execute(
                "INSERT INTO titles(norm, year, in_set, pid) VALUES (?, ?, 1, ?)", (norm, paper.year, pid)
            )
        rows = []
        for pos, ref in enumerate(paper.references):
            rows.append(
                (
                    pid,
                    pos,
                    json.dumps(
                        {
                            "title": ref.title,
                            "year": ref.year,
                            "authors": ref.authors,
                            "venue": ref.venue,
                            "ids": ref.ids,
                            "link": ref.link,
                            "context": ref.context,
                            "raw": ref.raw,
                            "pages": ref.pages,
                        },
                        ensure_ascii=False,
                    ),
                )
            )
        self.conn.executemany("INSERT INTO refs(citing, pos, data) VALUES (?, ?, ?)", rows)
        self.conn.executemany(
            "INSERT INTO markers(citing, marker, context) VALUES (?, ?, ?)",
            [(pid, marker, context) for marker, context in paper.unlinked],
        )
        return pid

    # -- pass 2: linking ------------------------------------------------------------

    def _by_title(self, title: str, year: int | None) -> str | None:
        norm = normalise_title(title)
        if len(norm) < MIN_TITLE:
            return None
        for pid, found_year in self.conn.execute(
            "SELECT pid, year FROM titles WHERE norm = ? ORDER BY in_set DESC, rowid", (norm,)
        ):
            if year is None or found_year is None or year == found_year:
                return pid
        return None

    def _resolve(self, ref: Reference) -> str | None:
        keys = ([f"s2orc:{ref.link}"] if ref.link else []) + _keys(ref.ids, None)
        for key in keys:
            row = self.conn.execute("SELECT pid FROM keys WHERE key = ?", (key,)).fetchone()
            if row:
                return row[0]
        return self._by_title(ref.title, ref.year) if ref.title else None

    def _outside(self, ref: Reference) -> str:
        """A metadata-only paper for a reference the set does not hold (titled by its printed text if it has no title)."""
        pid = paper_id(ref.ids, None, ref.title or ref.raw, ref.year, prefix="ref")
        inserted = self.conn.execute(
            "INSERT OR IGNORE INTO papers(pid, title, abstract, authors, year, venue, ids, in_set, pages) "
            "VALUES (?, ?, NULL, ?, ?, ?, ?, 0, ?)",
            (
                pid,
                ref.title or display_title(ref.raw) or _id_title(ref.ids),
                json.dumps(ref.authors, ensure_ascii=False),
                ref.year,
                ref.venue,
                json.dumps(ref.ids, sort_keys=True),
                ref.pages,
            ),
        ).rowcount
        if inserted:
            self.conn.executemany(
                "INSERT OR IGNORE INTO keys(key, pid) VALUES (?, ?)", [(k, pid) for k in _keys(ref.ids, None)]
            )
            norm = normalise_title(ref.title)
            if len(norm) >= MIN_TITLE:
                self.conn.execute(
                    "INSERT INTO titles(norm, year, in_set, pid) VALUES (?, ?, 0, ?)", (norm, ref.year, pid)
                )
        return pid

    def link(self) -> Iterator[tuple[str, list[tuple[str, str | None]]]]:
        """Resolve every reference, merge the records of one work, then yield (citing, [(cited, context), ...]) per
        citing paper, in reference-list order, with the works its in-text citations name after them."""
        citing_ids = [row[0] for row in self.conn.execute("SELECT pid FROM papers WHERE in_set = 1 ORDER BY rowid")]
        no_title: dict[str, list[tuple[list[str], int | None]]] = {}
        for citing in citing_ids:
            no_title[citing] = self._resolve_all(citing)
        works.apply(self.conn, {})  # each record named as most of its citing entries name it, before comparing
        mapping, self.works = works.merge(self.conn)
        works.apply(self.conn, mapping)
        self.works["links_moved"] = sum(
            n
            for (n,) in self.conn.execute(
                "SELECT count(*) FROM raw_edges WHERE cited IN (SELECT value FROM json_each(?)) GROUP BY cited",
                (json.dumps(sorted(mapping)),),
            )
        )
        index = AuthorYearIndex(self.conn)
        for citing in citing_ids:
            resolved: list[tuple[str, str | None]] = []
            where: dict[str, int] = {}
            for cited, context in self.conn.execute(
                "SELECT cited, context FROM raw_edges WHERE citing = ? ORDER BY pos", (citing,)
            ).fetchall():
                cited = mapping.get(cited, cited)
                if cited == citing:
                    continue
                if cited in where:
                    i = where[cited]
                    if resolved[i][1] is None and context is not None:
                        resolved[i] = (cited, context)
                    continue
                where[cited] = len(resolved)
                resolved.append((cited, context))
            wanted = [(names, year, None) for names, year in no_title[citing]]
            for marker, context in self.conn.execute(
                "SELECT marker, context FROM markers WHERE citing = ? ORDER BY rowid", (citing,)
            ).fetchall():
                wanted += [(names, year, context) for names, year in marker_names(marker)]
            for names, year, context in wanted:
                cited = index.find(names, year)
                if cited is None or cited == citing:
                    continue
                if cited in where:
                    i = where[cited]
                    if resolved[i][1] is None and context is not None:
                        resolved[i] = (cited, context)
                    continue
                where[cited] = len(resolved)
                resolved.append((cited, context))
                self.edges_from_text += 1
            resolved = [(cited, self.vocabulary.rejoin(context)) for cited, context in resolved]
            self.conn.executemany(
                "INSERT INTO edges(citing, pos, cited, context) VALUES (?, ?, ?, ?)",
                [(citing, pos, cited, context) for pos, (cited, context) in enumerate(resolved)],
            )
            yield citing, resolved

    def _resolve_all(self, citing: str) -> list[tuple[list[str], int | None]]:
        """Resolve the bibliography of one paper into raw_edges (each entry repaired first, see refparse), noting
        what each entry says of the work it cites (mentions); return the (authors, year) of the entries with no title,
        printed text or identifier, which only an in-text citation's author and year can link."""
        (citing_year,) = self.conn.execute("SELECT year FROM papers WHERE pid = ?", (citing,)).fetchone()
        rows = self.conn.execute("SELECT data FROM refs WHERE citing = ? ORDER BY pos", (citing,)).fetchall()
        no_title = []
        edges: list[tuple[str, int, str, str | None]] = []
        mentions: list[tuple[str, str | None, int | None, str, str | None, str | None]] = []
        seen: set[str] = {citing}
        for pos, (data,) in enumerate(rows):
            raw = json.loads(data)
            ref = repair(
                Reference(
                    key="",
                    title=raw["title"] or "",
                    year=raw["year"],
                    authors=raw["authors"],
                    venue=raw["venue"],
                    ids=raw["ids"],
                    link=raw["link"],
                    context=raw["context"],
                    raw=raw.get("raw") or "",
                    pages=raw.get("pages"),
                ),
                citing_year,
            )
            cited = self._resolve(ref)
            if cited is None:
                if not ref.title and not display_title(ref.raw) and not _id_title(ref.ids):
                    self._dropped(
                        citing,
                        pos,
                        f"no title, no printed text and no identifier of a paper in the set ({untitled(raw)})",
                    )
                    if ref.authors:
                        no_title.append((ref.authors, ref.year))
                    continue
                cited = self._outside(ref)
            mentions.append(
                (cited, ref.title or None, ref.year, json.dumps(ref.authors, ensure_ascii=False), ref.venue, ref.pages)
            )
            if cited in seen:
                continue
            seen.add(cited)
            edges.append((citing, len(edges), cited, ref.context))
        self.conn.executemany("INSERT INTO raw_edges(citing, pos, cited, context) VALUES (?, ?, ?, ?)", edges)
        self.conn.executemany(
            "INSERT INTO mentions(cited, title, year, authors, venue, pages) VALUES (?, ?, ?, ?, ?, ?)", mentions
        )
        return no_title

    def _dropped(self, citing: str, pos: int, why: str) -> None:
        self.dropped_references += 1
        if len(self.dropped_examples) < 20:
            self.dropped_examples.append(f"{citing} reference {pos + 1}: {why}")

    # -- reading back -------------------------------------------------------------

    def keep_text(self, pid: str, line: str) -> None:
        """The text record of a paper just added, written out once every copy has been seen. Its words count in the
        vocabulary that rejoins words split at line ends (rejoin.py)."""
        self.conn.execute("INSERT INTO pool(pid, line) VALUES (?, ?)", (pid, line))
        for section in json.loads(line)["sections"]:
            self.vocabulary.add(section["text"])

    def pool_lines(self) -> Iterator[str]:
        """The text records of the papers kept, in input order, with words split at line ends rejoined."""
        for (line,) in self.conn.execute("SELECT line FROM pool ORDER BY rowid"):
            record = json.loads(line)
            for section in record["sections"]:
                section["header"] = self.vocabulary.rejoin(section["header"])
                section["text"] = self.vocabulary.rejoin(section["text"])
            yield json.dumps(record, ensure_ascii=False) + "\n"

    def _rejoined(self, row: tuple) -> tuple:
        return (row[0], row[1], self.vocabulary.rejoin(row[2]), *row[3:])

    def papers(self) -> Iterator[tuple]:
        for row in self.conn.execute(
            "SELECT pid, title, abstract, authors, year, venue, ids, has_text, licence, pages FROM papers ORDER BY rowid"
        ):
            yield self._rejoined(row)

    def paper(self, pid: str) -> tuple | None:
        row = self.conn.execute(
            "SELECT pid, title, abstract, authors, year, venue, ids, has_text, licence, pages FROM papers WHERE pid = ?",
            (pid,),
        ).fetchone()
        return None if row is None else self._rejoined(row)

    def licences(self) -> Iterator[tuple[str, str | None]]:
        """(paper ID, licence as stated or None) of every paper of the set with text, in input order."""
        yield from self.conn.execute("SELECT pid, licence FROM papers WHERE in_set = 1 AND has_text = 1 ORDER BY rowid")

    def references(self, citing: str, limit: int) -> list[tuple[str, str | None]]:
        return list(
            self.conn.execute("SELECT cited, context FROM edges WHERE citing = ? ORDER BY pos LIMIT ?", (citing, limit))
        )

    def counts(self) -> dict:
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "papers_in_set": one("SELECT COUNT(*) FROM papers WHERE in_set = 1"),
            "papers_with_text": one("SELECT COUNT(*) FROM papers WHERE has_text = 1"),
            "metadata_only_references": one("SELECT COUNT(*) FROM papers WHERE in_set = 0"),
            "citations": one("SELECT COUNT(*) FROM edges"),
            "citations_in_set": one("SELECT COUNT(*) FROM edges e JOIN papers p ON p.pid = e.cited WHERE p.in_set = 1"),
            "citations_with_context": one("SELECT COUNT(*) FROM edges WHERE context IS NOT NULL"),
        }
