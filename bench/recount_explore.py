"""The data-quality recount of an explore corpus: duplicate records of one work, citers missing from the graph, bad
years, garbled author names and words split at line ends. Run it on two builds to compare them.

    python bench/recount_explore.py explore.sqlite
    python bench/recount_explore.py before.sqlite explore.sqlite      # side by side

Each count is defined here, once, so that the figures of two builds are comparable:

- duplicate groups: two or more records whose titles agree once case, accents, spaces and punctuation are ignored,
  whose years are within one (or unknown), and which share an author surname (or one has no authors); "with text":
  groups holding a paper with text; "links on duplicates": citation links to every record of a group but its
  most-cited.
- missing citers: author-year citations in the text of a paper ("Vaswani et al. (2017)", "(Vaswani et al., 2017)")
  whose paper has no reference to a record of that surname and year.
- bad years: records dated before 1900 or after the newest paper with text (+1); papers with text whose year is not
  the year of their ACL ID.
- garbled authors: names with a digit, a lone diacritic, a comma, an affiliation word, or no letter beyond an
  initial; counted as papers with text so named, and as all records.
- headers that are no name: section headers with no word of two letters (page numbers, table rows), or repeated
  within a paper; table rows in prose: paragraphs of eight words or more, at least 40% of them numbers and no
  mathematical sign (=, →, ≥, ·, softmax, …: that is a formula), outside the sections that hold such text apart.
- split words: "outper- forms" in the text: a lower-case word, a hyphen and a space, then a lower-case word, where
  the two halves joined are a word seen elsewhere in the corpus.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

_AFFILIATION = re.compile(
    r"\b(university|universit[äa]t|institute|inc|ltd|corp|google|microsoft|facebook|ibm|research|laboratory|lab|"
    r"labs|department|school|college|centre|center|a i)\b",
    re.IGNORECASE,
)
_LONE_MARK = re.compile(r"[¨´`˜ˆ¸˚]")
_MENTION = re.compile(
    r"([A-Z][A-Za-z'\-]+)(?: et al\.?| and [A-Z][A-Za-z'\-]+)?,? \(?((?:19|20)\d\d)[a-z]?\)?",
)
_SPLIT = re.compile(r"\b([a-z]{2,})- ([a-z]{2,})\b")
_MATH = re.compile(r"[=→←↦≥≤∈∑∏∀∃∼≈×·^∗]|\b(softmax|exp|log|max|min|argmax|tanh|sigmoid|sim)\b")
_ACL_DOI = re.compile(r"^10\.18653/v1/([a-z])(\d\d)-\d{4}$")


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text or "")
    return "".join(ch.lower() for ch in decomposed if ch.isalnum() and not unicodedata.combining(ch))


def surnames(authors: list[str]) -> set[str]:
    return {fold(a.split()[-1]) for a in authors if a.split() and len(fold(a.split()[-1])) > 1}


def garbled(name: str) -> bool:
    letters = [w for w in name.replace(".", " ").split() if len(w) > 1]
    return bool(
        any(ch.isdigit() for ch in name)
        or _LONE_MARK.search(name)
        or "," in name
        or _AFFILIATION.search(name)
        or not letters
    )


def recount(path: Path) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    papers = {
        pid: (title, year, json.loads(authors), has_text, json.loads(ids))
        for pid, title, year, authors, has_text, ids in conn.execute(
            "SELECT paper_id, title, year, authors, has_text, ids FROM papers"
        )
    }
    cited_by = Counter(cited for (cited,) in conn.execute("SELECT cited FROM edges"))
    newest = max(y for _, y, _, t, _ in papers.values() if t and y) + 1

    by_title: dict[str, list[str]] = defaultdict(list)
    for pid, (title, _, _, _, _) in papers.items():
        key = fold(title)
        if len(key) >= 12:
            by_title[key].append(pid)
    groups = []
    for pids in by_title.values():
        if len(pids) < 2:
            continue
        pids.sort(key=lambda p: papers[p][1] or 0)
        # Greedy grouping within one title: same work if years within one and a surname shared (or none known).
        remaining = list(pids)
        while remaining:
            head, rest = remaining[0], remaining[1:]
            group = [head]
            for other in rest:
                ya, yb = papers[head][1], papers[other][1]
                sa, sb = surnames(papers[head][2]), surnames(papers[other][2])
                if (ya is None or yb is None or abs(ya - yb) <= 1) and (not sa or not sb or sa & sb):
                    group.append(other)
            remaining = [p for p in remaining if p not in group]
            if len(group) > 1:
                groups.append(group)
    links_on_duplicates = sum(sum(cited_by[p] for p in g) - max(cited_by[p] for p in g) for g in groups)

    refs_of: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for citing, cited in conn.execute("SELECT citing, cited FROM edges"):
        _, year, authors, _, _ = papers.get(cited, ("", None, [], 0, {}))
        for s in surnames(authors):
            refs_of[citing].add((s, year))
            if year:
                refs_of[citing].update({(s, year - 1), (s, year + 1)})
    mentions = missing = 0
    missing_papers: set[str] = set()
    vocabulary: Counter[str] = Counter()
    split_words = 0
    junk_headers = repeated_headers = residue_in_prose = 0
    headers_of: dict[str, Counter] = defaultdict(Counter)
    for arxiv_id, header, text in conn.execute("SELECT arxiv_id, header, text FROM sections"):
        vocabulary.update(re.findall(r"\b[a-z]{3,}\b", text))
        headers_of[arxiv_id][header] += 1
        if not re.search(r"[^\W\d_]{2,}", header):
            junk_headers += 1
        if header.startswith("Table and figure text"):
            continue
        for block in text.split("\n\n"):
            tokens = block.split()
            numeric = sum(1 for t in tokens if re.match(r"^[(\[]?[-+±−]?(\d[\d.,%±]*|\.\d+)[)\]%*]?$", t))
            if len(tokens) >= 8 and numeric >= 0.4 * len(tokens) and not _MATH.search(block):
                residue_in_prose += 1
    repeated_headers = sum(n - 1 for c in headers_of.values() for n in c.values() if n > 1)
    for arxiv_id, text in conn.execute("SELECT arxiv_id, text FROM sections"):
        for surname, year in set(_MENTION.findall(text)):
            if surname in ("Table", "Figure", "Section", "In", "The", "Fig", "See", "Eq"):
                continue
            mentions += 1
            if (fold(surname), int(year)) not in refs_of[arxiv_id]:
                missing += 1
                missing_papers.add(arxiv_id)
        split_words += sum(1 for a, b in _SPLIT.findall(text) if vocabulary[a + b] > 0)

    bad_years = [p for p, (_, y, _, _, _) in papers.items() if y is not None and (y < 1900 or y > newest)]
    wrong_text_years = []
    for pid, (_, year, _, has_text, ids) in papers.items():
        m = _ACL_DOI.match(ids.get("doi", ""))
        if has_text and m and year != 2000 + int(m.group(2)):
            wrong_text_years.append(pid)
    garbled_text = [p for p, (_, _, a, t, _) in papers.items() if t and any(garbled(n) for n in a)]
    garbled_all = [p for p, (_, _, a, _, _) in papers.items() if any(garbled(n) for n in a)]
    conn.close()
    return {
        "records": len(papers),
        "papers_with_text": sum(1 for v in papers.values() if v[3]),
        "citation_links": sum(cited_by.values()),
        "duplicate_groups": len(groups),
        "duplicate_groups_with_text": sum(1 for g in groups if any(papers[p][3] for p in g)),
        "links_on_duplicates": links_on_duplicates,
        "author_year_mentions": mentions,
        "mentions_without_reference": missing,
        "papers_with_a_missing_reference": len(missing_papers),
        "records_dated_before_1900_or_after_the_set": len(bad_years),
        "papers_with_text_dated_not_by_their_acl_id": len(wrong_text_years),
        "papers_with_text_with_a_garbled_author": len(garbled_text),
        "records_with_a_garbled_author": len(garbled_all),
        "words_split_at_line_ends": split_words,
        "headers_without_a_word": junk_headers,
        "headers_repeated_in_a_paper": repeated_headers,
        "table_rows_in_prose": residue_in_prose,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", type=Path, nargs="+")
    args = parser.parse_args(argv)
    counts = [recount(p) for p in args.corpora]
    width = max(len(k) for k in counts[0])
    print(f"{'':{width}}  " + "  ".join(f"{p.name:>16}" for p in args.corpora))
    for key in counts[0]:
        print(f"{key:{width}}  " + "  ".join(f"{c[key]:>16,}" for c in counts))
    print(json.dumps(counts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
