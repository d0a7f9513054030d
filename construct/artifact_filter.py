"""Stage 5 (between distractors and the ensemble), the artifact check: drop items whose form gives the answer away.

Every candidate is answered by the solvers of ``artifacts`` (no evidence), and its
picks are kept on the record (``artifacts.picks``) for the ensemble's tier and the
release's artifact check. Two kinds of drop:

1. Flaws anyone sees without knowing the gold (so dropping them cannot teach a
   solver which option is right): exactly one near-identical pair of options
   (``artifact_twin``: the gold and a copy with its numbers changed is the classic
   leak), one option of another type than the other three (``artifact_odd_type``:
   another kind, a percent sign, joined parts, or a value of another magnitude),
   an option the question's own text rules out (``artifact_refuted``).
2. Rebalancing, for a rule that wins too often over the stage's items.
   Dropping every item a solver gets right would leave it at 0%, and then the
   opposite rule ("never the longest") wins, so only as many items are dropped as
   bring the rule back to chance + ``TARGET``: items where its pick holds the
   gold, in a fixed order (a digest of the rule and the candidate). It fires when
   a rule is more than ``TRIGGER`` above chance over at least ``MIN_ITEMS`` items;
   fewer items give intervals too wide to act on. A rule that half the items
   could not bring back (the gold is always the largest, say) is left for the
   artifact check to report: such a release is not a benchmark, and emptying it would
   hide why. A rule far *below* chance is reported, not rebalanced: its mirror
   ("never the largest") is worth at most 1/3 with four options, and the
   solvers that exploit it are in the battery themselves (``middle_value``,
   ``middle_length``, the opposite extreme), so they are rebalanced instead.
"""

from __future__ import annotations

import math
from collections import Counter

from agenthop.construct import artifacts
from agenthop.construct.stagefiles import digest

REBALANCED = (
    "longest",
    "shortest",
    "middle_length",
    "most_similar",
    "least_similar",
    "odd_form",
    "largest",
    "smallest",
    "middle_value",
    "roundest",
    "question_overlap",
    "form_vote",
)
TRIGGER = 0.075  # points from chance that make a rule's items rebalanced
TARGET = 0.05  # ... back to within this: headroom under SPEC 8's 10 for the later stages' drops
MIN_ITEMS = artifacts.MIN_ITEMS
GAP = 0.75  # orders of magnitude (x5.6) that set one option's value apart from the others'


def _type(option: str) -> tuple:
    f = artifacts.form(option)
    return f["kind"], f["percent"], f["joined"]


def _type_name(t: tuple) -> str:
    kind, percent, joined = t
    return (
        kind.replace("_", " ")
        + (" with a percent sign" if percent else "")
        + (" (two answers joined by ';')" if joined else "")
    )


def odd_magnitude(options: list[str]) -> int | None:
    """The option whose value is at least GAP orders of magnitude from every other while those lie within half that
    of one another (a dropout rate of 0.5 beside 5.3, 4.3 and 6.1), or None. Values either side of a decade
    boundary (9.8 and 10.2) are not apart."""
    values = [artifacts.numbers(o)[:1] for o in options]
    if not all(v and v[0] > 0 for v in values):
        return None
    logs = [math.log10(v[0]) for v in values]
    for i, x in enumerate(logs):
        others = logs[:i] + logs[i + 1 :]
        if min(abs(x - o) for o in others) >= GAP and max(others) - min(others) <= GAP / 2:
            return i
    return None


def flaw(cand: dict) -> dict | None:
    """The drop for a form flaw visible without the gold, or None."""
    options = cand["options"]
    pairs = artifacts.twin_pairs(options)
    if len(pairs) == 1:
        i, j = pairs[0]
        return {
            "reason": "artifact_twin",
            "detail": f"options {'ABCD'[i]} and {'ABCD'[j]} are the same words with other numbers",
        }
    types = Counter(_type(o) for o in options)
    if len(types) == 2 and min(types.values()) == 1 and len(options) >= 3:
        lone = next(t for t, c in types.items() if c == 1)
        i = next(k for k, o in enumerate(options) if _type(o) == lone)
        other = next(t for t in types if t != lone)
        return {
            "reason": "artifact_odd_type",
            "detail": f"option {'ABCD'[i]} is a {_type_name(lone)}, the others a {_type_name(other)}",
        }
    odd = odd_magnitude(options)
    if odd is not None:
        return {
            "reason": "artifact_odd_type",
            "detail": f"option {'ABCD'[odd]}'s value is of another order of magnitude than the others'",
        }
    for i, option in enumerate(options):
        why = artifacts.refuted(cand["question"], option)
        if why:
            return {"reason": "artifact_refuted", "detail": f"the question rules out option {'ABCD'[i]}: {why}"}
    return None


def _credit(rec: dict, name: str) -> float:
    return artifacts.credit(rec["artifacts"]["picks"].get(name, []), rec["correct_index"], len(rec["options"]))


def _drops(kept: list[dict], name: str) -> tuple[list[dict], float, float] | None:
    """The items to drop to bring rule ``name`` back to chance + TARGET (None when it is within TRIGGER; empty when that
    would take more than half the items: such a release is reported, not emptied), the rule's score before, and chance."""
    chance = sum(1 / len(r["options"]) for r in kept) / len(kept)
    total, n = sum(_credit(r, name) for r in kept), len(kept)
    before = total / n
    if before <= chance + TRIGGER:
        return None
    pool = sorted(
        (r for r in kept if _credit(r, name) > 1 / len(r["options"])), key=lambda r: digest(f"{name}:{r['id']}")
    )
    chosen = []
    for r in pool:
        if total / n <= chance + TARGET or n <= MIN_ITEMS:
            break
        total, n = total - _credit(r, name), n - 1
        chosen.append(r)
    if total / n > chance + TARGET or len(chosen) > len(kept) // 2:
        return [], before, chance
    return chosen, before, chance


def rebalance(records: list[dict]) -> list[str]:
    """Drop (in place) the fewest items that bring every rebalanced rule that wins too often back to chance + TARGET;
    return the rules that could not be brought back without dropping half the items."""
    stuck: set[str] = set()
    moved = True
    while moved:  # each pass drops at least one item or ends: it terminates
        moved = False
        for name in REBALANCED:
            kept = [r for r in records if "drop" not in r]
            if len(kept) < MIN_ITEMS:
                return sorted(stuck)
            found = _drops(kept, name)
            if found is None:
                stuck.discard(name)
                continue
            chosen, before, chance = found
            if not chosen:
                stuck.add(name)
                continue
            for r in chosen:
                r["drop"] = {
                    "reason": f"artifact_{name}",
                    "detail": f"the rule '{artifacts.describe(name)}' holds the gold; it scored {before:.1%} over {len(kept)} "
                    f"items (chance {chance:.0%}): rebalanced towards chance",
                }
            moved = True
    return sorted(stuck)


def out_of_bounds(records: list[dict]) -> list[str]:
    """The rebalanced rules more than CHANCE_MARGIN from chance, either way, over the kept records."""
    kept = [r for r in records if "drop" not in r]
    if len(kept) < MIN_ITEMS:
        return []
    chance = sum(1 / len(r["options"]) for r in kept) / len(kept)
    scores = {name: sum(_credit(r, name) for r in kept) / len(kept) for name in REBALANCED}
    return [f"{name} {acc:.1%}" for name, acc in scores.items() if abs(acc - chance) > artifacts.CHANCE_MARGIN]


def run_artifacts(view, cands: list[dict], echo=None) -> list[dict]:
    """Each candidate with its solvers' picks, dropped for a form flaw or by the rebalancing."""
    records = []
    for cand in cands:
        rec = {**cand, "artifacts": {"picks": artifacts.solve(cand, view)}}
        why = flaw(cand)
        if why:
            rec["drop"] = why
        records.append(rec)
    rebalance(records)
    outside = out_of_bounds(records)
    if outside and echo is not None:
        echo(
            f"  artifacts: rules more than {artifacts.CHANCE_MARGIN:.0%} from chance after the stage: {', '.join(outside)} "
            "(see the artifact check under the attrition table)"
        )
    return records
