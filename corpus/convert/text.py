"""Text helpers shared by the converters: whitespace, years, identifiers, titles, citation sentences."""

from __future__ import annotations

import bisect
import re
import unicodedata

MAX_CONTEXT = 600  # characters; a longer "sentence" is a parsing accident, cut around the citation
_WORD = re.compile(r"\S+")  # \s is str.isspace(), so the words are those of str.split()

# Tokens that end with a full stop without ending a sentence. Lower-case, without the dot.
_ABBREVIATIONS = frozenset(
    "al e.g i.e cf vs fig figs eq eqs ref refs sec secs tab no nos approx resp ca dr mr mrs ms prof st vol pp ch etc".split()
)


def clean(text: str | None) -> str:
    """Collapse runs of whitespace (XML indentation, line breaks) to single spaces."""
    return " ".join(text.split()) if text else ""


def year_of(value) -> int | None:
    """A plausible publication year from an int or a date string ('2018', '2019-12-23', '23 Dec 2019')."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if 1000 <= value <= 2999 else None
    digits = ""
    for ch in str(value):
        if ch.isdigit():
            digits += ch
            if len(digits) == 4:
                year = int(digits)
                if 1000 <= year <= 2999:
                    return year
        else:
            digits = ""
    return None


def doi_of(value: str | None) -> str | None:
    """A bare, lower-cased DOI from a DOI, 'doi:' string or doi.org URL; None if it is not one."""
    if not value:
        return None
    text = value.strip()
    lowered = text.lower()
    for prefix in (
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi.org/",
        "doi:",
    ):
        if lowered.startswith(prefix):
            text = text[len(prefix) :]
            break
    text = text.strip().rstrip(".")
    if not text.startswith("10.") or "/" not in text or any(ch.isspace() for ch in text):
        return None
    return text.lower()


_ARXIV_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d.])")
_ARXIV_OLD = re.compile(r"\b([a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?\b")


def arxiv_of(value: str | None) -> str | None:
    """'arXiv:1912.10667v1[cs.CV]' -> '1912.10667' (versions dropped, old-style IDs kept).

    The ID is found inside what a bibliography parser glued to it ('arXivpreprintarXiv:1701.03980' is 1701.03980),
    so that printed words never become part of an ID; a value holding no arXiv ID is None."""
    if not value:
        return None
    text = value.strip()
    found = _ARXIV_NEW.search(text) or _ARXIV_OLD.search(text)
    return found.group(1) if found else None


def pmcid_of(value: str | None) -> str | None:
    if not value or not value.strip():
        return None
    text = value.strip().upper()
    return text if text.startswith("PMC") else f"PMC{text}"


MAX_DISPLAY_TITLE = 300  # characters of a citation's printed text shown as the title of an entry without one


def display_title(raw: str | None) -> str:
    """A title to show for a bibliography entry the source did not split into fields: its printed text.

    The entry's own number ("[12]", "12.") goes; the rest is kept whole (authors, title and venue as printed)
    up to MAX_DISPLAY_TITLE characters, since where the title starts in free text is the parser's guess.
    """
    text = clean(raw)
    head, _, rest = text.partition(" ")
    if rest and (head.strip("[]().").isdigit()):
        text = rest
    if len(text) > MAX_DISPLAY_TITLE:
        text = text[:MAX_DISPLAY_TITLE].rsplit(" ", 1)[0] + " …"
    return text


def year_in(raw: str) -> int | None:
    """The publication year of a citation as printed: "(1999)" if there is one, else the last plausible year
    (page numbers and volumes come before the year in most styles that put it at the end)."""
    bracketed = re.findall(r"\((1[89]\d\d|20\d\d)[a-z]?\)", raw)
    if bracketed:
        return int(bracketed[0])
    years = re.findall(r"\b(1[89]\d\d|20\d\d)\b", raw)
    return int(years[-1]) if years else None


def normalise_title(title: str | None) -> str:
    """Lower-case letters and digits only, accents dropped: how two spellings of one title compare."""
    if not title:
        return ""
    decomposed = unicodedata.normalize("NFKD", title)
    kept = "".join(ch.lower() if ch.isalnum() else " " for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(kept.split())


def _ends_sentence(text: str, i: int) -> bool:
    """Is text[i] ('.', '!' or '?') the end of a sentence?"""
    if i + 1 < len(text) and not text[i + 1].isspace():
        return False
    j = i + 1
    while j < len(text) and text[j].isspace():
        j += 1
    if j < len(text) and not (text[j].isupper() or text[j].isdigit() or text[j] in "([\"'“‘"):
        return False
    if text[i] != ".":
        return True
    k = i
    while k > 0 and not text[k - 1].isspace():
        k -= 1
    word = text[k:i].lower().lstrip("([\"'")
    if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
        return False  # "et al.", "e.g.", an initial such as "J."
    return True


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds the span [start, end), cut to MAX_CONTEXT characters."""
    left = 0
    for i in range(start - 1, -1, -1):
        if text[i] in ".!?" and _ends_sentence(text, i):
            left = i + 1
            break
    right = len(text)
    for i in range(end, len(text)):
        if text[i] in ".!?" and _ends_sentence(text, i):
            right = i + 1
            break
    sentence = text[left:right].strip()
    if len(sentence) > MAX_CONTEXT:
        middle = (start + end) // 2 - left
        lo = max(0, middle - MAX_CONTEXT // 2)
        sentence = sentence[lo : lo + MAX_CONTEXT].strip()
    return sentence


class Paragraph:
    """Text of one paragraph built piece by piece, with the character spans of its citations."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.citations: list[tuple[int, int, list[str]]] = []  # (start, end, bibliography keys)

    def add(self, text: str | None) -> None:
        if text:
            self._parts.append(text)
            self._length += len(text)

    def cite(self, text: str, keys: list[str]) -> None:
        start = self._length
        self.add(text)
        if keys:
            self.citations.append((start, self._length, keys))

    def finish(self) -> tuple[str, list[tuple[str, str]]]:
        """(clean text, [(bibliography key, sentence)]) with spans mapped onto the cleaned text."""
        raw = "".join(self._parts)
        words = list(_WORD.finditer(raw))
        cleaned = " ".join(w.group() for w in words)  # whitespace runs collapsed, ends stripped
        # Where each word starts in the cleaned text, to map raw offsets (a citation's span) onto it.
        starts = [w.start() for w in words]
        placed, at = [], 0
        for w in words:
            placed.append(at)
            at += w.end() - w.start() + 1

        def mapped(offset: int) -> int:
            """Length of the cleaned text of raw[:offset]: the words begun before it, without a space still pending."""
            last = bisect.bisect_left(starts, offset) - 1
            if last < 0:
                return 0
            word = words[last]
            return placed[last] + min(offset, word.end()) - word.start()

        contexts: list[tuple[str, str]] = []
        for start, end, keys in self.citations:
            a, b = mapped(start), mapped(end)
            if a >= b:
                continue
            sentence = sentence_around(cleaned, a, b)
            contexts.extend((key, sentence) for key in keys)
        return cleaned, contexts
