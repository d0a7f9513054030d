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
from agenthop.scorer.panel_tables import MAIN_COLUMNS
from agenthop.scorer.reports import write_json
from agenthop.scorer.trajectory import SCOPE_LABELS, STOP_LABELS

PANEL_FILES = ("panel.json", "panel.md", "panel.html")
LEGEND = (
    "● tier leader (best in its tier, a tier of one run included; shaded in the HTML report), ★ panel best (best "
    "of all full-tool runs; bold in the HTML report); tied values are all marked. A conversion cell is marked "
    "● only where the exact McNemar test on the items both the tier leader and the runner-up recalled separates "
    "them (p < {alpha}); conversion has no ★. Rows are ranked by accuracy within each tier; runs of equal accuracy "
    "share a rank, written 2=, and keep the order given."
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
        return num(v, 0, NO_TOKENS)
    if col == "mean_turns":
        return num(v, 2, NO_TURNS)
    if col == "mean_budget":
        return num(v, 2)
    return _marked(row, col, pct(v))


MAIN_HEADER = [
    "tier",
    "run",
    "model",
    "rank in tier",
    "n",
    "accuracy",
    "paper recall ST",
    "paper recall MT",
    "section recall",
    "conversion ST",
    "conversion MT",
    "calls/turn",
    "tokens",
    "turns",
    "budget",
    "non-submission",
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
                [r["tier"], r["run"], r["model"] or "unknown", _rank(r), str(r["n"])]
                + [_main_cell(r, c) for c in MAIN_COLUMNS]
                for r in values
            ],
            "One row per full-tool run, grouped by tier, ranked by accuracy within it.",
            left=3,
        )
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
        f"Accuracy ± Wilson 95% half-width (items). Easiest cell {c['easiest']}, hardest "
        f"{c['hardest']} (by accuracy pooled over the full-tool runs); drop = easiest - hardest."
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
            ["run"] + c["cells"] + [f"drop {c['easiest']} → {c['hardest']}"],
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
                + [pp(r["drop"])]
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
                ["run", "top trigram", "count", "of trigrams", "concentration", "top-5 share"],
                [
                    [
                        r["run"],
                        " → ".join(r["top"]) if r["top"] else "none (no trajectory of three calls)",
                        str(r["top_count"]),
                        str(r["total"]),
                        pct(r["concentration"]),
                        pct(r["top5_share"]),
                    ]
                    for r in p["trigrams"]["rows"]
                ],
                "Concentration: the top trigram's share of all the run's trigrams.",
                left=2,
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


def contact_section(p: dict) -> Section:
    c = p["contact"]
    sec = Section(
        "Evidence contact (the paper's Table 11)",
        paragraphs=[
            f"Pooled over {c['runs']} full-tool runs ({c['n']} observed item-runs): a gold paper inspected (an executed "
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
                    f"{pct(r['closed_book_accuracy'])} ({r['closed_book_n']})"
                    if r["closed_book_n"]
                    else "n/a (no items)"
                    if not r["n"]
                    else "n/a (no closed-book run)",
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
        "Each closed-book run (one answer from the question alone, no tools): accuracy with its Wilson "
        "95% interval and by question type; beside it the full-tool run of the same model on the items "
        f"both have, and the lift. Chance is {pct(c['chance'])} (four options)."
    )
    body = [
        [
            r["run"],
            r["model"] or "unknown",
            str(r["n"]),
            pct(r["accuracy"]),
            _ci(r["ci95"]),
            pct(r["by_type"]["ST"]["accuracy"], "n/a (no items)"),
            pct(r["by_type"]["MT"]["accuracy"], "n/a (no items)"),
            r["full_run"] or "n/a (no full-tool run of the model)",
            f"{pct(r['closed_book_on_common'])} → {pct(r['full_on_common'])} ({r['n_common']})"
            if r["full_run"]
            else "n/a",
            pp(r["lift"]),
        ]
        for r in c["rows"]
    ]
    pooled = c["pooled"]
    body.append(
        ["all closed-book runs", "", str(pooled["n"]), pct(pooled["accuracy"]), _ci(pooled["ci95"]), "", "", "", "", ""]
    )
    sec.tables.append(
        Table(
            [
                "run",
                "model",
                "items",
                "accuracy",
                "95% CI",
                "ST",
                "MT",
                "full-tool run",
                "closed-book → full on common items",
                "lift",
            ],
            body,
            left=2,
        )
    )
    return sec


def closed_book_exposure_section(p: dict) -> Section:
    c = p["closed_book_by_exposure"]
    sec = Section("Closed-book accuracy by exposure stratum (the paper's Table 19)")
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


def external_section(p: dict) -> Section:
    x = p["external"]
    sec = Section("Correlation with external benchmarks (the paper's Table 16)")
    if "rows" not in x:
        sec.paragraphs.append(f"Not computed: {x['missing']}.")
        return sec
    sec.paragraphs.append(
        "Per benchmark, over the models with both a score and a full-tool run (accuracy: the mean over "
        "the model's full-tool runs): Spearman's rho and Pearson's r with 95% intervals (Fisher's z; "
        "rho's variance 1.06 / (n - 3)) and two-sided p."
    )
    sec.tables.append(
        Table(
            ["benchmark", "models", "Spearman rho [95% CI]", "Pearson r [95% CI]", "note"],
            [
                [
                    r["benchmark"],
                    str(r["n"]),
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
    "paper_recall_st": "paper recall ST",
    "paper_recall_mt": "paper recall MT",
    "section_recall": "section recall",
    "conversion_st": "conversion ST",
    "conversion_mt": "conversion MT",
    "non_submission": "non-submission",
}


def replicates_section(p: dict) -> Section:
    x = p["replicates"]
    sec = Section("Replicates (the paper's Table 17)")
    if "missing" in x:
        sec.paragraphs.append(f"Not computed: {x['missing']}.")
        return sec
    sec.paragraphs.append(
        "Each model with several full-tool runs: one row per run, then the mean ± standard deviation "
        "(n - 1) and the range over its runs."
    )
    cols = x["columns"]
    for m in x["models"]:
        body = [[r["run"], str(r["n"])] + [pct(r[c]) for c in cols] for r in m["rows"]]
        body.append(
            ["mean ± sd", ""]
            + [
                "n/a"
                if m["spread"][c]["mean"] is None
                else f"{pct(m['spread'][c]['mean'])} ± {100 * (m['spread'][c]['std'] or 0):.1f}"
                for c in cols
            ]
        )
        body.append(
            ["range", ""]
            + [
                "n/a"
                if m["spread"][c]["min"] is None
                else f"{pct(m['spread'][c]['min'])} – {pct(m['spread'][c]['max'])}"
                for c in cols
            ]
        )
        sec.tables.append(
            Table(["run", "items"] + [REPLICATE_HEADER[c] for c in cols], body, f"Model {m['model']}.", left=1)
        )
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
                ["run", "tier", "model", "role", "items"],
                [[r["run"], r["tier"] or "none", r["model"] or "unknown", r["role"], str(r["n"])] for r in p["runs"]],
                left=4,
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
        contact_section(p),
        closed_book_section(p),
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
