"""Small deterministic text heuristics shared by the baseline agent and the read-first gate."""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    """a an the and or of to in on for with by from at as is are was were be been being this that these those it its
    which what who whom whose when where why how than then there their they them we our you your he she his her i
    not no nor but if so such into over under about after before between during through via per using used use
    does do did done can could would should may might must will shall has have had having also both each other
    any all some most more less very one two three paper papers work study studies author authors question
    option options answer according following following: based reported report reports propose proposed proposes
    cited cites cite seed described describe describes mentioned mention mentions state states stated""".split()
)

_TOKEN = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
LETTERS = "ABCD"


class TaskParseError(Exception):
    """The research_task prompt does not have the expected seed / question / options lines."""


def parse_task(text: str) -> dict:
    """Seed ID, question and the four options of a ``research_task`` prompt (agenthop.server.task)."""
    seed = re.search(r"^ID:\s*(\S+)", text, re.M)
    question = re.search(r"^Question:\s*(.+)$", text, re.M)
    options = dict(re.findall(r"^\(([ABCD])\)\s*(.+?)\s*$", text, re.M))
    if not seed or not question or len(options) != 4:
        raise TaskParseError("cannot find the seed ID, question and four options in the research_task prompt")
    return {"seed": seed.group(1), "question": question.group(1).strip(), "options": [options[c] for c in LETTERS]}


def tokens(text: str) -> list[str]:
    return _TOKEN.findall((text or "").lower())


def content_words(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in STOPWORDS and len(t) > 1]


def overlap(query_words, text: str) -> float:
    """Share of distinct query words present in text."""
    q = set(query_words)
    if not q:
        return 0.0
    t = set(tokens(text))
    return len(q & t) / len(q)


def normalise(text: str) -> str:
    return " ".join(tokens(text))


def contains_phrase(text_norm: str, phrase: str) -> bool:
    p = normalise(phrase)
    return bool(p) and f" {p} " in f" {text_norm} "


# Question cues (substring -> weight) for the kind of evidence asked for, and the section headers
# that tend to hold it, in order of preference.
CUES: dict[str, tuple[dict[str, float], tuple[str, ...]]] = {
    "RESULT": (
        {
            "results": 3,
            "full model": 2,
            "report": 1,
            "score": 2,
            "accuracy": 2,
            "f1": 2,
            "bleu": 2,
            "auc": 2,
            "ndcg": 2,
            "mrr": 2,
            "iou": 2,
            " ap ": 2,
            "return": 1,
            "success rate": 2,
            "outperform": 2,
            "achiev": 1,
            "perform": 1,
        },
        ("main result", "result", "evaluation", "ablation", "analysis", "comparison", "benchmark"),
    ),
    "METHOD": (
        {
            "training": 2,
            "train": 1,
            "hyperparameter": 3,
            "learning rate": 3,
            "warm-up": 3,
            "batch": 3,
            "dropout": 3,
            "hidden size": 3,
            "dimension": 2,
            "temperature": 3,
            "epoch": 3,
            "hardware": 2,
            "discount": 3,
            "buffer": 3,
            "negatives": 3,
            "fan-out": 3,
            "resolution": 3,
            "crop": 3,
            "architecture": 2,
            "use": 0.5,
            "method": 1,
        },
        (
            "experimental setup",
            "implementation",
            "training",
            "hyperparameter",
            "configuration",
            "setting",
            "setup",
            "experiments",
            "method",
            "approach",
            "model",
        ),
    ),
    "GROUND": (
        {
            "data": 2,
            "dataset": 3,
            "collection": 3,
            "corpus": 3,
            "annotat": 3,
            "split": 3,
            "vocabulary": 3,
            "graph of": 2,
            "built": 1,
            "resource": 2,
        },
        ("dataset", "data", "benchmark construction", "collection", "annotation", "experimental setup", "setup"),
    ),
    "MOTIVE": (
        {"motivat": 4, "shortcoming": 3, "problem": 2, "limitation": 2, "challenge": 2, "why": 2, "goal": 1},
        ("introduction", "discussion", "limitation", "motivation", "related work", "background", "prior work"),
    ),
}
POOR_HEADERS = ("reference", "acknowledg", "conclusion", "proof", "theoretical", "qualitative", "case stud", "abstract")


def reasoning_cue(question: str, extra: str = "") -> str:
    """The evidence kind a question most likely asks for (RESULT, METHOD, MOTIVE, GROUND)."""
    q = f" {(question or '').lower()} {(extra or '').lower()} "
    scores = {kind: sum(w for cue, w in cues.items() if cue in q) for kind, (cues, _) in CUES.items()}
    best = max(scores, key=lambda k: (scores[k], k == "RESULT"))
    return best if scores[best] > 0 else "RESULT"


def header_score(header: str, question: str, cue: str | None = None) -> float:
    """How likely a section with this header holds the answer to the question."""
    h = (header or "").lower()
    cue = cue or reasoning_cue(question)
    prefs = CUES[cue][1]
    score = 0.0
    for rank, key in enumerate(prefs):
        if key in h:
            score = max(score, 3.0 - 2.0 * rank / len(prefs))
    if any(k in h for k in POOR_HEADERS):
        score -= 2.0
    score += 1.0 * overlap(content_words(question), header)
    return score
