"""Stage 8b: write the release (docs/corpus.md's layout) that ``agenthop-server corpus import`` builds a corpus from.

The whole source corpus goes in (``corpus/papers.jsonl``, ``corpus/citations.jsonl``,
``paper_pool/``), so explore mode serves the same papers, and each item gets the
neighbourhood the release format defines: the seed, its first 30 references and
theirs, with edges for the seed and its references. The output is a function of
the surviving candidates alone (no clock, no set order), so a re-run writes the
same bytes; it is written beside ``OUT/release`` and swapped in at the end.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agenthop.construct.stagefiles import canonical, digest
from agenthop.corpus.release import (
    CITATIONS_FILE,
    CORPUS_PAPERS_FILE,
    GRAPHS_FILE,
    LABELS_FILE,
    MAX_REFS,
    POOL_FILE,
    QA_FILE,
)

PROVENANCE_FILE = "construct/provenance.json"
SKILL = {"ST": "retrieve", "MT": "synthesize"}


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def _text_id(view, pid: str) -> str | None:
    paper = view.papers[pid]
    return paper.text_key if paper.has_text else None


def graph(view, item_id: str, seed: str) -> dict:
    nodes: dict[str, dict] = {}
    edges: dict[str, list[str]] = {}
    contexts: dict[str, dict[str, str]] = {}  # citing -> cited -> the citation's context

    def node(pid: str) -> None:
        if pid not in nodes:
            p = view.papers[pid]
            nodes[pid] = {
                "title": p.title,
                "arxivId": _text_id(view, pid),
                "year": p.year,
                "abstract": p.abstract,
                "authors": list(p.authors),
                "venue": p.venue,
            }

    def expand(citing: str) -> list[str]:
        refs = view.references(citing)[:MAX_REFS]
        for cited, context in refs:
            node(cited)
            if context:
                contexts.setdefault(citing, {})[cited] = context
        if refs:
            edges[citing] = [c for c, _ in refs]
        return [c for c, _ in refs]

    node(seed)
    for cited in expand(seed):
        expand(cited)
    return {"sample_id": item_id, "nodes": nodes, "edges": edges, "contexts": contexts}


ID_RULE = (
    "st_ or mt_, then the first 10 hex digits of the SHA-256 of the canonical JSON of "
    "[seed paper ID, bridge paper ID or null, target paper IDs, evidence sentences, question, options in order]"
)


def item_id(cand: dict) -> str:
    """An ID derived from the item's content alone: removing, adding or re-running other items never changes it.

    It covers everything the agent sees (the question and every option, in order), so two releases that ask
    different options never share an ID, whichever generator wrote them.
    """
    content = [
        cand["seed"],
        cand["bridge"],
        cand["targets"],
        cand.get("evidence", []),
        cand.get("question"),
        cand.get("options", []),
    ]
    return f"{cand['kind'].lower()}_" + digest(canonical(content))[:10]


def item_ids(cands: list[dict]) -> list[str]:
    ids = [item_id(c) for c in cands]
    if len(set(ids)) != len(
        ids
    ):  # two candidates with the same seed, path and evidence: a pipeline bug, never silently merged
        dup = next(i for i in ids if ids.count(i) > 1)
        same = [c["id"] for c, i in zip(cands, ids) if i == dup]
        raise ValueError(
            f"candidates {', '.join(same)} share the content-derived ID {dup} (same seed, bridge, targets, "
            "evidence, question and options): the pipeline made one item twice; remove one on the review page (agenthop-construct review) and report the bug"
        )
    return ids


def citation_count(view, pid: str) -> int:
    """Papers of the source corpus that cite ``pid`` (what Stage 1 counts), recorded with each gold paper."""
    return len(set(view.citers(pid)) - {pid})


def qa_record(view, item_id: str, cand: dict, citations_taken: str | None = None) -> dict:
    seed = view.papers[cand["seed"]]
    bridges = [cand["bridge"]] if cand["bridge"] else []
    return {
        "id": item_id,
        "question_type": "multi-target" if cand["kind"] == "MT" else "single-target",
        "depth": cand["depth"],
        "reasoning_type": cand["reasoning_type"],
        "cognitive_skill": cand.get("cognitive_skill") or SKILL[cand["kind"]],  # a model's, else by the item's type
        "venue": seed.venue,
        "consensus_tier": cand["consensus_tier"],
        "question": cand["question"],
        "options": cand["options"],
        "correct_index": cand["correct_index"],
        "distractor_types": cand["distractor_types"],
        "seed_paper_id": seed.paper_id,
        "seed_arxiv_id": _text_id(view, seed.paper_id),
        "seed_title": seed.title,
        "gold_paper_ids": cand["targets"],
        "gold_arxiv_ids": [_text_id(view, t) for t in cand["targets"]],
        "bridge_paper_ids": bridges,
        "bridge_arxiv_ids": [_text_id(view, b) or "" for b in bridges],
        "filter_agreement": cand["filter_agreement"],
        "gold_citation_counts": [citation_count(view, t) for t in cand["targets"]],
        "citation_counts_taken": citations_taken,
    }


def label_record(view, item_id: str, cand: dict) -> dict:
    labels = []
    for lab in cand["labels"]:
        paper = view.papers[lab["paper_id"]]
        evidence = [
            e
            for e in cand.get("evidence", [])
            if any(e in sec.text for sec in view.sections(paper.paper_id) if sec.header == lab["section"])
        ]
        labels.append(
            {
                "paper": paper.title,
                "arxiv_id": paper.text_key,
                "section": lab["section"],
                "relevance": lab["relevance"],
                "what_it_contains": f"states: {evidence[0]}" if evidence else "",
            }
        )
    return {
        "sample_id": item_id,
        "analysis": {
            "section_recall_labels": labels,
            "construct": {
                "candidate": cand["id"],
                "answer": cand["answer"],
                "evidence": cand.get("evidence", []),
                "audit": cand.get("audit", {}),
            },
        },
    }


def write_release(view, cands: list[dict], out: Path, provenance: dict, citations_taken: str | None = None) -> dict:
    """Write the release directory ``out``; return its counts. ``citations_taken``: the date (YYYY-MM-DD) the
    gold papers' citation counts were taken, written beside them."""
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    files = {
        rel: tmp / rel
        for rel in (QA_FILE, GRAPHS_FILE, LABELS_FILE, POOL_FILE, CORPUS_PAPERS_FILE, CITATIONS_FILE, PROVENANCE_FILE)
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    ids = item_ids(cands)
    with (
        open(files[QA_FILE], "w", encoding="utf-8", newline="\n") as qa,
        open(files[GRAPHS_FILE], "w", encoding="utf-8", newline="\n") as gr,
        open(files[LABELS_FILE], "w", encoding="utf-8", newline="\n") as lab,
    ):
        for item_id, cand in zip(ids, cands):
            qa.write(_line(qa_record(view, item_id, cand, citations_taken)))
            gr.write(_line(graph(view, item_id, cand["seed"])))
            lab.write(_line(label_record(view, item_id, cand)))
    with open(files[POOL_FILE], "w", encoding="utf-8", newline="\n") as pool:
        for key, title in view.pool:
            sections = view.pool_sections(key)
            if sections:  # a record with zero sections gives no text; its papers are written as metadata-only
                pool.write(
                    _line(
                        {
                            "arxiv_id": key,
                            "title": title,
                            "sections": [{"header": s.header, "text": s.text} for s in sections],
                        }
                    )
                )
    with open(files[CORPUS_PAPERS_FILE], "w", encoding="utf-8", newline="\n") as fh:
        for pid, p in view.papers.items():
            fh.write(
                _line(
                    {
                        "paper_id": pid,
                        "title": p.title,
                        "abstract": p.abstract,
                        "authors": list(p.authors),
                        "year": p.year,
                        "venue": p.venue,
                        "text_id": _text_id(view, pid),
                        "ids": json.loads(p.ids),
                    }
                )
            )
    with open(files[CITATIONS_FILE], "w", encoding="utf-8", newline="\n") as fh:
        for citing, refs in view.refs.items():
            fh.write(_line({"paper_id": citing, "references": [{"paper_id": c, "context": ctx} for c, ctx in refs]}))
    counts = {
        "items": len(cands),
        "ST": sum(c["kind"] == "ST" for c in cands),
        "MT": sum(c["kind"] == "MT" for c in cands),
    }
    files[PROVENANCE_FILE].write_text(
        canonical(
            {**provenance, "counts": counts, "item_ids": ID_RULE, "items": dict(zip(ids, (c["id"] for c in cands)))}
        )
        + "\n"
    )
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return counts
