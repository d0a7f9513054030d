"""The no-model helpers of the pipeline's later stages: finding clauses and the filter.

Questions and typed options come from ``offline_items``. Here: the finding
clauses of a paper (a sentence's numeric span), which the clause distractors of
a model-written question draw from (``seed_only``, ``wrong_paper``,
``same_paper``), and the filter, which answers like the runner's baseline agent:
the option stated in the sentence that best matches the question.
"""

from __future__ import annotations

from functools import lru_cache

from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import numeric_span, sentences
from agenthop.textmatch import content_words, normalise, tokens


@lru_cache(maxsize=4096)
def _facts(view: CorpusView, pid: str) -> tuple[tuple[str, str, str], ...]:
    found = []
    for sec in view.sections(pid):
        for sentence in sentences(sec.text):
            span = numeric_span(sentence) if len(sentence.split()) >= 6 else None  # not a heading or a table cell
            if span:
                found.append((sec.header, sentence, span))
    return tuple(found)


def fact_sentences(view: CorpusView, pid: str, salt: str) -> list[tuple[str, str, str]]:
    """(section header, sentence, answer clause) for each finding sentence of a paper, in a salted order."""
    return sorted(_facts(view, pid), key=lambda f: digest(f"{salt}:{f[1]}"))


@lru_cache(maxsize=4096)
def _sentence_index(view: CorpusView, pid: str) -> tuple[tuple[frozenset, str], ...]:
    """Each sentence of a paper as (its token set, its normalised text)."""
    return tuple((frozenset(tokens(s)), normalise(s)) for sec in view.sections(pid) for s in sentences(sec.text))


def choose(view: CorpusView, question: str, options: list[str], pids: list[str]) -> int | None:
    """The option stated in the sentence (of these papers) that best matches the question, or None when no option is stated."""
    qwords = set(content_words(question))
    sents = [
        (len(qwords & toks) / max(len(qwords), 1), norm) for pid in pids for toks, norm in _sentence_index(view, pid)
    ]
    best, best_score = None, 0.0
    for i, option in enumerate(options):
        parts = [f" {normalise(p)} " for p in option.split("; ") if normalise(p)]
        scores = []
        for part in parts:
            hits = [score for score, norm in sents if part in f" {norm} "]
            scores.append(max(hits) if hits else None)
        found = [s for s in scores if s is not None]
        if not scores or len(found) < len(scores):  # a part no sentence holds rules the option out
            continue
        score = sum(found) / len(found)
        if best is None or score > best_score:
            best, best_score = i, score
    return best
