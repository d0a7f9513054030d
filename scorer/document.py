"""The content of a report as a renderer-neutral document (sections of text, tables and plots).

report_md.py and report_html.py render the same document, so both reports
always show the same numbers. A number that was not measured is never shown as
a number: it reads ``n/a`` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agenthop.scorer import glossary
from agenthop.scorer.audit import CATEGORIES, CATEGORY_LABELS, RANK_BANDS
from agenthop.scorer.gold import CELLS
from agenthop.scorer.trajectory import AFTER_NONGOLD, SCOPE_LABELS, STOP_LABELS

NO_TURNS = "n/a (no turn data)"
NO_TOKENS = "n/a (no token data)"


@dataclass(frozen=True)
class Link:
    """A table cell that links somewhere (an item's session in the trajectory viewer)."""

    text: str
    href: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Marked:
    """A table cell carrying marks (``tier_leader``, ``panel_best``): symbols in plain text, and in HTML also the
    paper's emphasis (a shaded cell for a tier leader, bold for the panel best)."""

    text: str
    marks: tuple[str, ...]

    SYMBOLS = {"tier_leader": "●", "panel_best": "★"}

    def __str__(self) -> str:
        symbols = "".join(self.SYMBOLS[m] for m in self.marks)
        return f"{self.text} {symbols}" if symbols else self.text


@dataclass
class Table:
    header: list[str]
    rows: Sequence[Sequence[str | Anchor]]  # an Anchor cell is a glossary term others link to; the rest is text
    caption: str | None = None
    left: int = 0  # leading columns of text (run names): left-aligned and not wrapped in HTML
    groups: list[tuple[str, int]] | None = None  # header groups over the columns (label, span), e.g. a scope's columns


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)  # plot names
    bullets: list[str] = field(default_factory=list)
    definitions: list[tuple[str, str]] = field(default_factory=list)  # term, description


@dataclass
class Document:
    title: str
    sections: list[Section]
    plots: dict[str, str] = field(default_factory=dict)
    intro: list[str] = field(default_factory=list)  # lines under the title, before the contents


def section_id(title: str) -> str:
    """The HTML id (and Markdown anchor) of a section: its title in lower case, words joined by '-'."""
    return "-".join("".join(ch if ch.isalnum() else " " for ch in title.lower()).split())


def term(name: str):
    """A category name as a link to its glossary entry, when the glossary explains it."""
    return Link(name, "#" + glossary.anchor(name)) if glossary.known(name) else name


def glossary_section(used: set[str]) -> Section | None:
    """The meaning of every category name the report's tables use, grouped as in the glossary (None: no such names)."""
    sec = Section(
        "Glossary", paragraphs=[f"What the category names in the tables mean; full definitions in {glossary.SOURCE}."]
    )
    for title, terms in glossary.GROUPS:
        shown = [(t, m) for t, m in terms.items() if t in used]
        if shown:
            sec.tables.append(Table(["term", "meaning"], [[Anchor(t, glossary.anchor(t)), m] for t, m in shown], title))
    return sec if sec.tables else None


@dataclass(frozen=True)
class Anchor:
    """A table cell that others link to (a glossary term)."""

    text: str
    id: str

    def __str__(self) -> str:
        return self.text


def _used_terms(sections: list[Section]) -> set[str]:
    return {
        c.text
        for sec in sections
        for t in sec.tables
        for row in t.rows
        for c in row
        if isinstance(c, Link) and c.href.startswith("#g-")
    }


def pct(x, na: str = "n/a") -> str:
    return na if x is None else f"{100 * x:.1f}%"


def num(x, digits: int = 1, na: str = "n/a") -> str:
    if x is None:
        return na
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and digits == 0):
        return f"{int(x):,}"
    return f"{x:,.{digits}f}"


def ci(m: dict) -> str:
    c = m.get("accuracy_ci95")
    return "" if not c else f" [{100 * c[0]:.1f}, {100 * c[1]:.1f}]"


def _frac(k, n) -> str:
    return f"{k}/{n}"


def axis_rows(metrics: dict) -> list[list[str]]:
    """Rows of the main four-axis table: overall, ST, MT and the four cells."""
    groups = [("overall", metrics["overall"])]
    groups += [(k, v) for k, v in metrics["by_type"].items()]
    groups += [(c, metrics["by_cell"][c]) for c in CELLS if metrics["by_cell"][c]["n"]]
    rows = []
    for name, m in groups:
        rows.append(
            [
                name,
                str(m["n"]),
                pct(m["accuracy"]) + ci(m),
                f"{pct(m['paper_recall'])} ({m['paper_recall_n']})",
                pct(m["section_recall"]),
                f"{pct(m['conversion'])} ({_frac(m['conversion_correct'], m['conversion_n'])})"
                if m["conversion_n"]
                else "n/a (no recall)",
                num(m["calls_per_turn"], 2, NO_TURNS),
            ]
        )
    return rows


AXIS_HEADER = ["group", "n", "accuracy [95% CI]", "paper recall", "section recall", "conversion", "calls/turn"]


def _group_table(groups: dict, title: str) -> Table:
    rows = [
        [
            k,
            str(m["n"]),
            pct(m["accuracy"]) + ci(m),
            pct(m["paper_recall"]),
            pct(m["section_recall"]),
            pct(m["conversion"], "n/a (no recall)"),
        ]
        for k, m in groups.items()
    ]
    return Table(header=[title, "n", "accuracy [95% CI]", "paper recall", "section recall", "conversion"], rows=rows)


EMPTY_ROW = "–"
EMPTY_NOTE = "– : no item fell in this row, so it has no rate."


def rate_or_dash(n: int, value) -> str:
    """A rate over a row's items; a row with no item shows a dash (explained once under the table), not 'n/a'."""
    return EMPTY_ROW if not n else pct(value)


def _with_note(caption: str | None, rows: list[list[str]]) -> str | None:
    if not any(EMPTY_ROW in row for row in rows):
        return caption
    return f"{caption} {EMPTY_NOTE}" if caption else EMPTY_NOTE


def stopping_tables(stop: dict) -> list[Table]:
    """The paper's three stopping scopes (Table 9), one table each; accuracy per category is an addition."""
    tables = []
    for scope in SCOPE_LABELS:
        rows = [
            [term(STOP_LABELS[k]), str(v["n"]), pct(v["share"]), rate_or_dash(v["n"], v["accuracy"])]
            for k, v in stop[scope]["categories"].items()
        ]
        tables.append(
            Table(
                [SCOPE_LABELS[scope], "items", "share", "accuracy (addition)"],
                rows,
                _with_note(f"{stop[scope]['n']} items in scope.", rows),
            )
        )
    return tables


def budget_bands(bands: dict, caps: list[dict]) -> dict:
    """The budget bands a run's items could fall in: a band starting above every session's budget cap is left out."""
    budgets = [(e.get("value") or {}).get("budget") for e in caps]
    caps_given = [b for b in budgets if isinstance(b, int)]
    if not budgets or len(caps_given) < len(budgets):  # no sessions, or one without a budget cap
        return bands
    top = max(caps_given)
    return {k: v for k, v in bands.items() if v["n"] or int(k.split("-")[0].rstrip("+")) <= top}


def readable(value) -> str:
    """A setting's value for a reader, not a Python repr: dicts as 'key: value; ...', lists comma-separated."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        if not value:
            return "none"
        return "; ".join(
            f"{str(k).replace('_', ' ')}: " + (f"({readable(v)})" if isinstance(v, dict) and v else readable(v))
            for k, v in value.items()
        )
    if isinstance(value, (list, tuple)):
        return ", ".join(readable(v) for v in value) or "none"
    return str(value)


def provenance(s: dict) -> list[tuple[str, str]]:
    """The "Run and provenance" definitions: who ran what, with which settings, on which corpus, scored how."""
    run, corpus, items = s["run"], s["corpus"], s["items"]
    out = [("run", f"{run['name']} (label {run['label'] or 'none'})")]
    people = participants(s)
    if people is not None:  # a person played through /play: no agent, model or runner settings to report
        out += [("played by", f"{', '.join(people) or 'a person'} (client human, through the play page)")]
    else:
        out += [("agent", run["agent"] or "unknown"), ("model", run["model"] or "unknown")]
        clients = sorted(
            {
                str((e["value"] or {}).get("name"))
                for e in s["sessions"].get("client", [])
                if (e["value"] or {}).get("name")
            }
        )
        if clients:
            out.append(("client", ", ".join(clients)))
    settings = run["settings"]
    if isinstance(settings, dict) and settings:
        out += [(str(k).replace("_", " "), readable(v)) for k, v in settings.items()]
    elif people is None:
        out.append(
            ("settings", "not recorded (no run.json or runner records)" if settings is None else readable(settings))
        )
    out.append(
        ("corpus", f"{corpus['path']} (schema {corpus['schema_version']}, id {corpus.get('corpus_id') or 'n/a'})")
    )
    out.append(
        (
            "caps in the sessions",
            " | ".join(f"{readable(e['value'])} ({e['sessions']} sessions)" for e in s["sessions"]["caps"])
            or "none recorded",
        )
    )
    out.append(("search", " | ".join(readable(e["value"]) for e in s["sessions"]["search"]) or "none recorded"))
    out.append(
        (
            "items",
            f"{items['n']} ({items['observed']} observed, {items['unobservable']} unobservable, "
            f"{items['items_with_retries']} with retries; item set from {items['expected_from']})",
        )
    )
    out.append(
        (
            "scored by",
            f"scorer {s['scorer_version']}, summary schema {s['schema_version']}, generated {s['generated_at']}",
        )
    )
    return out


def participants(s: dict) -> list[str] | None:
    """The participants when every session of the run is a person's (client ``human``), else None."""
    clients = [e["value"] or {} for e in s["sessions"].get("client", [])]
    if not clients or any(c.get("name") != "human" for c in clients):
        return None
    return sorted({str(c["participant"]) for c in clients if c.get("participant")})


def unplottable(s: dict) -> dict[str, str]:
    """Plots of a run report that would show nothing measured, with the sentence the report shows instead."""
    res = s["resources"]
    out = {}
    if not any(m["n"] for m in s["metrics"]["by_cell"].values()):
        out["cell-accuracy"] = "Accuracy by cell: no items, so no plot."
        out["cell-accuracy-vs-recall"] = "Accuracy vs paper recall: no items, so no plot."
    if not any(any(row) for row in s["trajectory"]["transitions"]["counts"]):
        out["transition-heatmap"] = "Tool transitions: no item made two tool calls in a row, so no heatmap."
    if not res["budget"]["measured"]:
        out["budget-hist"] = "Budget points: not measured, so no histogram: no item has a session log."
    if not res["turns"]["measured"]:
        out["turns-hist"] = (
            "Turns: not measured, so no histogram: no runner records and no turn numbers in the checkpoint calls."
        )
    if not res["tokens"]["measured"]:
        out["tokens-hist"] = (
            f"Tokens: not measured, so no histogram: {res['tokens'].get('reason') or 'no token counts in the logs'}."
        )
    return out


def items_section(s: dict, view_href: Callable[[str], str]) -> Section:
    """One row per item, linking each observed item to its session in the trajectory viewer."""
    rows = [
        [
            Link(r["item_id"], view_href(r["item_id"])) if r["observed"] else r["item_id"],
            r["cell"],
            r["reasoning_type"],
            r["answer"] or "none",
            r["correct_letter"],
            "yes" if r["correct"] else "no",
            term(CATEGORY_LABELS[r["audit"]]),
            term(r["termination"]),
            num(r["budget"], 0),
        ]
        for r in s["item_results"]
    ]
    return Section(
        "Items",
        paragraphs=["Each item opens its session in the trajectory viewer written beside this report."],
        tables=[
            Table(
                ["item", "cell", "reasoning", "answer", "correct option", "correct", "audit", "ended by", "budget"],
                rows,
            )
        ],
    )


def finding(metrics: dict) -> str | None:
    """One sentence: the weakest type x depth cell, and whether search or synthesis fails there.

    Search fails where the evidence is found (paper recall) less often than it is used when found
    (conversion); synthesis fails where it is found but not turned into the right answer."""
    cells = [
        (c, metrics["by_cell"][c])
        for c in CELLS
        if metrics["by_cell"][c]["n"] and metrics["by_cell"][c]["accuracy"] is not None
    ]
    if not cells:
        return None
    name, m = min(cells, key=lambda cm: (cm[1]["accuracy"], -cm[1]["n"]))
    if m["accuracy"] == 1:
        return "Finding: every cell is answered right (100%)."
    where = (
        f"Finding: fails mostly on {name} ({pct(m['accuracy'])} accuracy, {m['n']} item{'' if m['n'] == 1 else 's'})"
    )
    recall, conv = m["paper_recall"], m["conversion"]
    if conv is None:
        return f"{where}: paper recall {pct(recall)}, so search, not synthesis: no item there had all its gold papers read."
    converted = f"conversion {pct(conv)}, {m['conversion_correct']} of {m['conversion_n']}"
    if recall < conv:
        return (
            f"{where}: paper recall {pct(recall)}, so search, not synthesis ({converted} when the evidence was found)."
        )
    return f"{where}: paper recall {pct(recall)}, but {converted}, so synthesis, not search: the evidence was read and not used."


def result_section(s: dict) -> Section:
    """The result first: accuracy, then one line per axis (search, synthesis, tool use, resources)."""
    h, ov, res, cpt = s["headline"], s["metrics"]["overall"], s["resources"], s["calls_per_turn"]
    answered = sum(1 for r in s["item_results"] if r["answer"])
    n = s["items"]["n"]
    lead = (
        f"Accuracy {pct(ov['accuracy'])}{ci(ov)}: {sum(1 for r in s['item_results'] if r['correct'])} of {n} items "
        f"right, against 25% by chance; {answered} of {n} answered."
    )
    people = participants(s)
    turns = "actions" if people is not None else "turns"
    by_type = s["metrics"]["by_type"]

    def st_mt(key: str, none: str) -> str:
        """ST / MT values; a type without items says so instead of n/a."""
        return " / ".join(
            pct(h[f"{key}_{t.lower()}"], none) if by_type.get(t, {}).get("n") else f"no {t} items" for t in ("ST", "MT")
        )

    rows = [
        ["search", "paper recall (ST / MT)", st_mt("paper_recall", "n/a")],
        ["search", "section recall", pct(h["section_recall"])],
        [
            "synthesis",
            "conversion: accuracy when the evidence was found (ST / MT)",
            st_mt("conversion", "n/a (no recall)"),
        ],
        ["tool use", f"calls per {turns[:-1]}", num(cpt["value"], 2, NO_TURNS)],
        ["resources", "mean budget points", num(res["budget"]["mean"], 2)],
        ["resources", f"mean {turns}", num(res["turns"]["mean"], 2, NO_TURNS)],
        ["resources", "mean tokens", num(res["tokens"]["mean"], 0, NO_TOKENS)],
        [
            "resources",
            "ended by budget / turn cap / token cap",
            f"{pct(res['pct_budget'])} / {pct(res['pct_turn_cap'])} / {pct(res['pct_token_cap'])}",
        ],
    ]
    found = finding(s["metrics"])
    return Section(
        "Result", paragraphs=[p for p in (found, lead) if p], tables=[Table(["axis", "measure", "value"], rows)]
    )


def run_document(
    s: dict, plots: dict[str, str] | None = None, view_href: Callable[[str], str] | None = None
) -> Document:
    """``view_href``: item ID -> link to its session in a trajectory viewer; adds the Items section.

    The order is a reader's: the result and the four axes first, then how the run got there, the items,
    the glossary of category names, and provenance last."""
    run = s["run"]
    res = s["resources"]
    people = participants(s)
    sections: list[Section] = [result_section(s)]

    if s["warnings"]:
        sections.append(Section("Warnings", bullets=list(s["warnings"])))

    missing = unplottable(s)

    axes = Section(
        "Four axes",
        tables=[
            Table(
                AXIS_HEADER,
                axis_rows(s["metrics"]),
                "Accuracy with Wilson 95% interval; paper recall with the number of items "
                "recalled; conversion = accuracy among recalled items.",
            )
        ],
        plots=[p for p in ("cell-accuracy", "cell-accuracy-vs-recall") if p not in missing],
    )
    cpt = s["calls_per_turn"]
    axes.paragraphs += [missing[p] for p in ("cell-accuracy", "cell-accuracy-vs-recall") if p in missing]
    turns = "actions (one per tool call of a person)" if people is not None else "assistant turns"
    axes.paragraphs.append(
        f"Calls per turn: {num(cpt['value'], 2, NO_TURNS)}"
        + (
            f" ({cpt['tool_calls']} tool calls over {cpt['assistant_turns']} {turns}, of which"
            f" {cpt['turns_without_calls']} without a tool call; source: {cpt['source']})."
            if cpt["measured"]
            else "."
        )
    )
    sections.append(axes)

    r = Section(
        "Resources",
        plots=[p for p in ("budget-hist", "turns-hist", "tokens-hist") if p not in missing],
        paragraphs=[missing[p] for p in ("budget-hist", "turns-hist", "tokens-hist") if p in missing],
    )
    r.tables.append(
        Table(
            ["resource", "mean", "median", "max", "items measured", "source"],
            [
                [
                    "tokens",
                    num(res["tokens"]["mean"], 0, NO_TOKENS),
                    num(res["tokens"]["median"], 0, "n/a"),
                    num(res["tokens"]["max"], 0, "n/a"),
                    str(res["tokens"]["n"]),
                    ", ".join(res["tokens"]["sources"]) or "-",
                ],
                [
                    "turns",
                    num(res["turns"]["mean"], 2, NO_TURNS),
                    num(res["turns"]["median"], 1, "n/a"),
                    num(res["turns"]["max"], 0, "n/a"),
                    str(res["turns"]["n"]),
                    ", ".join(res["turns"]["sources"]) or "-",
                ],
                [
                    "budget points",
                    num(res["budget"]["mean"], 2),
                    num(res["budget"]["median"], 1),
                    num(res["budget"]["max"], 0),
                    str(res["budget"]["n"]),
                    "checkpoint",
                ],
            ],
        )
    )
    r.tables.append(
        Table(
            ["ended by", "share of items"],
            [
                ["token cap", pct(res["pct_token_cap"])],
                ["turn cap", pct(res["pct_turn_cap"])],
                ["budget", pct(res["pct_budget"])],
                ["no submission (any reason)", pct(res["pct_no_submission"])],
            ],
        )
    )
    r.tables.append(Table(["termination", "items"], [[term(k), str(v)] for k, v in res["termination_counts"].items()]))
    sections.append(r)

    bd = Section("Breakdowns")
    bd.tables.append(_group_table(s["metrics"]["by_reasoning_type"], "reasoning type"))
    bd.tables.append(_group_table(s["metrics"]["by_venue"], "venue"))
    bd.tables.append(_group_table(s["metrics"]["by_consensus_tier"], "consensus tier"))
    bd.tables.append(_group_table(s["metrics"]["by_cognitive_skill"], "cognitive skill"))
    sections.append(bd)

    au = s["audit"]
    a = Section("Exposure/inspection audit")
    a.tables.append(
        Table(
            ["category", "items", "share", "ST", "MT"],
            [
                [
                    term(CATEGORY_LABELS[c]),
                    str(au["counts"][c]),
                    pct(au["shares"][c]),
                    str(au["by_type"]["ST"]["counts"][c]),
                    str(au["by_type"]["MT"]["counts"][c]),
                ]
                for c in CATEGORIES
            ],
        )
    )
    ex = s["exposure"]
    a.paragraphs.append(
        f"Gold targets: {ex['gold_targets']}; exposed: {ex['exposed']}; never exposed: {ex['never_exposed']}; "
        f"exposed and later inspected: {ex['inspected_later']} ({pct(ex['share_inspected'])}). "
        f"Rank of first exposure: mean {num(ex['first_rank_mean'])}, median {num(ex['first_rank_median'])}."
    )
    rank_rows = [
        [
            b,
            str(ex["by_rank_band"][b]["exposed"]),
            str(ex["by_rank_band"][b]["inspected_later"]),
            rate_or_dash(ex["by_rank_band"][b]["exposed"], ex["by_rank_band"][b]["share_inspected"]),
        ]
        for b in RANK_BANDS
    ]
    a.tables.append(
        Table(
            ["first-exposure rank", "targets exposed", "later inspected", "share inspected"],
            rank_rows,
            _with_note(None, rank_rows),
        )
    )
    sections.append(a)

    tr = s["trajectory"]
    t = Section(
        "Trajectories",
        plots=[] if "transition-heatmap" in missing else ["transition-heatmap"],
        paragraphs=[missing["transition-heatmap"]] if "transition-heatmap" in missing else [],
    )
    tools = tr["transitions"]["tools"]
    t.tables.append(
        Table(
            ["from \\ to"] + tools,
            [
                [tools[i]] + [f"{p:.2f}" if tr["transitions"]["counts"][i][j] else "·" for j, p in enumerate(row)]
                for i, row in enumerate(tr["transitions"]["row_normalised"])
            ],
            "Row-normalised transition probabilities.",
        )
    )
    # Only bigrams whose difference is defined (some items with, some without): no rows of n/a.
    bg = [b for b in tr["bigrams"] if b["difference"] is not None][:10]
    if bg:
        t.tables.append(
            Table(
                ["bigram", "items with", "acc. with", "items without", "acc. without", "difference"],
                [
                    [
                        " → ".join(b["bigram"]),
                        str(b["n_with"]),
                        pct(b["accuracy_with"]),
                        str(b["n_without"]),
                        pct(b["accuracy_without"]),
                        f"{100 * b['difference']:+.1f} pp",
                    ]
                    for b in bg
                ],
                f"Bigrams with the largest accuracy difference (top {len(bg)}).",
            )
        )
    else:
        t.paragraphs.append("No bigram is in some items and not in others, so no accuracy difference to show.")
    tg = tr["trigrams"]
    if tg["most_frequent"]:
        top = tg["most_frequent"]
        t.paragraphs.append(
            f"Most frequent trigram: {' → '.join(top['trigram'])}, {top['count']} of {tg['total']} "
            f"trigrams ({pct(top['share'])})."
        )
    else:
        t.paragraphs.append("No trajectory has three calls; no trigrams.")
    t.tables.extend(stopping_tables(tr["stopping"]))
    an = tr["after_nongold_read"]
    t.tables.append(
        Table(
            ["after a read of a non-gold paper", "reads", "share"],
            [[term(k), str(an["categories"][k]["n"]), pct(an["categories"][k]["share"])] for k in AFTER_NONGOLD],
            f"{an['n']} delivered reads of non-gold papers.",
        )
    )
    sections.append(t)

    fa = s["failure_attribution"]
    f = Section("Failure attribution")
    f.tables.append(
        Table(
            ["wrong answer chose", "items", "share of wrong"],
            [[term(k), str(v), pct(fa["rates"][k])] for k, v in fa["counts"].items()],
            f"{fa['n_wrong']} wrong answers.",
        )
    )
    pb = s["position_bias"]
    f.tables.append(
        Table(
            ["letter", "predicted", "correct", "accuracy when correct here"],
            [
                [
                    L,
                    str(pb["predicted_distribution"][L]),
                    str(pb["correct_distribution"][L]),
                    pct(pb["accuracy_by_correct_position"][L]["accuracy"]),
                ]
                for L in "ABCD"
            ]
            + [["none", str(pb["predicted_distribution"]["none"]), "-", "-"]],
            "Position bias.",
        )
    )
    sections.append(f)

    bv = s["budget_views"]
    b = Section("Budget-aware views")
    b.tables.append(
        Table(
            ["cost per correct answer", "value"],
            [
                ["budget points", num(bv["points_per_correct"], 2)],
                ["tokens", num(bv["tokens_per_correct"], 0, NO_TOKENS)],
                [
                    "US dollars",
                    "n/a (no priced runner records)"
                    if bv["usd_per_correct"] is None
                    else f"${bv['usd_per_correct']:.4f}",
                ],
            ],
        )
    )
    band_rows = [
        [k, str(v["n"]), rate_or_dash(v["n"], v["accuracy"])]
        for k, v in budget_bands(bv["accuracy_by_budget_band"], s["sessions"]["caps"]).items()
    ]
    b.tables.append(Table(["budget spent", "items", "accuracy"], band_rows, _with_note(None, band_rows)))
    sections.append(b)

    if view_href is not None:
        sections.append(items_section(s, view_href))
    if (terms := glossary_section(_used_terms(sections))) is not None:
        sections.append(terms)
    sections.append(Section("Run and provenance", definitions=provenance(s)))
    who = (
        f"played by {', '.join(people) or 'a person'}"
        if people is not None
        else f"agent {run['agent'] or 'unknown'}, model {run['model'] or 'unknown'}"
    )
    corpus_id = str(s["corpus"].get("corpus_id") or "n/a")
    intro = [
        f"{who}; {s['items']['n']} items on corpus {corpus_id[:12]}; scored {s['generated_at']}. "
        "Provenance in full at the end."
    ]
    return Document(title=f"AgentHop score report: {run['name']}", sections=sections, plots=plots or {}, intro=intro)


def comparison_plottable(c: dict) -> bool:
    """Whether some run has both accuracy and paper recall (the comparison's one plot)."""
    return any(r.get("paper_recall") is not None and r["accuracy"] is not None for r in c["runs"])


def alpha_undefined(rel: dict) -> str:
    """Why Cronbach's alpha has no value for these runs, in words."""
    if rel["n_runs"] < 2:
        return "it needs at least 2 runs"
    if rel["n_items"] < 2:
        return f"it needs at least 2 items that every run has; these runs share {rel['n_items']}" + (
            " (people who each played different items share none)" if rel["n_items"] == 0 else ""
        )
    return "the runs' totals are all equal, so there is no spread between runs for the items to explain"


def comparison_document(c: dict, pair: dict | None = None, plots: dict[str, str] | None = None) -> Document:
    sections = []
    cols = [
        "run",
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
        "token cap",
        "turn cap",
        "budget cap",
    ]
    rows = [
        [
            r["run"],
            str(r["n"]),
            pct(r["accuracy"]),
            pct(r["paper_recall_st"]),
            pct(r["paper_recall_mt"]),
            pct(r["section_recall"]),
            pct(r["conversion_st"]),
            pct(r["conversion_mt"]),
            num(r["calls_per_turn"], 2, NO_TURNS),
            num(r["mean_tokens"], 0, NO_TOKENS),
            num(r["mean_turns"], 2, NO_TURNS),
            num(r["mean_budget"], 2),
            pct(r["pct_token_cap"]),
            pct(r["pct_turn_cap"]),
            pct(r["pct_budget"]),
        ]
        for r in c["runs"]
    ]
    runs = Section("Runs", tables=[Table(cols, rows)], plots=["accuracy-vs-recall"])
    if not comparison_plottable(c):
        runs.plots = []
        runs.paragraphs.append("Accuracy vs paper recall: no run has both measured, so no plot.")
    sections.append(runs)
    rel = c["reliability"]
    itc = rel["item_total_correlation"]
    sec = Section("Reliability across runs")
    sec.paragraphs.append(
        f"Cronbach's alpha over {rel['n_items']} common items x {rel['n_runs']} runs: "
        f"{num(rel['cronbach_alpha'], 3, f'n/a ({alpha_undefined(rel)})')}. "
        f"Corrected item-total correlation: {itc['n_defined']} items defined, mean {num(itc['mean'], 3)}, "
        f"median {num(itc['median'], 3)}, {itc['n_negative']} negative."
    )
    if itc["lowest"]:
        sec.tables.append(
            Table(
                ["item", "corrected item-total r"],
                [[e["item_id"], f"{e['r']:.3f}"] for e in itc["lowest"]],
                "Lowest item-total correlations.",
            )
        )
    sections.append(sec)
    if c["pairwise"]:
        sections.append(
            Section(
                "Pairwise (exact McNemar)",
                tables=[
                    Table(
                        ["run A", "run B", "B - A", "gains", "losses", "p"],
                        [
                            [
                                p["run_a"],
                                p["run_b"],
                                "n/a" if p["difference"] is None else f"{100 * p['difference']:+.1f} pp",
                                str(p["gains"]),
                                str(p["losses"]),
                                f"{p['mcnemar_exact_p']:.4g}",
                            ]
                            for p in c["pairwise"]
                        ],
                    )
                ],
            )
        )
    for root, g in c["replicates"].items():
        sections.append(
            Section(
                f"Replicates: {root}",
                paragraphs=[f"runs: {', '.join(g['runs'])}"],
                tables=[
                    Table(
                        ["metric", "runs", "mean", "std"],
                        [[k, str(v["n"]), num(v["mean"], 4), num(v["std"], 4)] for k, v in g["metrics"].items()],
                    )
                ],
            )
        )
    if pair:
        sections.extend(pair_sections(pair))
    names = [r["run"] for r in c["runs"]]
    title = (
        f"AgentHop comparison: {' and '.join(names)}"
        if len(names) <= 3
        else f"AgentHop comparison of {len(names)} runs"
    )
    if (terms := glossary_section(_used_terms(sections))) is not None:
        sections.append(terms)
    return Document(title=title, sections=sections, plots=plots or {})


def pair_sections(p: dict) -> list[Section]:
    bi, bc = p["bootstrap_items"], p["bootstrap_clusters"]
    a, b = p["run_a"], p["run_b"]
    title = f"{a} (A) against {b} (B)"
    if a == b:  # two runs of one name (a run against itself, or two directories named alike): tell them apart
        a, b = f"{a} [A]", f"{b} [B]"
        title = f"{a} against {b}"

    def iv(boot):
        return "n/a" if not boot["ci95"] else f"[{100 * boot['ci95'][0]:+.1f}, {100 * boot['ci95'][1]:+.1f}] pp"

    # Named as the command names them: compare A B puts A first, and B is measured against A.
    s = Section(title, paragraphs=[f"A is {a}; B is {b}. Differences are B minus A."])
    s.tables.append(
        Table(
            ["quantity", "value"],
            [
                ["items in common", str(p["n_common"])],
                [f"accuracy of {a} / {b}", f"{pct(p['accuracy_a'])} / {pct(p['accuracy_b'])}"],
                [
                    f"difference, {b} minus {a}",
                    "n/a" if p["difference"] is None else f"{100 * p['difference']:+.1f} pp",
                ],
                [f"gains ({b} right, {a} wrong)", str(p["gains"])],
                [f"losses ({a} right, {b} wrong)", str(p["losses"])],
                ["both right / both wrong", f"{p['both_correct']} / {p['both_wrong']}"],
                ["exact McNemar p (two-sided)", f"{p['mcnemar_exact_p']:.4g}"],
                [f"bootstrap 95% CI, items ({bi['resamples']} resamples, seed {bi['seed']})", iv(bi)],
                [f"bootstrap 95% CI, clusters of shared gold papers ({bc.get('n_clusters', 0)} clusters)", iv(bc)],
                [f"items only in {a} / only in {b}", f"{len(p['only_in_a'])} / {len(p['only_in_b'])}"],
            ],
        )
    )
    t = p["audit_transitions"]["table"]
    s.tables.append(
        Table(
            [f"{a} \\ {b}"] + [CATEGORY_LABELS[c] for c in CATEGORIES],
            [[term(CATEGORY_LABELS[x])] + [str(t[x][y]) for y in CATEGORIES] for x in CATEGORIES],
            f"Audit outcome transitions (rows: {a}, columns: {b}).",
        )
    )
    return [s]
