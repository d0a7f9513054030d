"""When a construction stage leaves nothing: which rule removed the candidates, and which option relaxes it.

A first run on a small folder of papers often ends with an empty release. The attrition table
says what each stage dropped; this module turns the first stage that kept nothing into sentences
a person can act on: each drop reason with its count and the option (and current value) that
relaxes it, or what to change when no option does.
"""

from __future__ import annotations

from agenthop.construct.settings import Settings

# reason -> (the option that relaxes it, or None; a sentence with {value}/{suggest} where an option applies)
RELAX: dict[str, tuple[str | None, str]] = {
    "too_few_references": (
        "--min-refs",
        "a seed needs at least --min-refs references in the corpus ({value}); lower it, e.g. --min-refs 1",
    ),
    "too_many_references": (
        "--max-refs",
        "a seed may have at most --max-refs references ({value}, to keep surveys out); raise it, e.g. --max-refs 1000",
    ),
    "too_few_citations_for_age": (
        "--citations-per-year",
        "an older seed needs more citing papers in the corpus (--citations-per-year "
        "{value} per year of age); a folder of a few papers cites itself little: "
        "lower it, e.g. --citations-per-year 0",
    ),
    "target_too_early": (
        "--max-target-age",
        "a cited paper may be at most --max-target-age years ({value}) older than the paper citing it; raise it",
    ),
    "no_same_type_value": (
        None,
        "an item needs three wrong answers of the gold's type and form, each from a genuine source (the "
        "seed's other references, a sibling reference, the corpus's values of that type); no option "
        "relaxes this: a folder this small has too few such values, so add papers (tens at least)",
    ),
    "no_balanced_options": (
        None,
        "the wrong answers found could not put the gold at its drawn rank among the options; no option "
        "relaxes this: add papers, or try another --seed",
    ),
    "repeated_blank": (
        None,
        "each blanked sentence of a cited paper is asked once per release; the other items asking it were "
        "dropped; no option relaxes this",
    ),
    "no_reference_with_text": (
        None,
        "a seed needs a reference whose full text is in the corpus; no option relaxes this: "
        "add the papers your papers cite to the folder",
    ),
    "low_reference_overlap": (
        "--min-overlap",
        "adjacent papers of a chain must share references (Jaccard {value}); lower it, e.g. --min-overlap 0",
    ),
    "short_citation_context": (
        "--min-context",
        "the citation sentence must be at least --min-context characters ({value}); lower it, e.g. --min-context 0",
    ),
    "background_citation": (
        "--any-citation-intent",
        "only citations of a method or result are kept; --any-citation-intent keeps background citations too",
    ),
    "list_citation": (
        "--max-cited-together",
        "a citation sentence may cite at most {value} works (more is a list of related "
        "work, and the hop is navigation only); raise it, or 0 turns the rule off",
    ),
    "garbled_citation_context": (
        None,
        "the citation sentence holds a footnote, a URL or table cells the PDF converter merged "
        "into it, so the question could not quote it; no option relaxes this",
    ),
    "marks_other_work": (
        None,
        "the citation sentence's author-year marks all name other first authors than the cited paper's: "
        "the converter linked it to the wrong reference; no option relaxes this",
    ),
    "no_citation_context": (None, "the citing paper has no sentence around the citation; no option relaxes this"),
    "judge_below_threshold": ("--judge-min", "the judge scored the hop below --judge-min ({value}); lower it"),
    "no_fact_sentence": (
        "--min-strength",
        "the offline generator found no sentence stating a finding of strength --min-strength "
        "({value}) or more to ask about; lower it (0 takes any sentence with a value), or a model "
        "generator (--generator NAME@BASE_URL) writes questions from any section",
    ),
    "names_target": (
        "--generator",
        "the offline generator's question named the cited paper; a model generator may not",
    ),
    "quotes_source": (
        "--attempts",
        "the model's question quoted the target or the citing sentence; more --attempts ({value}) give it more "
        "chances to paraphrase, or use a stronger generator",
    ),
    "names_section": (
        "--attempts",
        "the model's question pointed at a section, table or figure; more --attempts ({value}) give it more chances",
    ),
    "answer_in_abstract": (
        None,
        "the target's abstract already states the answer the model chose: a headline, not a finding of the body; "
        "no option relaxes this",
    ),
    "not_synthesis": (
        "--attempts",
        "the model joined two answers with ';' instead of relating the two targets; more --attempts ({value}) help",
    ),
    "one_target_evidence": (
        "--attempts",
        "the model's evidence came from one target of a two-target question; more --attempts ({value}) help",
    ),
    "no_sibling_with_text": (
        None,
        "wrong options come from other references with text; add more of the cited papers to the folder",
    ),
    "no_distractor_source": (
        "--generator",
        "no source for wrong options; a model generator (--generator NAME@BASE_URL) writes them",
    ),
    "section_too_long": (
        "--max-section-chars",
        "a section on the gold path is longer than --max-section-chars ({value}); raise it",
    ),
    "label_unresolved": (
        None,
        "a label names no section header: repoint it on the review page (agenthop-construct review) and run again",
    ),
    "removed_by_auditor": (None, "an auditor removed it on the review page"),
    "target_taken": (
        "--one-item-per-target",
        "each target paper serves one item (--one-item-per-target); leave it out to ask several items of one paper",
    ),
}

VALUES = {
    "--min-refs": "min_refs",
    "--max-refs": "max_refs",
    "--min-overlap": "min_overlap",
    "--min-context": "min_context",
    "--judge-min": "judge_min",
    "--max-section-chars": "max_section_chars",
    "--citations-per-year": "citations_per_year",
    "--max-target-age": "max_target_age",
    "--max-cited-together": "max_cited_together",
    "--min-strength": "min_strength",
    "--attempts": "attempts",
}


def empty_stage(attrition: dict) -> dict | None:
    """The first attrition row that kept nothing (every later stage then has nothing to work on), or None."""
    return next((row for row in attrition.get("rows", []) if row.get("kept") == 0), None)


def why_empty(attrition: dict, settings: Settings) -> list[str]:
    """Lines saying which stage left nothing, each reason it dropped with the option that relaxes it; [] when none did."""
    row = empty_stage(attrition)
    if row is None:
        return []
    name = row.get("name", row.get("stage", "a stage"))
    if not row.get("entered"):
        if row.get("stage") == "seeds":
            return [
                "Nothing to start from: the corpus has no paper with full text (build it from papers with text: "
                "agenthop-server corpus build PAPERS --out FILE)."
            ]
        return [f"Nothing reached {name}."]
    lines = [f"{name} kept none of {row['entered']}. What removed them, and what relaxes each rule:"]
    for reason, count in sorted(row.get("reasons", {}).items(), key=lambda kv: (-kv[1], kv[0])):
        option, text = RELAX.get(reason, (None, "see docs/construct.md for this rule"))
        value = getattr(settings, VALUES[option]) if option in VALUES else None
        lines.append(f"  {reason} ({count}): {text.format(value=value)}")
    return lines
