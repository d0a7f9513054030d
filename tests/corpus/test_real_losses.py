"""What real sources still lost after the first fixes, each on a real openly licensed file: PLOS JATS
excerpts, GROBID's TEI of SPECTER, the explore corpus's GROBID 0.5.1 TEI, pdfminer.six's sample PDFs (sources and
licences in tests/fixtures/README.md, section `losses/`)."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import FIXTURES, REPO

from agenthop.corpus.convert.build import build_corpus, check_build, write_release
from agenthop.corpus.convert.jats import formula_text, parse_jats
from agenthop.corpus.convert.model import ConvertError
from agenthop.corpus.convert.pdf_fallback import convert_pdfs_fallback
from agenthop.corpus.convert.tei import parse_tei
from agenthop.corpus.info import describe, format_description
from agenthop.corpus.licences import read_licence
from agenthop.server.cli import main

LOSSES = FIXTURES / "losses"
QUOTES = (
    LOSSES / "pmed.1001473-excerpt.xml.gz"
)  # PLOS Medicine, a review of qualitative studies: patients' words quoted
FORMULAS = LOSSES / "pcbi.1004141-excerpt.xml.gz"  # PLOS Comput Biol: display formulas in MathML
COLLAB = LOSSES / "pmed.1001300-excerpt.xml.gz"  # PLOS Medicine: a group author listing its 73 members inside <collab>
SPECTER = FIXTURES / "tei" / "2020.acl-main.207.tei.xml"
EXPLORE_ACL = REPO / "explore" / "sources" / "acl"
QUIET = {"echo": lambda message: None}


def release(sources: list[Path], out: Path, **options) -> tuple[dict, dict[str, dict], dict[str, list[dict]]]:
    summary = write_release(sources, out, **QUIET, **options)
    papers = {p["paper_id"]: p for p in map(json.loads, (out / "corpus" / "papers.jsonl").read_text().splitlines())}
    cites = {
        c["paper_id"]: c["references"]
        for c in map(json.loads, (out / "corpus" / "citations.jsonl").read_text().splitlines())
    }
    return summary, papers, cites


def all_text(paper) -> str:
    return "\n\n".join(s.text for s in paper.sections)


# --- 1. every block a reader sees ------------------------------------------------------------------


def test_quoted_paragraphs_are_kept_with_their_citations():
    """14 <disp-quote>s, the patients' and authors' words that are the review's evidence, vanished silently."""
    paper = parse_jats(QUOTES)
    root = ET.fromstring(gzip.decompress(QUOTES.read_bytes()))
    quotes = [" ".join("".join(q.itertext()).split()) for q in root.iter("disp-quote")]
    text = all_text(paper)
    assert len(quotes) == 14 and all(quote in text for quote in quotes)
    assert "\n\n(Environmental or contextual) characteristics that resulted in shorter interaction time" in text
    assert "health professionals being called away. [95]\n\nPatients also reported" in text  # the quote's citation too


def test_what_is_left_out_is_counted_and_reported(tmp_path):
    said: list[str] = []
    summary = write_release([QUOTES], tmp_path / "out", echo=said.append)
    assert parse_jats(QUOTES).skipped == {"fig": 2, "table-wrap": 1}
    assert summary["elements_left_out"] == {"fig": 2, "table-wrap": 1}
    assert "left out of the text (figures, tables and notes, not running text): 2 <fig>, 1 <table-wrap>" in said


def test_display_formulas_leave_their_mathml_text_and_number():
    """ "…governed by a Poisson distribution: where λ denotes…": the formula between vanished without a mark."""
    text = all_text(parse_jats(FORMULAS))
    assert (
        "governed by a Poisson distribution: λ = f ( K ⊤ s ) p ( r | λ ) = 1 r ! ( Δ λ ) r e - Δ λ , (1) where λ denotes "
        "the stimulus-driven spike rate"
    ) in text


def test_a_tex_formula_is_its_latex_without_the_document_pubmed_central_wraps_it_in():
    """PMC's <tex-math> holds a whole LaTeX document around the formula (no real fixture among the 122 PLOS files has
    one; this is PMC's wrapping as it appears in its JATS): the reader gets the formula, not the preamble."""
    formula = ET.fromstring(
        '<disp-formula id="E1"><label>(1)</label><alternatives><tex-math id="M1">\\documentclass[12pt]{minimal}\n'
        "\\usepackage{amsmath}\n\\usepackage{wasysym}\n\\setlength{\\oddsidemargin}{-69pt}\n"
        "\\begin{document}$$\\lambda = f(K^\\top s)$$\\end{document}</tex-math>"
        '<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:mi>λ</mml:mi></mml:math></alternatives></disp-formula>'
    )
    assert formula_text(formula) == "$\\lambda = f(K^\\top s)$ (1)"
    assert formula_text(ET.fromstring("<inline-formula><tex-math>$x^2$</tex-math></inline-formula>")) == "$x^2$"


def test_grobid_formulas_are_kept_as_grobid_read_them(tmp_path):
    """GROBID's <formula> elements sit between paragraphs; SPECTER's loss function was lost."""
    text = all_text(parse_tei(SPECTER))
    assert (
        "token as the output representation of the paper:\n\n5 v = Transformer(input) [CLS] , (1)\n\nwhere Transformer"
        in text
    )
    assert "triplet margin loss function:\n\nL = max d P Q , P + − d P Q , P − + m , 0 (2)\n\nwhere d is" in text


# --- 2. TEI references with printed text -------------------------------------------------------------


def test_a_tei_reference_without_title_keeps_its_printed_text(tmp_path):
    """SPECTER's b6 has an empty <title> but GROBID kept the entry as printed (raw_reference): it was dropped, and the
    warning said it had no citation text."""
    summary, papers, cites = release([SPECTER], tmp_path / "out")
    assert summary["references_dropped"] == 0
    bruna = papers[cites["paper:1ed3c473f7cade3d"][6]["paper_id"]]
    assert bruna["title"] == (
        "Joan Bruna, Wojciech Zaremba, Arthur Szlam, and Yann LeCun. 2014. Spectral networks and locally "
        "connected networks on graphs. ICLR."
    )
    assert bruna["year"] == 2014 and bruna["authors"] == [
        "Joan Bruna",
        "Wojciech Zaremba",
        "Arthur Szlam",
        "Yann Lecun",
    ]
    assert summary["quality"]["references_without_title"]["examples"] == [
        f"paper:1ed3c473f7cade3d reference 7: {bruna['title']}"
    ]


def test_an_entry_with_only_authors_is_dropped_and_said_so_not_called_empty(tmp_path):
    """GROBID 0.5.1 split some references of the explore corpus in two: one entry with only authors and a year."""
    summary, _, _ = release([EXPLORE_ACL / "P16-1005.tei.xml.gz"], tmp_path / "out")
    first = summary["references_dropped_examples"][0]
    assert first == (
        "doi:10.18653/v1/p16-1005 reference 1: no title, no printed text and no identifier of a paper in the set "
        "(only authors G Angeli, S Gupta, M Jose, …, 2014)"
    )
    assert (
        "(no printed text; only authors G Angeli, S Gupta, M Jose, …, 2014)"
        in summary["quality"]["references_without_title"]["examples"][0]
    )
    assert not any("empty" in e for e in summary["references_dropped_examples"] if "only authors" in e)


def test_an_entry_with_only_an_identifier_is_kept_under_it(tmp_path):
    """GROBID 0.5.1 read an arXiv ID and authors but no title from P16-1041's entry for Memory Networks: dropped before."""
    summary, papers, cites = release([EXPLORE_ACL / "P16-1041.tei.xml.gz"], tmp_path / "out")
    assert "arxiv:1410.3916" in [r["paper_id"] for r in cites["doi:10.18653/v1/p16-1041"]]
    memory = papers["arxiv:1410.3916"]
    assert memory["title"] == "arxiv:1410.3916 (no title in the bibliography entry)"
    assert memory["authors"] == ["Jason Weston", "Sumit Chopra", "Antoine"] and memory["text_id"] is None


# --- 3. licences ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stated", "name", "is_open"),
    [
        ("http://creativecommons.org/licenses/by/4.0/", "CC BY 4.0", True),
        ("https://creativecommons.org/licenses/by-nc-sa/3.0/", "CC BY-NC-SA 3.0", False),
        (
            "This is an open-access article distributed under the terms of the Creative Commons Attribution License, which permits "
            "unrestricted use",
            "CC BY",
            True,
        ),
        ("http://creativecommons.org/publicdomain/zero/1.0/", "CC0 1.0", True),
        ("All rights reserved.", "All rights reserved.", False),
        # The elements spelt apart must not fall through to CC BY (and pass for open); 2.5 is a version too.
        (
            "distributed under the Creative Commons Attribution-Non Commercial-No Derivatives 4.0 License",
            "CC BY-NC-ND 4.0",
            False,
        ),
        ("Creative Commons Attribution Non Commercial License", "CC BY-NC", False),
        ("Creative Commons Attribution Share Alike 4.0", "CC BY-SA 4.0", True),
        ("Creative Commons Attribution 2.5 License", "CC BY 2.5", True),
    ],
)
def test_licences_are_read_by_url_or_words(stated, name, is_open):
    found = read_licence(stated)
    assert (found.name, found.open) == (name, is_open)


@pytest.fixture(scope="module")
def licensed(tmp_path_factory) -> Path:
    """PLOS JATS (licence in words), eLife JATS (by URL) and an explore TEI (<availability><licence target>)."""
    root = tmp_path_factory.mktemp("licences")
    build_corpus(
        [QUOTES, FIXTURES / "jats" / "elife04490.xml", EXPLORE_ACL / "P16-1002.tei.xml.gz"], root / "c.sqlite", **QUIET
    )
    return root / "c.sqlite"


def test_each_papers_licence_is_stored_and_shown_by_corpus_info(licensed):
    conn = sqlite3.connect(licensed)
    rows = dict(
        (pid, (name, url)) for pid, name, url in conn.execute("SELECT paper_id, licence, url FROM paper_licences")
    )
    conn.close()
    assert rows == {
        "doi:10.1371/journal.pmed.1001473": ("CC BY", None),
        "doi:10.7554/elife.04490": ("CC BY 4.0", "http://creativecommons.org/licenses/by/4.0/"),
        "doi:10.18653/v1/p16-1002": ("CC BY 4.0", "https://creativecommons.org/licenses/by/4.0/"),
    }
    info = describe(licensed)
    assert info["counts"]["papers_with_text_by_licence"] == {"CC BY 4.0": 2, "CC BY": 1}
    assert "licences      2 CC BY 4.0, 1 CC BY (papers with text)" in format_description(info)


@pytest.mark.anyio
async def test_get_paper_info_shows_the_licence_in_explore_mode(licensed, tmp_path):
    import sys

    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agenthop.server", "serve", "--corpus", str(licensed), "--log", str(tmp_path / "log.sqlite")],
    )
    async with Client(params, read_timeout_seconds=60) as client:
        info = await client.call_tool("get_paper_info", {"paper_id": "10.7554/eLife.04490"})
        outside = await client.call_tool("get_paper_info", {"paper_id": "doi:10.7554/elife.00007"})
    text = info.content[0].text
    assert "\nLicence: CC BY 4.0 (http://creativecommons.org/licenses/by/4.0/)\n" in text
    assert info.structured_content["paper"]["licence"] == "CC BY 4.0"
    assert "Licence" not in outside.content[0].text  # a metadata-only reference: no licence stated, no line


def test_a_folder_licence_and_a_refusal_of_papers_not_open(tmp_path):
    """The CMJ paper (GROBID TEI) states no licence in its file; it is CC BY-NC-SA 3.0, which is not open."""
    cmj = FIXTURES / "quirks" / "cmj-0366-6999.209897.tei.xml"
    assert parse_tei(cmj).licence is None  # GROBID's <availability> holds the PDF's copyright line, which is no licence
    flagged, _, _ = release([cmj], tmp_path / "flagged")
    assert flagged["licences"] == {"none stated": 1} and flagged["not_open"] == 1
    given, papers, _ = release([cmj], tmp_path / "given", licence="https://creativecommons.org/licenses/by-nc-sa/3.0/")
    assert given["licences"] == {"CC BY-NC-SA 3.0": 1} and given["not_open_examples"] == [
        "doi:10.4103/0366-6999.209897 (CC BY-NC-SA 3.0)"
    ]
    assert papers["doi:10.4103/0366-6999.209897"]["licence"] == "CC BY-NC-SA 3.0"
    with pytest.raises(
        ConvertError,
        match=r"1 of the papers with text has no open licence .*doi:10\.4103/0366-6999\.209897 \(CC BY-NC-SA 3\.0\)",
    ):
        release([cmj], tmp_path / "refused", licence="CC BY-NC-SA 3.0", open_only=True)
    kept, _, _ = release([cmj], tmp_path / "kept", licence="CC BY 4.0", open_only=True)
    assert kept["not_open"] == 0
    said: list[str] = []
    mistyped = write_release([cmj], tmp_path / "mistyped", licence="CC-BY-4", echo=said.append)
    assert mistyped["licences"] == {"CC BY": 1}, "a loose spelling of a known licence is read as it"
    unknown = write_release([cmj], tmp_path / "unknown", licence="Elsevier user licence", echo=said.append)
    assert unknown["licences"] == {"Elsevier user licence": 1} and unknown["not_open"] == 1
    assert [m for m in said if "names no licence known here" in m] == [
        "warning: the licence given for papers whose files state none, 'Elsevier user licence', names no licence known "
        "here (a Creative Commons name or URL such as 'CC BY 4.0', CC0 or public domain): it is stored as given and "
        "counted as not open"
    ]


def test_the_cli_options_for_licences(tmp_path):
    cmj = str(FIXTURES / "quirks" / "cmj-0366-6999.209897.tei.xml")
    refused = CliRunner().invoke(
        main, ["corpus", "build", cmj, "--out", str(tmp_path / "c.sqlite"), "--open-licences-only"]
    )
    assert refused.exit_code == 1 and "(none stated)" in refused.output and not (tmp_path / "c.sqlite").exists()
    assert "--licence LICENCE gives the licence of every paper whose file states none" in refused.output
    built = CliRunner().invoke(
        main,
        ["corpus", "build", cmj, "--out", str(tmp_path / "c.sqlite"), "--licence", "CC BY 4.0", "--open-licences-only"],
    )
    assert built.exit_code == 0, built.output
    checked = CliRunner().invoke(main, ["corpus", "build", cmj, "--check", "--open-licences-only"])
    assert checked.exit_code == 1 and "1 of the papers with text has no open licence" in checked.output
    assert "--open-licences-only refuses them" in checked.output


def test_a_release_licence_url_without_its_name_is_refused(tmp_path):
    from agenthop.corpus.importer import ReleaseError, import_release

    summary, papers, _ = release([FIXTURES / "jats" / "elife00240.xml"], tmp_path / "rel")
    lines = (tmp_path / "rel" / "corpus" / "papers.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert first["licence"] == "CC BY 3.0"
    del first["licence"]
    (tmp_path / "rel" / "corpus" / "papers.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(ReleaseError, match=r"corpus/papers\.jsonl line 1: field 'licence'"):
        import_release(tmp_path / "rel", tmp_path / "c.sqlite", echo=lambda m: None)


# --- 4. the smaller losses --------------------------------------------------------------------------------


def test_a_group_author_is_its_name_not_its_members():
    """The collab's nested <contrib-group> of 73 members and their affiliations made one 5,695-character author."""
    paper = parse_jats(COLLAB)
    assert paper.authors[-1] == "Collaborative Group for Meta-Analysis of Individual Patient Data in MDR-TB"
    assert max(len(a) for a in paper.authors) < 100


@pytest.mark.parametrize("json_first", [False, True])
def test_doc2json_and_tei_of_specter_keep_the_richer_copy_and_not_the_file_name_id(tmp_path, json_first):
    """doc2json names SPECTER `2020` after its file 2020.acl-main.207.json; the TEI copy has 58 entries to its 55."""
    sources = [FIXTURES / "tei" / "2020.acl-main.207.tei.xml", FIXTURES / "s2orc" / "2020.acl-main.207.json"]
    summary, papers, _ = release(sources[::-1] if json_first else sources, tmp_path / "out")
    with_text = [pid for pid, p in papers.items() if p["text_id"]]
    assert with_text == ["paper:1ed3c473f7cade3d"] and "s2orc:2020" not in papers
    [example] = summary["duplicate_examples"]
    assert (
        example.startswith(f"{sources[1]} (same paper as ") and "2020.acl-main.207.tei.xml, the richer copy" in example
    )


@pytest.mark.parametrize("json_first", [False, True])
def test_the_copy_kept_takes_the_licence_only_the_other_copy_states(tmp_path, json_first):
    """N18-3011 (NAACL 2018, CC BY 4.0 under the Anthology's policy): its doc2json JSON is kept (the richer copy,
    with GROBID's footnotes) but states no licence; the TEI, stamped with its licence, is dropped. The licence stays."""
    tei = tmp_path / "N18-3011.tei.xml"
    tei.write_text(
        (FIXTURES / "tei" / "N18-3011.tei.xml")
        .read_text(encoding="utf-8")
        .replace("<licence/>", '<licence target="https://creativecommons.org/licenses/by/4.0/"/>', 1),
        encoding="utf-8",
    )
    sources = [tei, FIXTURES / "s2orc" / "N18-3011.json"]
    summary, papers, _ = release(sources[::-1] if json_first else sources, tmp_path / "out")
    [kept] = [p for p in papers.values() if p["text_id"]]
    assert "N18-3011.json, the richer copy" in summary["duplicate_examples"][0]
    assert (kept["licence"], kept["licence_url"]) == (
        "CC BY 4.0",
        "https://creativecommons.org/licenses/by/4.0/",
    ) and summary["licences"] == {"CC BY 4.0": 1}


def test_an_empty_file_is_called_empty(tmp_path):
    (tmp_path / "empty.xml").write_bytes(b"")
    with pytest.raises(
        ConvertError, match=r"empty\.xml: the file is empty \(0 bytes\); copy it again from its source, or remove it"
    ):
        write_release([tmp_path / "empty.xml"], tmp_path / "out", **QUIET)


def test_latin1_under_a_utf8_declaration_gets_the_hint(tmp_path):
    """eLife's Insight saved as Latin-1 (its "©" one byte, 0xa9) without changing its declaration, which says UTF-8."""
    text = (FIXTURES / "jats" / "elife00240.xml").read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>') and "©" in text
    (tmp_path / "latin1.xml").write_bytes(text.encode("latin-1", errors="replace"))
    with pytest.raises(ConvertError) as refused:
        write_release([tmp_path / "latin1.xml"], tmp_path / "out", **QUIET)
    assert (
        "the file is not UTF-8 (byte 0xa9 on line 1) and declares UTF-8: if it is Latin-1, change its declaration to "
        'encoding="ISO-8859-1" or convert it (iconv -f latin1 -t utf-8)'
    ) in str(refused.value)


def test_a_password_protected_pdf_says_so(tmp_path):
    """pdfminer.six's own encrypted sample (password "foo"): pdfminer's error has no message, so the reason was empty."""
    teis, [failure], _ = convert_pdfs_fallback([LOSSES / "aes-128.pdf"], tmp_path / "cache", echo=lambda _: None)
    assert teis == [] and failure.reason.startswith(
        "protected by a password (PDFPasswordIncorrect): give an unprotected copy"
    )


def test_a_pdf_that_is_no_paper_is_said_what_it_was_taken_for(tmp_path):
    said: list[str] = []
    [tei], failures, counts = convert_pdfs_fallback([LOSSES / "pagelabels.pdf"], tmp_path / "cache", echo=said.append)
    [unlike] = counts["unlike_papers"]
    assert failures == [] and unlike["pdf"] == str(LOSSES / "pagelabels.pdf")
    assert unlike["took"].startswith("title 'Contents 1 First section'")
    assert any("has no abstract and no reference list, so it may not be a paper" in line for line in said)


def test_files_not_read_are_named_and_skipped_pdfs_are_bad_files(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(FIXTURES / "jats" / "elife00240.xml", src)
    shutil.copy(LOSSES / "aes-128.pdf", src)
    (src / "elife00240.html").write_text("<html><body>the article's web page, saved</body></html>")
    said: list[str] = []
    summary = build_corpus([src], tmp_path / "c.sqlite", skip_bad=True, echo=said.append)
    assert summary["converted"]["files_not_read"] == 1 and summary["converted"]["files_not_read_examples"] == [
        str(src / "elife00240.html")
    ]
    assert any(
        line.startswith("warning: 1 files under the folders given are not read") and "elife00240.html" in line
        for line in said
    )
    assert summary["pdfs"]["skipped"] == 1 and summary["converted"]["bad_files"] == 1
    assert summary["converted"]["bad_file_examples"][0].startswith(f"{src / 'aes-128.pdf'}: protected by a password")
    checked = check_build([src], skip_bad=True, **QUIET)
    assert checked["warnings"]["bad_files"]["count"] == 1
