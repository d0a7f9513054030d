"""The deterministic generator and filter: the whole pipeline with no model and no API key.

Questions come from a target sentence that states a finding (a number that is
not a year): the question quotes the seed's citing sentence and the target's
sentence with the finding blanked out, and the answer is the blanked clause.
Wrong options are clauses of the same shape from the seed (``seed_only``), from a
sibling reference (``wrong_paper``), the gold clause with its numbers changed
(``no_context``: a plausible value no paper states), and optionally another
clause of the target (``same_paper``). The filter answers like the offline
baseline agent: the option stated in the sentence that best matches the question.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import names_target, numeric_span, sentences, strip_citation_marks
from agenthop.runner.textmatch import content_words, normalise, tokens

_HEADER_KIND = (("RESULT", re.compile(r"result|experiment|evaluat|analys|finding|ablation|discussion", re.I)),
                ("METHOD", re.compile(r"method|model|approach|architecture|implementation|setup|training|algorithm|procedure|data", re.I)),
                ("MOTIVE", re.compile(r"introduction|motivation|background|related", re.I)))


def reasoning_type(header: str) -> str:
    return next((kind for kind, pattern in _HEADER_KIND if pattern.search(header)), "GROUND")


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


def cloze(sentence: str, span: str) -> str:
    clean = strip_citation_marks(sentence)
    return clean.replace(span, "___", 1) if span in clean else None


def _quote(context: str | None) -> str:
    return strip_citation_marks(context or "").rstrip(".")


def question_for(view: CorpusView, chain: dict, facts: list[tuple[str, str, str]]) -> str:
    via = chain["bridge"] or chain["seed"]
    contexts = [_quote(view.context(via, t)) for t in chain["targets"]]
    blanks = [cloze(sentence, span) for _, sentence, span in facts]
    if chain["bridge"]:
        lead = (f'The seed paper cites a work ("{_quote(view.context(chain["seed"], chain["bridge"]))}"), which in turn cites '
                + ("earlier work" if len(facts) == 1 else "two earlier works") + " (" + "; ".join(f'"{c}"' for c in contexts) + ").")
    elif len(facts) == 1:
        lead = f'The seed paper cites earlier work in this sentence: "{contexts[0]}".'
    else:
        lead = "The seed paper cites two works: " + " and ".join(f'"{c}"' for c in contexts) + "."
    if len(facts) == 1:
        return f'{lead} In that {"earlier " if chain["bridge"] else ""}work, what completes this statement: "{blanks[0]}"?'
    return f'{lead} What completes these two statements, one from each work, in this order: "{blanks[0]}" and "{blanks[1]}"?'


def generate(view: CorpusView, chain: dict, seed: int) -> dict:
    """Question, answer, evidence, reasoning type and labels for a chain, or ``{"drop": ...}``."""
    per_target = [fact_sentences(view, t, f"{seed}:{chain['id']}") for t in chain["targets"]]
    if not all(per_target):
        return {"drop": {"reason": "no_fact_sentence", "detail": "a target has no sentence stating a finding"}}
    named = None
    # Try the targets' fact sentences in step (first with first, ...); the first question naming no target wins.
    for facts in zip(*per_target):
        blanks = [cloze(sentence, span) for _, sentence, span in facts]
        if any(b is None or len(content_words(b)) < 4 for b in blanks):
            continue  # the blanked sentence must still say what it is about
        question = question_for(view, chain, list(facts))
        named = next((f"{why} of {t}" for t in chain["targets"] if (why := names_target(question, view.papers[t].title))), None)
        if named:
            continue
        return {"question": question, "answer": "; ".join(span for _, _, span in facts),
                "evidence": [sentence for _, sentence, _ in facts], "reasoning_type": reasoning_type(facts[0][0]),
                "labels": [{"paper_id": t, "section": header, "relevance": "direct"} for t, (header, _, _) in zip(chain["targets"], facts)]}
    if named:
        return {"drop": {"reason": "names_target", "detail": f"every question written names the target: {named}"}}
    return {"drop": {"reason": "no_fact_sentence", "detail": "no finding sentence could be turned into a question"}}


def choose(view: CorpusView, question: str, options: list[str], pids: list[str]) -> int | None:
    """The option stated in the sentence (of these papers) that best matches the question, or None when no option is stated."""
    qwords = set(content_words(question))
    sents = [(len(qwords & toks) / max(len(qwords), 1), norm) for pid in pids for toks, norm in _sentence_index(view, pid)]
    best, best_score = None, 0.0
    for i, option in enumerate(options):
        parts = [f" {normalise(p)} " for p in option.split("; ") if normalise(p)]
        scores = []
        for part in parts:
            hits = [score for score, norm in sents if part in f" {norm} "]
            scores.append(max(hits) if hits else None)
        if not scores or any(s is None for s in scores):
            continue
        score = sum(scores) / len(scores)
        if best is None or score > best_score:
            best, best_score = i, score
    return best
