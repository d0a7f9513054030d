"""The fallback PDF parser (no service, no network, no model) on the three fixture PDFs, compared with the TEI GROBID
made of the same PDFs (fixtures/tei), then a one-command build from the PDF folder explored through a real MCP client.

The thresholds are below what the parser reaches today (docs/real-papers.md gives the figures): they fail when a
change loses headings, references or citation sentences, not when it moves a few.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from support.paths import FIXTURES
from support.server_helpers import text

from agenthop.corpus.convert.model import Paper
from agenthop.corpus.convert.outline import RESIDUE
from agenthop.corpus.convert.pdf_fallback import convert_pdfs_fallback, extract
from agenthop.corpus.convert.pdf_tei import write_tei
from agenthop.corpus.convert.tei import NS, parse_tei

PAPERS = ["2020.acl-main.207", "N18-3011", "s12984-016-0129-6"]
ARTIFICIAL = {"2020.acl-main.207": {"b57"}}  # the entry added to the fixture TEI (fixtures/README.md), not in the PDF
SPECTER = "paper:1ed3c473f7cade3d"  # as test_build_explore.py: the same IDs as the TEI build, titles being the same
GRAPH = "paper:bfd6511f1cda14f9"


def words(header: str) -> str:
    """A heading without its number, in lower-case words: '2.1 Node Types' -> 'node types'."""
    header = re.sub(r"^(\d+(\.\d+)*|[A-Z])\.?\s+", "", header.strip())
    return re.sub(r"[^a-z0-9]+", " ", header.lower()).strip()


@functools.cache
def pair_of(name: str, folder: Path) -> tuple[str, Paper, Paper]:
    """(name, the fallback's paper, GROBID's paper), both read by the one TEI converter."""
    tei = folder / f"{name}.tei.xml"
    tei.write_bytes(write_tei(extract(FIXTURES / "pdf" / f"{name}.pdf")))
    return name, parse_tei(tei), parse_tei(FIXTURES / "tei" / f"{name}.tei.xml")


@pytest.fixture(scope="session")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fallback")


@pytest.fixture(params=PAPERS)
def pair(request, scratch):
    return pair_of(request.param, scratch)


def test_the_title_and_abstract_are_grobids(pair):
    _, fallback, grobid = pair
    assert fallback.title == grobid.title
    assert fallback.abstract.split()[:20] == grobid.abstract.split()[:20]
    theirs, ours = set(words(grobid.abstract).split()), set(words(fallback.abstract).split())
    # Line-end hyphens are where the two may differ; GROBID also folds a footnote into N18-3011's abstract.
    assert len(theirs & ours) >= 0.95 * len(ours) and len(theirs & ours) >= 0.85 * len(theirs)


def test_nine_in_ten_of_grobids_headings_are_found(pair):
    """Every heading GROBID saw (subsections too) is a section header of the fallback's or a heading line in its text."""
    name, fallback, _ = pair
    heads = [
        h.text
        for h in ET.parse(FIXTURES / "tei" / f"{name}.tei.xml").getroot().iter(f"{{{NS}}}head")
        if (h.text or "").strip()
    ]
    headers = {words(s.header) for s in fallback.sections}
    body = " ".join(words(s.text) for s in fallback.sections)
    found = [h for h in heads if words(h) in headers or words(h) in body]
    assert len(found) >= 0.9 * len(heads), sorted(set(heads) - set(found))


def test_the_text_is_as_long_as_grobids_within_a_fifth(pair):
    _, fallback, grobid = pair
    ours, theirs = (sum(len(s.text) for s in p.sections) for p in (fallback, grobid))
    assert 0.8 * theirs <= ours <= 1.2 * theirs


def test_the_reference_list_matches_grobids(pair):
    name, fallback, grobid = pair
    real = [r for r in grobid.references if r.key not in ARTIFICIAL.get(name, set())]
    assert abs(len(fallback.references) - len(real)) <= 0.1 * len(real)
    titles = {words(r.title) for r in real if r.title}
    assert sum(1 for r in fallback.references if words(r.title) in titles) >= 0.8 * len(titles)
    assert sum(1 for r in fallback.references if r.year) >= 0.95 * sum(1 for r in real if r.year)
    # Citation markers linked to their entry: at least nine in ten of the sentences GROBID found.
    assert sum(1 for r in fallback.references if r.context) >= 0.9 * sum(1 for r in real if r.context)


def test_bookmarks_give_the_section_levels(scratch):
    """The BMC paper has an outline: its subsections fold into their sections (GROBID lists them flat)."""
    _, fallback, grobid = pair_of("s12984-016-0129-6", scratch)
    assert [s.header for s in fallback.sections][:5] == [
        "Background",
        "Methods",
        "Results",
        "Discussion",
        "Conclusions",
    ]
    methods = next(s.text for s in fallback.sections if s.header == "Methods")
    assert "Scanning the array and selecting the optimal stimulation patterns" in methods
    assert len(grobid.sections) > len(fallback.sections)


def blank_pdf(lines: tuple[str, ...] = ()) -> bytes:
    """A valid one-page PDF: with no text layer, as a scan without OCR is, or with ``lines`` in one 11-point font."""
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"]
    if lines:
        shown = b" ".join(b"(%s) Tj 0 -14 Td" % line.encode("latin-1") for line in lines)
        stream = b"BT /F1 11 Tf 72 720 Td " + shown + b" ET"
        objects += [
            page + b" /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    else:
        objects.append(page + b" >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_unreadable_pdfs_are_named_with_the_reason(tmp_path):
    (tmp_path / "scan.pdf").write_bytes(blank_pdf())
    (tmp_path / "junk.pdf").write_bytes(b"these bytes are no PDF at all")
    teis, failures, _ = convert_pdfs_fallback(
        [tmp_path / "scan.pdf", tmp_path / "junk.pdf"], tmp_path / "cache", echo=lambda _: None
    )
    assert teis == []
    assert str(failures[0]) == f"{tmp_path / 'scan.pdf'}: no text layer found (a scanned PDF needs OCR, or GROBID)"
    assert str(failures[1]).startswith(f"{tmp_path / 'junk.pdf'}: not a readable PDF (")


def test_text_without_any_heading_is_kept_as_main_text(tmp_path):
    note = ("A short note without headings", "It has a first paragraph of plain text,", "set in one font and one size.")
    (tmp_path / "note.pdf").write_bytes(blank_pdf(note))
    [tei], failures, _ = convert_pdfs_fallback([tmp_path / "note.pdf"], tmp_path / "cache", echo=lambda _: None)
    paper = parse_tei(tei)
    assert failures == [] and paper.title == note[0]
    assert [(s.header, s.text) for s in paper.sections] == [("Main text", " ".join(note[1:]))]


def build(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agenthop.server", "corpus", "build", *args], capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict, str]:
    root = tmp_path_factory.mktemp("pdf-build")
    folder = root / "papers"
    shutil.copytree(FIXTURES / "pdf", folder)
    done = build(str(folder), "--out", str(root / "corpus.sqlite"), "--tei-cache", str(folder / "tei-cache"))
    assert done.returncode == 0, done.stderr
    return root, json.loads(done.stdout), done.stderr


@pytest.mark.slow
def test_one_command_builds_a_labelled_fallback_corpus_and_a_rerun_reads_the_cache(built):
    root, summary, stderr = built
    assert summary["pdfs"]["parser"] == "fallback" and "lower fidelity" in summary["pdfs"]["parser_note"]
    assert (summary["pdfs"]["pdfs"], summary["pdfs"]["converted"], summary["pdfs"]["skipped"]) == (3, 3, 0)
    assert summary["pdfs"]["pages_parsed"] == 30
    assert stderr.startswith("parser: fallback (lower fidelity")
    assert summary["converted"]["papers_with_text"] == 3 and summary["converted"]["citations_in_set"] >= 1
    # Entries whose title the patterns could not find keep their printed text (3 were dropped before); the
    # one entry whose "title" is the rest of its author list is no work's title, and is dropped as untitled.
    assert summary["converted"]["references_dropped"] == 1 and summary["pdfs"]["unlike_papers"] == []
    assert "(only authors William L)" in summary["converted"]["references_dropped_examples"][0]
    # The cache sits inside the PDF folder here: a re-run must not read it as more inputs.
    again = build(
        str(root / "papers"), "--out", str(root / "again.sqlite"), "--tei-cache", str(root / "papers" / "tei-cache")
    )
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert (rerun["pdfs"]["from_cache"], rerun["pdfs"]["pages_parsed"], rerun["converted"]["papers_in_set"]) == (
        3,
        0,
        3,
    )


@pytest.mark.slow
def test_bad_pdfs_stop_the_fallback_build_unless_skipped(built, tmp_path):
    root, _, _ = built
    folder = tmp_path / "papers"
    shutil.copytree(FIXTURES / "pdf", folder)
    (folder / "scan.pdf").write_bytes(blank_pdf())
    stopped = build(str(folder), "--out", str(tmp_path / "c.sqlite"))
    assert stopped.returncode == 1 and not (tmp_path / "c.sqlite").exists()
    assert (
        f"1 PDF could not be converted (the others are converted and kept for the next run):\n  {folder / 'scan.pdf'}: no text layer"
        in stopped.stderr
    )
    skipped = build(str(folder), "--out", str(tmp_path / "c.sqlite"), "--skip-bad")
    assert skipped.returncode == 0, skipped.stderr
    assert json.loads(skipped.stdout)["pdfs"]["skipped_pdfs"][0]["pdf"] == str(folder / "scan.pdf")
    assert json.loads(skipped.stdout)["converted"]["bad_files"] == 1  # the skipped PDF is a bad file too


@pytest.mark.anyio
async def test_the_fallback_corpus_links_a_citation_both_ways(built):
    root, _, _ = built
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agenthop.server",
            "serve",
            "--corpus",
            str(root / "corpus.sqlite"),
            "--log",
            str(root / "log.sqlite"),
        ],
    )
    async with Client(params, read_timeout_seconds=60) as client:
        refs = await client.call_tool("get_references", {"paper_id": SPECTER})
        info = await client.call_tool("get_paper_info", {"paper_id": GRAPH})
        sections = await client.call_tool("list_sections", {"paper_id": GRAPH})
    cited = {r["paper_id"]: r for r in refs.structured_content["references"]}
    assert "(Ammar et al., 2018)" in cited[GRAPH]["context"] and cited[GRAPH]["has_text"] is True
    [citer] = info.structured_content["cited_by"]["papers"]
    assert citer["paper_id"] == SPECTER and citer["context"] == cited[GRAPH]["context"]
    assert [s["header"] for s in sections.structured_content["sections"]][:3] == [
        "1 Introduction",
        "2 Structure of The Literature Graph",
        "3 Extracting Metadata",
    ]
    assert "Cited by 1 paper of this corpus:" in text(info)


def test_an_acl_paper_gets_its_sections_acknowledgements_and_appendix(scratch):
    """SPECTER's sections as the PDF prints them: numbered subsections folded in, the acknowledgements a section of
    their own (as GROBID places them), the appendix after the references."""
    _, fallback, grobid = pair_of("2020.acl-main.207", scratch)
    # Table cells the parser left in the running text sit in a section of their own, after the paper's sections.
    assert fallback.sections[-1].header == RESIDUE
    assert [s.header for s in fallback.sections[:-1]] == [
        "1 Introduction",
        "2 Model",
        "3 SCIDOCS Evaluation Framework",
        "4 Experiments",
        "5 Results",
        "6 Analysis",
        "7 Related Work",
        "8 Conclusions and Future Work",
        "Acknowledgements",
        "Apdx_A: Appendix A - Baseline Details",
    ]
    model = next(s.text for s in fallback.sections if s.header == "2 Model")
    assert "2.1 Overview" in model and "2.3 Citation-Based Pretraining Objective" in model
    assert "Acknowledgement" in [s.header for s in grobid.sections]
