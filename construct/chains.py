"""Stage 2, chains: seed -> target (depth 1) and seed -> bridge -> target (depth 2), single- and multi-target.

Every paper on a chain has text. Pre-filters per hop (citing -> cited): the two
papers' reference lists overlap (Jaccard >= ``min_overlap``; a paper with no
known references cannot be measured and passes), and the citing paper's citation
sentence is substantive (at least ``min_context`` characters, nothing the PDF
converter merged into it such as a footnote, a URL or table cells, no author-year mark only of other works
(``marks_other_work``: the converter linked the sentence to the wrong reference), and with
``method_or_result`` a method or result cue rather than background only), and
it cites at most ``max_cited_together`` works: a sentence that cites a list of
works for a topic says nothing about any one of them, so its hop is navigation
only, whatever cue words the list sentence has. A
cited paper may be at most ``max_target_age`` years older than the citing one
(the published year rule: targets published too early). An optional model judge then scores each hop 1-5 (would a reader of the citing
paper want to follow this citation?); chains keep a minimum of ``judge_min``.
"""

from __future__ import annotations

import re
import unicodedata

from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.sanity import window
from agenthop.construct.stagefiles import canonical, digest
from agenthop.construct.textspans import AUTHOR_YEAR

_CUES = re.compile(
    r"\b(use[sd]?|using|adopt\w*|follow\w*|based on|buil[dt] on|appl(?:y|ied|ies)|employ\w*|method\w*|approach\w*|algorithm\w*|"
    r"architecture\w*|model\w*|framework\w*|technique\w*|procedure\w*|train\w*|protocol\w*|pipeline\w*|extend\w*|propos\w*|introduc\w*|"
    r"report\w*|show\w*|found|find\w*|achiev\w*|outperform\w*|improv\w*|accura\w*|result\w*|score\w*|perform\w*|gain\w*|reduc\w*|"
    r"increas\w*|measur\w*|evaluat\w*|benchmark\w*|data\w*|annotat\w*|agreement|estimat\w*|effect\w*|observ\w*|demonstrat\w*)\b",
    re.I,
)


# What a PDF converter merges into a citation sentence: a footnote ("* Corresponding author", "* Work done while ...",
# "using recurrent 7 Like Beltagy and Quirk"), a URL, or a results table's cells (four decimals or more).
_GARBLED = re.compile(
    r"(?<![\w*])\*\s*[A-Z]|corresponding author|contributed equally|work (?:was )?done (?:while|during)|https?://|"
    r"(?:\d+\.\d+\D+){3}\d+\.\d+|(?-i:[a-z,\-]\s\d{1,2}\s[A-Z][a-z])",
    re.I,
)

# An author-year mark's first author: "Mallinson et al. (2017)", "( Gu et al., 2016", "Bingel and Søgaard (2016)".
_MARK_SURNAME = re.compile(
    r"([A-Z][^\W\d_'’´\-]*(?:[-'’´][^\W\d_]+)*)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][^\W\d_'’´\-]*(?:[-'’´][^\W\d_]+)*)?"
    r"\s*[,(]?\s*\(?\s*(?:19|20)\d\d[a-z]?\b"
)


def _letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower())


def marks_other_work(view: CorpusView, cited: str, context: str) -> str | None:
    """The marks of a citation sentence when every one names a first author other than the cited paper's, else None.

    The PDF converter links a sentence to a reference by its own matching, and it can pick the wrong one of like
    authors ("Mallinson et al. (2017)" linked to Wieting, Mallinson and Gimpel 2017): the sentence then describes
    another work, and the hop leads to a paper it does not speak of. A split author name ("Alham Fikri", "Aji") is
    matched on its one-word second part too.
    """
    marks = list(_MARK_SURNAME.finditer(context))
    authors = view.papers[cited].authors
    if not marks or not authors:
        return None
    heads = [_letters(authors[0])] + (
        [_letters(authors[1])] if len(authors) > 1 and len(authors[1].split()) == 1 else []
    )
    if any(name and name in head for name in (_letters(m.group(1)) for m in marks) for head in heads):
        return None
    return ", ".join(m.group(0).strip() for m in marks)


def cited_together(view: CorpusView, citing: str, context: str) -> int:
    """How many works one citation sentence cites: the references of ``citing`` that share it, or its author-year
    marks when more (the works outside the corpus's reference list are cited there too)."""
    in_list = sum(1 for _, c in view.references(citing) if c == context)
    return max(in_list, len(AUTHOR_YEAR.findall(context)))


def chain_id(seed: str, bridge: str | None, targets: list[str]) -> str:
    return "c-" + digest(canonical([seed, bridge, targets]))[:12]


def hops(chain: dict) -> list[tuple[str, str]]:
    head = [(chain["seed"], chain["bridge"])] if chain["bridge"] else []
    via = chain["bridge"] or chain["seed"]
    return head + [(via, t) for t in chain["targets"]]


# Multi-target pairs are drawn from papers at most this many places apart among the cited papers with text. Two
# places, not one: most pairs fail the list rule on one of their two citation sentences, and with neighbours only
# multi-target items fell to a fifth of the explore release.
PAIR_SPAN = 2


def pairs(view: CorpusView, citing: str, cited: list[str], related: float | None = None) -> list[tuple[str, str]]:
    """Multi-target pairs: papers near each other in the citing paper's reference list (``PAIR_SPAN``), and papers
    it cites in one sentence.

    With ``related`` (a Jaccard), a pair is instead two papers that bear on each other wherever they are in the list:
    cited in one sentence, one citing the other, or reference lists overlapping at least that much. A reference
    list is in author order, so neighbours in it are often unrelated, and a question that must combine two
    unrelated findings is forced.
    """
    contexts = {c: view.context(citing, c) for c in cited}
    out = []
    for i, a in enumerate(cited):
        for j, b in enumerate(cited[i + 1 :], start=i + 1):
            together = bool(contexts[a]) and contexts[a] == contexts[b]
            if related is None and (j - i <= PAIR_SPAN or together):
                out.append((a, b))
            elif related is not None and (together or bear_on_each_other(view, a, b, related)):
                out.append((a, b))
    return out


def bear_on_each_other(view: CorpusView, a: str, b: str, least_overlap: float) -> bool:
    """One paper cites the other, or their reference lists overlap (Jaccard) at least ``least_overlap``."""
    if any(c == b for c, _ in view.references(a)) or any(c == a for c, _ in view.references(b)):
        return True
    overlap = _jaccard(view, a, b)
    return overlap is not None and overlap >= least_overlap


def enumerate_chains(view: CorpusView, seed: str, s) -> list[dict]:
    """All chains from ``seed`` whose papers have text; at most ``max_chains_per_seed``, sampled by the run's seed."""

    def cited_with_text(pid: str, exclude: set[str]) -> list[str]:
        return [c for c in window(view, pid) if c not in exclude and view.has_text(c)]

    chains = []

    def add(bridge: str | None, targets: list[str]) -> None:
        chains.append(
            {
                "id": chain_id(seed, bridge, targets),
                "kind": "MT" if len(targets) > 1 else "ST",
                "depth": 2 if bridge else 1,
                "seed": seed,
                "bridge": bridge,
                "targets": targets,
            }
        )

    first = cited_with_text(seed, {seed})
    for t in first:
        add(None, [t])
    if s.multi_target:
        for a, b in pairs(view, seed, first, s.related_pairs):
            add(None, [a, b])
    for bridge in first:
        second = cited_with_text(bridge, {seed, bridge})
        for t in second:
            if t not in first:  # a target the seed cites directly is a depth-1 chain already
                add(bridge, [t])
        if s.multi_target:
            far = [t for t in second if t not in first]
            for a, b in pairs(view, bridge, far, s.related_pairs):
                add(bridge, [a, b])
    seen, unique = set(), []
    for c in chains:
        if c["id"] not in seen:
            seen.add(c["id"])
            unique.append(c)
    if s.max_chains_per_seed and len(unique) > s.max_chains_per_seed:
        keep = set(sorted((c["id"] for c in unique), key=lambda i: digest(f"{s.seed}:{i}"))[: s.max_chains_per_seed])
        unique = [c for c in unique if c["id"] in keep]
    return unique


def _jaccard(view: CorpusView, a: str, b: str) -> float | None:
    ra, rb = {c for c, _ in view.references(a)}, {c for c, _ in view.references(b)}
    if not ra or not rb:
        return None
    return len(ra & rb) / len(ra | rb)


def prefilter(view: CorpusView, chain: dict, s) -> dict | None:
    """The first pre-filter the chain fails, as a drop, or None."""
    for citing, cited in hops(chain):
        context = view.context(citing, cited)
        where = f"{citing} -> {cited}"
        if not context:
            return {"reason": "no_citation_context", "detail": where}
        if len(context) < s.min_context:
            return {"reason": "short_citation_context", "detail": f"{where}: {len(context)} characters"}
        if _GARBLED.search(context):
            return {"reason": "garbled_citation_context", "detail": f"{where}: {context[:120]}"}
        if (marks := marks_other_work(view, cited, context)) is not None:
            return {
                "reason": "marks_other_work",
                "detail": f"{where}: the sentence cites {marks}, not {view.papers[cited].authors[0]}",
            }
        if s.method_or_result and not _CUES.search(context):
            return {"reason": "background_citation", "detail": f"{where}: {context[:120]}"}
        if (
            s.method_or_result
            and s.max_cited_together
            and (n := cited_together(view, citing, context)) > s.max_cited_together
        ):
            return {"reason": "list_citation", "detail": f"{where}: the sentence cites {n} works: {context[:120]}"}
        old, new = view.papers[cited].year, view.papers[citing].year
        if s.max_target_age is not None and old and new and new - old > s.max_target_age:
            return {"reason": "target_too_early", "detail": f"{where}: {old} is {new - old} years before {new}"}
        overlap = _jaccard(view, citing, cited)
        if overlap is not None and overlap < s.min_overlap:
            return {"reason": "low_reference_overlap", "detail": f"{where}: Jaccard {overlap:.3f} < {s.min_overlap}"}
    return None


def _judge_validator(reply: str) -> int:
    from agenthop.construct.prompts import BadReply, parse_json

    value = parse_json(reply).get("score")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or not 1 <= value <= 5:
        raise BadReply(f"'score' must be an integer from 1 to 5, found {value!r}")
    return value


async def run_chains(ctx, seeds: list[dict]) -> list[dict]:
    """Every enumerated chain, kept or dropped by a pre-filter or the judge."""
    from agenthop.construct.client import ModelSpec
    from agenthop.construct.context import Unusable
    from agenthop.construct.prompts import judge_messages

    view, s = ctx.view, ctx.settings
    out = [dict(c) for seed in seeds for c in enumerate_chains(view, seed["id"], s)]
    for chain in out:
        drop = prefilter(view, chain, s)
        if drop:
            chain["drop"] = drop
    if not s.judge:
        return out
    spec = ModelSpec.parse(s.judge)

    async def judge(chain: dict) -> dict:
        if "drop" in chain:
            return chain
        scores = []
        asks = [
            (spec, judge_messages(view, view.papers[a], view.papers[b], view.context(a, b)), f"{a}>{b}")
            for a, b in hops(chain)
        ]
        ctx.prefetch(asks, "chains")  # batch mode: every hop of the chain in one batch round
        for _, messages, call in asks:
            try:
                scores.append(await ctx.ask(spec, messages, _judge_validator, "chains", call))
            except Unusable as exc:
                return {**chain, "drop": {"reason": f"judge_{exc.reason}", "detail": exc.detail}}
        chain = {**chain, "judge": scores}
        if min(scores) < s.judge_min:
            chain["drop"] = {"reason": "judge_below_threshold", "detail": f"scores {scores}, need {s.judge_min}"}
        return chain

    return await ctx.each("chains", out, judge)
