"""Stage 4, distractors: three (or four) wrong options, each a genuine answer from the wrong source.

``seed_only`` is answered from the seed, ``wrong_paper`` from a sibling reference
(another paper with text cited by the target's citing paper), ``no_context``
with no paper at all; ``same_paper`` (instead of ``no_context`` when asked for)
from the target without the sections that hold the evidence. An option too close to the gold or to another
option (token Jaccard >= ``too_close``) is asked for again; the options are then
shuffled with a random generator seeded by the run's seed and the candidate.
"""

from __future__ import annotations

import random

from agenthop.construct import offline_filter, offline_items
from agenthop.construct.client import ModelSpec
from agenthop.construct.context import Unusable
from agenthop.construct.corpus_view import Paper
from agenthop.construct.offline_items import siblings
from agenthop.construct.prompts import BadReply, answer_form, answer_messages, form_problem, parse_json
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import closeness, perturb_numbers


def too_close(option: str, taken: list[str], limit: float) -> str | None:
    """The first of ``taken`` whose words ``option`` shares too many of (token Jaccard at least ``limit``), or None."""
    return next((t for t in taken if closeness(option, t) >= limit), None)


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


def validate_option(reply: str, gold: str, taken: list[str], limit: float) -> str:
    """A model's wrong option from its reply: an answer in the gold's form, not too close to one already ``taken``."""
    answer = parse_json(reply).get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise BadReply("'answer' must be a non-empty string")
    problem = form_problem(answer.strip(), gold)
    if problem:
        raise BadReply(problem, "distractor_wrong_form")
    close = too_close(answer, taken, limit)
    if close:
        raise BadReply(
            f"that answer is nearly the same as one already given ({close!r}); give a different specific answer",
            "distractor_too_close",
        )
    return answer.strip()


async def _model_options(ctx, cand: dict, kinds: list[str], spec: ModelSpec) -> dict:
    view, s = ctx.view, ctx.settings
    taken = [cand["answer"]]
    out = {}
    form = answer_form(cand["answer"])
    asks = {}
    for kind in kinds:
        papers = _sources(view, cand, kind, s)
        if papers is None:
            return {
                "drop": {"reason": "no_sibling_with_text", "detail": "the citing paper cites no other paper with text"}
            }
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
    # An item has four options: with same_paper, the right paper's other passage takes no_context's place.
    kinds = ["seed_only", "wrong_paper", "same_paper" if s.same_paper else "no_context"]
    spec = ModelSpec.parse(s.generator)

    async def one(cand: dict) -> dict:
        if spec.offline and "slots" in cand and not s.same_paper:
            wrong = offline_items.options(view, cand, siblings(view, cand, s.seed), s.seed)
        elif spec.offline:
            wrong = _offline_options(view, cand, kinds, s)
        else:
            wrong = await _model_options(ctx, cand, kinds, spec)
        if "drop" in wrong:
            return {**cand, **wrong}
        return {**cand, **shuffle(cand, wrong, s.seed)}

    return await ctx.each("distractors", cands, one)
