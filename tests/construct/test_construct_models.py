"""agenthop-construct with models: a scripted OpenAI-compatible model on loopback drives every model stage; each
scripted failure shows up as its drop reason in the attrition table, counted exactly; a re-run makes no call
(the cache); killing the pipeline inside each model stage and resuming writes the same release, byte for byte,
without asking again for any reply it had received; --dry-run counts the calls without making one."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.construct_runs import PRICES, settings, tree_digest
from support.construct_script import OUTCOMES, ConstructScript, judged_low, restated
from support.fake_openai import FakeOpenAI
from support.paths import REPO as ROOT

from agenthop.construct.chains import hops
from agenthop.construct.cli import main as construct_main
from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.option_checks import paper_text, validate_grounded
from agenthop.construct.pipeline import run_pipeline
from agenthop.construct.prompts import BadReply, form_matches
from agenthop.construct.settings import Settings
from agenthop.construct.textspans import supported_by, verbatim_in
from agenthop.corpus.importer import check_release
from agenthop.llm.pricing import PriceTable
from agenthop.llm.retry import RetryPolicy

CORPUS = ROOT / "corpus.sqlite"


@pytest.mark.slow
def test_every_scripted_failure_is_its_drop_reason_counted_exactly(tmp_path):
    script = ConstructScript(CORPUS)
    out = tmp_path / "run"
    with FakeOpenAI(script) as fake:
        s = settings(fake.base_url)
        result = run_pipeline(
            CORPUS,
            out,
            s,
            prices=PriceTable(PRICES),
            policy=RetryPolicy(backoff=0.01, jitter=0),
            echo=lambda line: None,
        )
        rows = {r["stage"]: r for r in result["attrition"]["rows"]}

        judged = [json.loads(line) for line in (out / "work" / "chains.jsonl").read_text().splitlines()]
        judged = [
            c
            for c in judged
            if c.get("drop", {}).get("reason")
            not in ("no_citation_context", "short_citation_context", "background_citation", "low_reference_overlap")
        ]
        low = sum(any(judged_low(cited) for _, cited in hops(c)) for c in judged)
        assert low > 0 and rows["chains"]["reasons"]["judge_below_threshold"] == low
        assert rows["qa"]["sampled"] == len(OUTCOMES) == len(script.outcome)
        expected = {}
        for reason in OUTCOMES.values():
            if reason:
                expected[reason] = expected.get(reason, 0) + 1
        found = {**rows["qa"]["reasons"], **rows["distractors"]["reasons"], **rows["ensemble"]["reasons"]}
        found.pop("not_sampled")
        assert found == expected
        kept = [o for o, reason in OUTCOMES.items() if reason is None]
        assert rows["postfilter"]["kept"] == result["release"]["items"] == len(kept)
        # Silver: one filter recovered the gold from the seed (the "silver" outcome), or the artifact check's form vote
        # points at the gold (filter.by_form: the form gives it away, so never gold); every other kept item is gold.
        kept_records = [json.loads(line) for line in (out / "work" / "ensemble.jsonl").read_text().splitlines()]
        kept_records = [r for r in kept_records if "drop" not in r]
        silver = sum(bool(r["filter"]["by_form"] or r["filter"]["shortcut"] > 0) for r in kept_records)
        assert 1 <= silver and rows["postfilter"]["tiers"] == {"gold": len(kept) - silver, "silver": silver}
        # The bad Q/A reply was asked again with what was wrong; the HTTP 500 was retried in place.
        retried = [
            b
            for b in fake.requests
            if len(b["messages"]) > 2 and "That reply cannot be used" in b["messages"][-1]["content"]
        ]
        assert any(
            "the reply's JSON object is cut off (no closing brace)" in b["messages"][-1]["content"] for b in retried
        )
        costs = json.loads((out / "work" / "costs.json").read_text())
        assert costs["calls"] == len(fake.requests) - 1  # every request but the HTTP 500 was answered
        assert sum(r["retries"] for r in costs["by_stage_and_model"]) == 1
        for row in costs["by_stage_and_model"]:
            price = PRICES["f" if row["model"].startswith("f") else row["model"]]
            assert row["usd"] == pytest.approx(
                (row["prompt_tokens"] * price["input_per_m"] + row["completion_tokens"] * price["output_per_m"]) / 1e6
            )
        assert costs["usd"] > 0 and costs["unpriced_models"] == []
        report = check_release(out / "release", echo=lambda line: None)
        assert report["ok"] and report["warnings"] == {}

        # Everything again: every stage skipped, no request, the same bytes.
        before, n_requests = tree_digest(out / "release"), len(fake.requests)
        again = run_pipeline(CORPUS, out, s, prices=PriceTable(PRICES), echo=lambda line: None)
        assert again["ran"] == [] and len(fake.requests) == n_requests and tree_digest(out / "release") == before
        # A changed later setting re-runs from cached replies: still no request.
        (out / "work" / "qa.done.json").unlink()
        rerun = run_pipeline(CORPUS, out, s, prices=PriceTable(PRICES), echo=lambda line: None)
        assert rerun["ran"] == ["qa"] and len(fake.requests) == n_requests and tree_digest(out / "release") == before


def scripted_run(out: Path, **changes) -> tuple[dict, FakeOpenAI, Settings]:
    """A whole scripted run with the given settings changed: its result, the fake endpoint (its requests) and the
    settings."""
    with FakeOpenAI(ConstructScript(CORPUS)) as fake:
        s = dataclasses.replace(settings(fake.base_url), **changes)
        result = run_pipeline(CORPUS, out, s, prices=PriceTable(PRICES), echo=lambda line: None)
    return result, fake, s


@pytest.mark.slow
def test_an_informed_writer_is_shown_the_gold_once_per_item_and_its_options_are_checked_alike(tmp_path):
    result, fake, s = scripted_run(tmp_path, informed_distractors=True)
    rows = {r["stage"]: r for r in result["attrition"]["rows"]}
    asked = [
        b["messages"][1]["content"]
        for b in fake.requests
        if "You write the wrong options" in b["messages"][0]["content"]
    ]
    qa = [json.loads(line) for line in (tmp_path / "work" / "qa.jsonl").read_text().splitlines()]
    reaching = [c for c in qa if "drop" not in c]
    # One request an item, each showing that item's gold; the HTTP 500 asked again, and the reply with the gold for
    # an option asked again with what was wrong until the attempts run out. No blind answer is asked.
    assert len(asked) == len(reaching) + 1 + (s.attempts - 1)
    assert all(any(f"Correct answer: {c['answer']}\n" in a for a in asked) for c in reaching)
    assert not any("in one short phrase" in b["messages"][0]["content"] for b in fake.requests)
    # The writer's option equal to the gold is refused as a blind one is.
    assert rows["distractors"]["reasons"] == {"distractor_too_close": 1}
    items = [json.loads(line) for line in (tmp_path / "work" / "distractors.jsonl").read_text().splitlines()]
    kept = [i for i in items if "drop" not in i]
    assert kept and all(
        sorted(i["distractor_types"]) == ["correct", "no_context", "seed_only", "wrong_paper"] for i in kept
    )
    assert all(form_matches(o, i["answer"]) for i in kept for o in i["options"])


@pytest.mark.slow
def test_restated_options_keep_their_figures_and_are_asked_without_saying_which_is_right(tmp_path):
    _, fake, _ = scripted_run(tmp_path, informed_distractors=True, restate_options=True)
    asked = [
        b["messages"][1]["content"] for b in fake.requests if "You edit the options" in b["messages"][0]["content"]
    ]
    items = [json.loads(line) for line in (tmp_path / "work" / "distractors.jsonl").read_text().splitlines()]
    kept = [i for i in items if "drop" not in i]
    assert kept and len(asked) == len(kept)
    for item in kept:
        # The writer saw the options as the agent will order them, and nothing that marks the right one.
        shown = next(a for a in asked if f"Question: {item['question']}\n" in a)
        assert [f"({x}) {o}" in shown for x, o in zip("ABCD", item["written_options"])] == [True] * 4
        assert item["answer"] not in shown.split("\n(")[0] and "Correct answer" not in shown
        assert item["options"] == [restated(o) for o in item["written_options"]]
        assert item["options"][item["correct_index"]] == restated(item["answer"])
    release = [json.loads(line) for line in (tmp_path / "release" / "qa" / "full.jsonl").read_text().splitlines()]
    assert release and all(o.startswith("Reportedly ") for r in release for o in r["options"])


@pytest.mark.slow
def test_the_blind_check_drops_an_item_whose_options_give_the_gold_away(tmp_path):
    result, fake, _ = scripted_run(tmp_path, blind_check=True)
    blind = [b for b in fake.requests if "the question is not shown" in b["messages"][1]["content"]]
    # Asked of every filter model, with the options and nothing else: no question, no paper.
    assert blind and {b["model"] for b in blind} == {"f1", "f2", "f3"}
    assert not any("Question:" in b["messages"][1]["content"] or "<paper" in b["messages"][1]["content"] for b in blind)
    rows = {r["stage"]: r for r in result["attrition"]["rows"]}
    # The "silver" item (every filter picks its gold from the options alone) is dropped; the others fare as before.
    assert rows["ensemble"]["reasons"] == {"shortcut": 1, "no_consensus": 1, "options_give_away": 1}
    records = [json.loads(line) for line in (tmp_path / "work" / "ensemble.jsonl").read_text().splitlines()]
    dropped = next(r for r in records if r.get("drop", {}).get("reason") == "options_give_away")
    assert dropped["filter"]["blind"] == 3 and "blind:+++" in dropped["drop"]["detail"]


@pytest.mark.slow
def test_grounded_options_each_restate_a_sentence_their_source_paper_states(tmp_path):
    _, fake, _ = scripted_run(tmp_path, grounded_distractors=True)
    asked = [
        b["messages"][1]["content"]
        for b in fake.requests
        if "You write the wrong options" in b["messages"][0]["content"]
    ]
    assert asked and all('"source"' in a and "Correct answer: " in a for a in asked)
    view = CorpusView(CORPUS)
    items = [json.loads(line) for line in (tmp_path / "work" / "distractors.jsonl").read_text().splitlines()]
    kept = [i for i in items if "drop" not in i]
    assert kept
    for item in kept:
        assert sorted(item["distractor_types"]) == ["correct", "same_paper", "seed_only", "wrong_paper"]
        sources = item["wrong_sources"]
        assert verbatim_in(sources["seed_only"], paper_text(view, item["seed"]))
        assert any(verbatim_in(sources["same_paper"], paper_text(view, t)) for t in item["targets"])
        assert not any(verbatim_in(e, sources["same_paper"]) for e in item["evidence"])
        for kind, source in sources.items():
            assert supported_by(item["options"][item["distractor_types"].index(kind)], source)
    # A reply quoting a sentence its paper does not hold is refused and asked again with what was wrong.
    reply = {kind: {"answer": "an answer", "source": "A sentence no paper of the corpus holds."} for kind in sources}
    with pytest.raises(BadReply, match="not word for word"):
        validate_grounded(json.dumps(reply), kept[0]["answer"], kept[0]["evidence"], {"seed_only": ["text"]}, 0.9)


def _construct(out: Path, s: Settings, prices: Path) -> subprocess.Popen:
    args = [
        sys.executable,
        "-m",
        "agenthop.construct.cli",
        "run",
        "--corpus",
        str(CORPUS),
        "--out",
        str(out),
        "--min-refs",
        "5",
        "--max-chains-per-seed",
        "1",
        "--judge",
        s.judge,
        "--generator",
        s.generator,
        "--max-qa",
        str(s.max_qa),
        "--workers",
        "1",
        "--prices",
        str(prices),
    ] + [x for f in s.filters for x in ("--filter", f)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_killed_inside_each_model_stage_and_resumed_gives_the_same_release_without_asking_again(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    script = ConstructScript(CORPUS)
    with FakeOpenAI(script) as fake:
        s = settings(fake.base_url)
        reference = _construct(tmp_path / "reference", s, prices)
        assert reference.wait(timeout=300) == 0, reference.stderr.read()
        out = tmp_path / "killed"
        script.answered.clear()  # from here on: the replies the killed runs received (and cached)
        for stage in ("judge", "qa", "distractors", "ensemble"):
            answered_before = set(script.answered)
            script.stage_counts.clear()
            proc = _construct(out, s, prices)
            start = len(fake.requests)

            def kill(name: str, count: int, proc=proc, stage=stage) -> bool:
                if name == stage and count == 3:
                    os.kill(proc.pid, signal.SIGKILL)
                    return True
                return False

            script.kill = kill
            assert proc.wait(timeout=300) == -signal.SIGKILL
            script.kill = None
            # Nothing answered before this run was asked again in it.
            assert not {script.key(b) for b in fake.requests[start:]} & answered_before, stage
        script.stage_counts.clear()
        answered_before, start = set(script.answered), len(fake.requests)
        final = _construct(out, s, prices)
        assert final.wait(timeout=300) == 0, final.stderr.read()
        assert not {script.key(b) for b in fake.requests[start:]} & answered_before, (
            "a reply received before a kill was asked for again"
        )
        assert "done already, skipped" in final.stderr.read()
    assert tree_digest(out / "release") == tree_digest(tmp_path / "reference" / "release")
    assert (out / "attrition.md").read_text() == (tmp_path / "reference" / "attrition.md").read_text()


def test_dry_run_counts_calls_and_cost_without_calling(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    with FakeOpenAI(lambda body, fake: pytest.fail("a dry run made a model call")) as fake:
        s = settings(fake.base_url)
        result = CliRunner().invoke(
            construct_main,
            [
                "run",
                "--corpus",
                str(CORPUS),
                "--out",
                str(tmp_path / "o"),
                "--min-refs",
                "5",
                "--max-chains-per-seed",
                "1",
                "--judge",
                s.judge,
                "--generator",
                s.generator,
                "--max-qa",
                "12",
                "--prices",
                str(prices),
                "--dry-run",
                *[x for f in s.filters for x in ("--filter", f)],
            ],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        assert fake.requests == []
    lines = {
        line.split()[0] + " " + line.split()[1]: line.split()
        for line in result.output.splitlines()[2:]
        if len(line.split()) >= 6
    }
    assert "77 seeds, 77 chains (16 after the pre-filters), 12 sent to Q/A; at most:" in result.output
    assert lines["chains judge"][2] == "28"  # one judge call per hop of each chain kept by the pre-filters
    assert lines["qa gen"][2] == "12" and lines["distractors gen"][2] == "36"
    assert [v[2] for k, v in lines.items() if k.startswith("ensemble")] == ["24", "24", "24"]
    assert not (tmp_path / "o").exists()


def test_an_endpoint_that_refuses_for_good_drops_the_candidate_as_model_error(tmp_path):
    from support.fake_openai import HTTPError

    with FakeOpenAI(
        lambda body, fake: HTTPError(400, {"error": {"message": "model not found", "type": "invalid_request_error"}})
    ) as fake:
        s = Settings(min_refs=5, max_chains_per_seed=1, generator=f"nope@{fake.base_url}", max_qa=3, workers=2)
        result = run_pipeline(CORPUS, tmp_path / "run", s, echo=lambda line: None)
        assert len(fake.requests) == 3  # a 400 is not retried: it is not transient
    qa = {r["stage"]: r for r in result["attrition"]["rows"]}["qa"]
    assert qa["reasons"]["model_error"] == 3 and qa["kept"] == 0
    dropped = [json.loads(line) for line in (tmp_path / "run" / "work" / "qa.jsonl").read_text().splitlines()]
    assert any(
        "HTTP 400" in r["drop"]["detail"] and "model not found" in r["drop"]["detail"]
        for r in dropped
        if r["drop"]["reason"] == "model_error"
    )
    assert result["release"]["items"] == 0
