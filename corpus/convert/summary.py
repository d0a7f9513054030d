"""The few lines of ``corpus build``'s summary a person reads on a terminal (the whole summary is JSON on request)."""

from __future__ import annotations

from pathlib import Path

from agenthop.corpus.summaries import BuildSummary


def build_summary_lines(summary: BuildSummary, saved: Path) -> list[str]:
    """What was built, from what, and what to look at; ``saved`` is where the full JSON summary was written."""
    conv, imp = summary.get("converted", {}), summary.get("imported", {})
    counts = imp.get("counts", {})
    lines = [
        f"wrote {imp.get('out')}: {counts.get('papers', 0):,} papers ({counts.get('papers_with_text', 0):,} with text), "
        f"{counts.get('sections', 0):,} sections, {counts.get('edges', 0):,} citation edges "
        f"({counts.get('edges_with_context', 0):,} with their sentence), {counts.get('items', 0):,} items"
    ]
    pdfs = summary.get("pdfs")
    if pdfs:
        lines.append(
            f"  PDFs: {pdfs.get('converted', 0)} of {pdfs.get('pdfs', 0)} converted by the {pdfs.get('parser')} parser"
            + (f", {pdfs['skipped']} skipped" if pdfs.get("skipped") else "")
        )
    lines.append(
        f"  from your files: {conv.get('papers_in_set', 0):,} papers, {conv.get('metadata_only_references', 0):,} "
        f"references outside them (metadata only), {conv.get('citations_in_set', 0):,} citations between them"
    )
    notes = [
        f"{conv[k]:,} {label}"
        for k, label in (
            ("duplicates", "duplicate file(s) skipped"),
            ("bad_files", "file(s) left out"),
            ("references_dropped", "reference(s) dropped"),
        )
        if conv.get(k)
    ]
    warnings = imp.get("warnings", {})
    if warnings:
        notes.append(f"{len(warnings)} kind(s) of import warning ({', '.join(sorted(warnings))})")
    if notes:
        lines.append("  notes: " + "; ".join(notes) + " (stderr above has each one)")
    if not counts.get("items"):
        lines.append(
            "  no items: the corpus serves explore mode; agenthop-construct run --corpus FILE --out DIR makes items from it"
        )
    lines.append(
        f"  corpus_id {imp.get('corpus_id')}; the full summary (JSON) is in {saved}; --json prints it instead "
        "(as it does whenever stdout is not a terminal)"
    )
    return lines
