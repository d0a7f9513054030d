"""What the fallback PDF parser finds in a PDF (``pdf_fallback``) and hands to the TEI writer (``pdf_tei``)."""

from __future__ import annotations

from dataclasses import dataclass, field

VERSION = "1"  # the fallback parser's version: part of the cache folder's name, so a new version reconverts every PDF


@dataclass
class Heading:
    number: str | None
    title: str
    level: int = 1  # from the outline, for unnumbered headings; numbered ones carry their depth in the number


@dataclass
class Entry:
    """One bibliography entry: the raw string and what could be read from it."""

    key: str
    raw: str
    label: str | None = None  # its own number, for numeric citation markers
    authors: list[str] = field(default_factory=list)
    year: str | None = None
    title: str = ""
    venue: str = ""
    doi: str | None = None
    arxiv: str | None = None


@dataclass
class Block:
    """A heading starts a division; a paragraph belongs to the division open before it."""

    heading: Heading | None = None
    paragraph: str | None = None
    back: bool = False  # after the reference list: an appendix


@dataclass
class Extracted:
    title: str
    abstract: list[str]
    blocks: list[Block]
    entries: list[Entry]
    ids: dict[str, str]
    pages: int
