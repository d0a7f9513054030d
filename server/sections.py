"""Section aliases, the rules that turn an agent's section name into one section, and recall-label matching.

The rules follow the published reference harness, with the departures listed in
docs/tools.md ("Departures from the reference harness"): several headers that a
name fits equally well are reported as ambiguous, never silently the first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# Matched after str.upper(), as the reference does: the dotless "ı" is the alias I and the long "ſ" the alias S.
_ALIAS = re.compile(r"^\(?([A-Z]{1,3})\)?$")
# Case is matched in ASCII only (explicit classes, no IGNORECASE): Python's Unicode case folding would read the
# dotless "ı" as "i" and the long "ſ" as "s", where the reference (lower() then ASCII patterns) does not.
_APPENDIX_PREFIX = re.compile(r"^[aA][pP][dD][xX](_[a-zA-Z0-9.]+)?\s*:\s*")
# Leading numbering: "3.1 ", "3.1. ", a number glued to a word ("3.Introduction", "3Introduction", but not
# the "3" of "3D Vision"), "IV. " / "IV-B " (Roman numerals up to 39, possibly followed by a number, as in
# "IV 3 Results"), or "A. ".
_NUMBER = r"\d+(?:\.\d+)*\.?(?:\s+|(?=[^\W\d_]{2}))"
_NUMBERING = re.compile(
    rf"^(?:(?=[ivxIVX])[xX]{{0,3}}(?:[iI][xX]|[iI][vV]|[vV]?[iI]{{0,3}})(?:-[a-zA-Z])?\.?\s+(?:{_NUMBER})?|{_NUMBER}|[a-zA-Z]\.\s+)"
)
_PUNCT = re.compile(r"[:\-–—_.,;()\[\]'\"/]+")
_SPACES = re.compile(r"\s+")


def alias(index: int) -> str:
    """Bijective base-26: 0 -> A, 25 -> Z, 26 -> AA, 27 -> AB."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(ord("A") + rem) + letters
    return letters


def alias_index(text: str) -> int | None:
    match = _ALIAS.match(text.strip().upper())
    if not match:
        return None
    index = 0
    for ch in match.group(1):
        index = index * 26 + (ord(ch) - ord("A") + 1)
    return index - 1


def normalise(header: str) -> str:
    """Lowercase; drop an Apdx_X: prefix and leading numbering; punctuation to spaces."""
    text = _APPENDIX_PREFIX.sub("", header.strip())
    text = _NUMBERING.sub("", text)
    text = _PUNCT.sub(" ", text.lower())
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class Resolution:
    """Either one section index, or the candidates that made it fail."""

    index: int | None
    ambiguous: bool = False
    candidates: tuple[int, ...] = ()


def _name_rules(name: str) -> list[Callable[[str], bool]]:
    """Rules 2 and 3: the header, ignoring case; the header after ``normalise``."""
    lowered, norm = name.strip().lower(), normalise(name)
    rules = [lambda h: h.strip().lower() == lowered]
    if norm:
        rules.append(lambda h: normalise(h) == norm)
    return rules


def _part_rules(name: str) -> list[Callable[[str], bool]]:
    """Rules 4 and 5: a part of the header; a part of the normalised header."""
    lowered, norm = name.strip().lower(), normalise(name)
    rules = [lambda h: lowered in h.lower()]
    if norm:
        rules.append(lambda h: norm in normalise(h))
    return rules


def resolve(query: str, headers: list[str]) -> Resolution:
    """Find the one section ``query`` names.

    Rules in order: the alias; the header (case-insensitive); the normalised
    header; a part of one header; a part of one normalised header. The first
    rule that fits exactly one header wins. A name that equals several headers
    (duplicates, or headers that differ only by their numbering) is ambiguous at
    once: never resolved silently to the first, nor to a header it is only part
    of. A part that fits several headers passes to the next part rule, as in the
    reference harness; if neither fits exactly one, the first set is the ambiguity.
    """
    query = query.strip()
    if not query:
        return Resolution(None, candidates=tuple(range(len(headers))))
    index = alias_index(query)
    if index is not None and index < len(headers):
        return Resolution(index)
    for rule in _name_rules(query):
        hits = tuple(i for i, h in enumerate(headers) if rule(h))
        if len(hits) == 1:
            return Resolution(hits[0])
        if hits:
            return Resolution(None, ambiguous=True, candidates=hits)
    ambiguity: tuple[int, ...] = ()
    for rule in _part_rules(query):
        hits = tuple(i for i, h in enumerate(headers) if rule(h))
        if len(hits) == 1:
            return Resolution(hits[0])
        if len(hits) > 1 and not ambiguity:
            ambiguity = hits
    if ambiguity:
        return Resolution(None, ambiguous=True, candidates=ambiguity)
    return Resolution(None, candidates=tuple(range(len(headers))))


# --- recall labels ------------------------------------------------------------
# One rule for the importer (is a gold recall label resolvable?) and the scorer
# (does a delivered section carry the label?), SPEC 7: a label names the
# sections whose header it is (ignoring case), or failing that, whose
# normalised header it is: read_section's rules 2 and 3, so a label naming
# "4.3.3 Results" names that section and not "4.2.3 Results". A label that
# names none of the paper's headers is a subsection label, credited by a
# section whose text holds it verbatim.


def label_headers(label: str, headers: list[str]) -> tuple[int, ...]:
    """Indexes of the headers ``label`` names: by the first of read_section's rules 2-3 that fits any."""
    for rule in _name_rules(label):
        hits = tuple(i for i, h in enumerate(headers) if rule(h))
        if hits:
            return hits
    return ()


def is_subsection_label(label: str, headers: Iterable[str]) -> bool:
    """The label names none of the paper's section headers (so only the text rule can credit it)."""
    return not label_headers(label, list(headers))


def label_matches_section(label: str, header: str, text: str | None, headers: Iterable[str]) -> bool:
    """Whether a section (``header``, ``text``) of a paper whose headers are ``headers`` carries ``label``.

    The label names this section's header; or the label names none of
    ``headers`` (a subsection label) and appears verbatim in ``text``. A label
    that names another section's header is never credited by text that happens
    to contain it.
    """
    headers = list(headers)
    if header not in headers:
        headers.append(header)
    named = label_headers(label, headers)
    if named:
        return header in {headers[i] for i in named}
    needle = label.strip()
    return bool(needle) and text is not None and needle in text


def label_is_resolvable(label: str, headers: list[str], texts: Iterable[str | None]) -> bool:
    """Whether some section of a paper (``headers`` and, in the same or any order, ``texts``) carries ``label``.

    ``texts`` is consumed lazily and only when the label names no header, so a
    caller can stream the texts from a database.
    """
    if label_headers(label, headers):
        return True
    needle = label.strip()
    return bool(needle) and any(t is not None and needle in t for t in texts)
