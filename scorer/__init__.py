"""agenthop.scorer: offline scoring of AgentHop runs against the corpus gold labels (docs/scoring.md).

The public API is ``__all__`` below; every other name is private by convention. Names are
imported on first use, so ``import agenthop.scorer`` (and ``agenthop-scorer --help``) does
not load numpy or the report writers.

    from agenthop.scorer import score, compare, write_reports, load_run

Modules: scoring (score, compare: the library behind the CLI), reports (writing them),
results (what scoring returns), errors, runs (which runs a RUN argument names, and loading
them), logs (reading one run's records), shards (one run from its shards), gold (gold labels;
the label rule is server.sections.label_matches_section), items (item set and the session
that counts), metrics (accuracy, recall, resources), audit (exposure/inspection), trajectory,
stats (Wilson, McNemar, bootstraps, Cronbach), summary (score_run and versions), comparisons
(paired and many-run), panel_tables/panel_labels/panel_scoring/panel_report/panel_plots (the panel
of runs; panel_closed_book and panel_external for its closed-book and external-benchmark tables),
document/report_md/report_html/plots/terminal (reports), view (trajectory viewer), cli (agenthop-scorer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthop._exports import lazy_exports

# The names as the checker sees them (``X as X``: re-exported); at run time __getattr__ imports each on first use.
if TYPE_CHECKING:
    from agenthop.scorer.errors import CorpusMismatchError as CorpusMismatchError
    from agenthop.scorer.errors import ItemsFileError as ItemsFileError
    from agenthop.scorer.errors import RunSpecError as RunSpecError
    from agenthop.scorer.errors import ScorerError as ScorerError
    from agenthop.scorer.gold import Gold as Gold
    from agenthop.scorer.logs import Call as Call
    from agenthop.scorer.logs import Run as Run
    from agenthop.scorer.logs import Session as Session
    from agenthop.scorer.logs import to_dataframe as to_dataframe
    from agenthop.scorer.panel_scoring import panel as panel
    from agenthop.scorer.reports import write_reports as write_reports
    from agenthop.scorer.results import SCORER_VERSION as SCORER_VERSION
    from agenthop.scorer.results import SUMMARY_SCHEMA_VERSION as SUMMARY_SCHEMA_VERSION
    from agenthop.scorer.results import Headline as Headline
    from agenthop.scorer.results import PairResult as PairResult
    from agenthop.scorer.results import RunScore as RunScore
    from agenthop.scorer.results import ScoreResult as ScoreResult
    from agenthop.scorer.runs import load_run as load_run
    from agenthop.scorer.runs import load_runs as load_runs
    from agenthop.scorer.scoring import compare as compare
    from agenthop.scorer.scoring import score as score
    from agenthop.scorer.scoring import write_viewer as write_viewer
    from agenthop.scorer.summary import score_run as score_run

_WHERE = {
    "score": "agenthop.scorer.scoring",
    "compare": "agenthop.scorer.scoring",
    "write_viewer": "agenthop.scorer.scoring",
    "panel": "agenthop.scorer.panel_scoring",
    "write_reports": "agenthop.scorer.reports",
    "load_run": "agenthop.scorer.runs",
    "load_runs": "agenthop.scorer.runs",
    "Call": "agenthop.scorer.logs",
    "Run": "agenthop.scorer.logs",
    "Session": "agenthop.scorer.logs",
    "to_dataframe": "agenthop.scorer.logs",
    "Gold": "agenthop.scorer.gold",
    "Headline": "agenthop.scorer.results",
    "PairResult": "agenthop.scorer.results",
    "RunScore": "agenthop.scorer.results",
    "ScoreResult": "agenthop.scorer.results",
    "score_run": "agenthop.scorer.summary",
    "SCORER_VERSION": "agenthop.scorer.results",
    "SUMMARY_SCHEMA_VERSION": "agenthop.scorer.results",
    "ScorerError": "agenthop.scorer.errors",
    "CorpusMismatchError": "agenthop.scorer.errors",
    "ItemsFileError": "agenthop.scorer.errors",
    "RunSpecError": "agenthop.scorer.errors",
}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
