"""Turn the ACL and EMNLP 2016-2018 papers of the public scientific_authorship_data repository into the GROBID TEI
files `corpus build` reads.

The repository (ananana/scientific_authorship_data, Caragea, Uban and Dinu, EMNLP 2019) holds ACL Anthology papers
converted from their PDFs by GROBID 0.5.1, each split in two files: ``<venue>_201x/contents/<ACL ID>.tei.xml`` (the
header and the body) and ``<venue>_201x/references/<ACL ID>.references.tei.xml`` (the bibliography, whose entries
carry no ``xml:id``: the body's ``#bN`` means the N-th entry, counting from 0). Taken are the papers of the ACL
conference (``P``) and of EMNLP (``D``) from 2016 on: the ACL Anthology licenses those CC BY 4.0 (earlier ones are
CC BY-NC-SA 3.0). The repository holds no other venue (no NAACL).

For each paper this writes one TEI document, as GROBID writes it whole, to ``sources/<venue>/<ACL ID>.tei.xml.gz``
(``acl/`` or ``emnlp/``):

- the bibliography back in ``<back>``, each entry given the ``xml:id`` its body's citations point to;
- the paper's DOI, which the Anthology derives from the ACL ID (``10.18653/v1/P16-1001``), where the header has none
  (or has another: GROBID once took a dataset's DOI printed on the first page for the paper's);
- the publication year from the ACL ID where the header has no date;
- its licence in ``<availability>`` (GROBID leaves it empty), so every file says under which terms it is shared.

Nothing else is changed. Kept are the papers with a title and a body of at least 2,000 characters, one copy per
ACL ID (versioned copies such as ``P16-1200v2`` are left out, as are the volumes' front matter, ``P16-1000``).
``sources/papers.tsv`` lists every paper kept with its year, venue, licence and the files it came from. Files are
gzip without a time stamp, so the same checkout gives the same bytes.

    python explore/prepare_acl.py GIT_DIR COMMIT [--out explore/sources]

GIT_DIR is a clone (bare or not) of https://github.com/ananana/scientific_authorship_data; nothing is fetched here.
"""

from __future__ import annotations

import argparse
import gzip
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TEI = "http://www.tei-c.org/ns/1.0"
T = f"{{{TEI}}}"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
for prefix, uri in (
    ("", TEI),
    ("xlink", "http://www.w3.org/1999/xlink"),
    ("mml", "http://www.w3.org/1998/Math/MathML"),
    ("xsi", "http://www.w3.org/2001/XMLSchema-instance"),
):
    ET.register_namespace(prefix, uri)

# An ID ending in 000 is a volume's front matter (the preface, the committees), not a paper.
CONTENTS = re.compile(r"^(acl|emnlp)_201x/contents/([PD]1[678]-\d(?!000)\d{3})\.tei\.xml$")
VENUES = {"P": "ACL", "D": "EMNLP"}  # the ACL ID's letter: the venue
LICENCE = "https://creativecommons.org/licenses/by/4.0/"
LICENCE_NAME = "CC BY 4.0"
MIN_BODY = 2000  # characters of body text; below that GROBID found little more than a header


class Repo:
    """The files of one commit of a git directory, read through ``git cat-file --batch``."""

    def __init__(self, git_dir: str, commit: str) -> None:
        self.git_dir, self.commit = git_dir, commit

    def _git(self, *args: str, stdin: bytes | None = None) -> bytes:
        return subprocess.run(
            ["git", "--git-dir", self.git_dir, *args], input=stdin, check=True, capture_output=True
        ).stdout

    def paths(self) -> list[str]:
        return self._git("ls-tree", "-r", "--name-only", self.commit).decode().splitlines()

    def read_all(self, paths: list[str]) -> dict[str, bytes]:
        out = self._git("cat-file", "--batch", stdin="".join(f"{self.commit}:{p}\n" for p in paths).encode())
        blobs, at = {}, 0
        for path in paths:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            if header[-1] == b"missing":
                raise SystemExit(f"{path} is missing at {self.commit}; is {self.git_dir} a whole clone?")
            size = int(header[2])
            blobs[path] = out[end + 1 : end + 1 + size]
            at = end + 2 + size
        return blobs


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def whole_paper(acl_id: str, contents: bytes, references: bytes) -> ET.Element | None:
    """The paper as one TEI document, or None when it has no title or too little body text."""
    root = ET.fromstring(contents)
    body = root.find(f"{T}text/{T}body")
    if not _text(root.find(f"{T}teiHeader/{T}fileDesc/{T}titleStmt/{T}title")) or len(_text(body)) < MIN_BODY:
        return None
    bibliography = ET.fromstring(references).find(f".//{T}listBibl")
    text = root.find(f"{T}text")
    back = text.find(f"{T}back")
    if back is None:
        back = ET.SubElement(text, f"{T}back")
    if bibliography is not None:
        for n, entry in enumerate(bibliography.findall(f"{T}biblStruct")):
            entry.set(XML_ID, f"b{n}")
        ET.SubElement(back, f"{T}div", {"type": "references"}).append(bibliography)
    _stamp_header(root, acl_id)
    return root


def _stamp_header(root: ET.Element, acl_id: str) -> None:
    """The DOI, year and licence the Anthology gives the paper, where GROBID left them out."""
    file_desc = root.find(f"{T}teiHeader/{T}fileDesc")
    availability = file_desc.find(f"{T}publicationStmt/{T}availability")
    availability.set("status", "free")
    for child in list(availability):
        availability.remove(child)
    ET.SubElement(
        availability, f"{T}licence", {"target": LICENCE}
    ).text = f"{LICENCE_NAME}: the ACL Anthology's licence for its papers from 2016 on"
    bibl = file_desc.find(f"{T}sourceDesc/{T}biblStruct")
    doi = f"10.18653/v1/{acl_id}"
    for parent in bibl.iter():
        for idno in parent.findall(f"{T}idno"):  # another DOI is one printed on the first page (P18-1022's Zenodo DOI)
            if (idno.get("type") or "").lower() == "doi" and (idno.text or "").strip().lower() != doi.lower():
                parent.remove(idno)
    if not any((idno.get("type") or "").lower() == "doi" for idno in bibl.iter(f"{T}idno")):
        ET.SubElement(bibl, f"{T}idno", {"type": "DOI"}).text = doi
    if not any(re.search(r"\b(19|20)\d\d\b", (d.get("when") or "") + (d.text or "")) for d in bibl.iter(f"{T}date")):
        monogr = bibl.find(f"{T}monogr")
        imprint = monogr.find(f"{T}imprint") if monogr is not None else None
        if imprint is None:
            imprint = ET.SubElement(monogr if monogr is not None else ET.SubElement(bibl, f"{T}monogr"), f"{T}imprint")
        ET.SubElement(imprint, f"{T}date", {"type": "published", "when": f"20{acl_id[1:3]}"})


def write_gzip(path: Path, data: bytes) -> None:
    """gzip with no name and no time stamp: the same data, the same bytes."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir", help="a clone of ananana/scientific_authorship_data")
    parser.add_argument("commit", help="the commit to read (explore/README.md names the one committed)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "sources", help="folder to write")
    args = parser.parse_args(argv)
    repo = Repo(args.git_dir, args.commit)
    found = sorted(
        (m[2], path, f"{m[1]}_201x/references/{m[2]}.references.tei.xml")
        for path in repo.paths()
        if (m := CONTENTS.match(path))
    )
    blobs = repo.read_all([p for _, contents, refs in found for p in (contents, refs)])
    for venue in VENUES.values():
        folder = args.out / venue.lower()
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.tei.xml.gz"):
            old.unlink()
    rows, left_out = [], []
    for acl_id, contents, refs in found:
        paper = whole_paper(acl_id, blobs[contents], blobs[refs])
        if paper is None:
            left_out.append(acl_id)
            continue
        venue = VENUES[acl_id[0]]
        data = ET.tostring(paper, encoding="UTF-8", xml_declaration=True)
        write_gzip(args.out / venue.lower() / f"{acl_id}.tei.xml.gz", data)
        rows.append(f"{acl_id}\t20{acl_id[1:3]}\t{venue}\t{LICENCE_NAME}\t{LICENCE}\t{contents}\t{refs}\n")
    (args.out / "papers.tsv").write_text(
        "acl_id\tyear\tvenue\tlicence\tlicence_url\tcontents_file\treferences_file\n" + "".join(rows)
    )
    by_venue = {v: sum(1 for r in rows if r.split("\t")[2] == v) for v in VENUES.values()}
    print(
        f"{len(rows)} papers written to {args.out} ({', '.join(f'{n} {v}' for v, n in by_venue.items())}; left out for no "
        f"title or under {MIN_BODY} characters of body: {len(left_out)}{': ' + ', '.join(left_out) if left_out else ''})",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
