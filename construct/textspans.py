"""Text rules shared by the stages: sentences, numeric answer spans, lexical closeness, naming the target."""

from __future__ import annotations

import re

import sentencex

from agenthop.textmatch import STOPWORDS, content_words, normalise, tokens

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(%?)(?![\w])")
# "[12]", "(2014)", "(Gu et al., 2016)", "(e.g., Birch et al., 2016)", and "( Gu et al., 2016; Lee, 2017)" with the space PDF converters leave after "(".
_CITATION_MARK = re.compile(
    r"\s*\[[\d,;\s\-–]+\]|\s*\(\s*(?:(?:e\.\s?g\.|see|cf\.),?\s*)?(?:[A-Z][^()]{0,60}?,\s*)?(?:19|20)\d\d[a-z]?\)"
)
_YEAR = re.compile(r"^(19|20)\d\d$")
# An author-year citation mark's year: "(Koehn et al., 2007", "; dos Santos et al., 2015)", "Chen and Manning (2014)".
# A year after "in" or before a noun ("2,000 sentences") is not one.
AUTHOR_YEAR = re.compile(r"[(,;]\s*(?:19|20)\d\d[a-z]?\b|\b(?:19|20)\d\d[a-z]?\s*[);]")
_LABEL_NUMBER = re.compile(
    r"(?:§\s*|\b(?:table|tab|figure|fig|section|sect|sec|eq|equation|appendix|step|stage|layer|line|chapter)\.?\s*\(?)$",
    re.I,
)
MAX_SPAN_WORDS = 16  # longer clauses read as passages, and a changed number barely moves their Jaccard


def sentences(text: str) -> list[str]:
    """Sentences of a paper's text, by sentencex (it knows "et al.", "e.g." and decimals); never across a line break.

    Each sentence is a slice of ``text``, so it can be quoted as verbatim evidence. A piece with no word in it
    (a citation mark such as "[12]." split off after "et al.") joins the sentence before.
    """
    out: list[str] = []
    for paragraph in (text or "").split("\n"):
        spans: list[list[int]] = []
        pos = 0
        for piece in sentencex.segment("en", paragraph):
            piece = piece.strip()
            at = paragraph.find(piece, pos) if piece else -1
            if at < 0:
                continue
            pos = at + len(piece)
            if spans and not re.search(r"[A-Za-z]{2}", piece):
                spans[-1][1] = pos
            else:
                spans.append([at, pos])
        out.extend(paragraph[a:b] for a, b in spans)
    return out


def strip_citation_marks(text: str) -> str:
    """'... retrieval [11].' -> '... retrieval.': the marks mean nothing outside the citing paper."""
    return _CITATION_MARK.sub("", text or "").strip()


def result_numbers(text: str) -> list[str]:
    """Numbers that look like findings: not years, not citation indices."""
    out = []
    clean = strip_citation_marks(text)
    for m in _NUMBER.finditer(clean):
        if not _YEAR.match(m.group(1)) and not _LABEL_NUMBER.search(clean[: m.start()]):
            out.append(m.group(0))
    return out


def numeric_span(sentence: str) -> str | None:
    """The clause of ``sentence`` that holds a finding (a number that is not a year), or None.

    Clauses are split at commas and semicolons; a clause shorter than four words
    takes the one before it, so the span reads as an answer on its own.
    """
    clean = strip_citation_marks(sentence).rstrip(".")
    if not result_numbers(clean) or len(clean) > 400:
        return None
    parts = [p.strip() for p in re.split(r"[;,]\s+", clean) if p.strip()]
    for i, part in enumerate(parts):
        if result_numbers(part):
            span = part if len(part.split()) >= 4 or i == 0 else f"{parts[i - 1]}, {part}"
            span = re.sub(r"^(?:with|and|while|which|whereas|but)\s+", "", span, flags=re.I)
            return span if 3 <= len(span.split()) <= MAX_SPAN_WORDS else None
    return None


def closeness(a: str, b: str) -> float:
    """Token Jaccard of two options (1.0 = the same words)."""
    ta, tb = set(tokens(a)), set(tokens(b))
    if not ta or not tb:
        return 1.0 if normalise(a) == normalise(b) else 0.0
    return len(ta & tb) / len(ta | tb)


def perturb_numbers(span: str, salt: int) -> str:
    """The same words with every finding's number changed: a plausible value no paper states."""

    def change(m: re.Match) -> str:
        value, pct = m.group(1), m.group(2)
        if _YEAR.match(value):
            return m.group(0)
        if "." in value:
            decimals = len(value.split(".")[1])
            new = float(value) * (1.17 + 0.11 * (salt % 5))
            if pct == "" and float(value) <= 1.0 < new:
                new = float(value) * 0.71
            return f"{new:.{decimals}f}{pct}"
        n = int(value)
        new = n + 1 + (salt % 7) if n < 20 else round(n * (1.2 + 0.05 * (salt % 5)))
        if pct and new > 100:
            new = max(n - 1 - salt % 7, 0)
        return f"{new}{pct}"

    return _NUMBER.sub(change, span)


_GENERIC_OPENERS = frozenset(
    "a an the on towards toward what how why when is are do does can neural deep simple".split()
)


def method_names(title: str) -> set[str]:
    """Names a title coins: acronyms and mixed-case words ('SPECTER', 'GRanoto', 'BERT-base', 'word2vec')."""
    names = set()
    for word in re.findall(r"[A-Za-z][A-Za-z0-9\-]*[A-Za-z0-9]", title or ""):
        core = word.strip("-")
        mixed = sum(c.isupper() for c in core[1:]) >= 1 or any(c.isdigit() for c in core)
        if len(core) >= 3 and mixed and core.lower() not in STOPWORDS:
            names.add(core)
    head = re.split(r"\s*:\s*", title or "", maxsplit=1)
    if len(head) == 2 and 1 <= len(head[0].split()) <= 2:
        names.add(head[0].strip())  # "SPECTER: Document-level ..." names its method before the colon
    # "Data Recombination for Neural Semantic Parsing" names its method before "for": a two- to four-word head
    # that is not a gerund ("Learning to ...", "Improving ...") or a generic opener.
    lead = re.split(
        r"\s+(?:for|with|via|using|in|on|of|by|through|from|to|towards|as|and)\s+|\s*[:?!.]\s*",
        title or "",
        maxsplit=1,
        flags=re.I,
    )[0]
    words = lead.split()
    if 2 <= len(words) <= 4 and not words[0].lower().endswith("ing") and words[0].lower() not in _GENERIC_OPENERS:
        names.add(lead.strip())
    return names


COMMON_NAME_TITLES = (
    5  # a "name" in more titles than this is the field's term ("Transfer Learning", "CNN"), not the target's
)


def names_target(question: str, title: str, titles_naming=None) -> str | None:
    """What in ``question`` names the target paper (its title or a method name it coins), or None.

    ``titles_naming(name)``, when given, counts the corpus's titles that hold a name; a name in more than
    ``COMMON_NAME_TITLES`` of them points at no one paper, so a question may use it.
    """
    q_norm = f" {normalise(question)} "
    # The whole title, or its part after "Name:" (the part a paraphrase keeps).
    for part in dict.fromkeys([title or "", (title or "").split(":", 1)[-1]]):
        t_norm = normalise(part)
        if t_norm and len(t_norm.split()) >= 3 and f" {t_norm} " in q_norm:
            return f"the title {title!r}"
    # Case-insensitive, and also with line-break and word hyphens joined ("data re-combination", "data re- combination").
    joined = re.sub(r"(?<=[A-Za-z])-\s?(?=[A-Za-z])", "", question)
    for name in sorted(method_names(title)):
        if titles_naming is not None and titles_naming(name) > COMMON_NAME_TITLES:
            continue
        for text in (question, joined):
            if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, flags=re.I):
                return f"the method name {name!r}"
    return None


def supported_by(answer: str, evidence: str) -> bool:
    """Every number of the answer, and most of its content words, are in the evidence."""
    ev_tokens = set(tokens(evidence))
    # A number is read alike on both sides, so "1-2%" or "BLEU-4" in the answer matches the same text in the evidence.
    ev_numbers = ev_tokens | {n.rstrip("%") for n in result_numbers(evidence)}
    if any(n.rstrip("%") not in ev_numbers for n in result_numbers(answer)):
        return False
    words = set(content_words(answer))
    return not words or len(words & ev_tokens) / len(words) >= 0.6


def verbatim_in(span: str, text: str) -> bool:
    """``span`` occurs in ``text`` up to whitespace."""
    squash = lambda s: " ".join((s or "").split())  # noqa: E731
    return bool(squash(span)) and squash(span) in squash(text)


QUOTE_RUN = 8  # this many consecutive words shared with a source sentence make a quote, not a paraphrase


def quoted_run(question: str, sources: list[str], n: int = QUOTE_RUN) -> str | None:
    """The first run of ``n`` consecutive words of ``question`` that one of ``sources`` also holds, or None.

    Words are compared normalised (case, punctuation), so a quote with its commas dropped is still a quote.
    """
    words = normalise(question).split()
    if len(words) < n:
        return None
    runs = {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}
    for source in sources:
        padded = f" {normalise(source)} "
        for run in sorted(runs):
            if f" {run} " in padded:
                return run
    return None


_SECTION_WORD = re.compile(
    r"\b(?:section|sect\.|sec\.|§|appendix|table|figure|fig\.)\s*\d|\b(?:section|appendix)\b", re.I
)


def names_section(question: str, headers: list[str]) -> str | None:
    """What in ``question`` points at a part of the paper: a section, table or figure, or a header of two or more
    words ('Error Analysis'; a one-word header such as 'Results' is also a plain word and is allowed), or None."""
    m = _SECTION_WORD.search(question)
    if m:
        return repr(m.group(0))
    q_norm = f" {normalise(question)} "
    for header in headers:
        bare = re.sub(r"^\s*(?:[A-Z]|\d+(?:\.\d+)*)[.)]?\s+", "", header or "")
        h_norm = normalise(bare)
        if len(h_norm.split()) >= 2 and f" {h_norm} " in q_norm:
            return f"the header {header!r}"
    return None
