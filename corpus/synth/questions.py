"""Wording an item's question: the gold paper's topic in its abstract's words, then what to find.

Guarantees: a question names each gold paper (and at depth 2 the bridge) by a topic
phrase made of words from its abstract (the second facet and method where possible,
which are not in the title), never by its title; and it contains no option, since it
names a fact kind (``Kind.question``, ``Kind.short``), never a value.
"""

from __future__ import annotations

import random

from agenthop.corpus.synth.model import Kind, Paper
from agenthop.corpus.synth.text import cap


def topic(p: Paper, rng: random.Random) -> str:
    """Words from the abstract naming the paper's topic, never its title."""
    for _ in range(20):
        facet = rng.choice([p.facets[1], p.facets[1], p.facets[0]])
        method = rng.choice([p.methods[1], p.methods[1], p.methods[0]])
        phrase = rng.choice(["{f} {t} with {m}", "{t} in {f} settings using {m}", "{m} for {f} {t}"]).format(
            f=facet, t=p.task, m=method
        )
        title = p.title.lower()
        core = title.split(": ", 1)[-1]
        if core not in phrase.lower() and phrase.lower() not in title:
            return phrase
    return f"{p.task} using {p.methods[1]}"


def question(
    mt: bool,
    depth: int,
    kinds: list[Kind],
    quals: list[str | None],
    golds: list[Paper],
    bridge: Paper | None,
    rng: random.Random,
) -> str:
    """The question of an item: the chain in topic words, then the fact kind(s) to report."""
    if not mt:
        k, q, g = kinds[0], quals[0], golds[0]
        if depth == 1:
            lead = rng.choice(
                [
                    "The seed paper builds on prior work on {t}.",
                    "Among the works the seed paper cites is a study of {t}.",
                    "The seed paper relies on earlier research on {t}.",
                ]
            ).format(t=topic(g, rng))
            that = "that work"
        else:
            assert bridge is not None  # a depth-2 chain runs through a bridge
            lead = rng.choice(
                [
                    "The seed paper builds on a study of {b}, which in turn draws on earlier work on {t}.",
                    "A paper the seed cites, on {b}, relies on an earlier study of {t}.",
                ]
            ).format(b=topic(bridge, rng), t=topic(g, rng))
            that = "that earlier work"
        ask = k.question.format(that=that, qual=q)
        return f"{lead} {cap(ask)}"
    t1, t2 = topic(golds[0], rng), topic(golds[1], rng)
    if depth == 1:
        lead = f"The seed paper cites one work on {t1} and another on {t2}."
    else:
        assert bridge is not None  # a depth-2 chain runs through a bridge
        lead = f"The seed paper builds on a study of {topic(bridge, rng)}, which cites one work on {t1} and another on {t2}."
    s1 = kinds[0].short.format(qual=quals[0])
    s2 = kinds[1].short.format(qual=quals[1])
    return f"{lead} Which option correctly gives {s1} reported by the former and {s2} reported by the latter?"
