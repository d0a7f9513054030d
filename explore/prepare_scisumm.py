"""Turn the ACL papers of the public scisumm-corpus repository into the S2ORC JSON `corpus build` reads.

The CL-SciSumm shared tasks (WING-NUS/scisumm-corpus, CC BY 4.0) hold ACL Anthology papers as sentence-split XML
(``<PAPER><S>title</S><ABSTRACT>…</ABSTRACT><SECTION title=… number=…><S>…</S>…``), grouped by a reference paper
and the papers citing it, with the citing sentences (``citing_sentences.json``, ``annotation/*.txt``). Their
bibliographies are not part of the data: the citation links are the shared tasks' own (who cites the topic's
reference paper), so each paper's references here are the papers of the set it cites, each with the sentence that
cites it where the data has one.

This writes ``sources/scisumm-acl.jsonl.gz`` (one S2ORC record per paper, in ACL ID order, gzip without a time
stamp): the same bytes for the same checkout, so the committed file can be checked against its source.

    python explore/prepare_scisumm.py GIT_DIR COMMIT [--out explore/sources/scisumm-acl.jsonl.gz]

GIT_DIR is a clone (bare or not) of https://github.com/WING-NUS/scisumm-corpus; nothing is fetched here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ACL_ID = re.compile(r"^[A-Z]\d\d-\d{4}$")
# The ACL Anthology's venue letters (https://aclanthology.org/), for papers of the years these are.
VENUES = {"A": "ANLP", "C": "COLING", "D": "EMNLP", "E": "EACL", "H": "HLT", "I": "IJCNLP", "J": "Computational Linguistics",
          "L": "LREC", "N": "NAACL", "P": "ACL", "Q": "TACL", "S": "SemEval / *SEM", "W": "ACL Workshops", "X": "ANLP/CoNLL",
          "K": "CoNLL", "M": "MUC", "T": "TINLAP", "Y": "PACLIC", "R": "RANLP", "O": "ROCLING", "U": "ALTA"}


class Repo:
    def __init__(self, git_dir: str, commit: str) -> None:
        self.git_dir, self.commit = git_dir, commit
        listing = self._git("ls-tree", "-r", "--name-only", commit, "data/").decode()
        self.files = [f for f in listing.splitlines() if "LAYSUMM" not in f]

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "--git-dir", self.git_dir, *args], check=True, capture_output=True).stdout

    def read(self, path: str) -> bytes:
        return self._git("show", f"{self.commit}:{path}")


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def _unmangle(text: str) -> str:
    """Names stored as UTF-8 read as Latin-1 ("LindÃ©n") back to what they were ("Lindén")."""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def parse_paper(data: bytes) -> dict | None:
    """Title, abstract and sections (each a list of sentences) of one CL-SciSumm XML paper; None if unreadable."""
    text = data.decode("utf-8", errors="replace")
    text = re.sub(r"&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)", "&amp;", text)  # stray ampersands
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None
    title = next((_clean("".join(s.itertext())) for s in root.findall("S")), "")
    abstract = [_clean("".join(s.itertext())) for a in root.iter("ABSTRACT") for s in a.iter("S")]
    sections = []
    for sec in root.iter("SECTION"):
        sentences = [_clean("".join(s.itertext())) for s in sec.iter("S")]
        sentences = [s for s in sentences if s]
        if sentences:
            sections.append({"title": _clean(sec.get("title")), "number": _clean(sec.get("number")), "sentences": sentences})
    if not sections:
        return None
    return {"title": title, "abstract": " ".join(s for s in abstract if s), "sections": sections}


def _norm(sentence: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", sentence.lower())


def collect(repo: Repo) -> tuple[dict, dict, dict, dict]:
    """(papers by ACL ID, {citing: {cited: [citing sentences]}}, titles from Documents_TXT, authors by ACL ID)."""
    papers: dict[str, dict] = {}
    for path in repo.files:
        stem = path.rsplit("/", 1)[-1]
        if not stem.lower().endswith(".xml") or not ACL_ID.match(stem[:-4]):
            continue
        paper = parse_paper(repo.read(path))
        pid = stem[:-4]
        if paper is None:
            continue
        size = sum(len(s["sentences"]) for s in paper["sections"])
        if pid not in papers or size > papers[pid]["size"] or (size == papers[pid]["size"] and not papers[pid]["title"]):
            papers[pid] = {**paper, "size": size, "path": path}
    cites: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    authors: dict[str, list[str]] = {}
    titles: dict[str, tuple[int, str]] = {}
    for path in repo.files:
        parts = path.split("/")
        stem = parts[-1]
        if stem.endswith(".xml") and len(parts) >= 3 and parts[-2] == "Citance_XML":
            cites[stem[:-4]][parts[-3]]  # noqa: B018 (registers the link, with no sentence yet)
        elif stem.endswith(".xml") and len(parts) >= 3 and parts[-2] != stem[:-4] and ACL_ID.match(parts[-2]) \
                and parts[-3] == parts[-2]:
            cites[stem[:-4]][parts[-2]]  # noqa: B018 (Training-Set-2018 layout: <topic>/<topic>/<citing>.xml)
        elif stem == "citing_sentences.json":
            for c in json.loads(repo.read(path)):
                cited, citing = parts[-2], str(c.get("citing_paper_id"))
                cites[citing][cited].append(_clean(c.get("clean_text") or c.get("raw_text")))
                names = [_clean(n.replace(",", " ")) for n in str(c.get("citing_paper_authors") or "").split(" | ")]  # "First, Last"
                names = [_unmangle(n) for n in names if n]
                if names:
                    authors.setdefault(citing, names)
        elif "/annotation/" in path and stem.endswith(".txt"):
            for line in repo.read(path).decode("utf-8", errors="replace").splitlines():
                ref = re.search(r"Reference Article:\s*([A-Z]\d\d-\d{4})", line)
                citing = re.search(r"Citing Article:\s*([A-Z]\d\d-\d{4})", line)
                said = re.search(r"Citation Text:\s*(.*?)\s*\|\s*Reference Offset", line)
                if ref and citing:
                    sentences = re.findall(r"<S[^>]*>(.*?)</S>", said.group(1)) if said else []
                    cites[citing.group(1)][ref.group(1)].append(_clean(" ".join(sentences)))
        elif "/Documents_TXT/" in path and _TXT.match(stem):
            pid, kind = _TXT.match(stem).group(1), _TXT.match(stem).group(2)
            rank = _TXT_RANK[kind]
            if pid not in titles or rank < titles[pid][0]:
                found = title_from_text(repo.read(path).decode("utf-8", errors="replace"))
                if found:
                    titles[pid] = (rank, found)
    return papers, cites, {pid: title for pid, (_, title) in titles.items()}, authors


# The PDFs' text, in three conversions; the Word one keeps the title's lines best.
_TXT = re.compile(r"^([A-Z]\d\d-\d{4})(word\.docx\.txt|-text\.txt|\.txt)$")
_TXT_RANK = {"word.docx.txt": 0, "-text.txt": 1, ".txt": 2}


def title_from_text(text: str) -> str | None:
    """The title at the top of a paper's extracted text: the first line that is not a running head, with a
    following line joined when it is one word or starts in lower case (a title broken over two lines)."""
    raw = [_clean(line.lstrip("\ufeff")) for line in text.splitlines()]
    seen = 0
    for i, line in enumerate(raw):
        if not line:
            continue
        seen += 1
        if seen > 5:
            break
        if 8 <= len(line) <= 250 and not _NOT_A_TITLE.search(line) and not line[0].islower():
            nxt = raw[i + 1] if i + 1 < len(raw) else ""  # only the very next line: a blank line ends a title
            if nxt and not _NOT_A_TITLE.search(nxt) and (" " not in nxt or nxt[0].islower()) and len(nxt) < 40:
                line = f"{line} {nxt}"
            return line
    return None


# First lines of the PDFs' text that are running heads, not titles.
_NOT_A_TITLE = re.compile(r"^(proceedings|in proceedings|c\W|©|\(c\))|association for computational linguistics|pages? \d|"
                          r"^\d+$|workshop on|conference on|^[^A-Za-z“\"']", re.IGNORECASE)


def _year(acl_id: str) -> int:
    yy = int(acl_id[1:3])
    return 1900 + yy if yy >= 50 else 2000 + yy


def record(pid: str, paper: dict, cited: dict[str, list[str]], papers: dict, titles: dict, authors: dict) -> dict:
    """One S2ORC record: a paragraph per section (the data keeps sentences, not paragraphs), a bibliography
    entry per cited paper of the set, and a citation span over the citing sentence where it is found in the text."""
    body = []
    where: dict[str, tuple[int, int, int]] = {}
    for sec in paper["sections"]:
        offsets, text = [], ""
        for sentence in sec["sentences"]:
            offsets.append((len(text) + (1 if text else 0), sentence))
            text = f"{text} {sentence}" if text else sentence
        for start, sentence in offsets:
            where.setdefault(_norm(sentence), (len(body), start, start + len(sentence)))
        body.append({"section": sec["title"], "sec_num": sec["number"] or None, "text": text, "cite_spans": []})
    bib = {}
    for n, target in enumerate(sorted(c for c in cited if c in papers and c != pid)):
        key = f"BIBREF{n}"
        bib[key] = {"title": title_of(target, papers, titles), "year": _year(target), "authors": authors.get(target, []),
                    "venue": VENUES.get(target[0]), "link": target, "other_ids": {"ACL": [target]}}
        for sentence in cited[target]:
            found = where.get(_norm(sentence)) if sentence else None
            if found:
                para, start, end = found
                body[para]["cite_spans"].append({"start": start, "end": end, "ref_id": key})
                break
    for para in body:
        para["cite_spans"].sort(key=lambda s: (s["start"], s["ref_id"]))
    return {"paper_id": pid, "acl_id": pid, "title": title_of(pid, papers, titles), "authors": authors.get(pid, []),
            "year": _year(pid), "venue": VENUES.get(pid[0]), "abstract": paper["abstract"] or None,
            "body_text": body, "bib_entries": bib}


_NOT_A_TITLE_EITHER = re.compile(r"@|\b(road|street|avenue|usa|inc|university|department|laboratory|institute)\b|\d{3,}",
                                 re.IGNORECASE)


def plausible_title(title: str) -> bool:
    """A first sentence that reads as a title, not an address or affiliation the XML put first."""
    return 8 <= len(title) <= 250 and not _NOT_A_TITLE.search(title) and not _NOT_A_TITLE_EITHER.search(title)


def title_of(pid: str, papers: dict, titles: dict) -> str:
    own = papers[pid]["title"]
    if own and plausible_title(own):
        return own
    found = titles.get(pid)
    if found and not _NOT_A_TITLE_EITHER.search(found):
        return found
    return own or found or f"[untitled ACL Anthology paper {pid}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("commit")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "sources" / "scisumm-acl.jsonl.gz")
    args = parser.parse_args(argv)
    repo = Repo(args.git_dir, args.commit)
    papers, cites, titles, authors = collect(repo)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        for pid in sorted(papers):
            line = json.dumps(record(pid, papers[pid], cites.get(pid, {}), papers, titles, authors), ensure_ascii=False, sort_keys=True)
            gz.write(line.encode("utf-8") + b"\n")
    edges = sum(1 for c, targets in cites.items() if c in papers for t in targets if t in papers and t != c)
    print(f"{len(papers)} papers with text, {edges} citation links between them -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
