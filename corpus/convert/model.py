"""What every converter produces: a paper with its metadata, sections and bibliography."""

from __future__ import annotations

from dataclasses import dataclass, field

ID_KINDS = ("doi", "arxiv", "pmcid", "acl", "pmid")


@dataclass
class Section:
    header: str
    text: str


@dataclass
class Reference:
    """One entry of a paper's bibliography, in reference-list order.

    ``link`` is an identifier the source itself resolved (S2ORC's ``link`` field);
    ``context`` is the sentence around the first in-text citation, when there is one;
    ``raw`` is the entry as printed (the citation text), which gives a display title to an entry the source
    did not split into fields (JATS ``mixed-citation`` without ``article-title``, unarXive's ``bib_entry_raw``).
    """

    key: str
    title: str = ""
    year: int | None = None
    authors: list[str] = field(default_factory=list)
    venue: str | None = None
    ids: dict[str, str] = field(default_factory=dict)
    link: str | None = None
    context: str | None = None
    raw: str = ""
    pages: str | None = None  # "12–22", as printed


@dataclass
class Paper:
    source: str  # file (and line) it came from, for messages
    title: str
    abstract: str | None = None
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    pages: str | None = None  # "12–22": the pages of the proceedings or journal, as the file gives them
    ids: dict[str, str] = field(default_factory=dict)
    source_id: str | None = None  # the source's own key (S2ORC paper_id), used only when no other ID exists
    sections: list[Section] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    version: int | None = None  # the source's version number (eLife's -v3), to keep the latest of two copies
    licence: str | None = None  # the licence the file states (a URL or its words), as found; see licences.py
    skipped: dict[str, int] = field(default_factory=dict)  # body elements left out (figures, tables), by element name
    # In-text citations that point at no bibliography entry ("Vaswani et al., 2017" without a target): (marker, sentence)
    unlinked: list[tuple[str, str]] = field(default_factory=list)
    source_id_from_name: bool = False  # source_id is the file's name (doc2json), not an ID the source assigned


class ConvertError(Exception):
    """An input cannot be converted; the message names the file and what is wrong."""


class BadFileError(ConvertError):
    """One input file cannot be converted (a build can skip such files and report them)."""


class NotOpenError(ConvertError):
    """Papers with text have no open licence, and only openly licensed papers were asked for."""
