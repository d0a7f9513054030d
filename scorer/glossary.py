"""What the report's category names mean, in words: the report's glossary, so that a table's
``Prem`` or ``seed_only`` links to its definition, offline. docs/scoring.md
holds the full definitions; these are their one-sentence forms."""

from __future__ import annotations

import re

# (group title, {term: meaning}), in the order the report shows them.
GROUPS: tuple[tuple[str, dict[str, str]], ...] = (
    (
        "Audit: what happened to the target papers",
        {
            "Correct": "the answer is the correct option.",
            "Incorrect, target inspected": "wrong, although a section read of a gold paper was executed.",
            "Incorrect, target exposed but not inspected": "wrong; a gold paper was shown (in search hits or a reference list) but never read.",
            "Incorrect, neither": "wrong, and no gold paper was ever shown or read.",
            "Unobservable (no log)": "the item is in the item set but has no session in the log.",
        },
    ),
    (
        "Stopping in the paper's three scopes (its Table 9)",
        {
            "0-Gold": "MT-fail: the trajectory ends without reading any gold paper.",
            "Prem": "MT-fail: a gold paper was read, then no further read or navigation call (premature commit).",
            "Explored": "MT-fail: after the first gold read it navigated or read non-gold papers, yet missed the second gold paper.",
            "Stayed": "MT-fail: after the first gold read it only read the gold paper already reached.",
            "Imm": "ST and MT-both: submit_answer straight after the gold read (the read completing the set, for MT-both).",
            "Thnk": "ST and MT-both: think, then submit_answer.",
            "Read": "ST and MT-both: more section reads before submitting.",
            "rest (navigation without reading; residual)": "ST and MT-both: navigation calls without a read, the residual the paper leaves unnamed.",
        },
    ),
    (
        "After a read of a non-gold paper: the next call",
        {
            "recover": "a section read of a gold paper.",
            "stay": "a section read of another non-gold paper.",
            "think": "a think call.",
            "renavigate": "search_papers, get_references, get_paper_info or list_sections.",
            "submit": "submit_answer.",
            "end": "no further call.",
        },
    ),
    (
        "Failure attribution: the kind of wrong option chosen",
        {
            "seed_only": "an option supported by the seed paper alone, not by the cited evidence.",
            "wrong_paper": "an option supported by a paper other than the gold one.",
            "same_paper": "the right paper, but a wrong passage of it.",
            "no_context": "an option no paper supports.",
            "unknown": "the item records no distractor types.",
            "no_answer": "no submission (or no log).",
        },
    ),
    (
        "Endings",
        {
            "answer": "the agent submitted an answer.",
            "budget": "two calls in a row were refused because the budget could not pay for them.",
            "max_turns": "the turn cap was reached.",
            "token_limit": "the token cap was reached.",
            "empty_response": "the model sent two empty responses in a row (no text, no tool call), the second after a nudge.",
            "error": "the model API or the client failed for good.",
            "abandoned": "the client stopped without an ending (or a person gave up).",
        },
    ),
)

TERMS: dict[str, str] = {term: meaning for _, group in GROUPS for term, meaning in group.items()}
SOURCE = "docs/scoring.md"


def anchor(term: str) -> str:
    """The glossary entry's fragment identifier (letters, digits and '-' only)."""
    return "g-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def known(term: str) -> bool:
    return term in TERMS
