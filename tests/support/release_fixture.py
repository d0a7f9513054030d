"""A tiny, hand-written release directory (SPEC 2.1 layout) for tests.

Three items over twelve papers, small enough to check by eye:

========  =============  =====  ======================  =====================
item      type           depth  seed -> ... -> gold      other nodes
========  =============  =====  ======================  =====================
st_0001   single-target  1      A -> B                   C, D (no text), E (no text)
st_0002   single-target  2      F -> G (bridge) -> H     C, E, I (no text)
mt_0001   multi-target   1      J -> B and K             D, E
========  =============  =====  ======================  =====================

Papers A, B, F, G, H, J, K have text in the pool; C, D, E, I are metadata-only
(C and E carry an empty or null ``arxivId``; D has an arXiv ID that is not in the
pool; I has none). L is in the pool but in no graph. C, D, E and B appear in
several items' graphs; one of E's copies (in st_0002) has a different abstract,
so the import counts one metadata conflict.

Usage::

    from support.release_fixture import make_release, pid

    rel = make_release(tmp_path)  # a valid release
    rel = make_release(tmp_path, lambda r: r.item("st_0001").update(correct_index=7))
    rel = make_release(tmp_path, lambda r: r.qa.__setitem__(1, "{not json"))  # raw line

``mutate`` receives a :class:`Release` (plain lists of dicts, one per JSONL
line, in file order) and changes it in place; a list element that is a
``str`` is written verbatim as that line. ``pid(name)`` gives the 40-hex paper
ID of a letter above, ``ARXIV[name]`` its arXiv ID.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

QA_FILE = "qa/full.jsonl"
GRAPHS_FILE = "graphs/full.jsonl"
POOL_FILE = "paper_pool/papers.jsonl"
LABELS_FILE = "audit/recall_labels.jsonl"
CORPUS_PAPERS_FILE = "corpus/papers.jsonl"
CITATIONS_FILE = "corpus/citations.jsonl"

ITEM_IDS = ("st_0001", "st_0002", "mt_0001")


def pid(name: str) -> str:
    """The 40-hex Semantic Scholar-style paper ID of fixture paper ``name``."""
    return hashlib.sha1(f"fixture-paper-{name}".encode()).hexdigest()


ARXIV = {
    "A": "2101.00001",
    "B": "2101.00002",
    "D": "2101.00004",  # not in the pool: metadata-only despite an arXiv ID
    "F": "2101.00006",
    "G": "2101.00007",
    "H": "2101.00008",
    "J": "2101.00010",
    "K": "2101.00011",
    "L": "2101.00012",  # in the pool, in no graph
}
TEXT_PAPERS = ("A", "B", "F", "G", "H", "J", "K", "L")


def _sections(name: str) -> list[dict]:
    """Top-level sections; B, H and K hold the facts the questions ask about."""
    base = [
        {"header": "Introduction", "text": f"Paper {name} introduces its topic. We study citation graphs."},
        {"header": "Method", "text": f"Paper {name} describes its method.\n3.2 Ablation Details\nWe ablate each part."},
        {"header": "Experiments", "text": f"Paper {name} reports results on three benchmarks."},
        {"header": "Apdx_A: Proofs", "text": f"Proofs for paper {name}."},
    ]
    if name == "B":
        base[2]["text"] = "We train on 4,096 examples and reach 81.5% accuracy on the held-out split."
    if name == "H":
        base[1]["text"] = "The encoder uses a window of 17 tokens.\n4.1 Window Size\nLarger windows did not help."
    if name == "K":
        base[2]["text"] = "The batch size is 512 for all runs."
    return base


def _node(name: str, **extra) -> dict:
    node = {
        "title": f"Paper {name}",
        "arxivId": ARXIV.get(name),
        "year": 2015 + (ord(name) - ord("A")) % 8,
        "abstract": f"Abstract of paper {name}.",
    }
    node.update(extra)
    return node


def _graph(sample_id: str, order: list[str], edges: dict[str, list[str]], **extra) -> dict:
    nodes = {}
    for name in order:
        node = _node(name)
        if name == "C":
            node["arxivId"] = ""
        if name in ("E", "I"):
            node["arxivId"] = None
        if name == "E" and sample_id == "st_0002":
            node["abstract"] = "A different abstract for E."
        if name == "A":
            node.update(authors=["Ada Lovelace", "Alan Turing"], venue="ACL")
        if name == "D":
            node["year"] = None
        nodes[pid(name)] = node
    record = {
        "sample_id": sample_id,
        "nodes": nodes,
        "edges": {pid(c): [pid(d) for d in cited] for c, cited in edges.items()},
    }
    record.update(extra)
    return record


def _item(item_id, qtype, depth, reasoning, seed, gold, bridge, question, options, correct, distractors) -> dict:
    return {
        "id": item_id,
        "question_type": qtype,
        "depth": depth,
        "reasoning_type": reasoning,
        "cognitive_skill": "retrieve",
        "venue": "ACL",
        "consensus_tier": "gold",
        "question": question,
        "options": options,
        "correct_index": correct,
        "distractor_types": distractors,
        "seed_paper_id": pid(seed),
        "seed_arxiv_id": ARXIV.get(seed),
        "seed_title": f"Paper {seed}",
        "gold_paper_ids": [pid(g) for g in gold],
        "gold_arxiv_ids": [ARXIV[g] for g in gold],
        "bridge_paper_ids": [pid(b) for b in bridge],
        "bridge_arxiv_ids": [ARXIV[b] for b in bridge],
        "filter_agreement": 3,
    }


def _label(name: str, section: str, relevance: str = "direct", what: str = "") -> dict:
    return {
        "paper": f"Paper {name}",
        "arxiv_id": ARXIV[name],
        "section": section,
        "relevance": relevance,
        "what_it_contains": what,
    }


@dataclass
class Release:
    """The files' records, one list element per line, in file order; a file whose list is None is not written.

    ``corpus_papers`` and ``citations`` are the optional corpus/ files (absent by default).
    """

    qa: list | None = field(default_factory=list)
    graphs: list | None = field(default_factory=list)
    pool: list = field(default_factory=list)
    labels: list | None = field(default_factory=list)
    corpus_papers: list | None = None
    citations: list | None = None

    def item(self, item_id: str) -> dict:
        return next(r for r in self.qa if isinstance(r, dict) and r.get("id") == item_id)

    def graph(self, sample_id: str) -> dict:
        return next(r for r in self.graphs if isinstance(r, dict) and r.get("sample_id") == sample_id)

    def paper(self, arxiv_id_or_name: str) -> dict:
        arxiv_id = ARXIV.get(arxiv_id_or_name, arxiv_id_or_name)
        return next(r for r in self.pool if isinstance(r, dict) and r.get("arxiv_id") == arxiv_id)

    def label_record(self, sample_id: str) -> dict:
        return next(r for r in self.labels if isinstance(r, dict) and r.get("sample_id") == sample_id)

    def labels_of(self, sample_id: str) -> list[dict]:
        """The item's ``analysis.section_recall_labels`` list (mutable)."""
        return self.label_record(sample_id)["analysis"]["section_recall_labels"]

    def files(self) -> dict[str, list]:
        files = {
            QA_FILE: self.qa,
            GRAPHS_FILE: self.graphs,
            POOL_FILE: self.pool,
            LABELS_FILE: self.labels,
            CORPUS_PAPERS_FILE: self.corpus_papers,
            CITATIONS_FILE: self.citations,
        }
        return {rel: records for rel, records in files.items() if records is not None}

    def explore_only(self) -> None:
        """Drop the item files (a corpus with corpus/papers.jsonl may have none)."""
        self.qa = self.graphs = self.labels = None


def build_release() -> Release:
    """A fresh copy of the valid fixture release."""
    qa = [
        _item(
            "st_0001",
            "single-target",
            1,
            "RESULT",
            "A",
            ["B"],
            [],
            "How many training examples does the method that paper A builds on use?",
            ["1,024", "4,096", "8,192", "2,048"],
            1,
            ["seed_only", "correct", "wrong_paper", "no_context"],
        ),
        _item(
            "st_0002",
            "single-target",
            2,
            "METHOD",
            "F",
            ["H"],
            ["G"],
            "What window size does the encoder behind paper F's main baseline use?",
            ["17 tokens", "5 tokens", "64 tokens", "33 tokens"],
            0,
            None,
        ),
        _item(
            "mt_0001",
            "multi-target",
            1,
            "GROUND",
            "J",
            ["B", "K"],
            [],
            "Which pair of settings do the two works paper J compares use?",
            [
                "4,096 examples and batch 512",
                "4,096 examples and batch 64",
                "1,024 examples and batch 512",
                "2,048 examples and batch 256",
            ],
            0,
            ["correct", "wrong_paper", "seed_only", "no_context"],
        ),
    ]
    graphs = [
        _graph(
            "st_0001",
            ["A", "B", "C", "D", "E"],
            {"A": ["B", "C", "D"], "B": ["E"], "C": [], "D": ["E"]},
            contexts={pid("A"): {pid("B"): "We build on the data of Paper B [3]."}},
        ),
        _graph("st_0002", ["F", "G", "C", "H", "E", "I"], {"F": ["G", "C"], "G": ["H", "E"], "C": ["I"]}),
        _graph("mt_0001", ["J", "B", "K", "D", "E"], {"J": ["B", "K", "D"], "B": ["E"], "K": [], "D": []}),
    ]
    pool = [{"arxiv_id": ARXIV[name], "title": f"Paper {name}", "sections": _sections(name)} for name in TEXT_PAPERS]
    labels = [
        {
            "sample_id": "st_0001",
            "analysis": {
                "query_quality": {"verdict": "pass"},
                "section_recall_labels": [
                    _label("B", "Experiments", "direct", "training set size"),
                    _label("B", "introduction", "supporting", "context"),  # case-insensitive header
                    _label("A", "3.2 Ablation Details", "supporting", "ablation"),  # subsection in Method's text
                ],
            },
        },
        {
            "sample_id": "st_0002",
            "analysis": {
                "section_recall_labels": [
                    _label("H", "2 Method", "direct", "window size"),  # normalised header
                    _label("G", "Apdx_A: Proofs", "supporting", "bridge proof"),
                ]
            },
        },
        {
            "sample_id": "mt_0001",
            "analysis": {
                "section_recall_labels": [
                    _label("B", "Experiments", "direct", "examples"),
                    _label("K", "Experiments", "direct", "batch size"),
                    _label("K", "proofs", "supporting", "appendix"),  # normalised appendix header
                ]
            },
        },
    ]
    return Release(qa=qa, graphs=graphs, pool=pool, labels=labels)


def write_release(directory: Path, release: Release) -> Path:
    """Write ``release`` in the SPEC 2.1 layout under ``directory``; return it."""
    directory = Path(directory)
    for rel, records in release.files().items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            for record in records:
                line = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)
                fh.write(line + "\n")
    return directory


def make_release(tmp_path: Path, mutate: Callable[[Release], object] | None = None, *, name: str = "release") -> Path:
    """Write the fixture release to ``tmp_path / name``, after ``mutate(release)`` if given."""
    release = copy.deepcopy(build_release())
    if mutate is not None:
        mutate(release)
    return write_release(Path(tmp_path) / name, release)
