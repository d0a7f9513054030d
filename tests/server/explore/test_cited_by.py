"""Citations both ways in explore mode: get_paper_info lists the papers of the corpus that cite a paper
(count, the first ten, each with its citation sentence), while item mode keeps the benchmark's tool unchanged.

The walk forward and back runs over stdio through a real MCP client, on a corpus built from the real TEI fixtures.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import httpx2
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from support.release_fixture import pid
from support.server_helpers import build_fixture_corpus, calls, session_client, text

from agenthop.server.papers import Corpus
from agenthop.server.result_schema import OUTPUT_SCHEMAS
from agenthop.server.tools import CITED_BY_SHOWN
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio

SPECTER = "paper:1ed3c473f7cade3d"  # the IDs test_build_explore.py explains
GRAPH = "paper:bfd6511f1cda14f9"
FES = "doi:10.1186/s12984-016-0129-6"
AMMAR_CONTEXT = "we use a subset of the Semantic Scholar corpus (Ammar et al., 2018) consisting of"


@pytest.fixture(scope="module")
def tei_corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tei") / "corpus.sqlite"
    build_fixture_corpus("tei", out)
    return out


async def test_an_explore_session_follows_a_citation_forward_and_back(tei_corpus, tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agenthop.server", "serve", "--corpus", str(tei_corpus), "--log", str(tmp_path / "log.sqlite")],
    )
    async with Client(params, read_timeout_seconds=60) as client:
        graph = await client.call_tool("get_paper_info", {"paper_id": GRAPH})  # the cited paper ...
        [citer] = graph.structured_content["cited_by"]["papers"]
        back = await client.call_tool(
            "get_references", {"paper_id": citer["paper_id"]}
        )  # ... forward to SPECTER, and back
        fes = await client.call_tool("get_paper_info", {"paper_id": FES})
        specter = await client.call_tool("get_paper_info", {"paper_id": SPECTER})
    assert graph.structured_content["cited_by"]["count"] == 1
    assert (citer["rank"], citer["paper_id"], citer["has_text"]) == (1, SPECTER, True)
    assert citer["title"].startswith("SPECTER") and AMMAR_CONTEXT in citer["context"]
    assert "Cited by 1 paper of this corpus:" in text(graph) and f'Cites it as: "{citer["context"]}"' in text(graph)
    # Back: the citing paper's references hold the paper we came from, with the same sentence.
    references = {r["paper_id"]: r for r in back.structured_content["references"]}
    assert references[GRAPH]["context"] == citer["context"]
    # Cited in the bibliography only: listed, without a sentence.
    [fes_citer] = fes.structured_content["cited_by"]["papers"]
    assert (fes_citer["paper_id"], fes_citer["context"]) == (SPECTER, None)
    assert "Cites it as" not in text(fes)
    # Nothing in the set cites SPECTER.
    assert specter.structured_content["cited_by"] == {"count": 0, "papers": []}
    assert "Cited by: no paper of this corpus cites it." in text(specter)


async def test_item_mode_keeps_the_benchmark_tool(fixture_corpus, tmp_path):
    """B is cited by A (st_0001) and J (mt_0001): explore mode says so, an item session does not."""
    async with session_client(fixture_corpus, tmp_path / "item.sqlite", "st_0001") as (client, _):
        item = await client.call_tool("get_paper_info", {"paper_id": pid("B")})
    async with session_client(fixture_corpus, tmp_path / "explore.sqlite", None) as (client, _):
        explore = await client.call_tool("get_paper_info", {"paper_id": pid("B")})
    assert set(item.structured_content) - set(OUTPUT_SCHEMAS["get_paper_info"]["properties"]) == set()
    assert "cited_by" not in item.structured_content and "Cited by" not in text(item)
    assert item.structured_content["paper"] == explore.structured_content["paper"]
    assert text(explore).startswith(
        text(item).rsplit("\n\n", 1)[0]
    )  # the same text, cited-by added before the status line
    assert {p["paper_id"] for p in explore.structured_content["cited_by"]["papers"]} == {pid("A"), pid("J")}
    [item_call], [explore_call] = calls(tmp_path / "item.sqlite"), calls(tmp_path / "explore.sqlite")
    assert item_call["exposed"] == []
    assert sorted(e["paper_id"] for e in explore_call["exposed"]) == sorted(
        [pid("A"), pid("J")]
    )  # logged like references


def citing_by_rule(corpus: Path, paper_id: str) -> list[str]:
    """The documented order written out: known sentence first, then newest year (unknown last), then title and ID."""
    conn = sqlite3.connect(corpus)
    rows = conn.execute(
        "SELECT e.citing, e.context, p.year, p.title FROM edges e JOIN papers p ON p.paper_id = e.citing "
        "WHERE e.cited = ?",
        (paper_id,),
    ).fetchall()
    rows.sort(key=lambda r: (r[1] is None, r[2] is None, -(r[2] or 0), r[3], r[0]))
    return [r[0] for r in rows]


def most_cited(corpus: Path) -> str:
    conn = sqlite3.connect(corpus)
    return conn.execute("SELECT cited FROM edges GROUP BY cited ORDER BY count(*) DESC, cited LIMIT 1").fetchone()[0]


async def test_a_much_cited_paper_shows_the_count_and_the_first_ten_in_order(demo_corpus, tmp_path):
    target = most_cited(demo_corpus)
    expected = citing_by_rule(demo_corpus, target)
    assert len(expected) > CITED_BY_SHOWN  # the demo corpus has such a paper; otherwise this test shows nothing
    async with session_client(demo_corpus, tmp_path / "log.sqlite", None) as (client, _):
        result = await client.call_tool("get_paper_info", {"paper_id": target})
    cited_by = result.structured_content["cited_by"]
    assert cited_by["count"] == len(expected)
    assert [p["paper_id"] for p in cited_by["papers"]] == expected[:CITED_BY_SHOWN]
    assert [p["rank"] for p in cited_by["papers"]] == list(range(1, CITED_BY_SHOWN + 1))
    assert (
        f"Cited by {len(expected)} papers of this corpus; the first {CITED_BY_SHOWN} shown (get_citing_papers pages through all):"
        in text(result)
    )


def test_a_corpus_without_the_cited_index_gives_the_same_answer(demo_corpus, tmp_path):
    old = tmp_path / "old.sqlite"
    shutil.copy(demo_corpus, old)
    with sqlite3.connect(old) as conn:
        conn.execute("DROP INDEX edges_cited")
    target = most_cited(demo_corpus)
    with_index, without = Corpus(demo_corpus).citing(target, 50), Corpus(old).citing(target, 50)
    assert without == with_index and with_index[0] > CITED_BY_SHOWN


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_over_http_explore_sessions_see_citers_and_item_sessions_do_not(fixture_corpus, tmp_path, mode):
    """One HTTP server, both kinds of session at once, in both protocol eras."""
    results = {}
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sessions = {
                kind: (await http.post("/sessions", json=body)).json()
                for kind, body in (("explore", {}), ("item", {"item": "st_0001"}))
            }
        for kind, session in sessions.items():
            async with (
                httpx2.AsyncClient(headers=session["headers"]) as http,
                Client(streamable_http_client(session["mcp_url"], http_client=http), mode=mode) as client,
            ):
                results[kind] = await client.call_tool("get_paper_info", {"paper_id": pid("B")})
    assert results["explore"].structured_content["cited_by"]["count"] == 2
    assert "cited_by" not in results["item"].structured_content and "Cited by" not in text(results["item"])
    for result in results.values():  # both shapes match the one outputSchema the tool declares
        jsonschema.validate(result.structured_content, OUTPUT_SCHEMAS["get_paper_info"])
    broken = {**results["explore"].structured_content, "cited_by": {"count": 2}}  # and the schema does check cited_by
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, OUTPUT_SCHEMAS["get_paper_info"])
