"""The text lines of a PDF with their font size, weight and position, read with pdfminer.six (MIT, pure Python).

Only what the fallback parser needs: lines in pdfminer's reading order (its layout analysis puts the
left column before the right one), grouped into the text boxes it found, and the document outline
(bookmarks) when the PDF has one.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pdfminer.high_level import extract_pages
from pdfminer.layout import LAParams, LTChar, LTFigure, LTTextBox, LTTextLine
from pdfminer.pdfdocument import PDFDocument, PDFNoOutlines
from pdfminer.pdfparser import PDFParser

_UNMAPPED = re.compile(r"\(cid:\d+\)")
_SECTION_NUMBER = re.compile(r"(?:\d{1,2}(?:\.\d{1,2})*|[A-H](?:\.\d{1,2})*)\.?")
_BOLD_MARKS = ("bold", "black", "heavy", "semibold", "demi", "medi", ".b", "-b")


@dataclass(frozen=True)
class Line:
    text: str
    size: float  # the most common character size, in points
    bold: bool  # every letter set in a bold face
    x0: float
    top: float  # distance from the page's top edge
    page: int
    box: int  # the text box (paragraph-like block) it belongs to, numbered through the document


@dataclass(frozen=True)
class Layout:
    lines: list[Line]
    pages: int
    body_size: float  # the size most of the text is set in
    outline: list[tuple[int, str]]  # (level, title) of the PDF's bookmarks, in order; [] without any


def _is_bold(fontname: str) -> bool:
    name = fontname.lower().split("+")[-1]
    return any(mark in name for mark in _BOLD_MARKS)


def _line(el: LTTextLine, page: int, page_height: float, box: int) -> Line | None:
    chars = [c for c in el if isinstance(c, LTChar)]
    # NFKC turns ligatures (the "fi" glyph) back into letters; (cid:N) is a glyph pdfminer could not map (bullets).
    text = " ".join(_UNMAPPED.sub(" ", unicodedata.normalize("NFKC", el.get_text())).split())
    if not chars or not text:
        return None
    sizes = Counter(round(c.size, 1) for c in chars if c.get_text().strip())
    letters = [c for c in chars if c.get_text().isalpha()]
    bold = bool(letters) and all(_is_bold(c.fontname) for c in letters)
    return Line(text, sizes.most_common(1)[0][0] if sizes else 0.0, bold, el.x0, page_height - el.y1, page, box)


def _outline(path: Path) -> list[tuple[int, str]]:
    with open(path, "rb") as fh:
        doc = PDFDocument(PDFParser(fh))
        try:
            return [(level, " ".join(str(title).split())) for level, title, *_ in doc.get_outlines() if title]
        except PDFNoOutlines:
            return []


def _text_boxes(container) -> Iterator[LTTextBox]:
    for el in container:
        if isinstance(el, LTTextBox):
            yield el
        elif isinstance(el, LTFigure):
            yield from _text_boxes(el)


def _same_baseline_joined(lines: list[Line]) -> list[Line]:
    """Pieces of one printed line that pdfminer split (a justified line with a wide gap, or a heading's number
    set apart from its words: "1" then "Introduction") -> one line, left to right."""
    out: list[Line] = []
    for line in lines:
        prev = out[-1] if out else None
        if prev is None or prev.page != line.page or abs(prev.top - line.top) >= 2:
            out.append(line)
            continue
        number = _SECTION_NUMBER.fullmatch(prev.text) is not None and 0 < line.x0 - prev.x0 < 60
        if line.box == prev.box or number:
            left, right = (prev, line) if prev.x0 <= line.x0 else (line, prev)
            main = line if number else prev  # a heading's number takes the size and weight of its words
            out[-1] = Line(f"{left.text} {right.text}", main.size, main.bold, left.x0, main.top, main.page, main.box)
        else:
            out.append(line)
    return out


def read_layout(path: Path) -> Layout:
    """Every text line of the PDF. Raises whatever pdfminer raises on a PDF it cannot read."""
    lines: list[Line] = []
    box = 0
    pages = 0
    # all_texts: some PDFs (the ACL Anthology's, for one) draw whole pages as form objects, which pdfminer
    # reads as figures; their text is analysed too, and small print from real figures is dropped later.
    for page_no, page in enumerate(extract_pages(path, laparams=LAParams(all_texts=True))):
        pages += 1
        for el in _text_boxes(page):
            box += 1
            for sub in el:
                if isinstance(sub, LTTextLine) and (line := _line(sub, page_no, page.height, box)) is not None:
                    lines.append(line)
    lines = _same_baseline_joined(lines)
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    body = weights.most_common(1)[0][0] if weights else 0.0
    try:
        outline = _outline(path)
    except Exception:  # a broken outline must not cost the text: headings then come from font sizes
        outline = []
    return Layout(lines, pages, body, outline)
