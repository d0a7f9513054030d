"""The fallback PDF parser: a PDF's text layer -> GROBID-shaped TEI, with no service, no network and no model.

It sees what the page shows and guesses the rest, so it is labelled lower fidelity wherever a build uses it:
- **Title**: the largest text near the top of page 1.
- **Headings**: the PDF's outline (bookmarks) when it has one; otherwise lines set larger than the body text,
  or wholly bold, that are short and look like headings (numbered, or a usual heading word).
  Numbers stay in the header (``2.1 Overview``); the TEI converter rolls subsections into their parent.
- **Abstract**: the text under an "Abstract" heading (or after a line starting "Abstract").
- **References**: the entries under "References"/"Bibliography", split by their numbers or their hanging
  indent, each kept as a metadata-only entry with what a pattern can find (authors, year, title, DOI, arXiv ID).
- **Citation markers**: ``[3]``, ``[2, 5-7]``, ``(Ammar et al., 2018)`` and ``Ammar et al. (2018)`` are linked
  to the entry they name, so those references get their citation sentence.
Small print (footnotes, captions, table cells) and page numbers are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from agenthop.corpus.convert.grobid import PdfFailure, TeiCache, pdf_digest
from agenthop.corpus.convert.pdf_layout import Layout, Line, read_layout
from agenthop.corpus.convert.pdf_model import VERSION, Block, Entry, Extracted, Heading
from agenthop.corpus.convert.pdf_tei import write_tei

_HEADING_WORDS = frozenset(
    {
        "abstract",
        "introduction",
        "background",
        "related work",
        "related works",
        "method",
        "methods",
        "methodology",
        "approach",
        "experiments",
        "experimental setup",
        "results",
        "discussion",
        "conclusion",
        "conclusions",
        "conclusions and future work",
        "future work",
        "limitations",
        "acknowledgments",
        "acknowledgements",
        "acknowledgment",
        "acknowledgement",
        "references",
        "bibliography",
        "appendix",
        "materials and methods",
        "evaluation",
        "analysis",
        "ethics statement",
        "funding",
        "abbreviations",
        "competing interests",
        "authors' contributions",
        "availability of data and materials",
        "declarations",
    }
)
_REFERENCE_HEADINGS = frozenset({"references", "bibliography", "literature cited", "works cited"})
_NUMBERED = re.compile(r"^(?P<n>(?:\d{1,2}(?:\.\d{1,2})*|[A-H](?:\.\d{1,2})*|[IVX]{1,5}))\.?\s+(?P<title>[A-Z].*)$")
_ENTRY_NUMBER = re.compile(r"^\s*(?:\[(\d{1,3})\]|(\d{1,3})\.)\s+")
_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table|Algorithm)\s+[A-Z]?\d+[.:]")
_INITIALS = r"[A-ZÀ-ÖØ-Þ]{1,3}"
_VANCOUVER_AUTHORS = re.compile(
    rf"^((?:[^,.;]{{2,40}}?\s{_INITIALS},\s*)*[^,.;]{{2,40}}?\s{_INITIALS}(?:,\s*et al)?)\.\s+"
)
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)[a-z]?\b")
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)])")
_ARXIV = re.compile(r"arXiv:\s?(\d{4}\.\d{4,5})", re.IGNORECASE)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower().replace("-", " ")).strip()


def _heading_of(text: str) -> Heading:
    m = _NUMBERED.match(text)
    if m:
        return Heading(m.group("n"), m.group("title").strip())
    return Heading(None, text.strip())


def _plain(text: str) -> str:
    """A heading's words without its number: '2.1 Overview' -> 'overview'."""
    return _norm(_heading_of(text).title)


class _Headings:
    """Decides which lines are headings: from the outline when there is one, else from fonts and wording."""

    def __init__(self, layout: Layout):
        self.body = layout.body_size
        self.outline: dict[str, int] = {}  # plain title -> its shallowest level (a title may recur, as in abstracts)
        for level, title in layout.outline:
            for key in (_plain(title), _norm(title)):
                self.outline[key] = min(level, self.outline.get(key, level))
        levels = sorted({level for level, _ in layout.outline})
        single_root = len(levels) > 1 and sum(1 for level, _ in layout.outline if level == levels[0]) == 1
        self.top = levels[1] if single_root else (levels[0] if levels else 1)  # a lone root is the paper's title

    def heading(self, line: Line) -> Heading:
        """The heading of a line __call__ accepted, with its depth from the outline (1 = a section)."""
        found = _heading_of(line.text)
        level = self.outline.get(_plain(line.text), self.outline.get(_norm(line.text)))
        if level is not None and found.number is None:
            found.level = max(1, level - self.top + 1)
        return found

    def __call__(self, line: Line) -> bool:
        text = line.text.strip()
        if len(text) > 90 or len(text) < 3 or text.endswith((",", ";")) or not re.search(r"[A-Za-z]{2}", text):
            return False
        plain = _plain(text)
        if self.outline:
            return plain in self.outline or _norm(text) in self.outline
        numbered = _NUMBERED.match(text) is not None and not text.endswith(".")
        known = plain in _HEADING_WORDS or _norm(text) in _HEADING_WORDS
        larger = line.size >= self.body * 1.08
        emphasised = larger or (line.bold and line.size >= self.body * 0.9)
        if not emphasised:
            return False
        return numbered or known or (larger and text[0].isupper() and len(text.split()) <= 8)


def _join(lines: list[str]) -> str:
    """Lines of one block as running text: words split by a hyphen at a line end are joined again."""
    out = ""
    for text in lines:
        if out.endswith("-") and text[:1].islower() and len(out) > 1 and out[-2].isalpha():
            out = out[:-1] + text
        else:
            out = f"{out} {text}" if out else text
    return out


def _title(lines: list[Line], body_size: float) -> tuple[str, set[int]]:
    """The largest text in the top half of page 1 (and the lines it took); its first line if nothing is larger."""
    first = [(i, ln) for i, ln in enumerate(lines) if ln.page == 0 and ln.top < 400 and len(ln.text) > 3]
    if not first:
        return "", set()
    biggest = max(ln.size for _, ln in first)
    taken = [(i, ln) for i, ln in first if ln.size >= biggest - 0.5][:4] if biggest > body_size * 1.05 else first[:1]
    return _join([ln.text for _, ln in taken]), {i for i, _ in taken}


def _ids(lines: list[Line]) -> dict[str, str]:
    page_one = " ".join(ln.text for ln in lines if ln.page == 0)
    ids: dict[str, str] = {}
    if m := _ARXIV.search(page_one):
        ids["arxiv"] = m.group(1)
    if m := _DOI.search(page_one):
        ids["doi"] = m.group(1)
    return ids


def _running_lines(lines: list[Line]) -> set[int]:
    """Indexes of running headers and footers: the same words (numbers aside) on three pages or more."""
    pages: dict[str, set[int]] = {}
    for ln in lines:
        pages.setdefault(re.sub(r"\d+", "#", ln.text), set()).add(ln.page)
    return {i for i, ln in enumerate(lines) if len(pages[re.sub(r"\d+", "#", ln.text)]) >= 3}


def _wrapped_headings_joined(lines: list[Line], outline: list[tuple[int, str]]) -> list[Line]:
    """An outline heading printed over two lines -> one line, so that it matches its bookmark."""
    titles = {_plain(t) for _, t in outline}
    starts = {t[:n] for t in titles for n in range(8, len(t))}
    out: list[Line] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if nxt is not None and nxt.box == line.box and _plain(line.text) in starts and _plain(line.text) not in titles:
            joined = f"{line.text} {nxt.text}"
            if _plain(joined) in titles:
                out.append(Line(joined, line.size, line.bold, line.x0, line.top, line.page, line.box))
                i += 2
                continue
        out.append(line)
        i += 1
    return out


def extract(path: Path) -> Extracted:
    layout = read_layout(path)
    lines = _wrapped_headings_joined(layout.lines, layout.outline) if layout.outline else layout.lines
    title, title_lines = _title(lines, layout.body_size)
    skipped = title_lines | _running_lines(lines)
    is_heading = _Headings(layout)
    blocks: list[Block] = []
    abstract: list[str] = []
    reference_lines: list[Line] = []
    mode = "front"  # front matter (title, authors) -> abstract -> body -> references -> back
    pending: list[str] = []
    pending_box = None
    small = layout.body_size * 0.85  # below this: footnotes, captions, table cells (unless the section is set small)

    def flush() -> None:
        nonlocal pending
        if pending:
            text = _join(pending)
            if mode == "abstract":
                abstract.append(text)
            elif mode in ("body", "back"):
                blocks.append(Block(paragraph=text, back=mode == "back"))
            pending = []

    captions = {ln.box for ln in lines if _CAPTION.match(ln.text)}
    for i, line in enumerate(lines):
        if i in skipped or re.fullmatch(r"\d{1,4}", line.text) or (line.box in captions and mode != "references"):
            continue
        heading = is_heading(line)
        if mode == "references":
            if heading and ((_heading_of(line.text).number or "").isalpha() or _plain(line.text) == "appendix"):
                mode = "back"
            else:
                reference_lines.append(line)
                continue
        lowered = _plain(line.text)
        if mode == "front" and (lowered == "abstract" or line.text.lower().startswith("abstract")):
            flush()
            mode = "abstract"
            rest = line.text[len("abstract") :].lstrip(" .:—-")
            if rest:
                pending.append(rest)
            pending_box = line.box
            continue
        if heading and not (
            mode == "front" and line.page == 0 and not _NUMBERED.match(line.text) and lowered not in _HEADING_WORDS
        ):
            flush()
            small = min(layout.body_size, line.size) * 0.85
            if lowered in _REFERENCE_HEADINGS:
                mode = "references"
                continue
            mode = "back" if mode == "back" else "body"
            blocks.append(Block(heading=is_heading.heading(line), back=mode == "back"))
            pending_box = line.box
            continue
        if mode == "front" or line.size < small:
            continue
        if line.box != pending_box:
            flush()
            pending_box = line.box
        pending.append(line.text)
    flush()
    if not blocks and not abstract:  # no heading or abstract recognised: keep the text as one "Main text" section
        blocks = _plain_blocks(
            [ln for i, ln in enumerate(lines) if i not in skipped and ln.size >= layout.body_size * 0.85]
        )
    return Extracted(title, abstract, blocks, split_entries(reference_lines), _ids(lines), layout.pages)


def _plain_blocks(lines: list[Line]) -> list[Block]:
    """One paragraph per text box."""
    boxes: dict[int, list[str]] = {}
    for ln in lines:
        boxes.setdefault(ln.box, []).append(ln.text)
    return [Block(paragraph=_join(texts)) for texts in boxes.values()]


_LABEL_ONLY = re.compile(r"\[?(\d{1,3})[.\]]")


def split_entries(lines: list[Line]) -> list[Entry]:
    """Reference-list lines -> entries. A new entry starts at a number ([3] or 3.), whether it opens the line or
    stands in a column of its own beside the entry; failing numbers, at each line that is not indented against
    another reference line of its page (a hanging indent marks continuations)."""
    labels = [(ln, m.group(1)) for ln in lines if (m := _LABEL_ONLY.fullmatch(ln.text))]
    lines = [ln for ln in lines if not _LABEL_ONLY.fullmatch(ln.text)]

    def label_beside(ln: Line) -> str | None:  # a number just left of the line, on its baseline
        return next(
            (
                label
                for at, label in labels
                if at.page == ln.page and abs(at.top - ln.top) <= 3 and 0 < ln.x0 - at.x0 < 30
            ),
            None,
        )

    numbered = sum(1 for ln in lines if _ENTRY_NUMBER.match(ln.text)) >= max(2, (len(lines) - len(labels)) // 8)
    starts_by_page: dict[int, list[float]] = {}
    for ln in lines:
        starts_by_page.setdefault(ln.page, []).append(ln.x0)
    raw: list[tuple[str | None, list[str]]] = []
    for ln in lines:
        label = label_beside(ln) if labels else None
        if labels or numbered:
            start = label is not None or (numbered and _ENTRY_NUMBER.match(ln.text) is not None)
        else:
            start = not any(ln.x0 - 20 <= x <= ln.x0 - 2.5 for x in starts_by_page[ln.page])
        if start or not raw:
            raw.append((label, [ln.text]))
        else:
            raw[-1][1].append(ln.text)
    entries: list[Entry] = []
    for label, parts in raw:
        text = _join(parts)
        if len(text) > 15:
            entry = parse_entry(text, len(entries))
            entry.label = label or entry.label
            entries.append(entry)
    return entries


def _authors(text: str) -> list[str]:
    text = re.sub(r"\bet al\.?", "", text).strip(" .,")
    parts = re.split(r",\s*(?:and\s+)?|\s+and\s+|;\s*|\s*&\s*", text)
    return [p.strip(" .") for p in parts if 1 < len(p.strip(" .")) < 60 and re.search(r"[A-Za-z]", p)][:30]


def parse_entry(raw: str, index: int) -> Entry:
    entry = Entry(key=f"b{index}", raw=raw)
    if m := _ENTRY_NUMBER.match(raw):
        entry.label = m.group(1) or m.group(2)
        raw = raw[m.end() :]
    if m := _DOI.search(raw):
        entry.doi = m.group(1)
    if m := _ARXIV.search(raw):
        entry.arxiv = m.group(1)
    year = _YEAR.search(raw)
    sentences = [s.strip() for s in re.split(r"(?<=[a-z0-9)\]?])\.\s+(?=[A-Z0-9\"“(])", raw) if s.strip()]
    if year and re.match(r"[\s.,(]*\)?\.\s", raw[year.end() : year.end() + 4] + " "):
        # Author-year style: "Names. 2018. Title. Venue."
        entry.year = year.group(1)
        entry.authors = _authors(raw[: year.start()].rstrip(" (.,"))
        after = [s.strip() for s in re.split(r"\.\s+", raw[year.end() :].lstrip(" ).,"), maxsplit=2)]
        entry.title = after[0] if after else ""
        entry.venue = re.sub(r"^In\s+", "", after[1]) if len(after) > 1 else ""
    elif vancouver := _VANCOUVER_AUTHORS.match(raw):
        # "Quandt F, Hummel FC. Title. Journal. 2014;6:9."
        entry.year = year.group(1) if year else None
        entry.authors = _authors(vancouver.group(1))
        rest = [s.strip() for s in re.split(r"\.\s+", raw[vancouver.end() :], maxsplit=2)]
        entry.title = rest[0] if rest else ""
        entry.venue = rest[1] if len(rest) > 1 else ""
    else:
        # "Names. Title. Venue, 2017." (other numbered styles)
        entry.year = year.group(1) if year else None
        entry.authors = _authors(sentences[0]) if sentences else []
        entry.title = sentences[1] if len(sentences) > 1 else ""
        entry.venue = sentences[2] if len(sentences) > 2 else ""
    entry.title = entry.title.strip(" .")[:300]
    return entry


def convert_pdfs_fallback(
    pdfs: list[Path], cache_folder: Path, echo: Callable[[str], None] = print
) -> tuple[list[Path], list[PdfFailure], dict]:
    """(TEI files in the order of ``pdfs``, the PDFs it could not read, counts), caching like the GROBID client."""
    cache = TeiCache(cache_folder / f"fallback-v{VERSION}")
    teis: list[Path] = []
    failures: list[PdfFailure] = []
    cached = pages = 0
    unlike: list[dict] = []  # PDFs read that have neither an abstract nor references: what the parser took them for
    every = max(1, len(pdfs) // 20)
    for n, pdf in enumerate(pdfs, 1):
        digest = pdf_digest(pdf)
        hit = cache.get(digest)
        if hit is not None:
            cached += 1
            teis.append(hit)
        else:
            try:
                found = extract(pdf)
            except Exception as exc:  # pdfminer raises many kinds on damaged files; each names what it met
                failures.append(PdfFailure(pdf, _unreadable_reason(exc)))
                echo(f"  fallback parser could not read {failures[-1]}")
                continue
            pages += found.pages
            if found.pages == 0:
                failures.append(PdfFailure(pdf, "not a readable PDF (no pages found)"))
                echo(f"  fallback parser could not read {failures[-1]}")
                continue
            if not found.blocks and not found.abstract:
                failures.append(PdfFailure(pdf, "no text layer found (a scanned PDF needs OCR, or GROBID)"))
                echo(f"  fallback parser could not read {failures[-1]}")
                continue
            if not found.abstract and not found.entries:
                took = _what_it_took(found)
                unlike.append({"pdf": str(pdf), "took": took})
                echo(
                    f"  warning: {pdf} has no abstract and no reference list, so it may not be a paper (a manual, a "
                    f"report, slides); it is kept as read: {took}"
                )
            teis.append(cache.put(pdf, digest, write_tei(found)))
        if n % every == 0 or n == len(pdfs):
            echo(f"  fallback parser: {n}/{len(pdfs)} PDFs done ({len(failures)} failed)")
    return teis, failures, {"from_cache": cached, "pages_parsed": pages, "unlike_papers": unlike}


def _unreadable_reason(exc: Exception) -> str:
    """Why pdfminer could not open a PDF, in words: its password errors carry no message of their own."""
    kind = type(exc).__name__
    if "Password" in kind or "Encryption" in kind:
        return (
            f"protected by a password ({kind}): give an unprotected copy (e.g. qpdf --decrypt --password=PASSWORD "
            "in.pdf out.pdf)"
        )
    return f"not a readable PDF ({kind}: {exc})" if str(exc) else f"not a readable PDF ({kind})"


def _what_it_took(found: Extracted) -> str:
    """'title 'X', 3 headings, 16 paragraphs over 5 pages': what the fallback made of a PDF."""
    headings = sum(1 for b in found.blocks if b.heading is not None)
    paragraphs = sum(1 for b in found.blocks if b.paragraph is not None)
    title = f"title {found.title[:80]!r}" if found.title else "no title"
    return f"{title}, {headings} headings, {paragraphs} paragraphs over {found.pages} pages"
