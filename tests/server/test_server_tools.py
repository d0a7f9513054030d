"""The seven tools through a real MCP client (in-process, both protocol eras)."""

import pytest
from mcp import MCPError
from support.release_fixture import pid
from support.server_helpers import calls, session_client, text

pytestmark = pytest.mark.anyio

ERAS = ["auto", "legacy"]  # auto lands on 2026-07-28; legacy forces the 2025 initialize handshake


@pytest.mark.parametrize("mode", ERAS)
async def test_tools_are_listed_with_schemas_and_annotations(fixture_corpus, tmp_path, mode):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", "st_0001", mode=mode) as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert list(tools) == [
        "search_papers",
        "get_paper_info",
        "get_references",
        "list_sections",
        "read_section",
        "think",
        "submit_answer",
    ]
    assert tools["read_section"].input_schema["required"] == ["paper_id", "section"]
    assert tools["search_papers"].input_schema["properties"]["top_k"]["maximum"] == 10
    assert all(t.annotations.read_only_hint for n, t in tools.items() if n != "submit_answer")
    assert tools["submit_answer"].annotations.read_only_hint is False
    assert "5 points" in tools["read_section"].description


async def test_explore_mode_offers_no_submit_and_sees_everything(fixture_corpus, tmp_path):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", None) as (client, session):
        names = [t.name for t in (await client.list_tools()).tools]
        hits = (await client.call_tool("search_papers", {"query": "abstract paper", "top_k": 10})).structured_content
        with pytest.raises(MCPError) as submit:  # not listed, so unknown to the client: -32602
            await client.call_tool("submit_answer", {"answer": "A", "reasoning": "nothing to answer"})
    assert "submit_answer" not in names
    assert submit.value.error.code == -32602 and submit.value.error.data["outcome"] == "invalid"
    assert "not offered in explore mode" in submit.value.error.message
    assert not session.ended
    assert len(hits["results"]) == 10  # the whole corpus (11 papers) is in scope, not one neighbourhood
    assert hits["budget_total"] is None and hits["budget_remaining"] is None
    assert session.caps.budget is None


@pytest.mark.parametrize("mode", ERAS)
async def test_search_never_leaves_the_item_neighbourhood(fixture_corpus, tmp_path, mode):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", "st_0001", mode=mode) as (client, _):
        result = await client.call_tool("search_papers", {"query": "Abstract of paper H K F", "top_k": 10})
    found = [r["paper_id"] for r in result.structured_content["results"]]
    assert found and set(found) <= {pid(n) for n in "ABCDE"}
    assert [r["rank"] for r in result.structured_content["results"]] == list(range(1, len(found) + 1))
    assert result.structured_content["cost"] == 1
    record = calls(tmp_path / "log.sqlite")[-1]
    assert record["exposed"] == [{"paper_id": p, "rank": i} for i, p in enumerate(found, 1)]


async def test_search_breaks_ties_in_neighbourhood_order_and_reports_text(fixture_corpus, tmp_path):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", "st_0002") as (client, _):
        result = (await client.call_tool("search_papers", {"query": "paper abstract", "top_k": 3})).structured_content
        empty = await client.call_tool("search_papers", {"query": "the of and"})
    # Every fixture abstract reads "Abstract of paper X.": equal scores, so graph order (seed first) decides.
    assert [(r["paper_id"], r["has_text"]) for r in result["results"]] == [
        (pid("F"), True),
        (pid("G"), True),
        (pid("C"), False),
    ]
    assert "No papers match" in text(empty) and empty.structured_content["cost"] == 1


async def test_get_paper_info_and_unknown_or_out_of_scope_ids(fixture_corpus, tmp_path):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", "st_0001") as (client, _):
        info = await client.call_tool("get_paper_info", {"paper_id": pid("A")})
        outside = await client.call_tool("get_paper_info", {"paper_id": pid("H")})
        unknown = await client.call_tool("get_paper_info", {"paper_id": "0" * 40})
    paper = info.structured_content["paper"]
    assert paper["authors"] == ["Ada Lovelace", "Alan Turing"] and paper["venue"] == "ACL" and paper["has_text"] is True
    assert "Authors: Ada Lovelace, Alan Turing" in text(info)
    for result in (outside, unknown):
        assert result.is_error and result.structured_content["outcome"] == "not_found"
        assert result.structured_content["cost"] == 1  # executed calls cost whatever they found
    assert [c["budget_after"] for c in calls(tmp_path / "log.sqlite")] == [1, 2, 3]


async def test_get_references_in_order_with_context_and_exposure(fixture_corpus, tmp_path):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", "st_0001") as (client, _):
        refs = await client.call_tool("get_references", {"paper_id": pid("A")})
        leaf = await client.call_tool("get_references", {"paper_id": pid("E")})
    got = refs.structured_content["references"]
    assert [r["paper_id"] for r in got] == [pid("B"), pid("C"), pid("D")]
    assert got[0]["context"] == "We build on the data of Paper B [3]." and got[1]["context"] is None
    assert [r["has_text"] for r in got] == [True, False, False]
    assert 'Cited as: "We build on the data of Paper B [3]."' in text(refs)
    assert leaf.structured_content["references"] == [] and "No references" in text(leaf)
    exposed = calls(tmp_path / "log.sqlite")[0]["exposed"]
    assert exposed == [{"paper_id": pid(n), "rank": i} for i, n in enumerate("BCD", 1)]


async def test_references_follow_the_items_graph_not_the_union(fixture_corpus, tmp_path):
    # B cites E in st_0001's graph; in mt_0001's graph too. C cites I only in st_0002's graph.
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", "st_0001") as (client, _):
        c_refs = await client.call_tool("get_references", {"paper_id": pid("C")})
    assert c_refs.structured_content["references"] == []


async def test_list_sections_prices_reads_and_says_when_there_is_no_text(fixture_corpus, tmp_path):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", "st_0001") as (client, _):
        listed = await client.call_tool("list_sections", {"paper_id": pid("B")})
        no_text = await client.call_tool("list_sections", {"paper_id": pid("C")})
        arxiv_not_in_pool = await client.call_tool("list_sections", {"paper_id": pid("D")})
    sections = listed.structured_content["sections"]
    assert [(s["alias"], s["header"]) for s in sections] == [
        ("A", "Introduction"),
        ("B", "Method"),
        ("C", "Experiments"),
        ("D", "Apdx_A: Proofs"),
    ]
    assert sections[2]["chars"] == len("We train on 4,096 examples and reach 81.5% accuracy on the held-out split.")
    assert "(C) Experiments (74 chars)" in text(listed)
    for result in (no_text, arxiv_not_in_pool):
        assert result.structured_content["outcome"] == "no_text" and result.structured_content["cost"] == 1
        assert "no full text" in text(result)


@pytest.mark.parametrize("mode", ERAS)
async def test_read_section_resolution_and_charging(fixture_corpus, tmp_path, mode):
    log = tmp_path / "log.sqlite"
    async with session_client(fixture_corpus, log, "st_0001", mode=mode, caps=None) as (client, _):
        by_alias = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "C"})
        by_header = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "EXPERIMENTS"})
        by_norm = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "proofs"})
        by_part = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "intro"})
        ambiguous = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "e"})
        unknown = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "Conclusion"})
    # The section text travels in both channels: a client hands its model one of them.
    body = "We train on 4,096 examples and reach 81.5% accuracy on the held-out split."
    assert by_alias.structured_content["section"] == {"alias": "C", "header": "Experiments", "chars": len(body)}
    assert by_alias.structured_content["text"] == body
    assert text(by_alias).startswith(
        f"=== (C) Experiments — Paper B ===\n\n{body}\n\n=== End of (C) Experiments ===\n\n["
    )
    assert by_header.structured_content["section"]["alias"] == "C"
    assert by_norm.structured_content["section"]["header"] == "Apdx_A: Proofs"
    assert by_part.structured_content["section"]["header"] == "Introduction"
    assert ambiguous.structured_content["outcome"] == "ambiguous"
    assert {c["header"] for c in ambiguous.structured_content["candidates"]} == {"Method", "Experiments"}
    assert unknown.structured_content["outcome"] == "not_found" and len(unknown.structured_content["candidates"]) == 4
    assert "(A) Introduction; (B) Method" in text(unknown)
    records = calls(log)
    assert [r["cost"] for r in records] == [5, 5, 5, 5, 5, 5]  # failed reads are executed, so charged
    assert [r["delivered"]["section_index"] if r["delivered"] else None for r in records] == [2, 2, 3, 0, None, None]
    assert records[0]["delivered"] == {
        "paper_id": pid("B"),
        "arxiv_id": "2101.00002",
        "section_index": 2,
        "header": "Experiments",
    }


async def test_read_section_of_paper_without_text_costs_and_delivers_nothing(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    async with session_client(fixture_corpus, log, "st_0001") as (client, _):
        result = await client.call_tool("read_section", {"paper_id": pid("C"), "section": "A"})
    assert result.structured_content["outcome"] == "no_text" and result.structured_content["cost"] == 5
    assert calls(log)[0]["delivered"] is None


async def test_think_is_free_and_submit_ends_the_session(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    async with session_client(fixture_corpus, log, "st_0001") as (client, session):
        thought = await client.call_tool("think", {"reasoning": "B states the training size."})
        submitted = await client.call_tool("submit_answer", {"answer": "B", "reasoning": "B's Experiments section."})
        after = await client.call_tool("get_paper_info", {"paper_id": pid("A")})
    assert text(thought).startswith("Noted.") and thought.structured_content["cost"] == 0
    assert submitted.structured_content == {**submitted.structured_content, "answer": "B", "session_ended": True}
    assert (
        after.is_error
        and after.structured_content["outcome"] == "session_ended"
        and after.structured_content["cost"] == 0
    )
    assert "an answer was submitted" in text(after)
    assert session.termination == "answer"
    from agenthop.server.log.checkpoint import read_records

    kinds = [(r["kind"], r.get("tool"), r.get("termination")) for r in read_records(log)]
    assert kinds == [
        ("session_start", None, None),
        ("call", "think", None),
        ("call", "submit_answer", None),
        ("session_end", None, "answer"),
        ("call", "get_paper_info", None),
    ]


async def test_invalid_calls_are_refused_free_and_logged(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    async with session_client(fixture_corpus, log, "st_0001", disabled=frozenset({"search_papers"})) as (client, _):
        names = [t.name for t in (await client.list_tools()).tools]
        with pytest.raises(MCPError) as disabled:  # tools the session does not list are JSON-RPC errors
            await client.call_tool("search_papers", {"query": "x"})
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("download_paper", {"paper_id": "x"})
        bad_type = await client.call_tool("get_paper_info", {"paper_id": 42})
        extra = await client.call_tool("think", {"reasoning": "x", "mood": "calm"})
        bad_letter = await client.call_tool("submit_answer", {"answer": "E", "reasoning": "x"})
    assert "search_papers" not in names
    assert [e.value.error.code for e in (disabled, unknown)] == [-32602, -32602]
    assert "disabled" in disabled.value.error.message and "does not exist" in unknown.value.error.message
    assert unknown.value.error.data["cost"] == 0 and unknown.value.error.data["budget_used"] == 0
    assert "paper_id" in text(bad_type) and "mood" in text(extra) and "answer" in text(bad_letter)
    records = calls(log)
    assert [(r["tool"], r["outcome"], r["cost"], r["executed"]) for r in records] == [
        ("search_papers", "invalid", 0, False),
        ("download_paper", "invalid", 0, False),
        ("get_paper_info", "invalid", 0, False),
        ("think", "invalid", 0, False),
        ("submit_answer", "invalid", 0, False),
    ]


async def test_status_line_echoes_meta_turn_and_tokens(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    async with session_client(fixture_corpus, log, "st_0001") as (client, _):
        with_meta = await client.call_tool(
            "think", {"reasoning": "x"}, meta={"agenthop/turn": 3, "agenthop/tokens": 12345, "agenthop/forced": True}
        )
        without = await client.call_tool("get_paper_info", {"paper_id": pid("A")})
    assert text(with_meta).endswith("[Turn: 3 | Tokens used: 12,345 | Budget used: 0/30 (30 left)]")
    assert text(without).endswith("[Budget used: 1/30 (29 left)]")
    first, second = calls(log)
    assert (first["turn"], first["tokens"], first["forced"]) == (3, 12345, True)
    assert (second["turn"], second["tokens"], second["forced"]) == (None, None, False)
