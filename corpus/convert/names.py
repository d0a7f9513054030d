"""Author names as PDF converters garble them, put right where the garbling has a known shape.

GROBID 0.5.1 reads a PDF's accents as spacing marks beside the letter ("Vuli´c", "Benoˆıt", "Preot¸iuc"), doubles a
surname it read twice ("Ivan Vuli´cvuli´c", "Sch¨ Schütze"), glues the year or a footnote mark to a name
("Lapata2016", "Lemao 1⇤"), keeps the affiliation beside the name ("Wolfgang Macherey Google", then "A I") and takes
lone footnote symbols ("†") for authors. :func:`clean_authors` undoes each of these and drops what is no name.
"""

from __future__ import annotations

import re
import unicodedata

# Spacing accents -> the combining mark they stand for. The cedilla (and ogonek) sit under the letter before them in
# the PDF's reading order; the others come before the letter they go on.
_MARKS = {
    "´": "\u0301",
    "¨": "\u0308",
    "ˆ": "\u0302",
    "`": "\u0300",
    "˜": "\u0303",
    "˘": "\u0306",
    "ˇ": "\u030c",
    "˚": "\u030a",
    "˙": "\u0307",
    "¸": "\u0327",
    "˛": "\u0328",
}
_AFTER_LETTER = frozenset("¸˛")
_AFFILIATION = frozenset(
    "university universität universidad université institute institut inc ltd corp corporation google microsoft ibm "
    "facebook amazon baidu tencent alibaba research laboratory laboratories lab labs department school college "
    "centre center deepmind salesforce maluuba".split()
)
_KEEP = re.compile(r"[^\w\-'.]")  # letters, digits (removed next), hyphen, apostrophe, full stop (initials)


# "G ¨ Ul" is "Gül" and "S ¸ Ahin" "Şahin": a capital, the mark, then the rest of the word, capitalised anew.
_SPLIT_BEFORE = re.compile(r"\b([A-Z]) ([´¨ˆ`˜˘ˇ˚˙]) ([AEIOUY])([a-z]+)")
_SPLIT_CEDILLA = re.compile(r"\b([A-Z]) ([¸˛]) ([A-Z])([a-z]+)")


def _place_marks(text: str) -> str:
    """'Vuli´c' -> 'Vulić', 'Benoˆıt' -> 'Benoît', 'Preot¸iuc' -> 'Preoţiuc'; a mark with no letter to go on is dropped."""
    text = _SPLIT_BEFORE.sub(lambda m: m[1] + m[2] + m[3].lower() + m[4], text)
    text = _SPLIT_CEDILLA.sub(lambda m: m[1] + m[2] + m[3].lower() + m[4], text)
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        mark = _MARKS.get(ch)
        if mark is None:
            out.append(ch)
            i += 1
            continue
        if ch in _AFTER_LETTER:
            if out and out[-1].isalpha():
                out.append(mark)
            i += 1
            continue
        j = i + 1
        if j < len(text) and text[j].isalpha():
            letter = "i" if text[j] == "ı" else text[j]  # a dotless i carries the accent in the PDF's font
            out.append(letter + mark)
            i = j + 1
        else:
            i += 1
    return unicodedata.normalize("NFC", "".join(out))


def _undouble(token: str) -> str:
    """'Vulićvulić' -> 'Vulić', 'Preoţiucpreoţiuc-Pietro' -> 'Preoţiuc-Pietro' (a surname read twice, glued)."""
    head, sep, tail = token.partition("-")
    n = len(head)
    if n >= 4 and n % 2 == 0 and head[: n // 2].lower() == head[n // 2 :].lower():
        head = head[: n // 2]
    return head + sep + tail


def clean_name(name: str) -> str:
    """One author name with the garbling undone; '' when nothing of a name is left."""
    text = _place_marks(name)
    tokens = []
    for raw in text.split():
        if any(ch in _MARKS for ch in raw):
            continue
        token = _KEEP.sub("", raw)
        token = re.sub(r"\d+[a-z]?$", "", token)  # "Lapata2016", "‡3"
        token = token.strip("-'.") if not re.fullmatch(r"[A-Z]\.", token) else token
        if not token or any(ch.isdigit() for ch in token):
            continue
        if token.lower().strip(".") in _AFFILIATION:
            break  # the affiliation printed after the name: the rest is not the name
        tokens.append(_undouble(token))
    # "Sch Schütze", "Gaši Gašić": a garbled first copy of the surname that follows
    deduped: list[str] = []
    for token in tokens:
        if deduped and len(deduped[-1]) > 2 and token.lower().startswith(deduped[-1].lower()) and token != deduped[-1]:
            deduped[-1] = token
        elif deduped and token.lower() == deduped[-1].lower():
            continue
        else:
            deduped.append(token)
    if not any(len(t.strip(".")) > 1 for t in deduped):
        return ""  # only initials or nothing: "A I", "†"
    return " ".join(deduped)


def surname_key(name: str) -> str:
    """The folded last word of a name: how two spellings of one author's surname compare."""
    words = name.split()
    if not words:
        return ""
    decomposed = unicodedata.normalize("NFKD", words[-1])
    return "".join(ch.lower() for ch in decomposed if ch.isalnum() and not unicodedata.combining(ch))


def clean_authors(authors: list[str]) -> list[str]:
    """Every name cleaned; names that are no name dropped, and a name that repeats one before it (same surname,
    its words a part of the other's) dropped too."""
    out: list[str] = []
    for name in authors:
        cleaned = clean_name(name)
        if not cleaned:
            continue
        words = set(cleaned.lower().split())
        repeat = next(
            (
                i
                for i, kept in enumerate(out)
                if surname_key(kept) == surname_key(cleaned)
                and (words <= set(kept.lower().split()) or set(kept.lower().split()) <= words)
            ),
            None,
        )
        if repeat is None:
            out.append(cleaned)
        elif len(cleaned) > len(out[repeat]):
            out[repeat] = cleaned
    return out
