"""The fallback parser's rules on their own: reading a bibliography entry, and linking citation markers to entries."""

from __future__ import annotations

from agenthop.corpus.convert.pdf_fallback import parse_entry
from agenthop.corpus.convert.pdf_model import Entry
from agenthop.corpus.convert.pdf_tei import Markers


def test_an_author_year_entry():
    e = parse_entry(
        "Waleed Ammar, Dirk Groeneveld, and Oren Etzioni. 2018. Construction of the literature graph in "
        "Semantic Scholar. In NAACL-HLT. doi:10.18653/v1/N18-3011",
        0,
    )
    assert (e.key, e.year, e.title) == ("b0", "2018", "Construction of the literature graph in Semantic Scholar")
    assert e.authors == ["Waleed Ammar", "Dirk Groeneveld", "Oren Etzioni"]
    assert e.venue.startswith("NAACL-HLT") and e.doi == "10.18653/v1/N18-3011"


def test_a_numbered_vancouver_entry():
    e = parse_entry(
        "12. Quandt F, Hummel FC. The influence of functional electrical stimulation on hand motor recovery. "
        "Exp Transl Stroke Med. 2014;6:9.",
        3,
    )
    assert (e.key, e.label, e.year) == ("b3", "12", "2014")
    assert e.authors == ["Quandt F", "Hummel FC"]
    assert e.title == "The influence of functional electrical stimulation on hand motor recovery"
    assert e.venue == "Exp Transl Stroke Med"


def test_an_arxiv_identifier_is_kept():
    e = parse_entry(
        "Zhilin Yang and Quoc V. Le. 2019. XLNet: generalized autoregressive pretraining. arXiv:1906.08237.", 0
    )
    assert e.arxiv == "1906.08237" and e.year == "2019"


ENTRIES = [
    Entry("b0", "", label="1", authors=["Waleed Ammar"], year="2018"),
    Entry("b1", "", label="2", authors=["Arman Cohan"], year="2020"),
    Entry("b2", "", label="5", authors=["Jacob Devlin"], year="2019"),
    Entry("b3", "", label="6", authors=["Quandt F"], year="2014"),
]


def marked(text: str) -> list[tuple[str, list[str]]]:
    return [(text[start:end], keys) for start, end, keys in Markers(ENTRIES).spans(text)]


def test_numeric_markers_with_lists_and_ranges():
    assert marked("as shown before [1] and later [2, 5-6].") == [("[1]", ["b0"]), ("[2, 5-6]", ["b1", "b2", "b3"])]
    assert marked("a number no entry has [9], and an interval [3]") == []


def test_author_year_markers_in_parentheses_and_in_the_sentence():
    assert marked("We use it (Ammar et al., 2018; Cohan et al., 2020).") == [
        ("(Ammar et al., 2018; Cohan et al., 2020)", ["b0", "b1"])
    ]
    assert marked("Devlin et al. (2019) proposed BERT.") == [("Devlin et al. (2019)", ["b2"])]
    assert marked("Quandt (2014) and the Vancouver-style surname.") == [("Quandt (2014)", ["b3"])]


def test_parentheses_that_name_no_entry_are_left_alone():
    assert marked("(see Figure 3) in (2018) and (Smith et al., 2018) or (Ammar et al., 2017)") == []
