"""The panel's trajectory tables as the paper defines them: Table 13 (bigrams across the panel), Table 14 (top
trigram per model, grouped by tier and ranked by concentration) and Figure 6 (transition matrices in the paper's
tool order). Definitions: docs/scoring.md, "A panel of runs"."""

from __future__ import annotations

from typing import Any

from agenthop.scorer.logs import TOOLS
from agenthop.scorer.trajectory import transition_matrix

#: Figure 6's order along both axes: "get_paper_info, get_references, list_sections, search_papers, read_section,
#: think, submit_answer" (the paper's caption; SPEC 3 lists search_papers first).
FIGURE_6_ORDER = (
    "get_paper_info",
    "get_references",
    "list_sections",
    "search_papers",
    "read_section",
    "think",
    "submit_answer",
)


def panel_bigrams(per_run: list[dict], n_models: int) -> dict:
    """Table 13: bigrams present in at least 10 of 19 models (generally: more than half the models), with the
    panel-mean accuracy difference (the mean of the models' differences; a model whose every trajectory has the
    bigram has no difference and is left out of the mean), the number of models where it is significant after
    Bonferroni, and the number with it in at least one trajectory; ranked by |mean difference| within sign."""
    present: dict[tuple, list[dict]] = {}
    for run in per_run:
        for b in run["bigrams"]:
            if b["n_with"]:
                present.setdefault(tuple(b["bigram"]), []).append(b)
    threshold = n_models // 2 + 1
    rows: list[dict[str, Any]] = []
    for bg, found in present.items():
        if len(found) < threshold:
            continue
        diffs = [b["difference"] for b in found if b["difference"] is not None]
        rows.append(
            {
                "bigram": list(bg),
                "mean_difference": sum(diffs) / len(diffs) if diffs else None,
                "models_with_difference": len(diffs),
                "significant_models": sum(1 for b in found if b["significant"]),
                "models": len(found),
            }
        )
    measured = [r for r in rows if r["mean_difference"] is not None]
    return {
        "n_models": n_models,
        "threshold": threshold,
        "productive": sorted((r for r in measured if r["mean_difference"] > 0), key=lambda r: -r["mean_difference"]),
        "anti_productive": sorted(
            (r for r in measured if r["mean_difference"] < 0), key=lambda r: r["mean_difference"]
        ),
        "neutral": [r for r in rows if r not in measured or r["mean_difference"] == 0],
    }


def trigrams_by_tier(rows: list[dict], tiers: list[str]) -> list[dict]:
    """Table 14's order: tiers as Table 2 gives them, then concentration, highest first (unmeasured last)."""
    position = {r["run"]: i for i, r in enumerate(rows)}
    return sorted(
        rows,
        key=lambda r: (
            tiers.index(r["tier"]) if r["tier"] in tiers else len(tiers),
            r["concentration"] is None,
            -(r["concentration"] or 0),
            position[r["run"]],
        ),
    )


def transitions(entries: list[dict]) -> dict:
    """Each run's row-normalised 7 x 7 matrix, rows and columns in Figure 6's tool order, runs in Table 2's order."""
    perm = [TOOLS.index(t) for t in FIGURE_6_ORDER]
    rows = []
    for e in entries:
        m = transition_matrix([r["trajectory"] for r in e["items"].values() if r["observed"]])
        rows.append(
            {
                "run": e["name"],
                "tools": list(FIGURE_6_ORDER),
                "counts": [[m["counts"][i][j] for j in perm] for i in perm],
                "row_normalised": [[m["row_normalised"][i][j] for j in perm] for i in perm],
            }
        )
    return {"tools": list(FIGURE_6_ORDER), "rows": rows}
