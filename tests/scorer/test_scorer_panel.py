"""The panel (agenthop-scorer panel) on hand-built runs whose every figure is worked out here by hand.

The corpus is the scorer fixture's plus st_0006..st_0019: single-target depth-1 items like st_0003
(seed A, gold B, direct label B "Experiments", correct option D). Every run below is written call by
call, so each table cell follows from the scripts.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from click.testing import CliRunner
from support.panel_runs import B_ITEMS, RIGHT, WRONG, entry, manifest, more_items, write_run
from support.release_fixture import make_release

from agenthop.corpus.importer import import_release
from agenthop.scorer import report_html, report_md
from agenthop.scorer.cli import main
from agenthop.scorer.errors import CorpusMismatchError, ScorerError
from agenthop.scorer.gold import Gold
from agenthop.scorer.panel_labels import read_labels
from agenthop.scorer.panel_report import panel_document
from agenthop.scorer.panel_scoring import panel
from agenthop.scorer.panel_tables import build_panel, cell_accuracy

NINE = B_ITEMS[:9]  # st_0001, st_0003, st_0005, st_0006 .. st_0011
Z = 1.959963984540054


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("panel-corpus")
    out = root / "corpus.sqlite"
    import_release(make_release(root, more_items, name="panel-release"), out, echo=lambda _: None)
    return out


@pytest.fixture(scope="module")
def gold(corpus):
    g = Gold(corpus)
    yield g
    g.close()


def read_b(right: bool, iid: str):
    """search (B shown first), read B's Experiments, submit the right or a wrong letter."""
    return lambda s: (s.search(hits=[("B", 1)]), s.read("B", 2), s.submit(RIGHT[iid] if right else WRONG))


# -- the main panel: tiers big (P, Q) and small (R, S) on NINE + mt_0001 ------------------------------------

P_RIGHT = set(NINE)
Q_RIGHT = {"st_0001", "st_0003"}
R_RIGHT = {"st_0001", "st_0003", "st_0005", "st_0006", "st_0007"}
S_RIGHT = {"st_0001", "st_0003", "st_0005", "st_0006"}


@pytest.fixture(scope="module")
def main_entries(tmp_path_factory, gold):
    root = tmp_path_factory.mktemp("panel-runs")
    mt = {
        "P": lambda s: (s.read("B", 2), s.read("K", 2), s.submit("A")),  # both gold read, right: MT-both imm
        "Q": lambda s: (s.read("B", 2), s.think(), s.submit("B")),  # MT-fail prem
        "R": lambda s: (s.read("B", 2), s.search(), s.end("max_turns")),  # MT-fail explored, no answer
        "S": lambda s: (s.read("J", 0), s.submit("B")),  # MT-fail 0-Gold; J is not gold
    }
    entries = []
    for name, tier, right in (
        ("P", "big", P_RIGHT),
        ("Q", "big", Q_RIGHT),
        ("R", "small", R_RIGHT),
        ("S", "small", S_RIGHT),
    ):
        scripts = {i: read_b(i in right, i) for i in NINE}
        scripts["mt_0001"] = mt[name]
        entries.append(entry(gold, write_run(root, name, scripts, manifest(name, f"model-{name}", tier))))
    return entries


@pytest.fixture(scope="module")
def main_panel(main_entries):
    return build_panel(main_entries, {"path": "corpus.sqlite"})


def rows_by_run(table):
    return {r["run"]: r for r in table["rows"]}


def test_main_table_values_and_marks(main_panel):
    m = main_panel["main_table"]
    assert m["tiers"] == ["big", "small"] and [r["run"] for r in m["rows"]] == ["P", "Q", "R", "S"]
    rows = rows_by_run(m)
    assert {k: rows[k]["accuracy"] for k in rows} == {"P": 1.0, "Q": 0.2, "R": 0.5, "S": 0.4}
    assert {k: rows[k]["conversion_st"] for k in rows} == {"P": 1.0, "Q": 2 / 9, "R": 5 / 9, "S": 4 / 9}
    assert rows["P"]["conversion_mt"] == 1.0 and rows["Q"]["conversion_mt"] is None
    assert {k: rows[k]["paper_recall_mt"] for k in rows} == {"P": 1.0, "Q": 0.0, "R": 0.0, "S": 0.0}
    assert {k: rows[k]["non_submission"] for k in rows} == {"P": 0.0, "Q": 0.0, "R": 0.1, "S": 0.0}
    # SecRec per type: every run read B's labelled "Experiments" on its nine ST items; on mt_0001 only P read both
    # gold papers' labelled sections (B's and K's "Experiments").
    assert {k: (rows[k]["section_recall_st"], rows[k]["section_recall_mt"]) for k in rows} == {
        "P": (1.0, 1.0),
        "Q": (1.0, 0.0),
        "R": (1.0, 0.0),
        "S": (1.0, 0.0),
    }
    # Failure ratios: R's mt_0001 ended at the turn cap, 1 of its 10 items; no run hit the token cap or the budget.
    assert {k: (rows[k]["pct_token_cap"], rows[k]["pct_turn_cap"], rows[k]["pct_budget"]) for k in rows} == {
        "P": (0.0, 0.0, 0.0),
        "Q": (0.0, 0.0, 0.0),
        "R": (0.0, 0.1, 0.0),
        "S": (0.0, 0.0, 0.0),
    }
    assert rows["P"]["marks"]["accuracy"] == ["tier_leader", "panel_best"]
    assert rows["R"]["marks"]["accuracy"] == ["tier_leader"]
    assert "accuracy" not in rows["Q"]["marks"] and "accuracy" not in rows["S"]["marks"]
    # Paper recall MT: R and S tie (0) in their tier, so both lead it.
    assert rows["R"]["marks"]["paper_recall_mt"] == ["tier_leader"] == rows["S"]["marks"]["paper_recall_mt"]


def test_conversion_marked_only_where_mcnemar_separates(main_panel):
    tests = {(t["tier"], t["qtype"]): t for t in main_panel["main_table"]["conversion_tests"]}
    assert set(tests) == {("big", "ST"), ("small", "ST")}  # MT: only P has a measured conversion
    big = tests[("big", "ST")]
    # Both recalled all nine ST items; P right on 9, Q on 2: 7 discordant pairs, all for P.
    assert (big["leader"], big["runner_up"], big["n_common_recalled"], big["leader_only"], big["runner_up_only"]) == (
        "P",
        "Q",
        9,
        7,
        0,
    )
    assert big["mcnemar_exact_p"] == pytest.approx(2 * 0.5**7) and big["separates"]
    small = tests[("small", "ST")]
    assert (small["leader"], small["runner_up"], small["leader_only"], small["runner_up_only"]) == ("R", "S", 1, 0)
    assert small["mcnemar_exact_p"] == 1.0 and not small["separates"]
    rows = rows_by_run(main_panel["main_table"])
    assert rows["P"]["marks"]["conversion_st"] == ["tier_leader"]
    assert "conversion_st" not in rows["R"]["marks"]
    assert all("panel_best" not in rows[r]["marks"].get("conversion_st", []) for r in rows)


def test_stopping_scopes_per_run(main_panel):
    rows = rows_by_run(main_panel["stopping"])

    def counts(run, scope):
        return {k: v["n"] for k, v in rows[run][scope]["categories"].items() if v["n"]}

    assert counts("P", "st") == {"imm": 9} and counts("P", "mt_both") == {"imm": 1} and counts("P", "mt_fail") == {}
    assert counts("Q", "mt_fail") == {"prem": 1}
    assert counts("R", "mt_fail") == {"explored": 1}
    assert counts("S", "mt_fail") == {"zero_gold": 1}


def test_cell_accuracy_with_wilson_half_widths_and_drop(main_panel):
    c = main_panel["cell_accuracy"]
    assert c["pooled_accuracy"]["ST-d1"] == pytest.approx(20 / 36) and c["pooled_accuracy"]["MT-d1"] == 0.25
    assert c["pooled_accuracy"]["ST-d2"] is None
    assert (c["easiest"], c["hardest"]) == ("ST-d1", "MT-d1")
    rows = rows_by_run(c)
    # Wilson at 9/9: lower end 1 / (1 + z^2/9), upper end 1.
    assert rows["P"]["cells"]["ST-d1"]["half_width"] == pytest.approx((1 - 1 / (1 + Z * Z / 9)) / 2)
    # Wilson at 2/9 by its formula.
    p, n = 2 / 9, 9
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    assert rows["Q"]["cells"]["ST-d1"]["half_width"] == pytest.approx(half)
    # The paper's column is ST-d1 - MT-d2, and no run has an MT-d2 item; the easiest-hardest drop is an addition.
    assert all(rows[r]["drop"] is None for r in rows)
    assert {r: rows[r]["drop_easiest_hardest"] for r in rows} == pytest.approx(
        {"P": 0.0, "Q": 2 / 9, "R": 5 / 9, "S": 4 / 9}
    )


def test_item_difficulty_in_thirds(main_panel):
    d = main_panel["difficulty"]
    # Runs answering: st_0001, st_0003: 4; st_0005, st_0006: 3; st_0007: 2; st_0008..st_0011 and mt_0001: 1 (P).
    # Of 4 runs: low = fewer than 4/3 (0, 1), high = more than 8/3 (3, 4), mid = 2.
    assert d["n_runs"] == 4 and d["n_items"] == 10
    assert d["histogram"] == [0, 5, 1, 2, 2]
    assert d["by_cell"] == {"ST-d1": {"low": 4, "mid": 1, "high": 4}, "MT-d1": {"low": 1, "mid": 0, "high": 0}}
    assert d["by_tier"] == {"gold": {"low": 5, "mid": 1, "high": 4}}


def test_trigrams_non_submission_and_after_wrong_paper(main_panel):
    tg = rows_by_run(main_panel["trigrams"])
    # P: nine search -> read -> submit, and read -> read -> submit on mt_0001: 10 trigrams.
    assert tg["P"]["top"] == ["search_papers", "read_section", "submit_answer"]
    assert (tg["P"]["top_count"], tg["P"]["total"], tg["P"]["concentration"]) == (9, 10, 0.9)
    ns = rows_by_run(main_panel["non_submission"])
    assert ns["R"]["non_submitted"] == 1 and ns["R"]["by_termination"]["max_turns"] == {"n": 1, "share": 0.1}
    assert ns["P"]["non_submitted"] == 0 and ns["P"]["by_termination"]["token_limit"]["n"] == 0
    aw = rows_by_run(main_panel["after_wrong_paper"])
    assert aw["S"]["n"] == 1 and aw["S"]["categories"]["submit"]["n"] == 1 and aw["P"]["n"] == 0


def test_contact_without_closed_book_says_what_it_needs(main_panel):
    c = main_panel["contact"]
    # Every item of every run read a gold paper except S's mt_0001 (read J; B and K never shown): neither.
    assert c["rows"]["inspected"]["n"] == 39 and c["rows"]["neither"]["n"] == 1 and c["rows"]["exposed"]["n"] == 0
    assert c["rows"]["inspected"]["correct"] == 9 + 1 + 2 + 5 + 4
    assert c["rows"]["inspected"]["closed_book_accuracy"] is None
    assert "closed-book run of the same model" in c["missing"] and "model-P" in c["missing"]
    assert (
        main_panel["ablation"]["rows"] == [] and "closed-book and no-search runs" in main_panel["ablation"]["missing"]
    )
    assert main_panel["robustness"]["reliability"]["n_runs"] == 4


# -- bigrams with Bonferroni --------------------------------------------------------------------------------


def test_bigram_significance_after_bonferroni(tmp_path, gold):
    items = B_ITEMS[:14]
    scripts = {}
    for n, iid in enumerate(items):
        if n < 7:  # think before a right answer
            scripts[iid] = lambda s, i=iid: (s.search(), s.read("B", 2), s.think(), s.submit(RIGHT[i]))
        else:  # submit a wrong answer straight after reading
            scripts[iid] = lambda s: (s.search(), s.read("B", 2), s.submit(WRONG))
    p = build_panel([entry(gold, write_run(tmp_path, "T", scripts, manifest("T", "m")))], {})
    bg = {tuple(b["bigram"]): b for b in p["bigrams"]["rows"][0]["bigrams"]}
    rt = bg[("read_section", "think")]
    # 2 x 2 table [[7, 0], [0, 7]]: two-sided Fisher p = 2 / C(14, 7); Bonferroni x 49.
    assert (rt["n_with"], rt["correct_with"], rt["n_without"], rt["correct_without"]) == (7, 7, 7, 0)
    assert rt["fisher_p"] == pytest.approx(2 / math.comb(14, 7))
    assert rt["p_bonferroni"] == pytest.approx(49 * 2 / math.comb(14, 7)) and rt["significant"]
    assert (
        bg[("read_section", "submit_answer")]["difference"] == -1.0
        and bg[("read_section", "submit_answer")]["significant"]
    )
    sr = bg[("search_papers", "read_section")]  # in every trajectory: nothing to compare
    assert (sr["n_without"], sr["fisher_p"], sr["difference"], sr["significant"]) == (0, 1.0, None, False)
    # 21 trigrams; search -> read -> think, read -> think -> submit and search -> read -> submit 7 each.
    assert p["trigrams"]["rows"][0]["concentration"] == pytest.approx(7 / 21)


# -- ablation and contact with closed-book partners ---------------------------------------------------------


@pytest.fixture(scope="module")
def ablation_panel(tmp_path_factory, gold):
    root = tmp_path_factory.mktemp("ablation-runs")

    def closed(letter):
        return lambda s: (
            s.call("submit_answer", {"answer": letter, "reasoning": "r"}, forced=True),
            s.end("answer", letter),
        )

    cb_right = {"st_0001", "st_0003"}
    cb = {i: closed(RIGHT[i] if i in cb_right else WRONG) for i in NINE} | {"st_0002": closed("A")}
    ns_right = {"st_0003", "st_0005", "st_0006", "st_0007", "st_0008"}
    ns = {
        i: (
            lambda s, i=i: (
                s.refs("A", hits=[("B", 1)]),
                s.read("B", 2),
                s.submit(RIGHT[i] if i in ns_right else WRONG),
            )
        )
        for i in NINE
    }
    full = {i: read_b(True, i) for i in NINE[:8]}
    full["st_0011"] = lambda s: (s.search(hits=[("B", 1)]), s.read("A", 0), s.submit(WRONG))  # B shown, not read
    full["st_0002"] = lambda s: (s.think(), s.submit("B"))  # nothing shown
    entries = [
        entry(gold, write_run(root, "cb", cb, manifest("cb", "m", closed_book=True))),
        entry(gold, write_run(root, "ns", ns, manifest("ns", "m", disabled=["search_papers"]))),
        entry(gold, write_run(root, "full", full, manifest("full", "m"))),
    ]
    return build_panel(entries, {}, seed=3, resamples=2000)


def test_roles_from_run_json(ablation_panel):
    assert [(r["run"], r["role"]) for r in ablation_panel["runs"]] == [
        ("cb", "closed_book"),
        ("ns", "no_search"),
        ("full", "full"),
    ]
    assert [r["run"] for r in ablation_panel["main_table"]["rows"]] == ["full"]


def test_ablation_lifts_paired_on_common_items(ablation_panel):
    (row,) = ablation_panel["ablation"]["rows"]
    assert (row["closed_book"], row["no_search"], row["full"], row["missing"]) == ("cb", "ns", "full", [])
    assert row["accuracy"] == {"closed_book": 0.3, "no_search": 5 / 9, "full": 0.8}
    tools = row["lift_tools"]
    # On the nine items both have: closed-book right on st_0001, st_0003; no-search on st_0003, st_0005..st_0008.
    assert (tools["n_common"], tools["gains"], tools["losses"]) == (9, 4, 1)
    assert tools["lift"] == pytest.approx(3 / 9)
    assert tools["mcnemar_exact_p"] == pytest.approx(2 * (1 + 5) / 32)
    search = row["lift_search"]
    # Full right on NINE but st_0011; st_0002 is not in the no-search run, so it is left out of the pair.
    assert (search["n_common"], search["gains"], search["losses"]) == (9, 3, 0)
    assert search["lift"] == pytest.approx(3 / 9) and search["mcnemar_exact_p"] == pytest.approx(2 * 0.5**3)
    lo, hi = search["bootstrap_ci95"]
    assert lo <= search["lift"] <= hi


def test_contact_with_closed_book_accuracy_beside(ablation_panel):
    c = ablation_panel["contact"]["rows"]
    assert (c["inspected"]["n"], c["inspected"]["accuracy"]) == (8, 1.0)
    assert (c["inspected"]["closed_book_n"], c["inspected"]["closed_book_accuracy"]) == (8, 2 / 8)
    assert (c["exposed"]["n"], c["exposed"]["accuracy"], c["exposed"]["closed_book_accuracy"]) == (1, 0.0, 0.0)
    assert (c["neither"]["n"], c["neither"]["accuracy"], c["neither"]["closed_book_accuracy"]) == (1, 0.0, 1.0)
    assert "missing" not in ablation_panel["contact"]


def test_single_run_panel_says_what_is_missing(tmp_path, gold):
    p = build_panel(
        [entry(gold, write_run(tmp_path, "solo", {"st_0001": read_b(True, "st_0001")}, manifest("solo", "m")))], {}
    )
    assert p["difficulty"]["missing"] == "item difficulty needs two or more full-tool runs sharing items"
    assert p["robustness"] is None and p["main_table"]["conversion_tests"] == []
    assert "missing" in p["ablation"] and "missing" in p["contact"]
    md = report_md.render(panel_document(p))
    assert "Not computed: item difficulty needs two or more full-tool runs sharing items." in md
    assert "Not computed: the ablation table needs closed-book and no-search runs" in md
    assert (
        "Not computed: Cronbach's alpha, item-total correlations and replicates need two or more full-tool runs." in md
    )
    assert "n/a (no closed-book run)" in md


# -- the command: files, labels, corpora ---------------------------------------------------------------------


def test_panel_command_writes_three_files_with_tiers_from_a_file(tmp_path, corpus):
    a = write_run(tmp_path, "a", {i: read_b(True, i) for i in NINE[:3]}, manifest("a", "m1"))
    b = write_run(tmp_path, "b", {i: read_b(i == "st_0001", i) for i in NINE[:3]}, manifest("b", "m2"))
    tiers = tmp_path / "tiers.csv"
    tiers.write_text("run,tier\na,open\nb,open\n", encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main,
        ["panel", str(a), str(b), "--corpus", str(corpus), "--out", str(out), "--tiers", str(tiers), "--jobs", "1"],
    )
    assert r.exit_code == 0, r.output
    data = json.loads((out / "panel.json").read_text())
    assert [(x["run"], x["tier"]) for x in data["runs"]] == [("a", "open"), ("b", "open")]
    md = (out / "panel.md").read_text()
    assert (
        md.index("## Main table")
        < md.index("## Stopping behaviour")
        < md.index("## Accuracy per cell")
        < md.index("## Item difficulty")
        < md.index("## Bigrams")
        < md.index("## Not computed here")  # the ablation table, without ablation runs, is listed there
    )
    assert "- Ablation (the paper's Table 4). Not computed:" in md
    assert "| open |  | a | m1 | 1 | 3 | 100.0% ★ |" in md  # one tier: its leader is the panel best, marked once
    html = (out / "panel.html").read_text()
    assert 'data-plot="panel-coverage"' in html and 'data-plot="panel-transitions"' in html


def test_runs_from_different_corpora_are_refused_naming_both(tmp_path, corpus):
    a = write_run(tmp_path, "a", {"st_0001": read_b(True, "st_0001")}, corpus_id="corpus-one")
    b = write_run(tmp_path, "b", {"st_0001": read_b(True, "st_0001")}, corpus_id="corpus-two")
    with pytest.raises(CorpusMismatchError) as err:
        panel([a, b], corpus)
    msg = str(err.value)
    assert "run a on corpus corpus-one" in msg and "run b on corpus corpus-two" in msg
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "name,text,message",
    [
        ("t.toml", 'a = "x"\n[b]\ntier = "y"\nrole = "judge"\n', "run 'b': role 'judge' is not one of full"),
        ("t.toml", "a = [1\n", "is not valid TOML"),
        ("t.csv", "name,tier\na,x\n", "the CSV header must name a 'run' column"),
        ("t.toml", '[a]\nfamilly = "x"\n', "run 'a' has unknown key(s) familly"),
    ],
)
def test_bad_tiers_files_are_named(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScorerError) as err:
        read_labels(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_tiers_file_naming_an_unknown_run_is_refused(tmp_path, corpus):
    a = write_run(tmp_path, "a", {"st_0001": read_b(True, "st_0001")}, manifest("a", "m"))
    tiers = tmp_path / "t.toml"
    tiers.write_text('a = "x"\nz = "y"\n', encoding="utf-8")
    with pytest.raises(ScorerError, match="names run\\(s\\) not in the panel: z; the runs are: a"):
        panel([a], corpus, tiers=tiers)
    labels = read_labels(tiers)
    assert labels == {"a": {"tier": "x"}, "z": {"tier": "y"}}


# --- a tier of one run has a leader, rows ranked by accuracy within each tier, ties stated
# (main table and Table 10's easiest/hardest cells), and the layout (Table 9 side by side, text columns left, the
# paper's emphasis in HTML). Runs as in main_entries: P 100%, Q 20% in tier big; R 50%, S 40% in tier small.


def relabel(entries, **tiers):
    return [{**e, "tier": tiers.get(e["name"], e["tier"])} for e in entries]


def test_a_tier_of_one_run_has_its_leader_marked(main_entries):
    # R alone in tier "solo": it leads its tier in every quality column it has a value in; S alone in "small".
    p = build_panel(relabel(main_entries, R="solo"), {})
    rows = {r["run"]: r for r in p["main_table"]["rows"]}
    assert rows["R"]["marks"]["accuracy"] == ["tier_leader"] and rows["S"]["marks"]["accuracy"] == ["tier_leader"]
    assert rows["R"]["marks"]["paper_recall_st"] == ["tier_leader", "panel_best"]  # every run recalled all ST items
    assert rows["P"]["marks"]["accuracy"] == ["tier_leader", "panel_best"]
    # No conversion test for a tier of one run: there is no runner-up.
    assert {t["tier"] for t in p["main_table"]["conversion_tests"]} == {"big"}


def test_rows_are_ranked_by_accuracy_within_each_tier_and_ties_share_a_rank(main_entries):
    q, p_, r, s = main_entries
    r2 = {**r, "name": "R2", "model": "model-R2"}  # a copy of R under another model: 50%, tied with R
    panel = build_panel([q, p_, s, r2, r], {})
    m = panel["main_table"]
    assert m["tiers"] == ["big", "small"]
    assert [(x["run"], x["rank"], x["tied_with"]) for x in m["rows"]] == [
        ("P", 1, []),
        ("Q", 2, []),
        ("R2", 1, ["R"]),
        ("R", 1, ["R2"]),
        ("S", 3, []),
    ]
    md = report_md.render(panel_document(panel))
    assert (
        "| small |  | R2 | model-R2 | 1= | 10 | 100.0% ●★ |" in md
        and "| small |  | S | model-S | 3 | 10 | 100.0% ●★ |" in md
    )
    assert "Ties in accuracy (same rank, order as given): R ties with R2 (50.0%)." in md
    assert "ranked by accuracy within each family" in md


def _entry(name, cells):
    """An entry with only what cell_accuracy reads: per cell (correct, n)."""
    return {
        "name": name,
        "by_cell": {
            c: {"n": n, "correct": k, "accuracy": k / n if n else None, "accuracy_ci95": [0.0, 1.0] if n else None}
            for c, (k, n) in cells.items()
        },
    }


def test_table_10_ties_for_the_easiest_cell_are_stated_and_broken_by_cell_order():
    # Pooled: ST-d1 11/18 and ST-d2 22/36 are both 61.1%; MT-d1 1/4, MT-d2 2/8 both 25%.
    a = _entry("a", {"ST-d1": (6, 9), "ST-d2": (10, 18), "MT-d1": (1, 2), "MT-d2": (1, 4)})
    b = _entry("b", {"ST-d1": (5, 9), "ST-d2": (12, 18), "MT-d1": (0, 2), "MT-d2": (1, 4)})
    c = cell_accuracy([a, b])
    assert (c["easiest"], c["hardest"]) == ("ST-d1", "MT-d1")
    assert c["easiest_tied"] == ["ST-d1", "ST-d2"] and c["hardest_tied"] == ["MT-d1", "MT-d2"]
    assert [r["drop_easiest_hardest"] for r in c["rows"]] == pytest.approx([6 / 9 - 1 / 2, 5 / 9 - 0])
    # The paper's column does not depend on ties: always ST-d1 - MT-d2.
    assert [r["drop"] for r in c["rows"]] == pytest.approx([6 / 9 - 1 / 4, 5 / 9 - 1 / 4])
    untied = cell_accuracy([_entry("a", {"ST-d1": (6, 9), "ST-d2": (1, 9), "MT-d1": (2, 9), "MT-d2": (3, 9)})])
    assert untied["easiest_tied"] == [] and untied["hardest_tied"] == []


def test_table_10_tie_is_written_in_the_report(main_entries):
    panel = build_panel(main_entries, {})
    panel["cell_accuracy"] = cell_accuracy(
        [
            _entry("a", {"ST-d1": (6, 9), "ST-d2": (10, 18), "MT-d1": (1, 2), "MT-d2": (0, 4)}),
            _entry("b", {"ST-d1": (5, 9), "ST-d2": (12, 18), "MT-d1": (0, 2), "MT-d2": (1, 4)}),
        ]
    )
    md = report_md.render(panel_document(panel))
    assert (
        "Tie for the easiest cell: ST-d1 and ST-d2 have the same pooled accuracy (61.1%); the drop uses ST-d1, "
        "the first in the order ST-d1, ST-d2, MT-d1, MT-d2."
    ) in md


def test_table_9_puts_the_three_scopes_side_by_side_per_run(main_entries):
    panel = build_panel(main_entries, {})
    doc = panel_document(panel)
    (table,) = next(s for s in doc.sections if s.title.startswith("Stopping")).tables
    assert [g[0] for g in table.groups] == ["", "MT-fail", "ST", "MT-both"]
    assert [r[0] for r in table.rows] == ["P", "Q", "R", "S"]
    header = dict(zip(table.header, table.rows[1]))  # Q: its one MT item failed prematurely
    assert table.header[:7] == ["run", "items", "0-Gold", "Prem", "Explored", "Stayed", "items"]
    assert table.rows[1][1:7] == ["1", "0.0% (0)", "100.0% (1)", "0.0% (0)", "0.0% (0)", "9"]
    assert header["run"] == "Q"
    md = report_md.render(doc)
    assert "| run | MT-fail: items | MT-fail: 0-Gold |" in md
    html = report_html.render(doc)
    assert '<th scope="colgroup" colspan="5">MT-fail</th>' in html


def test_html_marks_shade_tier_leaders_bold_the_panel_best_and_keep_text_columns_left(main_entries):
    html = report_html.render(panel_document(build_panel(main_entries, {})))
    main = html[html.index('id="main-table') : html.index('id="stopping')]
    # P leads tier big and the panel in accuracy: shaded and bold, symbols kept for screen readers and plain text.
    assert '<td class="tier-leader panel-best"><strong>100.0% ●★</strong></td>' in main
    assert '<td class="tier-leader">50.0% ●</td>' in main  # R leads tier small
    assert (
        '<td class="text">big</td><td class="text"></td><td class="text">P</td><td class="text">model-P</td><td>1</td>'
        in main
    )
    assert re.search(r"th\.text, td\.text \{ text-align: left; white-space: nowrap; \}", html)
    assert re.search(r"td\.tier-leader \{ background: #[0-9a-f]{6}; \}", html)


@pytest.mark.parametrize("n_runs", [1, 4, 9])
def test_transition_multiples_have_readable_labels_and_a_colour_scale(n_runs):
    """Labels of at least 11 CSS px once the page draws the figure (scaled down to the report's
    column when wider: 1 SVG unit is 1 pt = 4/3 px), and a colour bar with its label."""
    from agenthop.scorer.logs import TOOLS
    from agenthop.scorer.panel_plots import MIN_LABEL_PX, PAGE_PX, transition_multiples

    svg = transition_multiples(
        [{"run": f"run-{i}", "row_normalised": [[1 / 7] * 7] * 7} for i in range(n_runs)], list(TOOLS)
    )
    view_width = float(re.search(r'viewBox="0 0 ([\d.]+)', svg).group(1))
    scale = min(4 / 3, PAGE_PX / view_width)
    sizes = [float(x) for x in re.findall(r"font-size: ([\d.]+)px", svg)]
    assert sizes and min(sizes) * scale >= MIN_LABEL_PX == 11
    assert "share of the row&#39;s next calls" in svg or "share of the row's next calls" in svg


# --- Tables 16-19, each cell worked out by hand ----------------------------------------------


def test_table_16_correlation_with_external_benchmarks(main_entries, tmp_path):
    from agenthop.scorer.panel_external import read_external

    # Accuracy: model-P 1.0, model-Q 0.2, model-R 0.5, model-S 0.4. Benchmark X: 90, 30, 50, 60.
    scores = tmp_path / "external.csv"
    scores.write_text(
        "model,X,Y\nmodel-P,90,1\nmodel-Q,30,\nmodel-R,50,3\nmodel-S,60,\nnot-in-panel,10,2\n", encoding="utf-8"
    )
    p = build_panel(main_entries, {}, external=read_external(scores))
    rows = {r["benchmark"]: r for r in p["external"]["rows"]}
    x = rows["X"]
    assert x["n"] == 4 and x["models"] == ["model-P", "model-Q", "model-R", "model-S"]
    # Ranks: accuracy P4 Q1 R3 S2, X P4 Q1 R2 S3: d = 0, 0, 1, -1, so rho = 1 - 6 * 2 / (4 * 15) = 0.8.
    assert x["spearman"] == pytest.approx(0.8)
    half = Z * math.sqrt(1.06 / (4 - 3))
    assert x["spearman_ci95"] == pytest.approx([math.tanh(math.atanh(0.8) - half), math.tanh(math.atanh(0.8) + half)])
    acc, ext = [1.0, 0.2, 0.5, 0.4], [90, 30, 50, 60]
    ma, me = sum(acc) / 4, sum(ext) / 4
    r = sum((a - ma) * (e - me) for a, e in zip(acc, ext)) / math.sqrt(
        sum((a - ma) ** 2 for a in acc) * sum((e - me) ** 2 for e in ext)
    )
    assert x["pearson"] == pytest.approx(r)
    assert x["pearson_ci95"] == pytest.approx([math.tanh(math.atanh(r) - Z), math.tanh(math.atanh(r) + Z)])
    assert rows["Y"]["n"] == 2 and rows["Y"]["spearman"] is None and "three or more models" in rows["Y"]["missing"]
    assert p["external"]["unmatched"] == ["not-in-panel"] and p["external"]["without_scores"] == []
    md = report_md.render(panel_document(p))
    # Four models: the exact permutation p (8 of the 24 orderings reach |rho| >= 0.8).
    assert x["spearman_p"] == pytest.approx(1 / 3) and x["spearman_p_method"] == "exact permutation"
    ci = x["spearman_ci95"]
    assert f"| X | +0.80 | 4 | 0 | +0.80 [{ci[0]:+.2f}, {ci[1]:+.2f}] (p = 0.333) |" in md
    assert "Models in the scores file without a full-tool run in the panel: not-in-panel." in md
    assert "Not computed: the correlation with external benchmarks needs a CSV" in report_md.render(
        panel_document(build_panel(main_entries, {}))
    )


@pytest.mark.parametrize(
    "text,message",
    [
        ("name,X\na,1\n", "the CSV header must name a 'model' column"),
        ("model,X\nm,high\n", "line 2, column 'X': 'high' is not a number"),
        ("model,X\nm,1\nm,2\n", "line 3: model 'm' is listed twice"),
    ],
)
def test_bad_external_score_files_are_named(tmp_path, text, message):
    from agenthop.scorer.panel_external import read_external

    path = tmp_path / "external.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScorerError) as err:
        read_external(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_table_17_per_replicate_rows_with_mean_sd_and_range(main_entries):
    p_, q, r, s = main_entries
    panel = build_panel([p_, {**q, "model": "model-P"}, r, s], {})  # Q is now a second run of model-P
    (model,) = panel["replicates"]["models"]
    assert model["model"] == "model-P" and [x["run"] for x in model["rows"]] == ["P", "Q"]
    acc = model["spread"]["accuracy"]
    # 1.0 and 0.2: mean 0.6, population sd 0.4 (the paper's), range 0.8; sample sd sqrt(0.32) an addition.
    assert (acc["n"], acc["mean"], acc["min"], acc["max"]) == (2, pytest.approx(0.6), 0.2, 1.0)
    assert acc["std"] == pytest.approx(0.4) and acc["range"] == pytest.approx(0.8)
    assert acc["sample_std"] == pytest.approx(math.sqrt(0.32))
    md = report_md.render(panel_document(panel))
    assert "| model-P | accuracy | 1.000 | 0.200 | 0.600 | 0.400 | 0.800 |" in md
    assert "Not computed: per-replicate rows need two or more full-tool runs of one model" in report_md.render(
        panel_document(build_panel(main_entries, {}))
    )


def test_table_18_closed_book_accuracy_with_the_full_run_beside(ablation_panel):
    c = ablation_panel["closed_book"]
    (row,) = c["rows"]
    # Closed-book right on st_0001, st_0003 and st_0002 of its ten items, all single-target.
    assert (row["run"], row["n"], row["correct"], row["accuracy"]) == ("cb", 10, 3, 0.3)
    p, n = 0.3, 10
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    assert row["ci95"] == pytest.approx([centre - half, centre + half])
    assert row["by_type"]["ST"]["accuracy"] == 0.3 and row["by_type"]["MT"]["n"] == 0
    # The full run has the same ten items: right on NINE[:8], wrong on st_0011 and st_0002.
    assert (row["full_run"], row["n_common"], row["closed_book_on_common"], row["full_on_common"]) == (
        "full",
        10,
        0.3,
        0.8,
    )
    # The paper's columns: zero 30%, full = the Table 2 run's accuracy 80%, delta = full - zero.
    assert (row["zero"], row["full"], row["same_items"]) == (0.3, 0.8, True)
    assert row["delta"] == pytest.approx(0.5) and row["lift_on_common"] == pytest.approx(0.5)
    assert (c["pooled"]["n"], c["pooled"]["accuracy"]) == (10, 0.3)
    md = report_md.render(panel_document(ablation_panel))
    assert "| all runs | m | 30.0% | 80.0% | +50.0 pp | cb | full |" in md and "| 30.0% → 80.0% (10) | +50.0 pp |" in md


def test_closed_book_accuracy_by_evidence_contact_an_addition(ablation_panel):
    (row,) = ablation_panel["closed_book_by_exposure"]["rows"]
    strata = {
        k: (v["closed_book"]["n"], v["closed_book"]["correct"], v["full"]["correct"]) for k, v in row["strata"].items()
    }
    # Full run: NINE[:8] inspected (closed-book right on st_0001, st_0003), st_0011 exposed, st_0002 neither.
    assert strata == {"inspected": (8, 2, 8), "exposed": (1, 0, 0), "neither": (1, 1, 0)}
    md = report_md.render(panel_document(ablation_panel))
    assert "| full | cb | 8 | 25.0% | 100.0% | 1 | 0.0% | 0.0% | 1 | 100.0% | 0.0% |" in md
    assert "## Closed-book accuracy by evidence contact (an addition)" in md
