"""Plots as inline SVG strings (matplotlib, Agg backend, no external resources)."""

from __future__ import annotations

import functools
import io
import re

from agenthop.scorer.document import comparison_plottable, unplottable
from agenthop.scorer.gold import CELLS


@functools.cache
def _pyplot():
    """pyplot on the Agg backend, imported with the first plot: it takes about half a second to load, which
    ``agenthop-scorer --help`` and a usage error should not pay."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_SHORT = {
    "search_papers": "search",
    "get_paper_info": "info",
    "get_references": "refs",
    "list_sections": "list",
    "read_section": "read",
    "think": "think",
    "submit_answer": "submit",
}


def _svg(fig, name: str) -> str:
    buf = io.StringIO()
    with _pyplot().rc_context({"svg.fonttype": "none", "svg.hashsalt": name}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buf.getvalue()
    start = text.find("<svg")
    text = text[start:]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    # Make the SVG scale with the page and name it for tests and readers.
    text = re.sub(r"<svg ", f'<svg class="plot" data-plot="{name}" role="img" aria-label="{name}" ', text, count=1)
    return text


def transition_heatmap(trans: dict, title: str = "Tool transitions (row-normalised)") -> str:
    tools = trans["tools"]
    probs = trans["row_normalised"]
    counts = trans["counts"]
    # Sized so that the cell numbers read at body-text size when the SVG is shown 640 px wide.
    fig, ax = _pyplot().subplots(figsize=(7.2, 6.2))
    im = ax.imshow(probs, cmap="Blues", vmin=0, vmax=1)
    labels = [_SHORT.get(t, t) for t in tools]
    ax.set_xticks(range(len(tools)), labels, rotation=45, ha="right", fontsize=11)
    ax.set_yticks(range(len(tools)), labels, fontsize=11)
    ax.set_xlabel("next call", fontsize=11)
    ax.set_ylabel("call", fontsize=11)
    for i, row in enumerate(probs):
        for j, p in enumerate(row):
            if counts[i][j]:
                ax.text(j, i, f"{p:.2f}", ha="center", va="center", fontsize=12, color="white" if p > 0.55 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_title(title, fontsize=12)
    return _svg(fig, "transition-heatmap")


def cell_accuracy_bars(by_cell: dict, title: str = "Accuracy by type x depth (Wilson 95%)") -> str:
    cells = [c for c in CELLS if by_cell.get(c, {}).get("n")]
    fig, ax = _pyplot().subplots(figsize=(6.0, 3.6))
    if cells:
        acc = [by_cell[c]["accuracy"] for c in cells]
        # Clamped: at 0% or 100% rounding can put the interval's end a hair inside the point (matplotlib refuses).
        lo = [max(0.0, a - by_cell[c]["accuracy_ci95"][0]) for a, c in zip(acc, cells)]
        hi = [max(0.0, by_cell[c]["accuracy_ci95"][1] - a) for a, c in zip(acc, cells)]
        labels = [f"{c}\nn={by_cell[c]['n']}" for c in cells]
        ax.bar(labels, acc, yerr=[lo, hi], capsize=5, color="#4c78a8")
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    ax.set_title(title, fontsize=10)
    return _svg(fig, "cell-accuracy")


def accuracy_vs_recall(points: list[tuple[str, float | None, float | None]], title: str, name: str) -> str:
    fig, ax = _pyplot().subplots(figsize=(5.6, 4.4))
    for label, rec, acc in points:
        if rec is None or acc is None:
            continue
        ax.scatter([rec], [acc], s=40)
        ax.annotate(label, (rec, acc), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.plot([0, 1], [0, 1], ls=":", color="grey", lw=1)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("paper recall")
    ax.set_ylabel("accuracy")
    ax.set_title(title, fontsize=10)
    return _svg(fig, name)


def histogram(values: list[float], title: str, xlabel: str, name: str, bins: int | list = 20) -> str:
    fig, ax = _pyplot().subplots(figsize=(4.6, 3.0))
    ax.hist(values, bins=bins, color="#72b7b2", histtype="stepfilled", edgecolor="#4a8f8a")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("items")
    ax.set_title(title, fontsize=10)
    return _svg(fig, name)


def run_plots(summary: dict) -> dict[str, str]:
    """The plots of one run's report, keyed by name: only of what was measured (document.unplottable says why not)."""
    missing = unplottable(summary)
    rows = [r for r in summary["item_results"] if r["observed"]]
    cells = summary["metrics"]["by_cell"]
    plots = {}
    if "transition-heatmap" not in missing:
        plots["transition-heatmap"] = transition_heatmap(summary["trajectory"]["transitions"])
    if "cell-accuracy" not in missing:
        plots["cell-accuracy"] = cell_accuracy_bars(cells)
        plots["cell-accuracy-vs-recall"] = accuracy_vs_recall(
            [(c, m["paper_recall"], m["accuracy"]) for c, m in cells.items() if m["n"]],
            "Accuracy vs paper recall by cell",
            "cell-accuracy-vs-recall",
        )
    budgets = [r["budget"] for r in rows if r["budget"] is not None]
    if "budget-hist" not in missing:
        top = max(budgets + [30])
        plots["budget-hist"] = histogram(
            budgets, "Budget points used", "points", "budget-hist", bins=list(range(0, int(top) + 2))
        )
    turns = [r["turns"] for r in rows if r["turns"] is not None]
    if "turns-hist" not in missing:
        plots["turns-hist"] = histogram(turns, "Turns", "turns", "turns-hist", bins=list(range(0, max(turns) + 2)))
    tokens = [r["tokens"] for r in rows if r["tokens"] is not None]
    if "tokens-hist" not in missing:
        plots["tokens-hist"] = histogram(tokens, "Tokens", "tokens", "tokens-hist")
    return plots


def comparison_plots(comparison: dict) -> dict[str, str]:
    if not comparison_plottable(comparison):
        return {}
    pts = [(r["run"], r.get("paper_recall"), r["accuracy"]) for r in comparison["runs"]]
    return {"accuracy-vs-recall": accuracy_vs_recall(pts, "Accuracy vs paper recall across runs", "accuracy-vs-recall")}
