"""Stage 5, the ensemble filter: shortcut detection and consensus, with the paper's tiers.

Each filter model answers twice: from the seed alone (shortcut: recovering the
gold means the item leaks) and from the seed and the target(s) (consensus: the
models must converge on the gold). With n models and a tolerance t = n // 3
(1 of 3, as published): an item is dropped as a shortcut when more than t models
recover the gold from the seed, and for lack of consensus when fewer than n - t
agree on it. Tiers: gold = no shortcut and full consensus; silver = some
shortcut and full consensus; bronze = consensus short of full. The artifact
check counts as one more shortcut check that never drops: an item whose form
vote (the option most no-evidence solvers pick, ``artifacts.form_vote``) is the
gold is silver at best, since its form points to its answer. A model whose
replies cannot be read after every attempt counts as not choosing the gold.

With ``blind_check`` each model also answers from the four options alone, with no
question and no paper (the project's addition): more than t models picking the
gold that way drops the item as ``options_give_away``. A capable reader tells a
real finding from written ones by texture and memory where the rule-based form
solvers of the artifact check see nothing.
"""

from __future__ import annotations

import re

from agenthop.construct import offline_filter
from agenthop.construct.client import ModelSpec
from agenthop.construct.context import Unusable
from agenthop.construct.prompts import BadReply, blind_messages, choice_messages, parse_json

LETTERS = "ABCD"


def _letter(reply: str) -> int:
    try:
        value = parse_json(reply).get("answer")
    except BadReply:
        bare = re.fullmatch(r"\s*\(?([ABCD])\)?\.?\s*", reply)
        if not bare:
            raise
        value = bare.group(1)
    if not isinstance(value, str) or value.strip().strip("()").upper() not in LETTERS:
        raise BadReply(f"'answer' must be one letter A, B, C or D, found {value!r}")
    return LETTERS.index(value.strip().strip("()").upper())


def tier(shortcut: int, consensus: int, n: int, blind: int = 0) -> tuple[str | None, str | None]:
    """(drop reason or None, tier or None) by the published rule, for n models (``blind``: the options-alone hits)."""
    tolerance = n // 3
    if blind > tolerance:
        return "options_give_away", None
    if shortcut > tolerance:
        return "shortcut", None
    if consensus < n - tolerance:
        return "no_consensus", None
    if consensus == n:
        return None, "gold" if shortcut == 0 else "silver"
    return None, "bronze"


async def run_ensemble(ctx, cands: list[dict]) -> list[dict]:
    view, s = ctx.view, ctx.settings
    specs = [ModelSpec.parse(f) for f in s.filters]

    def papers(cand: dict, check: str) -> list[str]:
        return [cand["seed"]] if check == "shortcut" else [cand["seed"], *cand["targets"]]

    def messages(cand: dict, check: str) -> list[dict]:
        if check == "blind":
            return blind_messages(cand["options"])
        return choice_messages(view, cand["question"], cand["options"], [view.papers[p] for p in papers(cand, check)])

    async def answer(spec: ModelSpec, cand: dict, check: str) -> int | None:
        if spec.offline and check == "blind":
            return None  # no memory and no reading of register: the artifact check's solvers stand for it
        if spec.offline:
            return offline_filter.choose(view, cand["question"], cand["options"], papers(cand, check))
        try:
            return await ctx.ask(spec, messages(cand, check), _letter, "ensemble", f"{cand['id']}/{check}/{spec.name}")
        except Unusable:
            return None

    async def one(cand: dict) -> dict:
        votes: dict[str, dict[str, int | None]] = {"shortcut": {}, "consensus": {}}  # check -> model -> option
        if s.blind_check:
            votes["blind"] = {}
        # Batch mode: every filter's questions in one round.
        ctx.prefetch(
            [
                (spec, messages(cand, c), f"{cand['id']}/{c}/{spec.name}")
                for spec in specs
                if not spec.offline
                for c in votes
            ],
            "ensemble",
        )
        for spec in specs:
            for check in votes:
                votes[check][str(spec)] = await answer(spec, cand, check)
        hits = {check: sum(v == cand["correct_index"] for v in answers.values()) for check, answers in votes.items()}
        pattern = " ".join(
            f"{check}:"
            + "".join("+" if v == cand["correct_index"] else ("?" if v is None else "-") for v in answers.values())
            for check, answers in votes.items()
        )
        reason, level = tier(hits["shortcut"], hits["consensus"], len(specs), hits.get("blind", 0))
        by_form = cand.get("artifacts", {}).get("picks", {}).get("form_vote") == [cand["correct_index"]]
        if level == "gold" and by_form:
            level = "silver"
        out = {
            **cand,
            "filter": {
                "by_form": by_form,
                "votes": {k: {m: (None if v is None else LETTERS[v]) for m, v in a.items()} for k, a in votes.items()},
                "shortcut": hits["shortcut"],
                "consensus": hits["consensus"],
                **({"blind": hits["blind"]} if "blind" in hits else {}),
                "pattern": pattern,
            },
        }
        if reason:
            out["drop"] = {"reason": reason, "detail": pattern}
        else:
            out["consensus_tier"] = level
            out["filter_agreement"] = hits["consensus"]
        return out

    return await ctx.each("ensemble", cands, one)
