"""SPEC 4.6: nothing reachable from a session reveals gold data, and nothing unmetered returns paper text."""

import json
import sqlite3

import httpx2
import pytest
from conftest import GOLD_WORDS
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from agenthop.server.corpus_schema import open_corpus
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio


def test_the_server_connection_cannot_read_gold_tables(canary_corpus):
    conn = open_corpus(canary_corpus)
    for table in ("gold_items", "gold_recall_labels"):
        with pytest.raises(sqlite3.DatabaseError, match="prohibited"):
            conn.execute(f"SELECT * FROM {table}").fetchall()
    assert open_corpus(canary_corpus, allow_gold=True).execute("SELECT count(*) FROM gold_items").fetchone() == (3,)


def _section_texts(corpus) -> list[str]:
    conn = open_corpus(corpus)
    return [t for (t,) in conn.execute("SELECT text FROM sections") if len(t) > 20]


async def _crawl(client, item_papers) -> tuple[list[str], list[str]]:
    """Everything a session can reach: (unmetered outputs, metered tool outputs)."""
    unmetered = [json.dumps([t.model_dump(mode="json") for t in (await client.list_tools()).tools])]
    unmetered.append(json.dumps((await client.get_prompt("research_task")).model_dump(mode="json")))
    for resource in (await client.list_resources()).resources:
        unmetered.append(json.dumps((await client.read_resource(resource.uri)).model_dump(mode="json")))
    metered = []
    for paper_id in item_papers:
        for tool in ("get_paper_info", "get_references", "list_sections"):
            metered.append((await client.call_tool(tool, {"paper_id": paper_id})).model_dump_json())
        for section in ("A", "B", "C", "D", "E", "nothing-like-this"):
            metered.append(
                (await client.call_tool("read_section", {"paper_id": paper_id, "section": section})).model_dump_json()
            )
    for query in ("paper abstract", "gold correct answer", "4,096 examples"):
        metered.append((await client.call_tool("search_papers", {"query": query, "top_k": 10})).model_dump_json())
    with pytest.raises(MCPError) as unknown:  # an unknown tool is a JSON-RPC error (-32602), its data included
        await client.call_tool("nonexistent_tool", {})
    unmetered.append(json.dumps({"message": unknown.value.error.message, "data": unknown.value.error.data}))
    unmetered.append((await client.call_tool("read_section", {"paper_id": "0" * 40, "section": "A"})).model_dump_json())
    return unmetered, metered


@pytest.mark.slow
async def test_no_output_of_any_session_reveals_gold_or_unmetered_text(canary_corpus, tmp_path):
    sections = _section_texts(canary_corpus)
    conn = open_corpus(canary_corpus)
    with ServerThread(str(canary_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            for item in ("st_0001", "st_0002", "mt_0001"):
                created = (await http.post("/sessions", json={"item": item, "budget": None})).json()
                papers = [p for (p,) in conn.execute("SELECT paper_id FROM item_nodes WHERE item_id = ?", (item,))]
                async with (
                    httpx2.AsyncClient() as h,
                    Client(streamable_http_client(created["mcp_url"], http_client=h)) as client,
                ):
                    unmetered, metered = await _crawl(client, papers)
                unmetered.append(json.dumps(created))
                unmetered.append((await http.get(f"/sessions/{created['session_id']}")).text)
                unmetered.append((await http.get("/health")).text)
                for blob in unmetered + metered:
                    assert not any(word in blob for word in GOLD_WORDS), blob[:300]
                for blob in unmetered:
                    assert not any(text in blob for text in sections), blob[:300]
