"""What real sources do that the first converters lost or broke, each on a real
fixture of its kind (tests/fixtures/quirks/, sources and licences in tests/fixtures/README.md)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import FIXTURES, REPO

from agenthop.corpus.convert.build import check_build, write_release
from agenthop.corpus.convert.model import ConvertError
from agenthop.corpus.convert.s2orc import iter_s2orc
from agenthop.corpus.convert.tei import parse_tei
from agenthop.corpus.info import describe, format_description
from agenthop.server.cli import main

QUIRKS = FIXTURES / "quirks"
PLOS = QUIRKS / "pntd.0002065.nxml"
UNARXIVE = QUIRKS / "unarxive-sample.jsonl"
CMJ = QUIRKS / "cmj-0366-6999.209897.tei.xml"
ELIFE_V1 = QUIRKS / "elife-versions" / "elife-02833-v1.xml"
ELIFE_V2 = QUIRKS / "elife-versions" / "elife-02833-v2.xml.gz"
QUIET = {"echo": lambda message: None}


def release(sources: list[Path], out: Path) -> tuple[dict, dict[str, dict], dict[str, list[dict]]]:
    summary = write_release(sources, out, **QUIET)
    papers = {p["paper_id"]: p for p in map(json.loads, (out / "corpus" / "papers.jsonl").read_text().splitlines())}
    cites = {
        c["paper_id"]: c["references"]
        for c in map(json.loads, (out / "corpus" / "citations.jsonl").read_text().splitlines())
    }
    return summary, papers, cites


# --- 1. references without an article title ------------------------------------------------------


def test_plos_citations_without_article_title_are_kept_by_their_printed_text(tmp_path):
    """PLOS NTD's five `mixed-citation publication-type="other"` entries have no fields at all: they were dropped."""
    summary, papers, cites = release([PLOS], tmp_path / "out")
    refs = cites["doi:10.1371/journal.pntd.0002065"]
    assert len(refs) == 32 and summary["references_dropped"] == 0  # every entry of the bibliography
    murphy = papers[refs[0]["paper_id"]]
    assert (
        murphy["title"]
        == "Murphy FA, Gibbs EPJ, Horzinek MC, Studdert MJ (1999) Veterinary Virology. USA: Elsevier. pp 469–475."
    )
    assert murphy["year"] == 1999 and murphy["text_id"] is None
    assert "Bunyaviridae" in refs[0]["context"]  # its in-text citation is still the sentence that cites it
    # An entry with a PubMed ID is linked by it: the node's ID is the PMID, not a title hash.
    assert refs[1]["paper_id"] == "pmid:20682906"
    assert summary["quality"]["references_without_title"]["count"] == 5


def test_unarxive_references_are_kept_and_linked_by_the_ids_unarxive_found(tmp_path):
    summary, papers, cites = release([UNARXIVE], tmp_path / "out")
    refs = cites["arxiv:2212.11813"]
    assert len(refs) == 30 and summary["references_dropped"] == 0
    first = papers[refs[0]["paper_id"]]
    assert refs[0]["paper_id"] == "doi:10.1111/j.1467-8659.2010.01650.x"  # the DOI in its printed text
    assert first["title"].startswith(
        "T. McLoughlin, R. S. Laramee, R. Peikert, F. H. Post, M. Chen, Over Two Decades of"
    )
    assert first["year"] == 2010


def test_past_the_listed_examples_the_build_says_how_many_more_references_it_dropped(tmp_path):
    """The explore corpus's first ACL papers (GROBID 0.5.1) have more empty bibliography entries than the 20 listed."""
    said: list[str] = []
    sources = sorted((REPO / "explore" / "sources" / "acl").glob("P16-10[0-4]*.tei.xml.gz"))
    summary = write_release(sources, tmp_path / "out", echo=said.append)
    listed = [line for line in said if line.startswith("warning: dropped a reference: ")]
    more = [line for line in said if line.startswith("warning: dropped ") and " more references" in line]
    assert summary["references_dropped"] > 20 and len(listed) == 20
    assert more == [
        f"warning: dropped {summary['references_dropped'] - 20} more references like these "
        "(references_dropped in the summary counts them all)"
    ]


# --- 2. unarXive records ----------------------------------------------------------------------------


def test_unarxive_record_metadata_ids_formulas_and_citation_markers():
    paper, physics, qcd = list(iter_s2orc(UNARXIVE))
    assert paper.title == "FieldView: An interactive software tool for exploration of three-dimensional vector fields"
    assert paper.authors == ["Piotr Nowakowski", "Przemysław Rokita"] and paper.year == 2022
    assert paper.ids == {"arxiv": "2212.11813"}
    assert paper.abstract.startswith("Vector fields are one of the fundamental parts of mathematics")
    text = "\n".join(s.text for s in paper.sections)
    assert "{{" not in text  # no placeholder left: formulas are LaTeX, citations readable markers
    assert "weather sciences [1]. The exact technique" in paper.sections[0].text
    # The physics paper's formulas read as their LaTeX.
    assert physics.ids == {"arxiv": "2212.11827"} and len(physics.authors) == 8
    assert (
        "for $N$ discrete particles, $c(\\mathbf {r},t) = \\sum _{i=1}^{N} \\delta (\\mathbf {r}-\\mathbf {r}_n(t)),$"
        in physics.sections[0].text
    )
    assert "{{" not in physics.sections[0].text
    # Headers hold formulas too.
    assert [s.header for s in qcd.sections][2] == "3 Comments on the $[T_c,3T_c]$ strip"
    assert not any("{{" in s.header + s.text for p in (paper, physics, qcd) for s in p.sections)
    first = paper.references[0]
    assert first.context == (
        "3D vector field visualisation is a mature topic with broad applications in medical, machine "
        "engineering, physics and weather sciences [1]."
    )


def test_an_unarxive_paper_is_found_by_its_arxiv_id(tmp_path):
    _, papers, _ = release([UNARXIVE], tmp_path / "out")
    assert "arxiv:2212.11813" in papers and papers["arxiv:2212.11813"]["text_id"] == "arxiv:2212.11813"


def test_json_of_another_shape_is_refused_naming_what_was_expected(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"paper_id": "1", "sections": {"Introduction": {"text": "..."}}}))
    with pytest.raises(
        ConvertError,
        match=r"x\.json: JSON that is not an S2ORC paper \(expected an object with 'body_text' \(S2ORC 2019, CORD-19, unarXive\) "
        r"or 'pdf_parse' \(doc2json\)\)",
    ):
        write_release([tmp_path / "x.json"], tmp_path / "out", **QUIET)


# --- 3. duplicates ---------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_of_two_elife_versions_the_one_with_text_is_kept_whatever_the_order(tmp_path, order):
    """eLife's v1 of e02833 is the accepted manuscript's metadata (no body); v2 has the text."""
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(ELIFE_V1, src / f"{order[0]}-elife-02833-v1.xml")
    shutil.copy(ELIFE_V2, src / f"{order[1]}-elife-02833-v2.xml.gz")
    summary, papers, _ = release([src], tmp_path / "out")
    assert summary["papers_in_set"] == 1 and summary["papers_with_text"] == 1 and summary["duplicates"] == 1
    assert papers["doi:10.7554/elife.02833"]["text_id"] == "doi:10.7554/elife.02833"
    [example] = summary["duplicate_examples"]
    assert "-elife-02833-v1.xml (same paper as doi:10.7554/elife.02833; kept " in example
    assert example.endswith("-elife-02833-v2.xml.gz, the copy with text)")


def test_of_two_versions_with_text_the_later_is_kept(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    body = gzip.decompress(ELIFE_V2.read_bytes())
    (src / "elife-02833-v2.xml").write_bytes(body)
    (src / "elife-02833-v3.xml").write_bytes(body)  # the same text under a later version number
    summary, _, _ = release([src], tmp_path / "out")
    [example] = summary["duplicate_examples"]
    assert example.startswith(f"{src / 'elife-02833-v2.xml'} (same paper as") and example.endswith(
        "v3.xml, the later version)"
    )


@pytest.mark.parametrize("json_first", [False, True])
def test_the_same_paper_as_tei_and_as_doc2json_is_one_paper(tmp_path, json_first):
    """doc2json's JSON of N18-3011 carries no DOI and GROBID's TEI no ID: they meet by title and year. The richer copy
    is kept (doc2json's, which has GROBID's footnotes in its text) whatever the order, under the TEI's ID, not doc2json's
    file name."""
    sources = [FIXTURES / "tei" / "N18-3011.tei.xml", FIXTURES / "s2orc" / "N18-3011.json"]
    summary, papers, _ = release(sources[::-1] if json_first else sources, tmp_path / "out")
    assert summary["papers_in_set"] == 1 and summary["duplicates"] == 1
    assert set(k for k in papers if papers[k]["text_id"]) == {"paper:bfd6511f1cda14f9"}
    [example] = summary["duplicate_examples"]
    assert example.startswith(f"{sources[0]} (same paper as ") and "N18-3011.json, the richer copy" in example


# --- 4. GROBID headings with only sub-headings ------------------------------------------------------


def test_an_unnumbered_heading_with_only_subheadings_is_a_section_with_them_rolled_in():
    paper = parse_tei(CMJ)
    headers = [s.header for s in paper.sections]
    assert headers[:4] == ["Main text", "Methods", "results", "dIscussIon"]  # GROBID's own casing, served as it is
    methods, results = paper.sections[1].text, paper.sections[2].text
    assert (
        methods.startswith("Ethical approval\n\n")
        and "\n\nAssessment of intraepidermal nerve fiber density\n\n" in methods
    )
    assert results.startswith(
        "Clinical characteristics\n\nAll patients presented with a disturbance in pinprick sensation"
    )
    assert "Comparison of parameters among different groups" in results


# --- 7. bad files -----------------------------------------------------------------------------------


@pytest.fixture
def with_bad_files(tmp_path):
    src = tmp_path / "in"
    shutil.copytree(FIXTURES / "jats", src)
    (src / "cut.xml").write_bytes((FIXTURES / "jats" / "elife00240.xml").read_bytes()[:5000])
    # A real paper saved as Latin-1 by a tool that dropped the declaration ("±" is byte 0xb1 in Latin-1).
    (src / "latin1.xml").write_bytes(
        CMJ.read_text(encoding="utf-8")
        .encode("latin-1", errors="replace")
        .replace(b'<?xml version="1.0" encoding="UTF-8"?>\n', b"")
    )
    return src


def test_a_bad_file_stops_a_build_and_says_how_to_skip_it(with_bad_files, tmp_path):
    result = CliRunner().invoke(main, ["corpus", "build", str(with_bad_files), "--out", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 1 and not (tmp_path / "c.sqlite").exists()
    assert f"Error: {with_bad_files / 'cut.xml'}: not well-formed XML (no element found" in result.output
    assert "--skip-bad leaves out files that cannot be converted and reports each" in result.output


def test_skip_bad_builds_the_rest_and_reports_each_bad_file(with_bad_files, tmp_path):
    result = CliRunner().invoke(
        main, ["corpus", "build", str(with_bad_files), "--out", str(tmp_path / "c.sqlite"), "--skip-bad"]
    )
    assert result.exit_code == 0, result.output
    converted = json.loads(result.stdout)["converted"]
    assert (
        converted["papers_with_text"] == 3 and converted["bad_files"] == 2
    )  # cut.xml and latin1.xml, not the three eLife papers
    assert [e.split(":", 1)[0] for e in converted["bad_file_examples"]] == [
        str(with_bad_files / "cut.xml"),
        str(with_bad_files / "latin1.xml"),
    ]
    assert f"warning: skipped a file that cannot be converted: {with_bad_files / 'cut.xml'}" in result.stderr


def test_check_reports_every_bad_file_at_once(with_bad_files):
    report = check_build([with_bad_files], **QUIET)
    assert not report["ok"] and report["error_count"] == 2
    assert [e["message"].split(":", 1)[0] for e in report["errors"]] == [
        str(with_bad_files / "cut.xml"),
        str(with_bad_files / "latin1.xml"),
    ]
    skipped = check_build([with_bad_files], skip_bad=True, **QUIET)
    assert skipped["ok"] and skipped["warnings"]["bad_files"]["count"] == 2


# --- 8. messages that tell the truth ---------------------------------------------------------------


def test_latin1_without_a_declaration_gets_a_hint_about_the_encoding(with_bad_files):
    report = check_build([with_bad_files], **QUIET)
    latin1 = report["errors"][1]["message"]
    assert "not well-formed (invalid token)" in latin1
    assert "the file is not UTF-8 (byte 0xb1 on line " in latin1 and ") and declares no encoding" in latin1
    assert 'add <?xml version="1.0" encoding="ISO-8859-1"?> as its first line' in latin1


def test_a_build_whose_papers_all_lack_text_is_an_error(tmp_path):
    with pytest.raises(ConvertError, match=r"none of the 1 papers read has body text \(only metadata"):
        write_release([ELIFE_V1], tmp_path / "out", **QUIET)


def test_the_duplicate_headers_warning_describes_exact_duplicates_too():
    from agenthop.corpus.problems import describe_warning

    assert describe_warning("duplicate_headers") == (
        "papers with headers read_section cannot tell apart by name "
        '(the same header twice, or "4.2 Results" beside "5.3 Results")'
    )


# --- 9. the quality table ---------------------------------------------------------------------------


def test_the_quality_table_shows_grobids_errors_in_the_summary_and_in_corpus_info(tmp_path):
    result = CliRunner().invoke(main, ["corpus", "build", str(FIXTURES / "tei"), "--out", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 0, result.output
    quality = json.loads(result.stdout)["converted"]["quality"]
    # GROBID found no year in the SPECTER and literature-graph PDFs, and took a journal name for a reference title.
    assert quality["papers_without_year"] == {
        "what": "papers with text but no year",
        "count": 2,
        "examples": ["paper:1ed3c473f7cade3d", "paper:bfd6511f1cda14f9"],
    }
    assert quality["reference_titles_like_venues"]["examples"] == [
        "paper:1ed3c473f7cade3d reference 31: 'Bulletin of the Medical Library Association'"
    ]
    assert quality["sections_like_captions"]["count"] == 0 and quality["long_sections"]["count"] == 0
    assert (
        "       2  papers with text but no year  (e.g. paper:1ed3c473f7cade3d; paper:bfd6511f1cda14f9)" in result.stderr
    )
    shown = format_description(describe(tmp_path / "c.sqlite"))
    assert "quality of the conversion (corpus build; what the parser may have got wrong):" in shown
    assert "       2  papers with text but no year  (e.g. paper:1ed3c473f7cade3d; paper:bfd6511f1cda14f9)" in shown
