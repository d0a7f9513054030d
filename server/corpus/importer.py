"""Import a release directory (SPEC 2.1) into a corpus file (``schema.py``).

The importer reads the four JSONL files line by line, validates every record as
it goes and writes the corpus into a temporary file next to ``out``. Only when
everything has been read and checked is the temporary file renamed onto
``out``; on any error it is deleted and an existing ``out`` is left untouched.

Memory does not grow with the size of the paper pool: records are inserted in
batches and every cross-check (is this gold paper one of the item's nodes? does
this recall label name a section of that paper?) is an SQL query against the
file being built.

Order: ``paper_pool/papers.jsonl``, ``graphs/full.jsonl``, ``qa/full.jsonl``,
``audit/recall_labels.jsonl``, then the final consistency checks.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agenthop.server.corpus.release import (
    CELLS,
    CONSENSUS_TIERS,
    DEPTHS,
    DISTRACTOR_TYPES,
    GRAPHS_FILE,
    LABELS_FILE,
    POOL_FILE,
    QA_FILE,
    QUESTION_TYPES,
    REASONING_TYPES,
    RELEASE_FILES,
    RELEVANCES,
)
from agenthop.server.corpus.schema import create_schema
from agenthop.server.sections import label_is_resolvable

IMPORTER_VERSION = 1


_BATCH = 5000
_SQL_VARS = 500  # ids per "IN (...)" query
_MAX_REPORTED_SKIPS = 50

LAYOUT = (
    "a release directory holds four JSONL files: qa/full.jsonl (one item per line), "
    "graphs/full.jsonl (one neighbourhood per item), paper_pool/papers.jsonl (one paper with text per line) "
    "and audit/recall_labels.jsonl (one label record per item)"
)


class ReleaseError(Exception):
    """The release is not in the expected layout; the message names file, line, field, expected and found."""


# --- small helpers ------------------------------------------------------------


def _describe(value: Any) -> str:
    """How a found value is named in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}" if value else "an empty string"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class _Where:
    """A position in the release: file and line number, for error messages."""

    __slots__ = ("file", "line")

    def __init__(self, file: str, line: int) -> None:
        self.file = file
        self.line = line

    def error(self, field: str | None, expected: str, found: str) -> ReleaseError:
        prefix = f"{self.file} line {self.line}"
        if field is not None:
            prefix += f": field '{field}'"
        return ReleaseError(f"{prefix}: expected {expected}, found {found}")

    def fail(self, message: str) -> ReleaseError:
        return ReleaseError(f"{self.file} line {self.line}: {message}")


_MISSING = object()


def _get(rec: dict, key: str, where: _Where, field: str | None = None) -> Any:
    field = field or key
    value = rec.get(key, _MISSING)
    if value is _MISSING:
        raise where.fail(f"missing field '{field}'")
    return value


def _str(rec: dict, key: str, where: _Where, *, field: str | None = None, nonempty: bool = True, optional: bool = False) -> str | None:
    """A string field. ``optional``: may be absent or null (returns None)."""
    field = field or key
    value = rec.get(key, _MISSING)
    if value is _MISSING or value is None:
        if optional:
            return None
        if value is _MISSING:
            raise where.fail(f"missing field '{field}'")
    if not isinstance(value, str) or (nonempty and not value.strip()):
        raise where.error(field, "a non-empty string" if nonempty else "a string", _describe(value))
    return value


def _int(rec: dict, key: str, where: _Where, *, field: str | None = None, optional: bool = False) -> int | None:
    field = field or key
    value = rec.get(key, _MISSING)
    if value is _MISSING or value is None:
        if optional:
            return None
        if value is _MISSING:
            raise where.fail(f"missing field '{field}'")
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(field, "an integer", _describe(value))
    return value


def _choice(rec: dict, key: str, allowed: tuple, where: _Where, *, optional: bool = False) -> Any:
    value = rec.get(key, _MISSING)
    if optional and (value is _MISSING or value is None):
        return None
    if value is _MISSING:
        raise where.fail(f"missing field '{key}'")
    # bool is an int subclass: True must not pass as depth 1.
    if isinstance(value, bool) or value not in allowed:
        wanted = " or ".join(json.dumps(a) for a in allowed)
        raise where.error(key, f"one of {wanted}", _describe(value))
    return value


def _str_list(rec: dict, key: str, where: _Where, *, nonempty: bool = False, length: int | None = None) -> list[str]:
    value = _get(rec, key, where)
    if length is not None:
        expected = f"a list of {length} strings"
    else:
        expected = "a non-empty list of strings" if nonempty else "a list of strings"
    if not isinstance(value, list):
        raise where.error(key, expected, _describe(value))
    if length is not None and len(value) != length:
        raise where.error(key, expected, _describe(value))
    if nonempty and not value:
        raise where.error(key, expected, "an empty list")
    for i, element in enumerate(value):
        if not isinstance(element, str) or not element.strip():
            raise where.error(f"{key}[{i}]", "a non-empty string", _describe(element))
    return value


def _canon(value: Any) -> str:
    """Canonical JSON for values stored in the corpus (deterministic bytes)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _blank_to_none(value: Any) -> Any:
    return None if value is None or (isinstance(value, str) and not value.strip()) else value


def _chunks(seq: list, size: int = _SQL_VARS) -> Iterator[list]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


# --- reading JSONL ------------------------------------------------------------


class _JsonlReader:
    """Iterate the JSON objects of one release file, hashing its bytes on the way."""

    def __init__(self, release_dir: Path, rel: str) -> None:
        self.rel = rel
        self.path = release_dir / rel
        self.sha = hashlib.sha256()
        self.lines = 0

    def __iter__(self) -> Iterator[tuple[_Where, dict]]:
        with open(self.path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                self.sha.update(raw)
                self.lines = number
                where = _Where(self.rel, number)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise where.fail(f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
                if not text.strip():
                    continue
                try:
                    record = json.loads(text.rstrip("\r\n"))
                except json.JSONDecodeError as exc:
                    raise where.fail(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
                if not isinstance(record, dict):
                    raise where.error(None, "a JSON object", _describe(record))
                yield where, record

    @property
    def hexdigest(self) -> str:
        return self.sha.hexdigest()


# --- the import ---------------------------------------------------------------


class _Importer:
    def __init__(self, release_dir: Path, conn: sqlite3.Connection, skip_bad_labels: bool, echo: Callable[[str], None]) -> None:
        self.release_dir = release_dir
        self.conn = conn
        self.skip_bad_labels = skip_bad_labels
        self.echo = echo
        self.hashes: dict[str, str] = {}
        self.metadata_conflicts = 0
        self.skipped_labels = 0
        self.skipped_details: list[dict] = []
        self.items_without_labels: list[str] = []

    # -- pool --------------------------------------------------------------

    def read_pool(self) -> None:
        reader = _JsonlReader(self.release_dir, POOL_FILE)
        conn = self.conn
        sections: list[tuple] = []
        n = 0
        for where, rec in reader:
            arxiv_id = _str(rec, "arxiv_id", where).strip()
            title = _str(rec, "title", where, nonempty=False)
            secs = _get(rec, "sections", where)
            if not isinstance(secs, list):
                raise where.error("sections", "a list of {header, text} objects", _describe(secs))
            for i, sec in enumerate(secs):
                if not isinstance(sec, dict):
                    raise where.error(f"sections[{i}]", "an object {header, text}", _describe(sec))
                header = _str(sec, "header", where, field=f"sections[{i}].header", nonempty=False)
                text = _str(sec, "text", where, field=f"sections[{i}].text", nonempty=False)
                sections.append((arxiv_id, i, header, text))
            try:
                conn.execute("INSERT INTO pool(arxiv_id, title, n_sections) VALUES (?, ?, ?)", (arxiv_id, title, len(secs)))
            except sqlite3.IntegrityError:
                raise where.error("arxiv_id", "an arXiv ID not seen before in this file", f"a duplicate {json.dumps(arxiv_id)}") from None
            n += 1
            if len(sections) >= _BATCH:
                conn.executemany("INSERT INTO sections(arxiv_id, position, header, text) VALUES (?, ?, ?, ?)", sections)
                sections.clear()
            if n % 2000 == 0:
                self.echo(f"  {POOL_FILE}: {n} papers")
        if sections:
            conn.executemany("INSERT INTO sections(arxiv_id, position, header, text) VALUES (?, ?, ?, ?)", sections)
        self.hashes[POOL_FILE] = reader.hexdigest
        self.echo(f"{POOL_FILE}: {n} papers with text")

    # -- graphs ------------------------------------------------------------

    def _node(self, pid: str, node: Any, where: _Where) -> tuple:
        field = f"nodes.{pid}"
        if not isinstance(node, dict):
            raise where.error(field, "an object {title, arxivId, year, abstract}", _describe(node))
        title = _str(node, "title", where, field=f"{field}.title", nonempty=False)
        arxiv = node.get("arxivId")
        if arxiv is not None and not isinstance(arxiv, str):
            raise where.error(f"{field}.arxivId", "a string or null", _describe(arxiv))
        arxiv = _blank_to_none(arxiv)
        arxiv = arxiv.strip() if arxiv else None
        year = _int(node, "year", where, field=f"{field}.year", optional=True)
        abstract = _str(node, "abstract", where, field=f"{field}.abstract", nonempty=False, optional=True) or ""
        authors = node.get("authors")
        if authors is None:
            authors = []
        if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
            raise where.error(f"{field}.authors", "a list of strings", _describe(authors))
        venue = _str(node, "venue", where, field=f"{field}.venue", nonempty=False, optional=True)
        venue = _blank_to_none(venue)
        return (pid, arxiv, title, abstract, year, _canon(authors), venue)

    def read_graphs(self) -> None:
        reader = _JsonlReader(self.release_dir, GRAPHS_FILE)
        conn = self.conn
        n = 0
        for where, rec in reader:
            sample_id = _str(rec, "sample_id", where).strip()
            if conn.execute("SELECT 1 FROM temp.graph_lines WHERE sample_id = ?", (sample_id,)).fetchone():
                raise where.error("sample_id", "a sample_id not seen before in this file", f"a duplicate {json.dumps(sample_id)}")
            conn.execute("INSERT INTO temp.graph_lines(sample_id, line) VALUES (?, ?)", (sample_id, where.line))

            nodes = _get(rec, "nodes", where)
            if not isinstance(nodes, dict) or not nodes:
                raise where.error("nodes", "a non-empty object {paper_id: {title, arxivId, year, abstract}}", _describe(nodes))
            rows = []
            for pid, node in nodes.items():
                if not pid.strip():
                    raise where.error("nodes", "non-empty paper IDs as keys", "an empty key")
                rows.append(self._node(pid, node, where))

            edges = _get(rec, "edges", where)
            if not isinstance(edges, dict):
                raise where.error("edges", "an object {paper_id: [cited paper_id, ...]}", _describe(edges))
            contexts = rec.get("contexts") or {}
            if not isinstance(contexts, dict):
                raise where.error("contexts", "an object {citing_id: {cited_id: sentence}}", _describe(contexts))

            item_edges = []
            edge_set = set()
            for citing, cited_list in edges.items():
                if citing not in nodes:
                    raise where.error(f"edges.{citing}", "a citing paper ID among this record's nodes", f"{json.dumps(citing)}, which is not a node")
                if not isinstance(cited_list, list):
                    raise where.error(f"edges.{citing}", "a list of cited paper IDs", _describe(cited_list))
                for position, cited in enumerate(cited_list):
                    if not isinstance(cited, str) or cited not in nodes:
                        found = f"{json.dumps(cited)}, which is not a node" if isinstance(cited, str) else _describe(cited)
                        raise where.error(f"edges.{citing}[{position}]", "a paper ID among this record's nodes", found)
                    item_edges.append((sample_id, citing, cited, position))
                    edge_set.add((citing, cited))
            edge_rows = []
            for citing, cited in sorted(edge_set):
                edge_rows.append((citing, cited, None))
            context_of: dict[tuple[str, str], str] = {}
            for citing, per_cited in contexts.items():
                if not isinstance(per_cited, dict):
                    raise where.error(f"contexts.{citing}", "an object {cited_id: sentence}", _describe(per_cited))
                for cited, sentence in per_cited.items():
                    if (citing, cited) not in edge_set:
                        raise where.error(f"contexts.{citing}.{cited}", "a context for an edge of this record", "a context for a pair that is not an edge")
                    if sentence is not None and not isinstance(sentence, str):
                        raise where.error(f"contexts.{citing}.{cited}", "a string", _describe(sentence))
                    if sentence and sentence.strip():
                        context_of[(citing, cited)] = sentence
            edge_rows = [(c, d, context_of.get((c, d))) for c, d, _ in edge_rows]

            self._insert_papers(rows)
            conn.executemany(
                "INSERT INTO item_nodes(item_id, paper_id, position) VALUES (?, ?, ?)",
                [(sample_id, row[0], position) for position, row in enumerate(rows)],
            )
            conn.executemany("INSERT INTO item_edges(item_id, citing, cited, position) VALUES (?, ?, ?, ?)", item_edges)
            conn.executemany(
                "INSERT INTO edges(citing, cited, context) VALUES (?, ?, ?) "
                "ON CONFLICT(citing, cited) DO UPDATE SET context = COALESCE(edges.context, excluded.context)",
                edge_rows,
            )
            n += 1
            if n % 200 == 0:
                self.echo(f"  {GRAPHS_FILE}: {n} item graphs")
        self.hashes[GRAPHS_FILE] = reader.hexdigest
        self.echo(f"{GRAPHS_FILE}: {n} item graphs, {self.metadata_conflicts} metadata conflicts (first record kept)")

    def _insert_papers(self, rows: list[tuple]) -> None:
        """Insert new papers; for known ones keep the first metadata and count differences."""
        conn = self.conn
        existing: dict[str, tuple] = {}
        ids = [row[0] for row in rows]
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for found in conn.execute(
                f"SELECT paper_id, arxiv_id, title, abstract, year, authors, venue FROM papers WHERE paper_id IN ({marks})", chunk
            ):
                existing[found[0]] = tuple(found)
        new = []
        for row in rows:
            old = existing.get(row[0])
            if old is None:
                new.append(row)
            elif old != row:
                self.metadata_conflicts += 1
        if not new:
            return
        # has_text = 1 iff the arXiv ID is in the pool (read first).
        arxiv_ids = sorted({row[1] for row in new if row[1]})
        in_pool: set[str] = set()
        for chunk in _chunks(arxiv_ids):
            marks = ",".join("?" * len(chunk))
            in_pool.update(r[0] for r in conn.execute(f"SELECT arxiv_id FROM pool WHERE arxiv_id IN ({marks})", chunk))
        conn.executemany(
            "INSERT INTO papers(paper_id, arxiv_id, title, abstract, year, authors, venue, has_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [row + (1 if row[1] in in_pool else 0,) for row in new],
        )

    # -- qa ----------------------------------------------------------------

    def read_qa(self) -> None:
        reader = _JsonlReader(self.release_dir, QA_FILE)
        conn = self.conn
        n = 0
        for where, rec in reader:
            item_id = _str(rec, "id", where).strip()
            if conn.execute("SELECT 1 FROM items WHERE item_id = ?", (item_id,)).fetchone():
                raise where.error("id", "an item id not seen before in this file", f"a duplicate {json.dumps(item_id)}")
            question_type = _choice(rec, "question_type", QUESTION_TYPES, where)
            depth = _choice(rec, "depth", DEPTHS, where)
            reasoning_type = _choice(rec, "reasoning_type", REASONING_TYPES, where)
            cognitive_skill = _str(rec, "cognitive_skill", where, nonempty=False, optional=True)
            venue = _str(rec, "venue", where, nonempty=False, optional=True)
            consensus_tier = _choice(rec, "consensus_tier", CONSENSUS_TIERS, where, optional=True)
            question = _str(rec, "question", where)
            options = _str_list(rec, "options", where, length=4)
            correct_index = _int(rec, "correct_index", where)
            if not 0 <= correct_index <= 3:
                raise where.error("correct_index", "an integer from 0 to 3", _describe(correct_index))
            distractor_types = rec.get("distractor_types")
            if distractor_types is not None:
                if not isinstance(distractor_types, list) or len(distractor_types) != 4:
                    raise where.error("distractor_types", "null or a list of 4 strings", _describe(distractor_types))
                for i, kind in enumerate(distractor_types):
                    if kind not in DISTRACTOR_TYPES:
                        wanted = " or ".join(json.dumps(a) for a in DISTRACTOR_TYPES)
                        raise where.error(f"distractor_types[{i}]", f"one of {wanted}", _describe(kind))
                    if (kind == "correct") != (i == correct_index):
                        raise where.error(
                            f"distractor_types[{i}]",
                            f"\"correct\" at index {correct_index} (the correct_index) and nowhere else",
                            _describe(kind),
                        )
            seed_paper_id = _str(rec, "seed_paper_id", where)
            seed_arxiv_id = _blank_to_none(_str(rec, "seed_arxiv_id", where, nonempty=False, optional=True))
            seed_title = _str(rec, "seed_title", where, nonempty=False)
            gold_paper_ids = _str_list(rec, "gold_paper_ids", where, nonempty=True)
            gold_arxiv_ids = _str_list(rec, "gold_arxiv_ids", where)
            bridge_paper_ids = _str_list(rec, "bridge_paper_ids", where)
            bridge_arxiv_ids = _str_list(rec, "bridge_arxiv_ids", where)
            filter_agreement = _int(rec, "filter_agreement", where, optional=True)
            if len(gold_arxiv_ids) != len(gold_paper_ids):
                raise where.error("gold_arxiv_ids", f"a list of {len(gold_paper_ids)} (one per gold paper)", _describe(gold_arxiv_ids))
            if len(bridge_arxiv_ids) != len(bridge_paper_ids):
                raise where.error("bridge_arxiv_ids", f"a list of {len(bridge_paper_ids)} (one per bridge paper)", _describe(bridge_arxiv_ids))
            if depth == 1 and bridge_paper_ids:
                raise where.error("bridge_paper_ids", "an empty list at depth 1", _describe(bridge_paper_ids))
            if depth == 2 and not bridge_paper_ids:
                raise where.error("bridge_paper_ids", "at least one bridge paper at depth 2", "an empty list")
            if len(set(gold_paper_ids)) != len(gold_paper_ids):
                raise where.error("gold_paper_ids", "distinct paper IDs", "a repeated ID")
            if seed_paper_id in gold_paper_ids:
                raise where.error("gold_paper_ids", "gold papers other than the seed", "the seed paper ID")

            if not conn.execute("SELECT 1 FROM temp.graph_lines WHERE sample_id = ?", (item_id,)).fetchone():
                raise where.fail(f"item {json.dumps(item_id)} has no graph record in {GRAPHS_FILE} (expected one with sample_id {json.dumps(item_id)})")
            self._check_in_graph(item_id, where, seed_paper_id, seed_arxiv_id, gold_paper_ids, gold_arxiv_ids, bridge_paper_ids, bridge_arxiv_ids)

            conn.execute(
                "INSERT INTO items(item_id, question_type, depth, reasoning_type, cognitive_skill, venue, consensus_tier, question, "
                "options, seed_paper_id, seed_arxiv_id, seed_title, filter_agreement, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (item_id, question_type, depth, reasoning_type, cognitive_skill, venue, consensus_tier, question,
                 _canon(options), seed_paper_id, seed_arxiv_id, seed_title, filter_agreement, n),
            )
            conn.execute(
                "INSERT INTO gold_items(item_id, correct_index, distractor_types, gold_paper_ids, gold_arxiv_ids, bridge_paper_ids, "
                "bridge_arxiv_ids) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (item_id, correct_index, None if distractor_types is None else _canon(distractor_types), _canon(gold_paper_ids),
                 _canon(gold_arxiv_ids), _canon(bridge_paper_ids), _canon(bridge_arxiv_ids)),
            )
            n += 1
        self.hashes[QA_FILE] = reader.hexdigest
        self.echo(f"{QA_FILE}: {n} items")

    def _check_in_graph(self, item_id, where, seed, seed_arxiv, gold, gold_arxiv, bridge, bridge_arxiv) -> None:
        """Seed, gold and bridge papers must be nodes of the item's graph, with matching arXiv IDs."""
        wanted = sorted({seed, *gold, *bridge})
        marks = ",".join("?" * len(wanted))
        found = {
            pid: (arxiv, has_text)
            for pid, arxiv, has_text in self.conn.execute(
                f"SELECT n.paper_id, p.arxiv_id, p.has_text FROM item_nodes n JOIN papers p ON p.paper_id = n.paper_id "
                f"WHERE n.item_id = ? AND n.paper_id IN ({marks})",
                [item_id, *wanted],
            )
        }

        def check(field: str, pid: str, arxiv: str | None, need_text: bool) -> None:
            if pid not in found:
                raise where.error(field, f"a paper ID among the nodes of item {item_id}'s graph", f"{json.dumps(pid)}, which is not a node")
            node_arxiv, has_text = found[pid]
            if arxiv and node_arxiv and arxiv != node_arxiv:
                raise where.error(field.replace("paper_id", "arxiv_id"), f"{json.dumps(node_arxiv)} (the node's arxivId)", _describe(arxiv))
            if need_text and not has_text:
                raise where.error(
                    field, f"a gold paper whose text is in {POOL_FILE}", f"{json.dumps(pid)} (arxivId {json.dumps(node_arxiv)}) without text"
                )

        check("seed_paper_id", seed, seed_arxiv, False)
        for i, (pid, arxiv) in enumerate(zip(gold, gold_arxiv)):
            check(f"gold_paper_ids[{i}]", pid, arxiv, True)
        for i, (pid, arxiv) in enumerate(zip(bridge, bridge_arxiv)):
            check(f"bridge_paper_ids[{i}]", pid, arxiv, False)

    # -- labels ------------------------------------------------------------

    def read_labels(self) -> None:
        reader = _JsonlReader(self.release_dir, LABELS_FILE)
        conn = self.conn
        n_records = n_labels = 0
        headers_cache: dict[str, list[str] | None] = {}
        for where, rec in reader:
            sample_id = _str(rec, "sample_id", where).strip()
            if not conn.execute("SELECT 1 FROM items WHERE item_id = ?", (sample_id,)).fetchone():
                raise where.error("sample_id", f"the id of an item in {QA_FILE}", f"{json.dumps(sample_id)}, which is not an item")
            if conn.execute("SELECT 1 FROM temp.label_lines WHERE sample_id = ?", (sample_id,)).fetchone():
                raise where.error("sample_id", "a sample_id not seen before in this file", f"a duplicate {json.dumps(sample_id)}")
            conn.execute("INSERT INTO temp.label_lines(sample_id, line) VALUES (?, ?)", (sample_id, where.line))
            analysis = _get(rec, "analysis", where)
            if not isinstance(analysis, dict):
                raise where.error("analysis", "an object with section_recall_labels", _describe(analysis))
            labels = _get(analysis, "section_recall_labels", where, field="analysis.section_recall_labels")
            if not isinstance(labels, list):
                raise where.error("analysis.section_recall_labels", "a list of label objects", _describe(labels))
            rows = []
            if len(headers_cache) > 256:
                headers_cache.clear()
            for i, label in enumerate(labels):
                field = f"analysis.section_recall_labels[{i}]"
                if not isinstance(label, dict):
                    raise where.error(field, "an object {paper, arxiv_id, section, relevance, what_it_contains}", _describe(label))
                arxiv_id = _str(label, "arxiv_id", where, field=f"{field}.arxiv_id").strip()
                section = _str(label, "section", where, field=f"{field}.section")
                relevance = label.get("relevance", _MISSING)
                if relevance is _MISSING:
                    raise where.fail(f"missing field '{field}.relevance'")
                if relevance not in RELEVANCES:
                    raise where.error(f"{field}.relevance", "one of \"direct\" or \"supporting\"", _describe(relevance))
                paper = _str(label, "paper", where, field=f"{field}.paper", nonempty=False, optional=True)
                what = _str(label, "what_it_contains", where, field=f"{field}.what_it_contains", nonempty=False, optional=True)

                problem = self._label_problem(arxiv_id, section, headers_cache)
                if problem is not None:
                    bad_field, expected = problem
                    if not self.skip_bad_labels:
                        err = where.error(f"{field}.{bad_field}", expected, _describe(section if bad_field == "section" else arxiv_id))
                        raise ReleaseError(f"{err} (use --skip-bad-labels to drop such labels and count them)")
                    self.skipped_labels += 1
                    if len(self.skipped_details) < _MAX_REPORTED_SKIPS:
                        self.skipped_details.append(
                            {"line": where.line, "sample_id": sample_id, "arxiv_id": arxiv_id, "section": section,
                             "problem": f"{bad_field}: expected {expected}"}
                        )
                    continue
                rows.append((sample_id, len(rows), paper, arxiv_id, section, relevance, what))
            conn.executemany(
                "INSERT INTO gold_recall_labels(item_id, position, paper_title, arxiv_id, section, relevance, what_it_contains) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            n_records += 1
            n_labels += len(rows)
        self.hashes[LABELS_FILE] = reader.hexdigest
        skipped = f", {self.skipped_labels} bad labels skipped" if self.skip_bad_labels else ""
        self.echo(f"{LABELS_FILE}: {n_records} records, {n_labels} labels{skipped}")
        for detail in self.skipped_details[:10]:
            self.echo(f"  skipped: line {detail['line']} {detail['sample_id']} {detail['arxiv_id']} {detail['section']!r}: {detail['problem']}")

    def _section_texts(self, arxiv_id: str) -> Iterator[str]:
        """The paper's section texts, one row at a time (only read when a label names no header)."""
        cur = self.conn.execute("SELECT text FROM sections WHERE arxiv_id = ? ORDER BY position", (arxiv_id,))
        try:
            for (text,) in cur:
                yield text
        finally:
            cur.close()

    def _label_problem(self, arxiv_id: str, section: str, cache: dict) -> tuple[str, str] | None:
        """None when the label resolves; else (field, what was expected)."""
        if arxiv_id not in cache:
            if self.conn.execute("SELECT 1 FROM pool WHERE arxiv_id = ?", (arxiv_id,)).fetchone():
                cache[arxiv_id] = [h for (h,) in self.conn.execute("SELECT header FROM sections WHERE arxiv_id = ? ORDER BY position", (arxiv_id,))]
            else:
                cache[arxiv_id] = None
        headers = cache[arxiv_id]
        if headers is None:
            return "arxiv_id", f"an arXiv ID in {POOL_FILE}"
        if label_is_resolvable(section, headers, self._section_texts(arxiv_id)):
            return None  # a header, or a subsection whose header appears verbatim in a section's text
        shown = "; ".join(headers[:12]) + ("; ..." if len(headers) > 12 else "")
        return "section", f"a section of {arxiv_id} (a header, a normalised header, or a subsection header in a section's text; headers: {shown or 'none'})"

    # -- final checks --------------------------------------------------------

    def final_checks(self) -> None:
        conn = self.conn
        orphan = conn.execute(
            "SELECT g.sample_id, g.line FROM temp.graph_lines g LEFT JOIN items i ON i.item_id = g.sample_id "
            "WHERE i.item_id IS NULL ORDER BY g.line LIMIT 1"
        ).fetchone()
        if orphan:
            raise ReleaseError(
                f"{GRAPHS_FILE} line {orphan[1]}: field 'sample_id': expected the id of an item in {QA_FILE}, "
                f"found {json.dumps(orphan[0])}, which is not an item"
            )
        self.items_without_labels = [
            r[0]
            for r in conn.execute(
                "SELECT i.item_id FROM items i LEFT JOIN temp.label_lines l ON l.sample_id = i.item_id WHERE l.sample_id IS NULL ORDER BY i.position"
            )
        ]
        if self.items_without_labels:
            shown = ", ".join(self.items_without_labels[:10])
            self.echo(f"warning: {len(self.items_without_labels)} items have no record in {LABELS_FILE} (section recall will be 0): {shown}")

    def counts(self) -> dict:
        conn = self.conn

        def one(sql: str) -> int:
            return conn.execute(sql).fetchone()[0]

        cells = dict.fromkeys(CELLS, 0)
        for qtype, depth, count in conn.execute("SELECT question_type, depth, COUNT(*) FROM items GROUP BY question_type, depth"):
            cells[f"{'ST' if qtype == 'single-target' else 'MT'}-d{depth}"] = count
        return {
            "papers": one("SELECT COUNT(*) FROM papers"),
            "papers_with_text": one("SELECT COUNT(*) FROM papers WHERE has_text = 1"),
            "pool_papers": one("SELECT COUNT(*) FROM pool"),
            "sections": one("SELECT COUNT(*) FROM sections"),
            "edges": one("SELECT COUNT(*) FROM edges"),
            "edges_with_context": one("SELECT COUNT(*) FROM edges WHERE context IS NOT NULL"),
            "items": one("SELECT COUNT(*) FROM items"),
            "items_by_cell": cells,
            "item_nodes": one("SELECT COUNT(*) FROM item_nodes"),
            "item_edges": one("SELECT COUNT(*) FROM item_edges"),
            "recall_labels": one("SELECT COUNT(*) FROM gold_recall_labels"),
        }


def corpus_identity(input_hashes: dict[str, str], importer_version: int = IMPORTER_VERSION) -> str:
    """sha256 over the sorted input hashes and the importer version.

    Same inputs and importer version, same corpus content: an import that
    would differ (bad labels dropped) cannot succeed without
    ``skip_bad_labels``, so the flag does not need to be part of the identity.
    """
    payload = json.dumps({"importer_version": importer_version, "inputs": sorted(input_hashes.values())}, sort_keys=True)
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


def _check_layout(release_dir: Path) -> None:
    if not release_dir.is_dir():
        raise ReleaseError(f"release directory not found: {release_dir} ({LAYOUT})")
    for rel in RELEASE_FILES:
        if not (release_dir / rel).is_file():
            raise ReleaseError(f"{release_dir} has no {rel}; {LAYOUT}")


def import_release(
    release_dir: Path,
    out: Path,
    *,
    skip_bad_labels: bool = False,
    echo: Callable[[str], None] = print,
) -> dict:
    """Build the corpus file ``out`` from a release directory; return a summary.

    Raises :class:`ReleaseError` on any problem with the release; then no file
    is left behind and an existing ``out`` is untouched.
    """
    started = time.monotonic()
    release_dir = Path(release_dir)
    out = Path(out)
    _check_layout(release_dir)
    if out.is_dir():
        raise ReleaseError(f"--out {out} is a directory; give the path of the corpus file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_temp(out)
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache
        create_schema(conn)
        conn.execute("CREATE TEMP TABLE graph_lines (sample_id TEXT PRIMARY KEY, line INTEGER NOT NULL) WITHOUT ROWID")
        conn.execute("CREATE TEMP TABLE label_lines (sample_id TEXT PRIMARY KEY, line INTEGER NOT NULL) WITHOUT ROWID")
        conn.execute("BEGIN")
        importer = _Importer(release_dir, conn, skip_bad_labels, echo)
        echo(f"importing {release_dir} -> {out}")
        importer.read_pool()
        importer.read_graphs()
        importer.read_qa()
        importer.read_labels()
        importer.final_checks()

        counts = importer.counts()
        inputs = {rel: importer.hashes[rel] for rel in sorted(importer.hashes)}
        provenance = {
            "source": release_dir.resolve().name,
            "inputs": inputs,
            "importer_version": IMPORTER_VERSION,
            "skipped_labels": importer.skipped_labels,
            "metadata_conflicts": importer.metadata_conflicts,
            "items_without_labels": len(importer.items_without_labels),
        }
        corpus_id = corpus_identity(inputs)
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [("provenance", _canon(provenance)), ("counts", _canon(counts)), ("corpus_id", _canon(corpus_id))],
        )
        conn.execute("COMMIT")
        conn.execute("DROP TABLE temp.graph_lines")
        conn.execute("DROP TABLE temp.label_lines")
        echo("analyzing and compacting")
        conn.execute("ANALYZE")
        conn.execute("VACUUM")
        conn.close()
        conn = None
        os.replace(tmp, out)
    except BaseException:
        if conn is not None:
            conn.close()
        tmp.unlink(missing_ok=True)
        raise

    summary = {
        "out": str(out),
        "corpus_id": corpus_id,
        "counts": counts,
        "skipped_labels": importer.skipped_labels,
        "skipped_label_examples": importer.skipped_details,
        "metadata_conflicts": importer.metadata_conflicts,
        "items_without_labels": importer.items_without_labels,
        "seconds": round(time.monotonic() - started, 2),
    }
    c = counts
    echo(
        f"wrote {out}: {c['items']} items, {c['papers']} papers ({c['papers_with_text']} with text), "
        f"{c['sections']} sections, {c['edges']} edges in {summary['seconds']} s"
    )
    return summary
