"""Writing the release: ``write_release`` builds a draft and writes its four files, and the records in them.

Guarantees: the same arguments give byte-identical files whatever ``PYTHONHASHSEED`` is
(no output depends on set order, JSON is written with fixed separators and
``ensure_ascii=False``, lines end in "\\n"); ``paper_pool/papers.jsonl`` is streamed one
paper at a time, so memory does not grow with the text; and a graph record holds the
seed, its references and theirs as nodes, edges from the seed and its references only,
and citation contexts for the edges whose citing paper has text.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from agenthop.corpus.release import (
    CELLS,
    GRAPHS_FILE,
    LABELS_FILE,
    POOL_FILE,
    QA_FILE,
    REASONING_TYPES,
    RELEASE_FILES,
)
from agenthop.corpus.summaries import SynthSummary
from agenthop.corpus.synth.graph import citation_sentences, draw_references, neighbourhood, place_citations
from agenthop.corpus.synth.items import ItemPlanner
from agenthop.corpus.synth.model import Draft, Item, Paper
from agenthop.corpus.synth.papers import make_papers
from agenthop.corpus.synth.text import cap, render_sections


def write_release(out_dir: Path, *, papers: int, items: int, seed: int) -> SynthSummary:
    """Generate a synthetic benchmark in the release layout (SPEC 2.1) under ``out_dir``.

    ``papers`` papers get section text (about 1.45 times as many metadata-only papers are
    added), ``items`` items are built, and everything is drawn from ``random.Random(seed)``:
    the same arguments give byte-identical files. Returns statistics (counts of papers
    with text and metadata-only papers in graphs, edges summed over item graphs, items per
    cell, neighbourhood sizes, section length bands, bytes per file).
    """
    if papers < 20:
        raise ValueError("papers must be at least 20")
    if items < 1:
        raise ValueError("items must be at least 1")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # The order of these steps is the order of draws from the seed's stream.
    draft = Draft(seed=seed, rng=random.Random(seed))
    draft.papers = make_papers(papers, seed, draft.rng)
    draw_references(draft.papers, draft.rng)
    ItemPlanner(draft, items).plan()
    place_citations(draft.papers)
    return ReleaseWriter(draft).write(out_dir)


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass
class _GraphTally:
    """What writing the graphs file counts, for the statistics."""

    nodes: list[int] = field(default_factory=list)  # per item
    text_nodes: list[int] = field(default_factory=list)  # per item
    meta_share: list[float] = field(default_factory=list)  # per item
    edges: int = 0  # summed over item graphs
    papers: dict[int, None] = field(default_factory=dict)  # every paper in some graph, in first-seen order


class ReleaseWriter:
    """Writes a finished draft as the four release files and reports statistics."""

    def __init__(self, draft: Draft):
        self.draft = draft
        self.papers = draft.papers

    def write(self, out_dir: Path) -> SynthSummary:
        for rel in RELEASE_FILES:
            (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        tally = self._write_graphs(out_dir / GRAPHS_FILE)
        section_lengths = self._write_pool(out_dir / POOL_FILE)
        items = self.draft.items
        with open(out_dir / QA_FILE, "w", encoding="utf-8", newline="\n") as f:
            for item in items:
                f.write(_dumps(self.qa_record(item)) + "\n")
        with open(out_dir / LABELS_FILE, "w", encoding="utf-8", newline="\n") as f:
            for item in items:
                f.write(
                    _dumps({"sample_id": item.id, "analysis": {"section_recall_labels": self.label_records(item)}})
                    + "\n"
                )
        return self._stats(out_dir, tally, section_lengths)

    # -- files -------------------------------------------------------------------------

    def _write_graphs(self, path: Path) -> _GraphTally:
        papers = self.papers
        # Nodes, edge lists and contexts repeat across items: serialise each once.
        node_json: dict[int, str] = {}
        ctx_json: dict[int, str] = {}
        edges_json: dict[int, str] = {}

        def nj(i: int) -> str:
            s = node_json.get(i)
            if s is None:
                s = node_json[i] = _dumps(self.node_record(papers[i]))
            return s

        tally = _GraphTally()
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for item in self.draft.items:
                seed = papers[item.seed]
                hood = neighbourhood(papers, seed)
                for i in hood:
                    tally.papers.setdefault(i, None)
                node_part = ",".join(f'"{papers[i].pid}":{nj(i)}' for i in hood)
                edge_parts = []
                ctx_parts = []
                for c in [seed.idx, *seed.refs]:
                    cp = papers[c]
                    if not cp.refs:
                        continue
                    tally.edges += len(cp.refs)
                    if c not in edges_json:
                        edges_json[c] = _dumps([papers[r].pid for r in cp.refs])
                    edge_parts.append(f'"{cp.pid}":{edges_json[c]}')
                    if cp.has_text:
                        if c not in ctx_json:
                            ctxs = citation_sentences(papers, self.draft.item_contexts, cp)
                            ctx_json[c] = _dumps({papers[r].pid: s for r, s in zip(cp.refs, ctxs)})
                        ctx_parts.append(f'"{cp.pid}":{ctx_json[c]}')
                f.write(
                    f'{{"sample_id":{_dumps(item.id)},"nodes":{{{node_part}}},"edges":{{{",".join(edge_parts)}}},"contexts":{{{",".join(ctx_parts)}}}}}\n'
                )
                n_text = sum(1 for i in hood if papers[i].has_text)
                tally.nodes.append(len(hood))
                tally.text_nodes.append(n_text)
                tally.meta_share.append(1 - n_text / len(hood))
        return tally

    def _write_pool(self, path: Path) -> list[int]:
        """Stream every paper with text, one at a time; return section counts per length band and in all."""
        section_lengths = [0] * 6  # <2K, 2-15K, 15-30K, 30-60K, >60K, count
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for p in self.papers:
                if not p.has_text:
                    continue
                secs = render_sections(p, citation_sentences(self.papers, self.draft.item_contexts, p))
                for s in secs:
                    n = len(s["text"])
                    section_lengths[
                        0 if n < 2000 else 1 if n <= 15000 else 2 if n <= 30000 else 3 if n <= 60000 else 4
                    ] += 1
                    section_lengths[5] += 1
                f.write(_dumps({"arxiv_id": p.arxiv, "title": p.title, "sections": secs}) + "\n")
        return section_lengths

    def _stats(self, out_dir: Path, tally: _GraphTally, section_lengths: list[int]) -> SynthSummary:
        papers = self.papers
        items = self.draft.items
        cells = dict.fromkeys(CELLS, 0)
        for item in items:
            cells[item.cell] += 1
        file_bytes = {rel: os.path.getsize(out_dir / rel) for rel in RELEASE_FILES}
        nodes = tally.nodes
        nodes_sorted = sorted(nodes)
        text_nodes = tally.text_nodes
        return {
            "seed": self.draft.seed,
            "papers_with_text": sum(1 for p in papers if p.has_text),
            "metadata_only_papers": sum(1 for i in tally.papers if not papers[i].has_text),
            "metadata_only_generated": sum(1 for p in papers if not p.has_text),
            "papers_in_graphs": len(tally.papers),
            "edges": tally.edges,
            "unique_edges": sum(len(p.refs) for p in papers),
            "items": len(items),
            "items_per_cell": cells,
            "items_by_reasoning_type": {rt: sum(1 for it in items if it.rtype == rt) for rt in REASONING_TYPES},
            "nodes_per_item": {
                "mean": round(sum(nodes) / max(len(nodes), 1), 1),
                "min": nodes_sorted[0] if nodes else 0,
                "median": nodes_sorted[len(nodes) // 2] if nodes else 0,
                "max": nodes_sorted[-1] if nodes else 0,
            },
            "text_nodes_per_item_median": sorted(text_nodes)[len(text_nodes) // 2] if text_nodes else 0,
            "metadata_only_share": round(sum(tally.meta_share) / max(len(tally.meta_share), 1), 3),
            "sections": section_lengths[5],
            "sections_by_length": dict(zip(("<2K", "2K-15K", "15K-30K", "30K-60K", ">60K"), section_lengths)),
            "forced_edits": self.draft.forced_edits,
            "bytes": sum(file_bytes.values()),
            "file_bytes": file_bytes,
        }

    # -- records -----------------------------------------------------------------------

    @staticmethod
    def node_record(p: Paper) -> dict:
        """A graph node: metadata only. A metadata-only paper's arXiv ID is null, or "" for some."""
        arxiv = p.arxiv if p.has_text else ("" if p.blank_arxiv else None)
        return {
            "title": p.title,
            "arxivId": arxiv,
            "year": p.year,
            "abstract": p.abstract,
            "authors": p.authors,
            "venue": p.venue,
        }

    def qa_record(self, item: Item) -> dict:
        papers = self.papers
        seed = papers[item.seed]
        golds = [papers[g] for g in item.golds]
        bridges = [papers[item.bridge]] if item.bridge is not None else []
        return {
            "id": item.id,
            "question_type": "multi-target" if item.mt else "single-target",
            "depth": item.depth,
            "reasoning_type": item.rtype,
            "cognitive_skill": item.skill,
            "venue": seed.venue,
            "consensus_tier": item.tier,
            "question": item.question,
            "options": item.options,
            "correct_index": item.correct_index,
            "distractor_types": item.distractor_types,
            "seed_paper_id": seed.pid,
            "seed_arxiv_id": seed.arxiv,
            "seed_title": seed.title,
            "gold_paper_ids": [g.pid for g in golds],
            "gold_arxiv_ids": [g.arxiv for g in golds],
            "bridge_paper_ids": [b.pid for b in bridges],
            "bridge_arxiv_ids": [b.arxiv for b in bridges],
            "filter_agreement": 2 if item.tier == "bronze" else 3,
        }

    def label_records(self, item: Item) -> list[dict]:
        """Recall labels: ``direct`` on each gold fact's section (or subsection), ``supporting`` on the chain's citing sections.

        Sometimes (from the item's own stream) also ``supporting`` on a gold paper's Method section.
        """
        papers = self.papers
        rng = random.Random(item.label_seed)
        out = []
        for d in item.direct:
            g = d.paper
            header = d.subhead or g.skeleton[d.section][0]
            what = cap(d.kind.what.format(qual=d.qual))
            out.append(
                {
                    "paper": g.title,
                    "arxiv_id": g.arxiv,
                    "section": header,
                    "relevance": "direct",
                    "what_it_contains": what,
                }
            )
        seed = papers[item.seed]

        def cites(citing: Paper, cited: Paper, what: str) -> None:
            pos = citing.refs.index(cited.idx)
            header = citing.skeleton[citing.ctx_place[pos]][0]
            out.append(
                {
                    "paper": citing.title,
                    "arxiv_id": citing.arxiv,
                    "section": header,
                    "relevance": "supporting",
                    "what_it_contains": what,
                }
            )

        if item.bridge is None:
            for gold_idx in item.golds:
                cites(seed, papers[gold_idx], "Cites the target work and says what the seed takes from it")
        else:
            bridge = papers[item.bridge]
            cites(seed, bridge, "Cites the bridge paper the seed builds on")
            for gold_idx in item.golds:
                cites(bridge, papers[gold_idx], "Cites the target work and says what the bridge takes from it")
        for d in item.direct:
            if rng.random() < 0.35:
                gold = d.paper
                mi = [s for _, s, _ in gold.skeleton].index("method")
                if mi != d.section:
                    out.append(
                        {
                            "paper": gold.title,
                            "arxiv_id": gold.arxiv,
                            "section": gold.skeleton[mi][0],
                            "relevance": "supporting",
                            "what_it_contains": "Describes the approach the fact refers to",
                        }
                    )
        return out
