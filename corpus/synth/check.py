"""Checking a written release against the synthetic guarantees (docs/synthetic.md), for tests.

``check_release`` reads only the release files, not the generator's state, so it checks
what a user of the release sees. It loads all text: use it on small releases.
"""

from __future__ import annotations

import json
from pathlib import Path

from agenthop.corpus.release import GRAPHS_FILE, LABELS_FILE, MAX_REFS, POOL_FILE, QA_FILE


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def check_release(release_dir: Path) -> list[str]:
    """Check the synthetic guarantees on a (small) release; return the problems found.

    Loads all text, so use it on small releases. Checks: every option part is stated
    where its distractor kind says and nowhere else, the correct part only in a
    ``direct``-labelled section of its gold paper, no option in the question or in the
    seed's title/abstract, labels resolvable, chain edges present and the graph shape.
    """
    release_dir = Path(release_dir)
    qa = _read_jsonl(release_dir / QA_FILE)
    graphs = {g["sample_id"]: g for g in _read_jsonl(release_dir / GRAPHS_FILE)}
    pool = {p["arxiv_id"]: p for p in _read_jsonl(release_dir / POOL_FILE)}
    labels = {r["sample_id"]: r["analysis"]["section_recall_labels"] for r in _read_jsonl(release_dir / LABELS_FILE)}
    problems: list[str] = []
    full_text = {a: "\n\n".join(s["text"] for s in p["sections"]) for a, p in pool.items()}
    meta_text: list[str] = []
    for graph in graphs.values():
        for node in graph["nodes"].values():
            meta_text.append(node["title"])
            meta_text.append(node["abstract"] or "")
    all_meta = "\n".join(meta_text)
    questions = "\n".join(it["question"] for it in qa)

    def where(fact: str) -> list[str]:
        return [a for a, t in full_text.items() if fact in t]

    for it in qa:
        iid = it["id"]
        g = graphs.get(iid)
        if g is None:
            problems.append(f"{iid}: no graph")
            continue
        nodes = g["nodes"]
        seed_pid = it["seed_paper_id"]
        if next(iter(nodes)) != seed_pid:
            problems.append(f"{iid}: seed is not the first node")
        pid_arxiv = {pid: (n.get("arxivId") or None) for pid, n in nodes.items()}
        depth1 = g["edges"].get(seed_pid, [])
        for citing, cited in g["edges"].items():
            if citing != seed_pid and citing not in depth1:
                problems.append(f"{iid}: edges from a depth-2 node {citing}")
            if len(cited) > MAX_REFS:
                problems.append(f"{iid}: {citing} has {len(cited)} references")
        for pid in it["gold_paper_ids"] + it["bridge_paper_ids"] + [seed_pid]:
            if pid not in nodes or pid_arxiv.get(pid) not in pool:
                problems.append(f"{iid}: chain paper {pid} missing or without text")
        if it["depth"] == 1:
            for gp in it["gold_paper_ids"]:
                if gp not in depth1:
                    problems.append(f"{iid}: seed does not cite gold")
        else:
            b = it["bridge_paper_ids"][0]
            if b not in depth1:
                problems.append(f"{iid}: seed does not cite bridge")
            for gp in it["gold_paper_ids"]:
                if gp not in g["edges"].get(b, []):
                    problems.append(f"{iid}: bridge does not cite gold")
                if gp in depth1:
                    problems.append(f"{iid}: depth-2 gold is cited by the seed")
        seed_arxiv = it["seed_arxiv_id"]
        gold_arxiv = it["gold_arxiv_ids"]
        # Direct sections of each gold paper.
        direct: dict[str, list[str]] = {}
        for lab in labels.get(iid, []):
            paper = pool.get(lab["arxiv_id"])
            if paper is None:
                problems.append(f"{iid}: label names unknown arXiv ID {lab['arxiv_id']}")
                continue
            headers = [s["header"] for s in paper["sections"]]
            if lab["section"] in headers:
                texts = [paper["sections"][headers.index(lab["section"])]["text"]]
            else:
                texts = [s["text"] for s in paper["sections"] if lab["section"] in s["text"]]
                if len(texts) != 1:
                    problems.append(
                        f"{iid}: label {lab['section']!r} found in {len(texts)} sections of {lab['arxiv_id']}"
                    )
            if lab["relevance"] == "direct":
                direct.setdefault(lab["arxiv_id"], []).extend(texts)
        n_parts = len(gold_arxiv)
        correct_parts = it["options"][it["correct_index"]].split("; ")
        if len(correct_parts) != n_parts:
            problems.append(f"{iid}: correct option has {len(correct_parts)} parts")
            continue
        for opt, dtype in zip(it["options"], it["distractor_types"]):
            if opt in it["question"] or opt.lower() in questions.lower():
                problems.append(f"{iid}: option {opt!r} appears in a question")
            parts = opt.split("; ")
            for i, part in enumerate(parts):
                if part in all_meta or part in questions:
                    problems.append(f"{iid}: {part!r} appears in a title/abstract/question")
                hosts = where(part)
                if part == correct_parts[i]:
                    if hosts != [gold_arxiv[i]]:
                        problems.append(
                            f"{iid}: correct part {part!r} stated in {hosts}, expected only {gold_arxiv[i]}"
                        )
                    elif not any(part in t for t in direct.get(gold_arxiv[i], [])):
                        problems.append(f"{iid}: correct part {part!r} not in a direct-labelled section")
                    continue
                if dtype == "seed_only":
                    if hosts != [seed_arxiv]:
                        problems.append(f"{iid}: seed_only part {part!r} stated in {hosts}")
                elif dtype == "wrong_paper":
                    if (
                        len(hosts) != 1
                        or hosts[0] in gold_arxiv
                        or hosts[0] == seed_arxiv
                        or hosts[0] in it["bridge_arxiv_ids"]
                    ):
                        problems.append(f"{iid}: wrong_paper part {part!r} stated in {hosts}")
                    elif hosts[0] not in pid_arxiv.values():
                        problems.append(f"{iid}: wrong_paper host {hosts[0]} is not in the neighbourhood")
                elif dtype == "no_context":
                    if hosts:
                        problems.append(f"{iid}: no_context part {part!r} stated in {hosts}")
                else:
                    problems.append(f"{iid}: non-correct option typed {dtype!r}")
            if dtype != "seed_only" and seed_arxiv in pool and opt in full_text[seed_arxiv]:
                problems.append(f"{iid}: option {opt!r} ({dtype}) in the seed text")
    return problems
