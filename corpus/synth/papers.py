"""Generating the papers: metadata, title, abstract, section skeleton, and an order in time.

``make_papers`` returns ``n_text`` papers with text interleaved with about 1.45 times as
many metadata-only papers. It guarantees: titles are unique; paper IDs are SHA-1 hex of
the seed and the paper's position; arXiv IDs are unique and match the year; headers are
unique within a paper; and ``Paper.order`` is a total order consistent with years, which
``graph.py`` uses so that papers cite only earlier ones. The text itself is not written
here, only the per-paper seed it will be drawn from (``text.render_sections``).
"""

from __future__ import annotations

import hashlib
import random

from agenthop.corpus.synth.model import Paper
from agenthop.corpus.synth.text import acronym, make_abstract, make_title
from agenthop.corpus.synth.vocabulary import AREA_NAMES, AREA_WEIGHTS, AREAS, FIRST_NAMES, HEADERS, LAST_NAMES

# (median length in characters) per section type; lengths are log-normal around it.
MEDIAN_LEN = {
    "intro": 4600,
    "related": 5200,
    "method": 7800,
    "data": 4200,
    "setup": 3800,
    "results": 6200,
    "analysis": 5600,
    "discussion": 3000,
    "conclusion": 2100,
    "apdx_proofs": 6500,
    "apdx_hparams": 2800,
    "apdx_results": 5200,
    "apdx_data": 4200,
    "apdx_examples": 5200,
}
# Section types that are sometimes long (18K-55K characters), as in real papers.
LONG_CAPABLE = ("method", "analysis", "results", "apdx_proofs", "apdx_results", "apdx_examples")

# Year weights: papers with text lean recent; metadata-only papers (older references) less so.
TEXT_YEARS = list(range(2012, 2026))
TEXT_YEAR_WEIGHTS = [1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 8]
META_YEARS = list(range(2010, 2026))
META_YEAR_WEIGHTS = [3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 7, 7, 7, 7, 6, 4]


def make_papers(n_text: int, seed: int, rng: random.Random) -> list[Paper]:
    """Papers with text and metadata-only papers, in a deterministic mix, each with its ``order``."""
    n_meta = int(round(n_text * 1.45))
    total = n_text + n_meta
    # Interleave text and metadata-only papers deterministically.
    kinds = [True] * n_text + [False] * n_meta
    rng.shuffle(kinds)
    titles: set[str] = set()
    arxiv_used: set[str] = set()
    papers: list[Paper] = []
    for idx in range(total):
        p = Paper(idx)
        p.has_text = kinds[idx]
        p.pid = hashlib.sha1(f"agenthop-synth/{seed}/paper/{idx}".encode()).hexdigest()
        p.area = rng.choices(AREA_NAMES, AREA_WEIGHTS)[0]
        area = AREAS[p.area]
        p.task = rng.choice(area["tasks"])
        p.methods = rng.sample(area["methods"], 2)
        p.facets = rng.sample([f for f in area["facets"] if f.split("-")[0] not in p.task], 2)
        p.datasets = rng.sample(area["datasets"], 2)
        p.component = rng.choice(area["components"])
        p.phenomenon = rng.choice(area["phenomena"])
        p.acr = acronym(rng) if rng.random() < 0.7 else None
        p.year = (
            rng.choices(TEXT_YEARS, TEXT_YEAR_WEIGHTS)[0]
            if p.has_text
            else rng.choices(META_YEARS, META_YEAR_WEIGHTS)[0]
        )
        p.venue = rng.choice(area["venues"])
        p.authors = [
            f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
            for _ in range(rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5, 6, 8]))
        ]
        p.title = make_title(p, rng, titles)
        p.abstract = make_abstract(p, rng)
        p.text_seed = rng.getrandbits(64)
        p.arxiv = _arxiv_id(rng, p.year, arxiv_used) if p.has_text else None
        p.blank_arxiv = (not p.has_text) and rng.random() < 0.15
        if p.has_text:
            p.skeleton = _skeleton(p, rng)
        papers.append(p)
    # Metadata-only papers sometimes lack a year or an abstract, as in the release.
    for p in papers:
        if not p.has_text:
            r = rng.random()
            if r < 0.03:
                p.abstract = ""
            elif r < 0.05:
                p.year = None
    # A total order consistent with years: citations only go to earlier papers.
    keyed = sorted(papers, key=lambda p: (p.year if p.year is not None else rng.randint(2010, 2025), rng.random()))
    for rank, p in enumerate(keyed):
        p.order = rank
    return papers


def _arxiv_id(rng: random.Random, year: int, used: set[str]) -> str:
    while True:
        month = rng.randint(1, 12)
        yymm = f"{year % 100:02d}{month:02d}"
        num = rng.randint(1, 9999) if year < 2015 else rng.randint(1, 29999)
        aid = f"{yymm}.{num:04d}" if year < 2015 else f"{yymm}.{num:05d}"
        if aid not in used:
            used.add(aid)
            return aid


def _skeleton(p: Paper, rng: random.Random) -> list[tuple[str, str, int]]:
    """(header, section type, target length) per section, in reading order, headers unique."""
    stypes = ["intro"]
    if rng.random() < 0.9:
        stypes.append("related")
    stypes.append("method")
    if rng.random() < 0.35:
        stypes.append("data")
    if rng.random() < 0.85:
        stypes.append("setup")
    if rng.random() < 0.95:
        stypes.append("results")
    if rng.random() < 0.6:
        stypes.append("analysis")
    if rng.random() < 0.3:
        stypes.append("discussion")
    if rng.random() < 0.95:
        stypes.append("conclusion")
    apdx: list[str] = []
    if rng.random() < 0.45:
        apdx = rng.sample(
            ["apdx_proofs", "apdx_hparams", "apdx_results", "apdx_data", "apdx_examples"], rng.randint(1, 3)
        )
        apdx.sort(key=["apdx_proofs", "apdx_hparams", "apdx_data", "apdx_results", "apdx_examples"].index)
    used: set[str] = set()
    out = []
    for stype in stypes:
        header = rng.choice(HEADERS[stype])
        if stype == "method" and p.acr and rng.random() < 0.15:
            header = f"The {p.acr} Model"
        if header in used:
            header = next(h for h in HEADERS[stype] + [stype.title()] if h not in used)
        used.add(header)
        out.append((header, stype, _length(stype, rng)))
    plain = rng.random() < 0.2 and len(apdx) == 1
    for i, stype in enumerate(apdx):
        name = rng.choice(HEADERS[stype])
        header = f"Apdx: {name}" if plain else f"Apdx_{'ABCDE'[i]}: {name}"
        out.append((header, stype, _length(stype, rng)))
    return out


def _length(stype: str, rng: random.Random) -> int:
    if stype in LONG_CAPABLE and rng.random() < 0.025:
        return rng.randint(18000, 55000)
    return int(min(15000, max(1300, rng.lognormvariate(0, 0.42) * MEDIAN_LEN[stype])))
