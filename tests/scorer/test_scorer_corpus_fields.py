"""Scoring against the right corpus, and every item counted: corpus id checks, same_paper distractors, unknown groups."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner
from support.scorer_fixtures import ALL_ITEMS, SessionWriter, build_corpus, new_run_dir, write_main_run

from agenthop.scorer import CorpusMismatchError, Gold, compare, score
from agenthop.scorer.cli import main


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus-fields")
    corpus = build_corpus(root)
    gold = Gold(corpus)
    corpus_id = gold.meta["corpus_id"]
    gold.close()
    return {"root": root, "corpus": corpus, "corpus_id": corpus_id, "main": write_main_run(root / "runs")}


def run_on(root, name, corpus_id, *, manifest_corpus=None):
    """A one-session run whose session_start (or run.json) says which corpus it ran on."""
    manifest = {"run": name, "corpus": manifest_corpus} if manifest_corpus is not None else None
    run_dir, log, _ = new_run_dir(root, name, manifest)
    SessionWriter(log, "st_0001", run=name, corpus={"corpus_id": corpus_id, "schema_version": 1}).submit("B")
    log.close()
    return run_dir


def test_a_run_made_on_another_corpus_is_refused_naming_both(env, tmp_path):
    other = "f" * 64
    stranger = run_on(tmp_path, "stranger", other)
    with pytest.raises(CorpusMismatchError) as info:
        score([env["main"], stranger], env["corpus"], out=tmp_path / "out")
    message = str(info.value)
    assert "run stranger was made on corpus " + other in message and env["corpus_id"] in message
    assert str(env["corpus"]) in message and "--" not in message
    assert not (tmp_path / "out").exists()  # refused before anything was scored or written

    for args in (
        [str(stranger), "--corpus", str(env["corpus"]), "--out", str(tmp_path / "cli")],
        ["compare", str(env["main"]), str(stranger), "--corpus", str(env["corpus"])],
        ["view", str(stranger), "--corpus", str(env["corpus"]), "--out", str(tmp_path / "view")],
    ):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 1, r.output
        assert f"made on corpus {other}" in r.output and env["corpus_id"] in r.output and "--corpus" in r.output
    with pytest.raises(CorpusMismatchError):
        compare(stranger, env["main"], env["corpus"])
    assert not (tmp_path / "view").exists()


def test_run_json_names_the_corpus_too(env, tmp_path):
    """A run whose run.json names another corpus is refused even when its sessions do not say."""
    stranger = run_on(tmp_path, "manifest", None, manifest_corpus={"corpus_id": "abc123", "schema_version": 1})
    with pytest.raises(CorpusMismatchError, match="made on corpus abc123"):
        score([stranger], env["corpus"])


def test_a_run_made_on_this_corpus_or_saying_nothing_is_scored(env, tmp_path):
    same = run_on(tmp_path, "same", env["corpus_id"])
    silent = run_on(tmp_path, "silent", None)  # a third-party client that records no corpus
    result = score([same, silent], env["corpus"])
    assert [r.headline.accuracy for r in result.runs] == [1.0, 1.0]


def test_same_paper_distractor_is_counted(env, tmp_path):
    corpus = tmp_path / "corpus.sqlite"
    shutil.copy(env["corpus"], corpus)
    conn = sqlite3.connect(corpus)
    # st_0003: correct D; B becomes "right paper, wrong passage".
    conn.execute(
        "UPDATE gold_items SET distractor_types = ? WHERE item_id = 'st_0003'",
        (json.dumps(["wrong_paper", "same_paper", "seed_only", "correct"]),),
    )
    conn.commit()
    conn.close()
    run_dir, log, _ = new_run_dir(tmp_path, "picky")
    SessionWriter(log, "st_0003", run="picky").submit("B")
    SessionWriter(log, "st_0005", run="picky").submit("C")  # wrong_paper
    log.close()
    result = score([run_dir], corpus, out=tmp_path / "out")
    fa = result.runs[0].full_summary()["failure_attribution"]
    assert list(fa["counts"]) == ["seed_only", "wrong_paper", "same_paper", "no_context", "unknown", "no_answer"]
    assert fa["counts"]["same_paper"] == 1 and fa["counts"]["wrong_paper"] == 1 and fa["rates"]["same_paper"] == 0.5
    assert (
        "| [same_paper](<#g-same-paper>) | 1 | 50.0% |" in (tmp_path / "out/report.md").read_text()
    )  # linked to its glossary entry
    # A corpus without same_paper distractors keeps its table as it was.
    plain = score([env["main"]], env["corpus"]).runs[0].summary["failure_attribution"]
    assert "same_paper" not in plain["counts"]


def test_unknown_optional_fields_are_a_group_never_dropped(env, tmp_path):
    corpus = tmp_path / "corpus.sqlite"
    shutil.copy(env["corpus"], corpus)
    conn = sqlite3.connect(corpus)
    conn.execute("UPDATE items SET venue = NULL WHERE item_id IN ('st_0001', 'mt_0002')")
    conn.execute("UPDATE items SET consensus_tier = NULL WHERE item_id = 'st_0002'")
    conn.execute(
        "UPDATE items SET consensus_tier = 'Gold' WHERE item_id = 'st_0003'"
    )  # an older import, not normalised
    conn.execute("UPDATE items SET cognitive_skill = NULL")
    conn.execute("UPDATE items SET cognitive_skill = 'synthesis' WHERE item_id IN ('st_0001', 'st_0002')")
    conn.execute("UPDATE items SET cognitive_skill = '' WHERE item_id = 'st_0005'")
    conn.commit()
    conn.close()
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": i}) + "\n" for i in ALL_ITEMS))
    result = score([env["main"]], corpus, items=items, out=tmp_path / "out")
    m = result.runs[0].full_summary()["metrics"]
    n = m["overall"]["n"]
    assert n == 7
    for key in ("by_reasoning_type", "by_venue", "by_consensus_tier", "by_cognitive_skill"):
        assert sum(g["n"] for g in m[key].values()) == n, key
    assert m["by_venue"]["unknown"]["n"] == 2 and list(m["by_venue"])[-1] == "unknown"
    assert list(m["by_consensus_tier"]) == ["gold", "Gold", "unknown"]
    assert (m["by_consensus_tier"]["gold"]["n"], m["by_consensus_tier"]["unknown"]["n"]) == (5, 1)
    assert list(m["by_cognitive_skill"]) == ["synthesis", "unknown"] and m["by_cognitive_skill"]["unknown"]["n"] == 5
    md = (tmp_path / "out/report.md").read_text()
    assert "| cognitive skill | n |" in md and "| unknown | 5 |" in md and "| unknown | 2 |" in md
