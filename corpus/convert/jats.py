"""JATS XML (PubMed Central Open Access, eLife and most publishers) to a Paper.

Sections are the <sec> children of <body>; nested <sec>s are rolled into their
top-level parent with their title line kept. Paragraphs that come before any
<sec> (commentaries and insights often have no sections) form a section of their
own, "Main text". Appendices (<app>) become "Apdx_A: title" sections, as in the
release. Sub-articles (decision letters, author responses) are not the paper and
are left out.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agenthop.corpus.convert.model import ConvertError, Paper, Reference
from agenthop.corpus.convert.outline import Outline, numbered_header
from agenthop.corpus.convert.text import clean, doi_of, pmcid_of, year_in, year_of
from agenthop.corpus.convert.xmltree import Reading, local, parse, read_paragraph, text_of

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
# Floating material: figures, tables and attached files are not running text (left out, and counted in the summary).
_SKIP = frozenset(
    {
        "fig",
        "fig-group",
        "table-wrap",
        "table-wrap-group",
        "supplementary-material",
        "media",
        "graphic",
        "inline-graphic",
        "alternatives-graphic",
        "chem-struct-wrap",
        "array",
    }
)
_FORMULAS = frozenset({"disp-formula", "inline-formula"})
# Children of a <sec> that are not a block of its text: its heading, and a bibliography some publishers put in the body.
_NOT_TEXT = frozenset({"title", "label", "sec-meta", "ref-list", "object-id", "alt-title"})


def is_jats(root: ET.Element) -> bool:
    return local(root.tag) == "article" and root.find("front") is not None


def _name(el: ET.Element) -> str:
    if local(el.tag) == "collab":
        return _collab(el)
    given = text_of(el.find("given-names"))
    surname = text_of(el.find("surname"))
    return " ".join(p for p in (given, surname) if p) or text_of(el.find("string-name"))


def _collab(el: ET.Element) -> str:
    """A group author's name: its own words, without the members a nested <contrib-group> lists
    (PLOS Medicine's "Collaborative Group for Meta-Analysis ..." names 120 members and their affiliations there)."""
    words = [el.text or ""]
    for child in el:
        if local(child.tag) not in ("contrib-group", "xref", "address", "aff", "email"):
            words.append("".join(child.itertext()))
        words.append(child.tail or "")
    return clean("".join(words))


def formula_text(el: ET.Element) -> str:
    """A formula as a reader can take it in: its LaTeX as $…$ where the source has it, else its MathML's symbols,
    else ``[formula]`` (a formula given only as an image); a display formula's number follows it."""
    tex = next((c for c in el.iter() if local(c.tag) == "tex-math"), None)
    math = next((c for c in el.iter() if local(c.tag) == "math"), None)
    shown = "[formula]"
    latex = _latex_of(tex)
    if latex:
        shown = f"${latex}$"
    elif math is not None:
        symbols = " ".join(t.strip() for t in math.itertext() if t.strip())
        shown = symbols or shown
    label = next((text_of(c) for c in el if local(c.tag) == "label"), "")
    return f"{shown} {label}" if label else shown


# PubMed Central wraps each <tex-math> in a whole LaTeX document (\documentclass, \usepackage lines, then
# \begin{document}$$…$$\end{document}): only the formula is for a reader.
_TEX_DOCUMENT = re.compile(r"^.*?\\begin\{document\}|\\end\{document\}.*$", re.DOTALL)


def _latex_of(tex: ET.Element | None) -> str:
    """A <tex-math>'s formula without the LaTeX document around it or its dollar signs; "" if it holds none."""
    if tex is None:
        return ""
    return clean(_TEX_DOCUMENT.sub("", "".join(tex.itertext()))).strip("$").strip()


def _citation_keys(el: ET.Element) -> list[str] | None:
    if local(el.tag) != "xref" or el.get("ref-type") != "bibr":
        return None
    return (el.get("rid") or "").split()


def _reference(ref: ET.Element, index: int) -> Reference:
    cit = None
    for name in ("element-citation", "mixed-citation", "citation", "nlm-citation"):
        cit = ref.find(name)
        if cit is not None:
            break
    out = Reference(key=ref.get("id") or f"ref{index}")
    if cit is None:
        return out
    names = []
    group = cit.find("person-group")
    for el in group if group is not None else cit:
        if local(el.tag) in ("name", "collab", "string-name"):
            names.append(_name(el))
    out.authors = [n for n in names if n]
    title = text_of(cit.find("article-title")) or text_of(cit.find("chapter-title"))
    source = text_of(cit.find("source"))
    out.title = title or source or text_of(cit.find("data-title"))
    out.venue = source if title and source else None
    out.year = year_of(text_of(cit.find("year")))
    if not out.title:  # a citation as printed, with no fields marked (PLOS "other", Acta Crystallographica)
        out.raw = text_of(cit)
        out.year = out.year or year_in(out.raw)
    for pub_id in cit.iter("pub-id"):
        _add_id(out.ids, pub_id)
    for link in cit.iter("ext-link"):
        doi = doi_of(link.get(_XLINK_HREF)) or doi_of(text_of(link))
        if doi:
            out.ids.setdefault("doi", doi)
    return out


def _add_id(ids: dict[str, str], el: ET.Element) -> None:
    """An <article-id> or <pub-id>: its DOI, PMCID or arXiv ID, unless one of that kind is already known."""
    kind = (el.get("pub-id-type") or "").lower()
    value = clean(el.text)
    if kind == "doi" and (doi := doi_of(value)):
        ids.setdefault("doi", doi)
    elif kind in ("pmc", "pmcid") and (pmcid := pmcid_of(value)):
        ids.setdefault("pmcid", pmcid)
    elif kind == "arxiv" and value:
        ids.setdefault("arxiv", value)
    elif kind == "pmid" and value.isdigit():
        ids.setdefault("pmid", value)


def parse_jats(path: Path) -> Paper:
    root = parse(path)
    if not is_jats(root):
        raise ConvertError(f"{path}: not JATS XML (root element <{local(root.tag)}>, expected <article> with <front>)")
    meta = root.find("front/article-meta")
    if meta is None:
        raise ConvertError(f"{path}: JATS without <front>/<article-meta>; the title and IDs live there")
    paper = Paper(source=str(path), title=text_of(meta.find("title-group/article-title")), version=_version(meta, path))

    for article_id in meta.findall("article-id"):
        _add_id(paper.ids, article_id)

    for contrib in meta.iterfind("contrib-group/contrib"):
        if contrib.get("contrib-type", "author") != "author":
            continue
        for el in contrib:
            if local(el.tag) in ("name", "collab", "string-name"):
                name = _name(el)
                if name:
                    paper.authors.append(name)
                break

    years = [year_of(text_of(d.find("year"))) for d in meta.findall("pub-date")]
    paper.year = next((y for y in years if y), None)
    paper.venue = (
        text_of(root.find("front/journal-meta/journal-title-group/journal-title"))
        or text_of(root.find("front/journal-meta/journal-title"))
        or None
    )

    abstracts = meta.findall("abstract")
    plain = [a for a in abstracts if not a.get("abstract-type")] or abstracts
    if plain:
        paras = [text_of(p) for p in plain[0].iter("p")] or [text_of(plain[0])]
        paper.abstract = "\n\n".join(p for p in paras if p) or None

    refs: dict[str, Reference] = {}
    back = root.find("back")
    if back is not None:
        for i, ref in enumerate(back.iterfind(".//ref-list/ref")):
            reference = _reference(ref, i)
            if reference.key not in refs:
                refs[reference.key] = reference
                paper.references.append(reference)

    outline = Outline()
    reading = Reading(refs, _citation_keys, _SKIP, _FORMULAS, formula_text)
    body = root.find("body")
    if body is not None:
        for el in body:
            if local(el.tag) == "sec":
                outline.top(_sec_header(el))
                _read_sec(el, outline, reading)
            else:
                _block(el, outline, reading)
    if back is not None:
        ack = back.find("ack")
        if ack is not None:
            outline.top(text_of(ack.find("title")) or "Acknowledgements")
            _read_sec(ack, outline, reading)
        for i, app in enumerate(back.iterfind("app-group/app")):
            title = _sec_header(app) or "Appendix"
            outline.top(f"Apdx_{chr(ord('A') + i % 26)}: {title}")
            _read_sec(app, outline, reading)
    paper.sections = outline.finish()
    paper.skipped = dict(reading.skipped)
    paper.licence = _licence(meta)
    return paper


def _licence(meta: ET.Element) -> str | None:
    """The article's licence: its URL (<license xlink:href>, <ali:license_ref>), else the licence's own words."""
    license_el = meta.find("permissions/license")
    if license_el is None:
        return None
    for el in license_el.iter():
        if local(el.tag) == "license_ref" and clean(el.text):
            return clean(el.text)
    href = license_el.get(_XLINK_HREF) or next(
        (link.get(_XLINK_HREF) for link in license_el.iter() if link.get(_XLINK_HREF)), None
    )
    return clean(href) if href else (text_of(license_el) or None)


def _version(meta: ET.Element, path: Path) -> int | None:
    """The article's version: JATS 1.2's <article-version>, else the -vN of eLife's file names (elife-00240-v3.xml)."""
    declared = text_of(meta.find("article-version"))
    if declared.isdigit():
        return int(declared)
    found = re.search(r"-v(\d+)(?:\.[a-z]+)+$", path.name.lower())
    return int(found.group(1)) if found else None


def _sec_header(sec: ET.Element) -> str:
    return numbered_header(text_of(sec.find("label")), text_of(sec.find("title")))


def _block(el: ET.Element, outline: Outline, reading: Reading) -> None:
    """One block of a section: a paragraph, list, quotation (<disp-quote>), box, formula or any other element a
    reader sees is a paragraph; figures, tables and attached files are left out and counted."""
    name = local(el.tag)
    if name in _SKIP:
        reading.skipped[name] += 1
    elif name in _FORMULAS:
        outline.formula(formula_text(el))
    elif name and name not in _NOT_TEXT:
        read_paragraph(el, outline, reading)


def _read_sec(sec: ET.Element, outline: Outline, reading: Reading) -> None:
    for el in sec:
        if local(el.tag) == "sec":
            outline.sub(_sec_header(el))
            _read_sec(el, outline, reading)
        else:
            _block(el, outline, reading)
