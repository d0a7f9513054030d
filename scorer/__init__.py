"""agenthop.scorer: offline scoring of AgentHop runs against the corpus gold labels (docs/scoring.md).

The public API is ``__all__`` below; every other name is private by convention.

    from agenthop.scorer import score, compare, write_reports, load_run

Modules: scoring (score, compare: the library behind the CLI), reports (writing them),
results (what scoring returns), errors, logs (load runs), gold (gold labels; the label rule is
server.sections.label_matches_section), items (item set and the session that counts),
metrics (accuracy, recall, resources), audit (exposure/inspection), trajectory,
stats (Wilson, McNemar, bootstraps, Cronbach), summary (score_run and versions), compare,
panel/panel_labels/panel_scoring/panel_report/panel_plots (the panel of runs),
document/report_md/report_html/plots/terminal (reports), view (trajectory viewer), cli (agenthop-scorer).
"""

from agenthop.scorer.errors import CorpusMismatchError, ItemsFileError, RunSpecError, ScorerError
from agenthop.scorer.gold import Gold
from agenthop.scorer.logs import Call, Run, Session, load_run, load_runs, to_dataframe
from agenthop.scorer.panel_scoring import panel
from agenthop.scorer.reports import write_reports
from agenthop.scorer.results import Headline, PairResult, RunScore, ScoreResult
from agenthop.scorer.scoring import compare, score, write_viewer
from agenthop.scorer.summary import SCORER_VERSION, SUMMARY_SCHEMA_VERSION, score_run

__all__ = [
    "SCORER_VERSION",
    "SUMMARY_SCHEMA_VERSION",
    "Call",
    "CorpusMismatchError",
    "Gold",
    "Headline",
    "ItemsFileError",
    "PairResult",
    "Run",
    "RunScore",
    "RunSpecError",
    "ScoreResult",
    "ScorerError",
    "Session",
    "compare",
    "load_run",
    "load_runs",
    "panel",
    "score",
    "score_run",
    "to_dataframe",
    "write_reports",
    "write_viewer",
]
