"""``panel``: score a set of runs on one corpus and write the paper's panel analyses (panel.json/.md/.html).

Runs are loaded and scored as ``score`` does (scoring.py: the same corpus check, the
same worker processes); each run's summary is reduced to what the panel needs as
soon as it is scored, so memory grows with the item rows the panel keeps, not
with whole summaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agenthop.scorer.errors import CorpusMismatchError, ScorerError
from agenthop.scorer.panel_external import read_external
from agenthop.scorer.panel_labels import check_named, read_labels
from agenthop.scorer.panel_report import write_panel_reports
from agenthop.scorer.panel_tables import build_panel, panel_entry
from agenthop.scorer.scoring import _expand, _Workers, check_corpus, corpus_id_of, read_expected


def check_one_corpus(heads: list[tuple[str, set[str]]]) -> None:
    """Refuse runs made on different corpora, naming a run of each (a panel compares runs on the same items)."""
    first: dict[str, str] = {}
    for name, ids in heads:
        for cid in sorted(ids):
            first.setdefault(cid, name)
    if len(first) > 1:
        (id_a, run_a), (id_b, run_b) = list(first.items())[:2]
        raise CorpusMismatchError(
            "the runs were made on different corpora: run {run_a} on corpus {id_a}, run {run_b} on corpus {id_b}. "
            "A panel compares runs on the same items: give runs made on one corpus.",
            "runs",
            run_a=run_a,
            id_a=id_a,
            run_b=run_b,
            id_b=id_b,
        )


def unique_names(names: list[str]) -> list[str]:
    """Run names made unique (a second run named x is x#2), so every table row names one run."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def panel(
    runs: Iterable[str | Path],
    corpus: str | Path,
    out: str | Path | None = None,
    *,
    tiers: str | Path | None = None,
    items: str | Path | None = None,
    server_log: str | Path | None = None,
    jobs: int = 1,
    seed: int = 0,
    resamples: int = 10000,
    external: str | Path | None = None,
) -> dict:
    """The panel of ``runs`` (panel.json as a dict); with ``out``, also panel.json, panel.md and panel.html there.

    tiers: a TOML or CSV file giving runs a tier, a family, a model name and a role (panel_labels.py); without
        it, a run's tier comes from ``tier`` (else ``family``) in its run.json, its family from ``family``, its
        model and role from run.json (ablations) as the runner wrote it.
    items, server_log, jobs: as for ``score``. seed, resamples: the ablation table's paired bootstraps.
    external: a CSV of external benchmark scores per model (panel_external.py), for the correlation table.
    """
    if jobs < 1:
        raise ScorerError("{jobs} must be at least 1, got {n}.", "jobs", n=jobs)
    specs = _expand(runs)
    if not specs:
        raise ScorerError("no runs given: pass run directories or checkpoint log files as {runs}.", "runs")
    expected = read_expected(items)
    corpus_id = corpus_id_of(corpus)
    labels = read_labels(tiers) if tiers is not None else {}
    scores = read_external(external) if external is not None else None
    workers = _Workers(jobs, len(specs), corpus, expected, server_log)
    entries = []
    provenance = None
    try:
        heads = workers.heads(specs, server_log)
        check_one_corpus(heads)
        for name, ids in heads:
            check_corpus(name, ids, corpus, corpus_id)
        names = unique_names([name for name, _ in heads])
        if tiers is not None:
            check_named(tiers, labels, names)
        for name, scored in zip(names, workers.scores(specs, [None] * len(specs), [None] * len(specs))):
            entry = panel_entry(scored.summary, labels.get(name))
            entry["name"] = name
            entry["robustness"]["run"] = {**entry["robustness"]["run"], "name": name}
            provenance = provenance or scored.summary["corpus"]
            entries.append(entry)
    finally:
        workers.close()
    assert provenance is not None, "every run given was scored, and at least one was given"
    result = build_panel(entries, provenance, seed=seed, resamples=resamples, external=scores)
    if out is not None:
        write_panel_reports(result, out)
    return result
