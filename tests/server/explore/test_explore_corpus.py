"""The committed real-paper explore corpus (explore/README.md): rebuilt from the committed sources by the project's
own `corpus build`, byte for byte the committed build, at least 2,300 papers with text (ACL and EMNLP 2016-2018) and
4,300 citations between them; served over stdio and explored through a real MCP client along a citation chain of three
real papers; every paper with text CC BY 4.0, in its file, in the list and in the corpus."""

from __future__ import annotations

import csv
import gzip
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from support.paths import REPO as ROOT
from support.server_helpers import text

sys.path.insert(0, str(ROOT / "bench"))

pytestmark = [pytest.mark.anyio, pytest.mark.rebuild]
# Dong and Lapata's coarse-to-fine parser (ACL 2018) cites Jia and Liang's data recombination (ACL 2016), which cites
# Dong and Lapata's sequence-to-tree parser (ACL 2016): three ACL papers with text, CC BY 4.0.
COARSE_TO_FINE = "doi:10.18653/v1/p18-1068"
RECOMBINATION = "doi:10.18653/v1/p16-1002"
LOGICAL_FORM = "doi:10.18653/v1/p16-1004"


@pytest.fixture(scope="module")
def explore_corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("explore") / "explore.sqlite"
    done = subprocess.run(
        [sys.executable, str(ROOT / "explore" / "rebuild.py"), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr  # rebuild.py exits 1 when the bytes differ from the committed build
    assert "the committed build, byte for byte" in done.stderr
    return out


def test_the_corpus_has_the_papers_and_links_the_issue_asks_for(explore_corpus):
    conn = sqlite3.connect(explore_corpus)
    with_text = conn.execute("SELECT COUNT(*) FROM papers WHERE has_text = 1").fetchone()[0]
    linked = conn.execute(
        "SELECT COUNT(*) FROM edges e JOIN papers a ON a.paper_id = e.citing JOIN papers b ON b.paper_id = e.cited "
        "WHERE a.has_text = 1 AND b.has_text = 1"
    ).fetchone()[0]
    conn.close()
    assert with_text >= 2300 and linked >= 4300


async def test_a_citation_chain_through_a_real_mcp_client(explore_corpus, tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agenthop.server", "serve", "--corpus", str(explore_corpus), "--log", str(tmp_path / "log.sqlite")],
    )
    async with Client(params, read_timeout_seconds=60) as client:
        found = await client.call_tool("search_papers", {"query": "coarse-to-fine decoding neural semantic parsing"})
        first = await client.call_tool("get_references", {"paper_id": COARSE_TO_FINE})
        second = await client.call_tool(
            "get_references", {"paper_id": "10.18653/v1/P16-1002"}
        )  # a DOI as people type it
        sections = await client.call_tool("list_sections", {"paper_id": LOGICAL_FORM})
        read = await client.call_tool("read_section", {"paper_id": LOGICAL_FORM, "section": "Introduction"})
    hits = found.structured_content["results"]
    assert (hits[0]["paper_id"], hits[0]["title"]) == (
        COARSE_TO_FINE,
        "Coarse-to-Fine Decoding for Neural Semantic Parsing",
    )
    cited = {r["paper_id"]: r for r in first.structured_content["references"]}
    assert (
        cited[RECOMBINATION]["has_text"] is True
        and "(Jia and Liang, 2016; Dong and Lapata, 2016;)" in cited[RECOMBINATION]["context"]
    )
    cited = {r["paper_id"]: r for r in second.structured_content["references"]}
    assert (
        cited[LOGICAL_FORM]["has_text"] is True
        and "Dong and Lapata (2016) concurrently developed" in cited[LOGICAL_FORM]["context"]
    )
    assert [s["header"] for s in sections.structured_content["sections"]][0] == "1 Introduction"
    assert (
        not read.is_error
        and "Semantic parsing is the task of translating text to a formal meaning representation" in text(read)
    )


def test_every_paper_with_text_is_cc_by_in_its_file_and_in_the_list(explore_corpus):
    """The licence each paper is shared under, recorded beside the data (papers.tsv), in the file itself, and in the
    corpus (paper_licences), for the ACL and the EMNLP papers alike."""
    with open(ROOT / "explore" / "sources" / "papers.tsv", newline="") as fh:
        listed = {row["acl_id"]: row for row in csv.DictReader(fh, delimiter="\t")}
    files = sorted((ROOT / "explore" / "sources").glob("*/*.tei.xml.gz"), key=lambda f: f.name)
    stamped = [
        f
        for f in files
        if b'<licence target="https://creativecommons.org/licenses/by/4.0/">' in gzip.decompress(f.read_bytes())
    ]
    conn = sqlite3.connect(explore_corpus)
    with_text = {pid for (pid,) in conn.execute("SELECT paper_id FROM papers WHERE has_text = 1")}
    licences = dict(conn.execute("SELECT paper_id, licence FROM paper_licences"))
    conn.close()
    assert {row["licence"] for row in listed.values()} == {"CC BY 4.0"} and all(
        int(r["year"]) >= 2016 for r in listed.values()
    )
    assert {row["venue"] for row in listed.values()} == {"ACL", "EMNLP"}
    assert all(f.parent.name == listed[f.name.removesuffix(".tei.xml.gz")]["venue"].lower() for f in files)
    assert [f.name.removesuffix(".tei.xml.gz") for f in files] == sorted(listed) and stamped == files
    assert with_text == {f"doi:10.18653/v1/{acl_id.lower()}" for acl_id in listed}
    assert licences == dict.fromkeys(with_text, "CC BY 4.0")


def test_the_readme_gives_the_corpus_counts_and_its_quality_table(explore_corpus):
    """explore/README.md's counts are the built corpus's, and its quality table is the one `corpus info` prints."""
    from agenthop.corpus.info import describe, format_description

    readme = (ROOT / "explore" / "README.md").read_text(encoding="utf-8")
    conn = sqlite3.connect(explore_corpus)
    with_text = conn.execute("SELECT COUNT(*) FROM papers WHERE has_text = 1").fetchone()[0]
    outside = conn.execute("SELECT COUNT(*) FROM papers WHERE has_text = 0").fetchone()[0]
    linked, with_context = conn.execute(
        "SELECT COUNT(*), SUM(e.context IS NOT NULL) FROM edges e JOIN papers a ON a.paper_id = e.citing "
        "JOIN papers b ON b.paper_id = e.cited WHERE a.has_text = 1 AND b.has_text = 1"
    ).fetchone()
    conn.close()
    intro = readme.split("\n\n")[1]  # the paragraph under the title
    assert f"**{with_text:,} papers of the ACL conference and EMNLP" in intro
    assert f"**{linked:,} citations between papers that both have\ntext** ({with_context:,} of them" in intro
    assert f"and {outside:,} more works they cite" in intro
    table = format_description(describe(explore_corpus)).split("quality of the conversion", 1)[1].strip("\n")
    assert "quality of the conversion" + table.split("\n\n", 1)[0] in readme


# --- the data defects of the real corpus, one test each (explore/README.md, "Data you can trust") -------------------

VASWANI = "arxiv:1706.03762"
BAHDANAU = "arxiv:1409.0473"


def _rows(corpus: Path, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(corpus)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _session(corpus: Path, tmp: Path):
    from agenthop.server.caps import Caps
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import make_sandbox

    log = CheckpointLog(tmp / "log.sqlite")
    sandbox = make_sandbox(corpus, log, Caps())
    return log, sandbox.sessions.create(sandbox.scope(None), run="t", caps=Caps(None, None, None), transport="stdio")


def test_anthology_papers_have_their_proceedings_year_and_pages(explore_corpus, tmp_path):
    """Defects 1 and 6: every EMNLP 2017 paper has the proceedings' name (not "Natural Language Processing"), every
    paper with text the year of its ACL ID (D16-1211 said 2005), and BibTeX is @inproceedings with booktitle and pages."""
    venues = _rows(
        explore_corpus, "SELECT venue, count(*) FROM papers WHERE paper_id LIKE 'doi:10.18653/v1/d17-%' GROUP BY venue"
    )
    assert dict(venues) == {
        "Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing": 321,
        "Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing: System Demonstrations": 21,
    }
    wrong_years = _rows(
        explore_corpus,
        "SELECT paper_id, year FROM papers WHERE has_text = 1 AND year != 2000 + CAST(substr(paper_id, 18, 2) AS INT)",
    )
    assert wrong_years == []
    log, session = _session(explore_corpus, tmp_path)
    try:
        found = session.call("search_papers", {"query": "adversarial reading comprehension", "venue": "EMNLP"}).data
        bib = session.call("get_citation", {"paper_id": "D17-1215"}).data["citation"]
    finally:
        log.close()
    assert "doi:10.18653/v1/d17-1215" in [r["paper_id"] for r in found["results"]]
    assert bib.startswith("@inproceedings{jia2017adversarial,")
    assert 'booktitle = "Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing"' in bib
    assert 'pages = "2021--2031"' in bib and "journal" not in bib


def test_one_record_per_work_with_every_citer(explore_corpus):
    """Defects 2 and 4: the pointer-generator paper holds the citers its misspelt record had, Luong et al. 2015 and
    Bahdanau et al. are one record each, and no two records share a title, a surname and a year (within one) unless
    their fields conflict."""
    cited = dict(
        _rows(
            explore_corpus,
            "SELECT cited, count(DISTINCT citing) FROM edges WHERE cited IN (?, ?) GROUP BY cited",
            "doi:10.18653/v1/p17-1099",
            BAHDANAU,
        )
    )
    assert cited["doi:10.18653/v1/p17-1099"] >= 50 and cited[BAHDANAU] >= 480
    luong = _rows(
        explore_corpus,
        "SELECT p.paper_id, count(e.citing) FROM papers p JOIN edges e ON e.cited = p.paper_id "
        "WHERE lower(p.title) LIKE 'effective approaches to attention%' GROUP BY p.paper_id",
    )
    assert len(luong) == 1 and luong[0][1] >= 190
    from recount_explore import recount

    counts = recount(explore_corpus)
    assert counts["duplicate_groups"] <= 5 and counts["links_on_duplicates"] <= 10


def test_no_citation_string_is_a_title_or_an_id(explore_corpus):
    """Defect 3: no title starts with a printed author list and year ("Dzmitry Bahdanau, …, and Yoshua Bengio. 2014.
    Learning …"), no ID holds printed words ("arxiv:arXivpreprintarXiv:1701.03980"), word2vec is 2013 and titled."""
    printed = _rows(
        explore_corpus,
        "SELECT paper_id, title FROM papers WHERE title GLOB '*, and *. [12][09][0-9][0-9]. *' "
        "OR title GLOB '*, and *. [12][09][0-9][0-9][a-z]. *'",
    )
    assert printed == []
    assert _rows(explore_corpus, "SELECT paper_id FROM papers WHERE paper_id LIKE '%preprint%'") == []
    assert _rows(explore_corpus, "SELECT title, year, venue FROM papers WHERE paper_id = 'arxiv:1301.3781'") == [
        ("Efficient estimation of word representations in vector space", 2013, None)
    ]
    assert _rows(explore_corpus, "SELECT title FROM papers WHERE paper_id = 'arxiv:1701.03980'") == [
        ("DyNet: The Dynamic Neural Network Toolkit",)
    ]


def test_an_in_text_citation_is_an_edge_when_its_entry_is_lost(explore_corpus):
    """Defect 5: D18-1049's bibliography, as GROBID read it, lost the Transformer's entry; the sentences citing
    "Vaswani et al., 2017" link it, and the Transformer has as many citers as papers cite it in their text."""
    edge = _rows(
        explore_corpus,
        "SELECT context FROM edges WHERE citing = 'doi:10.18653/v1/d18-1049' AND cited = ?",
        VASWANI,
    )
    assert len(edge) == 1 and "Vaswani et al., 2017" in edge[0][0]
    citers = _rows(explore_corpus, "SELECT count(DISTINCT citing) FROM edges WHERE cited = ?", VASWANI)[0][0]
    in_text = _rows(
        explore_corpus,
        "SELECT count(DISTINCT arxiv_id) FROM sections WHERE text LIKE '%Vaswani et al., 2017%' "
        "OR text LIKE '%Vaswani et al. (2017)%'",
    )[0][0]
    assert citers >= in_text


def test_years_and_author_names_are_plausible(explore_corpus, tmp_path):
    """Defects 6 and 7: no record before 1900 or after the set (SNLI was dated 1721); no affiliation or garbled
    accent in a name ("Wolfgang Macherey Google", "A I"; "Sch¨ Schütze"); Adam's BibTeX names Kingma and Ba."""
    assert _rows(explore_corpus, "SELECT paper_id, year FROM papers WHERE year < 1900 OR year > 2019") == []
    authors = dict(
        _rows(
            explore_corpus,
            "SELECT paper_id, authors FROM papers WHERE paper_id IN (?, ?)",
            "doi:10.18653/v1/d18-1461",
            "doi:10.18653/v1/p16-1156",
        )
    )
    assert authors["doi:10.18653/v1/d18-1461"].endswith('"Wolfgang Macherey"]')
    assert authors["doi:10.18653/v1/p16-1156"] == '["Ryan Cotterell", "Hinrich Schütze", "Jason Eisner"]'
    from recount_explore import recount

    assert recount(explore_corpus)["papers_with_text_with_a_garbled_author"] <= 5
    log, session = _session(explore_corpus, tmp_path)
    try:
        adam = session.call("get_citation", {"paper_id": "arxiv:1412.6980"}).data["citation"]
    finally:
        log.close()
    assert 'author = "Kingma, Diederik' in adam and "Ba, Jimmy" in adam


def test_the_text_is_clean(explore_corpus):
    """Defect 8: words split at line ends rejoined ("outper- forms"), no header that is a page number or formula, no
    section read twice (D18-1021 had "1 Introduction" 17 times), table rows out of the prose."""
    from recount_explore import recount

    counts = recount(explore_corpus)
    assert counts["words_split_at_line_ends"] < 100
    assert counts["headers_without_a_word"] == 0 and counts["headers_repeated_in_a_paper"] == 0
    assert counts["table_rows_in_prose"] < 100
    headers = [
        h
        for (h,) in _rows(explore_corpus, "SELECT header FROM sections WHERE arxiv_id = ?", "doi:10.18653/v1/d18-1021")
    ]
    assert headers.count("1 Introduction") == 1
    joined = _rows(
        explore_corpus, "SELECT count(*) FROM sections WHERE text LIKE '%outper- form%' OR text LIKE '%inter- mediate%'"
    )
    assert joined == [(0,)]
    hyphens = _rows(explore_corpus, "SELECT count(*) FROM sections WHERE text LIKE '%state-of-the-art%'")[0][0]
    assert hyphens > 500  # real hyphens stay


def test_authors_similar_papers_and_intent(explore_corpus, tmp_path):
    """Defect 9: an author found without accents, BPE's similar papers not the hubs every NMT paper cites, and the
    intent of a citing sentence."""
    log, session = _session(explore_corpus, tmp_path)
    try:
        author = session.call("get_author", {"name": "Schutze"}).data
        similar = session.call("find_similar_papers", {"paper_id": "P16-1162"}).data
        citing = session.call("get_citing_papers", {"paper_id": VASWANI, "limit": 50}).data
    finally:
        log.close()
    assert author["author"]["name"] == "Hinrich Schütze" and author["authors"][0]["papers_with_text"] >= 10
    hubs = {BAHDANAU, "arxiv:1412.6980", "doi:10.3115/1073083.1073135"}
    assert not hubs & {s["paper_id"] for s in similar["similar"]}
    assert {"background", "method"} <= {p["intent"] for p in citing["papers"]}
