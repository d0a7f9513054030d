"""The citation graph: who cites whom, what an item's graph covers, and where and how each reference is cited.

One global graph. ``draw_references`` gives each paper up to ``MAX_REFS`` references to
strictly earlier papers (``Paper.order``), mostly in its own task and area, about half of
them with text. After items are planned (which may edit references, see ``chains.py``),
``place_citations`` decides which section of a paper with text cites each reference and
``citation_sentences`` words the sentence (``... [i].``), so every reference of a paper
with text has exactly one citation sentence in its Introduction, Related Work or Method.
Both draw from per-paper streams, so neither depends on the order papers are written in.
"""

from __future__ import annotations

import bisect
import random

from agenthop.corpus.release import MAX_REFS
from agenthop.corpus.synth.model import Paper
from agenthop.corpus.synth.text import cap
from agenthop.corpus.synth.vocabulary import CONTEXT_TEMPLATES


def draw_references(papers: list[Paper], rng: random.Random) -> None:
    """Fill every paper's ``refs``; a paper cites only papers earlier in ``order``."""
    # Candidate pools (by task, by area, overall; with or without text), sorted by order.
    pools: dict[tuple, tuple[list[int], list[int]]] = {}

    def add(key, p):
        pools.setdefault(key, ([], []))
        pools[key][0].append(p.order)
        pools[key][1].append(p.idx)

    for p in sorted(papers, key=lambda q: q.order):
        add(("task", p.area, p.task, p.has_text), p)
        add(("area", p.area, p.has_text), p)
        add(("all", p.has_text), p)

    def older(key, order) -> tuple[list[int], int]:
        entry = pools.get(key)
        if not entry:
            return [], 0
        return entry[1], bisect.bisect_left(entry[0], order)

    for p in papers:
        if p.has_text:
            n = min(MAX_REFS, max(4, int(rng.gauss(25, 7))))
        else:
            n = 0 if rng.random() < 0.12 else min(MAX_REFS, max(1, int(rng.gauss(15, 8))))
        focus = rng.uniform(0.5, 0.92)  # how strongly this paper cites within its own task
        refs: list[int] = []
        seen = {p.idx}
        tries = 0
        while len(refs) < n and tries < n * 4:
            tries += 1
            text = rng.random() < 0.5
            r = rng.random()
            scopes = [("task", p.area, p.task, text), ("area", p.area, text), ("all", text)]
            start = 0 if r < focus else (1 if r < focus + (1 - focus) * 0.8 else 2)
            for key in scopes[start:]:
                ids, k = older(key, p.order)
                if k:
                    cand = ids[rng.randrange(k)]
                    break
            else:
                continue
            if cand in seen:
                continue
            seen.add(cand)
            refs.append(cand)
        p.refs = refs


def text_refs(papers: list[Paper], p: Paper) -> list[int]:
    """The references of ``p`` that have text."""
    return [r for r in p.refs if papers[r].has_text]


def neighbourhood(papers: list[Paper], seed: Paper) -> list[int]:
    """An item's graph nodes: the seed, then its references, then theirs, each once, in that order."""
    seen = {seed.idx: None}
    for r in seed.refs:
        seen.setdefault(r, None)
    for r in seed.refs:
        for r2 in papers[r].refs:
            seen.setdefault(r2, None)
    return list(seen)


def place_citations(papers: list[Paper]) -> None:
    """Decide, for each reference of each paper with text, which section cites it."""
    for p in papers:
        if not p.has_text:
            continue
        rng = random.Random(p.text_seed ^ 0x5BD1E995)
        stypes = [s for _, s, _ in p.skeleton]
        intro = stypes.index("intro")
        related = stypes.index("related") if "related" in stypes else None
        method = stypes.index("method")
        place = []
        for _ in p.refs:
            r = rng.random()
            if related is not None and r < 0.58:
                place.append(related)
            elif r < 0.9:
                place.append(intro)
            else:
                place.append(method)
        p.ctx_place = place


def citation_sentences(papers: list[Paper], item_contexts: dict[tuple[int, int], str], p: Paper) -> list[str]:
    """One sentence per reference of ``p``, in reference order, built from the cited paper's words.

    A chain edge uses the sentence its item chose (``item_contexts``); every other edge a
    template filled from the paper's own stream, so the result is the same on every call.
    """
    rng = random.Random(p.text_seed ^ 0x2545F491)
    out = []
    for pos, r in enumerate(p.refs, start=1):
        override = item_contexts.get((p.idx, r))
        if override is not None:
            out.append(cap(override.format(i=pos)))
            continue
        c = papers[r]
        words = {"task": c.task, "method": rng.choice(c.methods), "facet": rng.choice(c.facets), "i": str(pos)}
        out.append(cap(rng.choice(CONTEXT_TEMPLATES).format(**words)))
    return out
