"""The records the generator's pieces pass between them: fact kinds, papers, items, and the draft holding both.

A ``Draft`` is the benchmark while it is being built. Its pieces fill it in a fixed order
(``papers.py`` the papers, ``graph.py`` their references, ``items.py`` the items and the
item-specific citation sentences, ``graph.place_citations`` where each reference is
cited) and ``write.py`` only reads it. All pieces draw from the one stream
``Draft.rng = random.Random(seed)`` in that order, and text is drawn later from per-paper
streams seeded at planning time: that is what makes a release byte-identical for a seed,
so a new draw anywhere changes every release after it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple


@dataclass(frozen=True, eq=False)
class Kind:
    """One kind of fact: how to make a value, state it, ask about it and label it."""

    name: str
    rtype: str  # the reasoning type (METHOD, RESULT, GROUND, MOTIVE)
    make: Callable[[random.Random, dict, str | None], str]  # (rng, area words, dataset) -> fact
    statements: list[str]  # sentences that state the fact: "{f}" is the fact
    question: str  # "{that}" = the referring phrase; "{qual}" = the dataset
    short: str  # the noun phrase a multi-target question uses
    subheads: list[str]  # subsection headings that may precede the fact
    what: str  # the recall label's "what_it_contains"
    areas: tuple[str, ...] | None = None  # the areas whose papers can state it (None: all)
    qualified: bool = False  # the fact names one of the gold paper's datasets


class Paper:
    """One paper of the corpus: metadata, references, and what its text must contain.

    Papers refer to each other by ``idx``, their position in ``Draft.papers``. Section
    text is not stored: it is rendered from ``text_seed`` when the release is written.
    """

    __slots__ = (
        "idx",
        "pid",
        "arxiv",
        "has_text",
        "area",
        "task",
        "methods",
        "facets",
        "datasets",
        "acr",
        "title",
        "abstract",
        "authors",
        "year",
        "venue",
        "order",
        "refs",
        "text_seed",
        "skeleton",
        "facts",
        "blank_arxiv",
        "ctx_place",
        "subheads",
        "component",
        "phenomenon",
    )
    # Declared here, without values (a slot cannot have a class-level default), so that the checker knows each
    # slot's type; papers.make_papers sets every one of them before any other piece reads the paper.
    idx: int
    pid: str  # the paper's id: a sha1 hex digest
    arxiv: str | None  # None for metadata-only papers
    has_text: bool
    area: str  # a key of vocabulary.AREAS
    task: str
    methods: list[str]
    facets: list[str]
    datasets: list[str]
    acr: str | None  # the method's acronym, if it has one
    title: str
    abstract: str  # "" when a metadata-only paper lacks one
    authors: list[str]
    year: int | None  # None when a metadata-only paper lacks one
    venue: str
    order: int  # rank in a total order consistent with years: papers cite only lower orders
    refs: list[int]
    text_seed: int
    skeleton: list[tuple[str, str, int]]
    facts: list[tuple[int, str, str | None]]
    blank_arxiv: bool  # a metadata-only paper whose record carries an empty arXiv id
    ctx_place: list[int]
    subheads: list[str]
    component: str
    phenomenon: str

    def __init__(self, idx: int):
        self.idx = idx
        self.refs = []  # cited papers' idx, in reference-list order
        self.facts = []  # (section index, sentence, subsection header)
        self.skeleton = []  # (header, section type, target length)
        self.subheads = []  # subsection headings planted in its text
        self.ctx_place = []  # per reference: the index of the section that cites it


class DirectFact(NamedTuple):
    """One correct part of an item's answer, as planted in a gold paper (its ``direct`` recall label)."""

    paper: Paper  # the gold paper
    section: int  # index into its skeleton
    subhead: str | None  # the subsection heading line before the fact, if any
    kind: Kind
    qual: str | None  # the dataset the fact names, for RESULT kinds
    fact: str


@dataclass
class Item:
    """One planned benchmark item; papers are referred to by ``Paper.idx``."""

    id: str
    mt: bool  # multi-target
    depth: int
    rtype: str  # reasoning type
    skill: str
    tier: str
    question: str
    options: list[str]
    correct_index: int
    distractor_types: list[str]  # per option: "correct" or its distractor type
    seed: int
    golds: list[int]
    bridge: int | None
    direct: list[DirectFact]
    label_seed: int  # seeds the optional supporting labels

    @property
    def cell(self) -> str:
        return f"{'MT' if self.mt else 'ST'}-d{self.depth}"


@dataclass
class Draft:
    """The benchmark being built, shared by the pieces that build and write it."""

    seed: int
    rng: random.Random
    papers: list[Paper] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    # (citing idx, cited idx) -> the chain's citation sentence, "{i}" standing for the reference number.
    item_contexts: dict[tuple[int, int], str] = field(default_factory=dict)
    forced_edits: int = 0  # references added or replaced because no natural chain was found
