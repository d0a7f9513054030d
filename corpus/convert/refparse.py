"""A bibliography entry's fields put right when the parser left a printed reference inside them.

GROBID 0.5.1 sometimes takes a whole printed reference for the title ("Dzmitry Bahdanau, …, and Yoshua Bengio. 2014.
Learning phrase representations … . In Proceedings of …") or glues the venue after the title's full stop ("… align
and translate. International Conference on Learning Representations"). :func:`repair` splits such a title into the
authors, year, title and venue it holds, so that a citation string never becomes a work's title, and cleans the
authors (:mod:`names`) and an impossible year.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agenthop.corpus.convert.model import Reference
from agenthop.corpus.convert.names import clean_authors, surname_key

MIN_TITLE = 12  # characters: a title cut shorter than this was not a title glued to a venue
# "<authors>. 2014. <title>" or "2013. <title>": the printed reference's head, in the ACL's author-year style.
_PRINTED = re.compile(r"^(?:(?P<names>.{1,300}?)\.\s+)?(?P<year>(?:19|20)\d\d)[a-z]?\.\s+(?P<rest>\S.*)$")
MIN_PRINTED_TITLE = 8  # characters after the year: fewer ("Combin") are the start of a title the parser cut off
# What follows a title's full stop in a printed reference: the venue.
_TITLE_TAIL = re.compile(
    r"\.\s+(?=(in\s|proceedings?\b|international\b|conference\b|annual\b|arxiv\b|corr\b|journal\b|workshop\b|"
    r"advances in\b|transactions\b|iclr\b|nips\b|neurips\b|icml\b|acl\b|emnlp\b|naacl\b|coling\b|eacl\b|aaai\b|"
    r"ijcai\b|empirical methods\b))",
    re.IGNORECASE,
)
_NAME = re.compile(r"^[A-Z][\w'\-.]*(?: (?:[A-Z][\w'\-.]*|van|von|der|de|den|del|da|di|la|le))*$")
_NAME_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*")
_EARLIEST = 1900


def cut_title_tail(title: str) -> tuple[str, str | None]:
    """(title, venue glued after it or None): "Pointer networks. In Advances in …" -> ("Pointer networks", "Advances
    in …")."""
    found = _TITLE_TAIL.search(title)
    if found is None or found.start() < MIN_TITLE:
        return title, None
    venue = title[found.end() :].strip()
    venue = re.sub(r"^in\s+", "", venue, flags=re.IGNORECASE).strip(" .,")
    return title[: found.start()].strip(), venue or None


def printed_names(text: str) -> list[str] | None:
    """The names of "A B, C D, and E F" (a printed author list), or None if any part is no name."""
    parts = [p.strip() for p in _NAME_SPLIT.split(text) if p.strip()]
    if not parts or any(len(p) > 40 or not _NAME.match(p) for p in parts):
        return None
    return parts


def repair(ref: Reference, citing_year: int | None) -> Reference:
    """The entry with a printed reference in its title split into fields, its authors cleaned and its year dropped
    when it cannot be right (before 1900, or after the citing paper's year + 1: a paper cites no later work)."""
    title, year, authors, venue = ref.title, ref.year, clean_authors(ref.authors), ref.venue
    printed = _PRINTED.match(title) if title else None
    if printed is not None:
        # A title cut short after the printed head is no title: the entry is linked by its authors and year instead.
        title = printed["rest"] if len(printed["rest"]) >= MIN_PRINTED_TITLE else ""
        year = int(printed["year"])  # the year printed with this entry beats one read elsewhere on the line
        names = printed_names(printed["names"]) if printed["names"] else None
        if names:
            named = {surname_key(n) for n in names}
            if not authors or surname_key(authors[0]) in named:
                authors = clean_authors(names)
            else:  # the parser got the first authors, the title the rest of the list
                authors = clean_authors(authors + names)
    if title:
        title, tail = cut_title_tail(title)
        venue = venue or tail
    names_only = printed_names(title) if title and ("," in title or " and " in title) else None
    if names_only and len(names_only) >= 2:
        # "Dmitriy Serdyuk, Philemon Brakel, and Yoshua Bengio": the rest of the author list taken for the title
        title, authors = "", clean_authors(authors + names_only)
    if year is not None and (year < _EARLIEST or (citing_year is not None and year > citing_year + 1)):
        year = None
    return replace(ref, title=title, year=year, authors=authors, venue=venue)
