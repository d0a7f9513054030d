"""The build's data rules, each on the shapes of garbling it undoes (the real corpus's cases are checked in
tests/server/explore/test_explore_corpus.py): names, printed references, arXiv IDs, the Anthology's metadata, records of
one work, in-text citations, words split at line ends, headers and table text, citation intent."""

from __future__ import annotations

import json
import sqlite3

from agenthop.corpus.convert import anthology, works
from agenthop.corpus.convert.markers import AuthorYearIndex, marker_names
from agenthop.corpus.convert.model import Reference
from agenthop.corpus.convert.names import clean_authors
from agenthop.corpus.convert.outline import FOOTNOTES, RESIDUE, Outline, is_junk_header
from agenthop.corpus.convert.refparse import repair
from agenthop.corpus.convert.rejoin import Vocabulary
from agenthop.corpus.convert.text import arxiv_of
from agenthop.server.explore.intent import intent_of


def test_author_names_lose_the_converters_garbling():
    assert clean_authors(["Wolfgang Macherey Google", "A I", "†"]) == ["Wolfgang Macherey"]
    assert clean_authors(["Hinrich Schütze", "Sch¨ Schütze"]) == ["Hinrich Schütze"]
    assert clean_authors(["Ivan Vuli´cvuli´c", "Benoˆıt Benoˆıt Crabbé", "Daniel Preot¸iucpreot¸iuc-Pietro"]) == [
        "Ivan Vulić",
        "Benoît Crabbé",
        "Daniel Preoţiuc-Pietro",
    ]
    assert clean_authors(["Jianpeng Lapata2016", "[ Sutskever", "Lemao 1⇤"]) == [
        "Jianpeng Lapata",
        "Sutskever",
        "Lemao",
    ]
    assert clean_authors(["Hal Daumé III", "Brendan O'Connor", "Eric P. Xing"]) == [
        "Hal Daumé III",
        "Brendan O'Connor",
        "Eric P. Xing",
    ]


def test_a_printed_reference_in_the_title_is_split_into_its_fields():
    ref = repair(
        Reference(
            key="",
            title="Oriol Vinyals, Meire Fortunato, and Navdeep Jaitly. 2015. Pointer networks. In Advances in Neural "
            "Information Processing Systems",
            authors=["Vinyals"],
        ),
        2017,
    )
    assert (ref.title, ref.year, ref.venue) == (
        "Pointer networks",
        2015,
        "Advances in Neural Information Processing Systems",
    )
    assert ref.authors == ["Oriol Vinyals", "Meire Fortunato", "Navdeep Jaitly"]
    names = repair(
        Reference(key="", title="Dmitriy Serdyuk, Philemon Brakel, and Yoshua Bengio", authors=["D B"]), 2017
    )
    assert names.title == "" and "Yoshua Bengio" in names.authors  # a list of names is no title
    cut = repair(Reference(key="", title="Antoine Bordes, and Yves Grandvalet. 2015b. Combin", authors=[]), 2017)
    assert cut.title == ""  # a title cut off after the printed head is none either


def test_years_that_cannot_be_right_are_dropped_and_ids_are_found_inside_glued_text():
    assert (
        repair(Reference(key="", title="A large annotated corpus for learning inference", year=1721), 2016).year is None
    )
    assert repair(Reference(key="", title="A paper from the future of the citing one", year=2019), 2016).year is None
    assert repair(Reference(key="", title="A paper of the year after, a preprint", year=2017), 2016).year == 2017
    assert arxiv_of("arXivpreprintarXiv:1701.03980") == "1701.03980"
    assert arxiv_of("arXiv:1706.03762v5") == "1706.03762" and arxiv_of("hep-th/9901001") == "hep-th/9901001"
    assert arxiv_of("preprint") is None


def test_an_acl_id_gives_the_year_and_the_proceedings():
    assert anthology.acl_id_of({"doi": "10.18653/v1/d17-1215"}) == "D17-1215"
    assert anthology.acl_id_of({"doi": "10.1162/tacl_a_00001"}) is None
    found = anthology.metadata("D17-1215")
    assert found["year"] == 2017 and found["short_venue"] == "EMNLP"
    assert found["venue"] == "Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing"
    assert anthology.metadata("P16-4001")["venue"] == "Proceedings of ACL-2016 System Demonstrations"
    assert anthology.metadata("N18-1001")["venue"] is None  # a volume not listed keeps the file's venue


def _store(papers: list[tuple], mentions: list[tuple] = (), edges: list[tuple] = ()) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        "CREATE TABLE papers (pid TEXT PRIMARY KEY, title TEXT, abstract TEXT, authors TEXT, year INTEGER, venue TEXT, "
        "ids TEXT, in_set INTEGER, has_text INTEGER, pages TEXT);"
        "CREATE TABLE keys (key TEXT PRIMARY KEY, pid TEXT);"
        "CREATE TABLE raw_edges (citing TEXT, pos INTEGER, cited TEXT, context TEXT);"
        "CREATE TABLE mentions (cited TEXT, title TEXT, year INTEGER, authors TEXT, venue TEXT, pages TEXT);"
    )
    for pid, title, year, authors, ids, in_set in papers:
        conn.execute(
            "INSERT INTO papers VALUES (?, ?, NULL, ?, ?, NULL, ?, ?, ?, NULL)",
            (pid, title, json.dumps(authors), year, json.dumps(ids), in_set, in_set),
        )
    conn.executemany("INSERT INTO mentions VALUES (?, ?, ?, ?, ?, ?)", mentions)
    conn.executemany("INSERT INTO raw_edges VALUES (?, ?, ?, ?)", edges)
    return conn


def test_records_of_one_work_merge_and_records_whose_fields_conflict_do_not():
    see = ["Abigail See", "Peter J Liu", "Christopher D Manning"]
    conn = _store(
        [
            ("doi:p17-1099", "Get To The Point: Summarization with Pointer-Generator Networks", 2017, see, {}, 1),
            ("ref:a", "Get to the point: Summarization with pointergenerator networks", 2017, see, {}, 0),
            ("ref:typo", "Get to the piont: Summarization with pointer-generator networks", 2017, ["A See"], {}, 0),
            ("ref:late", "Get to the point: Summarization with pointer-generator networks", 2003, see, {}, 0),
            (
                "ref:other",
                "Get to the point: Summarization with pointer-generator networks",
                2017,
                ["Xavier Young"],
                {},
                0,
            ),
            (
                "arxiv:1",
                "SemEval-2016 Task 4: Sentiment analysis in Twitter",
                2016,
                ["Preslav Nakov"],
                {"arxiv": "1"},
                0,
            ),
            (
                "arxiv:2",
                "SemEval-2017 Task 4: Sentiment analysis in Twitter",
                2017,
                ["Preslav Nakov"],
                {"arxiv": "2"},
                0,
            ),
            ("ref:cut", "Get to the point: Summarization with", None, [], {}, 0),
        ],
        # The paper is cited far more than the records kept apart, so the cut-short title is taken for it.
        edges=[(f"p{i}", 0, "doi:p17-1099", None) for i in range(5)],
    )
    mapping, counts = works.merge(conn)
    assert mapping == {"ref:a": "doi:p17-1099", "ref:typo": "doi:p17-1099", "ref:cut": "doi:p17-1099"}
    assert counts["groups_merged"] == 1 and counts["records_merged"] == 3
    assert counts["records_refused"] >= 3  # the 2003 record, the one with no author in common, and the paper kept
    assert "arxiv:2" not in mapping and "arxiv:1" not in mapping  # different numbers in the titles


def test_an_outside_work_is_named_as_most_of_its_citing_entries_name_it():
    found = works.consensus(
        [
            (
                "Efficient estimation of word representations in vector space",
                2013,
                ["Tomas Mikolov", "Kai Chen"],
                None,
                None,
            ),
            ("Efficient Estimation of Word Representations in Vector Space", 2013, ["T Mikolov", "K Chen"], None, None),
            ("Distributed representations of words", 1980, ["S Marcelja"], "JOSA", None),
        ]
        + [("Efficient estimation of word representations in vector space", 2013, [], None, None)] * 10
    )
    assert found["title"] == "Efficient estimation of word representations in vector space"
    assert (found["year"], found["venue"]) == (2013, None)
    assert found["authors"] == ["Tomas Mikolov", "Kai Chen"]  # the fullest spelling of the same people
    adam = works.consensus(
        [("Adam: A method for stochastic optimization", 2015, ["P Diederik", "Jimmy Kingma", "Ba"], "ICLR", None)] * 3
        + [("Adam: A method for stochastic optimization", 2015, ["Diederik P Kingma", "Jimmy Ba"], "ICLR", None)]
    )
    assert adam["authors"] == ["Diederik P Kingma", "Jimmy Ba"]


def test_an_in_text_citation_links_the_one_work_it_names():
    assert marker_names("(Vaswani et al., 2017;") == [(["Vaswani", "", ""], 2017)]
    assert marker_names("Kingma and Ba (2015)") == [(["Kingma", "Ba"], 2015)]
    conn = _store(
        [
            (
                "arxiv:1706.03762",
                "Attention is all you need",
                2017,
                ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"],
                {},
                0,
            ),
            ("ref:w1", "One work of Wang", 2017, ["Wei Wang", "A B", "C D"], {}, 0),
            ("ref:w2", "Another work of Wang", 2017, ["Wei Wang", "E F", "G H"], {}, 0),
        ],
        edges=[("p1", 0, "arxiv:1706.03762", None), ("p2", 0, "arxiv:1706.03762", None), ("p1", 1, "ref:w1", None)]
        + [("p3", 0, "ref:w2", None), ("p4", 0, "ref:w1", None)],
    )
    index = AuthorYearIndex(conn)
    assert index.find(["Vaswani", "", ""], 2017) == "arxiv:1706.03762"
    assert index.find(["Vaswani", "", ""], 2016) is None
    assert index.find(["Wang", "", ""], 2017) is None  # two works fit, neither three times as cited


def test_words_split_at_line_ends_are_rejoined_as_the_corpus_writes_them():
    vocabulary = Vocabulary()
    vocabulary.add("Our model outperforms the baseline. The multi-head attention is state-of-the-art.")
    vocabulary.add("An intermediate layer; multi-head again.")
    text = "It outper- forms an inter- mediate multi- head model, state-of-the- art, with pre- and post-processing."
    assert vocabulary.rejoin(text) == (
        "It outperforms an intermediate multi-head model, state-of-the-art, with pre- and post-processing."
    )
    assert vocabulary.rejoin("a graph- based parser (Jia and Liang, 2016;Dong and Lapata, 2016)") == (
        "a graph-based parser (Jia and Liang, 2016; Dong and Lapata, 2016)"
    )


def test_headers_that_are_no_names_and_table_text_leave_the_prose():
    assert is_junk_header("19 20.") and is_junk_header("2 Constant [τ, Γ]→const") and is_junk_header("1 3 5 7 9 11")
    assert not any(
        is_junk_header(h)
        for h in ("2 fMRI", "4 RNMT+", "1 Introduction", "Apdx_A: Appendix", "3 Comments on the $[T_c,3T_c]$ strip")
    )
    outline = Outline()
    outline.top("1 Introduction")
    outline.paragraph("We study parsing.")
    outline.paragraph("Human 2 20% 55% 25% Human 3 12% 52% 36% Overall 19% 51% 31%")
    outline.paragraph("1 https://github.com/example/code")
    outline.formula("h t = LSTM ( h t − 1 , w t − 1 ) , l t = W l h t , ( 1 )")  # a formula stays where it stands
    outline.formula("16.3 (−3.8) 16.3 (−3.8) 15.0 (−5.1) 14.2 (−2.0)")  # a table row taken for a formula
    outline.top("19 20.")
    outline.paragraph("The section goes on after a page number.")
    outline.top("1 Introduction")
    outline.paragraph("We study parsing.")  # the same section read twice
    sections = outline.finish()
    assert [s.header for s in sections] == ["1 Introduction", RESIDUE, FOOTNOTES]
    assert sections[0].text == (
        "We study parsing.\n\nh t = LSTM ( h t − 1 , w t − 1 ) , l t = W l h t , ( 1 )\n\n"
        "The section goes on after a page number."
    )
    assert "55%" in sections[1].text and "15.0 (−5.1)" in sections[1].text and "github" in sections[2].text


def test_citation_intent_by_the_rule():
    assert intent_of("Our model outperforms the system of Smith et al. (2017).") == "result"
    assert intent_of("We use the Adam optimizer (Kingma and Ba, 2015).") == "method"
    assert intent_of("Neural networks have been applied to parsing (Chen and Manning, 2014).") == "background"
    assert intent_of(None) is None
