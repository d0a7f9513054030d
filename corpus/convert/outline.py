"""Turn a paper's headed blocks into top-level sections, rolling subsections into their parent.

This is what the release does: only top-level sections exist; a subsection's heading
line stays in its parent's text, so a recall label that names a subsection still
finds it verbatim.
"""

from __future__ import annotations

import re

from agenthop.corpus.convert.model import Section

UNTITLED = "Main text"  # header of paragraphs that come before any heading
# Sections of their own for what a converter left in the running text but is not prose (see Outline.paragraph).
RESIDUE = "Table and figure text (as extracted)"
FOOTNOTES = "Footnotes (as extracted)"

_NUMBER = re.compile(r"^[(\[]?[-+±−]?(\d[\d.,%±]*|\.\d+)[)\]%*]?$|^[-–—/|]$")
_FORMULA = re.compile(r"[→←↔∈∉≤≥=∑∏∀∃⊂⊆∪∩×^{}<>\[\]]|[\u0391-\u03a9\u03b1-\u03c9].*[\u0391-\u03a9\u03b1-\u03c9]")
_MATH = re.compile(r"[=→←↦≥≤∈∑∏∀∃∼≈×·^∗]|\b(softmax|exp|log|max|min|argmax|tanh|sigmoid|sim)\b")
_FOOTNOTE = re.compile(r"^\d{1,2}\s+(https?://\S+|www\.\S+)")


def is_residue(block: str) -> bool:
    """Table cells run into the prose: a paragraph of eight words or more, at least 40% of them numbers. (Formulas,
    whose letters stand one by one, are running text: they come in by :meth:`Outline.formula`, never tested.)"""
    tokens = block.split()
    if len(tokens) < 8:
        return False
    return sum(1 for t in tokens if _NUMBER.match(t)) >= 0.4 * len(tokens)


def is_footnote(block: str) -> bool:
    """A footnote left in the running text: its number, then a link (the commonest footnote in these papers)."""
    return len(block) < 300 and bool(_FOOTNOTE.match(block))


def is_junk_header(header: str) -> bool:
    """A heading that is a page number, a table row or a formula ("19 20.", "2 Constant [τ, Γ]→const"), not a
    section's name: no word of two letters, letters spaced one by one, or mathematics."""
    if header.startswith("Apdx_"):  # an appendix's heading, as the readers name it
        header = header.partition(":")[2]
    words = re.findall(r"[^\W\d_]{2,}", header)
    if not words:
        return True
    tokens = header.split()
    if len(tokens) >= 6 and sum(1 for t in tokens if len(t) == 1) >= 0.5 * len(tokens):
        return True
    # Mathematics in a heading that has words of its own is part of its name ("3 Comments on the $[T_c,3T_c]$ strip").
    prose = re.sub(r"\$[^$]*\$", " ", header)
    return bool(_FORMULA.search(header)) and len(re.findall(r"[^\W\d_]{3,}", prose)) < 3


def _start(text: str) -> str:
    return "".join(ch for ch in text[:60].lower() if ch.isalnum())[:30]


def _same_start(a: str, b: str) -> bool:
    """Do two sections open alike (the shorter opening, of twelve letters or more, begins the longer)?"""
    n = min(len(a), len(b))
    return n >= 12 and a[:n] == b[:n]


class Outline:
    def __init__(self) -> None:
        self.sections: list[Section] = []
        self._blocks: list[str] = []
        self._header: str | None = None
        self._residue: list[str] = []
        self._footnotes: list[str] = []

    def _close(self) -> None:
        if self._header is not None or self._blocks:
            text = "\n\n".join(b for b in self._blocks if b)
            if text or self._header:
                self.sections.append(Section(self._header or UNTITLED, text))
        self._blocks = []
        self._header = None

    def top(self, header: str) -> None:
        """Start a new top-level section."""
        self._close()
        self._header = header or UNTITLED

    def sub(self, header: str) -> None:
        """A subsection heading: a line in the current section (or a section of its own if none is open)."""
        if self._header is None and not self._blocks:
            self.top(header)
        elif header:
            self._blocks.append(header)

    def paragraph(self, text: str) -> None:
        """A block of running text; table or figure text and footnotes found there go to sections of their own."""
        if not text:
            return
        if is_residue(text):
            self._residue.append(text)
        elif is_footnote(text):
            self._footnotes.append(text)
        else:
            self._blocks.append(text)

    def formula(self, text: str) -> None:
        """A displayed formula: part of the running text where it stands; but a "formula" of numbers with no
        mathematical sign is a table row the converter took for one, and goes with the table text."""
        if not text:
            return
        if is_residue(text) and not _MATH.search(text):
            self._residue.append(text)
        else:
            self._blocks.append(text)

    def finish(self) -> list[Section]:
        self._close()
        # A section with a header but no text carries nothing to read: drop it.
        sections = [s for s in self.sections if s.text.strip()]
        kept: list[Section] = []
        seen: dict[str, str] = {}  # header -> the start of its first section's text
        for section in sections:
            header = section.header
            if header != UNTITLED and is_junk_header(header):
                # A page number or a formula taken for a heading: its text goes on the section before.
                if kept:
                    kept[-1] = Section(kept[-1].header, kept[-1].text + "\n\n" + section.text)
                else:
                    kept.append(Section(UNTITLED, section.text))
                continue
            if header in seen and kept:
                if _same_start(_start(section.text), seen[header]):
                    continue  # the same section again, as the converter read it twice: drop the copy
                kept[-1] = Section(kept[-1].header, kept[-1].text + "\n\n" + section.text)
                continue
            seen[header] = _start(section.text)
            kept.append(section)
        if self._residue:
            kept.append(Section(RESIDUE, "\n\n".join(self._residue)))
        if self._footnotes:
            kept.append(Section(FOOTNOTES, "\n\n".join(self._footnotes)))
        return kept


def numbered_header(number: str | None, title: str) -> str:
    """'2.1' + 'Node Types' -> '2.1 Node Types' (the number is part of the real header)."""
    number = (number or "").strip().rstrip(".")
    title = title.strip()
    if number and title:
        return f"{number} {title}"
    return title or number


def depth_of(number: str | None) -> int | None:
    """'2' -> 1, '2.1' -> 2, '2.1.3' -> 3; None when there is no number."""
    number = (number or "").strip().rstrip(".")
    if not number:
        return None
    return number.count(".") + 1
