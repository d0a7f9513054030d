"""The construction pipeline's rules, one at a time: the six sanity codes, the post-filter's label rule and repair list,
the ensemble's tiers, naming the target, answer spans, reply parsing, and verdict validation."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from support.paths import REPO

from agenthop.construct.chains import marks_other_work, pairs
from agenthop.construct.corpus_view import Paper, Section
from agenthop.construct.ensemble import tier
from agenthop.construct.postfilter import run_postfilter
from agenthop.construct.prompts import BadReply, parse_json
from agenthop.construct.sanity import problem
from agenthop.construct.textspans import closeness, names_target, numeric_span, perturb_numbers, supported_by
from agenthop.construct.verdicts import VerdictError, VerdictStore


def _paper(pid: str, title: str = "A paper") -> Paper:
    return Paper(pid, pid, title, "", 2024, None, (), "{}", True)


@dataclass
class View:
    """The part of CorpusView the rules read."""

    papers: dict
    refs: dict
    texts: dict

    def references(self, pid):
        return [(c, "ctx") for c in self.refs.get(pid, [])]

    def sections(self, pid):
        return tuple(Section(h, t) for h, t in self.texts.get(pid, []))


def _view(**changes) -> View:
    papers = {p: _paper(p) for p in ("s", "b", "t", "u")}
    refs = {"s": ["b", "t"], "b": ["t", "u"]}
    texts = {
        p: [("Introduction", "We study things."), ("Results", "Accuracy reaches 91.2% on the test set.")]
        for p in papers
    }
    view = View(papers, refs, texts)
    for key, value in changes.items():
        getattr(view, key).update(value)
    return view


def chain(bridge=None, targets=("t",)):
    return {
        "id": "c-1",
        "seed": "s",
        "bridge": bridge,
        "targets": list(targets),
        "kind": "MT" if len(targets) > 1 else "ST",
        "labels": [{"paper_id": t, "section": "Results", "relevance": "direct"} for t in targets],
    }


def test_each_sanity_code_and_a_clean_chain():
    assert problem(_view(), chain()) is None
    assert problem(_view(), chain("b", ["u"])) is None
    assert problem(_view(refs={"s": []}), chain()) == "SEED_NO_REFS"
    assert problem(_view(), chain("u", ["t"])) == "BRIDGE_MISSING"
    assert problem(_view(refs={"s": ["b"]}), chain()) == "NO_BRIDGE_PATH"
    assert (
        problem(_view(refs={"s": [f"x{i}" for i in range(30)] + ["t"]}), chain()) == "NO_BRIDGE_PATH"
    )  # beyond the first 30
    assert problem(_view(papers={"t": _paper("t", " ")}), chain()) == "TERMINAL_GHOST"
    assert problem(_view(texts={"t": []}), chain()) == "TERMINAL_NO_CONTENT"
    assert (
        problem(_view(papers={"u": _paper("u", "")}, refs={"s": ["t", "u"]}), chain(targets=("t", "u")))
        == "TARGET_GHOST"
    )
    assert problem(_view(texts={"u": []}, refs={"s": ["t", "u"]}), chain(targets=("t", "u"))) == "TARGET_NO_CONTENT"


def test_post_filter_lists_unresolved_labels_for_repair_and_drops_collapsed_sections():
    ok, bad, lacking = chain(), chain(), chain()
    bad["id"], lacking["id"] = "c-2", "c-3"
    bad["labels"] = [{"paper_id": "t", "section": "Experiments", "relevance": "direct"}]
    lacking["labels"] = [{"paper_id": "t", "section": "Introduction", "relevance": "supporting"}]
    subsection = chain()
    subsection["id"] = "c-4"
    subsection["labels"] = [
        {"paper_id": "t", "section": "91.2% on the test", "relevance": "direct"}
    ]  # verbatim in a section: credited
    out, repairs = run_postfilter(_view(), [ok, bad, lacking, subsection], 70_015)
    assert [r.get("drop", {}).get("reason") for r in out] == [None, "label_unresolved", "label_unresolved", None]
    assert out[1]["drop"]["detail"] == "'Experiments' names no section of t"
    assert [r["candidate"] for r in repairs] == ["c-2", "c-3"]
    assert repairs[0]["unresolved"][0]["headers"] == ["Introduction", "Results"] and repairs[1][
        "targets_without_direct_label"
    ] == ["t"]
    out, _ = run_postfilter(_view(texts={"b": [("Body", "x" * 101)]}), [chain("b", ["u"])], 100)
    assert out[0]["drop"] == {"reason": "section_too_long", "detail": "b: a section of 101 characters > 100"}


@pytest.mark.parametrize(
    "shortcut, consensus, n, expected",
    [
        (0, 3, 3, (None, "gold")),
        (1, 3, 3, (None, "silver")),
        (0, 2, 3, (None, "bronze")),
        (1, 2, 3, (None, "bronze")),
        (2, 3, 3, ("shortcut", None)),
        (0, 1, 3, ("no_consensus", None)),
        (0, 1, 1, (None, "gold")),
        (1, 1, 1, ("shortcut", None)),
        (0, 0, 1, ("no_consensus", None)),
    ],
)
def test_tiers_follow_the_published_rule(shortcut, consensus, n, expected):
    assert tier(shortcut, consensus, n) == expected


def test_a_question_naming_the_target_is_caught():
    title = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
    assert names_target("How was SPECTER trained?", title) == "the method name 'SPECTER'"
    assert names_target(
        "What does document-level representation learning using citation-informed transformers report?", title
    )
    assert names_target("How many query papers did the cited work train on?", title) is None
    assert names_target("What did GRanoto reach?", "The GRanoto Model for Retrieval") == "the method name 'GRanoto'"


def test_answer_spans_and_wrong_values():
    assert (
        numeric_span("The labels are of high quality, with an inter-annotator agreement of 0.66 among four annotators.")
        == "an inter-annotator agreement of 0.66 among four annotators"
    )
    assert numeric_span("Results are in Table 4 and Section 3.") is None  # table and section numbers are not findings
    assert numeric_span("The weights are normalised to sum to one, as in Equation (2).") is None
    assert numeric_span("This was shown in 2019 by earlier work [12].") is None  # years and citation marks neither
    wrong = perturb_numbers("an agreement of 0.66 among 4 annotators", 1)
    assert (
        wrong != "an agreement of 0.66 among 4 annotators"
        and "0.66" not in wrong
        and closeness(wrong, "an agreement of 0.66 among 4 annotators") < 0.9
    )
    assert supported_by("0.66 among four annotators", "an agreement of 0.66 among four annotators")
    assert not supported_by("0.67 among four annotators", "an agreement of 0.66 among four annotators")
    # A number joined to a word or a range is read alike in the answer and the evidence.
    assert supported_by("lookup embeddings were 1-2% more accurate", "lookup embeddings are 1-2% more accurate")
    assert supported_by("BLEU-4 rose to 30.1", "our BLEU-4 rose to 30.1 on the test set")
    assert not supported_by("BLEU-4 rose to 31.1", "our BLEU-4 rose to 30.1 on the test set")


def test_replies_that_cannot_be_used_say_why():
    assert parse_json('Here you go:\n```json\n{"score": 4}\n```') == {"score": 4}
    for reply, message in (
        ("no json here", "the reply holds no JSON object"),
        ('{"question": "cut', "the reply's JSON object is cut off (no closing brace)"),
        (
            '{"a": 1,}',
            "the reply's JSON does not parse (Expecting property name enclosed in double quotes at column 9)",
        ),
    ):
        with pytest.raises(BadReply) as exc:
            parse_json(reply)
        assert str(exc.value) == message and exc.value.reason == "malformed_output"


def test_verdicts_are_validated_attributed_and_combined(tmp_path):
    store = VerdictStore(tmp_path / "v.sqlite")
    for kwargs, message in (
        ({"auditor": " "}, "auditor: give your name, so that the verdict is attributed"),
        ({"verdict": "maybe"}, "verdict: one of pass, flag, remove, found 'maybe'"),
        ({"verdict": "flag"}, "note: a Flag needs a note saying what the lead should look at"),
        (
            {"axes": {"pretty": True}},
            "axes: an object of true/false for well_formed, gold_supported, labels_accurate, found {'pretty': True}",
        ),
    ):
        args = {"candidate": "c-1", "auditor": "alice", "verdict": "pass", "axes": {}, **kwargs}
        with pytest.raises(VerdictError) as exc:
            store.add(**args)
        assert str(exc.value) == message
    store.add("c-1", "alice", "pass", {"well_formed": True})
    store.add("c-1", "bob", "flag", {}, "check option B")
    store.add("c-2", "alice", "remove", {})
    store.add(
        "c-2", "alice", "pass", {}, labels=[{"paper_id": "t", "section": "Results", "relevance": "direct"}]
    )  # alice changed her mind
    effective = store.effective()
    assert effective["c-1"]["verdict"] == "flag" and sorted(effective["c-1"]["by"]) == ["alice", "bob"]
    assert effective["c-2"]["verdict"] == "pass" and effective["c-2"]["labels"][0]["section"] == "Results"
    store.close()


def test_the_review_command_says_what_to_run_first(tmp_path):
    from click.testing import CliRunner

    from agenthop.construct.cli import main

    corpus = REPO / "corpus.sqlite"
    result = CliRunner().invoke(main, ["review", "--corpus", str(corpus), "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert f"run 'agenthop-construct sanity --corpus {corpus} --out {tmp_path}' (or 'run') first" in result.output


def test_a_field_term_in_many_titles_is_not_the_target_name():
    title = "Transfer Learning for Low-Resource Neural Machine Translation"
    question = "Which gain does transfer learning give on Uzbek?"
    assert names_target(question, title) == "the method name 'Transfer Learning'"
    assert names_target(question, title, titles_naming=lambda name: 68) is None  # the corpus's titles hold it 68 times
    assert names_target(question, title, titles_naming=lambda name: 1) == "the method name 'Transfer Learning'"


@pytest.mark.parametrize(
    "context, first_author, other",
    [
        # The sixth and eighth hand reads: the converter linked a sentence about Mallinson et al. to Wieting, Mallinson and Gimpel.
        (
            "For example, Mallinson et al. (2017) leverage bilingual data to produce paraphrases by pivoting.",
            "John Wieting",
            True,
        ),
        (
            "For example, Mallinson et al. (2017) leverage bilingual data to produce paraphrases by pivoting.",
            "Jonathan Mallinson",
            False,
        ),
        (
            "Inspired by the copy mechanism ( Gu et al., 2016;See et al., 2017), we design an attention vector.",
            "Jiatao Gu",
            False,
        ),
        (
            "Recent proposals by Rush et al. (2015) and Bingel and Søgaard (2016) address this issue.",
            "Joachim Bingel",
            False,
        ),
        ("A sentence citing by number only [12] says nothing of its authors.", "Anyone Else", False),
    ],
)
def test_a_hop_whose_marks_name_only_other_first_authors_is_caught(context, first_author, other):
    view = View({"t": Paper("t", "t", "A paper", "", 2017, None, (first_author, "Kevin Gimpel"), "{}", True)}, {}, {})
    assert (marks_other_work(view, "t", context) is not None) == other


class _Refs:
    """A corpus with reference lists and one citing paper's sentences, for the pair rules."""

    def __init__(self, refs: dict[str, list[str]], sentences: dict[str, str]):
        self.refs, self.sentences = refs, sentences

    def references(self, pid):
        return [(c, None) for c in self.refs.get(pid, [])]

    def context(self, citing, cited):
        return self.sentences.get(cited)


def test_related_pairs_are_papers_that_bear_on_each_other_not_neighbours_in_the_list():
    shared = [f"r{i}" for i in range(10)]
    view = _Refs(
        {
            "a": ["x1", "x2", "x3"],  # a and b: neighbours in the list, nothing in common
            "b": ["y1", "y2", "y3"],
            "c": shared + ["c1"],  # c and e share most of their references, though far apart in the list
            "d": ["a", "z1"],  # d cites a
            "e": shared + ["e1"],
        },
        {"b": "Both B and F do this.", "f": "Both B and F do this."},  # b and f: cited in one sentence
    )
    cited = ["a", "b", "c", "d", "e", "f"]
    assert ("a", "b") in pairs(view, "seed", cited)  # the default: neighbours (within two places) pair up
    related = set(pairs(view, "seed", cited, related=0.5))
    assert related == {("a", "d"), ("b", "f"), ("c", "e")}
