"""Model-written questions as the paper writes them (Stage 3), held to it on loopback.

A scripted generator answers each chain's Q/A prompt with one kind of reply: a question that quotes the target's
sentence, one that points at a section, a multi-target answer that is two answers joined by ';', multi-target
evidence from one target only, evidence that is not in the paper, and good ones. With one attempt each bad reply is
dropped with its reason; the good ones keep the model's reasoning type and cognitive skill and their section labels.
The prompts are checked against the paper's Appendix F prompts in spirit."""

from __future__ import annotations

import json
import re

from support.fake_openai import completion, system_text
from support.paths import REPO as ROOT

from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.pipeline import run_pipeline
from agenthop.construct.prompts import answer_messages, choice_messages
from agenthop.construct.settings import Settings
from agenthop.construct.textspans import sentences, supported_by
from agenthop.llm.retry import RetryPolicy

CORPUS = ROOT / "corpus.sqlite"
ST_KINDS = ("quote", "section", "not_verbatim", "ok")
MT_KINDS = ("joined", "one_target", "ok")
REASON = {
    "quote": "quotes_source",
    "section": "names_section",
    "not_verbatim": "evidence_not_verbatim",
    "joined": "not_synthesis",
    "one_target": "one_target_evidence",
    "ok": None,
}


def _reply(obj) -> dict:
    return completion({"role": "assistant", "content": json.dumps(obj)})


class Generator:
    def __init__(self, view: CorpusView):
        self.view = view
        self.kind: dict[tuple, str] = {}
        self.prompts: dict[str, list[str]] = {"ST": [], "MT": []}

    def finding(self, pid: str) -> tuple[str, str, str]:
        """(section header, a body sentence, a 7-word answer it states) that the abstract does not state."""
        abstract = self.view.papers[pid].abstract
        for sec in self.view.sections(pid):
            for sentence in sentences(sec.text):
                words = sentence.rstrip(".").split()
                answer = " ".join(words[-7:])
                if len(words) >= 14 and not supported_by(answer, abstract):
                    return sec.header, sentence, answer
        raise AssertionError(f"{pid} has no sentence the scripted generator can use")

    def __call__(self, body: dict, fake) -> object:
        if "You help build a benchmark" in system_text(body):
            return _reply({"score": 5, "why": "scripted"})
        prompt = body["messages"][1]["content"]
        ids = re.findall(r'<paper id="([^"]+)">', prompt)
        seed, targets = ids[0], ids[1:]
        kinds = MT_KINDS if len(targets) > 1 else ST_KINDS
        type_ = "MT" if len(targets) > 1 else "ST"
        self.prompts[type_].append(prompt)
        same = [c for c in self.kind if len(c) == len(ids)]
        kind = self.kind.setdefault(tuple(ids), kinds[len(same) % len(kinds)])
        found = [self.finding(t) for t in targets]
        question = "Which outcome did the work the seed builds on report for the setting the seed reuses?"
        evidence = [s for _, s, _ in found]
        answer = found[0][2] if len(targets) == 1 else f"{found[0][2]}, while the other found {found[1][2]}"
        if kind == "quote":
            question = f"Did the cited work find that {' '.join(found[0][1].split()[:9])}?"
        elif kind == "section":
            question = f"What does Section 4 of the cited work report? ({seed[:6]})"
        elif kind == "not_verbatim":
            evidence = [found[0][1].replace(" ", "  ").replace(".", "!")[:-1] + " indeed."]
        elif kind == "joined":
            answer = f"{found[0][2]}; {found[1][2]}"
        elif kind == "one_target":
            evidence = evidence[:1]
            answer = found[0][2]
        return _reply(
            {
                "question": question,
                "answer": answer,
                "evidence": evidence,
                "reasoning_type": "RESULT",
                "cognitive_skill": "contrast" if type_ == "MT" else "retrieve",
                "labels": [
                    {"paper_id": t, "section": header, "relevance": "direct"}
                    for t, (header, _, _) in zip(targets, found)
                ],
            }
        )


def test_each_rule_of_a_research_question_drops_its_reply_and_good_ones_keep_the_models_labels(tmp_path):
    from support.fake_openai import FakeOpenAI

    view = CorpusView(CORPUS)
    script = Generator(view)
    with FakeOpenAI(script) as fake:
        s = Settings(
            min_refs=5,
            max_chains_per_seed=2,
            judge=f"judge@{fake.base_url}",
            generator=f"gen@{fake.base_url}",
            max_qa=40,
            attempts=1,
            workers=1,
        )
        run_pipeline(CORPUS, tmp_path, s, until="qa", policy=RetryPolicy(backoff=0.01, jitter=0), echo=lambda _: None)
    records = [json.loads(line) for line in (tmp_path / "work" / "qa.jsonl").read_text().splitlines()]
    asked = [r for r in records if r.get("drop", {}).get("reason") != "not_sampled"]
    by_kind: dict[str, list[dict]] = {}
    for r in asked:
        by_kind.setdefault(script.kind[(r["seed"], *r["targets"])], []).append(r)
    assert set(by_kind) == set(ST_KINDS) | set(MT_KINDS), by_kind.keys()
    for kind, recs in by_kind.items():
        reasons = {r.get("drop", {}).get("reason") for r in recs}
        assert reasons == {REASON[kind]}, (kind, [r.get("drop") for r in recs])
    for r in by_kind["ok"]:
        assert r["reasoning_type"] == "RESULT" and r["cognitive_skill"] in ("retrieve", "contrast")
        assert {lab["paper_id"] for lab in r["labels"] if lab["relevance"] == "direct"} == set(r["targets"])
        assert all(any(e in sec.text for t in r["targets"] for sec in view.sections(t)) for e in r["evidence"])

    # The prompts, against Appendix F in spirit: the seed's and the targets' text and the citing sentence are given;
    # the question is open-ended, in the writer's words, names no title, method or section and quotes nothing; the
    # multi-target prompt asks for a synthesis of both papers; the answer's evidence is copied word for word.
    st, mt = script.prompts["ST"][0], script.prompts["MT"][0]
    for prompt in (st, mt):
        assert prompt.count("<paper id=") >= 2 and "## " in prompt and "citing sentence" in prompt
        for rule in (
            "open-ended question",
            "without quoting",
            "without naming the target's title, the names it gives its methods",
            "section, table or figure",
            "not about the headline its abstract states",
            "word for word",
            "GROUND",
            "METHOD",
            "MOTIVE",
            "RESULT",
            "cognitive skill",
            "(direct)",
            "(supporting)",
        ):
            assert rule in prompt, rule
    assert "BOTH target papers" in mt and "never two separate answers" in mt and "BOTH" not in st

    # The wrong options' prompts answer the question from the wrong source, and never say what they are for.
    seed = view.papers[asked[0]["seed"]]
    for papers in ([seed], []):
        text = json.dumps(answer_messages(view, "What did they find?", papers, "a phrase of about 7 words"))
        assert not re.search(r"distractor|wrong|incorrect|trap", text, re.I)
    assert "answer" in json.dumps(choice_messages(view, "Q?", ["a", "b", "c", "d"], [seed]))
    view.close()


def test_an_empty_q_a_stage_says_what_each_research_question_rule_needs():
    from agenthop.construct.hints import why_empty

    reasons = {"quotes_source": 2, "names_section": 1, "answer_in_abstract": 1, "not_synthesis": 1}
    attrition = {"rows": [{"stage": "qa", "name": "Q/A pairs", "entered": 5, "kept": 0, "reasons": reasons}]}
    lines = why_empty(attrition, Settings(attempts=4))
    assert lines[0] == "Q/A pairs kept none of 5. What removed them, and what relaxes each rule:"
    said = {line.split(" (")[0].strip(): line for line in lines[1:]}
    assert set(said) == set(reasons)
    assert "--attempts (4)" in said["quotes_source"] and "--attempts (4)" in said["not_synthesis"]
    assert "no option relaxes this" in said["answer_in_abstract"]
