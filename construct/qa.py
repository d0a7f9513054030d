"""Stage 3, Q/A: one question per chain, with the gold answer, verbatim evidence, a reasoning type and recall labels.

A model's reply is checked, not trusted: the evidence must be verbatim target
text, the answer must be supported by it, every label must name a header of a
target, each target needs a direct label, and the question must not name a
target's title or a method name it coins. A reply failing any check is retried
with the problem stated; after the last attempt the chain is dropped with it.
"""

from __future__ import annotations

from agenthop.construct import offline_items
from agenthop.construct.client import ModelSpec
from agenthop.construct.context import Unusable
from agenthop.construct.prompts import BadReply, parse_json, qa_messages
from agenthop.construct.stagefiles import digest
from agenthop.construct.textspans import (
    names_section,
    names_target,
    quoted_run,
    result_numbers,
    supported_by,
    verbatim_in,
)
from agenthop.corpus.release import COGNITIVE_SKILLS, REASONING_TYPES
from agenthop.server.sections import label_headers
from agenthop.textmatch import content_words

MT_SKILLS = ("contrast", "synthesize", "reason")  # what answering from two papers' findings together takes


def validate_qa(view, chain: dict, reply: str) -> dict:
    data = parse_json(reply)
    question, answer = data.get("question"), data.get("answer")
    if not isinstance(question, str) or not question.strip() or not isinstance(answer, str) or not answer.strip():
        raise BadReply("'question' and 'answer' must be non-empty strings")
    rtype = str(data.get("reasoning_type", "")).strip().upper()
    if rtype not in REASONING_TYPES:
        raise BadReply(
            f"'reasoning_type' must be one of {', '.join(REASONING_TYPES)}, found {data.get('reasoning_type')!r}"
        )
    skill = str(data.get("cognitive_skill", "")).strip().lower()
    multi = len(chain["targets"]) > 1
    allowed = MT_SKILLS if multi else COGNITIVE_SKILLS
    if skill not in allowed:
        raise BadReply(
            f"'cognitive_skill' must be one of {', '.join(allowed)}"
            + (" for a question that needs both targets" if multi else "")
            + f", found {data.get('cognitive_skill')!r}"
        )
    evidence = data.get("evidence")
    evidence = [evidence] if isinstance(evidence, str) else evidence
    if not isinstance(evidence, list) or not evidence or not all(isinstance(e, str) and e.strip() for e in evidence):
        raise BadReply("'evidence' must be a list of sentences copied from the target paper(s)")
    texts = {t: "\n".join(sec.text for sec in view.sections(t)) for t in chain["targets"]}
    for e in evidence:
        if not any(verbatim_in(e, text) for text in texts.values()):
            raise BadReply(
                f"the evidence {e[:80]!r} is not word for word in the target paper's text", "evidence_not_verbatim"
            )
    if not supported_by(answer, " ".join(evidence)):
        raise BadReply(f"the answer {answer[:80]!r} is not stated in the evidence", "answer_not_in_evidence")
    if multi:
        if len([p for p in answer.split(";") if p.strip()]) > 1:
            raise BadReply(
                "the answer joins two separate answers with ';': write one sentence that relates the two targets' "
                "findings (a comparison, a difference or a combination)",
                "not_synthesis",
            )
        alone = [t for t in chain["targets"] if not any(verbatim_in(e, texts[t]) for e in evidence)]
        if alone:
            raise BadReply(
                f"the evidence holds no sentence of the target {alone[0]}: the answer must need both targets",
                "one_target_evidence",
            )
    else:
        abstract = view.papers[chain["targets"][0]].abstract
        if (result_numbers(answer) or len(set(content_words(answer))) >= 2) and supported_by(answer, abstract):
            raise BadReply(
                "the target's abstract already states the answer: ask about a finding only its body reports",
                "answer_in_abstract",
            )
    labels = data.get("labels")
    if not isinstance(labels, list) or not labels:
        raise BadReply("'labels' must list the target sections holding the answer", "label_unresolved")
    clean = []
    for label in labels:
        if (
            not isinstance(label, dict)
            or label.get("paper_id") not in texts
            or label.get("relevance") not in ("direct", "supporting")
        ):
            raise BadReply(
                f"a label must give a target's paper_id, a section header and relevance direct or supporting: {label!r}",
                "label_unresolved",
            )
        headers = [sec.header for sec in view.sections(label["paper_id"])]
        if not isinstance(label.get("section"), str) or not label_headers(label["section"], headers):
            raise BadReply(
                f"the label section {label.get('section')!r} is not a header of {label['paper_id']}; "
                f"its headers are {headers}",
                "label_unresolved",
            )
        clean.append({"paper_id": label["paper_id"], "section": label["section"], "relevance": label["relevance"]})
    lacking = [
        t for t in chain["targets"] if not any(lab["paper_id"] == t and lab["relevance"] == "direct" for lab in clean)
    ]
    if lacking:
        raise BadReply(f"no direct label for the target {lacking[0]}", "label_unresolved")
    for t in chain["targets"]:
        why = names_target(question, view.papers[t].title, view.titles_naming)
        if why:
            raise BadReply(f"the question names the target paper ({why}); ask without naming it", "names_target")
    contexts = [view.context(chain["bridge"] or chain["seed"], t) or "" for t in chain["targets"]]
    if chain["bridge"]:
        contexts.append(view.context(chain["seed"], chain["bridge"]) or "")
    quote = quoted_run(question, [*texts.values(), *contexts])
    if quote:
        raise BadReply(
            f"the question quotes the papers ({quote!r}): describe what is asked in your own words", "quotes_source"
        )
    for t in chain["targets"]:
        pointer = names_section(question, [sec.header for sec in view.sections(t)])
        if pointer:
            raise BadReply(
                f"the question points at a part of the target paper ({pointer}): ask without naming sections, "
                "tables or figures",
                "names_section",
            )
    return {
        "question": question.strip(),
        "answer": answer.strip(),
        "evidence": evidence,
        "reasoning_type": rtype,
        "cognitive_skill": skill,
        "labels": clean,
    }


def qa_turn(chain: dict, seed: int) -> tuple[int, str]:
    """A chain's place in Q/A's order when each target serves one item: multi-target first, then salted."""
    return -len(chain["targets"]), digest(f"{seed}:qa:{chain['id']}")


def one_per_target(chains: list[dict], seed: int) -> tuple[list[dict], dict[str, str]]:
    """The chains asked so that each target paper is asked about once, in their turns; and the chains left out:
    chain id -> the chain that has its target.

    Chains take their turns (``qa_turn``) in a salted order, multi-target chains first (they need two free targets, and
    a capped Q/A keeps them first), so a model is never asked a question the post-filter would drop for repeating
    a paper.
    """
    owner: dict[str, str] = {}
    asked: list[dict] = []
    taken: dict[str, str] = {}
    for chain in sorted(chains, key=lambda c: qa_turn(c, seed)):
        holder = next((owner[t] for t in chain["targets"] if t in owner), None)
        if holder:
            taken[chain["id"]] = holder
        else:
            owner.update((t, chain["id"]) for t in chain["targets"])
            asked.append(chain)
    return asked, taken


async def run_qa(ctx, chains: list[dict]) -> list[dict]:
    view, s = ctx.view, ctx.settings
    chains = [c for c in chains if "drop" not in c]
    if s.one_item_per_target:  # capped in the order the targets were shared out: multi-target chains first
        asked, taken = one_per_target(chains, s.seed)
        sampled = set(c["id"] for c in asked[: s.max_qa])
    else:
        taken = {}
        sampled = set(sorted((c["id"] for c in chains), key=lambda i: digest(f"{s.seed}:qa:{i}"))[: s.max_qa])
    spec = ModelSpec.parse(s.generator)
    if spec.offline:  # one pass in a fixed order, so that chains to one target ask different sentences
        turn = [c for c in chains if c["id"] in sampled]
        made = dict(zip((c["id"] for c in turn), offline_items.generate_all(view, turn, s.seed, s.min_strength)))

    async def one(chain: dict) -> dict:
        if chain["id"] in taken:
            return {
                **chain,
                "drop": {"reason": "target_taken", "detail": f"{taken[chain['id']]} asks about its target"},
            }
        if chain["id"] not in sampled:
            return {**chain, "drop": {"reason": "not_sampled", "detail": f"--max-qa {s.max_qa}"}}
        if spec.offline:
            return {**chain, **made[chain["id"]]}
        contexts = [view.context(chain["bridge"] or chain["seed"], t) or "" for t in chain["targets"]]
        messages = qa_messages(
            view,
            view.papers[chain["seed"]],
            view.papers.get(chain["bridge"]) if chain["bridge"] else None,
            [view.papers[t] for t in chain["targets"]],
            contexts,
        )
        try:
            return {
                **chain,
                **await ctx.ask(spec, messages, lambda reply: validate_qa(view, chain, reply), "qa", chain["id"]),
            }
        except Unusable as exc:
            return {**chain, "drop": {"reason": exc.reason, "detail": exc.detail}}

    return await ctx.each("qa", chains, one)
