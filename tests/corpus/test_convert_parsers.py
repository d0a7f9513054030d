"""Each converter on the real fixtures (tests/fixtures/README.md): metadata, real headers, bibliography, citation sentences."""

import gzip
import json

import pytest
from support.paths import FIXTURES

from agenthop.corpus.convert.jats import parse_jats
from agenthop.corpus.convert.model import ConvertError
from agenthop.corpus.convert.s2orc import iter_s2orc
from agenthop.corpus.convert.sources import detect, read_papers
from agenthop.corpus.convert.tei import parse_tei
from agenthop.corpus.convert.text import sentence_around
from agenthop.corpus.convert.xmltree import parse


def ref_by_title(paper, words):
    return next(r for r in paper.references if words.lower() in r.title.lower())


def test_tei_specter_metadata_sections_and_citation_sentence():
    paper = parse_tei(FIXTURES / "tei" / "2020.acl-main.207.tei.xml")
    assert paper.title == "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
    assert paper.authors[:2] == ["Arman Cohan", "Sergey Feldman"] and paper.authors[-1] == "Daniel S Weld"
    assert paper.abstract.startswith("Representation learning is a critical ingredient")
    headers = [s.header for s in paper.sections]
    # Real headers with their numbers; "2.1 Overview".."2.5 Inference" are rolled into section 2.
    assert headers[:5] == [
        "1 Introduction",
        "2 Model 2.1 Overview",
        "3 SCIDOCS Evaluation Framework",
        "4 Experiments",
        "5 Results",
    ]
    model = paper.sections[1].text
    assert "\n\n2.4 Selecting Negative Distractors\n\n" in model and "2.5 Inference" in model
    assert not any(h.startswith("2.") for h in headers)
    ammar = ref_by_title(paper, "Construction of the literature graph")
    assert ammar.year == 2018 and ammar.authors[0] == "Waleed Ammar"
    assert ammar.context == (
        "Training Data To train our model, we use a subset of the Semantic Scholar corpus (Ammar et al., 2018) "
        "consisting of about 146K query papers (around 26.7M tokens) with their corresponding outgoing citations, "
        "and we use an additional 32K papers for validation."
    )
    added = ref_by_title(paper, "Multi-contact functional electrical stimulation")
    assert added.ids == {"doi": "10.1186/s12984-016-0129-6"} and added.context is None


def test_tei_without_numbering_keeps_every_head_as_a_section_and_reads_ids():
    paper = parse_tei(FIXTURES / "tei" / "s12984-016-0129-6.tei.xml")
    assert paper.ids == {"doi": "10.1186/s12984-016-0129-6"} and paper.year == 2016
    assert paper.venue == "Journal of NeuroEngineering and Rehabilitation"
    headers = [s.header for s in paper.sections]
    assert headers[:4] == ["Background", "Methods", "Participants", "Experimental setup"]
    assert "Fig. 5" not in headers  # figure heads are not sections
    first = paper.references[0]
    assert first.ids == {"doi": "10.1186/2040-7378-6-9"} and first.year == 2014
    assert first.context.startswith(
        "A number of studies have shown the effectiveness of FES"
    ) and first.context.endswith("[6].")


def test_jats_elife_metadata_sections_and_references():
    paper = parse_jats(FIXTURES / "jats" / "elife04490.xml")
    assert paper.ids == {"doi": "10.7554/elife.04490"} and paper.year == 2015 and paper.venue == "eLife"
    assert paper.authors[:2] == ["Meredith C Schuman", "Silke Allmann"]
    assert paper.abstract.startswith("Plants are at the trophic base of terrestrial ecosystems")
    assert [s.header for s in paper.sections] == [
        "Introduction",
        "Results",
        "Discussion",
        "Materials and methods",
        "Acknowledgements",
        "Apdx_A: Appendix 1",
        "Apdx_B: Appendix 2",
        "Apdx_C: Appendix 3",
    ]
    # eLife's appendices are boxed text: read as a reader sees them (they were lost); figures and tables are counted.
    assert paper.sections[5].text.startswith("Herbivore-induced plant defenses and HIPVs are precisely manipulated")
    assert paper.skipped == {"fig": 11, "fig-group": 2, "table-wrap": 12}
    methods = paper.sections[3].text
    assert methods.startswith(
        "WT and transgenic plant lines and glasshouse growth conditions\n\n"
    )  # a subsection's heading line
    cited = next(r for r in paper.references if r.ids.get("doi") == "10.7554/elife.00007")
    assert cited.title.startswith("Herbivory-induced volatiles function as defenses") and cited.year == 2012
    # The first sentence whose citation points at bib73 (eLife's markup links "Schuman and Baldwin, 2012" to it).
    assert cited.context.startswith("Whitham et al. (2012) suggest") and cited.context.endswith(
        "Schuman and Baldwin, 2012)."
    )


def test_jats_without_sections_gives_one_main_text_section():
    paper = parse_jats(FIXTURES / "jats" / "elife00240.xml")
    assert [s.header for s in paper.sections] == ["Main text"]
    # The Insight's box naming the article it is about comes first, as the reader sees it; then the running text.
    assert paper.sections[0].text.startswith("Related research article Schuman M, Barthel K, Baldwin I. 2012.")
    assert "\n\nWe have known for at least 30 years" in paper.sections[0].text
    cited = next(r for r in paper.references if r.key == "bib4")
    assert cited.ids == {"doi": "10.7554/elife.00007"}
    assert cited.context == (
        "Now, writing in eLife, Meredith Schuman, Kathleen Barthel and Ian Baldwin report such evidence from a "
        "two-year field trial on Nicotiana attenuata, a wild tobacco plant (Schuman et al., 2012)."
    )


def test_s2orc_doc2json_output():
    [paper] = list(iter_s2orc(FIXTURES / "s2orc" / "2020.acl-main.207.json"))
    assert paper.source_id == "2020" and paper.title.startswith("SPECTER")
    headers = [s.header for s in paper.sections]
    assert headers[:3] == ["1 Introduction", "2 Model 2.1 Overview", "3 SCIDOCS Evaluation Framework"]
    assert "\n\nDocument Representation\n\n" in paper.sections[1].text  # an unnumbered heading inside section 2
    ammar = ref_by_title(paper, "Construction of the literature graph")
    assert "(Ammar et al., 2018)" in ammar.context and ammar.context.endswith("for validation.")


def test_s2orc_jsonl_gz_streams_one_paper_per_line(tmp_path):
    records = [
        json.loads((FIXTURES / "s2orc" / name).read_text()) for name in ("N18-3011.json", "s12984-016-0129-6.json")
    ]
    shard = tmp_path / "pdf_parses_0.jsonl.gz"
    with gzip.open(shard, "wt", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record) + "\n\n")
    assert detect(shard) == "s2orc"
    assert [p.source_id for p in iter_s2orc(shard)] == ["N18-3011", "s12984-016-0129-6"]


def test_detection_by_content_not_by_name(tmp_path):
    (tmp_path / "a.xml").write_bytes((FIXTURES / "s2orc" / "N18-3011.json").read_bytes())
    (tmp_path / "b.json").write_bytes((FIXTURES / "jats" / "elife00240.xml").read_bytes())
    assert detect(tmp_path / "a.xml") == "s2orc" and detect(tmp_path / "b.json") == "jats"
    assert detect(FIXTURES / "tei" / "N18-3011.tei.xml") == "tei"
    assert [p.title for p in read_papers([tmp_path])] == [
        "Construction of the Literature Graph in Semantic Scholar",
        "Indirect routes to reproductive success",
    ]


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("<html><body/></html>", "expected GROBID TEI"),
        ("<article><front>", "not well-formed XML"),
        ('{"title": "x"}', "not an S2ORC paper"),
        ("title,abstract\n", "neither XML nor JSON"),
    ],
)
def test_bad_inputs_name_the_file_and_the_problem(tmp_path, content, fragment):
    bad = tmp_path / "paper.xml"
    bad.write_text(content)
    with pytest.raises(ConvertError) as info:
        list(read_papers([bad]))
    assert str(bad) in str(info.value) and fragment in str(info.value)


def test_a_truncated_gzip_file_is_a_convert_error_naming_it(tmp_path):
    whole = gzip.compress((FIXTURES / "tei" / "N18-3011.tei.xml").read_bytes())
    cut = tmp_path / "paper.tei.xml.gz"
    cut.write_bytes(whole[:32])  # the stream ends before gzip's end-of-stream marker: EOFError, not OSError
    with pytest.raises(ConvertError) as info:
        parse(cut)
    assert str(info.value).startswith(f"{cut}: cannot be read (")


def test_format_flag_refuses_a_file_of_another_format():
    with pytest.raises(ConvertError, match="looks like jats, not tei"):
        list(read_papers([FIXTURES / "jats" / "elife00240.xml"], "tei"))


def test_sentence_around_skips_abbreviations_and_initials():
    text = "We follow Smith et al. (2019). Prior work, e.g. J. Doe [3], used it. Then we stop."
    start = text.index("[3]")
    assert sentence_around(text, start, start + 3) == "Prior work, e.g. J. Doe [3], used it."


def test_tei_annex_with_its_own_paragraphs_and_subdivisions_keeps_both(tmp_path):
    """An annex div that holds paragraphs and sub-divs: its own text is an appendix section, before the sub-divs'."""
    tei = tmp_path / "annex.tei.xml"
    tei.write_text(
        "<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader><fileDesc><titleStmt><title level='a' type='main'>Annexed"
        "</title></titleStmt></fileDesc></teiHeader><text><body><div><head n='1'>Introduction</head><p>Body text.</p>"
        "</div></body><back><div type='annex'><head>Supplementary material</head><p>Overview of the appendices.</p>"
        "<div><head n='A'>Proofs</head><p>Proof of the lemma.</p></div><div><head n='B'>Data</head><p>The data.</p>"
        "</div></div><div type='annex'><div><head>Hyperparameters</head><p>Learning rate 0.1.</p></div></div></back>"
        "</text></TEI>"
    )
    paper = parse_tei(tei)
    assert [(s.header, s.text) for s in paper.sections] == [
        ("1 Introduction", "Body text."),
        ("Apdx_A: Supplementary material", "Overview of the appendices."),
        ("Apdx_B: A Proofs", "Proof of the lemma."),
        ("Apdx_C: B Data", "The data."),
        ("Apdx_D: Hyperparameters", "Learning rate 0.1."),
    ]
