"""Section aliases, the rules that turn an agent's section name into one section, and recall-label matching."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_ALIAS = re.compile(r"^\(?([A-Za-z]{1,3})\)?$")
_APPENDIX_PREFIX = re.compile(r"^apdx(_[a-z0-9.]+)?\s*:\s*", re.IGNORECASE)
# Leading "3.1", "IV." / "IV-B" (Roman numerals up to 39) or "A." numbering.
_NUMBERING = re.compile(
    r"^(?:(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})(?:-[a-z])?\.?\s+|\d+(?:\.\d+)*\.?\s+|[a-z]\.\s+)", re.IGNORECASE
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
    match = _ALIAS.match(text.strip())
    if not match:
        return None
    index = 0
    for ch in match.group(1).upper():
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


def resolve(query: str, headers: list[str]) -> Resolution:
    """Find the one section ``query`` names; rules in order, the first match wins."""
    query = query.strip()
    if not query:
        return Resolution(None, candidates=tuple(range(len(headers))))
    index = alias_index(query)
    if index is not None and index < len(headers):
        return Resolution(index)
    lowered = query.lower()
    for rule in (
        lambda h: h.lower() == lowered,
        lambda h: normalise(h) == normalise(query),
    ):
        hits = [i for i, h in enumerate(headers) if rule(h)]
        if hits:
            # Duplicate headers: the first one, as a reader of the paper would expect.
            return Resolution(hits[0])
    norm_query = normalise(query)
    for rule in (
        lambda h: lowered in h.lower(),
        lambda h: bool(norm_query) and norm_query in normalise(h),
    ):
        hits = [i for i, h in enumerate(headers) if rule(h)]
        if len(hits) == 1:
            return Resolution(hits[0])
        if len(hits) > 1:
            return Resolution(None, ambiguous=True, candidates=tuple(hits))
    return Resolution(None, candidates=tuple(range(len(headers))))


# --- recall labels ------------------------------------------------------------
# One rule for the importer (is a gold recall label resolvable?) and the scorer
# (does a delivered section carry the label?), SPEC 7: a label names a section
# by its header (case-insensitively, or after ``normalise``); a label that names
# none of the paper's headers is a subsection label, credited by a section whose
# text holds it verbatim.


def label_names_header(label: str, header: str) -> bool:
    """The label is this header: equal case-insensitively, or equal after ``normalise``."""
    if label.strip().lower() == header.strip().lower():
        return True
    norm = normalise(label)
    return bool(norm) and norm == normalise(header)


def is_subsection_label(label: str, headers: Iterable[str]) -> bool:
    """The label names none of the paper's section headers (so only the text rule can credit it)."""
    return not any(label_names_header(label, h) for h in headers)


def label_matches_section(label: str, header: str, text: str | None, headers: Iterable[str]) -> bool:
    """Whether a section (``header``, ``text``) of a paper whose headers are ``headers`` carries ``label``.

    The label names the section's header; or the label names none of ``headers``
    (a subsection label) and appears verbatim in ``text``. A label that names
    another section's header is never credited by text that happens to contain it.
    """
    if label_names_header(label, header):
        return True
    needle = label.strip()
    if not needle or text is None or needle not in text:
        return False
    return is_subsection_label(label, headers)


def label_is_resolvable(label: str, headers: list[str], texts: Iterable[str | None]) -> bool:
    """Whether some section of a paper (``headers`` and, in the same or any order, ``texts``) carries ``label``.

    ``texts`` is consumed lazily and only when the label names no header, so a
    caller can stream the texts from a database.
    """
    if not is_subsection_label(label, headers):
        return True
    needle = label.strip()
    return bool(needle) and any(t is not None and needle in t for t in texts)
