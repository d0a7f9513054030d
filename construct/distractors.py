"""Stage 4, distractors: three (or four) wrong options, each a genuine answer from the wrong source.

``seed_only`` is answered from the seed, ``wrong_paper`` from a sibling reference
(another paper with text cited by the target's citing paper), ``no_context``
with no paper at all; ``same_paper`` (instead of ``no_context`` when asked for)
from the target without the sections that hold the evidence. With ``informed_distractors`` one writer, shown the
gold, writes every wrong option in one reply (see ``informed_options_messages``); with ``restate_options`` a writer
not told which is right then rewrites all four in one register (``restate_messages``). An option too close to the gold or to another
option (token Jaccard >= ``too_close``) is asked for again; the options are then
shuffled with a random generator seeded by the run's seed and the candidate.
"""

from __future__ import annotations

import json
import random

from agenthop.construct import offline_filter, offline_items
from agenthop.construct.client import ModelSpec
from agenthop.construct.context import Unusable
from agenthop.construct.corpus_view import Paper
from agenthop.construct.offline_items import siblings
from agenthop.construct.prompts import (
    LONE_VALUE,
    BadReply,
    answer_form,
    answer_messages,
    form_problem,
    grounded_options_messages,
    informed_options_messages,
    parse_json,
    restate_messages,
)
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import closeness, perturb_numbers, supported_by, verbatim_in


def too_close(option: str, taken: list[str], limit: float) -> str | None:
    """The first of ``taken`` whose words ``option`` shares too many of (token Jaccard at least ``limit``), or None."""
    return next((t for t in taken if closeness(option, t) >= limit), None)


def wrong_kinds(same_paper: bool) -> list[str]:
    """The wrong options' sources: with ``same_paper``, the right paper's other passage takes no_context's place."""
    return ["seed_only", "wrong_paper", "same_paper" if same_paper else "no_context"]


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
    return _checked_option(parse_json(reply).get("answer"), "answer", gold, taken, limit)


def validate_informed(reply: str, kinds: list[str], gold: str, limit: float) -> dict[str, str]:
    """Every wrong option of an informed writer's reply, each checked as ``validate_option`` checks one."""
    value = parse_json(reply)
    taken, out = [gold], {}
    for kind in kinds:
        out[kind] = _checked_option(value.get(kind), kind, gold, taken, limit)
        taken.append(out[kind])
    problem = length_spread(out, gold)
    if problem:
        raise BadReply(problem, "distractor_wrong_form")
    return out


def validate_grounded(
    reply: str, gold: str, evidence: list[str], texts: dict[str, list[str]], limit: float
) -> tuple[dict[str, str], dict[str, str]]:
    """A grounded writer's wrong options and the sentences each restates: every source word for word in one of its
    kind's papers (``texts``: kind -> the papers' full texts), never the gold's evidence, and stating the option's
    figures and most of its words; then the checks of ``validate_informed``."""
    value = parse_json(reply)
    options, sources = {}, {}
    for kind, papers in texts.items():
        entry = value.get(kind)
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("answer", "source")):
            raise BadReply(f"'{kind}' must be an object with an 'answer' and a 'source' string")
        answer, source = entry["answer"].strip(), entry["source"].strip()
        if not any(verbatim_in(source, text) for text in papers):
            raise BadReply(f"{kind}: its source is not word for word in that paper's text", "distractor_not_grounded")
        if any(verbatim_in(e, source) or verbatim_in(source, e) for e in evidence):
            raise BadReply(f"{kind}: its source is the correct answer's evidence", "distractor_not_grounded")
        if not supported_by(answer, source):
            raise BadReply(
                f"{kind}: the answer must restate its source (every figure and most of its words from it)",
                "distractor_not_grounded",
            )
        options[kind], sources[kind] = answer, source
    checked = validate_informed(json.dumps(options), list(texts), gold, limit)
    return checked, sources


def paper_text(view, pid: str) -> str:
    """A paper's whole text as the corpus holds it: its abstract and every section."""
    paper = view.papers[pid]
    return "\n".join([paper.abstract or "", *(sec.text for sec in view.sections(pid))])


async def _grounded_options(ctx, cand: dict, spec: ModelSpec) -> dict:
    view, s = ctx.view, ctx.settings
    sib = siblings(view, cand, s.seed)
    if not sib:
        return {"drop": {"reason": "no_sibling_with_text", "detail": "the citing paper cites no other paper with text"}}
    seed, targets = view.papers[cand["seed"]], [view.papers[t] for t in cand["targets"]]
    messages = grounded_options_messages(view, cand, seed, view.papers[sib[0]], targets, answer_form(cand["answer"]))
    texts = {
        "seed_only": [paper_text(view, cand["seed"])],
        "wrong_paper": [paper_text(view, sib[0])],
        "same_paper": [paper_text(view, t) for t in cand["targets"]],
    }

    def validate(reply: str) -> tuple[dict[str, str], dict[str, str]]:
        return validate_grounded(reply, cand["answer"], cand.get("evidence") or [], texts, s.too_close)

    try:
        options, sources = await ctx.ask(spec, messages, validate, "distractors", f"{cand['id']}/grounded")
    except Unusable as exc:
        return {"drop": {"reason": exc.reason, "detail": f"grounded: {exc.detail}"}}
    return {"options": options, "sources": sources}


def length_spread(options: dict[str, str], gold: str) -> str | None:
    """What is wrong with the lengths of a writer's options, who saw the gold: each within 15% of its words, and one
    longer than it. Writers shown the gold write a little short of it, which made the gold the longest option in
    three items of five; now it is never the longest (guessing among the other three is 33%)."""
    if all(LONE_VALUE.fullmatch(p.strip()) for p in gold.split("; ")):
        return None  # a value's digits are its form (form_problem)
    n = len(gold.split())
    low, high = round(0.85 * n), max(round(1.15 * n), n + 1)
    for kind, option in options.items():
        if not low <= len(option.split()) <= high:
            return f"{kind} has {len(option.split())} words; each wrong answer needs {low} to {high} (the correct answer has {n})"
    if not any(len(o.split()) > n for o in options.values()):
        return (
            f"no wrong answer is longer than the correct answer ({n} words): make one of them {n + 1} to {high} words"
        )
    return None


def _checked_option(answer: object, key: str, gold: str, taken: list[str], limit: float) -> str:
    if not isinstance(answer, str) or not answer.strip():
        raise BadReply(f"'{key}' must be a non-empty string")
    problem = form_problem(answer.strip(), gold)
    if problem:
        raise BadReply(f"{key}: {problem}" if key != "answer" else problem, "distractor_wrong_form")
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


async def _informed_options(ctx, cand: dict, kinds: list[str], spec: ModelSpec) -> dict:
    view, s = ctx.view, ctx.settings
    sib = siblings(view, cand, s.seed)
    if "wrong_paper" in kinds and not sib:
        return {"drop": {"reason": "no_sibling_with_text", "detail": "the citing paper cites no other paper with text"}}
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


def restate_bounds(options: list[str]) -> tuple[int, int]:
    """The words a restated option may have: within 15% of the options' median length (two words for short ones)."""
    median = sorted(len(o.split()) for o in options)[len(options) // 2]
    return max(min(round(0.85 * median), median - 2), 1), max(round(1.15 * median), median + 2)


def validate_restated(reply: str, options: list[str], limit: float) -> list[str]:
    """The options as a writer restated them, in order: each keeps its figures, all of like length, none too close to
    another."""
    from agenthop.construct.artifacts import finding_numbers  # the artifact check's reading (imported late: heavy)

    value = parse_json(reply)
    low, high = restate_bounds(options)
    out: list[str] = []
    for letter, old in zip("ABCD", options):
        new = value.get(letter)
        if not isinstance(new, str) or not new.strip():
            raise BadReply(f"'{letter}' must be a non-empty string", "distractor_wrong_form")
        new = new.strip()
        if sorted(finding_numbers(new)) != sorted(finding_numbers(old)):
            figures = ", ".join(finding_numbers(old)) or "none"
            raise BadReply(
                f"option {letter} must keep its figures exactly as given (its figures: {figures})",
                "distractor_wrong_form",
            )
        if not low <= len(new.split()) <= high:
            raise BadReply(
                f"option {letter} has {len(new.split())} words; write {low} to {high}", "distractor_wrong_form"
            )
        close = too_close(new, out, limit)
        if close:
            raise BadReply(
                f"option {letter} is nearly the same as another option ({close!r}); keep them distinct",
                "distractor_too_close",
            )
        out.append(new)
    return out


async def _restated(ctx, cand: dict, item: dict, spec: ModelSpec) -> dict:
    """The shuffled item with every option restated in one register (kept as written in ``written_options``)."""
    if all(LONE_VALUE.fullmatch(p.strip()) for p in cand["answer"].split("; ")):
        return item  # values only: nothing to restate
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
