"""Import a release (docs/corpus.md) into a corpus file (``schema.py``), or check it without writing.

Every input shape becomes one stream of release records (``inputs.py``,
``packaged.py``); this module validates each record as it arrives and writes
it into a temporary file next to ``out``. Only when everything has been read
and checked is the temporary file renamed onto ``out``; on any error it is
deleted and an existing ``out`` is left untouched.

Memory grows with the number of papers and items (a small fingerprint each),
never with the text: sections are written in batches, and the checks that need
text (does a recall label name a section?) are SQL queries against the file
being built. A node that repeats an earlier copy of its paper is recognised by
one hash of its raw values, so known papers are never read back.

Checking (``check_release``) runs the same code, but collects every error
instead of stopping at the first, and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from itertools import count, repeat
from pathlib import Path
from typing import Any, NoReturn

from agenthop.corpus import fields
from agenthop.corpus.inputs import CITATIONS, GRAPH, ITEM, LABELS, PAPER, POOL, Source
from agenthop.corpus.open_source import open_source
from agenthop.corpus.problems import BadLabelError, Findings, ReleaseError, Where, describe, describe_warning
from agenthop.corpus.release import (
    CELLS,
    COGNITIVE_SKILLS,
    CONSENSUS_TIERS,
    DEPTHS,
    DISTRACTOR_TYPES,
    ORPHAN_PREFIX,
    QUESTION_TYPES,
    REASONING_TYPES,
    RELEVANCES,
)
from agenthop.server.corpus_schema import GOLD_CITATION_COUNTS_DDL, INDEXES, create_index, create_schema
from agenthop.server.explore import index as search_index
from agenthop.server.explore import tables as explore_tables
from agenthop.server.papers import explore_texts
from agenthop.server.search import stored_index_parts
from agenthop.server.sections import label_is_resolvable, normalise

__all__ = ["IMPORTER_VERSION", "BadLabelError", "ReleaseError", "check_release", "corpus_identity", "import_release"]

IMPORTER_VERSION = 2

_BATCH = 5000
_BATCH_CHARS = 8_000_000  # of section text per write, so that memory stays bounded whatever the sections' size
_MAX_REPORTED_SKIPS = 50
# Optional categorical values that mean "not known" (the packager writes "" and, for venue, "?").
_PLACEHOLDERS = frozenset({"", "?", "-", "n/a", "na", "none", "null", "unknown"})


_KIND_NAMES = {
    POOL: "paper_pool/papers.jsonl (text)",
    PAPER: "corpus/papers.jsonl (papers)",
    GRAPH: "graphs/full.jsonl (item graphs)",
    CITATIONS: "corpus/citations.jsonl (reference lists)",
    ITEM: "qa/full.jsonl (items)",
    LABELS: "audit/recall_labels.jsonl (labels)",
}


def _canon(value: Any) -> str:
    """Canonical JSON for values stored in the corpus (deterministic bytes)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class _Importer:
    """Validates release records one at a time and writes them; ``finish`` runs the checks that need everything."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        findings: Findings,
        *,
        skip_bad_labels: bool,
        checking: bool,
        echo: Callable[[str], None],
    ) -> None:
        self.conn = conn
        self.findings = findings
        self.skip_bad_labels = skip_bad_labels
        self.checking = checking
        self.echo = echo
        self.pool_keys: set[str] = set()
        self.text_keys: set[str] = set()  # pool keys with at least one section
        # paper_id -> (hash of the first node's raw values, fingerprint of the kept record; see _fingerprint).
        self.papers: dict[str, tuple] = {}
        self.graph_papers: set[str] = set()  # papers named by some item's graph
        self.text_owner: dict[str, str] = {}  # text_id -> the corpus paper that names it
        self.graphs: dict[str, str] = {}  # sample_id -> where its graph record is
        self.items: dict[str, str] = {}  # item_id -> where its qa record is
        self.labelled: dict[str, str] = {}  # sample_id -> where its label record is
        self.citing_listed: set[str] = set()
        self.edge_lists_written: set[int] = set()  # hashes of (citing, references, contexts) already in ``edges``
        self.venue_spelling: dict[str, str] = {}
        self.headers_cache: dict[str, list[str]] = {}
        self.unchecked: set[tuple[str, str]] = set()  # (kind, key) of records refused while checking: no cascades
        self.pool_rows: list[tuple] = []  # pool and section rows not yet written
        self.sections: list[tuple] = []
        self.section_chars = 0
        self.n = dict.fromkeys((POOL, PAPER, GRAPH, CITATIONS, ITEM, LABELS), 0)
        self.metadata_conflicts = 0
        self.n_item_nodes = self.n_item_edges = self.n_item_contexts = 0
        self.skipped_labels = 0
        self.skipped_details: list[dict] = []
        self.items_without_labels: list[str] = []

    # -- dispatch ------------------------------------------------------------------

    def run(self, source: Source) -> None:
        handlers = {
            POOL: self.add_pool,
            PAPER: self.add_paper,
            GRAPH: self.add_graph,
            CITATIONS: self.add_citations,
            ITEM: self.add_item,
            LABELS: self.add_labels,
        }
        for kind, where, record in source.records():
            try:
                if isinstance(
                    record, ReleaseError
                ):  # a line that is not valid JSON: the next line can still be checked
                    raise record
                handlers[kind](where, record)
            except ReleaseError as exc:
                if not self.checking:
                    raise
                self.findings.add_error(exc)
                self.unchecked.add((kind, _record_key(kind, record)))
            self.n[kind] += 1
            if self.n[kind] % 2000 == 0:
                self.echo(f"  {self.n[kind]} {kind} records")
        for kind, example in source.notes:
            self.findings.warn(kind, example)
        for kind, n in self.n.items():
            if n:
                self.echo(f"{_KIND_NAMES[kind]}: {n} records")

    def _skip(self, kind: str, key: Any) -> bool:
        """Whether a problem about ``key`` only repeats the error of a record already refused while checking."""
        return self.checking and (kind, key) in self.unchecked

    # -- paper_pool/papers.jsonl -------------------------------------------------------

    def add_pool(self, where: Where, rec: dict) -> None:
        arxiv_id = fields.string(rec, "arxiv_id", where).strip()
        fields.paper_id(arxiv_id, where, "arxiv_id", "a pool key")
        title = fields.string(rec, "title", where, nonempty=False)
        secs = fields.get(rec, "sections", where)
        if not isinstance(secs, list):
            raise where.error("sections", "a list of {header, text} objects", describe(secs))
        rows = []
        for i, sec in enumerate(secs):
            if type(sec) is not dict or type(sec.get("header")) is not str or type(sec.get("text")) is not str:
                if not isinstance(sec, dict):
                    raise where.error(f"sections[{i}]", "an object {header, text}", describe(sec))
                fields.string(sec, "header", where, field=f"sections[{i}].header", nonempty=False)
                fields.string(sec, "text", where, field=f"sections[{i}].text", nonempty=False)
            rows.append((arxiv_id, i, sec["header"], sec["text"]))
        if arxiv_id in self.pool_keys:
            raise where.error(
                "arxiv_id", "an arXiv ID not seen before in this file", f"a duplicate {json.dumps(arxiv_id)}"
            )

        self.pool_keys.add(arxiv_id)
        if rows:
            self.text_keys.add(arxiv_id)
        else:
            self.findings.warn("zero_section_papers", {"where": where.place, "arxiv_id": arxiv_id})
        if rec.get("tables"):
            self.findings.warn("pool_tables_ignored", {"where": where.place, "arxiv_id": arxiv_id})
        self._duplicate_headers(where, arxiv_id, [r[2] for r in rows])
        self.pool_rows.append((arxiv_id, title, len(rows)))
        self.sections.extend(rows)
        self.section_chars += sum(len(r[3]) for r in rows)
        if len(self.sections) >= _BATCH or self.section_chars >= _BATCH_CHARS:
            self._flush_sections()

    def _duplicate_headers(self, where: Where, arxiv_id: str, headers: list[str]) -> None:
        """Headers that share a name no single header spells exactly ("4.2 Results" and "5.3 Results", or two "Results").

        Asked for that name, read_section cannot pick one. ("Details" beside "Apdx_A: Details" is fine: one header is exactly "Details".)
        """
        groups: dict[str, list[str]] = {}
        for header in headers:
            groups.setdefault(normalise(header), []).append(header)
        repeated = [
            group
            for name, group in groups.items()
            if len(group) > 1 and sum(1 for h in group if h.strip().lower() == name) != 1
        ]
        if repeated:
            self.findings.warn("duplicate_headers", {"where": where.place, "arxiv_id": arxiv_id, "headers": repeated})

    def _flush_sections(self) -> None:
        self.conn.executemany("INSERT INTO pool(arxiv_id, title, n_sections) VALUES (?, ?, ?)", self.pool_rows)
        self.conn.executemany(
            "INSERT INTO sections(arxiv_id, position, header, text) VALUES (?, ?, ?, ?)", self.sections
        )
        self.pool_rows = []
        self.sections = []
        self.section_chars = 0

    # -- corpus/papers.jsonl ------------------------------------------------------------

    def add_paper(self, where: Where, rec: dict) -> None:
        pid = fields.paper_id(fields.get(rec, "paper_id", where), where, "paper_id")
        if pid in self.papers:
            raise where.error("paper_id", "a paper_id not seen before in this file", f"a duplicate {json.dumps(pid)}")
        title = fields.string(rec, "title", where, nonempty=False)
        abstract = fields.string(rec, "abstract", where, nonempty=False, optional=True) or ""
        authors = self._authors(rec, where, "authors")
        year = fields.integer(rec, "year", where, optional=True)
        venue = fields.blank_to_none(fields.string(rec, "venue", where, nonempty=False, optional=True))
        text_id = fields.blank_to_none(fields.string(rec, "text_id", where, nonempty=False, optional=True))
        if text_id is not None:
            text_id = text_id.strip()
            if text_id not in self.pool_keys and not self._skip(POOL, text_id):
                raise where.error(
                    "text_id",
                    "the arxiv_id of a record in paper_pool/papers.jsonl, or null",
                    f"{json.dumps(text_id)}, which is not in the pool",
                )
            if text_id in self.text_owner:
                raise where.error(
                    "text_id",
                    "a text record no other paper names",
                    f"{json.dumps(text_id)}, already the text of {json.dumps(self.text_owner[text_id])}",
                )
        ids = rec.get("ids") or {}
        if not isinstance(ids, dict):
            raise where.error("ids", "an object of external IDs {doi, arxiv, pmcid, acl, ...}", describe(ids))
        clean_ids = {}
        for key, value in ids.items():
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            if not isinstance(value, str):
                raise where.error(f"ids.{key}", "a string", describe(value))
            clean_ids[key.strip().lower()] = value.strip()

        licence = fields.blank_to_none(fields.string(rec, "licence", where, nonempty=False, optional=True))
        licence_url = fields.blank_to_none(fields.string(rec, "licence_url", where, nonempty=False, optional=True))
        if licence_url is not None and licence is None:
            raise where.error("licence", 'the licence\'s name beside licence_url (e.g. "CC BY 4.0")', "nothing")
        if licence is not None:
            self.conn.execute(
                "INSERT INTO paper_licences(paper_id, licence, url) VALUES (?, ?, ?)",
                (pid, licence.strip(), licence_url),
            )

        pages = fields.blank_to_none(fields.string(rec, "pages", where, nonempty=False, optional=True))
        if pages is not None:
            # Made on the first paper with pages, so a corpus without any keeps its bytes (and its digests).
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS paper_pages (paper_id TEXT PRIMARY KEY, pages TEXT NOT NULL) WITHOUT ROWID"
            )
            self.conn.execute("INSERT INTO paper_pages(paper_id, pages) VALUES (?, ?)", (pid, pages.strip()))

        if text_id is not None:
            self.text_owner[text_id] = pid
        self.papers[pid] = (None, _fingerprint(title, text_id, year, abstract, authors, venue))
        self.conn.execute(
            "INSERT INTO papers(paper_id, arxiv_id, title, abstract, year, authors, venue, ids, has_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                pid,
                text_id,
                title,
                abstract,
                year,
                _canon(authors),
                venue,
                _canon(clean_ids),
                int(text_id in self.text_keys),
            ),
        )

    @staticmethod
    def _authors(rec: dict, where: Where, field: str) -> list[str]:
        authors = rec.get("authors")
        if authors is None:
            return []
        if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
            raise where.error(field, "a list of strings", describe(authors))
        return authors

    # -- graphs/full.jsonl ----------------------------------------------------------------

    def add_graph(self, where: Where, rec: dict) -> None:
        sample_id = fields.string(rec, "sample_id", where).strip()
        if sample_id in self.graphs:
            raise where.error(
                "sample_id", "a sample_id not seen before in this file", f"a duplicate {json.dumps(sample_id)}"
            )
        nodes = fields.get(rec, "nodes", where)
        if not isinstance(nodes, dict) or not nodes:
            raise where.error(
                "nodes", "a non-empty object {paper_id: {title, arxivId, year, abstract}}", describe(nodes)
            )
        new, new_rows, conflicts = self._nodes(where, nodes)

        edges = fields.get(rec, "edges", where)
        if not isinstance(edges, dict):
            raise where.error("edges", "an object {paper_id: [cited paper_id, ...]}", describe(edges))
        contexts = rec.get("contexts") or {}
        if not isinstance(contexts, dict):
            raise where.error("contexts", "an object {citing_id: {cited_id: sentence}}", describe(contexts))
        for citing, per_cited in contexts.items():
            if not isinstance(per_cited, dict):
                raise where.error(f"contexts.{citing}", "an object {cited_id: sentence}", describe(per_cited))
            if per_cited and citing not in edges:
                raise where.error(
                    f"contexts.{citing}.{next(iter(per_cited))}",
                    "a context for an edge of this record",
                    "a context for a pair that is not an edge",
                )

        item_edges: list[tuple] = []
        union_rows: list[tuple] = []
        for citing, cited_list in edges.items():
            if citing not in nodes:
                raise where.error(
                    f"edges.{citing}",
                    "a citing paper ID among this record's nodes",
                    f"{json.dumps(citing)}, which is not a node",
                )
            if not isinstance(cited_list, list):
                raise where.error(f"edges.{citing}", "a list of cited paper IDs", describe(cited_list))
            listed = _strings(cited_list)
            if listed is None or not nodes.keys() >= listed:
                self._edge_error(where, nodes, citing, cited_list)  # raises, naming the reference
            n = len(cited_list)
            said = contexts.get(citing)
            if said:
                for cited, sentence in said.items():
                    if cited not in listed:
                        raise where.error(
                            f"contexts.{citing}.{cited}",
                            "a context for an edge of this record",
                            "a context for a pair that is not an edge",
                        )
                    if sentence is not None and not isinstance(sentence, str):
                        raise where.error(f"contexts.{citing}.{cited}", "a string", describe(sentence))
                sentences = [s if s and not s.isspace() else None for s in map(said.get, cited_list)]
            else:
                sentences = [None] * n
            item_edges.extend(zip(repeat(sample_id, n), repeat(citing, n), cited_list, range(n), sentences))
            # Most items repeat a reference list another item gave already: writing it again would change nothing.
            key = hash((citing, tuple(cited_list), tuple(sentences)))
            if key not in self.edge_lists_written:
                self.edge_lists_written.add(key)
                union_rows.extend(zip(repeat(citing, n), cited_list, range(n), sentences))

        self.graphs[sample_id] = where.place
        self.papers.update(new)
        self.graph_papers.update(new)
        self.metadata_conflicts += len(conflicts)
        for pid in conflicts:
            self.findings.warn("metadata_conflicts", {"where": where.place, "paper_id": pid})
        self.n_item_nodes += len(nodes)
        self.n_item_edges += len(item_edges)
        self.n_item_contexts += sum(1 for row in item_edges if row[4] is not None)
        conn = self.conn
        if new_rows:
            conn.executemany(
                "INSERT INTO papers(paper_id, arxiv_id, title, abstract, year, authors, venue, ids, has_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                new_rows,
            )
        conn.executemany(
            "INSERT INTO item_nodes(item_id, paper_id, position) VALUES (?, ?, ?)",
            zip(repeat(sample_id), nodes, count()),
        )
        conn.executemany(
            "INSERT INTO item_edges(item_id, citing, cited, position, context) VALUES (?, ?, ?, ?, ?)", item_edges
        )
        # The union for explore mode: each reference at the earliest position a graph gives it, with the first context given.
        conn.executemany(
            "INSERT INTO edges(citing, cited, position, context) VALUES (?, ?, ?, ?) ON CONFLICT(citing, cited) DO UPDATE SET "
            "position = MIN(edges.position, excluded.position), context = COALESCE(edges.context, excluded.context)",
            union_rows,
        )

    @staticmethod
    def _edge_error(where: Where, nodes: dict, citing: str, cited_list: list) -> NoReturn:
        for position, cited in enumerate(cited_list):
            if type(cited) is not str or cited not in nodes:
                found = f"{json.dumps(cited)}, which is not a node" if isinstance(cited, str) else describe(cited)
                raise where.error(f"edges.{citing}[{position}]", "a paper ID among this record's nodes", found)
        raise AssertionError("called only for a list with an entry that is not a node")

    def _nodes(self, where: Where, nodes: dict) -> tuple[dict[str, tuple], list[tuple], list[str]]:
        """The papers first seen here (fingerprints and rows), and the nodes that disagree with the record kept for their paper.

        Most nodes are exact copies of a node seen in an earlier graph: one hash of the raw values
        recognises them, and only the others are checked field by field.
        """
        papers = self.papers
        new_rows: list[tuple] = []
        new: dict[str, tuple] = {}
        conflicts: list[str] = []
        for pid, node in nodes.items():
            try:
                get = node.get
                authors = get("authors")
                raw = hash(
                    (
                        get("title"),
                        get("arxivId"),
                        get("year"),
                        get("abstract"),
                        tuple(authors) if authors else None,
                        get("venue"),
                    )
                )
            except (
                AttributeError,
                TypeError,
            ):  # not an object, or a value that cannot be hashed: the checks below say what
                raw = None
            kept = papers.get(pid)
            if kept is not None and raw is not None and raw == kept[0]:  # raw None: a node the checks below refuse
                continue
            if type(node) is dict:
                title, arxiv, year = node.get("title"), node.get("arxivId"), node.get("year")
                abstract, venue = node.get("abstract"), node.get("venue")
            if not (
                type(node) is dict
                and type(title) is str
                and (arxiv is None or type(arxiv) is str)
                and (year is None or type(year) is int)
                and (abstract is None or type(abstract) is str)
                and (venue is None or type(venue) is str)
                and (authors is None or (type(authors) is list and all(type(a) is str for a in authors)))
            ):
                self._node_error(where, pid, node)  # raises, naming the field
            arxiv = arxiv.strip() or None if arxiv else None
            fingerprint = _fingerprint(title, arxiv, year, abstract, authors, venue)
            if kept is not None:
                if kept[0] is None:  # a paper of corpus/papers.jsonl (or a pool record) that a graph names
                    self.graph_papers.add(pid)
                if _differs(fingerprint, kept[1]):
                    conflicts.append(pid)
                continue
            fields.paper_id(pid, where, "nodes", "paper IDs as keys")
            new[pid] = (raw, fingerprint)
            new_rows.append(
                (
                    pid,
                    arxiv,
                    title,
                    abstract or "",
                    year,
                    _canon(authors or []),
                    fields.blank_to_none(venue),
                    _canon({"arxiv": arxiv} if arxiv else {}),
                    int(arxiv in self.text_keys),
                )
            )
        return new, new_rows, conflicts

    def _node_error(self, where: Where, pid: str, node: Any) -> None:
        field = f"nodes.{pid}"
        if not isinstance(node, dict):
            raise where.error(field, "an object {title, arxivId, year, abstract}", describe(node))
        fields.string(node, "title", where, field=f"{field}.title", nonempty=False)
        arxiv = node.get("arxivId")
        if arxiv is not None and not isinstance(arxiv, str):
            raise where.error(f"{field}.arxivId", "a string or null", describe(arxiv))
        fields.integer(node, "year", where, field=f"{field}.year", optional=True)
        fields.string(node, "abstract", where, field=f"{field}.abstract", nonempty=False, optional=True)
        self._authors(node, where, f"{field}.authors")
        fields.string(node, "venue", where, field=f"{field}.venue", nonempty=False, optional=True)
        raise where.error(field, "a valid node", "an invalid one")  # not reached: one of the checks above fails

    # -- corpus/citations.jsonl -------------------------------------------------------------

    def add_citations(self, where: Where, rec: dict) -> None:
        citing = fields.string(rec, "paper_id", where)
        if citing not in self.papers:
            if self._skip(PAPER, citing):
                return
            raise where.error(
                "paper_id", "a paper of corpus/papers.jsonl or a graph node", f"{json.dumps(citing)}, which is neither"
            )
        if citing in self.citing_listed:
            raise where.error(
                "paper_id", "a citing paper not listed before in this file", f"a duplicate {json.dumps(citing)}"
            )
        refs = fields.get(rec, "references", where)
        if not isinstance(refs, list):
            raise where.error("references", "a list of {paper_id, context} objects", describe(refs))
        rows = []
        seen: set[str] = set()
        for i, ref in enumerate(refs):
            field = f"references[{i}]"
            if not isinstance(ref, dict):
                raise where.error(field, "an object {paper_id, context}", describe(ref))
            cited = fields.string(ref, "paper_id", where, field=f"{field}.paper_id")
            if cited not in self.papers and not self._skip(PAPER, cited):
                raise where.error(
                    f"{field}.paper_id",
                    "a paper of corpus/papers.jsonl or a graph node",
                    f"{json.dumps(cited)}, which is neither",
                )
            context = fields.string(ref, "context", where, field=f"{field}.context", nonempty=False, optional=True)
            if cited in seen:
                self.findings.warn("duplicate_references", {"where": where.place, "paper_id": citing, "cited": cited})
                continue
            seen.add(cited)
            rows.append((citing, cited, i, fields.blank_to_none(context)))

        self.citing_listed.add(citing)
        if self.graphs:  # this file's list replaces what the item graphs said about the citing paper
            self.conn.execute("DELETE FROM edges WHERE citing = ?", (citing,))
        self.conn.executemany("INSERT INTO edges(citing, cited, position, context) VALUES (?, ?, ?, ?)", rows)

    # -- qa/full.jsonl ------------------------------------------------------------------

    def add_item(self, where: Where, rec: dict) -> None:
        item_id = fields.string(rec, "id", where).strip()
        if item_id in self.items:
            raise where.error("id", "an item id not seen before in this file", f"a duplicate {json.dumps(item_id)}")
        question_type = fields.choice(rec, "question_type", QUESTION_TYPES, where)
        depth = fields.choice(rec, "depth", DEPTHS, where)
        reasoning_type = fields.strict_choice(rec, "reasoning_type", REASONING_TYPES, where, subject=f"item {item_id}")
        question = fields.string(rec, "question", where)
        options = fields.str_list(rec, "options", where, length=4)
        correct_index = fields.integer(rec, "correct_index", where)
        if not 0 <= correct_index <= 3:
            raise where.error("correct_index", "an integer from 0 to 3", describe(correct_index))
        distractor_types = rec.get("distractor_types")
        if distractor_types is not None:
            if not isinstance(distractor_types, list) or len(distractor_types) != 4:
                raise where.error("distractor_types", "null or a list of 4 strings", describe(distractor_types))
            for i, kind in enumerate(distractor_types):
                if kind not in DISTRACTOR_TYPES:
                    raise where.error(
                        f"distractor_types[{i}]", f"one of {fields.one_of(DISTRACTOR_TYPES)}", describe(kind)
                    )
                if (kind == "correct") != (i == correct_index):
                    raise where.error(
                        f"distractor_types[{i}]",
                        f'"correct" at index {correct_index} (the correct_index) and nowhere else',
                        describe(kind),
                    )
        seed_paper_id = fields.string(rec, "seed_paper_id", where)
        seed_arxiv_id = fields.blank_to_none(fields.string(rec, "seed_arxiv_id", where, nonempty=False, optional=True))
        seed_title = fields.string(rec, "seed_title", where, nonempty=False)
        gold_paper_ids = fields.str_list(rec, "gold_paper_ids", where, nonempty=True)
        gold_arxiv_ids = fields.str_list(rec, "gold_arxiv_ids", where)
        bridge_paper_ids = fields.str_list(rec, "bridge_paper_ids", where)
        bridge_arxiv_ids = fields.str_list(rec, "bridge_arxiv_ids", where)
        filter_agreement = fields.integer(rec, "filter_agreement", where, optional=True)
        if len(gold_arxiv_ids) != len(gold_paper_ids):
            raise where.error(
                "gold_arxiv_ids", f"a list of {len(gold_paper_ids)} (one per gold paper)", describe(gold_arxiv_ids)
            )
        if len(bridge_arxiv_ids) != len(bridge_paper_ids):
            raise where.error(
                "bridge_arxiv_ids",
                f"a list of {len(bridge_paper_ids)} (one per bridge paper)",
                describe(bridge_arxiv_ids),
            )
        citations, taken = self._citation_counts(rec, where, len(gold_paper_ids))
        if depth == 1 and bridge_paper_ids:
            raise where.error("bridge_paper_ids", "an empty list at depth 1", describe(bridge_paper_ids))
        if depth == 2 and not bridge_paper_ids:
            raise where.error("bridge_paper_ids", "at least one bridge paper at depth 2", "an empty list")
        if len(set(gold_paper_ids)) != len(gold_paper_ids):
            raise where.error("gold_paper_ids", "distinct paper IDs", "a repeated ID")
        if seed_paper_id in gold_paper_ids:
            raise where.error("gold_paper_ids", "gold papers other than the seed", "the seed paper ID")
        for key in ("cognitive_skill", "venue", "consensus_tier"):
            if not isinstance(rec.get(key, ""), str | None):
                raise where.error(key, "a string or null", describe(rec[key]))

        if item_id not in self.graphs:
            if self._skip(GRAPH, item_id):
                return
            raise where.fail(
                f"item {json.dumps(item_id)} has no graph record in graphs/full.jsonl (expected one with sample_id {json.dumps(item_id)})"
            )
        self._check_in_graph(
            item_id,
            where,
            seed_paper_id,
            seed_arxiv_id,
            gold_paper_ids,
            gold_arxiv_ids,
            bridge_paper_ids,
            bridge_arxiv_ids,
        )
        # Optional categories last: a refused item does not count as an unknown value too.
        cognitive_skill = self._category(rec, "cognitive_skill", COGNITIVE_SKILLS, where, item_id)
        venue = self._category(rec, "venue", None, where, item_id)
        consensus_tier = self._category(rec, "consensus_tier", CONSENSUS_TIERS, where, item_id)

        self.conn.execute(
            "INSERT INTO items(item_id, question_type, depth, reasoning_type, cognitive_skill, venue, consensus_tier, question, "
            "options, seed_paper_id, seed_arxiv_id, seed_title, filter_agreement, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                item_id,
                question_type,
                depth,
                reasoning_type,
                cognitive_skill,
                venue,
                consensus_tier,
                question,
                _canon(options),
                seed_paper_id,
                seed_arxiv_id,
                seed_title,
                filter_agreement,
                len(self.items),
            ),
        )
        self.conn.execute(
            "INSERT INTO gold_items(item_id, correct_index, distractor_types, gold_paper_ids, gold_arxiv_ids, bridge_paper_ids, "
            "bridge_arxiv_ids) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                item_id,
                correct_index,
                None if distractor_types is None else _canon(distractor_types),
                _canon(gold_paper_ids),
                _canon(gold_arxiv_ids),
                _canon(bridge_paper_ids),
                _canon(bridge_arxiv_ids),
            ),
        )
        if citations is not None:
            self.conn.execute(GOLD_CITATION_COUNTS_DDL)
            self.conn.executemany(
                "INSERT INTO gold_citation_counts(item_id, position, paper_id, citations, taken) VALUES (?, ?, ?, ?, ?)",
                [(item_id, i, pid, n, taken) for i, (pid, n) in enumerate(zip(gold_paper_ids, citations))],
            )
        self.items[item_id] = where.place

    @staticmethod
    def _citation_counts(rec: dict, where: Where, n_gold: int) -> tuple[list[int] | None, str | None]:
        """The optional gold_citation_counts (one count per gold paper, as construction recorded them) and
        citation_counts_taken (the date, YYYY-MM-DD); (None, None) for a release without them."""
        counts = rec.get("gold_citation_counts")
        if counts is None:
            return None, None
        if not isinstance(counts, list) or len(counts) != n_gold or any(type(n) is not int or n < 0 for n in counts):
            raise where.error(
                "gold_citation_counts",
                f"null or a list of {n_gold} non-negative integers (one per gold paper)",
                describe(counts),
            )
        taken = rec.get("citation_counts_taken")
        if taken is not None and not (isinstance(taken, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", taken)):
            raise where.error("citation_counts_taken", "null or a date YYYY-MM-DD", describe(taken))
        return counts, taken

    def _category(self, rec: dict, key: str, allowed: tuple[str, ...] | None, where: Where, item_id: str) -> str | None:
        """An optional category: "" and unknown values are stored as unknown (NULL) and counted; case is normalised."""
        value = rec.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise where.error(key, "a string or null", describe(value))
        text = value.strip()
        if text.lower() in _PLACEHOLDERS:
            self.findings.warn(f"unknown_{key}", {"item": item_id, "value": value})
            return None
        stored: str | None
        if allowed is None:  # venue: any name, the first spelling seen stands for all its case variants
            stored = self.venue_spelling.setdefault(text.casefold(), text)
        else:
            stored = next((a for a in allowed if a.casefold() == text.casefold()), None)
            if stored is None:
                self.findings.warn(f"unknown_{key}", {"item": item_id, "value": value})
                return None
        if stored != value:
            self.findings.warn("case_normalised", {"item": item_id, "field": key, "value": value, "stored": stored})
        return stored

    def _check_in_graph(self, item_id, where, seed, seed_arxiv, gold, gold_arxiv, bridge, bridge_arxiv) -> None:
        """Seed, gold and bridge papers must be nodes of the item's graph, with matching arXiv IDs; gold papers need text."""
        conn = self.conn
        wanted = sorted({seed, *gold, *bridge})
        marks = ",".join("?" * len(wanted))
        found = dict(
            conn.execute(
                f"SELECT n.paper_id, p.arxiv_id FROM item_nodes n JOIN papers p ON p.paper_id = n.paper_id "
                f"WHERE n.item_id = ? AND n.paper_id IN ({marks})",
                [item_id, *wanted],
            )
        )

        def check(field: str, pid: str, arxiv: str | None, need_text: bool) -> None:
            if pid not in found:
                raise where.error(
                    field,
                    f"a paper ID among the nodes of item {item_id}'s graph",
                    f"{json.dumps(pid)}, which is not a node",
                )
            node_arxiv = found[pid]
            if arxiv and node_arxiv and arxiv != node_arxiv:
                raise where.error(
                    field.replace("paper_id", "arxiv_id"),
                    f"{json.dumps(node_arxiv)} (the node's arxivId)",
                    describe(arxiv),
                )
            if need_text and node_arxiv not in self.text_keys and not self._skip(POOL, node_arxiv):
                why = "a pool record with zero sections" if node_arxiv in self.pool_keys else "without text"
                raise where.error(
                    field,
                    "a gold paper whose text is in paper_pool/papers.jsonl",
                    f"{json.dumps(pid)} (arxivId {json.dumps(node_arxiv)}) {why}",
                )

        check("seed_paper_id", seed, seed_arxiv, False)
        for i, (pid, arxiv) in enumerate(zip(gold, gold_arxiv)):
            check(f"gold_paper_ids[{i}]", pid, arxiv, True)
        for i, (pid, arxiv) in enumerate(zip(bridge, bridge_arxiv)):
            check(f"bridge_paper_ids[{i}]", pid, arxiv, False)

    # -- audit/recall_labels.jsonl -----------------------------------------------------------

    def add_labels(self, where: Where, rec: dict) -> None:
        if self.pool_rows:
            self._flush_sections()  # labels are checked against the sections written so far
        create_index(self.conn, "sections")
        sample_id = fields.string(rec, "sample_id", where).strip()
        if sample_id not in self.items:
            if self._skip(ITEM, sample_id) or self._skip(GRAPH, sample_id):
                return
            raise where.error(
                "sample_id", "the id of an item in qa/full.jsonl", f"{json.dumps(sample_id)}, which is not an item"
            )
        if sample_id in self.labelled:
            raise where.error(
                "sample_id", "a sample_id not seen before in this file", f"a duplicate {json.dumps(sample_id)}"
            )
        analysis = fields.get(rec, "analysis", where)
        if not isinstance(analysis, dict):
            raise where.error("analysis", "an object with section_recall_labels", describe(analysis))
        labels = fields.get(analysis, "section_recall_labels", where, field="analysis.section_recall_labels")
        if not isinstance(labels, list):
            raise where.error("analysis.section_recall_labels", "a list of label objects", describe(labels))
        rows: list[tuple[str, int, str | None, str, str, str, str | None]] = []
        for i, label in enumerate(labels):
            field = f"analysis.section_recall_labels[{i}]"
            if not isinstance(label, dict):
                raise where.error(
                    field, "an object {paper, arxiv_id, section, relevance, what_it_contains}", describe(label)
                )
            arxiv_id = fields.string(label, "arxiv_id", where, field=f"{field}.arxiv_id").strip()
            section = fields.string(label, "section", where, field=f"{field}.section")
            relevance = fields.get(label, "relevance", where, field=f"{field}.relevance")
            if relevance not in RELEVANCES:
                raise where.error(f"{field}.relevance", 'one of "direct" or "supporting"', describe(relevance))
            paper = fields.string(label, "paper", where, field=f"{field}.paper", nonempty=False, optional=True)
            what = fields.string(
                label, "what_it_contains", where, field=f"{field}.what_it_contains", nonempty=False, optional=True
            )

            problem = self._label_problem(arxiv_id, section)
            if problem is not None:
                bad_field, expected = problem
                if self._skip(POOL, arxiv_id):
                    continue
                if not self.skip_bad_labels:
                    err = where.error(
                        f"{field}.{bad_field}",
                        expected,
                        describe(section if bad_field == "section" else arxiv_id),
                        BadLabelError,
                    )
                    if not self.checking:
                        raise err
                    self.findings.add_error(err)
                    continue
                self.skipped_labels += 1
                detail = {
                    "where": where.place,
                    "sample_id": sample_id,
                    "arxiv_id": arxiv_id,
                    "section": section,
                    "problem": f"{bad_field}: expected {expected}",
                }
                self.findings.warn("bad_labels_skipped", detail)
                if len(self.skipped_details) < _MAX_REPORTED_SKIPS:
                    self.skipped_details.append(detail)
                continue
            rows.append((sample_id, len(rows), paper, arxiv_id, section, relevance, what))
        self.labelled[sample_id] = where.place
        self.conn.executemany(
            "INSERT INTO gold_recall_labels(item_id, position, paper_title, arxiv_id, section, relevance, what_it_contains) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def _section_texts(self, arxiv_id: str) -> Iterator[str]:
        """The paper's section texts, one row at a time (only read when a label names no header)."""
        cur = self.conn.execute("SELECT text FROM sections WHERE arxiv_id = ? ORDER BY position", (arxiv_id,))
        try:
            for (text,) in cur:
                yield text
        finally:
            cur.close()

    def _label_problem(self, arxiv_id: str, section: str) -> tuple[str, str] | None:
        """None when the label resolves; else (field, what was expected)."""
        if arxiv_id not in self.pool_keys:
            return "arxiv_id", "an arXiv ID in paper_pool/papers.jsonl"
        headers = self.headers_cache.get(arxiv_id)
        if headers is None:
            if len(self.headers_cache) > 256:
                self.headers_cache.clear()  # an item's labels name a few papers: a small cache is enough
            headers = self.headers_cache[arxiv_id] = [
                h
                for (h,) in self.conn.execute(
                    "SELECT header FROM sections WHERE arxiv_id = ? ORDER BY position", (arxiv_id,)
                )
            ]
        if label_is_resolvable(section, headers, self._section_texts(arxiv_id)):
            return None  # a header, or a subsection whose header appears verbatim in a section's text
        shown = "; ".join(headers[:12]) + ("; ..." if len(headers) > 12 else "")
        return (
            "section",
            f"a section of {arxiv_id} (a header, a normalised header, or a subsection header in a section's text; headers: {shown or 'none'})",
        )

    # -- after the last record ---------------------------------------------------------------

    def finish(self) -> None:
        """Pool papers no paper names, late text, and the checks and warnings that need every record."""
        if self.pool_rows:
            self._flush_sections()
        self._add_orphan_pool_papers()
        conn = self.conn
        # A packaged sample may carry the text of a paper an earlier sample named without it.
        conn.execute(
            "UPDATE papers SET has_text = 1 WHERE has_text = 0 AND arxiv_id IN (SELECT arxiv_id FROM pool WHERE n_sections > 0)"
        )
        for sample_id, place in self.graphs.items():
            if sample_id not in self.items and not self._skip(ITEM, sample_id):
                exc = ReleaseError(
                    f"{place}: field 'sample_id': expected the id of an item in qa/full.jsonl, "
                    f"found {json.dumps(sample_id)}, which is not an item"
                )
                if not self.checking:
                    raise exc
                self.findings.add_error(exc)
        self.items_without_labels = [i for i in self.items if i not in self.labelled]
        for item_id in self.items_without_labels:
            self.findings.warn("items_without_labels", {"item": item_id})
        self._gold_without_direct_label()
        for (pid,) in conn.execute("SELECT paper_id FROM papers WHERE trim(title) = '' ORDER BY rowid"):
            self.findings.warn("empty_titles", {"paper_id": pid})

    def _add_orphan_pool_papers(self) -> None:
        """Explore mode covers every paper with text: a pool record no paper names becomes the paper arxiv:<arxiv_id>."""
        conn = self.conn
        named = {arxiv for (arxiv,) in conn.execute("SELECT DISTINCT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL")}
        rows = []
        for arxiv_id, title in conn.execute("SELECT arxiv_id, title FROM pool ORDER BY arxiv_id").fetchall():
            if arxiv_id in named:
                continue
            pid = ORPHAN_PREFIX + arxiv_id
            if pid in self.papers:
                exc = ReleaseError(
                    f"paper_pool/papers.jsonl: the record {json.dumps(arxiv_id)}, which no paper names, would be served as the paper "
                    f"{json.dumps(pid)}, but that paper ID is already another paper's; name the record from that paper's text_id or arxivId"
                )
                if not self.checking:
                    raise exc
                self.findings.add_error(exc)
                continue
            self.papers[pid] = (None, _fingerprint(title, arxiv_id, None, None, None, None))
            rows.append(
                (
                    pid,
                    arxiv_id,
                    title,
                    "",
                    None,
                    "[]",
                    None,
                    _canon({"arxiv": arxiv_id}),
                    int(arxiv_id in self.text_keys),
                )
            )
        conn.executemany(
            "INSERT INTO papers(paper_id, arxiv_id, title, abstract, year, authors, venue, ids, has_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def _gold_without_direct_label(self) -> None:
        """Section recall needs a direct label on every gold paper; an item without one can never score it."""
        conn = self.conn
        direct: dict[str, set[str]] = {}
        for item_id, arxiv_id in conn.execute(
            "SELECT item_id, arxiv_id FROM gold_recall_labels WHERE relevance = 'direct'"
        ):
            direct.setdefault(item_id, set()).add(arxiv_id)
        text_of = {}
        for item_id, gold_ids in conn.execute(
            "SELECT i.item_id, g.gold_paper_ids FROM items i JOIN gold_items g USING (item_id) ORDER BY i.position"
        ):
            if item_id not in self.labelled:
                continue  # already reported as an item without labels
            gold = json.loads(gold_ids)
            for pid in gold:
                if pid not in text_of:
                    text_of[pid] = conn.execute("SELECT arxiv_id FROM papers WHERE paper_id = ?", (pid,)).fetchone()[0]
            missing = [pid for pid in gold if text_of[pid] not in direct.get(item_id, ())]
            if missing:
                self.findings.warn("gold_without_direct_label", {"item": item_id, "gold_paper_ids": missing})

    def forget_records(self) -> None:
        """Drop what was kept per paper, item and record to check the next ones; counts and findings stay."""
        for kept in (
            self.pool_keys,
            self.text_keys,
            self.papers,
            self.graph_papers,
            self.text_owner,
            self.graphs,
            self.items,
            self.labelled,
            self.citing_listed,
            self.edge_lists_written,
            self.venue_spelling,
            self.headers_cache,
            self.unchecked,
        ):
            kept.clear()

    def counts(self) -> dict:
        conn = self.conn

        def one(sql: str) -> int:
            return conn.execute(sql).fetchone()[0]

        cells = dict.fromkeys(CELLS, 0)
        for qtype, depth, n in conn.execute(
            "SELECT question_type, depth, COUNT(*) FROM items GROUP BY question_type, depth"
        ):
            cells[f"{'ST' if qtype == 'single-target' else 'MT'}-d{depth}"] = n
        return {
            "papers": one("SELECT COUNT(*) FROM papers"),
            "papers_with_text": one("SELECT COUNT(*) FROM papers WHERE has_text = 1"),
            "papers_in_no_item": len(self.papers) - len(self.graph_papers),
            "pool_papers": one("SELECT COUNT(*) FROM pool"),
            "sections": one("SELECT COUNT(*) FROM sections"),
            "edges": one("SELECT COUNT(*) FROM edges"),
            "edges_with_context": one("SELECT COUNT(*) FROM edges WHERE context IS NOT NULL"),
            "items": one("SELECT COUNT(*) FROM items"),
            "items_by_cell": cells,
            "item_nodes": self.n_item_nodes,
            "item_edges": self.n_item_edges,
            "item_edges_with_context": self.n_item_contexts,
            "recall_labels": one("SELECT COUNT(*) FROM gold_recall_labels"),
        }


def _fingerprint(title, text_key, year, abstract, authors, venue) -> tuple:
    """What is compared between copies of a paper; empty abstract, authors or venue mean "not given"."""
    return (
        title,
        text_key,
        year,
        hash(abstract) if abstract else None,
        hash(tuple(authors)) if authors else None,
        venue or None,
    )


def _strings(values: list) -> set | None:
    """The set of ``values``, or None when one cannot be hashed (a value that is no paper ID in any case)."""
    try:
        return set(values)
    except TypeError:
        return None


def _differs(copy: tuple, kept: tuple) -> bool:
    """A copy disagrees when its title, text key or year differ, or a field it gives differs."""
    if copy[:3] != kept[:3]:
        return True
    return any(c is not None and c != k for c, k in zip(copy[3:], kept[3:]))


_KEY_FIELDS = {POOL: "arxiv_id", PAPER: "paper_id", GRAPH: "sample_id", ITEM: "id"}


def _record_key(kind: str, record: dict | ReleaseError) -> Any:
    """The key other records use to name this one (to silence errors that only repeat its own).

    For a line that is not JSON, the key is looked for in its raw text (best effort).
    """
    field = _KEY_FIELDS.get(kind)
    if isinstance(record, ReleaseError):
        if getattr(record, "key", None) is not None:
            return record.key
        found = re.search(rf'"{field}"\s*:\s*"([^"\\]+)"', getattr(record, "raw", "")) if field else None
        return found.group(1).strip() if found else None
    value = record.get(field) if field else None
    return value.strip() if isinstance(value, str) else None  # a key that is no string names nothing (and may not hash)


def corpus_identity(input_hashes: dict[str, str], importer_version: int = IMPORTER_VERSION) -> str:
    """sha256 over the sorted input hashes and the importer version.

    Same inputs and importer version, same corpus content: an import that
    would differ (bad labels dropped) cannot succeed without
    ``skip_bad_labels``, so the flag does not need to be part of the identity.
    """
    payload = json.dumps(
        {"importer_version": importer_version, "inputs": sorted(input_hashes.values())}, sort_keys=True
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _create_temp(out: Path) -> Path:
    """An empty file next to ``out`` (same directory, so the final rename is atomic), mode as umask allows."""
    for attempt in range(100):
        tmp = out.parent / f".{out.name}.importing-{os.getpid()}-{attempt}"
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise ReleaseError(f"cannot create a temporary file next to {out}: remove stale .{out.name}.importing-* files")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    # Sections are a few KB each: with 16 KiB pages most fit in their row, without overflow chains (measured 7% less CPU).
    conn.execute("PRAGMA page_size = 16384")
    conn.execute("PRAGMA journal_mode = OFF")  # a failed import deletes the file: no journal needed
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache
    create_schema(conn)
    conn.execute("BEGIN")
    return conn


def _index_and_store_explore_search(conn: sqlite3.Connection) -> None:
    """The secondary indexes, and the explore-mode BM25 index (stored, so that no server has to build it)."""
    for table in INDEXES:
        create_index(conn, table)
    parts = stored_index_parts(explore_texts(conn))  # streams the documents: memory grows with the index, not the text
    conn.executemany("INSERT INTO search_index(name, data) VALUES (?, ?)", sorted(parts.items()))


def import_release(
    source: Path,
    out: Path,
    *,
    labels: Path | None = None,
    skip_bad_labels: bool = False,
    echo: Callable[[str], None] = print,
) -> dict:
    """Build the corpus file ``out`` from a release; return a summary.

    ``source`` is a release directory, a packaged JSON file (one sample or a
    list), or a directory of per-sample JSON files; ``labels`` is the recall
    labels file of packaged samples. Raises :class:`ReleaseError` on any
    problem; then no file is left behind and an existing ``out`` is untouched.
    """
    started = time.monotonic()
    out = Path(out)
    src = open_source(Path(source), Path(labels) if labels is not None else None)
    if out.is_dir():
        raise ReleaseError(f"the corpus file to write, {out}, is a directory; give the path of a file")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_temp(out)
    conn: sqlite3.Connection | None = None
    index_tmp: Path | None = None
    findings = Findings()
    try:
        conn = _connect(tmp)
        importer = _Importer(conn, findings, skip_bad_labels=skip_bad_labels, checking=False, echo=echo)
        echo(f"importing {source} ({src.shape}) -> {out}")
        importer.run(src)
        importer.finish()
        counts = importer.counts()
        importer.forget_records()  # the explore index is as large as the corpus: it must not sit on top of these
        echo("indexing, and building the explore-mode search index")
        _index_and_store_explore_search(conn)
        echo("building the explore-mode full-text indexes, and merging records of the same outside work")
        explore = explore_tables.build(conn)
        summary = {**_summary(importer, findings, src, counts), "explore": explore}
        provenance = {
            "source": src.name,
            "shape": src.shape,
            "inputs": summary["inputs"],
            "importer_version": IMPORTER_VERSION,
            "skipped_labels": importer.skipped_labels,
            "metadata_conflicts": importer.metadata_conflicts,
            "items_without_labels": len(importer.items_without_labels),
            "warnings": {kind: entry["count"] for kind, entry in findings.summary().items()},
        }
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [
                ("provenance", _canon(provenance)),
                ("counts", _canon(counts)),
                ("corpus_id", _canon(summary["corpus_id"])),
            ],
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA analysis_limit = 1000")  # enough statistics for the planner, in milliseconds
        conn.execute("ANALYZE")
        echo("building the explore search index")
        index_tmp = search_index.build(conn, search_index.index_dir(out), summary["corpus_id"], echo)
        conn.close()
        conn = None
        os.replace(tmp, out)
        search_index.install(index_tmp, search_index.index_dir(out))  # renamed in after the corpus: see index.install
        index_tmp = None
    except BaseException:
        if conn is not None:
            conn.close()
        tmp.unlink(missing_ok=True)
        if index_tmp is not None:
            shutil.rmtree(index_tmp, ignore_errors=True)
        raise

    summary = {"out": str(out), **summary, "seconds": round(time.monotonic() - started, 2)}
    c = counts
    echo(
        f"wrote {out}: {c['items']} items, {c['papers']} papers ({c['papers_with_text']} with text), "
        f"{c['sections']} sections, {c['edges']} edges in {summary['seconds']} s"
    )
    for kind, entry in summary["warnings"].items():
        echo(
            f"warning: {entry['count']} {describe_warning(kind)}; first: {json.dumps(entry['examples'][0], ensure_ascii=False)}"
        )
    return summary


def check_release(
    source: Path,
    *,
    labels: Path | None = None,
    skip_bad_labels: bool = False,
    echo: Callable[[str], None] = print,
) -> dict:
    """Validate a whole release without writing a corpus; report every error and warning at once.

    Returns ``{"ok", "error_count", "errors": [{"message", "bad_label"}], "warnings", "counts", ...}``.
    A problem with the input itself (not found, not a release layout) still raises :class:`ReleaseError`.
    """
    started = time.monotonic()
    src = open_source(Path(source), Path(labels) if labels is not None else None)
    scratch = Path(tempfile.mkdtemp(prefix="agenthop-check-"))
    findings = Findings()
    try:
        conn = _connect(scratch / "check.sqlite")
        try:
            importer = _Importer(conn, findings, skip_bad_labels=skip_bad_labels, checking=True, echo=echo)
            echo(f"checking {source} ({src.shape})")
            try:
                importer.run(src)
            except ReleaseError as exc:  # the input cannot be read any further (broken JSON in a packaged file)
                findings.add_error(exc)
            importer.finish()
            counts = importer.counts()
        finally:
            conn.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summary = _summary(importer, findings, src, counts)
    return {
        "ok": findings.error_count == 0,
        "error_count": findings.error_count,
        "errors": findings.errors,
        **summary,
        "seconds": round(time.monotonic() - started, 2),
    }


def _summary(importer: _Importer, findings: Findings, src: Source, counts: dict) -> dict:
    inputs = {rel: src.inputs[rel] for rel in sorted(src.inputs)}
    return {
        "source": src.name,
        "shape": src.shape,
        "inputs": inputs,
        "corpus_id": corpus_identity(inputs),
        "counts": counts,
        "warnings": findings.summary(),
        "skipped_labels": importer.skipped_labels,
        "skipped_label_examples": importer.skipped_details,
        "metadata_conflicts": importer.metadata_conflicts,
        "items_without_labels": importer.items_without_labels,
    }
