"""GROBID TEI XML (what GROBID's processFulltextDocument returns for a PDF) to a Paper.

GROBID writes sections as flat sibling <div>s whose <head n="2.1"> carries the
numbering, so a subsection is recognised by its number: "2.1" is rolled into the
open section "2". An unnumbered head inside a numbered paper is a paragraph heading
and is rolled in too; in a paper with no numbering at all every head is a section.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agenthop.corpus.convert.model import ConvertError, Paper, Reference
from agenthop.corpus.convert.outline import Outline, depth_of, numbered_header
from agenthop.corpus.convert.text import arxiv_of, clean, doi_of, pmcid_of, year_of
from agenthop.corpus.convert.xmltree import UNLINKED, Reading, local, parse, read_paragraph, text_of
from agenthop.corpus.licences import names_a_licence

NS = "http://www.tei-c.org/ns/1.0"
T = f"{{{NS}}}"
_XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
# Floating material, left out of the text and counted: figures and tables (GROBID puts their captions and cells
# there), and notes (footnotes, which GROBID lifts out of the running text).
_SKIP = frozenset({"figure", "note", "table", "graphic"})
_FORMULAS = frozenset({"formula"})
_NOT_TEXT = frozenset({"head", "div", "listBibl"})


def is_tei(root: ET.Element) -> bool:
    return root.tag == f"{T}TEI" or root.tag == f"{T}teiCorpus"


def _person(el: ET.Element) -> str:
    pers = el.find(f"{T}persName")
    if pers is None:
        return ""
    names = [clean(f.text) for f in pers.findall(f"{T}forename")] + [clean(s.text) for s in pers.findall(f"{T}surname")]
    return " ".join(n for n in names if n)


def _ids(bibl: ET.Element) -> dict[str, str]:
    ids: dict[str, str] = {}
    for idno in bibl.iter(f"{T}idno"):
        kind = (idno.get("type") or "").lower()
        value = clean(idno.text)
        if kind == "doi" and (doi := doi_of(value)):
            ids.setdefault("doi", doi)
        elif kind == "arxiv" and (arxiv := arxiv_of(value)):
            ids.setdefault("arxiv", arxiv)
        elif kind == "pmcid" and (pmcid := pmcid_of(value)):
            ids.setdefault("pmcid", pmcid)
    return ids


def _title(bibl: ET.Element) -> str:
    for path in (f"{T}analytic/{T}title", f"{T}monogr/{T}title"):
        for title in bibl.findall(path):
            if title.get("type", "main") == "main" and text_of(title):
                return text_of(title)
    return ""


def _year(bibl: ET.Element) -> int | None:
    for date in bibl.iter(f"{T}date"):
        year = year_of(date.get("when")) or year_of(date.text)
        if year:
            return year
    return None


def _pages(bibl: ET.Element) -> str | None:
    """'12–22' from ``<biblScope unit="page" from="12" to="22"/>`` (or its text), as the proceedings print it."""
    for scope in bibl.iter(f"{T}biblScope"):
        if scope.get("unit") != "page":
            continue
        first, last = clean(scope.get("from")), clean(scope.get("to"))
        if first and last and first.isdigit() and last.isdigit() and int(first) <= int(last):
            return f"{first}–{last}"
        if first.isdigit() and not last:
            return first
        text = text_of(scope)
        if text and re.fullmatch(r"\d+\s*[-–—]+\s*\d+|\d+", text):
            return re.sub(r"\s*[-–—]+\s*", "–", text)
    return None


def _venue(bibl: ET.Element) -> str | None:
    for title in bibl.findall(f"{T}monogr/{T}title"):
        if title.get("level") in ("j", "m", "s") and title.get("type") != "abbrev" and text_of(title):
            return text_of(title)
    return None


def formula_text(el: ET.Element) -> str:
    """A formula as GROBID read it from the PDF (its characters in reading order), then its number; or ``[formula]``."""
    label = el.find(f"{T}label")
    parts = [el.text or ""]
    for child in el:
        parts += ([] if child is label else list(child.itertext())) + [child.tail or ""]
    shown = clean("".join(parts)) or "[formula]"
    return f"{shown} {text_of(label)}" if label is not None and text_of(label) else shown


def _raw(bibl: ET.Element) -> str:
    """The entry as printed, where GROBID kept it (``<note type="raw_reference">``)."""
    for note in bibl.findall(f"{T}note"):
        if note.get("type") == "raw_reference" and text_of(note):
            return text_of(note)
    return ""


def _reference(bibl: ET.Element, index: int) -> Reference:
    analytic = bibl.find(f"{T}analytic")
    author_parent = (
        analytic if analytic is not None and analytic.find(f"{T}author") is not None else bibl.find(f"{T}monogr")
    )
    authors = [_person(a) for a in author_parent.findall(f"{T}author")] if author_parent is not None else []
    title = _title(bibl)
    venue = _venue(bibl)
    if title and venue == title:
        venue = None
    return Reference(
        key=bibl.get(_XML_ID) or f"ref{index}",
        title=title,
        year=_year(bibl),
        authors=[a for a in authors if a],
        venue=venue,
        ids=_ids(bibl),
        raw="" if title else _raw(bibl),  # shown in place of the title GROBID could not find
        pages=_pages(bibl),
    )


def _citation_keys(el: ET.Element) -> list[str] | None:
    if local(el.tag) != "ref" or el.get("type") != "bibr":
        return None
    keys = [t.lstrip("#") for t in (el.get("target") or "").split() if t.strip("#")]
    # A marker GROBID could not tie to an entry keeps its text, for linking by author and year.
    return keys or [UNLINKED + clean("".join(el.itertext()))]


def parse_tei(path: Path) -> Paper:
    root = parse(path)
    if not is_tei(root):
        raise ConvertError(
            f"{path}: not TEI XML (root element <{local(root.tag)}>, expected <TEI> in the TEI namespace)"
        )
    header = root.find(f"{T}teiHeader")
    if header is None:
        raise ConvertError(
            f"{path}: TEI without a <teiHeader>; expected GROBID's full-text output (processFulltextDocument)"
        )
    source_bibl = header.find(f"{T}fileDesc/{T}sourceDesc/{T}biblStruct")
    title = text_of(header.find(f"{T}fileDesc/{T}titleStmt/{T}title")) or (
        _title(source_bibl) if source_bibl is not None else ""
    )

    paper = Paper(source=str(path), title=title)
    if source_bibl is not None:
        analytic = source_bibl.find(f"{T}analytic")
        if analytic is not None:
            paper.authors = [a for a in (_person(el) for el in analytic.findall(f"{T}author")) if a]
        paper.ids = _ids(source_bibl)
        paper.year = _year(source_bibl)
        paper.venue = _venue(source_bibl)
        paper.pages = _pages(source_bibl)
    if paper.year is None:
        date = header.find(f"{T}fileDesc/{T}publicationStmt/{T}date")
        paper.year = year_of(date.get("when")) if date is not None else None

    abstract = header.find(f"{T}profileDesc/{T}abstract")
    if abstract is not None:
        paras = [text_of(p) for p in abstract.iter(f"{T}p")] or [text_of(abstract)]
        paper.abstract = "\n\n".join(p for p in paras if p) or None

    refs: dict[str, Reference] = {}
    for i, bibl in enumerate(root.iterfind(f".//{T}listBibl/{T}biblStruct")):
        ref = _reference(bibl, i)
        if ref.key not in refs:
            refs[ref.key] = ref
            paper.references.append(ref)

    outline = Outline()
    reading = Reading(refs, _citation_keys, _SKIP, _FORMULAS, formula_text)
    text = root.find(f"{T}text")
    if text is not None:
        body = text.find(f"{T}body")
        if body is not None:
            _read_divs(body, outline, reading)
            for el in body:  # GROBID puts figures, tables and footnotes after the divisions
                if local(el.tag) in _SKIP:
                    reading.skipped[local(el.tag)] += 1
        back = text.find(f"{T}back")
        if back is not None:
            _read_back(back, outline, reading)
    paper.sections = outline.finish()
    paper.skipped = dict(reading.skipped)
    paper.unlinked = reading.unlinked
    paper.licence = _licence(header)
    return paper


def _licence(header: ET.Element) -> str | None:
    """The licence in ``<availability>``: a ``<licence target>`` URL or its words; else the availability's words if
    they name a licence (GROBID copies the PDF's copyright line there, which is not one)."""
    availability = header.find(f"{T}fileDesc/{T}publicationStmt/{T}availability")
    if availability is None:
        return None
    for licence in availability.iter(f"{T}licence"):
        if licence.get("target") or text_of(licence):
            return clean(licence.get("target")) or text_of(licence)
    words = text_of(availability)
    return words if names_a_licence(words) else None


def _paragraphs(div: ET.Element, outline: Outline, reading: Reading) -> None:
    """The blocks of one division: paragraphs, formulas, lists; figures, tables and notes are counted and left out."""
    for el in div:
        name = local(el.tag)
        if name in _FORMULAS:
            outline.formula(formula_text(el))
        elif name in _SKIP:
            reading.skipped[name] += 1
        elif name and name not in _NOT_TEXT:
            read_paragraph(el, outline, reading)


# Headers that open a part of a paper of their own: in unnumbered output they end a heading's group.
_MAIN_HEADERS = frozenset(
    {
        "introduction",
        "background",
        "methods",
        "method",
        "materials and methods",
        "patients and methods",
        "subjects and methods",
        "results",
        "results and discussion",
        "discussion",
        "conclusion",
        "conclusions",
        "summary",
        "acknowledgements",
        "acknowledgments",
    }
)


def _has_text(div: ET.Element) -> bool:
    return any(local(el.tag) == "p" for el in div)


def _read_divs(parent: ET.Element, outline: Outline, reading: Reading, nested: bool = False) -> None:
    """Flat GROBID divs to top-level sections.

    In a paper without numbers, a heading with no text of its own followed by headed divs ("Results", then
    "Clinical characteristics", ...) is a section with those rolled in, as "2" takes "2.1" in a numbered paper;
    its group ends at the next heading without text or the next main heading ("Discussion").
    """
    numbered_paper = any(head.get("n") for head in parent.iter(f"{T}head"))
    inside_numbered = False
    grouping = False
    for div in parent.findall(f"{T}div"):
        head = div.find(f"{T}head")
        number = head.get("n") if head is not None else None
        header = numbered_header(number, text_of(head))
        depth = depth_of(number)
        if not numbered_paper and not nested and head is not None:
            empty = not _has_text(div)
            if grouping and not empty and header.lower() not in _MAIN_HEADERS:
                outline.sub(header)
            else:
                outline.top(header)
                grouping = empty
        elif (
            nested
            or (depth is not None and depth > 1 and inside_numbered)
            or (depth is None and numbered_paper and inside_numbered)
        ):
            outline.sub(header)
        else:
            outline.top(header)
            inside_numbered = depth == 1
        _paragraphs(div, outline, reading)
        if div.find(f"{T}div") is not None:
            _read_divs(div, outline, reading, nested=True)  # TEI from other tools nests subsections


def _read_back(back: ET.Element, outline: Outline, reading: Reading) -> None:
    appendix = 0
    for div in back.findall(f"{T}div"):
        kind = div.get("type")
        if kind == "annex":
            subs = div.findall(f"{T}div")
            # The annex's own paragraphs (text before its first sub-division) are a section of their own.
            own = [div] if not subs or any(local(el.tag) == "p" for el in div) else []
            for sub in own + subs:
                head = sub.find(f"{T}head")
                letter = chr(ord("A") + appendix % 26)
                appendix += 1
                outline.top(
                    f"Apdx_{letter}: {numbered_header(head.get('n') if head is not None else None, text_of(head)) or 'Appendix'}"
                )
                _paragraphs(sub, outline, reading)
        elif kind in ("acknowledgement", "acknowledgment", "funding", "availability"):
            head = div.find(f"{T}head")
            outline.top(text_of(head) or kind.capitalize())
            for sub in [div, *div.findall(f"{T}div")]:
                _paragraphs(sub, outline, reading)
