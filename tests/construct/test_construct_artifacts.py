"""The artifact check: each solver that sees no evidence is fooled by an item built for it and not by
a balanced one; scoring counts an abstention as chance; the stage drops form flaws without looking at the gold and
rebalances a winning rule back to chance rather than to zero; on any generated release, no form solver is left above
chance + 10 points."""

from __future__ import annotations

import asyncio
import json
import random
import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.construct_script import ConstructScript, _reply, in_form
from support.fake_openai import FakeOpenAI
from support.paths import REPO as ROOT

from agenthop.construct import artifact_filter, artifacts
from agenthop.construct.context import Context
from agenthop.construct.corpus_view import CorpusView, Section
from agenthop.construct.distractors import run_distractors
from agenthop.construct.pipeline import run_pipeline
from agenthop.construct.prompts import _length_bounds
from agenthop.construct.settings import Settings
from agenthop.construct.stagefiles import digest, read_jsonl
from agenthop.construct.textspans import sentences
from agenthop.scorer.stats import wilson


def item(options: list[str], correct: int = 0, question: str = "What completes this statement: ___?", **extra) -> dict:
    return {
        "id": f"c-{abs(hash((tuple(options), correct, question))):x}",
        "question": question,
        "options": options,
        "correct_index": correct,
        **extra,
    }


# Four options of one type and format: nothing but their values tells them apart.
BALANCED = item(["91.2%", "88.4%", "90.7%", "89.9%"], correct=2)

FOOLED = {  # solver -> (an item built so that its rule singles out the gold, the gold)
    "longest": item(["a two-layer bidirectional LSTM encoder with attention", "a CNN", "an RNN", "a GRU"]),
    "shortest": item(["SVM", "a gradient boosted forest", "a conditional random field", "a multilayer perceptron"]),
    "most_similar": item(
        ["BLEU of 27.3 on WMT14", "BLEU of 27.9 on WMT15", "BLEU of 21.3 on WMT14", "ROUGE-L of 41.0"], correct=0
    ),
    "least_similar": item(["Penn Treebank", "accuracy of 91.2", "accuracy of 90.4", "accuracy of 89.7"]),
    "odd_form": item(["the BiLSTM-CRF tagger", "91.2%", "88.4%", "90.7%"]),
    "largest": item(["97.1%", "88.4%", "90.7%", "89.9%"]),
    "smallest": item(["12.5%", "88.4%", "90.7%", "89.9%"]),
    "roundest": item(["25", "28", "26", "27"]),  # the twenty-eighth read: 25 the only round size of a seed dictionary
    "twin_smaller": item(
        [
            "SEQ2TREE outperforms SEQ2SEQ by 2.9% and 2.5%",
            "the grandmother is still unaware",
            "current learning rate for each step",
            "SEQ2TREE outperforms SEQ2SEQ by 3.7% and 3.2%",
        ]
    ),
    "twin_larger": item(
        [
            "SEQ2TREE outperforms SEQ2SEQ by 3.7% and 3.2%",
            "the grandmother is still unaware",
            "current learning rate for each step",
            "SEQ2TREE outperforms SEQ2SEQ by 2.9% and 2.5%",
        ]
    ),
    "question_overlap": item(
        ["the parser trained on the Penn Treebank", "a lexicon of verbs", "a crowd of annotators", "a character model"],
        question="Which parser trained on the Penn Treebank reached ___?",
    ),
    "contradiction": item(
        ["an accuracy of 91.2%", "an accuracy of 113.4%", "an accuracy of 120.5%", "an accuracy of 131.0%"]
    ),
}


@pytest.mark.parametrize("name", sorted(FOOLED))
def test_each_solver_picks_the_gold_of_the_item_built_to_fool_it_and_not_of_a_balanced_one(name):
    solver = next(s for s in artifacts.SOLVERS if s.name == name)
    fooled = FOOLED[name]
    assert tuple(solver.run(fooled)) == (fooled["correct_index"],), (name, solver.run(fooled))
    picks = solver.run(BALANCED)
    assert artifacts.credit(picks, BALANCED["correct_index"], 4) <= 0.25, (name, picks)
    assert len(picks) != 1 or picks[0] != BALANCED["correct_index"]


def test_the_middle_solvers_name_what_is_neither_extreme():
    # "Never an extreme" is the leak a generator makes when it hides the gold between its distractors.
    assert (
        artifacts.middle_value(BALANCED) == (2, 3) and artifacts.credit(artifacts.middle_value(BALANCED), 2, 4) == 0.5
    )
    assert (
        artifacts.middle_value(FOOLED["largest"]) == (2, 3)
        and artifacts.middle_value(item(["1%", "2%", "a", "b"])) == ()
    )
    assert artifacts.middle_length(item(["a", "bb", "ccc", "dddd"], correct=1)) == (1, 2)
    assert artifacts.middle_length(item(["aa", "bb", "cc", "dd"])) == ()


def test_the_twin_solver_narrows_to_the_pair_and_a_lone_twin_is_a_flaw_whichever_option_is_gold():
    twins = FOOLED["twin_smaller"]
    assert artifacts.twin(twins) == (0, 3)
    assert artifacts.credit(artifacts.twin(twins), 0, 4) == 0.5 and artifacts.credit(artifacts.twin(twins), 1, 4) == 0.0
    for gold in range(4):  # the stage's twin rule never looks at the gold
        assert artifact_filter.flaw({**twins, "correct_index": gold})["reason"] == "artifact_twin"
    # Four typed values with one unit are not twins: no single pair stands out.
    assert (
        artifacts.twin_pairs(["300 epochs", "200 epochs", "400 epochs", "250 epochs"]) != []
        and artifacts.twin(item(["300 epochs", "200 epochs", "400 epochs", "250 epochs"])) == ()
    )
    assert artifact_filter.flaw(item(["300 epochs", "200 epochs", "400 epochs", "250 epochs"])) is None
    # Symbols and stopwords only, numbers changed: still the same words (the old generator's formula blanks).
    assert artifacts.twin(
        item(["For any k ≥ 2", "the loss on held-out data", "For any k ≥ 4", "a learning rate schedule"])
    ) == (0, 2)


def test_the_question_refutes_a_count_it_fixes_and_a_percentage_above_100():
    q = "The model is evaluated on three datasets; what completes this statement: ___?"
    assert artifacts.refuted(q, "results on four datasets") == "the question fixes 3 datasets, the option says four"
    assert artifacts.refuted(q, "results on three datasets") is None
    assert artifacts.refuted(q, "an accuracy of 113.4%").startswith("a percentage above 100")
    flawed = artifact_filter.flaw(
        item(
            [
                "results on three datasets",
                "results on four datasets",
                "scores on three corpora",
                "gains on three tasks",
            ],
            question=q,
        )
    )
    assert flawed["reason"] == "artifact_refuted" and "option B" in flawed["detail"]


def test_odd_type_is_a_flaw_and_one_type_throughout_is_not():
    assert artifact_filter.flaw(FOOLED["odd_form"])["reason"] == "artifact_odd_type"
    assert artifact_filter.flaw(BALANCED) is None
    # A dropout rate among values of another magnitude (an item read by hand in the explore release).
    dropout = artifact_filter.flaw(item(["5.3", "0.5", "4.3", "6.1"], correct=1))
    assert dropout == {
        "reason": "artifact_odd_type",
        "detail": "option B's value is of another order of magnitude than the others'",
    }
    assert artifacts.odd_form(item(["5.3", "0.5", "4.3", "6.1"], correct=1)) == (1,)
    assert artifact_filter.flaw(item(["0.53", "0.5", "0.43", "0.61"])) is None
    assert artifact_filter.flaw(item(["9.8", "10.2", "9.5", "9.9"])) is None  # a decade boundary is not a gap


@dataclass(frozen=True)
class Paper:
    paper_id: str


class SeedView:
    """The two things the seed solver reads: the papers, and a paper's sections."""

    def __init__(self, text: str):
        self.papers = {"seed": Paper("seed")}
        self._text = text

    def sections(self, pid):
        return (Section("3 Results", self._text),) if pid == "seed" else ()

    def references(self, pid):  # the retrieval solver's neighbourhood: the seed alone
        return []

    def has_text(self, pid):
        return pid == "seed"


def test_the_seed_solver_is_the_offline_filter_reading_the_seed_alone():
    question = "On the JOBS dataset, what completes this statement: the parser ___?"
    options = [
        "improves accuracy by 2.9 points",
        "halves the training time",
        "uses a copying mechanism",
        "needs no lexicon",
    ]
    stated = SeedView("On the JOBS dataset the parser improves accuracy by 2.9 points over the baseline.")
    assert artifacts.seed_only(item(options, question=question, seed="seed"), stated) == (0,)
    silent = SeedView("We thank the reviewers for their comments on an earlier draft.")
    assert artifacts.seed_only(item(options, question=question, seed="seed"), silent) == ()
    assert "seed_only" not in artifacts.solve(item(options, question=question, seed="seed"))  # no view, no seed solver
    assert artifacts.solve(item(options, question=question, seed_paper_id="seed"), stated)["seed_only"] == [0]


def test_seed_exclusion_keeps_the_options_holding_no_number_the_seed_states():
    seed = SeedView("Our tagger reaches 91.2% on the test set and 88.4% on the development set.")
    # Built to fool it: two distractors are the seed's numbers, so the two left hold the gold.
    fooled = item(["91.2%", "90.7%", "88.4%", "89.9%"], correct=1, seed="seed")
    assert artifacts.seed_exclusion(fooled, seed) == (1, 3)
    assert artifacts.credit(artifacts.solve(fooled, seed)["seed_exclusion"], 1, 4) == 0.5
    # Multi-target options: a part the seed states rules the pair out.
    pairs = item(["90.7%; 12.1%", "88.4%; 12.1%", "90.7%; 13.5%", "89.9%; 13.5%"], correct=0, seed_paper_id="seed")
    assert artifacts.seed_exclusion(pairs, seed) == (0, 2, 3)
    # The seed states none of the options, or all of them: nothing to rule out, an abstention.
    assert artifacts.seed_exclusion(BALANCED | {"seed": "seed"}, SeedView("We thank the reviewers.")) == ()
    assert artifacts.seed_exclusion(item(["91.2%", "88.4%"], seed="seed"), seed) == ()
    assert artifacts.seed_exclusion(fooled, None) == ()


def test_scoring_counts_an_abstention_as_chance_and_a_tie_as_a_random_pick_with_the_scorers_wilson_interval():
    assert artifacts.credit([], 2, 4) == 0.25 and artifacts.credit([0, 1, 2, 3], 2, 4) == 0.25
    assert (
        artifacts.credit([1, 2], 2, 4) == 0.5
        and artifacts.credit([1], 2, 4) == 0.0
        and artifacts.credit([2], 2, 4) == 1.0
    )
    items = [item(["a", "b", "c", "d"], correct=i % 4) for i in range(8)]
    picks = [{"longest": [0]} for _ in items] + []
    s = artifacts.score(items, picks, "longest")
    assert s["accuracy"] == 0.25 and s["decided"] == 8 and s["decided_right"] == 2
    assert s["ci95"] == [round(x, 4) for x in wilson(2, 8)]
    abstaining = artifacts.score(items, [{"longest": []} for _ in items], "longest")
    assert abstaining["accuracy"] == 0.25 and abstaining["abstained"] == 8 and abstaining["decided"] == 0


def test_the_form_vote_needs_two_solvers_to_agree():
    assert artifacts.form_vote({"longest": (1,), "largest": (1,), "shortest": (2,)}) == (1,)
    assert artifacts.form_vote({"longest": (1,), "largest": (2,)}) == ()
    assert artifacts.form_vote({"longest": (1,), "largest": (1,), "seed_only": (1,)}) == (1,)
    assert artifacts.form_vote({"longest": (1,), "seed_only": (1,)}) == ()  # the seed is not form


def _release(n: int, rng: random.Random, gold_rank) -> list[dict]:
    """n items of four typed percentages; ``gold_rank(i)`` is the gold's rank among them (0 = smallest)."""
    out = []
    for i in range(n):
        values = sorted(rng.sample(range(500, 990), 4))
        options = [f"{v / 10:.1f}%" for v in values]
        rng.shuffle(options)
        gold = options.index(f"{values[gold_rank(i)] / 10:.1f}%")
        out.append(
            item(options, correct=gold, question=f"In setting {i}, what accuracy completes this statement: ___?")
        )
    return out


def test_the_option_classifier_finds_a_rank_leak_cross_validated_and_stays_near_chance_without_one():
    rng = random.Random(7)
    leaky = _release(200, rng, lambda i: 3)  # the gold is always the largest value
    summary = artifacts.summarise(leaky)
    assert summary["solvers"]["option_classifier"]["accuracy"] > 0.9 and "option_classifier" in summary["above_limit"]
    assert summary["solvers"]["largest"]["accuracy"] == 1.0 and summary["solvers"]["smallest"]["accuracy"] == 0.0
    fair = _release(200, rng, lambda i: i % 4)  # the gold's rank rotates
    summary = artifacts.summarise(fair)
    assert abs(summary["solvers"]["option_classifier"]["accuracy"] - 0.25) <= 0.10
    assert summary["above_limit"] == [] and summary["below_floor"] == []
    assert summary["chance"] == 0.25 and summary["limit"] == 0.35


def _stage(items: list[dict]) -> list[dict]:
    return artifact_filter.run_artifacts(None, items)


def test_the_stage_rebalances_a_winning_rule_to_chance_not_to_zero_and_records_the_reason():
    rng = random.Random(11)
    items = _release(80, rng, lambda i: 3 if i % 5 < 3 else i % 3)  # the largest value is gold 60% of the time
    records = _stage(items)
    kept = [r for r in records if "drop" not in r]
    dropped = [r for r in records if "drop" in r]
    assert dropped and {r["drop"]["reason"] for r in dropped} <= {
        "artifact_largest",
        "artifact_smallest",
        "artifact_most_similar",
        "artifact_least_similar",
        "artifact_form_vote",
    }
    assert any(r["drop"]["reason"] == "artifact_largest" for r in dropped)
    assert all(
        r["artifacts"]["picks"]["largest"] == [r["correct_index"]]
        for r in dropped
        if r["drop"]["reason"] == "artifact_largest"
    )
    after = artifacts.summarise(kept)["solvers"]
    assert 0.25 - artifact_filter.TARGET - 1e-9 <= after["largest"]["accuracy"] <= 0.25 + artifact_filter.TARGET + 1e-9
    assert after["largest"]["decided_right"] > 0  # not driven to zero: "never the largest" does not win instead
    assert len(kept) >= 40
    # Every kept record carries its picks for the ensemble and the release's artifact check.
    assert all(set(artifacts.FORM_SOLVERS) <= set(r["artifacts"]["picks"]) for r in records)


def test_too_few_items_are_not_rebalanced():
    rng = random.Random(3)
    items = _release(artifact_filter.MIN_ITEMS - 1, rng, lambda i: 3)
    assert all("drop" not in r for r in _stage(items))


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 2**32 - 1),
    st.lists(st.integers(1, 4), min_size=4, max_size=4),
    st.integers(60, 150),
    st.sampled_from(["percent", "decimal", "count", "phrase"]),
)
@pytest.mark.slow
def test_after_the_stage_no_form_solver_beats_chance_by_more_than_ten_points_whatever_the_bias(seed, weights, n, style):
    """A generated release with a bias in the gold's rank among the values (hypothesis weighs each rank 1-4: from
    balanced to the gold being one rank 57% of the time) and any option style: what the stage keeps leaves no option-
    or question-only solver above chance + 10 points (SPEC 8's limit). Below chance - 10, a rule is rebalanced too,
    unless that takes half the release, and then the stage names it."""
    rng = random.Random(seed)
    ranks = [r for r, w in enumerate(weights) for _ in range(w)]
    render = {
        "percent": lambda v: f"{v / 10:.1f}%",
        "decimal": lambda v: f"0.{v}",
        "count": lambda v: f"{v} sentences",
        "phrase": lambda v: "a " + " ".join(["longer"] * (v % 5)) + f" model of size {v}",
    }[style]
    items = []
    for i in range(n):
        options = [render(v) for v in sorted(rng.sample(range(100, 999), 4))]
        gold_text = options[rng.choice(ranks)]
        rng.shuffle(options)
        items.append(
            item(options, correct=options.index(gold_text), question=f"In case {i}, what completes this: ___?")
        )
    said: list[str] = []
    kept = [r for r in artifact_filter.run_artifacts(None, items, said.append) if "drop" not in r]
    if len(kept) < artifact_filter.MIN_ITEMS:
        return  # too few to measure; the stage does not act on them
    picks = [r["artifacts"]["picks"] for r in kept]
    for name in artifacts.FORM_SOLVERS:
        acc = artifacts.score(kept, picks, name)["accuracy"]
        assert acc <= 0.25 + artifacts.CHANCE_MARGIN, (name, acc)
        if acc < 0.25 - artifacts.CHANCE_MARGIN:
            assert any(name in line for line in said), (name, acc, said)


# -- in the pipeline, with a scripted model on loopback --------------------------------------------

CORPUS = ROOT / "corpus.sqlite"


class FormScript(ConstructScript):
    """The scripted model with every chain "ok", and wrong options of the gold's own form (six words of a sentence of
    the paper asked about), except for two chains: the first gets a copy of the gold with one word added (a lone
    near-identical pair), the second three-word lowercase wrong options (the gold, six words from a capital, is the
    longest and the odd one out: its form gives it away, though no flaw rule drops it)."""

    def __init__(self, corpus):
        super().__init__(corpus)
        self.roles: dict[tuple, str] = {}

    def qa(self, body: dict) -> object:
        ids = re.findall(r'<paper id="([^"]+)">', body["messages"][1]["content"])
        self.outcome.setdefault(tuple(ids), "ok")
        return super().qa(body)

    def _six_words(self, pid: str, salt: str, digits: bool) -> str:
        """Six words that open a sentence of the paper, with a digit exactly when the gold has one (the gold's form)."""
        found = [
            " ".join(s.rstrip(".").split()[:6])
            for sec in self.view.sections(pid)
            for s in sentences(sec.text)
            if len(s.split()) >= 8
        ]
        found = [f for f in found if any(c.isdigit() for c in f) == digits] or found
        return found[int(digest(salt)[:6], 16) % len(found)] if found else "a method trained on other data entirely"

    def distractors(self, body: dict) -> object:
        prompt = body["messages"][1]["content"]
        chain, question = self._chain_of(prompt)
        gold = self.gold[question]
        if chain not in self.roles:  # the first two single-target chains get the flawed roles
            taken = sum(r != "balanced" for r in self.roles.values())
            self.roles[chain] = ["twin", "by_form"][taken] if taken < 2 and len(chain) == 2 else "balanced"
        role = self.roles[chain]
        ids = re.findall(r'<paper id="([^"]+)">', prompt)
        if role == "twin" and not ids:  # no_context: the gold again, one word longer
            return _reply({"answer": f"{gold} again"})
        pid = ids[0] if ids else sorted(self.view.papers)[int(digest(question)[:6], 16) % len(self.view.papers)]
        if role == "by_form":  # of the gold's form, but all as short as that allows: the gold is the longest
            salt = f"{question}:{pid}:{prompt.count('<paper')}"  # each kind of source its own words
            words = " ".join(self._six_words(pid, f"{salt}:{k}", False) for k in range(8)).split()
            n = len(gold.split())  # five words at least: four capitalised words read as a name, another kind
            return _reply({"answer": in_form(words, gold, max(_length_bounds(n)[0], min(5, n)))})
        pid = ids[0] if ids else sorted(self.view.papers)[int(digest(question)[:6], 16) % len(self.view.papers)]
        # As many words as the gold (a multi-target gold is one sentence relating two findings): six at a time.
        digits, words, k = any(c.isdigit() for c in gold), [], 0
        while len(words) < len(gold.split()):
            words += self._six_words(pid, f"{question}:{pid}:{k}", digits and k == 0).split()
            k += 1
        return _reply({"answer": in_form(words, gold)})


def test_with_models_the_stage_drops_a_form_flaw_and_the_ensemble_never_rates_an_item_its_form_answers_gold(tmp_path):
    script = FormScript(CORPUS)
    out = tmp_path / "run"
    with FakeOpenAI(script) as fake:
        s = Settings(
            min_refs=5,
            max_chains_per_seed=1,
            generator=f"gen@{fake.base_url}",
            max_qa=6,
            workers=1,
            filters=(f"f1@{fake.base_url}", f"f2@{fake.base_url}", f"f3@{fake.base_url}"),
        )
        result = run_pipeline(CORPUS, out, s, echo=lambda line: None)
    rows = {r["stage"]: r for r in result["attrition"]["rows"]}
    assert rows["artifacts"]["entered"] == rows["distractors"]["kept"] >= 3
    assert rows["artifacts"]["reasons"] == {"artifact_twin": 1}
    twin_chain = next(c for c, role in script.roles.items() if role == "twin")
    records = [json.loads(line) for line in (out / "work" / "artifacts.jsonl").read_text().splitlines()]
    dropped = [r for r in records if "drop" in r]
    assert [(r["seed"], *r["targets"]) for r in dropped] == [twin_chain[:1] + twin_chain[-len(dropped[0]["targets"]) :]]
    ensemble = [json.loads(line) for line in (out / "work" / "ensemble.jsonl").read_text().splitlines()]
    assert ensemble and all(
        "drop" not in r for r in ensemble
    )  # the scripted filters all find the gold, never from the seed
    by_form_chain = next(c for c, role in script.roles.items() if role == "by_form")
    for r in ensemble:
        form_says_gold = r["artifacts"]["picks"]["form_vote"] == [r["correct_index"]]
        assert r["filter"]["by_form"] == form_says_gold
        assert r["consensus_tier"] == ("silver" if form_says_gold else "gold"), r["id"]
    (flagged,) = [
        r for r in ensemble if (r["seed"], *r["targets"]) == by_form_chain[:1] + by_form_chain[-len(r["targets"]) :]
    ]
    assert flagged["filter"]["by_form"] and flagged["consensus_tier"] == "silver"
    assert any(r["consensus_tier"] == "gold" for r in ensemble)
    # The release's provenance holds the artifact check the attrition table shows, figure for figure.
    provenance = json.loads((out / "release" / "construct" / "provenance.json").read_text())
    assert provenance["artifact_check"] == result["attrition"]["artifact_check"]
    check = provenance["artifact_check"]
    assert check["stage"] == "postfilter" and check["items"] == result["release"]["items"]
    table = (out / "attrition.md").read_text()
    for name, figures in check["solvers"].items():
        lo, hi = figures["ci95"]
        assert f"| {name}: " in table and f"{figures['accuracy']:.1%} [{lo:.1%}, {hi:.1%}]" in table


# -- on the offline pipeline's own output (the generator's balanced options) ------------------------------------------


@pytest.fixture(scope="module")
def questions(construct_run):
    """The offline pipeline's Q/A candidates on the committed corpus (conftest's run, Settings(min_refs=5)), and the corpus view."""
    view = CorpusView(CORPUS)
    yield [r for r in read_jsonl(construct_run / "work" / "qa.jsonl") if "drop" not in r], view
    view.close()


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 10_000))
@pytest.mark.slow
def test_on_a_generated_release_no_solver_beats_chance_by_ten_points(questions, seed):
    """The offline generator's options for the committed corpus's questions, shuffled and drawn under any seed: after
    the artifact stage no solver that sees no evidence (the option classifier included) is above chance + 10 points
    (SPEC 8's limit), and before it none is above that limit beyond its Wilson interval. The committed corpus gives
    about 40 questions, whose interval spans 25 points, and a classifier trained on 32 of them once scored 42.7% there
    (seed 164) before the stage, 34.3% after; a leak like the 97.1% of the first explore release is far outside any interval."""
    cands, view = questions
    s = Settings(min_refs=5, seed=seed)
    made = [
        r for r in asyncio.run(run_distractors(Context(view, s, None, lambda line: None), cands)) if "drop" not in r
    ]
    assert len(made) >= 30, len(made)  # 37 on the committed corpus
    for stage, items in (
        ("distractors", made),
        ("artifacts", [r for r in artifact_filter.run_artifacts(None, made) if "drop" not in r]),
    ):
        summary = artifacts.summarise(items, picks=[artifacts.solve(r) for r in items])
        if stage == "artifacts":
            assert summary["above_limit"] == [], (
                stage,
                {k: summary["solvers"][k]["accuracy"] for k in summary["above_limit"]},
            )
        else:
            beyond = {k: v["ci95"] for k, v in summary["solvers"].items() if v["ci95"][0] > summary["limit"]}
            assert beyond == {}, (stage, beyond)


# -- the retrieval solver: word overlap near the seed, no reasoning -----------------------------------------------------


class GraphView:
    """Papers with one section each and a citation graph: what the retrieval solver reads."""

    def __init__(self, texts: dict[str, str], refs: dict[str, list[str]]):
        self.papers = {pid: Paper(pid) for pid in texts}
        self._texts, self._refs = texts, refs

    def sections(self, pid):
        return (Section("4 Results", self._texts[pid]),) if self._texts.get(pid) else ()

    def references(self, pid):
        return [(c, None) for c in self._refs.get(pid, [])]

    def has_text(self, pid):
        return bool(self._texts.get(pid))


def test_the_retrieval_solver_picks_the_option_whose_sentence_near_the_seed_shares_the_questions_words():
    view = GraphView(
        {
            "seed": "We build on a semantic parser for geography questions.",
            "bridge": "The parser of the target reaches 88.0 on a held-out split.",
            "target": "On the GEO benchmark the neural parser reaches 91.2 accuracy with the copying mechanism.",
            "far": "On the GEO benchmark the neural parser reaches 75.3 accuracy with the copying mechanism.",
        },
        {"seed": ["bridge"], "bridge": ["target"]},  # "far" is in the corpus but not near the seed
    )
    question = "What accuracy does the neural parser with copying reach on the GEO benchmark?"
    options = ["91.2", "88.0", "75.3", "60.1"]
    assert artifacts.retrieval(item(options, question=question, seed="seed"), view) == (0,)
    # Nothing near the seed states any option: an abstention, which earns chance.
    assert artifacts.retrieval(item(["12.5", "13.5", "14.5", "15.5"], question=question, seed="seed"), view) == ()
    # Run with the other solvers on every item, and reported with its Wilson interval against its own limit.
    items = [item(options, correct=c, question=question, seed="seed") for c in (0, 0, 0, 1)]
    summary = artifacts.summarise(items, view=view)
    got = summary["solvers"]["retrieval"]
    assert got["accuracy"] == 0.75 and got["ci95"] == [round(x, 4) for x in wilson(3, 4)]
    assert summary["over_retrieval_limit"] == ["retrieval"] and "retrieval" not in summary["above_limit"]
    assert "retrieval" in artifacts.markdown(summary) and "45%" in artifacts.markdown(summary)
