"""The panel's tables as the paper defines them (Section 4 and Appendix E.1-E.4), each checked by hand.

Where the paper prints a table from which its own figures follow (Table 16's grid and its rho values, Table 17's
runs and their spread, Table 19's quartile sizes, Table 2's order), the test feeds the printed numbers through the
scorer's code. The rest runs hand-built runs on a release that records citation counts.
"""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from support.panel_runs import RIGHT, WRONG, entry, manifest, more_items, write_run
from support.release_fixture import _label, make_release, pid

from agenthop.corpus.importer import ReleaseError, import_release
from agenthop.scorer import report_md
from agenthop.scorer.gold import Gold
from agenthop.scorer.panel_external import external_correlations, read_external, spearman_exact_p
from agenthop.scorer.panel_report import panel_document
from agenthop.scorer.panel_strata import quartiles
from agenthop.scorer.panel_tables import build_panel, main_table, mt_conversion_walk, spread
from agenthop.scorer.panel_trajectories import FIGURE_6_ORDER, panel_bigrams, transitions, trigrams_by_tier

# -- Table 2: the paper's closed-frontier rows, ranked within family inside the tier --------------------------

#: (model, family, accuracy, SecRec ST, SecRec MT, max tokens, max turns, max budget) from the paper's Table 2.
CLOSED = [
    ("Claude Opus 4.6", "anthropic", 0.775, 0.854, 0.639, 0.067, 0.000, 0.000),
    ("GPT-5.4", "openai", 0.790, 0.752, 0.454, 0.003, 0.000, 0.049),
    ("Gemini-3 Flash", "gemini", 0.547, 0.680, 0.386, 0.277, 0.021, 0.002),
    ("Claude Sonnet 4.6", "anthropic", 0.766, 0.773, 0.479, 0.035, 0.009, 0.000),
    ("GPT-5.3 codex", "openai", 0.825, 0.775, 0.470, 0.003, 0.000, 0.007),
    ("Gemini-3 Pro", "gemini", 0.891, 0.859, 0.655, 0.044, 0.001, 0.000),
]


def fake(name, tier, family=None, accuracy=None, items=None, **headline):
    cols = (
        "paper_recall_st",
        "paper_recall_mt",
        "section_recall_st",
        "section_recall_mt",
        "conversion_st",
        "conversion_mt",
        "calls_per_turn",
        "mean_tokens",
        "mean_turns",
        "mean_budget",
        "pct_token_cap",
        "pct_turn_cap",
        "pct_budget",
        "section_recall",
        "non_submission",
    )
    return {
        "name": name,
        "tier": tier,
        "family": family,
        "model": name,
        "n": 10,
        "headline": {**{c: None for c in cols}, "accuracy": accuracy, **headline},
        "overall": {"accuracy": accuracy},
        "items": items or {},
    }


def test_table_2_ranks_within_family_inside_the_tier_as_the_paper_prints_it():
    entries = [
        fake(m, "closed", f, a, section_recall_st=s, section_recall_mt=t, pct_token_cap=x, pct_turn_cap=y, pct_budget=z)
        for m, f, a, s, t, x, y, z in CLOSED
    ]
    table = main_table(entries)
    # Families by their best accuracy (Gemini .891, OpenAI .825, Anthropic .775), runs by accuracy inside each.
    assert [r["run"] for r in table["rows"]] == [
        "Gemini-3 Pro",
        "Gemini-3 Flash",
        "GPT-5.3 codex",
        "GPT-5.4",
        "Claude Opus 4.6",
        "Claude Sonnet 4.6",
    ]
    rows = {r["run"]: r for r in table["rows"]}
    # Gemini-3 Flash sits second in its tier at 0.547: its rank by accuracy in the tier is 6, in its family 2.
    assert (rows["Gemini-3 Flash"]["rank"], rows["Gemini-3 Flash"]["family_rank"]) == (6, 2)
    assert table["columns"][:6] == [
        "paper_recall_st",
        "paper_recall_mt",
        "section_recall_st",
        "section_recall_mt",
        "conversion_st",
        "conversion_mt",
    ]
    assert table["columns"][-4:] == ["pct_token_cap", "pct_turn_cap", "pct_budget", "accuracy"]
    assert (rows["GPT-5.4"]["section_recall_mt"], rows["GPT-5.4"]["pct_budget"]) == (0.454, 0.049)
    # One tier: the leader of the tier is the panel best, bold (★) once; SecRec columns are marked like recall.
    assert rows["Gemini-3 Pro"]["marks"]["accuracy"] == ["panel_best"]
    assert rows["Gemini-3 Pro"]["marks"]["section_recall_st"] == ["panel_best"]
    assert rows["Claude Opus 4.6"]["marks"].get("section_recall_st") is None  # 0.854 < 0.859


def test_table_2_without_families_ranks_by_accuracy_in_the_tier():
    table = main_table([fake(m, "closed", None, a) for m, _, a, *_ in CLOSED])
    assert [r["accuracy"] for r in table["rows"]] == [0.891, 0.825, 0.790, 0.775, 0.766, 0.547]
    assert [r["rank"] for r in table["rows"]] == [1, 2, 3, 4, 5, 6]


def _items(spec: dict[str, tuple[int, int]]) -> dict:
    """item -> (paper recall, correct), all multi-target."""
    return {i: {"qtype": "MT", "paper_recall": r, "correct": c} for i, (r, c) in spec.items()}


def test_table_12_top_panel_walks_down_the_six_highest_mt_conversions():
    # Seven runs; the lowest MT conversion is left out. a: 0.9, b: 0.8, ..., g: 0.3.
    runs = []
    for k, name in enumerate("abcdefg"):
        runs.append(fake(name, "t", accuracy=0.5, conversion_mt=0.9 - 0.1 * k, items={}))
    # a and b both recalled m1..m4; a right on all four, b right on m1 only: 3 discordant pairs for a, none for b.
    runs[0]["items"] = _items({"m1": (1, 1), "m2": (1, 1), "m3": (1, 1), "m4": (1, 1)})
    runs[1]["items"] = _items({"m1": (1, 1), "m2": (1, 0), "m3": (1, 0), "m4": (1, 0), "m5": (1, 1)})
    walk = mt_conversion_walk(runs)
    assert [(t["higher"], t["lower"]) for t in walk] == [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f")]
    first = walk[0]
    assert (first["n_common_recalled"], first["higher_only"], first["lower_only"]) == (4, 3, 0)
    assert first["mcnemar_exact_p"] == pytest.approx(2 * 0.5**3)


# -- Table 13, Table 14, Figure 6 ------------------------------------------------------------------------------


def _bigram(a, b, n_with, diff, sig=False):
    return {"bigram": [a, b], "n_with": n_with, "difference": diff, "significant": sig}


def test_table_13_panel_mean_over_models_for_bigrams_present_in_more_than_half():
    # Five models: present in at least 3. read -> think in 4 models (one without a difference: in every
    # trajectory); read -> read in 3; think -> submit in 2 (left out).
    per_run = [
        {
            "bigrams": [
                _bigram("read_section", "think", 5, 0.10, True),
                _bigram("read_section", "read_section", 2, -0.2),
            ]
        },
        {
            "bigrams": [
                _bigram("read_section", "think", 5, 0.20),
                _bigram("read_section", "read_section", 2, -0.1, True),
            ]
        },
        {"bigrams": [_bigram("read_section", "think", 5, 0.30, True), _bigram("read_section", "read_section", 2, 0.0)]},
        {"bigrams": [_bigram("read_section", "think", 9, None), _bigram("think", "submit_answer", 4, 0.5)]},
        {"bigrams": [_bigram("think", "submit_answer", 4, 0.5), _bigram("search_papers", "think", 0, None)]},
    ]
    t = panel_bigrams(per_run, 5)
    assert t["threshold"] == 3
    (rt,) = t["productive"]
    assert rt["bigram"] == ["read_section", "think"]
    assert rt["mean_difference"] == pytest.approx(0.2)  # (0.1 + 0.2 + 0.3) / 3
    assert (rt["significant_models"], rt["models"], rt["models_with_difference"]) == (2, 4, 3)
    (rr,) = t["anti_productive"]
    assert rr["mean_difference"] == pytest.approx(-0.1) and (rr["significant_models"], rr["models"]) == (1, 3)


def test_table_14_grouped_by_tier_and_ranked_by_concentration():
    rows = [
        {"run": "a", "tier": "open", "concentration": 0.072},
        {"run": "b", "tier": "closed", "concentration": 0.084},
        {"run": "c", "tier": "open", "concentration": 0.087},
        {"run": "d", "tier": "closed", "concentration": 0.100},
        {"run": "e", "tier": "closed", "concentration": None},
    ]
    assert [r["run"] for r in trigrams_by_tier(rows, ["closed", "open"])] == ["d", "b", "e", "c", "a"]


def test_figure_6_matrices_use_the_papers_tool_order():
    assert FIGURE_6_ORDER == (
        "get_paper_info",
        "get_references",
        "list_sections",
        "search_papers",
        "read_section",
        "think",
        "submit_answer",
    )
    e = {
        "name": "x",
        "items": {
            "i": {"observed": True, "trajectory": ["search_papers", "read_section", "read_section", "submit_answer"]}
        },
    }
    (row,) = transitions([e])["rows"]
    # search -> read at [3][4]; read -> read at [4][4] and read -> submit at [4][6], each half of read's row.
    assert row["counts"][3][4] == 1 and row["counts"][4][4] == 1 and row["counts"][4][6] == 1
    assert row["row_normalised"][4][4] == 0.5 == row["row_normalised"][4][6]
    assert sum(map(sum, row["counts"])) == 3


# -- Table 16: the paper's printed grid reproduces its printed rho values ---------------------------------------

PAPER_TABLE_16 = """model,GPQA-D,HLE,SWE-B Pro,T-Bench 2.0,NL2Repo,BrowseComp,HLE+tools
Gemini-3 Pro,91.9,37.5,43.3,56.9,—,59.2,—
GPT-5.3 codex,92.6,—,56.8,77.3,—,77.3,—
GPT-5.4,92.8,39.8,57.7,75.1,41.3∗,82.7,52.1
Claude Opus 4.6,91.3,40.0,57.3∗,65.4,49.8∗,84.0,53.1
Claude Sonnet 4.6,89.9,33.2,—,59.1,—,74.0,49.0
Gemini-3 Flash,90.4,33.7,—,47.6,—,—,—
GLM-5.1,86.2,31.0,58.4,63.5,42.7,68.0,52.3
DeepSeek-reasoner,79.9∗,19.8∗,—,37.7∗,—,40.1∗,40.8†
DeepSeek-chat,—,—,—,—,—,—,—
Kimi-K2.5,87.6,30.1,50.7,50.8,32.0∗,60.6,50.2
MiniMax-M2.7,87.0∗,28.0∗,56.2,57.0,39.8,—,—
Gemma-4-31B,84.3,19.5,35.7∗,42.9∗,15.5∗,—,26.5
Qwen3.5-27B,85.5,24.3,51.2∗,41.6,27.3∗,61.0,48.5
Qwen3.6-35B-A3B,86.0,21.4,49.5,51.5,29.4,—,—
Qwen3.5-35B-A3B,84.2,22.4,44.6∗,40.5,20.5∗,61.0,47.4
Gemma-4-26B-A4B,82.3,8.7,13.8∗,34.2∗,11.6∗,—,17.2
"""
#: AgentHop accuracy (%) and tier of each model, the paper's Table 16 last column (its Table 2/18 full-tool).
AGENTHOP = {
    "Gemini-3 Pro": (89.1, "closed"),
    "GPT-5.3 codex": (82.5, "closed"),
    "GPT-5.4": (79.0, "closed"),
    "Claude Opus 4.6": (77.5, "closed"),
    "Claude Sonnet 4.6": (76.6, "closed"),
    "Gemini-3 Flash": (54.7, "closed"),
    "GLM-5.1": (69.6, "open"),
    "DeepSeek-reasoner": (59.5, "open"),
    "DeepSeek-chat": (56.4, "open"),
    "Kimi-K2.5": (44.1, "open"),
    "MiniMax-M2.7": (41.3, "open"),
    "Gemma-4-31B": (64.8, "efficient"),
    "Qwen3.5-27B": (48.2, "efficient"),
    "Qwen3.6-35B-A3B": (38.1, "efficient"),
    "Qwen3.5-35B-A3B": (31.9, "efficient"),
    "Gemma-4-26B-A4B": (23.6, "efficient"),
}
#: The paper's rho and n per benchmark (Section 4.4 and Appendix E.3).
PAPER_RHO = {
    "GPQA-D": (0.73, 15),
    "HLE": (0.72, 14),
    "SWE-B Pro": (0.46, 12),
    "T-Bench 2.0": (0.70, 15),
    "NL2Repo": (0.70, 10),
    "BrowseComp": (0.38, 10),
    "HLE+tools": (0.67, 10),
}


@pytest.fixture(scope="module")
def paper_16(tmp_path_factory):
    path = tmp_path_factory.mktemp("t16") / "external.csv"
    path.write_text(PAPER_TABLE_16, encoding="utf-8")
    run0 = [
        {"name": f"run-{m}", "model": m, "tier": t, "overall": {"accuracy": a / 100}} for m, (a, t) in AGENTHOP.items()
    ]
    return external_correlations(run0, read_external(path), ["closed", "open", "efficient"])


def test_table_16_the_papers_grid_reproduces_its_rho_values(paper_16):
    rows = {r["benchmark"]: r for r in paper_16["rows"]}
    assert list(rows) == list(PAPER_RHO)  # the file's column order, not alphabetical
    assert {b: (round(r["spearman"], 2), r["n"]) for b, r in rows.items()} == PAPER_RHO
    # By hand for GPQA-D (no ties in either column): rho = 1 - 6 sum d^2 / (n (n^2 - 1)), proxies included.
    pairs = []
    for line in PAPER_TABLE_16.splitlines()[1:]:
        model, gpqa = line.split(",")[:2]
        if gpqa != "—":
            pairs.append((float(gpqa.rstrip("∗†")), AGENTHOP[model][0]))
    n = len(pairs)
    rank = {v: i + 1 for i, v in enumerate(sorted(x for x, _ in pairs))}
    rank_y = {v: i + 1 for i, v in enumerate(sorted(y for _, y in pairs))}
    d2 = sum((rank[x] - rank_y[y]) ** 2 for x, y in pairs)
    assert rows["GPQA-D"]["spearman"] == pytest.approx(1 - 6 * d2 / (n * (n * n - 1)))
    assert (rows["GPQA-D"]["proxies"], rows["NL2Repo"]["proxies"]) == (2, 7)


def test_table_16_grid_is_tier_grouped_ranked_and_keeps_the_marks(paper_16):
    grid = paper_16["grid"]
    assert [g["model"] for g in grid][:6] == [
        "Gemini-3 Pro",
        "GPT-5.3 codex",
        "GPT-5.4",
        "Claude Opus 4.6",
        "Claude Sonnet 4.6",
        "Gemini-3 Flash",
    ]
    assert [g["model"] for g in grid][11:13] == ["Gemma-4-31B", "Qwen3.5-27B"]
    g = {x["model"]: x for x in grid}
    assert g["GPT-5.4"]["scores"]["NL2Repo"] == 41.3 and g["GPT-5.4"]["marks"] == {"NL2Repo": "proxy"}
    assert g["DeepSeek-reasoner"]["marks"]["HLE+tools"] == "context_managed"
    assert g["DeepSeek-chat"]["scores"] == {b: None for b in PAPER_RHO}
    md = report_md.render(panel_document({"external": paper_16, **_empty_panel()}))
    assert "| closed | GPT-5.4 | 92.8 | 39.8 | 57.7 | 75.1 | 41.3* | 82.7 | 52.1 | 79.0% |" in md
    assert "| 59.5% |" in md and "40.8†" in md


def _empty_panel() -> dict:
    return {k: v for k, v in build_panel([], {}).items() if k != "external"}


def test_table_16_small_panels_get_an_exact_p_and_no_interval_at_rho_one():
    # n = 3, perfectly ranked: of the 3! orderings, two reach |rho| = 1 -> p = 1/3 (scipy's t test says 0).
    run0 = [
        {"name": m, "model": m, "tier": "t", "overall": {"accuracy": a}}
        for m, a in (("a", 0.1), ("b", 0.2), ("c", 0.3))
    ]
    x = external_correlations(run0, {"a": {"X": 1.0}, "b": {"X": 2.0}, "c": {"X": 3.0}})
    (row,) = [r for r in x["rows"] if r["benchmark"] == "X"]
    assert row["spearman"] == pytest.approx(1.0) and row["spearman_p"] == pytest.approx(1 / 3)
    assert row["spearman_ci95"] is None and row["pearson_ci95"] is None
    # n = 4, rho = 0.8: of 24 orderings, 1 gives 1, 3 give 0.8, and as many the negatives: p = 8 / 24.
    assert spearman_exact_p([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(8 / 24)


def test_table_16_accuracy_is_the_table_2_run_not_a_mean(tmp_path, plain_gold):
    items = ["st_0001", "st_0003", "st_0005", "st_0006"]

    def run(name, model, right):
        return entry(plain_gold, write_run(tmp_path, name, _scripts(items, right), manifest(name, model)))

    runs = [run("p", "model-P", set(items)), run("q", "model-P", {"st_0001"}), run("r", "model-R", {"st_0001"})]
    path = tmp_path / "x.csv"
    path.write_text("model,X\nmodel-P,1\nmodel-R,3\n", encoding="utf-8")
    p = build_panel(runs, {}, external=read_external(path))
    # q is a replicate of model-P's Run 0 p: Table 2 and Table 16 use p's 100%, not the mean (100% + 25%) / 2.
    assert p["external"]["accuracy"]["model-P"] == {"accuracy": 1.0, "run": "p", "tier": None}
    assert [x["run"] for x in p["main_table"]["rows"]] == ["p", "r"]
    assert [r["run"] for r in p["replicates"]["models"][0]["rows"]] == ["p", "q"]


@pytest.fixture(scope="module")
def plain_gold(tmp_path_factory):
    """The panel tests' corpus, from a release that records no citation counts."""
    root = tmp_path_factory.mktemp("plain")
    out = root / "corpus.sqlite"
    import_release(make_release(root, more_items, name="plain-release"), out, echo=lambda _: None)
    g = Gold(out)
    yield g
    g.close()


# -- Table 17: population sd and max - min; replicates checked ---------------------------------------------------


def test_table_17_spread_reproduces_the_papers_printed_rows():
    # DeepSeek-chat accuracy 0.564 0.553 0.542 -> mean 0.553, std 0.009, range 0.022 (a sample sd would be 0.011).
    acc = spread([0.564, 0.553, 0.542])
    assert (round(acc["mean"], 3), round(acc["std"], 3), round(acc["range"], 3)) == (0.553, 0.009, 0.022)
    assert round(acc["sample_std"], 3) == 0.011
    # Gemma-4-31B tokens (k) 87.6 66.3 65.8 -> mean 73.2, std 10.2, range 21.8.
    tok = spread([87.6, 66.3, 65.8])
    assert (round(tok["mean"], 1), round(tok["std"], 1), round(tok["range"], 1)) == (73.2, 10.2, 21.8)
    one = spread([0.5])
    assert (one["mean"], one["std"], one["range"]) == (0.5, None, None)


def test_table_17_replicates_are_checked_and_run_0_is_the_table_2_run(tmp_path, plain_gold):
    items = ["st_0001", "st_0003", "st_0005"]

    def run(name, right, caps=None, replicate_of=None, these=items):
        man = manifest(name, "m")
        if replicate_of:
            man["replicate_of"] = replicate_of
        return entry(plain_gold, write_run(tmp_path, name, _scripts(these, right), man, caps=caps))

    a = run("a", {"st_0001"}, replicate_of="c")
    b = run("b", {"st_0001", "st_0003"}, caps={"budget": 60, "max_turns": 20, "max_tokens": 200000})
    c = run("c", set(items))
    d = run("d", set(), these=items[:2], replicate_of="c")
    e = run("e", set(items))
    e["agent"] = "react"  # another agent: another protocol
    p = build_panel([a, b, c, d, e], {}, external={"m": {"X": 1.0}})
    # c is named by the others' replicate_of: it is Run 0 and Table 2's row of the model; b, d and e are no
    # replicates of it (caps, items, agent), so each keeps a row of its own, ranked as any run.
    assert [(r["run"], r["run0"]) for r in p["main_table"]["rows"]] == [
        ("c", True),
        ("e", False),
        ("b", False),
        ("d", False),
    ]
    assert p["external"]["accuracy"]["m"]["run"] == "c"  # the per-model tables use Run 0
    (model,) = p["replicates"]["models"]
    assert [(r["label"], r["run"]) for r in model["rows"]] == [("Run 0", "c"), ("Run 1", "a")]
    acc = model["spread"]["accuracy"]
    # 1.0 and 1/3: mean 2/3, population sd 1/3, range 2/3.
    assert (acc["mean"], acc["std"], acc["range"]) == pytest.approx((2 / 3, 1 / 3, 2 / 3))
    aside = {x["run"]: x["reasons"] for x in p["replicates"]["set_aside"]}
    assert set(aside) == {"b", "d", "e"}
    assert aside["e"] == ["its agent (react) differs from Run 0's (raw)"]
    assert aside["b"] == [
        "its caps (budget 60, max tokens 200000, max turns 20) differ from Run 0's (budget 30, max tokens 200000, "
        "max turns 20)"
    ]
    assert aside["d"] == ["its items differ from Run 0's (0 not in Run 0, 1 of Run 0's missing)"]
    md = report_md.render(panel_document(p))
    assert "| m | accuracy | 1.000 | 0.333 | 0.667 | 0.333 | 0.667 |" in md
    assert "Run b of m is not a replicate of its Run 0 c (its caps (budget 60" in md
    assert "it has a row of its own, and the per-model tables (16, 18, 19) use Run 0." in md


def _scripts(items, right):
    return {
        i: (lambda s, i=i: (s.search(hits=[("B", 1)]), s.read("B", 2), s.submit(RIGHT[i] if i in right else WRONG)))
        for i in items
    }


# -- Table 18: per model, zero / full / delta, tier-grouped, ranked by full ---------------------------------------


def _cb(name, model, right, items, tier=None):
    return {
        "name": name,
        "model": model,
        "tier": tier,
        "role": "closed_book",
        "items": {i: {"qtype": "ST", "correct": int(i in right)} for i in items},
    }


def test_table_18_zero_full_and_delta_per_model_ranked_within_tier():
    ten = [f"i{k}" for k in range(10)]
    full = [
        {**fake("A", "closed", accuracy=0.6), "role": "full", "items": {i: {"correct": 1} for i in ten}},
        {**fake("B", "closed", accuracy=0.9), "role": "full", "items": {i: {"correct": 1} for i in ten}},
        {**fake("C", "open", accuracy=0.3), "role": "full", "items": {i: {"correct": 1} for i in ten}},
    ]
    closed = [_cb("A-cb", "A", ten[:3], ten), _cb("C-cb", "C", ten[:4], ten), _cb("B-cb", "B", ten[:7], ten)]
    from agenthop.scorer.panel_closed_book import closed_book_accuracy

    t = closed_book_accuracy(full + closed, full, ["closed", "open"])
    assert [(r["model"], r["zero"], r["full"]) for r in t["rows"]] == [
        ("B", 0.7, 0.9),
        ("A", 0.3, 0.6),
        ("C", 0.4, 0.3),
    ]
    assert [round(r["delta"], 10) for r in t["rows"]] == [0.2, 0.3, -0.1]  # full - zero; C loses with tools
    assert [r["tier"] for r in t["rows"]] == ["closed", "closed", "open"]


# -- Tables 11 and 19 on a release that records citation counts ------------------------------------------------

ITEMS = ["st_0001", "st_0003", "st_0005", "st_0006", "st_0007", "st_0008", "st_0009", "st_0010"]
CITATIONS = {
    "st_0001": 40,
    "st_0003": 10,
    "st_0005": 30,
    "st_0006": 20,
    "st_0007": 80,
    "st_0008": 60,
    "st_0009": 70,
    "st_0010": 50,
}


def _with_counts(rel) -> None:
    more_items(rel)
    for rec in rel.qa:
        n = CITATIONS.get(rec["id"], 1)
        rec["gold_citation_counts"] = [n] * len(rec["gold_paper_ids"])
        rec["citation_counts_taken"] = "2026-05-01"
        if rec["id"] in ("st_0001", "st_0003"):
            rec["venue"] = "ICLR"
    for lab in rel.labels:  # st_0009 and st_0010: a subsection of B's Method section is the direct label
        if lab["sample_id"] in ("st_0009", "st_0010"):
            lab["analysis"]["section_recall_labels"] = [_label("B", "3.2 Ablation Details", "direct")]


@pytest.fixture(scope="module")
def counted_gold(tmp_path_factory):
    root = tmp_path_factory.mktemp("counted")
    out = root / "corpus.sqlite"
    import_release(make_release(root, _with_counts, name="counted-release"), out, echo=lambda _: None)
    g = Gold(out)
    yield g
    g.close()


@pytest.fixture(scope="module")
def strata_panel(tmp_path_factory, counted_gold):
    root = tmp_path_factory.mktemp("strata-runs")

    def closed(name, model, right, tier=None):
        scripts = {
            i: (
                lambda s, i=i: (
                    s.call("submit_answer", {"answer": RIGHT[i] if i in right else WRONG}, forced=True),
                    s.end("answer", RIGHT[i] if i in right else WRONG),
                )
            )
            for i in ITEMS
        }
        return entry(counted_gold, write_run(root, name, scripts, manifest(name, model, tier, closed_book=True)))

    def full(name, model, tier, right, method_read=()):
        scripts = {
            i: (
                lambda s, i=i: (
                    s.read("B", 1 if i in method_read else 2),
                    s.submit(RIGHT[i] if i in right else WRONG),
                )
            )
            for i in ITEMS
        }
        return entry(counted_gold, write_run(root, name, scripts, manifest(name, model, tier)))

    entries = [
        full("m1", "m1", "closed", {"st_0001", "st_0003", "st_0005", "st_0009"}, method_read={"st_0009"}),
        full("m2", "m2", "open", set(ITEMS) - {"st_0007"}),
        closed("m1-cb", "m1", {"st_0001", "st_0003", "st_0005", "st_0009"}),
        closed("m2-cb", "m2", {"st_0006", "st_0007"}),
        closed("m3-cb", "m3", {"st_0006"}, tier="closed"),  # no full-tool run: its own tier
    ]
    return build_panel(entries, counted_gold.provenance())


def test_citation_counts_reach_the_corpus_with_their_date(counted_gold):
    item = counted_gold.items["mt_0001"]
    assert item.gold_citations == {pid("B"): 1, pid("K"): 1}
    assert counted_gold.items["st_0007"].gold_citations == {pid("B"): 80}
    assert counted_gold.provenance()["citations_taken"] == ["2026-05-01"]
    # Gold like the answers: the server's connection cannot read it.
    from agenthop.server.corpus_schema import open_corpus

    conn = open_corpus(counted_gold.path)
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("SELECT * FROM gold_citation_counts").fetchall()
    conn.close()


def test_table_19_quartiles_by_rank_with_their_ranges_one_column_per_tier(strata_panel):
    t = strata_panel["closed_book_strata"]
    assert t["tiers"] == ["closed", "open"] and t["n_items"] == 8
    cit = {r["stratum"]: r for r in t["axes"]["citations"]}
    # Ranks by count: st_0003 10, st_0006 20 | st_0005 30, st_0001 40 | st_0010 50, st_0008 60 | st_0009, st_0007.
    assert [(r["low"], r["high"], r["n"]) for r in cit.values()] == [(10, 20, 2), (30, 40, 2), (50, 60, 2), (70, 80, 2)]
    # Closed tier: m1-cb and m3-cb. Q1: m1 right on st_0003, m3 on st_0006 -> 2 of 4; Q2: m1 both, m3 none -> 2/4.
    assert cit["Q1"]["cells"]["closed"] == {"n": 4, "correct": 2, "accuracy": 0.5}
    assert cit["Q2"]["cells"]["closed"]["accuracy"] == 0.5 and cit["Q3"]["cells"]["closed"]["accuracy"] == 0.0
    # Open tier: m2-cb right on st_0006 (Q1) and st_0007 (Q4).
    assert [cit[q]["cells"]["open"]["accuracy"] for q in ("Q1", "Q2", "Q3", "Q4")] == [0.5, 0.0, 0.0, 0.5]
    venue = {r["stratum"]: r for r in t["axes"]["venue"]}
    assert list(venue) == ["ACL", "ICLR"]
    assert venue["ICLR"]["cells"]["closed"]["accuracy"] == 0.5  # m1 2/2, m3 0/2
    assert venue["ICLR"]["cells"]["open"]["accuracy"] == 0.0
    (year,) = t["axes"]["year"]
    assert (year["stratum"], year["n"], year["cells"]["closed"]["correct"]) == ("2015", 8, 5)
    md = report_md.render(panel_document(strata_panel))
    assert "| Citations | Q1 (10–20) | 2 | 50.0% | 50.0% |" in md


def test_quartiles_split_the_papers_1011_samples_as_its_table_19():
    q = quartiles([(f"i{k}", k % 97) for k in range(1011)])
    sizes = [sum(1 for v in q.values() if v == k) for k in (1, 2, 3, 4)]
    assert sizes == [252, 253, 253, 253]


def test_table_19_says_when_the_release_has_no_citation_counts(tmp_path, plain_gold):
    cb = entry(
        plain_gold, write_run(tmp_path, "cb", _scripts(["st_0001"], set()), manifest("cb", "m", closed_book=True))
    )
    t = build_panel([cb], {})["closed_book_strata"]
    assert "citations" not in t["axes"] and "records no citation counts" in t["citations_missing"]
    assert "Citation quartiles: the release records no citation counts" in report_md.render(
        panel_document(build_panel([cb], {}))
    )


def test_table_11_groups_recall_credited_trajectories_by_how_the_label_matched(strata_panel):
    g = strata_panel["label_groups"]
    rows = g["rows"]
    # m1: six header matches (3 right), st_0009 read Method: its subsection label inside (right), st_0010 read
    # Experiments, which holds no direct label (wrong). m2: six header matches (5 right), st_0009/st_0010 none (right).
    assert {k: (r["n"], r["correct"]) for k, r in rows.items()} == {
        "header": (12, 8),
        "content": (1, 1),
        "none": (3, 2),
    }
    assert g["n"] == 16 and rows["header"]["share"] == 0.75 and rows["header"]["conversion"] == pytest.approx(8 / 12)
    # Zero-tool: m1-cb right on 3 of m1's six header items, m2-cb on 2 of m2's (st_0006, st_0007).
    assert (rows["header"]["closed_book_n"], rows["header"]["closed_book_correct"]) == (12, 5)
    assert rows["content"]["closed_book_accuracy"] == 1.0 and rows["none"]["closed_book_accuracy"] == 0.0


def test_importer_refuses_citation_counts_that_do_not_fit(tmp_path):
    def bad(rel):
        rel.item("st_0001")["gold_citation_counts"] = [3, 4]

    with pytest.raises(ReleaseError) as err:
        import_release(make_release(tmp_path, bad), tmp_path / "c.sqlite", echo=lambda _: None)
    assert "gold_citation_counts" in str(err.value) and "a list of 1 non-negative integers" in str(err.value)


def test_panel_json_round_trips(strata_panel):
    assert json.loads(json.dumps(strata_panel))["closed_book_strata"]["tiers"] == ["closed", "open"]
    assert math.isclose(strata_panel["closed_book"]["rows"][0]["zero"], 0.5)


def test_the_tiers_file_names_families_and_table_2_keeps_them_together(tmp_path, plain_gold):
    from agenthop.scorer.panel_scoring import panel

    items = ["st_0001", "st_0003", "st_0005"]
    runs = [
        write_run(tmp_path, "a", _scripts(items, set(items)), manifest("a", "m1")),
        write_run(tmp_path, "b", _scripts(items, {"st_0001"}), manifest("b", "m2")),
        write_run(tmp_path, "c", _scripts(items, {"st_0001", "st_0003"}), manifest("c", "m3")),
    ]
    tiers = tmp_path / "tiers.csv"
    tiers.write_text("run,tier,family\na,open,f1\nb,open,f1\nc,open,f2\n", encoding="utf-8")
    p = panel(runs, plain_gold.path, tmp_path / "out", tiers=tiers)
    rows = p["main_table"]["rows"]
    # Family f1 (best 100%) before f2 (67%); b (33%) stays with its family, third by accuracy in the tier.
    assert [(r["run"], r["family"], r["rank"], r["family_rank"]) for r in rows] == [
        ("a", "f1", 1, 1),
        ("b", "f1", 3, 2),
        ("c", "f2", 2, 1),
    ]
    md = (tmp_path / "out" / "panel.md").read_text()
    assert "| open | f1 | b | m2 | 3 | 3 |" in md
