"""What scoring returns: typed results around the summaries written to summary.json and comparison.json.

The summary and comparison dicts are the JSON documents described in
docs/scoring.md; the dataclasses here give the figures a caller usually wants
typed names, and say whether a summary is complete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

#: The version of summary.json's layout, and of the scorer that wrote it (both are in every summary).
SUMMARY_SCHEMA_VERSION = 2
SCORER_VERSION = "3.1.0"

#: What a slim summary keeps: enough for the terminal tables and the comparison across runs.
SLIM_KEYS = ("run", "items", "headline", "metrics", "resources", "exposure", "audit", "warnings")
SLIM_METRICS = ("overall", "by_type", "by_cell")
SLIM_ITEM_KEYS = ("item_id", "correct", "audit", "gold_papers")


def slim(summary: dict) -> dict:
    """The parts of a summary that tables and comparisons need (keeps memory flat when many runs are scored)."""
    out = {k: summary[k] for k in SLIM_KEYS}
    out["metrics"] = {k: summary["metrics"][k] for k in SLIM_METRICS}
    out["item_results"] = [{k: r[k] for k in SLIM_ITEM_KEYS} for r in summary["item_results"]]
    return out


@dataclass(frozen=True)
class Headline:
    """The headline figures of a run (fractions in [0, 1]; None when not measured)."""

    accuracy: float | None
    paper_recall_st: float | None
    paper_recall_mt: float | None
    section_recall: float | None
    conversion_st: float | None
    conversion_mt: float | None
    calls_per_turn: float | None
    mean_tokens: float | None
    mean_turns: float | None
    mean_budget: float | None
    pct_token_cap: float | None
    pct_turn_cap: float | None
    pct_budget: float | None

    @classmethod
    def of(cls, headline: dict) -> Headline:
        return cls(**{f.name: headline.get(f.name) for f in fields(cls)})


@dataclass
class RunScore:
    """One scored run.

    ``summary`` is the run's summary (summary.json). When ``score`` streamed the
    reports to disk (``report_dir`` is set), ``complete`` is False and
    ``summary`` keeps only the parts in ``SLIM_KEYS``; ``full_summary()`` reads
    the complete one back.
    """

    name: str
    summary: dict
    complete: bool = True
    report_dir: Path | None = None

    @property
    def headline(self) -> Headline:
        return Headline.of(self.summary["headline"])

    @property
    def n_items(self) -> int:
        return self.summary["items"]["n"]

    @property
    def warnings(self) -> list[str]:
        return list(self.summary["warnings"])

    def full_summary(self) -> dict:
        if self.complete:
            return self.summary
        assert self.report_dir is not None  # only a run scored to disk keeps a slim summary
        return json.loads((self.report_dir / "summary.json").read_text(encoding="utf-8"))


@dataclass
class ScoreResult:
    """Every run scored by ``score``, and the comparison across them (None for one run)."""

    runs: list[RunScore]
    comparison: dict | None = None
    out: Path | None = None  # where the reports were written, if they were


@dataclass
class PairResult:
    """Two runs compared on the items they share (``compare``)."""

    a: RunScore
    b: RunScore
    pair: dict  # comparison.json of ``compare``: McNemar, bootstraps, audit transitions
    comparison: dict  # the two runs side by side, as for several runs in ``score``
    out: Path | None = None

    @property
    def difference(self) -> float | None:
        """accuracy(B) - accuracy(A) on the common items."""
        return self.pair["difference"]

    @property
    def mcnemar_p(self) -> float:
        return self.pair["mcnemar_exact_p"]
