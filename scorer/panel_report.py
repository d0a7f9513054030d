"""The panel as a report document (rendered by report_md and report_html like every report), most important first.

Tables come in the order a reader of the paper looks for them: the main table,
stopping, per-cell accuracy, the ablation, item difficulty, bigrams, trigrams,
non-submission, evidence contact, closed-book accuracy (overall and by exposure
stratum), the action after a wrong-paper read, the figures, the correlation with
external benchmarks, replicates, then robustness. A table whose inputs are missing says what it needs.
"""

from __future__ import annotations

from pathlib import Path

from agenthop.scorer import report_html, report_md
from agenthop.scorer.audit import CONTACTS
from agenthop.scorer.document import (
    NO_TOKENS,
    NO_TURNS,
    Document,
    Marked,
    Section,
    Table,
    comparison_document,
    num,
    p_value,
    pct,
    ranking_finding,
)
from agenthop.scorer.panel_plots import missing_plots, panel_plots
from agenthop.scorer.reports import write_json
from agenthop.scorer.trajectory import SCOPE_LABELS, STOP_LABELS

PANEL_FILES = ("panel.json", "panel.md", "panel.html")
LEGEND = (
    "● tier leader (best in its tier, a tier of one run included; shaded in the HTML report), ★ panel best (best "
    "of all full-tool runs; bold in the HTML report); tied values are all marked. A conversion cell is marked "
    "● only where the exact McNemar test on the items both the tier leader and the runner-up recalled separates "
    "them (p < {alpha}); conversion has no ★. As in the paper, rows are grouped by tier and ranked by accuracy "
    "within each family (families in a tier by their best accuracy; a run without a family is a family of its own); "
    "the rank is the run's rank by accuracy in its tier, runs of equal accuracy share it (written 2=). Failure "
    "columns: share of items ended by the token cap, the turn cap and the budget. Section recall over all items and "
    "non-submission are additions."
)
CONTACT_LABELS = {
    "inspected": "gold paper inspected",
    "exposed": "gold paper exposed, not inspected",
    "neither": "neither",
}


def pp(x) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f} pp"


def _marked(row: dict, col: str, text: str) -> Marked | str:
    marks = tuple(row["marks"].get(col, []))
    return Marked(text, marks) if marks else text


def _rank(row: dict) -> str:
    if row.get("rank") is None:
        return "n/a"
    return f"{row['rank']}=" if row.get("tied_with") else str(row["rank"])


def _main_cell(row: dict, col: str) -> Marked | str:
    v = row[col]
    if col == "calls_per_turn":
        return num(v, 2, NO_TURNS)
    if col == "mean_tokens":
        return num(None if v is None else v / 1000, 1, NO_TOKENS)
    if col == "mean_turns":
        return num(v, 2, NO_TURNS)
    if col == "mean_budget":
        return num(v, 2)
    return _marked(row, col, pct(v))


MAIN_HEADER = [
    "tier",
    "family",
    "run",
    "model",
    "rank in tier",
    "n",
    "recall ST",
    "recall MT",
    "SecRec ST",
    "SecRec MT",
    "conversion ST",
    "conversion MT",
    "calls/turn",
    "avg tokens (k)",
    "avg turns",
    "avg budget",
    "max tokens",
    "max turns",
    "max budget",
    "accuracy",
    "section recall (addition)",
    "non-submission (addition)",
]


def main_section(p: dict) -> Section:
    m = p["main_table"]
    rows = m["rows"]
    alone = len(rows) == 1
    # One run has nothing to be best against: marks on every value would say nothing, so it gets none.
    legend = (
        "One full-tool run: nothing to compare it with, so no value is marked (● tier leader and ★ panel best "
        "need two runs or more)."
        if alone
        else LEGEND.format(alpha=m["alpha"])
    )
    sec = Section("Main table (the paper's Table 2)", paragraphs=[legend])
    if not rows:
        sec.paragraphs.append(f"Not computed: {p.get('missing', 'no full-tool run')}.")
        return sec
    values = ({**r, "marks": {}} if alone else r for r in rows)
    sec.tables.append(
        Table(
            MAIN_HEADER,
            [
                [r["tier"], r.get("family") or "", r["run"], r["model"] or "unknown", _rank(r), str(r["n"])]
                + [_main_cell(r, c) for c in m["columns"] + m["additions"]]
                for r in values
            ],
            "One row per model (its Run 0; a run of the model that is no replicate of it has a row of its own), "
            "grouped by tier, ranked by accuracy within each family.",
            left=4,
        )
    )
    for x in m["set_aside"]:
        sec.paragraphs.append(
            f"Run {x['run']} of {x['model']} is not a replicate of its Run 0 {x['run0']} ("
            + "; ".join(x["reasons"])
            + "): it has a row of its own, and the per-model tables (16, 18, 19) use Run 0."
        )
    ties = [
        f"{r['run']} ties with {', '.join(r['tied_with'])} ({pct(r['accuracy'])})"
        for r in m["rows"]
        if r.get("tied_with") and r["accuracy"] is not None and r["run"] < min(r["tied_with"])
    ]
    if ties:
        sec.paragraphs.append("Ties in accuracy (same rank, order as given): " + "; ".join(ties) + ".")
    if m["conversion_tests"]:
        sec.tables.append(
            Table(
                [
                    "tier",
                    "type",
                    "leader",
                    "runner-up",
                    "items both recalled",
                    "only leader right",
                    "only runner-up right",
                    "exact McNemar p",
                    "marked",
                ],
                [
                    [
                        t["tier"],
                        t["qtype"],
                        t["leader"],
                        t["runner_up"],
                        str(t["n_common_recalled"]),
                        str(t["leader_only"]),
                        str(t["runner_up_only"]),
                        p_value(t["mcnemar_exact_p"]),
                        "yes" if t["separates"] else "no",
                    ]
                    for t in m["conversion_tests"]
                ],
                "Conversion: tier leader against runner-up on the items both recalled.",
            )
        )
    else:
        sec.paragraphs.append("Conversion tests need a tier with two or more runs whose conversion is measured.")
    walk = m["mt_conversion_walk"]
    if walk:
        sec.tables.append(
            Table(
                ["higher", "lower", "items both recalled", "only higher right", "only lower right", "exact McNemar p"],
                [
                    [
                        t["higher"],
                        t["lower"],
                        str(t["n_common_recalled"]),
                        str(t["higher_only"]),
                        str(t["lower_only"]),
                        f"{t['mcnemar_exact_p']:.4g}",
                    ]
                    for t in walk
                ],
                "The paper's Table 12, top: adjacent pairs among the six highest multi-target conversions.",
                left=2,
            )
        )
    return sec


def stopping_section(p: dict) -> Section:
    rows = p["stopping"]["rows"]
    sec = Section(
        "Stopping behaviour (the paper's Table 9)",
        paragraphs=[
            "The three scopes side by side, one row per run: the items in the scope, then each category's share of them "
            "(count); definitions in docs/scoring.md."
        ],
    )
    sec.bullets = list(SCOPE_LABELS.values())
    if not rows:
        sec.paragraphs.append("Not computed: no full-tool run.")
        return sec
    header, groups = ["run"], [("", 1)]
    for scope, label in SCOPE_LABELS.items():
        cats = list(rows[0][scope]["categories"])
        header += ["items"] + [STOP_LABELS[c] for c in cats]
        groups.append((label.split(":")[0], 1 + len(cats)))
    body = []
    for r in rows:
        line = [r["run"]]
        for scope in SCOPE_LABELS:
            cats = r[scope]["categories"]
            line += [str(r[scope]["n"])] + [f"{pct(cats[c]['share'])} ({cats[c]['n']})" for c in cats]
        body.append(line)
    sec.tables.append(Table(header, body, left=1, groups=groups))
    return sec


def cell_section(p: dict) -> Section:
    c = p["cell_accuracy"]
    sec = Section("Accuracy per cell (the paper's Table 10)")
    if c["easiest"] is None:
        sec.paragraphs.append("Not computed: no full-tool run has items.")
        return sec
    sec.paragraphs.append(
        "Accuracy ± Wilson 95% half-width (items); Δ = ST-d1 - MT-d2, the paper's column. An addition: the drop "
        f"from the panel's easiest cell {c['easiest']} to its hardest {c['hardest']} (by accuracy pooled over the "
        "runs)."
    )
    for role, tied in (("easiest", c.get("easiest_tied")), ("hardest", c.get("hardest_tied"))):
        if tied:
            sec.paragraphs.append(
                f"Tie for the {role} cell: {' and '.join(tied)} have the same pooled accuracy "
                f"({pct(c['pooled_accuracy'][tied[0]])}); the drop uses {tied[0]}, the first in the "
                "order ST-d1, ST-d2, MT-d1, MT-d2."
            )
    sec.tables.append(
        Table(
            ["run"] + c["cells"] + ["Δ ST-d1 - MT-d2", f"drop {c['easiest']} → {c['hardest']} (addition)"],
            [
                [r["run"]]
                + [
                    (
                        "n/a (no items)"
                        if not r["cells"][k]["n"]
                        else f"{pct(r['cells'][k]['accuracy'])} ± {100 * r['cells'][k]['half_width']:.1f} ({r['cells'][k]['n']})"
                    )
                    for k in c["cells"]
                ]
                + [pp(r["drop"]), pp(r["drop_easiest_hardest"])]
                for r in c["rows"]
            ],
            left=1,
        )
    )
    return sec


def _lift(lift: dict | None) -> list[str]:
    if lift is None:
        return ["n/a", "n/a", "n/a"]
    ci = lift["bootstrap_ci95"]
    return [
        f"{pp(lift['lift'])} ({lift['n_common']} items)",
        p_value(lift["mcnemar_exact_p"]),
        "n/a" if not ci else f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}] pp",
    ]


def ablation_section(p: dict) -> Section:
    a = p["ablation"]
    sec = Section("Ablation (the paper's Table 4)")
    if "missing" in a:
        sec.paragraphs.append(f"Not computed: {a['missing']}.")
        return sec
    sec.paragraphs.append(
        f"Lifts are paired on the items both runs have: exact McNemar p and a paired bootstrap 95% "
        f"interval ({a['resamples']} resamples, seed {a['seed']})."
    )
    sec.tables.append(
        Table(
            [
                "model",
                "closed-book",
                "no-search",
                "full tools",
                "lift from tools",
                "p",
                "95% CI",
                "lift from search",
                "p",
                "95% CI",
            ],
            [
                [r["model"]]
                + [pct(r["accuracy"].get(k), "n/a (no run)") for k in ("closed_book", "no_search", "full")]
                + _lift(r["lift_tools"])
                + _lift(r["lift_search"])
                for r in a["rows"]
            ],
        )
    )
    for r in a["rows"]:
        sec.paragraphs += [f"{m[0].upper()}{m[1:]}." for m in r["missing"]]
    return sec


def difficulty_section(p: dict, missing_plot: dict) -> Section:
    d = p["difficulty"]
    sec = Section("Item difficulty (the paper's Figure 4)")
    if "missing" in d:
        sec.paragraphs.append(f"Not computed: {d['missing']}.")
        return sec
    sec.paragraphs.append(
        f"{d['n_items']} items all {d['n_runs']} full-tool runs have, by how many runs answered them: "
        f"low = {d['bands']['low']}, high = {d['bands']['high']}, mid = the rest."
    )
    for key, title in (("by_cell", "type x depth"), ("by_tier", "consensus tier")):
        sec.tables.append(
            Table(
                [title, "low", "mid", "high"],
                [[k, str(v["low"]), str(v["mid"]), str(v["high"])] for k, v in d[key].items()],
            )
        )
    sec.plots.append("panel-coverage")
    sec.paragraphs += [missing_plot[k] for k in ("panel-coverage",) if k in missing_plot]
    return sec


def bigram_section(p: dict) -> Section:
    b = p["bigrams"]
    sec = Section(
        "Bigrams (the paper's Table 13)",
        paragraphs=[
            f"Per run, the accuracy of items whose trajectory contains the bigram against those that do not; "
            f"{b['test']} candidates, significant at Bonferroni-corrected p < {b['alpha']}."
        ],
    )
    panel = b["panel"]
    sec.paragraphs.append(
        f"The paper's table: bigrams present in at least {panel['threshold']} of the {panel['n_models']} models, "
        "ranked by the panel-mean accuracy difference |Δ| (the mean of the models' differences); Sig. count: the "
        "models where the difference is significant after Bonferroni; Models: the models with the bigram in at least "
        "one trajectory. The per-run significant pairs follow."
    )
    for title, key in (("Productive (positive Δ)", "productive"), ("Anti-productive (negative Δ)", "anti_productive")):
        if panel[key]:
            sec.tables.append(
                Table(
                    ["bigram", "Δ (pp)", "Sig. count", "Models"],
                    [
                        [
                            " → ".join(x["bigram"]),
                            pp(x["mean_difference"]),
                            f"{x['significant_models']}/{panel['n_models']}",
                            f"{x['models']}/{panel['n_models']}",
                        ]
                        for x in panel[key]
                    ],
                    title + ".",
                    left=1,
                )
            )
    if not panel["productive"] and not panel["anti_productive"]:
        sec.paragraphs.append(
            f"No bigram is present in at least {panel['threshold']} of the {panel['n_models']} models with a "
            "difference defined."
        )
    rows, quiet = [], []
    for r in b["rows"]:
        sig = [x for x in r["bigrams"] if x["significant"]]
        if not sig:
            quiet.append(f"{r['run']} ({len(r['bigrams'])} tested)")
        for x in sig:
            rows.append(
                [
                    r["run"],
                    " → ".join(x["bigram"]),
                    f"{x['correct_with']}/{x['n_with']}",
                    f"{x['correct_without']}/{x['n_without']}",
                    pp(x["difference"]),
                    p_value(x["p_bonferroni"]),
                ]
            )
    if rows:
        sec.tables.append(
            Table(["run", "bigram", "right with", "right without", "difference", "p (Bonferroni)"], rows, left=2)
        )
    if quiet:
        sec.paragraphs.append("No significant bigram: " + ", ".join(quiet) + ".")
    return sec


def trigram_section(p: dict) -> Section:
    return Section(
        "Top trigram (the paper's Table 14)",
        tables=[
            Table(
                ["tier", "run", "top trigram", "count", "of trigrams", "concentration", "top-5 share (addition)"],
                [
                    [
                        r["tier"],
                        r["run"],
                        " → ".join(r["top"]) if r["top"] else "none (no trajectory of three calls)",
                        str(r["top_count"]),
                        str(r["total"]),
                        pct(r["concentration"]),
                        pct(r["top5_share"]),
                    ]
                    for r in p["trigrams"]["rows"]
                ],
                "Concentration: the top trigram's share of all the run's trigrams; grouped by tier, ranked by "
                "concentration within it.",
                left=3,
            )
        ],
    )


def non_submission_section(p: dict) -> Section:
    rows = p["non_submission"]["rows"]
    terms = [t for t in p["non_submission"]["terminations"] if any(t in r["by_termination"] for r in rows)]
    return Section(
        "Non-submission by terminating cap (the paper's Table 15)",
        tables=[
            Table(
                ["run", "items", "no answer"] + terms,
                [
                    [r["run"], str(r["n"]), f"{pct(r['share'])} ({r['non_submitted']})"]
                    + [
                        f"{pct(r['by_termination'][t]['share'])} ({r['by_termination'][t]['n']})"
                        if t in r["by_termination"]
                        else "0.0% (0)"
                        for t in terms
                    ]
                    for r in rows
                ],
                "Share of all items without an answer, by what ended them (all runs, ablations included).",
                left=1,
            )
        ],
    )


LABEL_GROUP_LABELS = {
    "header": "Read a direct-labelled section (header match)",
    "content": "Read the labelled content inside its parent section",
    "none": "Read no direct-labelled content",
}


def _closed_book_cell(row: dict) -> str:
    """A group's closed-book accuracy with its item count, or why there is none."""
    if row["closed_book_n"]:
        return f"{pct(row['closed_book_accuracy'])} ({row['closed_book_n']})"
    return "n/a (no items)" if not row["n"] else "n/a (no closed-book run)"


def label_groups_section(p: dict) -> Section:
    g = p["label_groups"]
    sec = Section(
        "Evidence groups of recall-credited trajectories (the paper's Table 11)",
        paragraphs=[
            f"The {g['n']} recall-credited trajectories (paper recall 1) of {g['runs']} models' Table 2 runs, by how "
            "their reads met a direct label: a read section's header is the label; else a subsection label stood "
            "verbatim inside the read (parent) section; else neither. Conversion: right answers among them. Zero-tool: "
            "the same model's closed-book accuracy on the same items."
        ],
    )
    sec.tables.append(
        Table(
            ["group", "n", "share", "conversion", "zero-tool"],
            [
                [
                    LABEL_GROUP_LABELS[k],
                    str(r["n"]),
                    pct(r["share"]),
                    pct(r["conversion"]),
                    _closed_book_cell(r),
                ]
                for k, r in ((k, g["rows"][k]) for k in g["groups"])
            ],
            left=1,
        )
    )
    if "missing" in g:
        sec.paragraphs.append(f"{g['missing'][0].upper()}{g['missing'][1:]}.")
    return sec


def contact_section(p: dict) -> Section:
    c = p["contact"]
    sec = Section(
        "Evidence contact (an addition beside Table 11)",
        paragraphs=[
            f"Pooled over {c['runs']} Table 2 runs ({c['n']} observed item-runs): a gold paper inspected (an executed "
            "read), else exposed (shown in a search or reference list), else neither; accuracy in each, and the "
            "closed-book accuracy of the same model on the same items."
        ],
    )
    sec.tables.append(
        Table(
            ["contact", "item-runs", "share", "accuracy", "closed-book accuracy"],
            [
                [
                    CONTACT_LABELS[k],
                    str(r["n"]),
                    pct(r["share"]),
                    pct(r["accuracy"]),
                    _closed_book_cell(r),
                ]
                for k, r in ((k, c["rows"][k]) for k in CONTACTS)
            ],
        )
    )
    if "missing" in c:
        sec.paragraphs.append(f"{c['missing'][0].upper()}{c['missing'][1:]}.")
    return sec


def _ci(ci) -> str:
    return "n/a" if not ci else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def closed_book_section(p: dict) -> Section:
    c = p["closed_book"]
    sec = Section("Closed-book accuracy (the paper's Table 18)")
    if "missing" in c:
        sec.paragraphs.append(f"Not computed: {c['missing']}.")
        return sec
    sec.paragraphs.append(
        "Per model: zero-tool (its closed-book run: one answer from the question alone, no tools), full-tool (its "
        "Table 2 accuracy) and Δ = full - zero; grouped by tier, ranked by full-tool accuracy. Chance is "
        f"{pct(c['chance'])} (four options). Additions: the closed-book Wilson 95% interval, its accuracy by question "
        "type, the two accuracies on the items both runs have and their difference, and a pooled row."
    )
    body = [
        [
            r["tier"],
            r["model"] or "unknown",
            pct(r["zero"]),
            pct(r["full"]),
            pp(r["delta"]),
            r["run"],
            r["full_run"],
            _ci(r["ci95"]),
            pct(r["by_type"]["ST"]["accuracy"], "n/a (no items)"),
            pct(r["by_type"]["MT"]["accuracy"], "n/a (no items)"),
            f"{pct(r['closed_book_on_common'])} → {pct(r['full_on_common'])} ({r['n_common']})",
            pp(r["lift_on_common"]),
        ]
        for r in c["rows"]
    ]
    pooled = c["pooled"]
    body.append(
        ["", "all closed-book runs", pct(pooled["accuracy"]), "", "", "", "", _ci(pooled["ci95"]), "", "", "", ""]
    )
    sec.tables.append(
        Table(
            [
                "tier",
                "model",
                "zero",
                "full",
                "Δ",
                "closed-book run",
                "Table 2 run",
                "95% CI",
                "ST",
                "MT",
                "on common items",
                "lift on common items",
            ],
            body,
            left=2,
        )
    )
    differ = [r["model"] for r in c["rows"] if not r["same_items"]]
    if differ:
        sec.paragraphs.append(
            "The closed-book and Table 2 runs of " + ", ".join(differ) + " have different items: their Δ compares "
            "different item sets; the lift on common items compares like with like."
        )
    for r in c["unpaired"]:
        sec.paragraphs.append(f"Closed-book run {r['run']} ({pct(r['accuracy'])}) is not in the table: {r['reason']}.")
    return sec


def closed_book_strata_section(p: dict) -> Section:
    c = p["closed_book_strata"]
    sec = Section("Closed-book accuracy by stratum (the paper's Table 19)")
    if "axes" not in c:
        sec.paragraphs.append(f"Not computed: {c['missing']}.")
        return sec
    sec.paragraphs.append(
        f"Zero-tool accuracy over the {c['n_items']} items of the closed-book runs, one column per tier (right "
        "answers over the tier's closed-book item-runs in the stratum). Citations: the construction-time count, the "
        "maximum over an item's gold papers, in rank-based quartiles (ranges give the counts); year: the seed paper's."
    )
    body = []
    for axis, title in (("citations", "Citations"), ("year", "Year"), ("venue", "Venue")):
        for i, r in enumerate(c["axes"].get(axis, [])):
            stratum = r["stratum"]
            if axis == "citations":
                stratum += " (no items)" if r["low"] is None else f" ({r['low']:,}–{r['high']:,})"
            body.append(
                [title if i == 0 else "", stratum, str(r["n"])]
                + [pct(r["cells"][t]["accuracy"], "n/a") for t in c["tiers"]]
            )
    sec.tables.append(Table(["axis", "stratum", "n"] + c["tiers"], body, left=2))
    for key in ("citations_missing", "citations_partial"):
        if key in c:
            sec.paragraphs.append(f"Citation quartiles: {c[key]}.")
    return sec


def closed_book_exposure_section(p: dict) -> Section:
    c = p["closed_book_by_exposure"]
    sec = Section("Closed-book accuracy by evidence contact (an addition)")
    if "missing" in c:
        sec.paragraphs.append(f"Not computed: {c['missing']}.")
        return sec
    sec.paragraphs.append(
        "Items grouped by what the model's full-tool run did with the gold paper (inspected: an "
        "executed read; exposed: shown in a search or reference list but not read; neither); in each "
        "stratum the model's closed-book accuracy on those items (items), then its full-tool accuracy."
    )
    header, groups = ["run", "closed-book run"], [("", 2)]
    for k in c["strata"]:
        header += ["items", "closed-book", "full tools"]
        groups.append((CONTACT_LABELS[k], 3))
    body = []
    for r in c["rows"]:
        line = [r["run"], r["closed_book_run"]]
        for k in c["strata"]:
            s = r["strata"][k]
            line += [
                str(s["closed_book"]["n"]),
                pct(s["closed_book"]["accuracy"], "n/a"),
                pct(s["full"]["accuracy"], "n/a"),
            ]
        body.append(line)
    sec.tables.append(Table(header, body, left=2, groups=groups))
    return sec


def _corr(value, p, ci) -> str:
    if value is None:
        return "n/a"
    shown = p_value(p)
    return f"{value:+.2f} {_signed_ci(ci)} (p {shown if shown.startswith('<') else '= ' + shown})"


def _signed_ci(ci) -> str:
    return "[n/a]" if not ci else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


MARK_SIGNS = {"proxy": "*", "context_managed": "†"}


def _score(value, mark) -> str:
    return "—" if value is None else f"{value:g}{MARK_SIGNS.get(mark, '')}"


def external_section(p: dict) -> Section:
    x = p["external"]
    sec = Section("Correlation with external benchmarks (the paper's Table 16)")
    if "rows" not in x:
        sec.paragraphs.append(f"Not computed: {x['missing']}.")
        return sec
    sec.paragraphs.append(
        "Each model's external scores (as given, in the file's column order; * a proxy from a sibling checkpoint, † a "
        "context-managed variant, — not known) beside its AgentHop accuracy (its Table 2 run), grouped by tier and "
        "ranked by accuracy."
    )
    benches = x["benchmarks"]
    sec.tables.append(
        Table(
            ["tier", "model"] + benches + ["AgentHop"],
            [
                [g["tier"], g["model"]]
                + [_score(g["scores"][b], g["marks"].get(b)) for b in benches]
                + [pct(g["accuracy"])]
                for g in x["grid"]
            ],
            left=2,
        )
    )
    sec.paragraphs.append(
        "Per benchmark, over the models with both a score and a Table 2 run: Spearman's rho and n, the paper's "
        "figures. Additions: its two-sided p (exact over every ordering up to 8 models, else the t approximation), "
        "Pearson's r, and 95% intervals from Fisher's z (rho's variance 1.06 / (n - 3); none at ±1)."
    )
    sec.tables.append(
        Table(
            ["benchmark", "rho", "n", "proxies", "rho [95% CI] (p)", "Pearson r [95% CI] (p)", "note"],
            [
                [
                    r["benchmark"],
                    "n/a" if r["spearman"] is None else f"{r['spearman']:+.2f}",
                    str(r["n"]),
                    str(r["proxies"]),
                    _corr(r["spearman"], r["spearman_p"], r["spearman_ci95"]),
                    _corr(r["pearson"], r["pearson_p"], r["pearson_ci95"]),
                    r.get("missing") or r.get("note") or "",
                ]
                for r in x["rows"]
            ],
            left=1,
        )
    )
    if x["unmatched"]:
        sec.paragraphs.append(
            "Models in the scores file without a full-tool run in the panel: " + ", ".join(x["unmatched"]) + "."
        )
    if x["without_scores"]:
        sec.paragraphs.append("Models in the panel without any external score: " + ", ".join(x["without_scores"]) + ".")
    return sec


REPLICATE_HEADER = {
    "accuracy": "accuracy",
    "section_recall": "section recall",
    "conversion": "conversion",
    "tokens_k": "tokens (k)",
    "paper_recall_st": "paper recall ST",
    "paper_recall_mt": "paper recall MT",
    "conversion_st": "conversion ST",
    "conversion_mt": "conversion MT",
    "non_submission": "non-submission",
}


def _rep(value, col: str) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}" if col == "tokens_k" else f"{value:.3f}"


def replicates_section(p: dict) -> Section:
    x = p["replicates"]
    sec = Section("Replicates (the paper's Table 17)")
    for r in x.get("set_aside", []):
        sec.paragraphs.append(
            f"Run {r['run']} of {r['model']} is not a replicate of Run 0 {r['run0']}: " + "; ".join(r["reasons"]) + "."
        )
    if "missing" in x:
        sec.paragraphs.insert(0, f"Not computed: {x['missing']}.")
        return sec
    sec.paragraphs.insert(
        0,
        "Each model with replicates of its Run 0 (the run Table 2 shows; same items, caps and protocol): per metric "
        "its value in each run, then the mean, the population standard deviation and the range (max - min), as "
        "fractions (tokens in thousands). The second table, an addition: more columns, and the sample standard "
        "deviation (n - 1).",
    )
    cols, adds = x["columns"], x["additions"]
    width = max(len(m["rows"]) for m in x["models"])
    body = []
    for m in x["models"]:
        pad = [""] * (width - len(m["rows"]))
        for i, c in enumerate(cols):
            sp = m["spread"][c]
            body.append(
                [m["model"] if i == 0 else "", REPLICATE_HEADER[c]]
                + [_rep(r[c], c) for r in m["rows"]]
                + pad
                + [_rep(sp["mean"], c), _rep(sp["std"], c), _rep(sp["range"], c)]
            )
    sec.tables.append(
        Table(
            ["model", "metric"] + [f"Run {i}" for i in range(width)] + ["mean", "std", "range"],
            body,
            "Runs: " + "; ".join(f"{m['model']}: " + ", ".join(r["run"] for r in m["rows"]) for m in x["models"]) + ".",
            left=2,
        )
    )
    extra = []
    for m in x["models"]:
        for i, c in enumerate(cols + adds):
            sp = m["spread"][c]
            extra.append(
                [m["model"] if i == 0 else "", REPLICATE_HEADER[c]]
                + [_rep(sp["mean"], c), _rep(sp["sample_std"], c), _rep(sp["min"], c), _rep(sp["max"], c)]
            )
    sec.tables.append(Table(["model", "metric", "mean", "sample sd", "min", "max"], extra, "Additions.", left=2))
    return sec


def after_wrong_section(p: dict) -> Section:
    a = p["after_wrong_paper"]
    return Section(
        "After a wrong-paper read (the paper's Table 3)",
        tables=[
            Table(
                ["run", "reads"] + a["categories"],
                [
                    [r["run"], str(r["n"])]
                    + [f"{pct(r['categories'][k]['share'])} ({r['categories'][k]['n']})" for k in a["categories"]]
                    for r in a["rows"]
                ],
                "The next call after each delivered read of a non-gold paper (end: no further call, an addition).",
                left=1,
            )
        ],
    )


def figures_section(missing_plot: dict) -> Section:
    names = ("panel-accuracy-vs-recall", "panel-transitions")
    return Section(
        "Figures (the paper's Figures 5 and 6)",
        plots=[n for n in names if n not in missing_plot],
        paragraphs=[missing_plot[n] for n in names if n in missing_plot],
    )


def robustness_sections(p: dict) -> list[Section]:
    if p["robustness"] is None:
        return [
            Section(
                "Robustness",
                paragraphs=[
                    "Not computed: Cronbach's alpha, item-total correlations and "
                    "replicates need two or more full-tool runs."
                ],
            )
        ]
    out = []
    for sec in comparison_document(p["robustness"]).sections[1:]:  # [0] is the runs table, the main table here
        sec.title = f"Robustness: {sec.title}"
        out.append(sec)
    return out


def runs_section(p: dict) -> Section:
    return Section(
        "Runs in the panel",
        tables=[
            Table(
                ["run", "tier", "family", "model", "role", "Run 0", "items"],
                [
                    [
                        r["run"],
                        r["tier"] or "none",
                        r.get("family") or "none",
                        r["model"] or "unknown",
                        r["role"],
                        "yes" if r.get("run0") else "no",
                        str(r["n"]),
                    ]
                    for r in p["runs"]
                ],
                left=5,
            )
        ],
        paragraphs=[
            f"Corpus {(p['corpus'] or {}).get('path')} (id {(p['corpus'] or {}).get('corpus_id') or 'n/a'}); "
            f"scorer {p['scorer_version']}, panel schema {p['schema_version']}."
        ],
    )


def panel_document(p: dict) -> Document:
    missing_plot = missing_plots(p)
    sections = [
        main_section(p),
        stopping_section(p),
        cell_section(p),
        ablation_section(p),
        difficulty_section(p, missing_plot),
        bigram_section(p),
        trigram_section(p),
        non_submission_section(p),
        label_groups_section(p),
        contact_section(p),
        closed_book_section(p),
        closed_book_strata_section(p),
        closed_book_exposure_section(p),
        after_wrong_section(p),
        figures_section(missing_plot),
        external_section(p),
        replicates_section(p),
        *robustness_sections(p),
        runs_section(p),
    ]
    sections, skipped = _set_aside_not_computed(sections)
    if skipped:
        sections.insert(
            len(sections) - 1,
            Section("Not computed here", bullets=skipped),
        )
    intro = [line for line in (panel_finding(p),) if line]
    return Document(title="AgentHop panel", sections=sections, intro=intro)


def _set_aside_not_computed(sections: list[Section]) -> tuple[list[Section], list[str]]:
    """Sections that are only a "Not computed: why" line leave the body; their reasons gather in one list, so the
    contents lead to tables that exist."""
    kept, skipped = [], []
    for sec in sections:
        why = [t for t in sec.paragraphs if t.startswith("Not computed")]
        if why and not sec.tables and not sec.bullets and not sec.plots:
            skipped.append(f"{sec.title}. {why[0]}")
        else:
            kept.append(sec)
    return kept, skipped


def panel_finding(p: dict) -> str | None:
    """One sentence: the most accurate full-tool run, and whether the panel can tell it from the next one."""
    rows = [r for r in p["main_table"]["rows"] if r["accuracy"] is not None]
    if not rows:
        return None
    return ranking_finding(
        [{"run": r["run"], "accuracy": r["accuracy"], "n": r["n"]} for r in rows],
        p.get("robustness", {}).get("pairwise", []) if isinstance(p.get("robustness"), dict) else [],
        "full-tool run",
    )


def write_panel_reports(p: dict, directory: str | Path) -> Path:
    """panel.json, panel.md and panel.html in ``directory`` (created if needed)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "panel.json", p)
    doc = panel_document(p)
    (out / "panel.md").write_text(report_md.render(doc), encoding="utf-8")
    doc.plots = panel_plots(p)
    (out / "panel.html").write_text(report_html.render(doc), encoding="utf-8")
    return out
