"""agenthop.scorer: offline scoring of AgentHop runs against the corpus gold labels (docs/scoring.md).

Modules: logs (load runs), gold (gold labels; the label rule is server.sections.label_matches_section),
items (item set and the session that counts), metrics (accuracy, recall, resources), audit (exposure/inspection), trajectory,
stats (Wilson, McNemar, bootstraps, Cronbach), summary (score_run and versions), compare,
document/report_md/report_html/plots/terminal (reports), cli (agenthop-scorer).
"""

from .summary import SCORER_VERSION, SUMMARY_SCHEMA_VERSION

__all__ = ["SCORER_VERSION", "SUMMARY_SCHEMA_VERSION"]
