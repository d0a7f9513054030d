"""The panel's figures as inline SVG: item coverage (the paper's Figure 4), accuracy against paper recall per
run (Figure 5) and per-run transition matrices as small multiples (Figure 6). Only what was measured is drawn;
``missing_plots`` says why a figure is absent."""

from __future__ import annotations

import math

from agenthop.scorer.plots import _SHORT, _pyplot, _svg, accuracy_vs_recall


def coverage_histogram(hist: list[int], n_runs: int) -> str:
    fig, ax = _pyplot().subplots(figsize=(5.6, 3.2))
    ax.bar(range(len(hist)), hist, color="#4c78a8")
    for edge in (n_runs / 3, 2 * n_runs / 3):
        ax.axvline(edge, ls=":", color="grey", lw=1)
    ax.set_xticks(range(len(hist)))
    ax.set_xlabel(f"runs answering the item (of {n_runs})")
    ax.set_ylabel("items")
    ax.set_title("Item coverage (dotted: the low / mid / high thirds)", fontsize=10)
    return _svg(fig, "panel-coverage")


#: Width of the report's column in CSS pixels (report.css: max-width 1100px less 2rem of padding): a figure wider
#: than this is scaled down by the browser, and its labels with it.
PAGE_PX = 1068
#: Smallest label on a figure, in CSS pixels, once drawn in the report (the per-run heatmaps once had 6 px labels).
MIN_LABEL_PX = 11


def transition_multiples(rows: list[dict], tools: list[str]) -> str:
    """One row-normalised heatmap per run, three to a line, sharing one colour scale (its bar on the right)."""
    n = len(rows)
    cols = min(3, n)
    lines = math.ceil(n / cols)
    fig, axes = _pyplot().subplots(
        lines, cols, figsize=(3.2 * cols + 0.9, 3.2 * lines + 0.4), squeeze=False, layout="constrained"
    )
    labels = [_SHORT.get(t, t) for t in tools]
    for ax in axes.flat[n:]:
        ax.axis("off")
    image = None
    for ax, row in zip(axes.flat, rows):
        image = ax.imshow(row["row_normalised"], cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks(range(len(tools)), labels, rotation=90, fontsize=9)
        ax.set_yticks(range(len(tools)), labels, fontsize=9)
        ax.set_title(row["run"], fontsize=10)
    bar = fig.colorbar(image, ax=axes, shrink=min(1.0, 0.9 / lines + 0.1), aspect=25)
    bar.set_label("share of the row's next calls", fontsize=9)
    bar.ax.tick_params(labelsize=9)
    fig.suptitle("Tool transitions per run (row-normalised; rows: call, columns: next call)", fontsize=11)
    return _svg(fig, "panel-transitions")


def missing_plots(panel: dict) -> dict[str, str]:
    out = {}
    d = panel["difficulty"]
    if "missing" in d:
        out["panel-coverage"] = f"Item coverage: not drawn: {d['missing']}."
    pts = [
        r for r in panel["accuracy_vs_recall"]["rows"] if r["paper_recall"] is not None and r["accuracy"] is not None
    ]
    if not pts:
        out["panel-accuracy-vs-recall"] = "Accuracy vs paper recall: not drawn: no full-tool run has both measured."
    if not any(any(any(r) for r in row["counts"]) for row in panel["transitions"]["rows"]):
        out["panel-transitions"] = "Transition matrices: not drawn: no full-tool run made two tool calls in a row."
    return out


def panel_plots(panel: dict) -> dict[str, str]:
    missing = missing_plots(panel)
    plots = {}
    if "panel-coverage" not in missing:
        d = panel["difficulty"]
        plots["panel-coverage"] = coverage_histogram(d["histogram"], d["n_runs"])
    if "panel-accuracy-vs-recall" not in missing:
        pts = [(r["run"], r["paper_recall"], r["accuracy"]) for r in panel["accuracy_vs_recall"]["rows"]]
        plots["panel-accuracy-vs-recall"] = accuracy_vs_recall(
            pts, "Accuracy vs paper recall per run (dotted: y = x)", "panel-accuracy-vs-recall"
        )
    if "panel-transitions" not in missing:
        plots["panel-transitions"] = transition_multiples(panel["transitions"]["rows"], panel["transitions"]["tools"])
    return plots
