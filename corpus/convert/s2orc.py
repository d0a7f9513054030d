"""S2ORC / doc2json / CORD-19 JSON to Papers.

Accepted shapes, all of one family: doc2json's output (metadata at the top,
text under ``pdf_parse``), CORD-19 and the 2019 S2ORC release (metadata under
``metadata``, text at the top or under ``grobid_parse``), and flat records with
everything at the top. A ``.json`` file holds one paper; a ``.jsonl`` file (also
gzipped, as the S2ORC shards are) holds one per line and is read line by line.

unarXive (arXiv LaTeX parsed to this family's layout) is read as such: its
``metadata`` is arXiv's own record (authors as one string, ``id`` the arXiv ID,
dates under ``versions``), its abstract is a paragraph object, and its text holds
placeholders, ``{{formula:…}}`` for the LaTeX kept in ``ref_entries`` and
``{{cite:…}}`` for a citation of ``bib_entries``, which become ``$LaTeX$`` and a
numbered marker ``[n]``; a bibliography entry without a title keeps its printed
text (``bib_entry_raw``) and the arXiv IDs, DOIs and PMIDs unarXive found in it.

Body paragraphs carry ``section`` and ``sec_num`` (unarXive: ``sec_number``): a paragraph whose ``sec_num``
has more than one level ("2.1") is rolled into the open top-level section, with
its section name kept as a heading line.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path

from agenthop.corpus.convert.model import ConvertError, Paper, Reference
from agenthop.corpus.convert.outline import Outline, depth_of, numbered_header
from agenthop.corpus.convert.text import arxiv_of, clean, doi_of, pmcid_of, sentence_around, year_in, year_of

_TEXT_KEYS = ("pdf_parse", "grobid_parse", "latex_parse")


def looks_like_s2orc(record: dict) -> bool:
    return isinstance(record, dict) and (
        "body_text" in record or any(isinstance(record.get(k), dict) for k in _TEXT_KEYS)
    )


def open_text(path: Path):
    return (
        gzip.open(path, "rt", encoding="utf-8") if path.name.lower().endswith(".gz") else open(path, encoding="utf-8")
    )


def is_jsonl(path: Path) -> bool:
    """A .jsonl file (gzipped or not, any case) holds one paper per line; a .json file holds one."""
    return path.name.lower().removesuffix(".gz").endswith(".jsonl")


def iter_s2orc(path: Path) -> Iterator[Paper]:
    """The papers of one S2ORC file, one at a time."""
    try:
        with open_text(path) as fh:
            if is_jsonl(path):
                for number, line in enumerate(fh, start=1):
                    if line.strip():
                        yield _paper(_load(line, f"{path} line {number}"), f"{path} line {number}")
            else:
                yield _paper(_load(fh.read(), str(path)), str(path))
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise ConvertError(f"{path}: cannot be read ({exc})") from None


def _load(text: str, where: str) -> dict:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConvertError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not looks_like_s2orc(record):
        raise ConvertError(
            f"{where}: not an S2ORC paper (expected an object with 'body_text' (S2ORC 2019, CORD-19, unarXive) or 'pdf_parse' (doc2json))"
        )
    return record


def _author(author) -> str:
    if isinstance(author, str):
        return clean(author)
    if not isinstance(author, dict):
        return ""
    middle = author.get("middle") or []
    parts = [
        author.get("first") or "",
        *(middle if isinstance(middle, list) else [middle]),
        author.get("last") or "",
        author.get("suffix") or "",
    ]
    return clean(" ".join(p for p in parts if isinstance(p, str)))


def _first(value) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, str) and value.strip() else None


def _dict(value: object) -> dict:
    """``value`` if the JSON holds an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def _ids(*sources: object) -> dict[str, str]:
    """The known identifiers in ``sources``, the first of each kind; a source that is not an object holds none."""
    ids: dict[str, str] = {}
    for src in sources:
        if not isinstance(src, dict):
            continue
        for key, value in src.items():
            kind = key.lower().replace("_id", "").replace("id", "") if key.lower() not in ("doi",) else "doi"
            value = _first(value)
            if not value:
                continue
            if kind == "doi" and (doi := doi_of(value)):
                ids.setdefault("doi", doi)
            elif kind == "arxiv" and (arxiv := arxiv_of(value)):
                ids.setdefault("arxiv", arxiv)
            elif kind in ("pmc", "pmcid") and (pmcid := pmcid_of(value)):
                ids.setdefault("pmcid", pmcid)
            elif kind in ("acl", "acl_anthology", "aclanthology") and value.strip():
                ids.setdefault("acl", value.strip())
    return ids


def _abstract(value) -> str | None:
    if isinstance(value, str):
        return clean(value) or None
    if isinstance(value, list):
        paras = [clean(p.get("text")) for p in value if isinstance(p, dict)]
        return "\n\n".join(p for p in paras if p) or None
    return None


def _paragraph_list(text: dict, name: str, where: str) -> list:
    value = text.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConvertError(
            f"{where}: field '{name}': expected a list of paragraphs ({{text, section, cite_spans}}), "
            f"found {type(value).__name__}"
        )
    return value


_PLACEHOLDER = re.compile(r"\{\{(formula|cite|figure|table):([^{}]+)\}\}")


def is_unarxive(record: dict) -> bool:
    """unarXive's records: S2ORC's layout plus ``ref_entries`` and arXiv's metadata record."""
    meta = record.get("metadata")
    return isinstance(record.get("ref_entries"), dict) and isinstance(meta, dict) and isinstance(meta.get("id"), str)


def _unarxive_authors(meta: dict) -> list[str]:
    parsed = meta.get("authors_parsed")
    if isinstance(parsed, list) and parsed:  # [[last, first, suffix], ...]
        return [
            clean(" ".join(p for p in (a[1], a[0], a[2] if len(a) > 2 else "") if isinstance(p, str) and p))
            for a in parsed
            if isinstance(a, list) and a
        ]
    authors = meta.get("authors")
    return [clean(a) for a in re.split(r",\s*|\s+and\s+", authors) if clean(a)] if isinstance(authors, str) else []


def _unarxive_year(meta: dict) -> int | None:
    versions = meta.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        return year_of(versions[0].get("created"))  # the first version: when the paper appeared
    return year_of(meta.get("update_date"))


def _unarxive_reference(key: str, bib: dict) -> Reference:
    raw = clean(bib.get("bib_entry_raw")) if isinstance(bib.get("bib_entry_raw"), str) else ""
    ids: dict[str, str] = {}
    found = _dict(bib.get("ids"))
    if arxiv := arxiv_of(found.get("arxiv_id") or ""):
        ids["arxiv"] = arxiv
    for arxiv_id in bib.get("contained_arXiv_ids") or []:
        if isinstance(arxiv_id, dict):
            arxiv_id = arxiv_id.get("id")
        if isinstance(arxiv_id, str) and (arxiv := arxiv_of(arxiv_id)):
            ids.setdefault("arxiv", arxiv)
    if doi := doi_of(found.get("doi") or ""):
        ids["doi"] = doi
    for link in bib.get("contained_links") or []:
        if isinstance(link, dict) and (doi := doi_of(link.get("url"))):
            ids.setdefault("doi", doi)
    if str(found.get("pubmed_id") or "").isdigit():
        ids["pmid"] = str(found["pubmed_id"])
    if found.get("pmc_id") and (pmcid := pmcid_of(str(found["pmc_id"]))):
        ids["pmcid"] = pmcid
    return Reference(key=key, ids=ids, raw=raw, year=year_in(raw))


def _readable(text: str, record: dict, numbers: dict[str, int]) -> tuple[str, list[dict]]:
    """unarXive's placeholders replaced: formulas by their LaTeX, citations by [n]; the citations' new spans."""
    entries = record.get("ref_entries") or {}
    out: list[str] = []
    spans: list[dict] = []
    size = 0
    last = 0
    for found in _PLACEHOLDER.finditer(text):
        out.append(text[last : found.start()])
        size += found.start() - last
        kind, key = found.group(1), found.group(2)
        entry = _dict(entries.get(key))
        if kind == "cite":
            shown = f"[{numbers[key]}]" if key in numbers else "[?]"
            spans.append({"ref_id": key, "start": size, "end": size + len(shown)})
        elif kind == "formula":
            latex = clean(entry.get("latex")) if isinstance(entry.get("latex"), str) else ""
            shown = f"${latex}$" if latex else "[formula]"
        else:
            shown = f"[{kind}]"
        out.append(shown)
        size += len(shown)
        last = found.end()
    out.append(text[last:])
    return "".join(out), spans


def _paper(record: dict, where: str) -> Paper:
    meta = _dict(record.get("metadata"))
    unarxive = is_unarxive(record)
    text = next(
        (record[k] for k in _TEXT_KEYS if isinstance(record.get(k), dict) and record[k].get("body_text") is not None),
        record,
    )

    def field(name):
        value = record.get(name)
        return value if value not in (None, "", []) else meta.get(name)

    paper = Paper(source=where, title=clean(field("title") if isinstance(field("title"), str) else ""))
    authors = field("authors") or []
    paper.authors = [a for a in (_author(x) for x in authors) if a] if isinstance(authors, list) else []
    paper.year = year_of(field("year"))
    venue = field("venue") or field("journal")
    paper.venue = clean(venue) if isinstance(venue, str) and venue.strip() else None
    paper.abstract = _abstract(field("abstract")) or _abstract(text.get("abstract"))
    paper.ids = _ids(
        record.get("identifiers"),
        meta,
        record.get("external_ids"),
        {k: record.get(k) for k in ("doi", "arxiv_id", "acl_id", "pmc_id")},
    )
    source_id = record.get("paper_id") if record.get("paper_id") is not None else record.get("corpusid")
    paper.source_id = str(source_id).strip() if source_id is not None and str(source_id).strip() else None
    paper.source_id_from_name = isinstance(record.get("pdf_parse"), dict)  # doc2json's paper_id is its file's name
    if unarxive:
        paper.authors = _unarxive_authors(meta)
        paper.year = _unarxive_year(meta)
        if isinstance(record.get("abstract"), dict):
            paper.abstract = _abstract([record["abstract"]])
        if arxiv := arxiv_of(meta["id"]):
            paper.ids.setdefault("arxiv", arxiv)

    bibs = text.get("bib_entries") or {}
    refs: dict[str, Reference] = {}
    if isinstance(bibs, dict):
        for key, bib in bibs.items():
            if not isinstance(bib, dict):
                continue
            if unarxive:
                ref = _unarxive_reference(str(key), bib)
                refs[ref.key] = ref
                paper.references.append(ref)
                continue
            bib_title, bib_authors, bib_venue = bib.get("title"), bib.get("authors"), bib.get("venue")
            ref = Reference(
                key=str(key),
                title=clean(bib_title) if isinstance(bib_title, str) else "",
                year=year_of(bib.get("year")),
                authors=[a for a in (_author(x) for x in bib_authors) if a] if isinstance(bib_authors, list) else [],
                venue=clean(bib_venue) if isinstance(bib_venue, str) and bib_venue.strip() else None,
                ids=_ids(bib.get("other_ids")),
                link=str(bib["link"]) if bib.get("link") not in (None, "") else None,
            )
            if not ref.title and isinstance(bib.get("raw_text"), str):
                ref.raw = clean(
                    bib["raw_text"]
                )  # doc2json keeps GROBID's printed text: shown for an entry without a title
            refs[ref.key] = ref
            paper.references.append(ref)

    outline = Outline()
    current_top: str | None = None
    current_sub: str | None = None
    top_numbered = False
    numbers = {key: n for n, key in enumerate(refs, start=1)}
    for para in _paragraph_list(text, "body_text", where) + _paragraph_list(text, "back_matter", where):
        if not isinstance(para, dict):
            continue
        raw_body = para.get("text")
        body = raw_body if isinstance(raw_body, str) else ""
        if unarxive:
            body, spans = _readable(body, record, numbers)
            para = {**para, "cite_spans": spans}
        section = clean(para.get("section")) if isinstance(para.get("section"), str) else ""
        if unarxive and "{{" in section:  # headers hold formulas too ("The map {{formula:…}}")
            section = clean(_readable(section, record, numbers)[0])
        number = para.get("sec_num", para.get("sec_number"))
        number = str(number) if number not in (None, "", "-1", -1) else None
        header = numbered_header(number, section)
        depth = depth_of(number)
        if header != current_top and header != current_sub:
            # A deeper number, or no number inside a numbered section (doc2json drops
            # the number of a paragraph heading), is a subsection of the open section.
            if current_top is not None and ((depth is not None and depth > 1) or (depth is None and top_numbered)):
                outline.sub(header)
                current_sub = header
            else:
                outline.top(header)
                current_top, current_sub, top_numbered = header, None, depth == 1
        outline.paragraph(clean(body))
        for span in para.get("cite_spans") or []:
            if not isinstance(span, dict):
                continue
            cited = refs.get(str(span.get("ref_id")))
            start, end = span.get("start"), span.get("end")
            if (
                cited is None
                or cited.context is not None
                or not isinstance(start, int)
                or not isinstance(end, int)
                or not 0 <= start < end <= len(body)
            ):
                continue
            # Spans index the raw paragraph; collapse whitespace only after cutting the sentence.
            cited.context = clean(sentence_around(body, start, end))
    paper.sections = outline.finish()
    return paper
