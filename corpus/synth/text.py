"""Writing words: filling templates into sentences and paragraphs, titles, abstracts and section text.

Everything here is a function of a paper and a random stream, so the same paper and
stream give the same text. Section text is rendered from the paper's own stream
(``Paper.text_seed``) only when the release is written, one paper at a time, so a
release's text is never held in memory as a whole. ``render_sections`` is the one place
that puts citation sentences and planted facts into the text; nothing here can produce a
fact string (see ``vocabulary.py``).
"""

from __future__ import annotations

import random
import re

from agenthop.corpus.synth.model import Paper
from agenthop.corpus.synth.vocabulary import (
    ABSTRACT_CLOSE,
    ABSTRACT_MIDDLE,
    ABSTRACT_OPEN,
    ABSTRACT_PROPOSE,
    ABSTRACT_RESULTS,
    ABSTRACT_TAIL,
    AREAS,
    CONNECTORS,
    GENERIC_SENTENCES,
    OPENERS,
    REASONS,
    SMALL_WORDS,
    SYLLABLES,
    TITLE_PATTERNS,
    TYPE_SENTENCES,
)


def cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def title_case(text: str) -> str:
    words = text.split(" ")
    out = []
    for i, w in enumerate(words):
        if i > 0 and w in SMALL_WORDS:
            out.append(w)
        elif w[:1].islower():
            out.append("-".join(p[:1].upper() + p[1:] for p in w.split("-")))
        else:
            out.append(w)
    return " ".join(out)


def acronym(rng: random.Random) -> str:
    word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
    style = rng.random()
    if style < 0.45:
        return word.upper()[:7]
    if style < 0.8:
        return word[:1].upper() + word[1:]
    return word[:2].upper() + word[2:]


# -- body text ---------------------------------------------------------------------------


class Fill:
    """Fills sentence templates with one paper's vocabulary (own words weighted up)."""

    _SLOT = re.compile(r"\{(\w+)\}")

    def __init__(self, paper: Paper, rng: random.Random):
        area = AREAS[paper.area]
        self.rng = rng
        acr = paper.acr or "our approach"
        self.vocab = {
            "task": [paper.task] * 4 + rng.sample(area["tasks"], 3),
            "method": paper.methods * 2 + rng.sample(area["methods"], 3),
            "method2": area["methods"],
            "facet": paper.facets * 2 + rng.sample(area["facets"], 3),
            "dataset": paper.datasets * 2 + rng.sample(area["datasets"], 3),
            "component": [paper.component] * 3 + area["components"],
            "component2": area["components"],
            "metric": area["metrics"],
            "baseline": area["baselines"],
            "acr": [acr, acr, acr, "the proposed model", "our method"],
            "phenomenon": [paper.phenomenon] * 2 + area["phenomena"],
            "objects": area["objects"],
            "tab": ["1", "2", "3", "4", "5", "6"],
        }

    @classmethod
    def compile(cls, template: str) -> list[tuple[bool, str]]:
        """A template as (is a slot, text) parts, so filling it needs no parsing."""
        parts = cls._SLOT.split(template)
        return [(i % 2 == 1, p) for i, p in enumerate(parts) if p]

    def sentence(self, parts: list[tuple[bool, str]]) -> str:
        choice = self.rng.choice
        vocab = self.vocab
        return "".join(choice(vocab[p]) if is_slot else p for is_slot, p in parts)


_GENERIC_COMPILED = [Fill.compile(t) for t in GENERIC_SENTENCES]
_TYPE_COMPILED = {k: [Fill.compile(t) for t in v] for k, v in TYPE_SENTENCES.items()}


def _body_sentence(fill: Fill, stype: str) -> str:
    rng = fill.rng
    pool = _TYPE_COMPILED.get(stype) if rng.random() < 0.25 else None
    parts = rng.choice(pool or _GENERIC_COMPILED)
    s = fill.sentence(parts)
    if rng.random() < 0.3:
        # A compound sentence: a second generic clause joined to the first.
        second = rng.choice(_GENERIC_COMPILED)
        if not second[0][0] and not second[0][1].startswith(("Table", "Figure")):
            s = s[:-1] + rng.choice(CONNECTORS) + fill.sentence(second)
    if rng.random() < 0.22:
        first_literal = not parts[0][0]
        if first_literal and not s.startswith(("Table", "Figure")):
            return rng.choice(OPENERS) + s
    return cap(s)


def _paragraph(fill: Fill, stype: str, n: int) -> list[str]:
    return [_body_sentence(fill, stype) for _ in range(n)]


def render_sections(paper: Paper, citations: list[str]) -> list[dict]:
    """The sections of a paper with text, as release records (``header``, ``text``).

    ``citations`` holds one sentence per reference, in reference order; each goes into
    the section ``Paper.ctx_place`` names, and each planted fact into its own paragraph
    (after its subsection heading line, if it has one).
    """
    rng = random.Random(paper.text_seed)
    fill = Fill(paper, rng)
    by_sec_ctx: dict[int, list[str]] = {}
    for sec, ctx in zip(paper.ctx_place, citations):
        by_sec_ctx.setdefault(sec, []).append(ctx)
    by_sec_fact: dict[int, list[tuple[str, str | None]]] = {}
    for sec, sentence, sub in paper.facts:
        by_sec_fact.setdefault(sec, []).append((sentence, sub))
    out = []
    for si, (header, stype, target) in enumerate(paper.skeleton):
        paras: list[list[str]] = []
        size = 0
        while size < target:
            para = _paragraph(fill, stype, rng.randint(3, 8))
            size += sum(len(s) + 1 for s in para) + 1
            paras.append(para)
        for ctx in by_sec_ctx.get(si, ()):
            para = rng.choice(paras)
            para.insert(rng.randint(0, len(para)), ctx)
        blocks = [" ".join(para) for para in paras]
        for sentence, sub in by_sec_fact.get(si, ()):
            filler = _paragraph(fill, stype, rng.randint(1, 4))
            filler.insert(rng.randint(0, len(filler)), sentence)
            block = " ".join(filler)
            if sub:
                block = f"{sub}\n{block}"
            blocks.insert(rng.randint(1 if sub is None else 0, len(blocks)), block)
        out.append({"header": header, "text": "\n\n".join(blocks)})
    return out


# -- titles and abstracts ------------------------------------------------------------------


def make_title(paper: Paper, rng: random.Random, taken: set[str]) -> str:
    """A title made of the paper's own words, unique among ``taken`` (which it joins)."""
    area = AREAS[paper.area]
    for attempt in range(200):
        pattern = rng.choice(TITLE_PATTERNS)
        acr = paper.acr or acronym(rng)
        if "{Acr}" in pattern and paper.acr is None:
            continue
        words = {
            "Acr": acr,
            "Facet": paper.facets[0],
            "Task": paper.task,
            "Method": paper.methods[0],
            "Method2": paper.methods[1],
            "Component": paper.component,
            "Phenomenon": paper.phenomenon,
            "Objects": rng.choice(area["objects"]),
        }
        title = title_case(pattern.format(**words))
        if attempt > 100:
            title = f"{title} ({acronym(rng)})" if "{Acr}" not in pattern else title
        if title not in taken:
            taken.add(title)
            return title
    raise RuntimeError("could not make a unique title")


def make_abstract(paper: Paper, rng: random.Random) -> str:
    """An abstract naming the paper's task, both methods, both facets, both datasets and its component."""
    words = {
        "facet": paper.facets[0],
        "facet2": paper.facets[1],
        "task": paper.task,
        "method": paper.methods[0],
        "method2": paper.methods[1],
        "acr": paper.acr or "the proposed approach",
        "acr_intro": paper.acr or "a new approach",
        "component": paper.component,
        "phenomenon": paper.phenomenon,
        "dataset": paper.datasets[0],
        "dataset2": paper.datasets[1],
        "baseline": rng.choice(AREAS[paper.area]["baselines"]),
        "reason": rng.choice(REASONS),
    }
    parts = [
        rng.choice(ABSTRACT_OPEN),
        rng.choice(ABSTRACT_PROPOSE),
        rng.choice(ABSTRACT_MIDDLE),
        rng.choice(ABSTRACT_RESULTS),
        rng.choice(ABSTRACT_CLOSE),
        rng.choice(ABSTRACT_TAIL),
    ]
    return " ".join(cap(t.format(**words)) for t in parts if t)
