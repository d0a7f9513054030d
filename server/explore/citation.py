"""A citation for any paper of the corpus, from its metadata: BibTeX (written by pybtex, which formats names as
``Last, First`` and escapes BibTeX's special characters) and CSL-JSON (the citation format of Zotero, Pandoc and
citeproc; a JSON object, written as such).

Stubs (works known only from bibliographies) get a citation too, from whatever their bibliography entry gave.
"""

from __future__ import annotations

import re
import unicodedata

from pybtex.database import BibliographyData, Entry, Person

from agenthop.server.papers import Paper

FORMATS = ("bibtex", "csl_json")
_JOURNAL = re.compile(r"\b(journal|transactions|letters|review)\b", re.IGNORECASE)
_PROCEEDINGS = re.compile(
    r"\b(proceedings|conference|workshop|meeting|symposium|acl|emnlp|naacl|coling|nips|neurips|iclr|icml)\b",
    re.IGNORECASE,
)


def _kind(p: Paper) -> str:
    """The BibTeX entry type the venue suggests: inproceedings, article, or misc."""
    venue = p.venue or ""
    if _PROCEEDINGS.search(venue):
        return "inproceedings"
    if _JOURNAL.search(venue) or venue:
        return "article"
    return "misc"


def citation_key(p: Paper) -> str:
    """first author's surname + year + first title word, ASCII lower case (``vaswani2017attention``)."""

    def ascii_word(text: str) -> str:
        folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
        return re.sub(r"[^a-z0-9]", "", folded.lower())

    surname = ascii_word(p.authors[0].split()[-1]) if p.authors and p.authors[0].split() else "anon"
    stop = {"a", "an", "the", "on", "of", "for", "in", "to", "and", "with", "by", "is"}
    word = next((ascii_word(w) for w in p.title.split() if ascii_word(w) and ascii_word(w) not in stop), "")
    return f"{surname or 'anon'}{p.year or ''}{word}"


def bibtex(p: Paper, pages: str | None = None) -> str:
    """A BibTeX entry; ``pages`` ("12–22") as BibTeX writes a range ("12--22"). A paper with an ACL Anthology ID is
    published by the ACL."""
    kind = _kind(p)
    fields: dict[str, str] = {"title": p.title}
    if p.year is not None:
        fields["year"] = str(p.year)
    if p.venue:
        fields["booktitle" if kind == "inproceedings" else "journal" if kind == "article" else "howpublished"] = p.venue
    if pages:
        fields["pages"] = re.sub(r"\s*[-–—]+\s*", "--", pages)
    if "acl" in p.ids:
        fields["publisher"] = "Association for Computational Linguistics"
    if "doi" in p.ids:
        fields["doi"] = p.ids["doi"]
    if "arxiv" in p.ids:
        fields["eprint"], fields["archiveprefix"] = p.ids["arxiv"], "arXiv"
    if "acl" in p.ids:
        fields["url"] = f"https://aclanthology.org/{p.ids['acl']}"
    entry = Entry(kind, fields=fields, persons={"author": [Person(name) for name in p.authors]} if p.authors else None)
    return BibliographyData({citation_key(p): entry}).to_string("bibtex")


def csl_json(p: Paper, pages: str | None = None) -> dict:
    """One CSL-JSON item (https://citeproc-js.readthedocs.io/en/latest/csl-json/markup.html)."""
    kind = _kind(p)
    item: dict = {
        "id": citation_key(p),
        "type": {"inproceedings": "paper-conference", "article": "article-journal"}.get(kind, "article"),
        "title": p.title,
    }
    if p.authors:
        item["author"] = [_csl_name(name) for name in p.authors]
    if p.year is not None:
        item["issued"] = {"date-parts": [[p.year]]}
    if p.venue:
        item["container-title"] = p.venue
    if pages:
        item["page"] = re.sub(r"\s*[-–—]+\s*", "-", pages)
    if "acl" in p.ids:
        item["publisher"] = "Association for Computational Linguistics"
    if "doi" in p.ids:
        item["DOI"] = p.ids["doi"]
    if "arxiv" in p.ids:
        item["URL"] = f"https://arxiv.org/abs/{p.ids['arxiv']}"
    elif "acl" in p.ids:
        item["URL"] = f"https://aclanthology.org/{p.ids['acl']}"
    if p.abstract:
        item["abstract"] = p.abstract
    return item


def _csl_name(name: str) -> dict:
    person = Person(name)  # pybtex splits names the way BibTeX does (von, last, first, jr)
    family = " ".join(person.prelast_names + person.last_names)
    given = " ".join(person.first_names + person.middle_names)
    out = {"family": family or name}
    if given:
        out["given"] = given
    return out
