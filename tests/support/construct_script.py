"""A scripted model for agenthop-construct's model path: fixed, valid answers, and for chosen chains the failures
that exercise every drop reason. The chains reaching Q/A get the outcomes of OUTCOMES in the order they first
arrive (one worker: input order), so a test knows how many of each drop reason the attrition table must show.

Stages are told apart by their system prompts; a chain by the paper IDs of its Q/A prompt; later stages by the
question the script wrote for that chain. Every answer is computed from the corpus, so it is valid unless scripted not to be.
"""

from __future__ import annotations

import json
import re

from agenthop.construct.artifacts import finding_numbers
from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.prompts import form_matches
from agenthop.construct.stagefiles import canonical, digest
from agenthop.construct.textspans import closeness, sentences
from support.fake_openai import HTTPError, completion, system_text

# outcome -> the drop reason it must cause (None: kept)
OUTCOMES = {
    "ok": None,
    "malformed": "malformed_output",
    "bad_label": "label_unresolved",
    "not_in_evidence": "answer_not_in_evidence",
    "not_verbatim": "evidence_not_verbatim",
    "names_target": "names_target",
    "close_distractor": "distractor_too_close",
    "shortcut": "shortcut",
    "no_consensus": "no_consensus",
    "retry_then_ok": None,  # one malformed Q/A reply, then a good one; an HTTP 500 on its first distractor call
    "silver": None,  # one of three filters recovers the gold from the seed alone: kept, tier silver
    "ok_again": None,
}
STAGE_OF = (
    ("You write the wrong options", "informed"),
    ("You edit the options", "restate"),
    ("You help build a benchmark", "judge"),
    ("You write questions", "qa"),
    ("in one short phrase", "distractors"),
    ("multiple-choice", "ensemble"),
)
LOW_JUDGE = ("3", "d")  # a hop to a paper whose ID starts with these is judged 2 (dropped); every other hop 5


def judged_low(cited: str) -> bool:
    return cited.startswith(LOW_JUDGE)


def _reply(obj) -> dict:
    return completion({"role": "assistant", "content": json.dumps(obj)}, usage=(1000, 50, 0))


def _shifted(number: str) -> str:
    """Another value of the same form: its last digit moved (never to 0, so its order of magnitude stays)."""
    head, last, tail = number[:-1], number[-1], ""
    if last == "%":
        head, last, tail = number[:-2], number[-2], "%"
    return f"{head}{(int(last) + 3) % 9 + 1}{tail}"


def in_form(words: list[str], gold: str, length: int | None = None) -> str:
    """``words`` made into an answer of the gold's form, as a model told the form would write it: as many words (or
    ``length``), the gold's numbers moved, its capital and its closing stop, no digits or brackets of the words' own."""
    numbers = [_shifted(n) for n in finding_numbers(gold)]
    plain = [w.strip(".,;") for w in words if not re.search(r"[\d()\[\]%;]", w) and w.strip(".,;")]
    body = plain[: max((length or len(gold.split())) - len(numbers), 1)] + numbers
    text = " ".join(body)
    text = (text[:1].upper() if gold[:1].isupper() else text[:1].lower()) + text[1:]
    return text + "." if gold.rstrip()[-1:] in ".!?:" else text


def restated(option: str) -> str:
    """How the script's writer restates an option: a word in front, its claims and figures kept."""
    return f"Reportedly {option[:1].lower()}{option[1:]}"


def unrestated(option: str) -> str:
    text = option.removeprefix("Reportedly ")
    return text[:1].upper() + text[1:] if text != option else option


class ConstructScript:
    def __init__(self, corpus):
        self.view = CorpusView(corpus)
        self.outcome: dict[tuple, str] = {}  # chain key -> outcome
        self.questions: dict[str, tuple] = {}  # question -> chain key
        self.gold: dict[str, str] = {}  # question -> gold answer
        self.failed_once: set = set()
        self.answered: set[str] = set()  # hashes of request bodies answered with a usable 200
        self.kill = None  # callable(stage, body) -> bool: kill the client now (and never answer)
        self.stage_counts: dict[str, int] = {}

    def key(self, body: dict) -> str:
        return digest(canonical({k: body[k] for k in ("model", "messages", "temperature")}))

    def __call__(self, body: dict, fake) -> object:
        stage = next(s for cue, s in STAGE_OF if cue in system_text(body))
        self.stage_counts[stage] = self.stage_counts.get(stage, 0) + 1
        if self.kill is not None and self.kill(stage, self.stage_counts[stage]):
            return HTTPError(503)  # the client is dead by now; nobody reads this
        reply = getattr(self, stage)(body)
        if isinstance(reply, dict):
            self.answered.add(self.key(body))
        return reply

    # -- stages -----------------------------------------------------------------------

    def judge(self, body: dict) -> object:
        ids = re.findall(r'<paper id="([^"]+)">', body["messages"][-1]["content"])
        return _reply({"score": 2 if judged_low(ids[1]) else 5, "why": "scripted"})

    def qa(self, body: dict) -> object:
        prompt = body["messages"][1]["content"]
        ids = re.findall(r'<paper id="([^"]+)">', prompt)
        seed, targets = ids[0], ids[1:]
        chain = (seed, *targets)
        outcome = self.outcome.setdefault(chain, list(OUTCOMES)[len(self.outcome) % len(OUTCOMES)])
        retry = len(body["messages"]) > 2
        if outcome == "malformed" or (outcome == "retry_then_ok" and not retry):
            return completion({"role": "assistant", "content": '{"question": "unfinished'})
        evidence, answers, labels = [], [], []
        for t in targets:
            sec = self.view.sections(t)[0]
            sentence = next(s for s in sentences(sec.text) if len(s.split()) >= 8)
            evidence.append(sentence)
            answers.append(" ".join(sentence.rstrip(".").split()[:6]))
            labels.append({"paper_id": t, "section": sec.header, "relevance": "direct"})
        question = f"Following the seed paper's citations (case {digest(canonical(chain))[:8]}), how does the cited work open its text?"
        # A multi-target answer is one sentence relating both targets' findings, never two answers joined by ';'.
        answer = answers[0] if len(answers) == 1 else f"{answers[0]}, whereas {answers[1]}"
        if outcome == "bad_label":
            labels[0]["section"] = "A Header No Paper Has"
        elif outcome == "not_in_evidence":
            answer = "a gain of 99.5 points on an unrelated benchmark"
        elif outcome == "not_verbatim":
            evidence = ["This sentence appears in no paper of the corpus at all."]
        elif outcome == "names_target":
            question = f"In {self.view.papers[targets[0]].title}, {question}"
        self.questions[question] = chain
        self.gold[question] = answer
        return _reply(
            {
                "question": question,
                "answer": answer,
                "evidence": evidence,
                "reasoning_type": "GROUND",
                "cognitive_skill": "retrieve" if len(targets) == 1 else "contrast",
                "labels": labels,
            }
        )

    def _chain_of(self, prompt: str) -> tuple:
        question = re.search(r"^Question: (.+)$", prompt, re.M).group(1)
        return self.questions[question], question

    def distractors(self, body: dict) -> object:
        prompt = body["messages"][1]["content"]
        chain, question = self._chain_of(prompt)
        outcome = self.outcome[chain]
        if outcome == "close_distractor":
            return _reply({"answer": self.gold[question]})
        if outcome == "retry_then_ok" and chain not in self.failed_once:
            self.failed_once.add(chain)
            return HTTPError(500)
        ids = re.findall(r'<paper id="([^"]+)">', prompt)
        # An answer of the gold's form: words of sentences of the paper given (with no paper, ones the model "knows":
        # the seed's), as many as the gold has, so no option stands out by form and the artifact check keeps it.
        source = ids[0] if ids else chain[0]
        pool = [s for sec in self.view.sections(source) for s in sentences(sec.text) if len(s.split()) >= 12]
        start = 0 if ids else 1
        words = [w for i in range(4) for w in pool[(start + 2 * i) % len(pool)].rstrip(".").split()[2:8]]
        return _reply({"answer": in_form(words, self.gold[question])})

    def informed(self, body: dict) -> object:
        """Every wrong option at once, written by a writer shown the gold: each kind from another of the seed's
        sentences, in the gold's form."""
        prompt = body["messages"][1]["content"]
        chain, question = self._chain_of(prompt)
        outcome, gold = self.outcome[chain], self.gold[question]
        if outcome == "retry_then_ok" and chain not in self.failed_once:
            self.failed_once.add(chain)
            return HTTPError(500)
        kinds = re.findall(r'^- "(\w+)": ', prompt, re.M)
        if '"source"' in prompt:  # grounded: each option the opening words of a sentence its paper states
            return self._grounded(prompt, kinds, gold)
        pool = [s for sec in self.view.sections(chain[0]) for s in sentences(sec.text) if len(s.split()) >= 12]
        # The first one word longer than the gold, as the writer is told (the gold is never the longest option).
        options = {
            kind: in_form(
                [w for i in range(4) for w in pool[(k + 3 * i) % len(pool)].rstrip(".").split()[2:8]],
                gold,
                len(gold.split()) + (k == 0),
            )
            for k, kind in enumerate(kinds)
        }
        if outcome == "close_distractor":
            options[kinds[0]] = gold
        return _reply(options)

    def _grounded(self, prompt: str, kinds: list[str], gold: str) -> object:
        ids = re.findall(r'<paper id="([^"]+)">', prompt)
        evidence = re.search(r'^The target paper\'s evidence for it: "(.*)"$', prompt, re.M).group(1)
        papers = {"seed_only": ids[:1], "wrong_paper": ids[1:2], "same_paper": ids[2:]}
        reply, taken = {}, [gold]
        for k, kind in enumerate(kinds):
            n = len(gold.split()) + (k == 0)  # the first one word longer than the gold, as the writer is told
            found = (
                (" ".join(sentence.split()[:n]), sentence)
                for pid in papers[kind]
                for sec in self.view.sections(pid)
                for sentence in sentences(sec.text)
                if len(sentence.split()) >= n and sentence not in evidence
            )
            answer, source = next(
                ((a, src) for a, src in found if form_matches(a, gold) and all(closeness(a, t) < 0.5 for t in taken)),
                ("no sentence fits", "none"),
            )
            reply[kind] = {"answer": answer, "source": source}
            taken.append(answer)
        return _reply(reply)

    def restate(self, body: dict) -> object:
        """Every option in one voice: each with a word in front, its claims and figures kept."""
        options = dict(re.findall(r"^\(([ABCD])\) (.+)$", body["messages"][1]["content"], re.M))
        return _reply({letter: restated(text) for letter, text in options.items()})

    def ensemble(self, body: dict) -> object:
        prompt = body["messages"][1]["content"]
        options = dict(re.findall(r"^\(([ABCD])\) (.+)$", prompt, re.M))
        if "the question is not shown" in prompt:  # the blind check: only the "silver" item gives itself away
            question = next(q for q, g in self.gold.items() if any(g in (t, unrestated(t)) for t in options.values()))
            return self._blind(self.outcome[self.questions[question]], options, self.gold[question])
        chain, question = self._chain_of(prompt)
        outcome = self.outcome[chain]
        gold = next(letter for letter, text in options.items() if self.gold[question] in (text, unrestated(text)))
        wrong = next(letter for letter in "ABCD" if letter != gold)
        seed_only = prompt.count("<paper id=") == 1
        if seed_only:
            recovers = outcome == "shortcut" or (outcome == "silver" and body["model"] == "f1")
            return _reply({"answer": gold if recovers else wrong})
        return _reply({"answer": wrong if outcome == "no_consensus" else gold})

    @staticmethod
    def _blind(outcome: str, options: dict[str, str], gold_text: str) -> object:
        gold = next(letter for letter, text in options.items() if gold_text in (text, unrestated(text)))
        return _reply({"answer": gold if outcome == "silver" else next(x for x in "ABCD" if x != gold)})
