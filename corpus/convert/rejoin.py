"""Words hyphenated at a line end ("outper- forms", "inter- mediate") rejoined, with real hyphens kept.

A PDF converter keeps the hyphen and the line break of a word split across two lines, which it cannot tell from a
hyphen that belongs to the word ("state-of-the- art", "multi- head"). The word list that tells them apart is the
corpus's own: every word written whole somewhere in the papers' text, counted. "X- Y" becomes

- "XY" when the corpus writes "XY" more often than "X-Y" ("outperforms");
- "X-Y" when it writes "X-Y" at least as often, and at least once ("multi-head", "state-of-the-art");
- "X-Y" when it writes neither but Y is a word that ends compounds ("graph- based", "word- level");
- stays "X- Y" otherwise (so "pre- and post-processing", or a word never seen whole, is left as it is).

The corpus's vocabulary, rather than a dictionary, is the list: it holds the field's words ("tokenization",
"embeddings", "Transformer") that no general word list has, and its counts say which spelling the authors use.
"""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
# Second halves of hyphenated compounds: "X- based" is "X-based" even for an X the corpus never writes so.
_COMPOUND_ENDS = frozenset(
    "based level aware specific like wise free oriented driven style related dependent independent sensitive "
    "agnostic scale side sized grained trained generated annotated labeled labelled tuned supervised".split()
)
_GLUED_CITATIONS = re.compile(r";(?=[A-Z])")  # "(Bahdanau et al., 2014;Vaswani et al., 2017)": GROBID drops the space
_SPLIT = re.compile(r"\b((?:[A-Za-z]+-)*[A-Za-z]+)- ([a-z]+(?:-[A-Za-z]+)*)\b")


class Vocabulary:
    """Words (and hyphenated compounds) of a corpus's text, lower-cased, with how often each is written whole."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, text: str) -> None:
        # A word split at a line end ("outper- forms") is not a word written whole: leave its halves out.
        whole = _SPLIT.sub(" ", text)
        self.counts.update(w.lower() for w in _WORD.findall(whole))

    def rejoin(self, text: str | None) -> str | None:
        """``text`` with each word split at a line end rejoined as the corpus writes it (see the module's rule)."""
        if not text:
            return text
        text = _GLUED_CITATIONS.sub("; ", text)
        if "- " not in text:
            return text

        def one(m: re.Match) -> str:
            left, right = m.group(1), m.group(2)
            joined = self.counts[(left + right).lower()]
            hyphened = self.counts[f"{left}-{right}".lower()]
            if joined > hyphened:
                return left + right
            if hyphened > 0 or (joined == 0 and right in _COMPOUND_ENDS):
                return f"{left}-{right}"
            return m.group(0)

        return _SPLIT.sub(one, text)
