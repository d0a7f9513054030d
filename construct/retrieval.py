"""The retrieval solver: answer an item by word overlap near the seed, with no reasoning at all.

For each option, find the corpus sentences that contain it (every number it states and most of its content words,
the rule ``supported_by`` applies to evidence) in the papers near the seed: the seed, the papers it cites and the
papers those cite (the release's neighbourhood: each paper's first 30 references). The option's score is the
largest number of the question's content words such a sentence shares; the solver picks the option with the
highest score (ties shared, no sentence anywhere: an abstention). An item this solver answers is one where the
sentence holding the answer also holds the question's words: a lookup, which needs no reading.
"""

from __future__ import annotations

from functools import lru_cache

from agenthop.construct.textspans import result_numbers, sentences
from agenthop.corpus.release import MAX_REFS
from agenthop.textmatch import STOPWORDS, content_words, tokens

SUPPORT = 0.6  # share of an option's content words a sentence must hold to contain it (as for evidence)


@lru_cache(maxsize=4096)
def _paper_index(view, pid: str) -> tuple[tuple[frozenset, ...], dict[str, tuple[int, ...]]]:
    """The paper's sentences as token sets, and token -> the sentences holding it."""
    sets: list[frozenset[str]] = []
    where: dict[str, list[int]] = {}
    for sec in view.sections(pid):
        for sentence in sentences(sec.text):
            words = frozenset(tokens(sentence))
            for w in words:
                where.setdefault(w, []).append(len(sets))
            sets.append(words)
    return tuple(sets), {w: tuple(i) for w, i in where.items()}


def neighbourhood(view, seed: str) -> list[str]:
    """The seed, its first references and theirs, with text, in a fixed order."""
    out = dict.fromkeys([seed])
    for cited, _ in view.references(seed)[:MAX_REFS]:
        out.setdefault(cited)
        for cited2, _ in view.references(cited)[:MAX_REFS]:
            out.setdefault(cited2)
    return [p for p in out if p in view.papers and view.has_text(p)]


def _option_score(view, papers: list[str], option: str, question_words: frozenset) -> int | None:
    numbers = [n.rstrip("%") for n in result_numbers(option)]
    words = [w for w in dict.fromkeys(content_words(option)) if w not in STOPWORDS]
    if not numbers and not words:
        return None
    anchor = numbers[0] if numbers else max(words, key=len)  # every sentence containing the option holds it
    need = max(1, round(SUPPORT * len(words))) if words else 0
    best = None
    for pid in papers:
        sets, where = _paper_index(view, pid)
        for i in where.get(anchor, ()):
            s = sets[i]
            if all(n in s for n in numbers) and sum(w in s for w in words) >= need:
                shared = len(question_words & s)
                best = shared if best is None else max(best, shared)
    return best


def retrieval(item: dict, view) -> tuple[int, ...]:
    seed = item.get("seed") or item.get("seed_paper_id")
    if view is None or seed is None or seed not in view.papers:  # None is in no corpus
        return ()
    papers = neighbourhood(view, seed)
    question_words = frozenset(content_words(item["question"]))
    scores = [_option_score(view, papers, o, question_words) for o in item["options"]]
    found = [s for s in scores if s is not None]
    if not found:
        return ()
    top = max(found)
    return tuple(i for i, s in enumerate(scores) if s == top)
