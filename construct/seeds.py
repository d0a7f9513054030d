"""Stage 1, seeds: papers with text and enough in-corpus references to grow chains from.

A seed needs text, between ``min_refs`` and ``max_refs`` references in the corpus
(the ceiling keeps surveys out), at least one reference with text, and a title
that is not a survey, tutorial or position paper's. Optional strata: venues, a
year range, and at most ``per_stratum`` seeds per (venue, year), chosen by the
run's random seed. Older papers need more citations: a paper ``k`` years older
than the newest paper with text needs ``k * citations_per_year`` citing papers in
the corpus (rounded up), so an old seed is one its field kept building on (SPEC 8,
stage 1). A paper without a year is not held to it.
"""

from __future__ import annotations

import math
import re

from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.stagefiles import digest

_NOT_RESEARCH = re.compile(r"\b(survey|tutorial|position paper|a review|overview of|literature review)\b", re.I)


def _drop(pid: str, reason: str, detail: str = "") -> dict:
    return {"id": pid, "drop": {"reason": reason, "detail": detail}}


def select_seeds(view: CorpusView, s) -> list[dict]:
    out: list[dict] = []
    strata: dict[tuple, list[dict]] = {}
    venues = {v.casefold() for v in s.venues}
    cited_by: dict[str, int] = {}
    for citing, refs in view.refs.items():
        for cited in {c for c, _ in refs if c != citing}:
            cited_by[cited] = cited_by.get(cited, 0) + 1
    newest = max((p.year for p in view.papers.values() if p.has_text and p.year), default=None)
    for pid, paper in view.papers.items():
        if not paper.has_text:
            continue  # papers without text are not candidates at all (most of a corpus is metadata-only)
        refs = view.references(pid)
        if venues and (paper.venue or "").casefold() not in venues:
            out.append(_drop(pid, "outside_strata", f"venue {paper.venue!r}"))
        elif s.years and (paper.year is None or not s.years[0] <= paper.year <= s.years[1]):
            out.append(_drop(pid, "outside_strata", f"year {paper.year}"))
        elif len(refs) < s.min_refs:
            out.append(_drop(pid, "too_few_references", f"{len(refs)} < {s.min_refs}"))
        elif len(refs) > s.max_refs:
            out.append(_drop(pid, "too_many_references", f"{len(refs)} > {s.max_refs} (a survey?)"))
        elif (
            paper.year
            and newest
            and cited_by.get(pid, 0) < (need := math.ceil((newest - paper.year) * s.citations_per_year))
        ):
            out.append(
                _drop(
                    pid,
                    "too_few_citations_for_age",
                    f"{cited_by.get(pid, 0)} < {need} ({newest - paper.year} years old)",
                )
            )
        elif _NOT_RESEARCH.search(paper.title):
            out.append(_drop(pid, "survey_or_tutorial", paper.title))
        elif not any(view.has_text(cited) for cited, _ in refs if cited != pid):
            out.append(_drop(pid, "no_reference_with_text"))
        else:
            record = {"id": pid, "venue": paper.venue, "year": paper.year, "n_refs": len(refs)}
            out.append(record)
            strata.setdefault((paper.venue, paper.year), []).append(record)
    if s.per_stratum:
        for members in strata.values():
            ranked = sorted(members, key=lambda r: digest(f"{s.seed}:{r['id']}"))
            for r in ranked[s.per_stratum :]:
                r["drop"] = {"reason": "stratum_full", "detail": f"{r['venue']} {r['year']}"}
    return out
