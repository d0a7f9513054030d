"""The artifact check's solvers: answer an item without its evidence, and score how well each does over a release.

This is the partial-input control of the NLI and reading-comprehension literature
(hypothesis-only: Gururangan et al. 2018, Poliak et al. 2018; question-only and
passage-only: Kaushik and Lipton 2018; choices-only: Balepur et al. 2024), run on
every release. A solver sees part of an item and returns the options it would
choose among: one index is a decision, several are a tie it breaks at random,
none is an abstention. Scoring gives each item the expected credit of a uniform
pick within that set (an abstention earns chance, 1 / number of options), so a
solver that knows nothing scores chance and every solver is compared with the same
25%; ``decided`` says how often it committed to one option.

Four families: option-only (sees the options), question-only (the question and the
options), seed-only (the seed paper's text, the question and the options: the
offline filter limited to the seed, the ensemble's shortcut check), and corpus
(the retrieval solver, ``construct/retrieval.py``: word overlap of the sentences near
the seed that contain each option with the question; no reasoning). The corpus
solver is held to its own limit (``RETRIEVAL_LIMIT``), not to chance + 10: it reads
the papers, so beating chance is expected; beating the limit says the items are
lookups. An item is any
dict with ``question``, ``options`` and ``correct_index`` (a candidate or a release
record); the seed solver also needs a corpus view and ``seed`` or ``seed_paper_id``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from agenthop.construct import offline_filter
from agenthop.construct.retrieval import retrieval
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import result_numbers
from agenthop.scorer.stats import wilson
from agenthop.textmatch import STOPWORDS, content_words, tokens

Picks = tuple[int, ...]
CHANCE_MARGIN = 0.10  # SPEC 8: chance is 25%; a release where a solver exceeds 35% is not a benchmark
RETRIEVAL_LIMIT = 0.45  # a release the no-reasoning retrieval solver answers more often than this is lookups
MIN_ITEMS = 20  # below this, a solver's interval spans most of [0, 1]: figures are shown, not acted on
TWIN_JACCARD = 0.75  # two options whose words (numbers masked) overlap this much are a near-identical pair
_NUM = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_NUMBER_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}
_COUNT = re.compile(r"\b(\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\s+([a-z][a-z\-]{2,})", re.I)


# -- features of one option ---------------------------------------------------------------------------------------

_NAME_NUMBER = re.compile(r"\b[A-Za-z]+-\d[\w.]*")  # CIFAR-100, GPT-2, ResNet-50: part of a name, not a value


def finding_numbers(option: str) -> list[str]:
    """The option's numbers that state a value: not years, citation marks, or the number in a name like 'CIFAR-100'."""
    return result_numbers(_NAME_NUMBER.sub("NAME", option))


def numbers(option: str) -> list[float]:
    """The option's finding numbers, as floats."""
    out = []
    for raw in finding_numbers(option):
        try:
            out.append(float(raw.rstrip("%").replace(",", "")))
        except ValueError:
            continue
    return out


def masked_words(option: str) -> list[str]:
    """The option's tokens with every number replaced by '#': what stays when only the numbers change."""
    return ["#" if _NUM.fullmatch(t) else t for t in tokens(option)]


def kind(option: str) -> str:
    """The option's type by form: percent, number, number_phrase (a number in words), name, phrase."""
    words = option.split()
    nums = finding_numbers(option)
    if nums and len(words) <= 3:
        return "percent" if "%" in option else "number"
    if nums:
        return "number_phrase"
    if len(words) <= 4 and any(w[:1].isupper() or any(c.isdigit() for c in w) for w in words):
        return "name"
    return "phrase"


def magnitude(option: str) -> int | None:
    """The order of magnitude of the option's first value (-1 below 1, then 0, 1, 2, 3, 4 for 1-10 ... 10,000 and up)."""
    found = numbers(option)
    if not found:
        return None
    value = abs(found[0])
    return -1 if value < 1 else min(int(math.log10(value)), 4)


def form(option: str) -> dict[str, object]:
    """Categorical form features: what a reader sees before reading the words."""
    decimals = [len(d) for d in re.findall(r"\d\.(\d+)", option)]
    words = len(option.split())
    return {
        "kind": kind(option),
        "percent": "%" in option,
        "magnitude": magnitude(option),
        "n_numbers": min(len(finding_numbers(option)), 2),
        "decimals": max(decimals, default=0),
        "words": 0 if words <= 2 else 1 if words <= 5 else 2 if words <= 12 else 3,
        "capital": option[:1].isupper(),
        "bracket": bool(re.search(r"[()\[\]]", option)),
        "joined": ";" in option,
        "end_punct": option.rstrip()[-1:] in ".!?:" if option.strip() else False,
    }


def _trigrams(text: str) -> set[str]:
    s = f"  {' '.join(tokens(text))} "
    return {s[i : i + 3] for i in range(len(s) - 2)}


def similarity(a: str, b: str) -> float:
    """Character-trigram Jaccard: graded for words and numbers alike ('91.2%' is nearer '91.5%' than '40.1%')."""
    ta, tb = _trigrams(a), _trigrams(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def twin_pairs(options: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs of options that say the same tokens with only numbers changed ('For any k ≥ 2' and 'For any k ≥ 4'), or
    nearly the same words: the gold and its copy. Four values of one form are all pairs of one another."""
    pairs = []
    for i, j in combinations(range(len(options)), 2):
        if options[i].strip() == options[j].strip():
            continue
        a, b = masked_words(options[i]), masked_words(options[j])
        if a == b and a:
            pairs.append((i, j))
            continue
        shared_words = {w for w in set(a) & set(b) if w != "#" and w not in STOPWORDS and len(w) > 1}
        if shared_words and len(set(a) & set(b)) / len(set(a) | set(b)) >= TWIN_JACCARD:
            pairs.append((i, j))
    return pairs


def refuted(question: str, option: str) -> str | None:
    """Why the question's own text (or arithmetic) rules the option out, or None.

    A percentage above 100; or a count the question fixes ('three datasets') that the option states otherwise."""
    for m in _PERCENT.finditer(option):
        if float(m.group(1)) > 100:
            return f"a percentage above 100 ({m.group(0)})"
    fixed: dict[str, set[int | str]] = {}  # noun -> the counts the question gives it (a number word as its value)
    for n, noun in _COUNT.findall(question):
        fixed.setdefault(noun.lower().rstrip("s"), set()).add(_NUMBER_WORDS.get(n.lower(), n))
    for n, noun in _COUNT.findall(option):
        stated = fixed.get(noun.lower().rstrip("s"))
        value = _NUMBER_WORDS.get(n.lower(), n)
        if stated and str(value) not in {str(v) for v in stated}:
            return f"the question fixes {sorted(map(str, stated))[0]} {noun}, the option says {n}"
    return None


# -- the solvers ---------------------------------------------------------------------------------------------------


def _extreme(scores: Sequence[float | None], largest: bool) -> Picks:
    """The options with the extreme score (ties share it); nothing when fewer than two options have a score."""
    known = [(s, i) for i, s in enumerate(scores) if s is not None]
    if len(known) < 2 or len({s for s, _ in known}) < 2:
        return ()
    best = max(s for s, _ in known) if largest else min(s for s, _ in known)
    return tuple(i for s, i in known if s == best)


def longest(item: dict) -> Picks:
    return _extreme([len(o) for o in item["options"]], True)


def shortest(item: dict) -> Picks:
    return _extreme([len(o) for o in item["options"]], False)


def _mean_similarity(options: Sequence[str]) -> list[float]:
    return [
        sum(similarity(o, p) for j, p in enumerate(options) if j != i) / (len(options) - 1)
        for i, o in enumerate(options)
    ]


def most_similar(item: dict) -> Picks:
    """The option most like the others (Balepur et al. 2024's choices-only cue: the gold as the options' centre)."""
    return _extreme([round(s, 6) for s in _mean_similarity(item["options"])], True)


def least_similar(item: dict) -> Picks:
    return _extreme([round(s, 6) for s in _mean_similarity(item["options"])], False)


def odd_form(item: dict) -> Picks:
    """The odd one out by form: each feature on which one option differs from the other three votes for it."""
    feats = [form(o) for o in item["options"]]
    votes: Counter[int] = Counter()
    for key in feats[0]:
        values = Counter(f[key] for f in feats)
        if len(values) == 2 and min(values.values()) == 1 and len(feats) >= 3:
            lone = next(v for v, c in values.items() if c == 1)
            votes.update(i for i, f in enumerate(feats) if f[key] == lone)
    if not votes:
        return ()
    top = max(votes.values())
    return tuple(sorted(i for i, v in votes.items() if v == top))


def _first_number(option: str) -> float | None:
    found = numbers(option)
    return found[0] if found else None


def _middle(scores: Sequence[float | None]) -> Picks:
    """The options strictly between the extremes: the rule "neither the largest nor the smallest"."""
    known = [s for s in scores if s is not None]
    if len(known) < 3 or len(set(known)) < 3:
        return ()
    lo, hi = min(known), max(known)
    return tuple(i for i, s in enumerate(scores) if s is not None and lo < s < hi)


def middle_value(item: dict) -> Picks:
    return _middle([_first_number(o) for o in item["options"]])


def middle_length(item: dict) -> Picks:
    return _middle([len(o) for o in item["options"]])


def roundness(option: str) -> int | None:
    """How round the option's first value looks as written: two points per trailing zero of its digits, one more when
    the last other digit is a 5 ('25' 1, '100' 4, '91.5%' 1, '26' 0). None when it states no number."""
    found = finding_numbers(option)
    if not found:
        return None
    digits = re.sub(r"\D", "", found[0]).lstrip("0") or "0"
    zeros = len(digits) - len(digits.rstrip("0"))
    return 2 * zeros + (digits.rstrip("0")[-1:] == "5")


def roundest(item: dict) -> Picks:
    """The option whose value is the roundest ('25' beside 26, 27 and 28: the twenty-eighth read's cue), ties shared."""
    return _extreme([roundness(o) for o in item["options"]], True)


def largest(item: dict) -> Picks:
    return _extreme([_first_number(o) for o in item["options"]], True)


def smallest(item: dict) -> Picks:
    return _extreme([_first_number(o) for o in item["options"]], False)


def twin(item: dict) -> Picks:
    """Any member of the near-identical pair (when there is exactly one such pair)."""
    pairs = twin_pairs(item["options"])
    return pairs[0] if len(pairs) == 1 else ()


def _twin_by_numbers(item: dict, smaller: bool) -> Picks:
    pair = twin(item)
    if not pair:
        return ()
    sums = [sum(numbers(item["options"][i])) for i in pair]
    if sums[0] == sums[1]:
        return pair
    pick = pair[sums.index(min(sums) if smaller else max(sums))]
    return (pick,)


def twin_smaller(item: dict) -> Picks:
    """Within the near-identical pair, the one with the smaller numbers (97% on the first explore release)."""
    return _twin_by_numbers(item, True)


def twin_larger(item: dict) -> Picks:
    return _twin_by_numbers(item, False)


def question_overlap(item: dict) -> Picks:
    """The option sharing the most content words with the question (Kaushik and Lipton 2018's question-only cue)."""
    qwords = set(content_words(item["question"]))
    scores = [len(qwords & set(content_words(o))) for o in item["options"]]
    return _extreme(scores, True) if max(scores) > 0 else ()


def contradiction(item: dict) -> Picks:
    """The options the question's own text does not rule out, when it rules out some but not all."""
    alive = tuple(i for i, o in enumerate(item["options"]) if refuted(item["question"], o) is None)
    return alive if 0 < len(alive) < len(item["options"]) else ()


def seed_only(item: dict, view) -> Picks:
    """The offline filter's answer from the seed paper alone: the ensemble's shortcut check, for every filter setting."""
    seed = item.get("seed") or item.get("seed_paper_id")
    if view is None or seed is None or seed not in view.papers:  # None is in no corpus
        return ()
    pick = offline_filter.choose(view, item["question"], item["options"], [seed])
    return () if pick is None else (pick,)


def seed_numbers(view, pid: str) -> frozenset[str]:
    """Every number the paper's text states, as written ('91.2', '300'): what a reader of it can rule out."""
    return frozenset(n for sec in view.sections(pid) for n in re.findall(r"\d+(?:\.\d+)?", sec.text))


def seed_exclusion(item: dict, view) -> Picks:
    """The options holding no number the seed states, when that rules out some but not all: the gold is never a value
    the seed states (it would give the gold away), so a distractor that is one is excludable by any agent."""
    seed = item.get("seed") or item.get("seed_paper_id")
    if view is None or seed is None or seed not in view.papers:  # None is in no corpus
        return ()
    stated = seed_numbers(view, seed)
    alive = tuple(
        i for i, o in enumerate(item["options"]) if not any(p.strip().rstrip("%") in stated for p in o.split(";"))
    )
    return alive if 0 < len(alive) < len(item["options"]) else ()


@dataclass(frozen=True)
class Solver:
    name: str
    family: str  # option | question | seed | corpus
    run: Callable
    what: str


SOLVERS = (
    Solver("longest", "option", longest, "the longest option"),
    Solver("shortest", "option", shortest, "the shortest option"),
    Solver("most_similar", "option", most_similar, "the option most like the others (character trigrams)"),
    Solver("least_similar", "option", least_similar, "the option least like the others"),
    Solver("odd_form", "option", odd_form, "the odd one out by form (type, digits, decimals, length, punctuation)"),
    Solver("largest", "option", largest, "the option with the largest number"),
    Solver("smallest", "option", smallest, "the option with the smallest number"),
    Solver("middle_value", "option", middle_value, "any option whose number is neither the largest nor the smallest"),
    Solver("middle_length", "option", middle_length, "any option neither the longest nor the shortest"),
    Solver("roundest", "option", roundest, "the option whose value is the roundest (trailing zeros, a final 5)"),
    Solver("twin", "option", twin, "either member of the one near-identical pair"),
    Solver("twin_smaller", "option", twin_smaller, "the near-identical pair's member with the smaller numbers"),
    Solver("twin_larger", "option", twin_larger, "the near-identical pair's member with the larger numbers"),
    Solver("question_overlap", "question", question_overlap, "the option sharing most words with the question"),
    Solver("contradiction", "question", contradiction, "any option the question's text does not rule out"),
    Solver("seed_only", "seed", seed_only, "the offline filter reading the seed paper alone"),
    Solver(
        "seed_exclusion", "seed", seed_exclusion, "any option holding no number the seed states (rule out the others)"
    ),
    Solver(
        "retrieval",
        "corpus",
        retrieval,
        "the option whose sentences near the seed share most words with the question (no reasoning)",
    ),
)
FORM_SOLVERS = tuple(s.name for s in SOLVERS if s.family in ("option", "question"))
CORPUS_SOLVERS = tuple(s.name for s in SOLVERS if s.family == "corpus")
NAMES = tuple(s.name for s in SOLVERS) + ("form_vote", "option_classifier")


def form_vote(picks: dict[str, Picks]) -> Picks:
    """The option most of the form solvers (option- and question-only) decide on, each decided solver one vote."""
    votes = Counter(p[0] for name, p in picks.items() if name in FORM_SOLVERS and len(p) == 1)
    if not votes:
        return ()
    top = max(votes.values())
    return tuple(sorted(i for i, v in votes.items() if v == top)) if top >= 2 else ()


def solve(item: dict, view=None) -> dict[str, list[int]]:
    """Every solver's picks for one item (the seed solver only with a corpus view), plus the form vote."""
    picks: dict[str, Picks] = {}
    for s in SOLVERS:
        if s.family in ("seed", "corpus"):
            if view is not None:
                picks[s.name] = s.run(item, view)
        else:
            picks[s.name] = s.run(item)
    picks["form_vote"] = form_vote(picks)
    return {k: list(v) for k, v in picks.items()}


def credit(picks: Sequence[int], correct: int, n_options: int) -> float:
    """Expected accuracy of a uniform pick within ``picks``; an abstention (or all options) earns chance."""
    if not picks or len(picks) >= n_options:
        return 1 / n_options
    return 1 / len(picks) if correct in picks else 0.0


# -- the option-only classifier ------------------------------------------------------------------------------------


def option_features(options: Sequence[str]) -> np.ndarray:
    """One row per option, each feature relative to the item's other options (ranks, shares, flags)."""
    n = len(options)
    lengths = np.array([len(o) for o in options], float)
    words = np.array([len(o.split()) for o in options], float)
    firsts = [_first_number(o) for o in options]
    sims = np.array(_mean_similarity(options))
    feats = [form(o) for o in options]
    pairs = twin_pairs(options)
    in_twin = np.zeros(n)
    twin_low = np.zeros(n)
    for i, j in pairs:
        in_twin[[i, j]] = 1
        si, sj = sum(numbers(options[i])), sum(numbers(options[j]))
        if si != sj:
            twin_low[i if si < sj else j] = 1

    def rank(values) -> np.ndarray:  # 0 = smallest, 1 = largest, 0.5 when unknown or all equal
        vals = [v for v in values if v is not None]
        if len(set(vals)) < 2:
            return np.full(n, 0.5)
        lo, hi = min(vals), max(vals)
        return np.array([0.5 if v is None else (v - lo) / (hi - lo) for v in values])

    odd = np.zeros(n)
    for key in feats[0]:
        values = Counter(f[key] for f in feats)
        if len(values) == 2 and min(values.values()) == 1:
            lone = next(v for v, c in values.items() if c == 1)
            odd += np.array([f[key] == lone for f in feats], float)
    has_number = np.array([v is not None for v in firsts], float)
    rounds = rank([roundness(o) for o in options])
    return np.column_stack(
        [
            rank(list(lengths)),
            rank(list(words)),
            rank(firsts),
            has_number,
            rank(list(sims)),
            odd,
            in_twin,
            twin_low,
            lengths / max(lengths.max(), 1),
            rounds,
        ]
    )


def _fit_softmax(
    X: np.ndarray, mask: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 300, lr: float = 0.5
) -> np.ndarray:
    """Conditional logit (a softmax over each item's options, one weight vector) by plain gradient descent, no randomness.
    ``X`` is items x options x features, ``mask`` marks the options an item has."""
    w = np.zeros(X.shape[2])
    onehot = np.zeros(mask.shape)
    onehot[np.arange(len(y)), y] = 1
    for _ in range(steps):
        z = np.where(mask, X @ w, -np.inf)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grad = np.einsum("io,iof->f", p - onehot, X) / len(y) + l2 * w / len(y)
        w -= lr * grad
    return w


def classifier_picks(items: Sequence[dict], folds: int = 5) -> list[list[int]]:
    """Cross-validated picks of an option-only classifier trained on the release itself (item-validity.md):
    each item is answered by a model fitted on the other folds (folds by a digest of its question)."""
    if len(items) < 2 * folds:
        return [[] for _ in items]
    width = max(len(it["options"]) for it in items)
    rows = [option_features(it["options"]) for it in items]
    X = np.zeros((len(items), width, rows[0].shape[1]))
    mask = np.zeros((len(items), width), bool)
    for i, r in enumerate(rows):
        X[i, : len(r)], mask[i, : len(r)] = r, True
    y = np.array([it["correct_index"] for it in items])
    fold = np.array([int(digest(it["question"])[:8], 16) % folds for it in items])
    out: list[list[int]] = [[] for _ in items]
    for f in range(folds):
        w = _fit_softmax(X[fold != f], mask[fold != f], y[fold != f])
        for i in np.flatnonzero(fold == f).tolist():
            z = np.where(mask[i], X[i] @ w, -np.inf)
            out[i] = [int(j) for j in np.flatnonzero(np.isclose(z, z.max()))]
    return out


# -- the release-level check ---------------------------------------------------------------------------------------


def score(items: Sequence[dict], picks: Sequence[dict[str, Sequence[int]]], name: str) -> dict | None:
    """One solver's expected accuracy over the items, its Wilson 95% interval, and how often it decided."""
    rows = [(p[name], it["correct_index"], len(it["options"])) for it, p in zip(items, picks) if name in p]
    if not rows:
        return None
    total = sum(credit(p, c, n) for p, c, n in rows)
    ci = wilson(total, len(rows))
    assert ci is not None, "an interval over at least one row"
    lo, hi = ci
    decided = [(p, c) for p, c, _ in rows if len(p) == 1]
    return {
        "n": len(rows),
        "accuracy": round(total / len(rows), 4),
        "ci95": [round(lo, 4), round(hi, 4)],
        "decided": len(decided),
        "decided_right": sum(p[0] == c for p, c in decided),
        "abstained": sum(not p or len(p) >= n for p, _, n in rows),
    }


def summarise(items: Sequence[dict], picks: Sequence[dict[str, Sequence[int]]] | None = None, view=None) -> dict:
    """The artifact check of a set of items: each solver's accuracy with its interval, chance, and which solvers exceed the limit.

    ``picks`` defaults to each item's ``artifacts.picks`` (as the stage records them), else they are computed here."""
    given: Sequence[Mapping[str, Sequence[int]]] = (
        picks
        if picks is not None
        else [it["artifacts"]["picks"] if "artifacts" in it else solve(it, view) for it in items]
    )
    every: list[dict[str, Sequence[int]]] = [dict(p) for p in given]  # copies: the classifier's picks join them
    for p, c in zip(every, classifier_picks(items)):
        p["option_classifier"] = c
    chance = sum(1 / len(it["options"]) for it in items) / len(items) if items else 0.25
    solvers = {name: s for name in NAMES if (s := score(items, every, name)) is not None}
    over = sorted(
        name for name, s in solvers.items() if s["accuracy"] > chance + CHANCE_MARGIN and name not in CORPUS_SOLVERS
    )
    # The retrieval solver reads the papers: its limit is its own, and a release over it is lookups, not form leaks.
    lookups = sorted(name for name in CORPUS_SOLVERS if name in solvers and solvers[name]["accuracy"] > RETRIEVAL_LIMIT)
    # The seed solver's floor is by design: with models, SPEC's seed_only distractor is what the seed states, so the seed
    # alone points at a wrong option; whether ruling out what the seed states pays is seed_exclusion's to measure.
    under = sorted(
        name
        for name, s in solvers.items()
        if s["accuracy"] < chance - CHANCE_MARGIN and name != "seed_only" and name not in CORPUS_SOLVERS
    )
    return {
        "items": len(items),
        "chance": round(chance, 4),
        "limit": round(chance + CHANCE_MARGIN, 4),
        "retrieval_limit": RETRIEVAL_LIMIT,
        "scoring": "expected accuracy of a uniform pick among the options a solver names; an abstention earns chance",
        "solvers": solvers,
        "above_limit": over,
        "over_retrieval_limit": lookups,
        "below_floor": under,
    }


def describe(name: str) -> str:
    extra = {
        "form_vote": "the option most form solvers decide on (two votes at least)",
        "option_classifier": "a conditional-logit classifier on option form, trained on the release, 5-fold cross-validated",
    }
    return next((s.what for s in SOLVERS if s.name == name), extra.get(name, name))


def markdown(summary: dict) -> str:
    """The artifact check as a table: solver, what it sees, accuracy [95% CI], decided."""
    family = {s.name: s.family for s in SOLVERS} | {"form_vote": "option+question", "option_classifier": "option"}
    lines = [
        f"Artifact check over {summary['items']} items (chance {summary['chance']:.0%}, limit {summary['limit']:.0%}; "
        f"the corpus solver's limit {summary.get('retrieval_limit', RETRIEVAL_LIMIT):.0%}):",
        "",
        "| Solver | Sees | Accuracy [95% CI] | Decided (right) |",
        "|---|---|---:|---:|",
    ]
    for name, s in summary["solvers"].items():
        flag = (
            " **over the limit**"
            if name in summary["above_limit"] or name in summary.get("over_retrieval_limit", [])
            else (" below the floor" if name in summary["below_floor"] else "")
        )
        lo, hi = s["ci95"]
        lines.append(
            f"| {name}: {describe(name)} | {family.get(name, '?')} | {s['accuracy']:.1%} [{lo:.1%}, {hi:.1%}]{flag} "
            f"| {s['decided']} ({s['decided_right']}) |"
        )
    if summary["items"] < MIN_ITEMS:
        lines += [
            "",
            f"Too few items ({summary['items']}) to judge a solver: the intervals above say how little they show; "
            f"the stage rebalances from {MIN_ITEMS}.",
        ]
    return "\n".join(lines) + "\n"
