"""Typed slots: the reported values a finding sentence can be asked about, and what kind of value each is.

A slot is one number in a sentence that reports a result, a method detail or a
dataset: a percentage, a decimal score, or a count of something (an integer of
two or more digits followed by the word it counts). Its type is its kind plus
its form (decimals, digits before the point), so every option of an item can be
drawn from the same type and none stands out by length or format.

Never a slot: a year, a table, figure, section or equation number, a citation
mark, a footnote marker or subscript (a digit glued to a word or after a lone
letter), a term of a formula, or a number that occurs twice in its sentence (the
question would state it), and not a training setting (a dropout rate, a number
of epochs, a batch size, hidden units, a maximum length: defaults a reader may
know by heart, which test little about the paper). No slot in a sentence that
reports another work's value (it cites a work, or speaks of "their" model, and
never of "we" or "our"). A sentence holds a slot only when it has exactly one
value of that type, so the rest of the sentence cannot give the answer away by
arithmetic ("from 80.1 to ___, +2.3", "(___, 83.37)").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agenthop.construct.textspans import AUTHOR_YEAR, strip_citation_marks

_VALUE = re.compile(r"(?<![\w.,/\-'’])(\d+(?:\.\d+)?)(\s?%)?(?![\w%]|[.,]\d|\s?[-–]\s?\d)")
_YEAR = re.compile(r"^(19|20)\d\d$")
_LABEL = re.compile(
    r"(?:§\s*|\b(?:table|tab|figure|fig|section|sect|sec|eq|equation|appendix|step|stage|layer|line|chapter|"
    r"footnote|algorithm|alg|theorem|lemma|definition|example|rule|row|column|col|version|v)\.?\s*\(?)$",
    re.I,
)
_FORMULA_BEFORE = re.compile(
    r"(?:[=<>≤≥±×+\-−/^_*|∼~≈]\s*|(?<![\w])[B-HJ-Zb-z]\s+)$"
)  # "= 0.5", "x 1" (a subscript cut off by the PDF)
_FORMULA_AFTER = re.compile(r"^\s*[=<>≤≥×*/^_]")
_THOUSANDS_BEFORE = re.compile(r"\d,?\s?$")  # "1, 805" split at its separator; "10 229", an exponent lost (10^229)
_THOUSANDS_AFTER = re.compile(r"^,\s?\d{3}(?!\d)")
_PER = re.compile(r"\b(?:per|every|each|out of|of every)\s+$", re.I)
_NAME_BEFORE = re.compile(
    r"\b(?:[A-Z]{2,}|[A-Z][A-Za-z]+|corpus|corpora|treebank|dataset|release|version)\s$"
)  # "Open IE 4.2", "UD corpus 1.4"
_ACRONYM_BEFORE = re.compile(r"\b[A-Z]{2,}\s$")
_UNIT_WORD = re.compile(r"^\s+([a-z][a-z\-]{2,})")
# A training setting named near the value: the 8 words before it or the 4 after.
_SETTING = re.compile(
    r"\b(?:dropout|drop-out|epochs?|(?:mini-?)?batch(?:es)?|batch size|learning rates?|momentum|weight decay|"
    r"clip\w*|beam (?:size|width)|max(?:imum)? (?:\w+ )?lengths?|patience|warm-?up|iterations?|"
    r"l2|regulari[sz]\w*|hidden (?:units?|size|states?|layers?|dimensions?|nodes?)|checkpoints?|"
    r"early stopping|consecutive|steps?|updates?|dimension\w*|fixed rate|window size|"
    r"(?<!training )(?<!test )(?<!development )(?<!dev )(?:set|fixed|tuned)(?: [^\s.;]+){0,3} (?:to|at|as)\b|"
    r"vocabular(?:y|ies) (?:size|of)|embedding size|thresholds?|"
    r"for (?:training|development|testing|validation)|significance|confidence(?: level)?|t-test|p\s*[<=])(?!\w)",
    re.I,
)
# A cut-off or a limit ("sentences up to ___ symbols long"): a choice of the authors', not a finding.
_LIMIT_BEFORE = re.compile(
    r"\b(?:up to|at most|no more than|longer than|shorter than|more than|fewer than|less than|maximum of|"
    r"minimum of|at least|limited to|capped at)\s+$",
    re.I,
)
# A line of a worked example the converter ran into the text: "Reference the tunnel has a cross-section of 90 centimetres".
_EXAMPLE_LINE = re.compile(
    r"^(?:Reference|Source|Input|Output|Hypothesis|Translation|Example|Gold|Prediction|Question|Answer)\b:?\s"
)
_HELD_OUT_BEFORE = re.compile(
    r"\bheld[- ]out\s+$", re.I
)  # "a held-out ___ of the training data": a split, not a finding
# The value is one of an example's, a range's or a list's ("such as 50 or ___", "from 11 to ___", "6 of ___"): the
# other number bounds it, and an example is no finding.
_EXAMPLE_BEFORE = re.compile(r"\b(?:e\.\s?g\.|i\.\s?e\.|for example|for instance|such as)[^.;:]*$", re.I)
_NUMBER_NEAR_BEFORE = re.compile(r"(?<![\w\-])\d+(?:\.\d+)?%?\s*(?:\S+\s+){0,2}$")  # not "top-1 accuracy of"
_NUMBER_NEAR_AFTER = re.compile(r"^\s*(?:%\s*)?(?:(?:or|and|to|-|–|/|,|of|out of|vs\.?|versus)\s+|\(\s*)\d")
_TOP_BEFORE = re.compile(r"\btop[- ]?$", re.I)  # "the top 10 candidates": a cut-off, not a finding
_FOOTNOTE_START = re.compile(r"^\d{1,2}\s+(?=[A-Z][a-z])")  # "4 We trained ...": a footnote's number the converter kept
_FOOTNOTE_END = re.compile(
    r"\s\d{1,2}(?P<spaced>\s\.)?\.?$"
)  # "... QALD-5 6 .", "... of errors. 4.": a trailing marker
_ENDS_A_SENTENCE = re.compile(r"[.!?]\)?$")
# Words a sentence's last value follows ("the turn angle is 15 .", "the maximum of 69."): never a footnote's word.
_BEFORE_A_VALUE = frozenset(
    "is are was were be of to by at than and or from with for in on as about around over under least "
    "most reaches reached has have had equals = < > - only remaining original top".split()
)
# Another work's finding: a sentence citing a work, or about "their" model, in which the paper does not speak for itself.
_CITES = re.compile(rf"\bet al\b|{AUTHOR_YEAR.pattern}|^(?:Their|They|His|Her)\b")
_FIRST_PERSON = re.compile(r"\b(?:we|our|us|ours)\b", re.I)
# Another work's value or resource, whoever speaks: "the result reported by Chiu and Nichols", "MCTest is a collection of",
# "Luong et al. report a BLEU score of", "the CNN of Kim, achieving".
_REPORTED_BY = re.compile(
    r"\breported (?:by|in)\b|\bresults? of [A-Z][a-z]+ (?:et al|and [A-Z])|"
    r"^(?:The )?[A-Z][\w\-]* (?:is|was) (?:a|an) (?:\w+ )?(?:collection|dataset|corpus|set|benchmark)\b|"
    r"\bet al\.?,? (?:report|achiev|obtain|show|find|found)\w*|\b(?:model|system|network|CNN|baseline|parser)\)? of "
    r"[A-Z][a-z]+(?: et al\.?)?,? (?:achiev|obtain|reach|scor)\w*"
)
# Two sentences fused by the converter: a function word, then a capitalised sentence start ("(30.5% of the We observed").
_FUSED = re.compile(
    r"\b(?:the|of|a|an|and|to|in|on|for|with|by)\s+(?:We|Our|This|These|The|It|In|However)\s|"
    r"[a-z,\-]\s\d{1,2}\s[A-Z][a-z]"
)  # ... or a footnote spliced in mid-sentence ("is for- 1 Manually examining")
_CAPTION = re.compile(
    r"\b(?:Table|Figure|Fig\.)\s*\d+\s*:"
)  # a table's cells or caption merged into the sentence by the PDF converter
_NOT_UNITS = frozenset(
    "and or to of in on the for from with by at as is are was were than times an be been has have had "
    "about around only over under up nearly almost roughly approximately which that this through via into "
    "described released provided proposed introduced available".split()
)
_SPANS_OF_TIME = frozenset("years decades months weeks".split())


def join_hyphens(text: str) -> str:
    """'Sec- tion 3.6' -> 'Section 3.6': undo the line-break hyphens PDF converters leave."""
    return re.sub(r"(?<=[a-z])- (?=[a-z])", "", text)


def drop_footnote_end(sentence: str) -> str:
    """'... dataset QALD-5 6 .' -> '... dataset QALD-5.': drop the footnote marker a converter left at a sentence's end.

    A marker is a number of one or two digits after the sentence's own full stop ("of errors. 4."), or after a word
    with GROBID's spaced stop ("structures 1 ."); never a label's number ("Eq. 3."), a subscript ("micro-F 1 .") or a
    value the sentence reports ("the turn angle is 15 .")."""
    m = _FOOTNOTE_END.search(sentence)
    if not m:
        return sentence
    head = sentence[: m.start()].rstrip()
    last = head.rsplit(" ", 1)[-1]
    ends = bool(_ENDS_A_SENTENCE.search(head))
    after_stop = ends and not _LABEL.search(head)
    after_word = (
        bool(m.group("spaced"))
        and not re.search(r"(?:^|-)[A-Za-z]$", last)
        and (last.lower() not in _BEFORE_A_VALUE and (re.search(r"[A-Za-z]", last) or last.endswith(")")))
    )
    if not (after_stop or after_word):
        return sentence
    return head if ends else head + "."


def as_written(sentence: str) -> str:
    """A sentence as a question quotes it: no citation marks, PDF line-break hyphens or trailing footnote marker."""
    return drop_footnote_end(join_hyphens(" ".join(strip_citation_marks(sentence).split())))


@dataclass(frozen=True)
class Slot:
    sentence: str  # the sentence as the paper states it (citation marks removed)
    value: str  # the option text: "91.2%", "0.85", "300"
    start: int  # where the value starts in ``sentence``
    end: int
    type: tuple  # ("percent", decimals, int digits) / ("decimal", decimals, int digits) / ("count", digits)

    def cloze(self) -> str:
        return f"{self.sentence[: self.start]}___{self.sentence[self.end :]}"

    @property
    def number(self) -> float:
        return float(self.value.rstrip("%"))


_WORD = re.compile(r"[A-Za-z][A-Za-z\-]+")


def unit_of(cloze: str) -> str:
    """What a blank's value measures, from its sentence: the word after it ("___ BLEU", "___ dimensional") or, when that
    says nothing, the nearest word of the two before ("accuracy of ___"); "" when neither does. Lower case."""
    before, _, after = cloze.partition("___")
    for word in [*_WORD.findall(after)[:1], *reversed(_WORD.findall(before)[-2:])]:
        if word.lower() not in _NOT_UNITS and len(word) > 1:
            return word.lower()
    return ""


def value_type(number: str, percent: bool) -> tuple:
    """Kind and form: a fraction (0.x) is its own magnitude, so a dropout rate of 0.5 never sits beside 5.3."""
    whole, _, frac = number.partition(".")
    digits = 0 if whole == "0" else len(whole)
    if percent:
        return ("percent", len(frac), digits)
    if frac:
        return ("decimal", len(frac), digits)
    return ("count", len(whole))


def format_value(number: str, percent: bool) -> str:
    return f"{number}%" if percent else number


def _eligible_sentence(sentence: str) -> bool:
    words = sentence.split()
    if not 8 <= len(words) <= 60 or "<unk>" in sentence or _CAPTION.search(sentence) or _FUSED.search(sentence):
        return False
    if re.match(r"[a-z]+\b", sentence):
        return False  # "age F1 score to fall to": a sentence the converter cut at its start
    if sentence.count("(") != sentence.count(")"):
        return False  # "ESIM ) is one of ...": a citation mark half lost, or a parenthesis cut by the converter
    if sum(w.strip(".,;:()").isascii() for w in words) < 0.9 * len(words):
        return False  # another language, or a converter's mojibake
    single = sum(len(w) == 1 and w.isalpha() and w not in "aAI" for w in words)
    alpha = sum(w.isalpha() and len(w) > 2 for w in words)
    return single / len(words) < 0.15 and alpha >= 5  # not a formula, a table row or a heading


def slots_in(sentence: str) -> list[Slot]:
    """The slots of one sentence (empty when the sentence states no finding value)."""
    clean = _FOOTNOTE_START.sub("", as_written(sentence))
    if not _eligible_sentence(clean) or _EXAMPLE_LINE.match(clean):
        return []
    if _CITES.search(" ".join(sentence.split())) and not _FIRST_PERSON.search(clean) or _REPORTED_BY.search(clean):
        return []  # "As mentioned in (Upadhyay and Chang, 2015), ... almost 50%": another work's value, restated
    found, kinds = [], []
    for m in _VALUE.finditer(clean):
        number, percent = m.group(1), bool(m.group(2))
        before, after = clean[: m.start()], clean[m.end() :]
        if _YEAR.match(number) or _LABEL.search(before):
            continue
        if percent or "." in number:
            kinds.append(value_type(number, percent)[0])  # a score counts against a slot of its kind, kept or not
        if _FORMULA_BEFORE.search(before) or _FORMULA_AFTER.match(after):
            continue
        if _THOUSANDS_BEFORE.search(before) or _THOUSANDS_AFTER.match(after) or _PER.search(before):
            continue  # a piece of "1, 805" split by the converter; the 100 of "per 100 examples" is a unit, not a finding
        if number.startswith("0") and not number.startswith("0.") and number != "0":
            continue  # "07": an identifier, not a value
        vtype = value_type(number, percent)
        if vtype[0] == "count":
            unit = _UNIT_WORD.match(after)
            if len(number) < 2 or not unit or unit.group(1) in _NOT_UNITS:
                continue  # a lone small integer is a subscript, an index or an ordinal far more often than a finding, and
                # "model 13 described in", "WordNet 11 through" a footnote's marker
            if unit.group(1) in _SPANS_OF_TIME:
                continue  # "over the last 15 years", "1.5 weeks": an aside or a running time, not a finding
        if percent and float(number) > 100:
            continue
        if vtype[0] == "decimal" and float(number) < 20 and _NAME_BEFORE.search(before):
            continue  # "Open IE 4.2", "Python 3.6": a version, not a finding
        if vtype == ("count", 2) and _ACRONYM_BEFORE.search(before):
            continue  # "the IWSLT 15 test sets": a name's year or edition
        if _SETTING.search(" ".join(before.split()[-8:] + after.split()[:4])) or _TOP_BEFORE.search(before):
            continue  # "dropout of 0.5", "trained for 300 epochs": a setting, not a finding
        if vtype[0] == "count" and _LIMIT_BEFORE.search(before) or _HELD_OUT_BEFORE.search(before):
            continue
        if not re.search(r"[A-Za-z]", before) or before.count('"') % 2 or before.count("“") > before.count("”"):
            continue  # "___ Additional random variables": a heading's number; a value inside a quoted example
        if _EXAMPLE_BEFORE.search(before) or _NUMBER_NEAR_BEFORE.search(before) or _NUMBER_NEAR_AFTER.match(after):
            continue
        found.append(Slot(clean, format_value(number, percent), m.start(), m.start() + len(m.group(0)), vtype))
    others = [n for n in re.findall(r"(?<![\w.])\d+(?![\w.]\d)", clean) if not _YEAR.match(n)]
    out = []
    for slot in found:
        rivals = sum(s.type[0] == "count" for s in found) if slot.type[0] == "count" else kinds.count(slot.type[0])
        if rivals != 1 or clean.count(slot.value.rstrip("%")) != 1:
            continue  # "(___, 83.37)": another score of its kind is beside it, even one that is no slot
        if _gives_by_arithmetic(slot, clean):
            continue  # "(accuracy 50%)" beside 0.5, "the 21st sentence" beside 20: the sentence states the value another way
        if slot.type[0] == "count" and len(others) >= 3:
            continue  # "an ensemble of 3 models ... and ___ models (all 4 models of each run)": the rest gives it by arithmetic
        out.append(slot)
    return out


def _gives_by_arithmetic(slot: Slot, sentence: str) -> bool:
    """Another number of the sentence is the value one off (a count), or the value as a fraction or a percentage."""
    rest = sentence[: slot.start] + " " + sentence[slot.end :]
    value = slot.number
    for m in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?)", rest):
        n = float(m.group(1))
        if abs(n - value * 100) < 1e-9 or abs(n * 100 - value) < 1e-9:
            return True
        if slot.type[0] == "count" and abs(n - value) == 1:
            return True
    return False
