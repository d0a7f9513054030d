"""Stage 4, distractors: three (or four) wrong options, each a genuine answer from the wrong source.

``seed_only`` is answered from the seed, ``wrong_paper`` from a sibling reference (another paper with text cited by
the target's citing paper), ``no_context`` with no paper at all; ``same_paper`` (instead of ``no_context`` when asked
for) from the target without the sections that hold the evidence. Two departures from the paper, in model mode: with
``informed_distractors`` one writer, shown the gold, writes every wrong option in one reply; with
``grounded_distractors`` each of them restates a finding its paper states, quoted. With ``restate_options`` a writer
not told which option is right then rewrites all four in one register. ``option_checks`` decides which replies are
kept: an option too close to the gold or to another (token Jaccard >= ``too_close``) is asked for again. The options
are shuffled with a random generator seeded by the run's seed and the candidate.
"""

from __future__ import annotations

import random

from agenthop.construct import offline_filter, offline_items
from agenthop.construct.client import ModelSpec
from agenthop.construct.context import Unusable
from agenthop.construct.corpus_view import Paper
from agenthop.construct.offline_items import siblings
from agenthop.construct.option_checks import (
    grounded_texts,
    too_close,
    validate_grounded,
    validate_informed,
    validate_option,
    validate_restated,
    values_only,
    wrong_kinds,
)
from agenthop.construct.prompts import (
    answer_form,
    answer_messages,
    grounded_options_messages,
    informed_options_messages,
    restate_messages,
)
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import perturb_numbers

NO_SIBLING = {"drop": {"reason": "no_sibling_with_text", "detail": "the citing paper cites no other paper with text"}}


def _offline_options(view, cand: dict, kinds: list[str], s) -> dict:
    gold = cand["answer"]
    n_parts = len(cand["targets"])
    taken = [gold]
    out = {}
    for kind in kinds:
        if kind == "no_context":
            pools = [[perturb_numbers(gold, salt)] for salt in range(1, 6)]
            candidates = [p[0] for p in pools]
        else:
            if kind == "seed_only":
                sources = [cand["seed"]]
            elif kind == "wrong_paper":
                sources = siblings(view, cand, s.seed)[:2]
            else:  # same_paper: the target's finding clauses outside the evidence sentences
                sources = cand["targets"]
            spans = [
                span
                for pid in sources
                for _, sentence, span in offline_filter.fact_sentences(view, pid, f"{s.seed}:{cand['id']}")
                if sentence not in cand["evidence"]
            ]
            if not spans:
                reason = "no_sibling_with_text" if kind == "wrong_paper" else "no_distractor_source"
                return {"drop": {"reason": reason, "detail": f"{kind}: no finding clause to use"}}
            candidates = ["; ".join(spans[i : i + n_parts]) for i in range(0, max(len(spans) - n_parts + 1, 1))]
        pick = next(
            (c for c in candidates if c.count("; ") == n_parts - 1 and not too_close(c, taken, s.too_close)), None
        )
        if pick is None:
            return {
                "drop": {
                    "reason": "distractor_too_close",
                    "detail": f"{kind}: every candidate option is too close to one already chosen",
                }
            }
        out[kind] = pick
        taken.append(pick)
    return out


def _sources(view, cand: dict, kind: str, s) -> list[Paper] | None:
    if kind == "seed_only":
        return [view.papers[cand["seed"]]]
    if kind == "no_context":
        return []
    if kind == "wrong_paper":
        sib = siblings(view, cand, s.seed)
        return [view.papers[sib[0]]] if sib else None
    return [view.papers[t] for t in cand["targets"]]


def _option_messages(view, cand: dict, kind: str, papers: list[Paper], form: str) -> list[dict]:
    messages = answer_messages(view, cand["question"], papers, form)
    if kind == "same_paper":  # the right paper without the passages that hold the answer
        evidence_sections = {lab["section"] for lab in cand["labels"] if lab["relevance"] == "direct"}
        messages = [
            messages[0],
            {
                **messages[1],
                "content": messages[1]["content"].replace(
                    "From the paper above",
                    f"From the paper above, leaving aside its sections {sorted(evidence_sections)}",
                ),
            },
        ]
    return messages


async def _grounded_options(ctx, cand: dict, spec: ModelSpec) -> dict:
    view, s = ctx.view, ctx.settings
    sib = siblings(view, cand, s.seed)
    if not sib:
        return NO_SIBLING
    seed, targets = view.papers[cand["seed"]], [view.papers[t] for t in cand["targets"]]
    messages = grounded_options_messages(view, cand, seed, view.papers[sib[0]], targets, answer_form(cand["answer"]))
    texts = grounded_texts(view, cand["seed"], sib[0], cand["targets"])

    def validate(reply: str) -> tuple[dict[str, str], dict[str, str]]:
        return validate_grounded(reply, cand["answer"], cand.get("evidence") or [], texts, s.too_close)

    try:
        options, sources = await ctx.ask(spec, messages, validate, "distractors", f"{cand['id']}/grounded")
    except Unusable as exc:
        return {"drop": {"reason": exc.reason, "detail": f"grounded: {exc.detail}"}}
    return {"options": options, "sources": sources}


async def _model_options(ctx, cand: dict, kinds: list[str], spec: ModelSpec) -> dict:
    view, s = ctx.view, ctx.settings
    taken = [cand["answer"]]
    out = {}
    form = answer_form(cand["answer"])
    asks = {}
    for kind in kinds:
        papers = _sources(view, cand, kind, s)
        if papers is None:
            return NO_SIBLING
        asks[kind] = _option_messages(view, cand, kind, papers, form)
    # Batch mode: the first request of every kind in one round (none depends on another's reply).
    ctx.prefetch([(spec, m, f"{cand['id']}/{kind}") for kind, m in asks.items()], "distractors")
    for kind, messages in asks.items():

        def validate(reply: str) -> str:
            return validate_option(reply, cand["answer"], taken, s.too_close)

        try:
            out[kind] = await ctx.ask(spec, messages, validate, "distractors", f"{cand['id']}/{kind}")
        except Unusable as exc:
            return {"drop": {"reason": exc.reason, "detail": f"{kind}: {exc.detail}"}}
        taken.append(out[kind])
    return out


async def _informed_options(ctx, cand: dict, kinds: list[str], spec: ModelSpec) -> dict:
    view, s = ctx.view, ctx.settings
    sib = siblings(view, cand, s.seed)
    if "wrong_paper" in kinds and not sib:
        return NO_SIBLING
    sibling = view.papers[sib[0]] if sib else None
    messages = informed_options_messages(
        view, cand, kinds, view.papers[cand["seed"]], sibling, answer_form(cand["answer"])
    )

    def validate(reply: str) -> dict[str, str]:
        return validate_informed(reply, kinds, cand["answer"], s.too_close)

    try:
        return await ctx.ask(spec, messages, validate, "distractors", f"{cand['id']}/informed")
    except Unusable as exc:
        return {"drop": {"reason": exc.reason, "detail": f"informed: {exc.detail}"}}


async def _restated(ctx, cand: dict, item: dict, spec: ModelSpec) -> dict:
    """The shuffled item with every option restated in one register (kept as written in ``written_options``)."""
    if values_only(cand["answer"]):
        return item
    options = item["options"]

    def validate(reply: str) -> list[str]:
        return validate_restated(reply, options, ctx.settings.too_close)

    messages = restate_messages(cand["question"], options)
    try:
        restated = await ctx.ask(spec, messages, validate, "distractors", f"{cand['id']}/restate")
    except Unusable as exc:
        return {"drop": {"reason": exc.reason, "detail": f"restate: {exc.detail}"}}
    return {**item, "options": restated, "written_options": options}


def shuffle(cand: dict, wrong: dict, seed: int) -> dict:
    kinds = ["correct", *wrong]
    texts = [cand["answer"], *wrong.values()]
    order = list(range(len(kinds)))
    random.Random(digest(f"{seed}:{cand['id']}")).shuffle(order)
    return {
        "options": [texts[i] for i in order],
        "distractor_types": [kinds[i] for i in order],
        "correct_index": order.index(0),
    }


async def run_distractors(ctx, cands: list[dict]) -> list[dict]:
    view, s = ctx.view, ctx.settings
    kinds = wrong_kinds(s.same_paper)
    spec = ModelSpec.parse(s.generator)

    async def one(cand: dict) -> dict:
        extra: dict = {}
        if spec.offline and "slots" in cand and not s.same_paper:
            wrong = offline_items.options(view, cand, siblings(view, cand, s.seed), s.seed)
        elif spec.offline:
            wrong = _offline_options(view, cand, kinds, s)
        elif s.grounded_distractors:
            grounded = await _grounded_options(ctx, cand, spec)
            if "drop" in grounded:
                return {**cand, **grounded}
            wrong, extra = grounded["options"], {"wrong_sources": grounded["sources"]}
        elif s.informed_distractors:
            wrong = await _informed_options(ctx, cand, kinds, spec)
        else:
            wrong = await _model_options(ctx, cand, kinds, spec)
        if "drop" in wrong:
            return {**cand, **wrong}
        item = {**shuffle(cand, wrong, s.seed), **extra}
        if s.restate_options and not spec.offline:
            item = await _restated(ctx, cand, item, spec)
        return {**cand, **item}

    return await ctx.each("distractors", cands, one)
