"""What an explore search asks for, whichever engine answers it: the words, quoted phrases and filters of a query,
the hits, and the snippet of a matched passage."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from agenthop.server.search import tokenize

_YEAR = re.compile(r"^(19|20)\d\d$")
_QUOTED = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+")
SNIPPET_WORDS = 24  # as FTS5's snippet(..., 24) gave before the search index

# Venue names as people type them -> words of the venue as proceedings print it (substring match, ignoring case).
VENUE_ALIASES = {
    "acl": ["annual meeting of the association for computational linguistics"],
    "emnlp": ["empirical methods in natural language processing"],
    "naacl": ["north american chapter of the association for computational linguistics"],
    "eacl": ["european chapter of the association for computational linguistics"],
    "coling": ["international conference on computational linguistics"],
    "tacl": ["transactions of the association for computational linguistics"],
    "nips": ["neural information processing systems"],
    "neurips": ["neural information processing systems"],
    "iclr": ["international conference on learning representations"],
    "icml": ["international conference on machine learning"],
}


@dataclass(frozen=True)
class Filters:
    year_from: int | None = None
    year_to: int | None = None
    venue: str | None = None
    author: str | None = None

    def any(self) -> bool:
        return any(v is not None for v in (self.year_from, self.year_to, self.venue, self.author))

    def venue_patterns(self) -> list[str]:
        """What a venue name must contain (lower case) to pass the venue filter: the text given, or an alias's name."""
        if self.venue is None:
            return []
        wanted = self.venue.strip().lower()
        return [wanted, *VENUE_ALIASES.get(wanted, [])]

    def author_words(self) -> list[str]:
        """Every word of the author's name, stop words and one-letter words included ("He", "A. Smith"): the indexes
        hold them all, and the BM25 tokenizer would drop them, leaving the filter silently unapplied."""
        return _WORD.findall(self.author.lower()) if self.author else []


@dataclass
class ExploreHit:
    paper_id: str
    score: float
    section_position: int | None = None
    section_header: str | None = None
    snippet: str | None = None


@dataclass
class SearchOutcome:
    hits: list[ExploreHit]
    filters: Filters
    terms: list[str]
    notes: list[str] = field(default_factory=list)
    phrases: list[list[str]] = field(default_factory=list)
    more: bool = False  # whether a next page (offset + len(hits)) may hold more results


def phrases(query: str) -> list[list[str]]:
    """The words of each "quoted phrase" of the query (an unmatched quote is not a phrase: its words are words)."""
    found = []
    for text in _QUOTED.findall(query):
        words = _WORD.findall(text.lower())
        if words and words not in found:
            found.append(words)
    return found


def read_year_words(terms: list[str], filters: Filters) -> tuple[list[str], Filters, str | None]:
    """Years typed in the query ("parsing 2017") become the year filter, when no year filter was given."""
    years = sorted(int(t) for t in terms if _YEAR.match(t))
    if not years or filters.year_from is not None or filters.year_to is not None:
        return terms, filters, None
    rest = [t for t in terms if not _YEAR.match(t)]
    filters = Filters(years[0], years[-1], filters.venue, filters.author)
    span = str(years[0]) if years[0] == years[-1] else f"{years[0]}-{years[-1]}"
    return rest, filters, f"read {', '.join(map(str, years))} in the query as the year filter ({span})"


def query_terms(query: str) -> list[str]:
    return list(dict.fromkeys(tokenize(query)))


def snippet(text: str, words: set[str], size: int = SNIPPET_WORDS) -> str:
    """The ``size`` words of ``text`` holding the most distinct query words, each match in **bold**, with ' … ' where
    the passage is cut (the form FTS5's snippet() gave)."""
    tokens = list(_WORD.finditer(text))
    if not tokens:
        return ""
    hits = [t.group().lower() in words for t in tokens]
    at = [i for i, hit in enumerate(hits) if hit]
    best, best_start = 0, 0
    for j, first in enumerate(at):  # windows that open a few words before a match: linear in the matches
        inside = {tokens[i].group().lower() for i in at[j : bisect.bisect_left(at, first + size - 3)]}
        if len(inside) > best:
            best, best_start = len(inside), max(0, min(first - 3, len(tokens) - size))
    end = min(len(tokens), best_start + size)
    out, pos = [], tokens[best_start].start()
    for i in range(best_start, end):
        t = tokens[i]
        out.append(text[pos : t.start()])
        out.append(f"**{t.group()}**" if hits[i] else t.group())
        pos = t.end()
    if end == len(tokens):
        out.append(text[pos:])
    passage = " ".join("".join(out).split())
    return ("" if best_start == 0 else " … ") + passage + ("" if end == len(tokens) else " … ")
