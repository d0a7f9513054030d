"""What the fallback parser found -> TEI in GROBID's shape, so the one TEI converter reads it like GROBID's output.

Citation markers in the running text become ``<ref type="bibr" target="#bN">`` where they name an entry
of the reference list: a number the list uses, or a first author's surname with a year.
"""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET

from agenthop.corpus.convert.pdf_model import VERSION, Entry, Extracted
from agenthop.corpus.convert.tei import NS

_XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
_NUMERIC = re.compile(r"\[(\d{1,3}(?:\s*[,–-]\s*\d{1,3})*)\]")
_PARENTHETICAL = re.compile(r"\(([^()]{3,300}?(?:1[89]|20)\d\d[a-z]?)\)")
_NARRATIVE = re.compile(
    r"\b([A-Z][\w'’-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'’-]+)?\s+\(((?:1[89]|20)\d\d)[a-z]?\)"
)
_ONE_CITATION = re.compile(r"([A-Z][\w'’-]+)[^;]*?((?:1[89]|20)\d\d)[a-z]?\s*$")
_MAX_RANGE = 30
_ACKNOWLEDGEMENTS = frozenset({"acknowledgements", "acknowledgments", "acknowledgement", "acknowledgment"})

ET.register_namespace("", NS)


def _t(tag: str) -> str:
    return f"{{{NS}}}{tag}"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def _surname(author: str) -> str:
    """'Waleed Ammar' -> 'ammar'; 'Popovic MR' -> 'popovic'; 'Ammar, W.' -> 'ammar'."""
    if "," in author:
        return _fold(author.split(",")[0].strip())
    words = [w for w in author.split() if w.strip(".")]
    if len(words) >= 2 and words[-1].isupper() and len(words[-1]) <= 3:
        return _fold(words[0])  # Vancouver style: surname first, initials after
    return _fold(words[-1]) if words else ""


class Markers:
    """Finds citation markers in a paragraph and the entries they name."""

    def __init__(self, entries: list[Entry]):
        self.by_label = {e.label: e.key for e in entries if e.label}
        self.by_author_year: dict[tuple[str, str], str] = {}
        for e in entries:
            if e.authors and e.year:
                self.by_author_year.setdefault((_surname(e.authors[0]), e.year), e.key)

    def _numeric(self, inside: str) -> list[str]:
        keys: list[str] = []
        for part in re.split(r"\s*,\s*", inside):
            bounds = [int(x) for x in re.split(r"\s*[–-]\s*", part) if x]
            numbers = (
                range(bounds[0], bounds[-1] + 1)
                if len(bounds) == 2 and 0 < bounds[1] - bounds[0] < _MAX_RANGE
                else bounds
            )
            keys += [self.by_label[str(n)] for n in numbers if str(n) in self.by_label]
        return keys

    def _author_year(self, inside: str) -> list[str]:
        keys = []
        for part in inside.split(";"):
            m = _ONE_CITATION.search(part.strip())
            if m and (key := self.by_author_year.get((_fold(m.group(1)), m.group(2)))):
                keys.append(key)
        return keys

    def spans(self, text: str) -> list[tuple[int, int, list[str]]]:
        """(start, end, entry keys) of every marker that names at least one entry, in order, not overlapping."""
        found: list[tuple[int, int, list[str]]] = []
        if self.by_label:
            found += [
                (m.start(), m.end(), keys) for m in _NUMERIC.finditer(text) if (keys := self._numeric(m.group(1)))
            ]
        if self.by_author_year:
            found += [
                (m.start(), m.end(), keys)
                for m in _PARENTHETICAL.finditer(text)
                if (keys := self._author_year(m.group(1)))
            ]
            for m in _NARRATIVE.finditer(text):
                key = self.by_author_year.get((_fold(m.group(1)), m.group(2)))
                if key:
                    found.append((m.start(), m.end(), [key]))
        found.sort()
        spans, end = [], -1
        for start, stop, keys in found:
            if start >= end:
                spans.append((start, stop, keys))
                end = stop
        return spans


def _paragraph(parent: ET.Element, text: str, markers: Markers) -> None:
    p = ET.SubElement(parent, _t("p"))
    last: ET.Element | None = None
    pos = 0
    for start, end, keys in markers.spans(text):
        before = text[pos:start]
        if last is None:
            p.text = (p.text or "") + before
        else:
            last.tail = (last.tail or "") + before
        last = ET.SubElement(p, _t("ref"), {"type": "bibr", "target": " ".join(f"#{k}" for k in keys)})
        last.text = text[start:end]
        pos = end
    if last is None:
        p.text = (p.text or "") + text[pos:]
    else:
        last.tail = (last.tail or "") + text[pos:]


def _bibl(parent: ET.Element, entry: Entry) -> None:
    bibl = ET.SubElement(parent, _t("biblStruct"), {_XML_ID: entry.key})
    analytic = ET.SubElement(bibl, _t("analytic"))
    if entry.title:
        ET.SubElement(analytic, _t("title"), {"level": "a", "type": "main"}).text = entry.title
    for name in entry.authors:
        pers = ET.SubElement(ET.SubElement(analytic, _t("author")), _t("persName"))
        words = name.split()
        if len(words) > 1:
            ET.SubElement(pers, _t("forename"), {"type": "first"}).text = " ".join(words[:-1])
        ET.SubElement(pers, _t("surname")).text = words[-1] if words else name
    if entry.doi:
        ET.SubElement(bibl, _t("idno"), {"type": "DOI"}).text = entry.doi
    if entry.arxiv:
        ET.SubElement(bibl, _t("idno"), {"type": "arXiv"}).text = entry.arxiv
    monogr = ET.SubElement(bibl, _t("monogr"))
    if entry.venue:
        ET.SubElement(monogr, _t("title"), {"level": "j"}).text = entry.venue[:200]
    imprint = ET.SubElement(monogr, _t("imprint"))
    if entry.year:
        ET.SubElement(imprint, _t("date"), {"type": "published", "when": entry.year})
    ET.SubElement(bibl, _t("note"), {"type": "raw_reference"}).text = entry.raw


def write_tei(found: Extracted) -> bytes:
    tei = ET.Element(_t("TEI"))
    header = ET.SubElement(tei, _t("teiHeader"))
    file_desc = ET.SubElement(header, _t("fileDesc"))
    ET.SubElement(
        ET.SubElement(file_desc, _t("titleStmt")), _t("title"), {"level": "a", "type": "main"}
    ).text = found.title
    ET.SubElement(file_desc, _t("publicationStmt"))
    source = ET.SubElement(ET.SubElement(file_desc, _t("sourceDesc")), _t("biblStruct"))
    ET.SubElement(source, _t("analytic"))
    for kind, value in sorted(found.ids.items()):
        ET.SubElement(source, _t("idno"), {"type": "DOI" if kind == "doi" else "arXiv"}).text = value
    ET.SubElement(ET.SubElement(source, _t("monogr")), _t("imprint"))
    app_info = ET.SubElement(ET.SubElement(header, _t("encodingDesc")), _t("appInfo"))
    ET.SubElement(app_info, _t("application"), {"ident": "agenthop-pdf-fallback", "version": VERSION})
    markers = Markers(found.entries)
    if found.abstract:
        abstract = ET.SubElement(ET.SubElement(ET.SubElement(header, _t("profileDesc")), _t("abstract")), _t("div"))
        for text in found.abstract:
            _paragraph(abstract, text, markers)
    text_el = ET.SubElement(tei, _t("text"))
    body = ET.SubElement(text_el, _t("body"))
    back = ET.SubElement(text_el, _t("back"))
    annex = None
    div = section = None  # the division paragraphs go to; the open top-level one (outline subsections nest in it)
    for block in found.blocks:
        if block.heading is not None:
            if (
                _fold(block.heading.title).rstrip(".: ") in _ACKNOWLEDGEMENTS
            ):  # where GROBID puts it: a section of its own
                div = section = ET.SubElement(back, _t("div"), {"type": "acknowledgement"})
            elif block.back:
                annex = annex if annex is not None else ET.SubElement(back, _t("div"), {"type": "annex"})
                div = section = ET.SubElement(annex, _t("div"))
            elif block.heading.level > 1 and section is not None:
                div = ET.SubElement(section, _t("div"))
            else:
                div = section = ET.SubElement(body, _t("div"))
            number = block.heading.number
            if block.back and block.heading.title.lower().startswith("appendix"):
                number = None  # "A Appendix A - Details": the letter is in the words already
            head = ET.SubElement(div, _t("head"), {"n": number} if number else {})
            head.text = block.heading.title
        elif block.paragraph is not None:
            if div is None:
                div = ET.SubElement(body, _t("div"))
            _paragraph(div, block.paragraph, markers)
    references = ET.SubElement(ET.SubElement(back, _t("div"), {"type": "references"}), _t("listBibl"))
    for entry in found.entries:
        _bibl(references, entry)
    return ET.tostring(tei, encoding="utf-8", xml_declaration=True)
