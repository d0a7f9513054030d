"""How a wrong-option writer's reply is checked: each option in the gold's form, no two too close, a grounded option's
quote word for word in its paper, a restatement keeping every figure. The distractors stage asks; these decide what
it keeps (and ``tools/answer_batch.py`` checks a stand-in's reply with them before handing it in).
"""

from __future__ import annotations

import json

from agenthop.construct.prompts import LONE_VALUE, BadReply, form_problem, parse_json
from agenthop.construct.textspans import closeness, supported_by, verbatim_in


def too_close(option: str, taken: list[str], limit: float) -> str | None:
    """The first of ``taken`` whose words ``option`` shares too many of (token Jaccard at least ``limit``), or None."""
    return next((t for t in taken if closeness(option, t) >= limit), None)


def wrong_kinds(same_paper: bool) -> list[str]:
    """The wrong options' sources: with ``same_paper``, the right paper's other passage takes no_context's place."""
    return ["seed_only", "wrong_paper", "same_paper" if same_paper else "no_context"]


def validate_option(reply: str, gold: str, taken: list[str], limit: float) -> str:
    """A model's wrong option from its reply: an answer in the gold's form, not too close to one already ``taken``."""
    return checked_option(parse_json(reply).get("answer"), "answer", gold, taken, limit)


def validate_informed(reply: str, kinds: list[str], gold: str, limit: float) -> dict[str, str]:
    """Every wrong option of an informed writer's reply, each checked as ``validate_option`` checks one."""
    value = parse_json(reply)
    taken, out = [gold], {}
    for kind in kinds:
        out[kind] = checked_option(value.get(kind), kind, gold, taken, limit)
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


def grounded_texts(view, seed: str, sibling: str, targets: list[str]) -> dict[str, list[str]]:
    """Where each grounded option's quote must be found: kind -> the full texts of its papers."""
    return {
        "seed_only": [paper_text(view, seed)],
        "wrong_paper": [paper_text(view, sibling)],
        "same_paper": [paper_text(view, t) for t in targets],
    }


def values_only(gold: str) -> bool:
    """Every part of the gold is a lone value (its digits are its form: nothing to restate or balance in words)."""
    return all(LONE_VALUE.fullmatch(p.strip()) for p in gold.split("; "))


def length_spread(options: dict[str, str], gold: str) -> str | None:
    """What is wrong with the lengths of a writer's options, who saw the gold: each within 15% of its words, and one
    longer than it. A writer shown the gold writes a little short of it, which would make the gold the longest
    option; this way it never is (and guessing among the other three is 33%)."""
    if values_only(gold):
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


def checked_option(answer: object, key: str, gold: str, taken: list[str], limit: float) -> str:
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
