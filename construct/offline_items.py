"""The offline generator: typed-slot questions and options that cannot be told apart by form.

A question blanks one reported value of a target's finding sentence (a slot,
``construct/slots.py``) and quotes the seed's citing sentence. Every option is a
value of the same type (kind, decimals, digits) and each wrong one is genuine:

- ``seed_only``: the value of that type a paper of the seed's neighbourhood (off the item's path) states in its
  sentence most like the evidence: what a reader who has the seed and follows its other citations finds;
- ``wrong_paper``: the same from a sibling (another reference of the citing paper), or a work a sibling cites;
- ``no_context``: a value of that type from the corpus's distribution, stated by none of the item's papers.

Every wrong value is near the gold on its own scale, so none is ruled out by what it measures (``_distance_band``).
The slot asked is the target's plainest finding still free (``finding_strength``; ``generate_all`` lets chains take
turns so that each blank is asked once), never a value the field repeats (``papers_stating``).

No option is a number the seed states (the gold never is: the seed would give it away), so "rule out what the seed
states" excludes nothing. SPEC 8's ``seed_only`` is the value the seed itself states; with the gold kept off the
seed, such an option is always wrong and a seed reader could exclude it (46.5% on the explore release before this
rule, docs/construct.md), so the kind keeps its name (the release's vocabulary) and draws from the seed's citations.

The gold's rank among the four (0-3 options below it) is balanced over the release: each item takes the rank the
items before it have used least that its values can meet, so neither the largest nor the smallest option is a clue,
even though the extremes are the hardest ranks to meet. A wrong value the target itself states, or that the question
shows, is never used.

Multi-target items ask for one value from each target, in a 2x2 design: the
options are (a, b) the gold, (a', b), (a, b') and (a', b'), so each value is in
exactly two options and reading one target leaves two options standing.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from functools import lru_cache
from typing import Any

from agenthop.construct.slots import Slot, as_written, slots_in, unit_of
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import names_target, sentences
from agenthop.textmatch import content_words

KINDS = ("seed_only", "wrong_paper", "no_context")
MT_SEPARATOR = "; "  # the runner's baseline and the filters read multi-target options as "part; part"


# Sections that report other works or hold asides, not the paper's findings.
_NOT_FINDINGS = re.compile(
    r"related|background|previous work|prior work|appendix|supplement|acknowledg|footnote|references", re.I
)
# A sentence reporting what the paper found or did, and a section of results.
_FINDING_WORDS = re.compile(
    r"\b(?:achiev\w*|obtain\w*|outperform\w*|improv\w*|reach\w*|yield\w*|gain\w*|drop\w*|increas\w*|"
    r"decreas\w*|reduc\w*|found|find\w*|observ\w*|show\w*|accura\w*|precision|recall|F1|BLEU|ROUGE\w*|"
    r"score\w*|error\w*|agree\w*|correlat\w*|perplexit\w*|better|worse|best|higher|lower|fail\w*)\b",
    re.I,
)
_RESULT_HEADER = re.compile(r"result|experiment|evaluat|analys|ablation|discussion|comparison|error|finding", re.I)
_FIRST_PERSON = re.compile(r"\b(?:we|our)\b", re.I)
MIN_STRENGTH = (
    3  # the default (Settings.min_strength): strict readers judged most such blanks good, and few weaker ones
)


@lru_cache(maxsize=8192)
def paper_slots(view, pid: str) -> tuple[tuple[str, str, Slot], ...]:
    """(section header, sentence as written, slot) for every slot of a paper, outside its related-work sections."""
    return tuple(
        (sec.header, sent, slot)
        for sec in view.sections(pid)
        if not _NOT_FINDINGS.search(sec.header) and is_header(sec.header)
        for sent in sentences(sec.text)
        for slot in slots_in(sent)
    )


# A header the converter took from a sentence ("2 The method of Liang et al. (2011) is not comparable to", "5 Both
# players win if"): the question would name a section no reader recognises.
_HEADER_TAIL = re.compile(
    r"\b(?:to|if|of|the|a|an|and|or|in|for|with|is|are|was|were|that|by|on)$|\bet al\b|\(\d{4}\)", re.I
)


def is_header(header: str) -> bool:
    return len(header.split()) <= 8 and not _HEADER_TAIL.search(header.strip())


def finding_strength(header: str, slot: Slot) -> int:
    """How plainly a slot reports the paper's own finding, 0-4: it speaks as "we"/"our", names a result ("outperforms",
    "accuracy"), sits in a section of results, and is a measured score (a percentage or a decimal) rather than a count,
    which is more often a setup detail. The generator asks the strongest first."""
    return (
        bool(_FIRST_PERSON.search(slot.sentence))
        + bool(_FINDING_WORDS.search(slot.sentence))
        + bool(_RESULT_HEADER.search(header))
        + (slot.type[0] != "count")
    )


def _corpus_slots(view):
    """(paper ID, slot) for every slot of every paper with text."""
    return (
        (pid, slot) for pid, paper in view.papers.items() if paper.has_text for _, _, slot in paper_slots(view, pid)
    )


@lru_cache(maxsize=8)
def corpus_values(view) -> dict[tuple, tuple[str, ...]]:
    """Every slot value in the corpus by type, each once, sorted: the distribution ``no_context`` draws from."""
    by_type: dict[tuple, set[str]] = {}
    for _, slot in _corpus_slots(view):
        by_type.setdefault(slot.type, set()).add(slot.value)
    return {t: tuple(sorted(v)) for t, v in by_type.items()}


@lru_cache(maxsize=8)
def papers_stating(view) -> dict[tuple[str, str], int]:
    """How many papers of the corpus state each (value, unit): "880 queries", "75 bytes", "4.5 million" pairs."""
    stating: dict[tuple[str, str], set[str]] = {}
    for pid, slot in _corpus_slots(view):
        stating.setdefault((slot.value, unit_of(slot.cloze())), set()).add(pid)
    return {k: len(v) for k, v in stating.items()}


# A value this many papers state with the same unit is the field's, not the target's finding: a benchmark's size (GEO's
# 880 queries, DUC's 500 documents), a shared task's limit (75 bytes), a score every paper quotes, or a routine number.
FIELD_FACT_PAPERS = 3


@lru_cache(maxsize=8)
def corpus_values_by_unit(view) -> dict[tuple, frozenset[str]]:
    """The corpus's slot values by (type, unit): those that measure what a gold does (BLEU beside BLEU)."""
    by_unit: dict[tuple, set[str]] = {}
    for _, slot in _corpus_slots(view):
        by_unit.setdefault((slot.type, unit_of(slot.cloze())), set()).add(slot.value)
    return {k: frozenset(v) for k, v in by_unit.items()}


def readable(text: str) -> str:
    """A quote for a question: no citation marks, no PDF line-break hyphens ('de- veloped'), no trailing footnote marker."""
    return as_written(text or "").rstrip(".").rstrip()


def _similarity(a: str, b: str) -> float:
    wa, wb = set(content_words(a)), set(content_words(b))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def _values_stated(view, pids) -> set[str]:
    return {slot.value for pid in pids for _, _, slot in paper_slots(view, pid)}


def seed_references(view, cand: dict) -> list[str]:
    """The seed's neighbours with text, off the item's path: its other references in the reference list's order, the
    papers citing it, then the works its references cite (a small corpus holds few of a seed's references, and a
    reader who follows the seed's other citations a step further finds those)."""
    skip = {cand["seed"], cand["bridge"], *cand["targets"]}
    refs = [c for c, _ in view.references(cand["seed"])]
    near = refs + view.citers(cand["seed"]) + [c for r in refs for c, _ in view.references(r)]
    return [p for p in dict.fromkeys(near) if p not in skip and view.has_text(p)]


def _source_pids(view, cand: dict, kind: str, siblings) -> list[str]:
    return (
        seed_references(view, cand)
        if kind == "seed_only"
        else sibling_sources(view, cand, siblings)
        if kind == "wrong_paper"
        else []
    )


def sibling_sources(view, cand: dict, siblings: list[str]) -> list[str]:
    """The siblings, then the works they cite (off the item's path): a reader who takes the wrong branch of the
    citing paper's references, one step further, finds those."""
    skip = {cand["seed"], cand["bridge"], *cand["targets"]}
    further = [c for sib in siblings for c, _ in view.references(sib)]
    return [p for p in dict.fromkeys([*siblings, *further]) if p not in skip and view.has_text(p)]


def candidates_for(view, cand: dict, kind: str, slot: dict, siblings: list[str], salt: str) -> list[str]:
    """Values of the slot's type from ``kind``'s source, most corresponding first; excluding what the target or question states."""
    vtype = tuple(slot["type"])
    widest = max_band(slot["cloze"])
    gold_round = _roundness(slot["value"])
    rounded = gold_round if said_round(slot["cloze"], slot["value"]) else None
    banned = _values_stated(view, cand["targets"]) | set(re.findall(r"\d+(?:\.\d+)?%?", cand["question"]))
    seed_numbers = _numbers_in(view, cand["seed"])  # a number the seed states would be an option a seed reader excludes
    if kind == "no_context":
        banned |= _values_stated(view, [cand["seed"], *siblings, *([cand["bridge"]] if cand["bridge"] else [])])
        pool = [
            v
            for v in sorted(corpus_values(view).get(vtype, ()), key=lambda v: digest(f"{salt}:{v}"))
            if v not in banned
            and v.rstrip("%") not in seed_numbers
            and _distance_band(v, slot["value"]) <= widest
            and rounded in (None, _roundness(v))
        ]
        # Values that measure what the gold does first (a BLEU score beside a BLEU score, a dimension beside a dimension),
        # then those of the gold's magnitude (within a factor of 3): a reader of the field rules out neither by meaning.
        unit, gold = unit_of(slot["cloze"]), _num(slot["value"])
        same_unit = corpus_values_by_unit(view).get((vtype, unit), frozenset()) if unit else frozenset()

        def rank(v: str) -> tuple:
            return (
                not (_same_magnitude(_num(v), gold) and v in same_unit),
                _distance_band(v, slot["value"]),
                _roundness(v) != gold_round,
            )

        return sorted(pool, key=rank)
    scored: dict[str, tuple[int, bool, float, str]] = {}
    for pid in _source_pids(view, cand, kind, siblings):
        for _, sent, s in paper_slots(view, pid):
            if (
                s.type == vtype
                and s.value not in banned
                and s.value.rstrip("%") not in seed_numbers
                and _distance_band(s.value, slot["value"]) <= widest
                and rounded in (None, _roundness(s.value))
            ):
                # Near the gold first, as round as the gold, then the most corresponding sentence: a BLEU of 91.7 beside
                # 25.5 is ruled out by anyone who knows BLEU, however alike the sentences.
                score = (
                    _distance_band(s.value, slot["value"]),
                    _roundness(s.value) != gold_round,
                    -_similarity(sent, slot["sentence"]),
                    digest(f"{salt}:{pid}:{s.value}"),
                )
                scored[s.value] = min(scored.get(s.value, score), score)
    return sorted(scored, key=scored.__getitem__)


def _num(value: str) -> float:
    return float(value.rstrip("%"))


def _same_magnitude(a: float, b: float) -> bool:
    return a > 0 and b > 0 and abs(math.log10(a) - math.log10(b)) <= math.log10(3)


# Words by which a sentence judges its value's size ("only ___", "a good number", "roughly balanced", "surpasses the state
# of the art"): a reader rules out a wrong value far from the gold by them alone, so such a blank takes near values only.
_SIZE_WORDS = re.compile(
    r"\b(?:only|just|merely|mere|a good|remarkabl\w*|balanced|majority|minority|few|little|surpass\w*|"
    r"almost|nearly|vast|tiny|huge|modest|slight\w*|marginal\w*|dramatic\w*)\b",
    re.I,
)


# After "about ___" a value is said in round figures, and after "over ___" or "more than ___" a round gold is a bound: an
# unround wrong value would stand out beside them ("over 91%"), so every option is then as round as the gold.
_ROUND_BEFORE = re.compile(r"\b(?:approximately|roughly|about|around|nearly|almost|some|circa)\s*$|~\s*$", re.I)
_BOUND_BEFORE = re.compile(
    r"\b(?:over|(?:more|less|fewer) than|at (?:least|most)|above|below|under|exceeding)\s*$", re.I
)


def said_round(cloze: str, gold: str) -> bool:
    """Whether every option must be as round as the gold: after "about ___", or a round gold after "over ___"."""
    before = cloze.partition("___")[0]
    return bool(_ROUND_BEFORE.search(before) or _BOUND_BEFORE.search(before) and _roundness(gold))


def max_band(cloze: str) -> int:
    """How far a wrong value may lie from the gold (``_distance_band``): close when the sentence judges the value's
    size, else near. Further ones are never offered: the ninth and tenth reads ruled them out by meaning."""
    return 0 if _SIZE_WORDS.search(cloze) else 1


def _distance_band(value: str, gold: str) -> int:
    """0 when a wrong value is close to the gold, 1 when near, 2 when a reader of the field would rule it out by meaning.

    On a bounded scale (percentages, scores below 100 with decimals, fractions 0.x) the distance is in log-odds, since
    99.2 beside a parser's 91.2 F1 is as implausible as 33.3: close within 0.5, near within 1.4 (beside 91%: 71-98%). Other
    values (counts, ratios) compare by their ratio: close within a factor of 1.25, near within 3.
    """
    a, b = _num(value), _num(gold)
    bounded = _bounded_scale(value) and _bounded_scale(gold)
    if bounded:
        top = 1.0 if value.startswith("0.") and gold.startswith("0.") else 100.0
        if not (0 < a < top and 0 < b < top):
            return 0 if a == b else 2
        d = abs(math.log(a / (top - a)) - math.log(b / (top - b)))
        return 0 if d <= 0.5 else 1 if d <= 1.4 else 2
    if a <= 0 or b <= 0:
        return 2
    ratio = abs(math.log10(a) - math.log10(b))
    return 0 if ratio <= math.log10(1.25) else 1 if ratio <= math.log10(3) else 2


def _bounded_scale(value: str) -> bool:
    """A percentage, a fraction (0.x) or a score with decimals below 100 (F1 91.2, BLEU 25.5)."""
    number = value.rstrip("%")
    return value.endswith("%") or number.startswith("0.") or ("." in number and float(number) < 100)


def _roundness(value: str) -> int:
    """2 for a whole multiple of 10, 1 of 5, else 0: after "approximately ___" a round gold among unround options stands out."""
    number = value.rstrip("%")
    if "." in number:
        return 0
    return 2 if int(number) % 10 == 0 else 1 if int(number) % 5 == 0 else 0


def balanced_pick(pools: dict[str, list[str]], gold: str, below: int, salt: str) -> dict[str, str] | None:
    """One value per kind, distinct, with exactly ``below`` of them smaller than the gold; None when the pools cannot."""
    g = _num(gold)
    combos = sorted(itertools.combinations(pools, below), key=lambda c: digest(f"{salt}:{c}"))
    for low in combos:
        picked: dict[str, str] = {}
        for kind, pool in pools.items():
            want_low = kind in low
            value = next(
                (
                    v
                    for v in pool
                    if (_num(v) < g) == want_low and _num(v) != g and all(_num(v) != _num(p) for p in picked.values())
                ),
                None,
            )
            if value is None:
                break
            picked[kind] = value
        else:
            return picked
    return None


def _slot_record(header: str, sentence: str, slot: Slot) -> dict:
    return {
        "header": header,
        "sentence": slot.sentence,
        "evidence": sentence,
        "value": slot.value,
        "type": list(slot.type),
        "cloze": slot.cloze(),
    }


def _reasoning_type(header: str, sentence: str) -> str:
    h = header.lower()
    if re.search(r"result|experiment|evaluat|analys|finding|ablation|discussion|comparison", h):
        return "RESULT"
    if re.search(r"data|corpus|corpora|annotation", h):
        return "GROUND"
    if re.search(
        r"method|model|approach|architecture|implementation|setup|setting|training|algorithm|procedure|parameter", h
    ):
        return "METHOD"
    if re.search(r"introduction|motivation|background|related", h):
        return "MOTIVE"
    return "RESULT" if "%" in sentence else "GROUND"


def question_text(view, chain: dict, slots: list[dict]) -> str:
    via = chain["bridge"] or chain["seed"]
    contexts = [readable(view.context(via, t)) for t in chain["targets"]]
    one_sentence = (
        len(contexts) == 2 and contexts[0] == contexts[1]
    )  # both targets cited together: quote the sentence once
    if chain["bridge"]:
        cited = (
            "earlier work"
            if len(slots) == 1
            else "two earlier works in one sentence"
            if one_sentence
            else "two earlier works"
        )
        quotes = f'"{contexts[0]}"' if one_sentence else "; ".join(f'"{c}"' for c in contexts)
        lead = f'The seed paper cites a work ("{readable(view.context(chain["seed"], chain["bridge"]))}"), which in turn cites {cited} ({quotes}).'
    elif len(slots) == 1:
        lead = f'The seed paper cites earlier work in this sentence: "{contexts[0]}".'
    elif one_sentence:
        lead = f'The seed paper cites two works in one sentence: "{contexts[0]}".'
    else:
        lead = "The seed paper cites two works: first " + ", then ".join(f'"{c}"' for c in contexts) + "."
    if len(slots) == 1:
        where = "that earlier work" if chain["bridge"] else "that work"
        return f'{lead} In {where}, section "{slots[0]["header"]}" states: "{readable(slots[0]["cloze"])}". What value fills the blank?'
    return (
        f'{lead} The first work states in section "{slots[0]["header"]}": "{readable(slots[0]["cloze"])}"; the second states in '
        f'section "{slots[1]["header"]}": "{readable(slots[1]["cloze"])}". Which pair of values fills the two blanks, '
        "the first work's value first?"
    )


@lru_cache(maxsize=1024)
def _numbers_in(view, pid: str) -> frozenset[str]:
    return frozenset(n for sec in view.sections(pid) for n in re.findall(r"\d+(?:\.\d+)?", sec.text))


def _ranked_slots(
    view, chain: dict, pid: str, salt: str, min_strength: int = MIN_STRENGTH
) -> list[tuple[str, str, Slot]]:
    """A target's slots whose value the seed does not state (the seed alone would give it away: the shortcut the
    ensemble drops), the plainest findings first (``finding_strength``), salted among equals."""
    seed_numbers = _numbers_in(view, chain["seed"])
    stating = papers_stating(view)
    usable = [
        x
        for x in paper_slots(view, pid)
        if x[2].value.rstrip("%") not in seed_numbers
        and finding_strength(x[0], x[2]) >= min_strength
        and stating.get((x[2].value, unit_of(x[2].cloze())), 0) < FIELD_FACT_PAPERS
    ]
    return sorted(usable, key=lambda x: (-finding_strength(x[0], x[2]), digest(f"{salt}:{x[1]}:{x[2].value}")))


def siblings(view, cand: dict, seed: int) -> list[str]:
    """Other references with text of the paper that cites the targets, in a salted order.

    The whole reference list, not the release's window: a wrong option's source need not be reachable in the item's graph.
    """
    via = cand["bridge"] or cand["seed"]
    skip = {cand["seed"], cand["bridge"], *cand["targets"]}
    pids = [c for c, _ in view.references(via) if c not in skip and view.has_text(c)]
    return sorted(pids, key=lambda p: digest(f"{seed}:{cand['id']}:{p}"))


MAX_TRIES = 16  # slots tried per target (pairs of them for multi-target chains)


def generate_all(view, chains: list[dict], seed: int, min_strength: int = MIN_STRENGTH) -> list[dict]:
    """``generate`` for every chain, each blank (a target's sentence) asked once: chains take turns in a fixed salted
    order, multi-target chains first (they need two free blanks), and a chain skips the blanks earlier ones took, so
    two chains to one target ask two of its sentences rather than one being dropped later as a repeated blank."""
    taken: set[tuple[str, str]] = set()
    balance: Counter = (
        Counter()
    )  # the gold's rank among the options so far: ("st", options below it), ("mt", target, wrong below)
    order = sorted(
        range(len(chains)), key=lambda i: (len(chains[i]["targets"]) == 1, digest(f"{seed}:turn:{chains[i]['id']}"))
    )
    out: list[dict] = [{}] * len(chains)
    for i in order:
        out[i] = generate(view, chains[i], seed, taken, min_strength, balance)
        if "drop" not in out[i]:
            taken.update(zip(chains[i]["targets"], out[i]["evidence"]))
            balance.update(
                [("st", out[i]["gold_rank"])]
                if "gold_rank" in out[i]
                else [("mt", t, low) for t, low in enumerate(out[i]["wrong_below"])]
            )
    return out


def generate(
    view,
    chain: dict,
    seed: int,
    taken: frozenset | set = frozenset(),
    min_strength: int = MIN_STRENGTH,
    balance: Counter | None = None,
) -> dict:
    """Question, answer, evidence, reasoning type, labels and slots for a chain, or ``{"drop": ...}``.

    A slot is asked about only when three genuine same-type wrong values exist for it (``options``), so the
    distractor stage never has to drop what this stage could have asked differently. Blanks in ``taken``
    ((target, sentence) pairs another chain asks) are skipped. A record holds where its gold sits among the options,
    the least used in ``balance`` that its values can meet (``options``), so that the distractor stage meets it again:
    ``gold_rank`` (options below the gold) for one target, ``wrong_below`` (per target, whether its wrong value is the
    lower) for two.
    """
    salt = f"{seed}:{chain['id']}"
    ranked = [_ranked_slots(view, chain, t, salt, min_strength) for t in chain["targets"]]
    if not all(ranked):
        return {
            "drop": {
                "reason": "no_fact_sentence",
                "detail": f"a target states no value in a sentence of finding strength {min_strength} or more",
            }
        }
    per_target = [[x for x in r if (t, x[1]) not in taken][:MAX_TRIES] for t, r in zip(chain["targets"], ranked)]
    if not all(per_target):
        return {
            "drop": {
                "reason": "repeated_blank",
                "detail": "other chains already ask every finding sentence of a target",
            }
        }
    sibs = siblings(view, chain, seed)
    last = {"reason": "no_fact_sentence", "detail": "no finding sentence could be turned into a question"}
    for picks in itertools.product(*per_target):
        slots = [_slot_record(h, sent, s) for h, sent, s in picks]
        if any(len(content_words(s["cloze"])) < 5 for s in slots):
            continue  # the blanked sentence must still say what it is about
        if len({s["value"] for s in slots}) < len(slots):
            continue  # "25; 25": two targets stating one fact, so one of them answers both blanks
        question = question_text(view, chain, slots)
        named = next(
            (
                f"{why} of {t}"
                for t in chain["targets"]
                if (why := names_target(question, view.papers[t].title, view.titles_naming))
            ),
            None,
        )
        if named:
            last = {"reason": "names_target", "detail": f"every question written names the target: {named}"}
            continue
        record: dict[str, Any] = {
            "question": question,
            "answer": MT_SEPARATOR.join(s["value"] for s in slots),
            "evidence": [s["evidence"] for s in slots],
            "reasoning_type": _reasoning_type(slots[0]["header"], slots[0]["sentence"]),
            "slots": slots,
            "labels": [
                {"paper_id": t, "section": s["header"], "relevance": "direct"} for t, s in zip(chain["targets"], slots)
            ],
        }
        wrong = options(view, {**chain, **record}, sibs, seed, balance)
        if "drop" in wrong:
            last = wrong["drop"]
            continue
        if len(slots) == 1:
            record["gold_rank"] = sum(_num(v) < _num(slots[0]["value"]) for v in wrong.values())
        else:
            lows = [_num(v) for v in wrong["no_context"].split(MT_SEPARATOR)]
            record["wrong_below"] = [low < _num(s["value"]) for low, s in zip(lows, slots)]
        return record
    return {"drop": last}


def options(view, cand: dict, siblings: list[str], seed: int, balance: Counter | None = None) -> dict:
    """The three wrong options by kind (``{"seed_only": ..., ...}``), or ``{"drop": ...}`` naming what was missing.

    Where the gold sits is what the Q/A stage chose (``gold_rank``, ``wrong_below``) when it chose, else the first
    place, least used in ``balance`` first (salted among equals), that the values can meet: the extremes are the
    hardest to meet, so a drawn place alone left the gold the largest option less often than the smallest."""
    used = balance or Counter()
    salt = f"{seed}:{cand['id']}"
    slots = cand["slots"]
    if not siblings:
        return {"drop": {"reason": "no_sibling_with_text", "detail": "the citing paper cites no other paper with text"}}
    if len(slots) == 1:
        pools = {kind: candidates_for(view, cand, kind, slots[0], siblings, f"{salt}:{kind}") for kind in KINDS}
        empty = [k for k, p in pools.items() if not p]
        if empty:
            return {
                "drop": {
                    "reason": "no_same_type_value",
                    "detail": f"{empty[0]}: no {slots[0]['type'][0]} value of the gold's form",
                }
            }
        tries = (
            [cand["gold_rank"]]
            if "gold_rank" in cand
            else sorted(range(4), key=lambda b: (used["st", b], digest(f"{salt}:rank:{b}")))
        )
        picked = next(
            (p for below in tries if (p := balanced_pick(pools, slots[0]["value"], below, salt)) is not None), None
        )
        if picked is None:
            ranks = " or ".join(str(b + 1) for b in tries)
            return {
                "drop": {
                    "reason": "no_balanced_options",
                    "detail": f"no same-type values put the gold at rank {ranks} of 4",
                }
            }
        return picked
    # 2x2: a wrong value for one target's slot from a sibling, for the other's from another paper the seed cites
    # (whichever way round works); neither is a number the seed states, so one target plus the seed leaves two options.
    problem = None
    for order in (("wrong_paper", "seed_only"), ("seed_only", "wrong_paper")):
        wrong = []
        for i, kind in enumerate(order):
            pool = candidates_for(view, cand, kind, slots[i], siblings, f"{salt}:{kind}")
            sides = (
                [cand["wrong_below"][i]]
                if "wrong_below" in cand
                else sorted((True, False), key=lambda low: (used["mt", i, low], digest(f"{salt}:side{i}:{low}")))
            )
            g = _num(slots[i]["value"])
            pick = next((v for low in sides for v in pool if (_num(v) < g) == low and _num(v) != g), None)
            if pick is None:
                problem = {
                    "reason": "no_same_type_value" if not pool else "no_balanced_options",
                    "detail": f"{kind}: no {slots[i]['type'][0]} value of the form of target {i + 1}'s",
                }
                break
            wrong.append(pick)
        else:
            a, b = slots[0]["value"], slots[1]["value"]
            return {
                order[0]: f"{wrong[0]}{MT_SEPARATOR}{b}",
                order[1]: f"{a}{MT_SEPARATOR}{wrong[1]}",
                "no_context": f"{wrong[0]}{MT_SEPARATOR}{wrong[1]}",
            }
    return {"drop": problem}
